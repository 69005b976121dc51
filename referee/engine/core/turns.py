"""Line deals whose turns may hold several tiles or a declaration (RULES.md §6 TURN, SK).

Both classes are :class:`~.line.LineDeal` (one line, two ends, the draws, passes and the fish of
§2) with other turns; one decision is one move (TURN-1), the same seat moving again with
``continuing`` set while its turn goes on.

* :class:`DoublesDeal` — sea_kozel and general.  A turn whose first tile is a double laid on
  ``left`` or ``right`` (never the lead) may go on with a second double on the *other* end, or
  :data:`~.line.STOP` (TURN-2); the offer is made only when the player holds that double.
  sea_kozel's extras ride on it: the leader may be offered 6-6 led *for a hundred*
  (:data:`~.line.HUNDRED`, SK-7) beside leading it plainly, the fisherman is the last player who
  laid a non-double (TURN-10), and a fish the game lets be written off (``write_off(state)``
  answers with each side's total, :attr:`held`) is not over yet: the fisherman answers :data:`~.line.WRITE_OFF` or
  :data:`~.line.DECLINE` (SK-12), recorded as a :class:`~.line.Declared` event, and only then is
  :attr:`end` set.  :attr:`last_turn` holds the tiles of the turn that went out (TURN-3: they all
  count for bald, the 6-6 rule and generals).
* :class:`ChainDeal` — blitz.  After each tile a player who can place another must (TURN-8), on
  any end; the lead, a forced 1-1 included, starts a chain; there is no stop.  Going out
  mid-chain ends the deal, and the chain's player is the fisherman (the last placer).
"""

from __future__ import annotations

from collections.abc import Callable

from .deal import Deal
from .errors import IllegalPlay
from .layout import END_NAMES, LEFT, RIGHT
from .line import (
    _END_SUIT,
    _LEADS,
    DECLARATIONS,
    DECLINE,
    DOMINO,
    FISH,
    HUNDRED,
    NO_DRAW,
    STOP,
    TERMINAL,
    WRITE_OFF,
    DealEnd,
    Declared,
    LineDeal,
    Play,
    _placed,
    play,
)
from .tiles import DOUBLE, IS_DOUBLE, Tile, bits, tile_name

SIX_SIX = DOUBLE[6]


