"""One deal of kolbasa, the sausage (RULES.md §3 and §7, KB-1…KB-15).

:class:`KolbasaDeal` implements the deal-state interface of :mod:`.state` on a
:class:`~.layout.Sausage`.  Each seat owns a *row* of face-down tiles (:attr:`rows`, left to
right) that even the owner cannot see; the player never chooses the tile, only where it goes:

* a turn turns up the rightmost tile of the mover's row (a :class:`~.line.Turned` event, KB-7).
  If it fits somewhere the seat must decide, and every place is a move
  ``Play(tile, place)`` (places as in :mod:`.layout`: a line end, a junction for a double, a
  knife at a position; KB-3, KB-4, KB-6), even when there is only one.  If it fits nowhere it
  goes face down to the left end of the own row (:class:`~.line.Tailed`) and the turn passes.
* The starter's first tile is the start, laid automatically (KB-9).
* A knife cuts the sausage (KB-5): the start and the first ``i`` tiles of each line go face down
  to the left end of the opponent's row, recorded as a :class:`~.line.Cut` event.  A knife that
  is the mover's last tile still cuts (KB-13).
* The deal ends when a row is empty (domino, KB-13) or at once when no tile of either row fits
  anywhere (fish, the fisherman the last placer; KB-11); 1,000 placements end it as a fish (KB-14).

:attr:`hands` holds each row as a tile set (for the game's scoring); what a seat may see is
:func:`seat_view`: the layout, both rows' lengths and the public events (KB-15), never the order
of tiles it has not seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from .deal import Deal
from .errors import IllegalPlay
from .layout import Sausage, place_name
from .line import DOMINO, FAULT, FISH, TERMINAL, Cut, DealEnd, Event, Placed, Play, Tailed, Turned, check_turn
from .tiles import N_TILES, Tile, TileSet, mask_of, tile, tile_name

#: KB-14: a deal that reaches this many placements ends as a fish.
MAX_PLACEMENTS = 1000

# Plays and events are frozen values: one shared instance per distinct one (as in .line).
_PLAYS: dict[int, Play] = {}
_PLACED: dict[int, Placed] = {}
_TURNED = [[Turned(s, t) for t in range(N_TILES)] for s in range(2)]
_TAILED = [[Tailed(s, t) for t in range(N_TILES)] for s in range(2)]


def _play(t: Tile, place: int) -> Play:
    key = place * N_TILES + t
    p = _PLAYS.get(key)
    if p is None:
        p = _PLAYS[key] = Play(t, place)
    return p


def _placed(seat: int, t: Tile, place: int | None, forced: bool) -> Placed:
    if forced or place is None:
        return Placed(seat, t, place, forced)
    key = (place * N_TILES + t) * 2 + seat
    e = _PLACED.get(key)
    if e is None:
        e = _PLACED[key] = Placed(seat, t, place)
    return e


class KolbasaDeal:
    """A deal in progress.  Mutable; :meth:`copy` for look-ahead."""

    continuing = False
    bazaar: tuple[Tile, ...] = ()
    lead_tile: Tile | None = None  # the start is whatever the starter's row turns up

    def __init__(self, deal: Deal, *, leader: int) -> None:
        if len(deal.hands) != 2:
            raise ValueError(f"kolbasa is played by 2 players, not {len(deal.hands)}")
        self.n = 2
        self.rows: list[list[Tile]] = [list(h) for h in deal.hands]
        self.hands: list[TileSet] = [mask_of(r) for r in self.rows]
        #: per seat, how many tiles at the right of its row are still as dealt, never turned up:
        #: the only face-down tiles whose identity is not public (tails and sausages return to
        #: the left end, seen by both players; KB-15)
        self.unseen: list[int] = [len(r) for r in self.rows]
        self.layout = Sausage()
        self.ends: list[int] = self.layout.ends
        self.history: list[Event] = []
        self.end: DealEnd | None = None
        self.leader = leader
        self.last_placer = -1
        self.placements = 0
        self.turn = TERMINAL
        # KB-9: the starter's first tile is the start.
        t = self.rows[leader][-1]
        self._turned(leader, t)
        self._lay(leader, t, None, forced=True)
        if self.end is None:
            self._advance(1 - leader)

    # -- queries -------------------------------------------------------------------------

    def to_move(self) -> int:
        return self.turn

    @property
    def up(self) -> Tile | None:
        """The tile turned up and waiting for its place, or ``None``."""
        return self.rows[self.turn][-1] if self.turn >= 0 else None

    def bazaar_left(self) -> int:
        return 0

    def count(self) -> int | None:
        return None

    def public_rows(self) -> list[list[Tile | None]]:
        """Each row left to right as every seat may know it (KB-15): a tile that has been turned
        up (it returned face down, or it is the mover's, waiting for its place), ``None`` for one
        still as dealt.  The tiles as dealt are a block at the right of the row, left of the
        tile waiting for its place."""
        out: list[list[Tile | None]] = []
        for seat, (row, k) in enumerate(zip(self.rows, self.unseen)):
            right = len(row) - (seat == self.turn)
            out.append([*row[: right - k], *[None] * k, *row[right:]])
        return out

    def play_text(self, p: Play) -> str:
        """A move as people read it: ``"0-5 knife:3"``."""
        return f"{tile_name(p.tile)} {'start' if p.end is None else place_name(p.end)}"

    def legal_plays(self) -> list[Play]:
        """Every place of the turned-up tile, in increasing place order."""
        if self.turn < 0:
            return []
        t = self.rows[self.turn][-1]
        return [_play(t, p) for p in self.layout.places(t)]

    # -- moves ---------------------------------------------------------------------------

    def apply(self, p: Play) -> None:
        self._lay(self.turn, p.tile, p.end)
        if self.end is None:
            self._advance(1 - self.last_placer)

    def push(self, p: Play, seat: int | None = None) -> Play:
        self.check(p, seat)
        self.apply(p)
        return p

    def check(self, p: Play, seat: int | None = None) -> None:
        """Raise :class:`IllegalPlay` unless ``p`` is legal, saying why."""
        check_turn(self.turn, seat)
        if p.closed or p.declare is not None:
            raise IllegalPlay("kolbasa has no closed doubles and nothing to declare", IllegalPlay.BAD_MOVE)
        legal = self.legal_plays()
        if p in legal:
            return
        up = legal[0].tile
        if p.tile != up:
            what = tile_name(p.tile) if 0 <= p.tile < N_TILES else repr(p.tile)
            raise IllegalPlay(f"the tile turned up is {tile_name(up)}, not {what}: you choose only where it goes",
                              IllegalPlay.NOT_YOUR_TILE)
        where = ", ".join(place_name(q.end) for q in legal if q.end is not None)
        what = "no place given" if p.end is None else f"{place_name(p.end)} is not a place for {tile_name(up)}"
        raise IllegalPlay(f"{what}; its places: {where}", IllegalPlay.BAD_END)

    def forfeit(self, seat: int) -> None:
        self.end = DealEnd(FAULT, seat)
        self.turn = TERMINAL

    # -- mechanics ------------------------------------------------------------------------

    def _lay(self, seat: int, t: Tile, place: int | None, forced: bool = False) -> None:
        row = self.rows[seat]
        row.pop()
        self.hands[seat] &= ~(1 << t)
        cut = self.layout.lay(t, place)
        self.history.append(_placed(seat, t, place, forced))
        self.last_placer = seat
        self.placements += 1
        if cut:  # KB-5: to the left end of the opponent's row, as one block in this order
            other = 1 - seat
            self.rows[other][:0] = cut
            self.hands[other] |= mask_of(cut)
            self.history.append(Cut(seat, other, cut))
        if not row:
            self.end = DealEnd(DOMINO, seat)
            self.turn = TERMINAL
        elif self.placements >= MAX_PLACEMENTS or self._blocked():
            self.end = DealEnd(FISH, seat)
            self.turn = TERMINAL

    def _turned(self, seat: int, t: Tile) -> None:
        self.history.append(_TURNED[seat][t])
        if self.unseen[seat]:
            self.unseen[seat] -= 1

    def _blocked(self) -> bool:
        """KB-11: no tile of either row fits anywhere."""
        return not (self.hands[0] | self.hands[1]) & self.layout.fit_mask()

    def _advance(self, seat: int) -> None:
        """Turn up ``seat``'s rightmost tile; send tiles that fit nowhere to the tails (KB-7)
        until one fits (the fish test after every placement guarantees one will)."""
        fit = self.layout.fit_mask()
        while True:
            row = self.rows[seat]
            t = row[-1]
            self._turned(seat, t)
            if fit >> t & 1:
                self.turn = seat
                return
            row.insert(0, row.pop())
            self.history.append(_TAILED[seat][t])
            seat = 1 - seat

    # -- copies --------------------------------------------------------------------------

    def copy(self) -> KolbasaDeal:
        other = object.__new__(KolbasaDeal)
        other.__dict__.update(self.__dict__)
        other.rows = [list(r) for r in self.rows]
        other.hands = list(self.hands)
        other.unseen = list(self.unseen)
        other.layout = self.layout.copy()
        other.ends = other.layout.ends
        other.history = list(self.history)
        return other

    def all_tiles(self) -> TileSet:
        """Both rows and the layout: always the 28 tiles (a test holds it)."""
        lay = self.layout
        on_table = [lay.start, *lay.lines[0], *lay.lines[1]]
        return self.hands[0] | self.hands[1] | mask_of(tile(a, b) for a, b in on_table)


@dataclass(frozen=True, slots=True)
class KolbasaView:
    """What one seat may know (KB-15): the layout, both rows' lengths, the tile turned up, the
    public events, and each row with the tiles whose identity is public (``None`` for the rest).
    Never a face-down tile's identity or place beyond what those events showed."""

    seat: int
    start: tuple[int, int]
    lines: tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]
    lengths: tuple[int, int]
    rows: tuple[tuple[Tile | None, ...], ...]
    to_move: int
    up: Tile | None
    history: tuple[Event, ...]
    legal: tuple[Play, ...]


