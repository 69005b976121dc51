"""The consoles the commands print on: rich consoles whose width is ``COLUMNS`` whenever it is set.

rich takes ``COLUMNS`` when output is piped, but on a terminal that calls itself dumb
(``TERM=dumb``: Emacs shells, editors' and CI runners' pseudo-terminals) it prints 80 columns
whatever ``COLUMNS`` says (unless ``LINES`` is set too).  Here ``COLUMNS`` always wins.  Lines meant for scripts (verdicts,
paths, fault lines, errors) are printed with ``soft_wrap=True`` by the commands, so they never
wrap at any width.
"""

from __future__ import annotations

import os

from rich import console as rich_console


class Console(rich_console.Console):
    """A :class:`rich.console.Console` whose width follows ``COLUMNS`` when it is set."""

    @property
    def size(self) -> rich_console.ConsoleDimensions:
        size = super().size
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and int(columns) > 0 else self._width
        return size if width is None else rich_console.ConsoleDimensions(width, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        rich_console.Console.size.fset(self, new_size)  # type: ignore[attr-defined]
