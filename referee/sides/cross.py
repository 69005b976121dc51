"""The cross games' side (osel, telephone, muggins: RULES.md §3): their deals travel as the line
games' do, but the table is a cross, so ``referee replay`` draws it in two lines and the web
report with its ``cross`` renderer (``up`` and ``down`` as columns through the first open double).
For learners (:class:`CrossEncoding`), a tile goes on the lead or one of four ends, laid closed or
not.
"""

from __future__ import annotations

from referee.engine.core.cross import arms
from referee.engine.core.layout import DOWN, END_NAMES, LEFT, RIGHT, UP
from referee.engine.core.state import DealState
from referee.sides.encoding import Encoding
from referee.sides.line import LineSide


class CrossEncoding(Encoding):
    """The cross games': a tile on the lead or on ``left``, ``right``, ``up``, ``down``, laid
    closed (osel) or not: two numbers a tile and slot."""

    ends = END_NAMES[:4]
    closing = 2


class CrossSide(LineSide):
    deals = ("referee.engine.core.cross.CrossDeal",)
    layout = "cross"
    encoding = CrossEncoding
    stages = {}

    def layout_text(self, state: DealState, upto: int) -> str:
        """The line left to right with the lead in braces, and once the cross has opened a
        second line with the ``up`` and ``down`` arms outward; a closed double is shown ``[5#5]``."""
        a = arms(state.history[:upto])

        def tile(near: int, far: int, closed: bool, outward: bool = True) -> str:
            x, y = (near, far) if outward else (far, near)
            return f"[{x}{'#' if closed else '|'}{y}]"

        lead = a.get(None)
        if not lead:
            return ""
        lo, hi, _ = lead[0]
        line = ("".join(tile(n, f, c, outward=False) for n, f, c in reversed(a.get(LEFT, [])))
                + f"{{{lo}|{hi}}}" + "".join(tile(n, f, c) for n, f, c in a.get(RIGHT, [])))
        if a.get(UP) or a.get(DOWN) or state.layout.opened:  # type: ignore[attr-defined]  # a cross deal's layout (this side speaks only for those)
            line += "\n      " + "   ".join(f"{name}: " + ("".join(tile(n, f, c) for n, f, c in a.get(e, [])) or "-")
                                           for e, name in ((UP, "up"), (DOWN, "down")))
        return line


SIDE = CrossSide()