def seat_view(state: KolbasaDeal, seat: int) -> KolbasaView:
    lay = state.layout
    return KolbasaView(
        seat=seat,
        start=lay.start,
        lines=(tuple(lay.lines[0]), tuple(lay.lines[1])),
        lengths=(len(state.rows[0]), len(state.rows[1])),
        rows=tuple(tuple(r) for r in state.public_rows()),
        to_move=state.turn,
        up=state.up,
        history=tuple(state.history),
        legal=tuple(state.legal_plays()) if state.turn == seat else (),
    )


#: the tiles of each row as dealt (KB-8)
ROW = 14


def rows_as_dealt(history: list[Event] | tuple[Event, ...]) -> tuple[list[list[Tile | None]], list[int], TileSet]:
    """What a deal's events show of each row as dealt (KB-7, KB-8, KB-15): the row left to right
    with a tile where it was turned up and ``None`` where it is still unseen, how many tiles at
    the left of each dealt block are still unseen, and every tile turned up so far.  A row's tiles
    are turned up from the right, so those of the dealt block turned so far are its rightmost, in
    the order turned; tails and cut sausages go to the left of a row, where they are public and
    never reach the dealt block."""
    rows: list[list[Tile | None]] = [[None] * ROW for _ in range(2)]
    left = [ROW, ROW]
    public = 0
    for e in history:
        if type(e) is Turned:
            public |= 1 << e.tile
            if left[e.seat]:  # the dealt block is the right of the row until it is used up
                left[e.seat] -= 1
                rows[e.seat][left[e.seat]] = e.tile
    return rows, left, public