class DoublesDeal(LineDeal):
    """A line deal with two doubles at once (TURN-2) and sea_kozel's decisions.

    ``hundred``: the leader may lead 6-6 for a hundred (the game has checked SK-7).
    ``nondouble_fisherman``: the fisherman is the last player who laid a non-double (TURN-10,
    sea_kozel); otherwise the last placer (§5).  ``write_off(state)``: asked at a fish, before
    :attr:`end` is set, whether the fisherman decides to write it off or decline (SK-12): each
    side's total as the game counts the hands (kept in :attr:`held` for the fisherman, who
    decides on them), or ``None`` when the fish is not his to decide.
    """

    __slots__ = (
        "continuing",
        "deciding",
        "declared",
        "held",
        "hundred",
        "hundred_declared",
        "last_turn",
        "nondouble_fisherman",
        "nondouble_placer",
        "pair_end",
        "turn_tiles",
        "write_off",
    )

    def __init__(
        self,
        deal: Deal,
        *,
        leader: int,
        lead_tile: Tile | None = None,
        draw: str = NO_DRAW,
        keep: int = 0,
        hundred: bool = False,
        nondouble_fisherman: bool = False,
        write_off: Callable[[DoublesDeal], tuple[int, ...] | None] | None = None,
    ) -> None:
        self.continuing = False
        self.pair_end = -1  # TURN-2: the end the second double may go on
        self.hundred = hundred
        self.declared: str | None = None  # "hundred", "write_off" or "decline", once made
        self.hundred_declared = False  # kept when a fish decision follows (SK-9 with SK-12)
        self.nondouble_fisherman = nondouble_fisherman
        self.nondouble_placer = -1
        self.write_off = write_off
        self.deciding = False  # the fisherman owes write_off or decline
        self.held: tuple[int, ...] | None = None  # each side's total at a fish he decides on
        self.turn_tiles: list[Tile] = []
        self.last_turn: tuple[Tile, ...] = ()
        super().__init__(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep)

    # -- queries -------------------------------------------------------------------------

    def legal_plays(self) -> list[Play]:
        """Every legal move: the fish decision; or leads (plain 6-6 before 6-6 for a hundred);
        or, during a pair, the second double then :data:`STOP`; else the line's plays."""
        if self.turn < 0:
            return []
        if self.deciding:
            return [WRITE_OFF, DECLINE]
        if self.ends[0] < 0:
            leads = [_LEADS[t] for t in bits(self.hands[self.turn])]
            if self.hundred and self.hands[self.turn] >> SIX_SIX & 1:
                leads.append(HUNDRED)
            return leads
        if self.continuing:
            return [play(DOUBLE[self.ends[self.pair_end]], self.pair_end), STOP]
        return LineDeal.legal_plays(self)

    # -- moves ---------------------------------------------------------------------------

    def apply(self, p: Play) -> None:
        seat = self.turn
        if p.tile < 0:
            if p.declare is not None:  # WRITE_OFF or DECLINE: the fish is over now
                self.deciding = False
                self.declared = p.declare
                self.history.append(Declared(seat, p.declare))
                self._fish_end()
                return
            self._end_turn(seat)  # STOP
            return
        if p.declare is not None:  # 6-6 led for a hundred
            self.declared = p.declare
            self.hundred_declared = True
            self.history.append(Declared(seat, p.declare))
        self._place(seat, p.tile, p.end)

    def push(self, p: Play, seat: int | None = None) -> Play:
        self.check(p, seat)
        if self.ends[0] < 0 and p.tile >= 0:
            p = HUNDRED if p.declare is not None else _LEADS[p.tile]
        self.apply(p)
        return p

    def check(self, p: Play, seat: int | None = None) -> None:
        """Raise :class:`IllegalPlay` unless ``p`` is legal, saying why it is not."""
        if self.turn < 0:
            raise IllegalPlay("the deal is over", IllegalPlay.DEAL_OVER)
        if seat is not None and seat != self.turn:
            raise IllegalPlay(f"it is not your turn: seat {self.turn} is to move", IllegalPlay.NOT_YOUR_TURN)
        legal = self.legal_plays()
        asked = p
        if self.ends[0] < 0 and 0 <= p.tile < 28 and not p.closed:  # a lead names no end
            asked = HUNDRED if p.declare == "hundred" and p.tile == SIX_SIX else _LEADS[p.tile] if p.declare is None else p
        if asked in legal:
            return
        if self.deciding:
            raise IllegalPlay("the fish is yours to write off or decline: answer write_off or decline", IllegalPlay.BAD_MOVE)
        if p.declare is not None:
            if p.declare not in DECLARATIONS:
                raise IllegalPlay(f"there is no declaration {p.declare!r} (known: {', '.join(DECLARATIONS)})", IllegalPlay.BAD_MOVE)
            if p.declare == "hundred":
                raise IllegalPlay(self._why_no_hundred(p), IllegalPlay.BAD_MOVE)
            raise IllegalPlay(f"{p.declare} answers a fish that may be written off, and there is none now", IllegalPlay.BAD_MOVE)
        if p.tile < 0 and self.continuing:  # pragma: no cover - STOP is legal while continuing
            return
        if self.continuing:
            other = END_NAMES[self.pair_end]
            want = tile_name(DOUBLE[self.ends[self.pair_end]])
            if p.closed:
                raise IllegalPlay("doubles are never laid closed in this game", IllegalPlay.CANNOT_CLOSE)
            raise IllegalPlay(f"after a double the turn may only go on with a second double on the other end "
                              f"({want} on {other}), or stop", IllegalPlay.BAD_MOVE)
        if p.tile < 0:
            raise IllegalPlay("nothing to stop: stop ends a turn after its first double, and you have placed nothing "
                              "this turn" if legal else "nothing to stop", IllegalPlay.CANNOT_STOP)
        LineDeal.check(self, p, seat)

    def _why_no_hundred(self, p: Play) -> str:
        if p.tile != SIX_SIX:
            return "a hundred is declared only by leading 6-6"
        if self.ends[0] >= 0:
            return "a hundred is declared only with the lead"
        return ("you may not declare a hundred this deal: only the leader of an ordinary later deal whose side has "
                "points, holding 6-6 (not in the first deal, eggs, a write-off or a granted hundred)")

    # -- mechanics ------------------------------------------------------------------------

    def _place(self, seat: int, t: Tile, end: int | None, forced: bool = False) -> None:
        hand = self.hands[seat] & ~(1 << t)
        self.hands[seat] = hand
        self._lay(t, end)
        self.history.append(_placed(seat, t, end, forced))
        self.last_placer = seat
        self.turn_tiles.append(t)
        double = IS_DOUBLE[t]
        if not double:
            self.nondouble_placer = seat
        if not hand:
            self.continuing = False
            self.last_turn = tuple(self.turn_tiles)
            self.end = DealEnd(DOMINO, seat)
            self.turn = TERMINAL
            return
        if double and end is not None and not self.continuing:
            other = RIGHT if end == LEFT else LEFT
            if hand >> DOUBLE[self.ends[other]] & 1:
                self.continuing = True
                self.pair_end = other
                return
        self._end_turn(seat)

    def _end_turn(self, seat: int) -> None:
        self.continuing = False
        self.pair_end = -1
        self.turn_tiles = []
        self._advance(seat)

    def _fish(self) -> None:
        if self.nondouble_fisherman and self.nondouble_placer >= 0:
            self.last_placer = self.nondouble_placer  # TURN-10
        held = self.write_off(self) if self.write_off is not None else None
        if held is not None:
            self.held = held
            self.deciding = True
            self.turn = self.last_placer
            return
        self._fish_end()

    def _fish_end(self) -> None:
        self.end = DealEnd(FISH, self.last_placer)
        self.turn = TERMINAL

    def copy(self) -> DoublesDeal:
        other = super().copy()
        assert isinstance(other, DoublesDeal)
        for name in DoublesDeal.__slots__:
            setattr(other, name, getattr(self, name))
        other.turn_tiles = list(self.turn_tiles)
        return other


