"""One deal of a cross game: osel's cross, telephone's house, muggins' spinner (RULES.md §6).

:class:`CrossDeal` is :class:`~.line.LineDeal` (turns, draws, passes, going out, the fish) on a
:class:`~.layout.Cross`, with the two things the line games never do:

* **Turns of several tiles** (osel, TURN-4…TURN-6): after the turn's one tile (the lead counts
  as one) the same seat may add doubles, each on an open end not used this turn, or answer
  :data:`~.line.STOP`; ``continuing`` is set meanwhile.  A double placed once the cross exists
  may be laid closed.  While no double is on the table and the lead was not a double, a double
  may be laid closed on one line end only as the turn's one tile, never as an extra, and only
  when the player can close the other end too; that second double is then the only legal move,
  and the deal ends at once as a fish (TURN-6).  A leader who led a non-double adds extras under
  TURN-5: the first of them is the cross, open.
  The fish test runs when a turn ends (TURN-9).
* **Points written during play** (telephone, muggins, LAY-6): a deal given a ``writer`` asks it,
  after every placement (the forced lead included, X-2), what the count of the open ends is
  worth; a non-zero answer is recorded as a :class:`~.line.Scored` event for the mover.  The
  game module adds those events to the totals when it scores the deal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .deal import Deal
from .errors import IllegalPlay
from .layout import DOWN, END_NAMES, LEFT, RIGHT, UP, Cross
from .line import DOMINO, NO_DRAW, STOP, TERMINAL, DealEnd, LineDeal, Placed, Play, Scored, _placed, play
from .tiles import DOUBLE, DOUBLES, HIGH, IS_DOUBLE, LOW, N_TILES, OTHER, Tile, bits, tile_name


class CrossDeal(LineDeal):
    """A deal on a cross.  ``at_once``: the first double opens ``up``/``down`` at once (osel);
    otherwise once it is covered on both sides.  ``extras``: osel's extra doubles and closing.
    ``writer(count)``: the points the mover writes for that count (0: none)."""

    __slots__ = ("closing", "continuing", "extras", "used", "writer")
    layout: Cross  # the line deal's slot, holding a cross

    def __init__(
        self,
        deal: Deal,
        *,
        leader: int,
        lead_tile: Tile | None = None,
        draw: str = NO_DRAW,
        keep: int = 0,
        at_once: bool,
        extras: bool = False,
        writer: Callable[[int], int] | None = None,
    ) -> None:
        self.extras = extras
        self.used = 0  # ends used this turn, as a bitmask (osel: one double per end)
        self.continuing = False
        self.closing = -1  # TURN-6: the line end the second closed double must go on
        self.writer = writer
        super().__init__(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep, layout=Cross(at_once))

    # -- queries -------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self.layout.pieces > 0

    def count(self) -> int | None:
        return self.layout.count() if self.writer is not None else None

    def legal_plays(self) -> list[Play]:
        """Every legal move of the seat to move: by tile id, then end, open before closed, then
        :data:`~.line.STOP` where the turn may end here."""
        seat = self.turn
        if seat < 0:
            return []
        hand = self.hands[seat]
        if not self.layout.pieces:
            return [play(t) for t in bits(hand)]
        ends = self.ends
        if self.closing >= 0:
            return [play(DOUBLE[ends[self.closing]], self.closing, True)]
        continuing = self.continuing
        used = self.used
        out: list[Play] = []
        for t in bits((hand & DOUBLES if continuing else hand) & self.ends_mask()):
            lo, hi = LOW[t], HIGH[t]
            for e, v in enumerate(ends):
                if (v == lo or v == hi) and not used >> e & 1:
                    out.append(play(t, e))
                    if lo == hi and self.extras and self._may_close(e, hand):
                        out.append(play(t, e, True))
        if continuing:
            out.append(STOP)
        return out

    def _may_close(self, end: int, hand: int) -> bool:
        """May a double laid on ``end`` be closed (TURN-5, TURN-6)?"""
        if self.layout.spinner >= 0:
            return True  # the cross exists: any double may be closed
        if end > RIGHT or self.continuing:
            return False  # TURN-6 is a turn of its own: its first double is the turn's one tile
        # TURN-6: no double yet and the lead was not one (else it would be the cross): only
        # together with the other line end's double, closed too.
        other = 1 - end
        v = self.ends[other]
        return v >= 0 and v != self.ends[end] and bool(hand >> DOUBLE[v] & 1)

    def _extras_left(self, seat: int) -> bool:
        hand = self.hands[seat]
        for e, v in enumerate(self.ends):
            if v >= 0 and not self.used >> e & 1 and hand >> DOUBLE[v] & 1:
                return True
        return False

    # -- moves ---------------------------------------------------------------------------

    def apply(self, p: Play) -> None:
        seat = self.turn
        if p.tile < 0:  # STOP
            self._end_turn(seat)
            return
        self._place(seat, p.tile, p.end, closed=p.closed)

    def check(self, p: Play, seat: int | None = None) -> None:
        """Raise :class:`IllegalPlay` unless ``p`` is legal, saying why it is not."""
        self._check_turn(seat)
        if p.declare is not None:
            raise IllegalPlay(f"there is nothing to declare in this game ({p.declare!r})", IllegalPlay.BAD_MOVE)
        lay = self.layout
        started = lay.pieces > 0
        legal = self.legal_plays()
        if started and p in legal:
            return
        hand = self.hands[self.turn]
        if p.tile < 0:
            if self.closing >= 0:
                raise IllegalPlay(self._closing_text(), IllegalPlay.CANNOT_STOP)
            if not self.continuing:
                raise IllegalPlay("nothing to stop: stop ends a turn of several tiles, and you have placed nothing this turn",
                                  IllegalPlay.CANNOT_STOP)
        if not 0 <= p.tile < N_TILES:
            raise IllegalPlay(f"{p.tile!r} is not a tile id (0..{N_TILES - 1})", IllegalPlay.NOT_YOUR_TILE)
        if not hand >> p.tile & 1:
            raise IllegalPlay(f"{tile_name(p.tile)} is not in your hand", IllegalPlay.NOT_YOUR_TILE)
        if not started:
            if p.closed:
                raise IllegalPlay("the lead cannot be laid closed", IllegalPlay.CANNOT_CLOSE)
            if self.lead_tile is not None and p.tile != self.lead_tile:
                raise IllegalPlay(f"the lead must be {tile_name(self.lead_tile)}", IllegalPlay.MUST_LEAD_TILE)
            return
        if self.closing >= 0:
            raise IllegalPlay(self._closing_text(), IllegalPlay.MUST_PLAY)
        self._check_end(p)
        assert p.end is not None  # _check_end refuses a play without one
        if self.continuing:
            if not IS_DOUBLE[p.tile]:
                raise IllegalPlay("after the turn's first tile only doubles may be added, or stop", IllegalPlay.BAD_MOVE)
            if self.used >> p.end & 1:
                raise IllegalPlay(f"the {END_NAMES[p.end]} end was already used this turn (one double per end), or stop", IllegalPlay.BAD_MOVE)
        if p.closed:
            self._refuse_closed(p)
        raise IllegalPlay(f"{p} is not a legal move here", IllegalPlay.BAD_MOVE)  # pragma: no cover - every case is named above

    def _check_end(self, p: Play) -> None:
        """Raise :class:`IllegalPlay` unless ``p`` names an open end its tile matches."""
        lay = self.layout
        ends = self.ends
        open_names = ", ".join(END_NAMES[e] for e, v in enumerate(ends) if v >= 0) or "none"
        if p.end is None or not 0 <= p.end < len(ends):
            what = "no end given" if p.end is None else f"end {p.end!r} does not exist"
            raise IllegalPlay(f"{what}; open ends: {open_names}", IllegalPlay.BAD_END)
        name = END_NAMES[p.end]
        if ends[p.end] < 0:
            if p.end in (UP, DOWN) and not lay.opened:
                why = ("no double has been played yet" if lay.spinner < 0 else
                       f"the first double ({lay.spinner}-{lay.spinner}) must be covered on both sides first")
                raise IllegalPlay(f"{name!r} is not open: {why}; open ends: {open_names}", IllegalPlay.BAD_END)
            raise IllegalPlay(f"the {name} end is closed; open ends: {open_names}", IllegalPlay.BAD_END)
        if OTHER[p.tile][ends[p.end]] < 0:
            fits = [END_NAMES[e] for e, v in enumerate(ends) if v >= 0 and OTHER[p.tile][v] >= 0]
            hint = f"; it fits the {fits[0]} end" if fits else ""
            raise IllegalPlay(f"{tile_name(p.tile)} does not match the {name} end ({ends[p.end]}){hint}", IllegalPlay.NO_MATCH)

    def _refuse_closed(self, p: Play) -> None:
        """Raise :class:`IllegalPlay`, saying why ``p`` cannot be laid closed here."""
        if not self.extras:
            raise IllegalPlay("doubles are never laid closed in this game", IllegalPlay.CANNOT_CLOSE)
        if not IS_DOUBLE[p.tile]:
            raise IllegalPlay(f"only a double can be laid closed, and {tile_name(p.tile)} is not one", IllegalPlay.CANNOT_CLOSE)
        if self.continuing:
            raise IllegalPlay("an extra double added before the cross exists is laid open (it becomes the cross); closing "
                              "both line ends is a turn of its own, begun with its first double", IllegalPlay.CANNOT_CLOSE)
        raise IllegalPlay("the first double on the table opens the cross and stays open; a line end may be closed before "
                          "that only together with the other line end, each with its double", IllegalPlay.CANNOT_CLOSE)

    def _closing_text(self) -> str:
        e = self.closing
        return (f"you closed a line end with a double, so the only move is to close the {END_NAMES[e]} end too, "
                f"with {tile_name(DOUBLE[self.ends[e]])} closed")

    # -- mechanics ------------------------------------------------------------------------

    def _place(self, seat: int, t: Tile, end: int | None, forced: bool = False, closed: bool = False) -> None:
        self.hands[seat] &= ~(1 << t)
        lay = self.layout
        first_closed = closed and lay.spinner < 0 and self.closing < 0  # TURN-6 begins
        lay.place(t, end, closed)
        self.history.append(Placed(seat, t, end, forced, True) if closed else _placed(seat, t, end, forced))
        self.last_placer = seat
        if self.writer is not None:
            count = lay.count()
            points = self.writer(count)
            if points:
                self.history.append(Scored(seat, points, count))
        if not self.hands[seat]:
            self.continuing = False
            self.closing = -1
            self.end = DealEnd(DOMINO, seat)
            self.turn = TERMINAL
            return
        if self.closing >= 0:  # TURN-6: both line ends closed, the deal ends as a fish at once
            self.closing = -1
            self.continuing = False
            self._fish()
            return
        if end is not None:
            self.used |= 1 << end
        if first_closed:
            assert end in (LEFT, RIGHT)
            self.closing = 1 - end
            self.continuing = True
            return
        if self.extras and self._extras_left(seat):
            self.continuing = True
            return
        self._end_turn(seat)

    def _end_turn(self, seat: int) -> None:
        self.continuing = False
        self.used = 0
        self._advance(seat)

    def copy(self) -> CrossDeal:
        other = super().copy()
        assert isinstance(other, CrossDeal)
        for name in CrossDeal.__slots__:
            setattr(other, name, getattr(self, name))
        return other


def arms(history: Iterable[object]) -> dict[int | None, list[tuple[int, int, bool]]]:
    """The cross drawn from a deal's placements, for people and renderers.

    Returns, for each end index, the tiles laid on that arm going outward, each as ``(near,
    far, closed)`` with ``near`` the half that touches the tile before it; key ``None`` holds the
    lead as ``(low, high, False)``.  ``up`` and ``down`` grow from the first open double.
    """
    out: dict[int | None, list[tuple[int, int, bool]]] = {}
    tips: dict[int, int] = {}
    spinner = -1
    for e in history:
        if type(e) is not Placed:
            continue
        a, b = LOW[e.tile], HIGH[e.tile]
        if e.end is None:
            out[None] = [(a, b, False)]
            tips = {LEFT: a, RIGHT: b}
            spinner = a if a == b else -1
            continue
        near = tips.get(e.end, spinner)  # up and down start at the first open double
        far = b if a == near else a
        out.setdefault(e.end, []).append((near, far, e.closed))
        tips[e.end] = far
        if a == b and spinner < 0 and not e.closed:
            spinner = a
    return out
