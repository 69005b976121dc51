"""One round of mexican_train: personal trains, the Mexican train, markers and open doubles
(RULES.md §3 and §7, MT-1…MT-15).

:class:`TrainDeal` implements the deal-state interface of :mod:`.state` on a
:class:`~.layout.Trains` layout: end index ``s`` is seat ``s``'s train and index ``n`` the
Mexican train, each starting from the station's number.  A move is a :class:`~.line.Play` naming
the tile and the train (``Play.end`` is the train index).  What the layout does not know, this
class owns:

* **Which trains are open** to the seat to move (MT-3, MT-4): its own, the Mexican, and every
  train carrying a marker (:attr:`markers`, a bitmask of seats).  A pass puts a marker on the
  passer's train (MT-6); only the owner's own play on it removes it (MT-10).
* **The open double** (MT-7, MT-8): a double laid on a train must be covered before anything
  else; its player moves again at once, and if they cannot cover it (after their one draw) it
  hangs and every seat in turn must cover it.  While one is open (:attr:`open_train`), the only
  legal moves are tiles covering it on its train.  Going out on a double ends the round (MT-9).
* **Drawing and passing** (MT-5, MT-15): a seat that cannot place draws one tile from the front
  of the bazaar; it moves if the tile fits (the drawn tile is then its only playable tile, so
  the legal moves are its placements), otherwise it passes.
* **The blocked round** (MT-11): the bazaar is empty and no held tile matches any train's end,
  markers regardless (while a double is open: no held tile covers it); detected at once and
  recorded as a fish whose fisherman is the last placer.

No train's first tile can be a double (MT-3) without a test here: an empty train shows the
station's number, and that number's double is the station itself.

The station double is placed automatically as :attr:`lead_tile` (a :class:`~.line.Placed`
event with ``end=None`` and ``forced``); it belongs to nobody and is never covered (MT-3, MT-12).
"""

from __future__ import annotations

from .deal import Deal
from .errors import IllegalPlay
from .layout import SeenTable, Trains
from .line import DOMINO, FAULT, FISH, TERMINAL, DealEnd, Drew, Event, Passed, Placed, Play, check_turn
from .tiles import HIGH, IS_DOUBLE, LOW, N_TILES, OTHER, SUIT, Tile, TileSet, mask_of, tile_name

#: ``TRAIN_PLAYS[t][e]``: the interned play of tile ``t`` on train ``e`` (up to 4 seats + Mexican).
TRAIN_PLAYS: list[list[Play]] = [[Play(t, e) for e in range(5)] for t in range(N_TILES)]
#: ``_TRAIN_MOVES[t][trains]``: the plays of tile ``t`` on each train of bit set ``trains``, in order.
_TRAIN_MOVES: list[list[tuple[Play, ...]]] = [[tuple(TRAIN_PLAYS[t][e] for e in range(5) if s >> e & 1) for s in range(32)]
                                              for t in range(N_TILES)]
# Events are frozen values: one shared instance per distinct event (as in .line), instead of a
# new dataclass on every move.
_PLACED: list[list[list[Placed]]] = [[[Placed(s, t, e) for e in range(5)] for t in range(N_TILES)] for s in range(4)]
_DREW: list[list[Drew]] = [[Drew(s, (t,), 1) for t in range(N_TILES)] for s in range(4)]
_PASSED: list[Passed] = [Passed(s) for s in range(4)]


def train_play(t: Tile, train: int) -> Play:
    """The interned play of tile ``t`` on train index ``train``."""
    return TRAIN_PLAYS[t][train]


