"""The consoles the commands print on: rich consoles that never wrap a line for a script, and
whose width on a terminal is ``COLUMNS`` whenever it is set.

Off a terminal (a file, a pipe, ``| tee``, a CI log) nothing is wrapped, whatever ``COLUMNS``
says: every line is as long as what it says, tables take their natural width, and no line ends
in spaces (rich pads table cells and titles to their column; those pads are cut).  The bytes
are then the same at any ``COLUMNS``, so a script or a diff reads them as they are.

On a terminal, rich takes ``COLUMNS`` only when it is not a dumb one: on a terminal that calls
itself dumb (``TERM=dumb``: Emacs shells, editors' and CI runners' pseudo-terminals) it prints
80 columns whatever ``COLUMNS`` says (unless ``LINES`` is set too).  Here ``COLUMNS`` always
wins.  Lines meant for scripts (verdicts, paths, fault lines, errors) are printed with
``soft_wrap=True`` by the commands, so they never wrap at any width.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from rich import console as rich_console
from rich.segment import Segment

#: The width of a console that is not a terminal: wider than any line the commands print, so
#: that none is wrapped (rich lays out to a width; this one is never reached).
UNWRAPPED = 1 << 20

_TRAILING = re.compile(r"[ \t]+(?=\n|\Z)")


class Console(rich_console.Console):
    """A :class:`rich.console.Console` that wraps nothing off a terminal and whose width on a
    terminal follows ``COLUMNS`` when it is set."""

    @property
    def size(self) -> rich_console.ConsoleDimensions:
        size = super().size
        if not self.is_terminal:
            return rich_console.ConsoleDimensions(UNWRAPPED, size.height)
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and int(columns) > 0 else self._width
        return size if width is None else rich_console.ConsoleDimensions(width, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        rich_console.Console.size.fset(self, new_size)  # type: ignore[attr-defined]  # rich's property, typed as its getter only

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        text = super()._render_buffer(buffer)
        return text if self.is_terminal else _TRAILING.sub("", text)
