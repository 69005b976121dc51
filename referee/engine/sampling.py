"""Deals consistent with what one seat knows: the hidden tiles, drawn at random for a search.

A seat is told its own hand as dealt and every event of the deal as it may see it (other seats'
drawn tiles hidden, :func:`~.core.view.seen_by`).  :class:`Knowledge` holds exactly that, in the
engine's terms, with the public game state the deal began under (the scores, the deal's number,
sea_kozel's special state).  From it:

* :func:`sample_deal` draws a :class:`~.core.deal.Deal` — every hand as dealt and the undealt tiles in
  their order — at random among deals that agree with the knowledge: the seat's own hand and
  draws; every tile seen placed, from a hand (or a draw) of the seat that placed it; the voids
  that passes, draws and ended blitz chains imply (a seat that passed or drew while it could
  place nothing held no tile that fitted then, and the tiles it drew before one that fitted
  did not fit either); the counts of hands, draws and the bazaar; the tiles on the table;
  mexican_train's trains and markers (which decide what a seat could place); kolbasa's rows,
  whose turned-up tiles are public and whose unseen tiles lie in an unknown order.  The hidden
  tiles go, the most constrained first, to a place they may go chosen in proportion to its room
  left: close to a uniform draw among the agreeing deals, not exactly one.
* :func:`replay` plays the deal's decisions again on such a deal, with the engine itself, and
  returns the deal state at the seat's decision (a copy of which a search may play on), or
  ``None`` when the deal would not have told the seat the same events.  That is the test of
  consistency: a deal from :func:`sample_deal` replays to the same events, the same counts and
  the same legal moves (``tests/engine/test_sampling.py`` holds it over random games).  It can fail
  only where the events leave a constraint :func:`sample_deal` does not model (sea_kozel's
  write-off offer depends on the hands' values); :func:`sample_state` then draws again.
* :func:`table_game` is a :class:`~.core.game.Game` set up as far as the seat was told (scores, deal
  number, special state), on which a deal state is started and a finished one scored;
  :func:`fork_game` copies it cheaply so that every playout scores on a game of its own.

Nothing here names a game: what a family's events say is asked of the game, through hooks its
own engine modules provide — :meth:`~.core.game.Game.tell` (sea_kozel's special state),
:meth:`~.core.game.Game.seen_table` (the cross's arms, blitz's chains, mexican_train's trains and
markers, :class:`~.core.trains.TrainsSeen`) and :attr:`~.core.game.Game.face_down_rows` (kolbasa,
read by :func:`~.core.kolbasa.rows_as_dealt`).  The hooks are the engine's, not the families'
sides' (:mod:`referee.sides`): those stand a floor above the engine, and the sampler is the
engine's, used by bots that import the engine alone (``sample_bots/search_bot.py``).

Pure: no I/O, no clock; randomness comes only from the generator passed in (a seeded
``random.Random``, or anything with its ``random`` and ``shuffle``).
"""

from __future__ import annotations

import copy
from collections.abc import MutableSequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .core.deal import Deal
from .core.game import DealRecord, Game, Special
from .core.kolbasa import rows_as_dealt
from .core.layout import SeenTable
from .core.line import DECLINE, HUNDRED, STOP, TERMINAL, WRITE_OFF, Declared, Drew, Event, Passed, Placed, Play
from .core.scoring import Carry, Rule13
from .core.state import DealState
from .core.tiles import ALL_TILES, Tile, TileSet, mask_of, tiles_of
from .core.view import seen_by
from .registry import variant


class Rng(Protocol):
    """What the sampler asks of a random generator (``random.Random`` has it)."""

    def random(self) -> float: ...

    def shuffle(self, x: MutableSequence[Any]) -> None: ...