class ChainDeal(LineDeal):
    """blitz's deal: compulsory chains, one tile a move (TURN-8)."""

    __slots__ = ("continuing",)

    def __init__(self, deal: Deal, *, leader: int, lead_tile: Tile | None = None, draw: str = NO_DRAW, keep: int = 0) -> None:
        self.continuing = False
        super().__init__(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep)

    def apply(self, p: Play) -> None:
        self._place(self.turn, p.tile, p.end)

    def _after_place(self, seat: int) -> None:
        hand = self.hands[seat]
        if not hand:
            self.continuing = False
            self.end = DealEnd(DOMINO, seat)
            self.turn = TERMINAL
            return
        ends = self.ends
        if hand & (_END_SUIT[ends[0]] | _END_SUIT[ends[1]]):
            self.continuing = True  # the chain goes on: same seat, any end
            self.turn = seat
            return
        self.continuing = False
        self._advance(seat)

    def check(self, p: Play, seat: int | None = None) -> None:
        if self.continuing and p.tile < 0 and p.declare is None and self.turn >= 0 and (seat is None or seat == self.turn):
            raise IllegalPlay(f"a chain is compulsory: you can place another tile ({self.legal_plays()[0]}), so you must",
                              IllegalPlay.CANNOT_STOP)
        LineDeal.check(self, p, seat)

    def copy(self) -> ChainDeal:
        other = super().copy()
        assert isinstance(other, ChainDeal)
        other.continuing = self.continuing
        return other

