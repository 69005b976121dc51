"""One deal of a line game: the layout and its open ends, hands, bazaar, turns and history.

This module owns the mechanics RULES.md §2 shares between line games: placing a tile on a
matching end, compulsory play, the automatic draws and passes, forced leads, going out
(domino) and the fish.  It knows nothing of points; a game module (``games/*.py``) decides who
leads, what a hand is worth and what each side writes.

State API (the shape of OpenSpiel's and python-chess's):

* :meth:`LineDeal.to_move` is the seat whose decision it is, or :data:`TERMINAL`.
* :meth:`LineDeal.legal_plays` lists that seat's plays in a fixed order (tile id, then end).
* :meth:`LineDeal.apply` is the unchecked fast path; :meth:`LineDeal.push` checks the play and
  raises :class:`~referee.engine.core.errors.IllegalPlay` with a reason a bot author understands.
* :attr:`LineDeal.end` is ``None`` while the deal goes on, then a :class:`DealEnd`.

Forced leads, draws and passes are not plays: the deal performs them itself and records them in
:attr:`LineDeal.history` (RULES.md §5, "Not moves").

The seams every later game plugs into (see :mod:`.state` for the interface above the engine):

* **The layout** is a :class:`~.layout.Layout` object (:attr:`LineDeal.layout`); this class
  plays on a :class:`~.layout.Line`, :class:`~.cross.CrossDeal` on a :class:`~.layout.Cross`.
  :attr:`LineDeal.ends` is the layout's own list of end values, read directly on the hot path.
* **Moves** are :class:`Play` values: a tile on an end (optionally ``closed``), :data:`STOP`, or a
  declaration (``declare``).  One decision per move (RULES.md §6 TURN-1): a multi-tile turn
  keeps :attr:`LineDeal.turn` on the same seat, with ``continuing`` set.
* **Points written during play** are :class:`Scored` events, recorded right after the
  :class:`Placed` event that made them by a deal given a ``writer`` (telephone, muggins).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .deal import Deal
from .errors import IllegalPlay
from .layout import END_INDEX as END_INDEX  # noqa: F401  (re-exported: the names predate layout.py)
from .layout import END_NAMES as END_NAMES
from .layout import LEFT as LEFT
from .layout import RIGHT as RIGHT
from .layout import Layout, Line
from .tiles import HIGH, LOW, OTHER, SUIT, Tile, TileSet, bits, mask_of, tile_name, tiles_tuple

TERMINAL = -1

# How a player who cannot place gets tiles (RULES.md §2.4 and the club page).
NO_DRAW = "none"  # no bazaar, or the bazaar is out of play: pass
DRAW_UNTIL_FIT = "until_fit"  # draw one at a time until one fits, then place it
DRAW_ONE = "one"  # draw a single tile; place it if it fits, else the turn passes

DOMINO = "domino"
FISH = "fish"
FAULT = "fault"  # the referee ended the deal because a player faulted


@dataclass(frozen=True, slots=True)
class Play:
    """One decision (a *move*, RULES.md §6 TURN-1).

    * ``tile`` on open end ``end`` (the lead has ``end=None``); ``closed`` lays a double face
      down so that nothing more is attached on that side (osel, TURN-5);
    * :data:`STOP` (``tile=-1``): place nothing more this turn, where going on is optional;
    * a declaration: ``declare`` names it, alone (``tile=-1``: sea_kozel's :data:`WRITE_OFF` and
      :data:`DECLINE` after a fish, SK-12) or with the tile it goes with (:data:`HUNDRED`, 6-6
      led for a hundred, SK-7).

    Plays are interned (:func:`play`), so comparing and hashing them is cheap.
    """

    tile: Tile
    end: int | None
    closed: bool = False
    declare: str | None = None

    def __str__(self) -> str:
        if self.tile < 0:
            return self.declare or "stop"
        # Ends past the four of the line and the cross (mexican_train's trains, kolbasa's places)
        # are named by their deal (TrainDeal.play_text, layout.place_name); here, the index.
        where = END_NAMES[self.end] if self.end is not None and 0 <= self.end < len(END_NAMES) else f"end {self.end}"
        text = tile_name(self.tile) if self.end is None else f"{tile_name(self.tile)} {where}"
        if self.closed:
            text += " closed"
        if self.declare:
            text += f" {self.declare}"
        return text


_LEADS = [Play(t, None) for t in range(28)]
_PLAYS = [[Play(t, e) for e in range(len(END_NAMES))] for t in range(28)]
_CLOSED = [[Play(t, e, True) for e in range(len(END_NAMES))] for t in range(28)]
#: The optional "I place nothing more this turn" decision of multi-tile turns.
STOP = Play(-1, None)
#: sea_kozel's declarations (RULES.md §6 SK-7, SK-12): 6-6 led *for a hundred*, and the
#: fisherman's answer after a fish that may be written off.
HUNDRED = Play(27, None, False, "hundred")
WRITE_OFF = Play(-1, None, False, "write_off")
DECLINE = Play(-1, None, False, "decline")
DECLARATIONS = ("hundred", "write_off", "decline")

#: ``_END_SUIT[v]``: the tiles that fit an end showing ``v``; ``_END_SUIT[-1]`` (a closed or
#: unopened end) is the empty set, so the hot path needs no ``v >= 0`` test.
_END_SUIT: list[TileSet] = [*SUIT, 0]
#: ``_FIT2[a][b]``, for a two-ended layout showing ``a`` (left) and ``b`` (right): the tiles that
#: fit either end, and for each tile ``t`` its plays, left before right — what
#: :meth:`LineDeal.legal_plays` would build end by end, precomputed.  Like ``_END_SUIT``, index
#: ``-1`` (the last, 7) is a closed or unopened end, which nothing fits.
_FIT2: list[list[tuple[TileSet, list[tuple[Play, ...]]]]] = [
    [
        (_END_SUIT[a] | _END_SUIT[b], [tuple(_PLAYS[t][e] for e, v in enumerate((a, b)) if v == LOW[t] or v == HIGH[t]) for t in range(28)])
        for b in (*range(7), -1)
    ]
    for a in (*range(7), -1)
]


def _end_text(end: int) -> str:
    """An end index as a bot author reads it: its name, or the raw number when it names none."""
    return repr(END_NAMES[end]) if 0 <= end < len(END_NAMES) else f"end {end!r}"


def play(tile: Tile, end: int | None = None, closed: bool = False) -> Play:
    """The interned :class:`Play` for ``tile`` on ``end`` (``None``: the lead), maybe closed."""
    if end is None:
        return _LEADS[tile]
    return _CLOSED[tile][end] if closed else _PLAYS[tile][end]


@dataclass(frozen=True, slots=True)
class Placed:
    """``seat`` put ``tile`` on ``end`` (``None``: the lead); ``forced`` when the referee did it;
    ``closed`` when the double was laid face down (osel)."""

    seat: int
    tile: Tile
    end: int | None
    forced: bool = False
    closed: bool = False


@dataclass(frozen=True, slots=True)
class Drew:
    """``seat`` drew ``count`` tiles from the bazaar; ``tiles`` is empty in other seats' views."""

    seat: int
    tiles: tuple[Tile, ...]
    count: int


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` could neither place nor draw, and knocked."""

    seat: int


@dataclass(frozen=True, slots=True)
class Scored:
    """``seat``'s side wrote ``points`` during play: the open ends added up to ``count`` after
    that seat's last placement (telephone, muggins; RULES.md §6 LAY-6)."""

    seat: int
    points: int
    count: int


@dataclass(frozen=True, slots=True)
class Declared:
    """``seat`` made a declaration: ``"hundred"`` (6-6 led for a hundred, recorded just before
    that lead), ``"write_off"`` or ``"decline"`` (the fisherman's answer after a fish); sea_kozel,
    RULES.md §6 SK-7 and SK-12."""

    seat: int
    what: str


@dataclass(frozen=True, slots=True)
class Turned:
    """kolbasa (RULES.md §7 KB-7): ``seat`` turned up ``tile``, the rightmost of its row; a
    :class:`Placed` or a :class:`Tailed` event of the same tile follows."""

    seat: int
    tile: Tile


@dataclass(frozen=True, slots=True)
class Tailed:
    """kolbasa (KB-7): the tile ``seat`` turned up fit nowhere and went face down to the left
    end of its own row."""

    seat: int
    tile: Tile


@dataclass(frozen=True, slots=True)
class Cut:
    """kolbasa (KB-5): ``seat``'s knife cut ``tiles`` (the start, then the top line outward,
    then the bottom line outward); they went face down to the left end of seat ``to``'s row in
    that order."""

    seat: int
    to: int
    tiles: tuple[Tile, ...]


Event = Placed | Drew | Passed | Scored | Declared | Turned | Tailed | Cut

# Events are frozen values, so the deal records one shared instance per distinct event instead
# of building a new dataclass on every move (a frozen dataclass costs over a microsecond to make).
# Placed events are looked up arithmetically: seat, tile, end (None first) and forced.
_MAX_SEATS = 8
_PLACED_EVENTS: list[Placed] = [
    Placed(seat, t, end, forced)
    for seat in range(_MAX_SEATS)
    for t in range(28)
    for end in (None, *range(len(END_NAMES)))
    for forced in (False, True)
]
_PASSED_EVENTS = [Passed(seat) for seat in range(_MAX_SEATS)]
_ENDS_PLUS_LEAD = len(END_NAMES) + 1
_PLACED_TILE = _ENDS_PLUS_LEAD * 2  # index strides in _PLACED_EVENTS (unforced events)
_PLACED_SEAT = 28 * _PLACED_TILE


def _placed(seat: int, t: Tile, end: int | None, forced: bool) -> Placed:
    return _PLACED_EVENTS[((seat * 28 + t) * _ENDS_PLUS_LEAD + (0 if end is None else end + 1)) * 2 + forced]


@dataclass(frozen=True, slots=True)
class DealEnd:
    """How the deal ended: ``reason`` is ``"domino"`` (``seat`` went out), ``"fish"``
    (``seat`` is the fisherman, the last player who placed a tile) or ``"fault"`` (the referee
    stopped the deal because ``seat`` faulted)."""

    reason: str
    seat: int


# A deal's end is a frozen value too: one shared instance per seat for going out and for a fish.
_WENT_OUT = [DealEnd(DOMINO, seat) for seat in range(_MAX_SEATS)]
_FISHED = [DealEnd(FISH, seat) for seat in range(_MAX_SEATS)]


def check_turn(turn: int, seat: int | None, over: str = "the deal is over") -> None:
    """Raise :class:`IllegalPlay` if the deal is over (``turn`` is :data:`TERMINAL`) or ``seat``
    (``None``: whoever is to move) is not the seat to move; every deal state's checks start here."""
    if turn < 0:
        raise IllegalPlay(over, IllegalPlay.DEAL_OVER)
    if seat is not None and seat != turn:
        raise IllegalPlay(f"it is not your turn: seat {turn} is to move", IllegalPlay.NOT_YOUR_TURN)


class LineDeal:
    """A deal in progress.  Mutable; :meth:`copy` for look-ahead."""

    __slots__ = (
        "_lay",
        "bazaar",
        "draw_rule",
        "drawn",
        "end",
        "ends",
        "hands",
        "history",
        "keep",
        "last_placer",
        "layout",
        "lead_tile",
        "leader",
        "n",
        "sleeping",
        "turn",
    )

    #: True while the seat to move is going on with a turn it began (never in line games)
    continuing = False

    def __init__(
        self,
        deal: Deal,
        *,
        leader: int,
        lead_tile: Tile | None = None,
        draw: str = NO_DRAW,
        keep: int = 0,
        layout: Layout | None = None,
    ) -> None:
        """Start a deal.

        Args:
            deal: the hands and the undealt tiles.
            leader: the seat that leads.
            lead_tile: a forced lead (RULES.md §2.5), placed at once; ``None`` lets the leader
                choose any tile.
            draw: :data:`NO_DRAW` (undealt tiles sleep), :data:`DRAW_UNTIL_FIT` or :data:`DRAW_ONE`.
            keep: bazaar tiles that are never drawn (Kozel for 2–3 players keeps the last one).
            layout: the layout to play on (default: a fresh :class:`~.layout.Line`); a subclass
                on another layout overrides :meth:`apply`, which places on a line.
        """
        self.n = len(deal.hands)
        self.hands: list[TileSet] = list(deal.masks)
        self.draw_rule = draw
        if draw == NO_DRAW:
            self.bazaar: tuple[Tile, ...] = ()
            self.sleeping: TileSet = mask_of(deal.undealt)
        else:
            self.bazaar = tuple(deal.undealt)
            self.sleeping = 0
        self.drawn = 0
        self.keep = keep
        self.layout = Line() if layout is None else layout
        self.ends: list[int] = self.layout.ends
        self._lay = self.layout.place  # bound once: it runs every move
        self.turn = leader
        self.history: list[Event] = []
        self.end: DealEnd | None = None
        self.last_placer = -1
        self.leader = leader
        self.lead_tile = lead_tile
        if lead_tile is not None:
            if not self.hands[leader] >> lead_tile & 1:
                raise ValueError(f"forced lead {tile_name(lead_tile)} is not in seat {leader}'s hand")
            self._place(leader, lead_tile, None, forced=True)

    # -- queries -------------------------------------------------------------------------

    def to_move(self) -> int:
        """The seat to decide, or :data:`TERMINAL`."""
        return self.turn

    @property
    def started(self) -> bool:
        return self.ends[0] >= 0

    def ends_mask(self) -> TileSet:
        """Every tile that fits some open end."""
        m = 0
        for v in self.ends:
            m |= _END_SUIT[v]
        return m

    def drawable(self) -> int:
        """Tiles a player could still draw."""
        return max(0, len(self.bazaar) - self.drawn - self.keep)

    def bazaar_left(self) -> int:
        """Tiles still lying in the bazaar (drawable or kept back)."""
        return len(self.bazaar) - self.drawn

    def legal_plays(self) -> list[Play]:
        """The plays of the seat to move, by tile id and then end (left before right)."""
        if self.turn < 0:
            return []
        hand = self.hands[self.turn]
        ends = self.ends
        if ends[0] < 0:
            return [_LEADS[t] for t in tiles_tuple(hand)]
        out: list[Play] = []
        if len(ends) == 2:
            # The line's fast path: the same plays in the same order, from a table.
            fits, row2 = _FIT2[ends[0]][ends[1]]
            m = hand & fits
            while m:
                low = m & -m
                out += row2[low.bit_length() - 1]
                m ^= low
            return out
        for t in bits(hand & self.ends_mask()):
            row = _PLAYS[t]
            lo, hi = LOW[t], HIGH[t]
            for e, v in enumerate(ends):
                if v == lo or v == hi:
                    out.append(row[e])
        return out

    def count(self) -> int | None:
        """The count of the open ends where the game writes points during play, else ``None``."""
        return None

    # -- moves ---------------------------------------------------------------------------

    def apply(self, p: Play) -> None:
        """Make play ``p`` for the seat to move.  Unchecked: ``p`` must come from
        :meth:`legal_plays` (use :meth:`push` for untrusted input)."""
        # _place, Line.place and _after_place inlined, and _advance's common case: this is the
        # line games' hot path (every call saved is a few per cent of a whole random deal).
        # Subclasses on other layouts (the cross) override apply.
        seat = self.turn
        t = p.tile
        end = p.end
        hands = self.hands
        hand = hands[seat] & ~(1 << t)
        hands[seat] = hand
        ends = self.ends
        if end is None:
            ends[0] = LOW[t]
            ends[1] = HIGH[t]
            self.history.append(_PLACED_EVENTS[seat * _PLACED_SEAT + t * _PLACED_TILE])
        else:
            ends[end] = OTHER[t][ends[end]]
            self.history.append(_PLACED_EVENTS[seat * _PLACED_SEAT + t * _PLACED_TILE + end * 2 + 2])
        self.last_placer = seat
        if not hand:
            self.end = _WENT_OUT[seat]
            self.turn = TERMINAL
            return
        nxt = seat + 1
        if nxt == self.n:
            nxt = 0
        if hands[nxt] & _FIT2[ends[0]][ends[1]][0]:
            self.turn = nxt  # the next seat can place: nothing is blocked, nobody draws or passes
            return
        self._advance(seat)

    def push(self, p: Play, seat: int | None = None) -> Play:
        """Check and make a play; return the play as recorded (a lead's end is dropped).

        Raises:
            IllegalPlay: the deal is over, it is not ``seat``'s turn, the tile is not in the
                hand, it fits no end or not the end named, or ``p`` is :data:`STOP` while a
                tile can be placed.
        """
        self.check(p, seat)
        if not self.started:
            p = _LEADS[p.tile]
        self.apply(p)
        return p

    def _check_turn(self, seat: int | None) -> None:
        """Raise :class:`IllegalPlay` if the deal is over or it is not ``seat``'s turn."""
        check_turn(self.turn, seat)

    def check(self, p: Play, seat: int | None = None) -> None:
        """Raise :class:`IllegalPlay` unless ``p`` is legal for ``seat`` (default: the seat to move)."""
        self._check_turn(seat)
        hand = self.hands[self.turn]
        if p.closed or p.declare is not None:
            what = "doubles are never laid closed" if p.closed else f"there is nothing to declare ({p.declare!r})"
            raise IllegalPlay(f"{what} in this game", IllegalPlay.CANNOT_CLOSE if p.closed else IllegalPlay.BAD_MOVE)
        if not 0 <= p.tile < len(OTHER) and p != STOP:
            raise IllegalPlay(f"{p.tile!r} is not a tile id (0..{len(OTHER) - 1})", IllegalPlay.NOT_YOUR_TILE)
        if p.tile < 0:
            fits = self.legal_plays()
            raise IllegalPlay(
                f"you must play: you hold a playable tile ({fits[0]})" if fits else "nothing to stop",
                IllegalPlay.MUST_PLAY,
            )
        if not hand >> p.tile & 1:
            raise IllegalPlay(f"{tile_name(p.tile)} is not in your hand", IllegalPlay.NOT_YOUR_TILE)
        if self.ends[0] < 0:
            if self.lead_tile is not None and p.tile != self.lead_tile:
                raise IllegalPlay(f"the lead must be {tile_name(self.lead_tile)}", IllegalPlay.MUST_LEAD_TILE)
            return
        ends = self.ends
        if p.end is None or not 0 <= p.end < len(ends) or ends[p.end] < 0:
            open_names = [END_NAMES[e] for e, v in enumerate(ends) if v >= 0]
            raise IllegalPlay(
                f"{'no end given' if p.end is None else _end_text(p.end) + ' is not an open end'}; "
                f"open ends: {', '.join(open_names)}",
                IllegalPlay.BAD_END,
            )
        if OTHER[p.tile][ends[p.end]] < 0:
            shown = " and ".join(f"{END_NAMES[e]} {v}" for e, v in enumerate(ends) if v >= 0)
            fitting = [END_NAMES[e] for e, v in enumerate(ends) if v >= 0 and OTHER[p.tile][v] >= 0]
            if fitting:
                raise IllegalPlay(
                    f"{tile_name(p.tile)} does not match the {END_NAMES[p.end]} end ({ends[p.end]}); "
                    f"it fits the {fitting[0]} end",
                    IllegalPlay.NO_MATCH,
                )
            raise IllegalPlay(f"{tile_name(p.tile)} does not fit: the ends show {shown}", IllegalPlay.NO_MATCH)

    # -- mechanics ------------------------------------------------------------------------

    def _place(self, seat: int, t: Tile, end: int | None, forced: bool = False) -> None:
        self.hands[seat] &= ~(1 << t)
        self._lay(t, end)
        # _placed(), inlined: this runs once a move
        self.history.append(_PLACED_EVENTS[((seat * 28 + t) * _ENDS_PLUS_LEAD + (0 if end is None else end + 1)) * 2 + forced])
        self.last_placer = seat
        self._after_place(seat)

    def _after_place(self, seat: int) -> None:
        """Decide what follows a placement: going out, or the next turn."""
        if not self.hands[seat]:
            self.end = _WENT_OUT[seat]
            self.turn = TERMINAL
            return
        self._advance(seat)

    def _blocked(self, ends_mask: TileSet) -> bool:
        if len(self.bazaar) - self.drawn > self.keep:  # something can still be drawn
            return False
        for h in self.hands:
            if h & ends_mask:
                return False
        return True

    def _advance(self, seat: int) -> None:
        """Pass the turn on from ``seat``, performing draws and passes (RULES.md §2.4, §2.6)."""
        ends = self.ends
        ends_mask = _END_SUIT[ends[0]] | _END_SUIT[ends[1]] if len(ends) == 2 else self.ends_mask()
        n = self.n
        hands = self.hands
        nxt = (seat + 1) % n
        if hands[nxt] & ends_mask:
            # The common case: the next seat can place, so nothing is blocked and the loop below
            # would stop at it at once.
            self.turn = nxt
            return
        if self._blocked(ends_mask):
            self._fish()
            return
        if len(self.bazaar) - self.drawn <= self.keep:
            # Nothing can be drawn (kozel for 4, sport), so the hands stay as they are and, the deal
            # not being blocked, some seat can place: the seats before it pass.  The loop below
            # does the same, testing for draws and a block at every pass.
            history = self.history
            seat = nxt
            while not hands[seat] & ends_mask:
                history.append(_PASSED_EVENTS[seat])
                seat = (seat + 1) % n
            self.turn = seat
            return
        while True:
            seat = (seat + 1) % n
            if hands[seat] & ends_mask:
                self.turn = seat
                return
            if self.draw_rule != NO_DRAW and self.drawable():
                if self._draw(seat, ends_mask):
                    self.turn = seat
                    return
            self.history.append(_PASSED_EVENTS[seat])
            if self._blocked(ends_mask):
                self._fish()
                return

    def _draw(self, seat: int, ends_mask: TileSet) -> bool:
        """Draw for ``seat`` by the game's rule; True when the last drawn tile fits."""
        got = []
        fits = False
        while self.drawable():
            t = self.bazaar[self.drawn]
            self.drawn += 1
            got.append(t)
            self.hands[seat] |= 1 << t
            fits = bool(ends_mask >> t & 1)
            if fits or self.draw_rule == DRAW_ONE:
                break
        self.history.append(Drew(seat, tuple(got), len(got)))
        return fits

    def forfeit(self, seat: int) -> None:
        """End the deal at once because ``seat`` faulted; the game scores it as that side's loss."""
        self.end = DealEnd(FAULT, seat)
        self.turn = TERMINAL

    def _fish(self) -> None:
        seat = self.last_placer
        self.end = _FISHED[seat] if seat >= 0 else DealEnd(FISH, seat)
        self.turn = TERMINAL

    # -- copies and layout -------------------------------------------------------------------

    def copy(self) -> LineDeal:
        other = object.__new__(type(self))
        for name in LineDeal.__slots__:
            setattr(other, name, getattr(self, name))
        other.hands = list(self.hands)
        other.layout = self.layout.copy()
        other.ends = other.layout.ends
        other._lay = other.layout.place
        other.history = list(self.history)
        return other

    def all_tiles(self) -> TileSet:
        """Hands, bazaar, sleeping tiles and the layout: always the 28 tiles (a test holds it)."""
        m = self.sleeping | mask_of(self.bazaar[self.drawn :]) | self.layout_mask()
        for h in self.hands:
            m |= h
        return m

    def layout_mask(self) -> TileSet:
        return mask_of(e.tile for e in self.history if type(e) is Placed)


def line_of(history: Iterable[object]) -> list[tuple[int, int]]:
    """The layout of a line game, left to right, each tile oriented as it lies (for printing)."""
    line: list[tuple[int, int]] = []
    for e in history:
        if type(e) is not Placed:
            continue
        a, b = LOW[e.tile], HIGH[e.tile]
        if e.end is None:
            line.append((a, b))
        elif e.end == LEFT:
            v = line[0][0]
            line.insert(0, (b, a) if a == v else (a, b))
        else:
            v = line[-1][1]
            line.append((a, b) if a == v else (b, a))
    return line