@dataclass(frozen=True)
class Knowledge:
    """What seat ``seat`` knows about the deal in progress, in the engine's terms.

    ``hand`` is the seat's hand as dealt (empty in kolbasa, whose rows are face down even to
    their owner); ``history`` every event of the deal so far as the seat saw it — the engine's
    :attr:`~.core.state.DealState.history` through :func:`~.core.view.seen_by`, mexican_train's station
    placement included; ``legal`` the seat's legal moves now, when known (the replay then
    checks them too).  ``scores`` are the totals before the deal, ``deal_number`` the deal's
    number in the game (void deals not counted), ``special`` sea_kozel's special state."""

    variant: str
    players: int
    seat: int
    leader: int
    hand: tuple[Tile, ...]
    history: tuple[Event, ...]
    options: dict[str, Any] = field(default_factory=dict)
    legal: tuple[Play, ...] = ()
    scores: tuple[int, ...] = ()
    deal_number: int = 0
    special: Special | None = None


# -- the game as the seat knows it -------------------------------------------------------------


def table_game(k: Knowledge) -> Game:
    """A game of ``k``'s variant set up as far as the seat was told: the totals before the deal,
    the deal's number, the lead as the events show it and sea_kozel's special state.  What the
    seat was not told (points hanging under the rule of 13, carried eggs) starts empty."""
    v = variant(k.variant)
    game = v.new_game(k.players, k.options)
    if k.scores:
        game.totals[:] = k.scores
    game.played = k.deal_number
    if k.deal_number:
        # a placeholder for the previous deal: only its existence is read (sea_kozel's hundred)
        game.last = DealRecord(k.deal_number - 1, -1, None, None, (), (), (), tuple(game.totals), ("told to the seat",))
    game._lead = (k.leader, _lead_tile(k))
    game.tell(k.special)  # the special state this deal is played under (sea_kozel's)
    game.keep_records = False
    return game


def fork_game(game: Game) -> Game:
    """A copy of ``game`` that a deal can be scored on without touching ``game``: its lists and
    score keepers (the rule of 13, carried eggs) are copied, the rest shared."""
    other = object.__new__(type(game))
    fields = other.__dict__
    fields.update(game.__dict__)
    for name, value in fields.items():
        kind = type(value)
        if kind is list:
            fields[name] = list(value)
        elif kind is Rule13 or kind is Carry:
            kept = copy.copy(value)
            if kind is Rule13:
                kept.pending = list(kept.pending)
            fields[name] = kept
    return other


def _lead_tile(k: Knowledge) -> Tile | None:
    """The forced lead (or mexican_train's station, kolbasa's start): the first event when the
    referee placed it."""
    if k.history and type(k.history[0]) is Placed:
        first = k.history[0]
        if first.forced and first.end is None:
            return first.tile
    return None


# -- replaying a deal ----------------------------------------------------------------------


def start_state(k: Knowledge, deal: Deal, game: Game | None = None) -> DealState:
    """The deal state ``deal`` starts as under ``k``'s game, before any decision."""
    game = table_game(k) if game is None else game
    draw, keep = game.draw_rule()
    return game.new_deal(deal, k.leader, _lead_tile(k), draw, keep)


def _decision(state: DealState, event: Event, seat: int) -> Play | None:
    """The move of ``seat`` (to move in ``state``) that makes ``event`` happen, if one does:
    a placement, a declaration, or the stop that ended a turn the events show is over."""
    legal = state.legal_plays()
    if isinstance(event, Placed) and event.seat == seat and not event.forced:
        for p in legal:
            if p.tile == event.tile and p.end == event.end and p.closed == event.closed and p.declare is None:
                return p
        return None
    if isinstance(event, Declared) and event.seat == seat:
        want = {"hundred": HUNDRED, "write_off": WRITE_OFF, "decline": DECLINE}.get(event.what)
        return want if want in legal else None
    if state.continuing and STOP in legal:
        return STOP  # the turn went on no further: the events go on with someone else
    return None


