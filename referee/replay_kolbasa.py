"""kolbasa in ``referee replay``: the two lines drawn in text, the rows' lengths, and each event
in words (RULES.md §7 KB-1…KB-7).

The start lies across both lines (KB-1), so it is drawn as one column, its top half on the top
line and its bottom half on the bottom line, and every tile after it takes the same width: a
knife's position ``i`` is the ``i``-th tile of both lines, one above the other::

    top    {2}[2|4][4|6][6|5]
    bottom {3}[3|1][1|4][4|0]
"""

from __future__ import annotations

from collections.abc import Callable

from referee.engine.kolbasa import KolbasaDeal
from referee.engine.layout import BOTTOM_END, INSERT_TOP, KNIFE, TOP_END
from referee.engine.line import Cut, Event, Placed, Tailed, Turned
from referee.engine.tiles import tile_text


def lines_text(state: KolbasaDeal) -> list[str]:
    """The two lines, start first, each tile as ``[near|far]``."""
    lay = state.layout
    out = []
    for name, half, line in (("top", lay.start[0], lay.lines[0]), ("bottom", lay.start[1], lay.lines[1])):
        out.append(f"{name:<7}{{{half}}}" + "".join(f"[{near}|{far}]" for near, far in line))
    out.append(f"rows: seat 0 has {len(state.rows[0])} tiles, seat 1 has {len(state.rows[1])}")
    return out


def where_text(place: int | None) -> str:
    if place is None:
        return "laid as the start"
    if place in (TOP_END, BOTTOM_END):
        return f"laid on the {'top' if place == TOP_END else 'bottom'} line"
    if place < KNIFE:
        line, j = divmod(place - INSERT_TOP, 100)
        return f"inserted into junction {j} of the {('top', 'bottom')[line]} line"
    return f"laid across as a knife at position {place - KNIFE}"


def event_lines(e: Event, who: Callable[[int], str], state: KolbasaDeal, ms: str) -> list[str]:
    """The replay's lines for one kolbasa event (``ms``: the play's time, or empty)."""
    if type(e) is Turned:
        return [f"   {who(e.seat)} turns up {tile_text(e.tile)}"]
    if type(e) is Tailed:
        return ["      fits nowhere: face down to the left of its row"]
    if type(e) is Placed:
        out = [f"      {where_text(e.end)}{' (automatic)' if e.forced else ''}{ms}"]
        if e.end is None or e.end < KNIFE:  # a knife's layout is drawn after its cut
            out += [f"      {x}" for x in lines_text(state)]
        return out
    if type(e) is Cut:
        return [f"      it cuts {len(e.tiles)} tiles, face down to the left of {who(e.to)}'s row: "
                + " ".join(tile_text(t) for t in e.tiles)] + [f"      {x}" for x in lines_text(state)]
    return []