class TrainDeal:
    """One round in progress.  Mutable; :meth:`copy` for look-ahead.

    ``station`` is the double on the station (placed at once, owned by nobody); ``leader`` the
    seat that starts the round (MT-1).
    """

    #: never: every move is one tile (a double's cover is a fresh move, MT-7)
    continuing = False

    def __init__(self, deal: Deal, *, leader: int, station: Tile) -> None:
        if not IS_DOUBLE[station]:
            raise ValueError(f"the station must be a double, not {tile_name(station)}")
        held = 0
        for h in deal.masks:
            held |= h
        if (held | mask_of(deal.undealt)) >> station & 1:
            raise ValueError(f"the station {tile_name(station)} is in the deal: a mexican_train deal lists the other 27 tiles")
        self.n = len(deal.hands)
        if not 2 <= self.n <= 4:
            raise ValueError(f"mexican_train is played by 2, 3 or 4 players, not {self.n}")
        self.hands: list[TileSet] = list(deal.masks)
        self.bazaar: tuple[Tile, ...] = tuple(deal.undealt)
        self.drawn = 0
        self.station = station
        self.layout = Trains(self.n, LOW[station])
        self.ends: list[int] = self.layout.ends
        self.markers = 0  # bit s: seat s's train carries a marker
        self.open_train = -1  # the train whose last tile is an uncovered double, or -1
        self.history: list[Event] = [Placed(leader, station, None, True)]
        self.end: DealEnd | None = None
        self.last_placer = -1
        self.leader = leader
        self.lead_tile: Tile | None = station
        self.turn = TERMINAL
        self._advance(leader)

    # -- queries -------------------------------------------------------------------------

    def to_move(self) -> int:
        return self.turn

    def bazaar_left(self) -> int:
        return len(self.bazaar) - self.drawn

    def count(self) -> int | None:
        return None

    def open_trains(self, seat: int) -> list[int]:
        """The trains ``seat`` may play on (MT-4): its own, every marked one, the Mexican; while a
        double is open, only the train it lies on (MT-7, MT-8)."""
        if self.open_train >= 0:
            return [self.open_train]
        n = self.n
        if not self.markers:
            return [seat, n]
        return [e for e in range(n + 1) if e == seat or e == n or self.markers >> e & 1]

    def _fitting(self, seat: int) -> TileSet:
        """Every tile that fits a train open to ``seat``."""
        ends = self.ends
        if self.open_train >= 0:
            return SUIT[ends[self.open_train]]
        m = SUIT[ends[seat]] | SUIT[ends[self.n]]
        marked = self.markers
        while marked:
            low = marked & -marked
            m |= SUIT[ends[low.bit_length() - 1]]
            marked ^= low
        return m

    def playable(self, seat: int) -> TileSet:
        """The tiles of ``seat``'s hand that fit a train open to it."""
        return self.hands[seat] & self._fitting(seat)

    def legal_plays(self) -> list[Play]:
        """The moves of the seat to move, by tile id and then train index."""
        seat = self.turn
        if seat < 0:
            return []
        hand = self.hands[seat]
        ends = self.ends
        out: list[Play] = []
        if self.open_train >= 0:  # one train, and every fitting tile fits it (MT-7, MT-8)
            e = self.open_train
            m = hand & SUIT[ends[e]]
            while m:
                low = m & -m
                out.append(TRAIN_PLAYS[low.bit_length() - 1][e])
                m ^= low
            return out
        # by_number[v]: the open trains whose end shows v, as a bit set (MT-4: the seat's own,
        # the Mexican, the marked ones); a tile's moves are then one lookup of the trains its
        # two numbers reach, in train order
        n = self.n
        by_number = [0] * 7
        v = ends[seat]
        by_number[v] = 1 << seat
        fit = SUIT[v]
        v = ends[n]
        by_number[v] |= 1 << n
        fit |= SUIT[v]
        marked = self.markers & ~(1 << seat)
        while marked:
            low = marked & -marked
            marked ^= low
            v = ends[low.bit_length() - 1]
            by_number[v] |= low
            fit |= SUIT[v]
        m = hand & fit
        while m:
            low = m & -m
            m ^= low
            t = low.bit_length() - 1
            out += _TRAIN_MOVES[t][by_number[LOW[t]] | by_number[HIGH[t]]]
        return out

    def layout_mask(self) -> TileSet:
        """The tiles on the table: the station and every train's."""
        return mask_of(e.tile for e in self.history if type(e) is Placed)

    def train_name(self, e: int) -> str:
        return self.layout.names[e] if 0 <= e < len(self.layout.names) else f"train {e!r}"

    def play_text(self, p: Play) -> str:
        return f"{tile_name(p.tile)} on {self.train_name(p.end)}" if p.end is not None else tile_name(p.tile)

    # -- moves ---------------------------------------------------------------------------

    def apply(self, p: Play) -> None:
        """Make ``p`` (from :meth:`legal_plays`) for the seat to move; unchecked."""
        seat = self.turn
        t, e = p.tile, p.end
        assert e is not None
        hand = self.hands[seat] & ~(1 << t)
        self.hands[seat] = hand
        lay = self.layout  # Trains.place, inlined (once a move)
        ends = self.ends
        near = ends[e]
        far = ends[e] = OTHER[t][near]
        lay.laid[e] += 1
        lay.tiles[e].append((near, far))
        self.history.append(_PLACED[seat][t][e])
        self.last_placer = seat
        if e == seat:
            self.markers &= ~(1 << seat)  # MT-10
        double = IS_DOUBLE[t]
        self.open_train = e if double else -1  # a double opens; anything else was open to it, or covers it
        if not hand:
            self.end = DealEnd(DOMINO, seat)  # MT-9: also on a double, which stays uncovered
            self.turn = TERMINAL
            return
        if not double:
            seat = seat + 1 if seat + 1 < self.n else 0
            if not self.markers:  # _advance's common case, inlined: the next seat can place
                if self.hands[seat] & (SUIT[ends[seat]] | SUIT[ends[self.n]]):
                    self.turn = seat
                    return
        self._advance(seat)  # after a double (MT-7), the same seat must cover it, as a fresh move

    def push(self, p: Play, seat: int | None = None) -> Play:
        self.check(p, seat)
        self.apply(p)
        return p

    def check(self, p: Play, seat: int | None = None) -> None:
        """Raise :class:`IllegalPlay` unless ``p`` is legal, saying why."""
        check_turn(self.turn, seat, "the round is over")
        if p.closed or p.declare is not None:
            what = "doubles are never laid closed" if p.closed else f"there is nothing to declare ({p.declare!r})"
            raise IllegalPlay(f"{what} in mexican_train", IllegalPlay.CANNOT_CLOSE if p.closed else IllegalPlay.BAD_MOVE)
        legal = self.legal_plays()
        if p in legal:
            return
        if p.tile < 0:
            raise IllegalPlay(f"you must play: you can place {self.play_text(legal[0])}", IllegalPlay.MUST_PLAY)
        if not 0 <= p.tile < N_TILES:
            raise IllegalPlay(f"{p.tile!r} is not a tile id (0..{N_TILES - 1})", IllegalPlay.NOT_YOUR_TILE)
        me = self.turn
        if not self.hands[me] >> p.tile & 1:
            raise IllegalPlay(f"{tile_name(p.tile)} is not in your hand", IllegalPlay.NOT_YOUR_TILE)
        open_names = ", ".join(self.train_name(e) for e in self.open_trains(me))
        if p.end is None or not 0 <= p.end <= self.n:
            what = "no train given" if p.end is None else f"train {p.end!r} does not exist"
            raise IllegalPlay(f"{what}; trains open to you: {open_names}", IllegalPlay.BAD_END)
        name = self.train_name(p.end)
        if self.open_train >= 0 and p.end != self.open_train:
            d = self.ends[self.open_train]
            raise IllegalPlay(f"the double {d}-{d} on {self.train_name(self.open_train)} must be covered first", IllegalPlay.BAD_END)
        if p.end not in self.open_trains(me):
            raise IllegalPlay(f"{name} is not open to you (no marker on it); trains open to you: {open_names}", IllegalPlay.BAD_END)
        if OTHER[p.tile][self.ends[p.end]] < 0:
            raise IllegalPlay(f"{tile_name(p.tile)} does not match {name} ({self.ends[p.end]})", IllegalPlay.NO_MATCH)
        raise IllegalPlay(f"{self.play_text(p)} is not a legal move here", IllegalPlay.BAD_MOVE)  # pragma: no cover - named above

    def forfeit(self, seat: int) -> None:
        self.end = DealEnd(FAULT, seat)
        self.turn = TERMINAL

    # -- mechanics ------------------------------------------------------------------------

    def _blocked(self) -> bool:
        """MT-11: nobody could ever place again."""
        if self.drawn < len(self.bazaar):
            return False
        if self.open_train >= 0:
            fits = SUIT[self.ends[self.open_train]]
        else:
            fits = 0
            for v in self.ends:
                fits |= SUIT[v]
        return not any(h & fits for h in self.hands)

    def _advance(self, seat: int) -> None:
        """Give the move to ``seat`` or, drawing and passing (MT-5, MT-6), to the first seat
        from it that can place; end the round if it is blocked (MT-11)."""
        hands = self.hands
        while True:
            # A seat that can place is never in a blocked round, so it is asked first.
            if hands[seat] & self._fitting(seat):
                self.turn = seat
                return
            if self._blocked():
                self.end = DealEnd(FISH, self.last_placer)
                self.turn = TERMINAL
                return
            if self.drawn < len(self.bazaar):
                t = self.bazaar[self.drawn]
                self.drawn += 1
                hands[seat] |= 1 << t
                self.history.append(_DREW[seat][t])
                if hands[seat] & self._fitting(seat):
                    self.turn = seat  # MT-5: the drawn tile fits and must be placed now
                    return
            self.history.append(_PASSED[seat])
            self.markers |= 1 << seat  # MT-6; an open double now hangs for everyone (MT-7)
            seat = (seat + 1) % self.n

    # -- copies --------------------------------------------------------------------------

    def copy(self) -> TrainDeal:
        other = object.__new__(TrainDeal)
        other.__dict__.update(self.__dict__)
        other.hands = list(self.hands)
        other.layout = self.layout.copy()
        other.ends = other.layout.ends
        other.history = list(self.history)
        return other

    def all_tiles(self) -> TileSet:
        """Hands, bazaar, the trains and the station: always the 28 tiles (a test holds it)."""
        m = mask_of(self.bazaar[self.drawn :]) | self.layout_mask()
        for h in self.hands:
            m |= h
        return m


class TrainsSeen(SeenTable):
    """The trains as every seat sees them grow from a round's events (MT-4, MT-6, MT-7, MT-10):
    the markers and the open double decide which trains a seat could have played on."""

    layout: Trains

    def __init__(self, players: int, station: Tile) -> None:
        super().__init__(Trains(players, LOW[station]))
        self.n = players
        self.markers = 0
        self.open_train = -1

    def place(self, seat: int, t: Tile, end: int | None, closed: bool) -> None:
        if end is None:
            return  # the station: every train starts from its number already
        self.layout.place(t, end)
        if end == seat:
            self.markers &= ~(1 << seat)
        self.open_train = end if IS_DOUBLE[t] else -1

    def passed(self, seat: int) -> None:
        self.markers |= 1 << seat

    def fits(self, seat: int) -> TileSet:
        ends = self.layout.ends
        if self.open_train >= 0:
            return SUIT[ends[self.open_train]]
        m = SUIT[ends[seat]] | SUIT[ends[self.n]]
        for e in range(self.n):
            if self.markers >> e & 1:
                m |= SUIT[ends[e]]
        return m