def replay(k: Knowledge, deal: Deal, game: Game | None = None) -> DealState | None:
    """The deal state at ``k.seat``'s decision, reached by playing on ``deal`` the decisions
    ``k.history`` shows; ``None`` when ``deal`` does not give the seat exactly those events
    (and, when ``k.legal`` is given, those legal moves)."""
    try:
        state = start_state(k, deal, game)
    except ValueError:
        return None  # e.g. a forced lead the deal does not give the leader
    seat = k.seat
    told = k.history
    i = 0
    while True:
        made = state.history
        while i < len(made):
            if i >= len(told) or seen_by(made[i], seat) != told[i]:
                return None
            i += 1
        mover = state.to_move()
        if mover == TERMINAL:
            return None
        if i == len(told):
            if mover == seat:
                if k.legal and tuple(state.legal_plays()) != k.legal:
                    return None
                return state
            p = STOP if state.continuing and STOP in state.legal_plays() else None
        else:
            p = _decision(state, told[i], mover)
        if p is None:
            return None
        state.apply(p)


# -- what the events say about hidden tiles --------------------------------------------------


@dataclass
class _Group:
    """Tiles that joined a hand together: the hand as dealt (``entry`` -1) or one draw (``entry``
    just before the draw's event).  ``size`` tiles; ``final`` the drawn tile that fitted and was
    placed at once; ``items`` the indexes of the items the matching put here."""

    owner: int
    entry: float
    size: int
    final: Tile | None = None
    items: list[int] = field(default_factory=list)


def _voids_between(voids: list[tuple[float, TileSet]], after: float, before: float) -> TileSet:
    m = 0
    for when, mask in voids:
        if after < when < before:
            m |= mask
    return m


def _match(cands: list[list[int]], caps: list[int], rng: Rng) -> list[int] | None:
    """Give every item a group among its candidates, no group over its capacity (Kuhn's
    augmenting paths, so an assignment is found whenever one exists); a group with room is
    chosen at random in proportion to its room.  ``None`` when there is no assignment."""
    members: list[list[int]] = [[] for _ in caps]
    room = list(caps)
    where = [-1] * len(cands)
    rand = rng.random

    def augment(i: int, seen: list[bool]) -> bool:
        total = 0
        for g in cands[i]:
            total += room[g]
        if total:
            x = rand() * total
            for g in cands[i]:
                x -= room[g]
                if x < 0 and room[g]:
                    break
            else:  # rounding: the last group with room
                g = next(h for h in reversed(cands[i]) if room[h])
            members[g].append(i)
            room[g] -= 1
            where[i] = g
            return True
        for g in cands[i]:
            if seen[g]:
                continue
            seen[g] = True
            for j in members[g]:
                if augment(j, seen):  # j moved to another group (g is full, so not back here)
                    members[g].remove(j)
                    members[g].append(i)
                    where[i] = g
                    return True
        return False

    for i in range(len(cands)):
        if not augment(i, [False] * len(caps)):
            return None
    return where


class Sampler:
    """Draws deals that agree with one seat's knowledge (see the module's account).  The events
    are read once, here; each draw (:meth:`deal`, :meth:`state`) is then only its random part,
    so a search drawing many deals for one decision reads them once."""

    def __init__(self, k: Knowledge, game: Game | None = None) -> None:
        self.k = k
        self.game = table_game(k) if game is None else game
        #: the events contradict each other (not from a real deal): no deal agrees with them
        self.impossible = False
        self.hidden: list[Tile] = []  # tiles whose place the seat does not know, in id order
        if self.game.face_down_rows:
            self._read_rows()
        else:
            self._read_hands()

    def deal(self, rng: Rng) -> Deal | None:
        """A deal drawn at random among those that agree with the knowledge, or ``None`` when
        the events leave none."""
        if self.impossible:
            return None
        if self.game.face_down_rows:
            return self._rows(rng)
        return self._hands(rng)

    def state(self, rng: Rng, tries: int = 20) -> DealState | None:
        """A deal state at the seat's decision on a deal drawn by :meth:`deal` that replays to
        the knowledge (up to ``tries`` draws), or ``None``."""
        for _ in range(tries):
            deal = self.deal(rng)
            if deal is None:
                return None
            state = replay(self.k, deal, self.game)
            if state is not None:
                return state
        return None

    # -- the hands and the undealt tiles ----------------------------------------------------

    def _read_hands(self) -> None:
        k = self.k
        shape = self.game.shape
        n, me, told = k.players, k.seat, k.history
        station = _lead_tile(k) if shape.station else None
        table: SeenTable = self.game.seen_table(_lead_tile(k))
        chain = table.chains
        groups = [_Group(s, -1.0, shape.hand_size) for s in range(n)]  # group s: seat s's hand as dealt
        voids: list[list[tuple[float, TileSet]]] = [[] for _ in range(n)]
        placed: list[tuple[int, Tile, int]] = []  # (seat, tile, event index) of the other seats' tiles
        drawn: list[_Group | tuple[Tile, ...]] = []  # every draw in order: another seat's group, or my tiles
        last_draw: dict[int, _Group] = {}  # a seat's draw whose last tile fitted and is placed next
        seen = mask_of(k.hand)  # tiles whose place is known: my hand and draws, the table
        drew_total = 0
        for i, e in enumerate(told):
            kind = type(e)
            if kind is Placed:
                assert isinstance(e, Placed)
                if e.seat != me and seen >> e.tile & 1:
                    self.impossible = True  # a tile the seat holds, or one already on the table
                    return
                seen |= 1 << e.tile
                if e.seat != me and not (station is not None and e.end is None):
                    g = last_draw.pop(e.seat, None)
                    if g is not None:
                        g.final = e.tile
                    else:
                        placed.append((e.seat, e.tile, i))
                table.place(e.seat, e.tile, e.end, e.closed)
                if chain and e.seat != me:
                    nxt = told[i + 1] if i + 1 < len(told) else None
                    if not (type(nxt) is Placed and nxt.seat == e.seat):
                        voids[e.seat].append((i + 0.5, table.fits(e.seat)))  # TURN-8: the chain stopped
            elif kind is Drew:
                assert isinstance(e, Drew)
                voids[e.seat].append((float(i), table.fits(e.seat)))
                drew_total += e.count
                if e.seat == me:
                    seen |= mask_of(e.tiles)
                    drawn.append(e.tiles)
                else:
                    nxt = told[i + 1] if i + 1 < len(told) else None
                    g = _Group(e.seat, i - 0.5, e.count)
                    if type(nxt) is Placed and nxt.seat == e.seat:
                        last_draw[e.seat] = g  # the last tile fitted: it is the placement that follows
                    groups.append(g)
                    drawn.append(g)
            elif kind is Passed:
                voids[e.seat].append((float(i), table.fits(e.seat)))
                table.passed(e.seat)
        if WRITE_OFF in k.legal:  # the deal is blocked: nobody can place anything now
            for s in range(n):
                voids[s].append((len(told) + 0.5, table.fits(s)))
        if station is not None:
            seen |= 1 << station
        self.hidden = tiles_of(ALL_TILES & ~seen)
        # Items to place: the other seats' placed tiles (each in a group of its seat), then the
        # hidden tiles; groups: the other seats' hands and draws, then the undealt tiles not drawn
        # (the bazaar's rest, or the sleeping tiles).
        mine = [g for g in groups if g.owner != me]
        index = {id(g): x for x, g in enumerate(mine)}
        caps = [g.size - (g.final is not None) for g in mine]
        pool = len(caps)
        caps.append(shape.undealt_count - drew_total)
        if any(c < 0 for c in caps) or sum(caps) != len(placed) + len(self.hidden):
            self.impossible = True
            return
        self.caps = caps
        self.placed = [t for _, t, _ in placed]
        self.placed_cands = [[index[id(g)] for g in mine if g.owner == seat and g.entry < when
                              and not _voids_between(voids[seat], g.entry, when) >> t & 1] for seat, t, when in placed]
        allowed = [ALL_TILES & ~_voids_between(voids[g.owner], g.entry, float("inf")) for g in mine]
        self.cands_of = {t: [*[x for x, a in enumerate(allowed) if a >> t & 1], pool] for t in self.hidden}
        self.pool = pool
        self.hand_bins = [-1 if s == me else index[id(groups[s])] for s in range(n)]
        #: every draw in order: the seat's own tiles, or (another seat's group, its last tile)
        self.draws: list[tuple[Tile, ...] | tuple[int, Tile | None]] = []
        self.own_draw: list[bool] = []
        for d in drawn:
            self.own_draw.append(isinstance(d, tuple))
            self.draws.append(d if isinstance(d, tuple) else (index[id(d)], d.final))
        self.bazaar = shape.undealt == "bazaar"

    def _hands(self, rng: Rng) -> Deal | None:
        hidden = list(self.hidden)
        rng.shuffle(hidden)
        cands_of = self.cands_of
        order = sorted(hidden, key=lambda t: len(cands_of[t]))  # the most constrained first
        items: list[Tile] = self.placed + order
        where = _match(self.placed_cands + [cands_of[t] for t in order], self.caps, rng)
        if where is None:
            return None
        bins: list[list[Tile]] = [[] for _ in self.caps]
        for x, b in enumerate(where):
            bins[b].append(items[x])
        mine = tuple(sorted(self.k.hand))
        hands = tuple(mine if b < 0 else tuple(sorted(bins[b])) for b in self.hand_bins)
        bazaar: list[Tile] = []
        for own, d in zip(self.own_draw, self.draws):
            if own:
                bazaar += d  # type: ignore[arg-type]  # own draws are tiles; the others are (bin, count), by own_draw
            else:
                b, final = d
                got = bins[b]
                rng.shuffle(got)
                bazaar += got
                if final is not None:
                    bazaar.append(final)
        rest = bins[self.pool]
        if self.bazaar:
            rng.shuffle(rest)  # the order it will be drawn in (sleeping tiles are never drawn)
        return Deal(hands, tuple(bazaar + rest))

    # -- kolbasa's rows -----------------------------------------------------------------------

    def _read_rows(self) -> None:
        """Face-down rows (kolbasa): each row as dealt, as far as the tiles turned up show it
        (:func:`~.core.kolbasa.rows_as_dealt`).  Every tile never turned up lies somewhere in the
        two blocks' unturned parts, in an order nobody knows: drawn at random."""
        rows, left, public = rows_as_dealt(self.k.history)
        self.rows = rows
        self.left = left
        self.hidden = tiles_of(ALL_TILES & ~public)

    def _rows(self, rng: Rng) -> Deal:
        hidden = list(self.hidden)
        rng.shuffle(hidden)
        out = []
        for s in range(2):
            row = list(self.rows[s])
            for x in range(self.left[s]):
                row[x] = hidden.pop()
            out.append(tuple(t for t in row if t is not None))
        return Deal(tuple(out), ())


def sample_deal(k: Knowledge, rng: Rng, game: Game | None = None) -> Deal | None:
    """A deal drawn at random among those that agree with ``k`` (see the module's account), or
    ``None`` when the events leave none (they contradict each other: not from a real deal)."""
    return Sampler(k, game).deal(rng)


def sample_state(k: Knowledge, rng: Rng, game: Game | None = None, tries: int = 20) -> DealState | None:
    """A deal state at ``k.seat``'s decision on a deal drawn by :func:`sample_deal` that
    replays to ``k`` (up to ``tries`` draws), or ``None``."""
    return Sampler(k, game).state(rng, tries)
