"""Games across deals: metadata, options, the registry, and the base class of every game.

Each game is one module in :mod:`referee.engine.games` holding a frozen :class:`Variant` (its
id, seats, options, how it deals and how it is scored) and a :class:`Game` subclass that
decides who leads each deal, what a hand is worth, what each side writes, and when the game
is over.  Modules register themselves (:mod:`referee.engine.registry` finds them); the CLI's ``--variant`` choices, the protocol's
``game`` field and the docs all read :data:`VARIANTS`.

A game is driven the same way whatever it is::

    game = variant("kozel").new_game(players=4, options={"rule13": "hang"})
    while game.outcome() is None:
        state = game.start(next_deal)      # None: the deal was void (redeal); take the next
        if state is None: continue
        while state.to_move() != TERMINAL:
            state.push(choice)             # or apply() for trusted plays
        record = game.finish(state)        # what each side wrote, and why

Sides: in pair games side 0 is seats 0 and 2, side 1 seats 1 and 3; otherwise side ``s`` is seat
``s``.  ``Variant.sense`` says whether written points are good (+1, sport/draw/club) or
penalties (-1, kozel): a match runner multiplies by it to compare bots.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .deal import Deal, DealShape
from .errors import BadOption
from .layout import Line, SeenTable
from .line import DRAW_UNTIL_FIT, FAULT, NO_DRAW, DealEnd, LineDeal, Scored
from .state import DealState
from .tiles import BY_WEIGHT, DOUBLE, DOUBLES, SUIT, Tile, pips_of, tiles_tuple

#: A safety limit for games scored to a target: after this many played deals the game stops
#: and is recorded as drawn ("deal limit"), so a game can never run for ever.  A game's
#: :attr:`Game.deal_limit` may set a lower one (``referee check`` keeps its games short).
MAX_DEALS = 500


@dataclass(frozen=True)
class Option:
    """A house-rule setting of a game: its name, allowed values (the first is the default)."""

    name: str
    choices: tuple[Any, ...]
    help: str
    #: player counts the option fits (``None``: every count the game allows)
    players: tuple[int, ...] | None = None

    @property
    def default(self) -> Any:
        return self.choices[0]

    def parse(self, value: Any) -> Any:
        """Turn a value (or its text from the command line) into one of :attr:`choices`.

        Raises:
            BadOption: naming the option and the allowed values.
        """
        for choice in self.choices:
            if value == choice or str(value).strip().lower() == str(choice).lower():
                return choice
        if isinstance(value, str) and value.strip().lower() in ("on", "yes", "true", "1") and True in self.choices:
            return True
        if isinstance(value, str) and value.strip().lower() in ("off", "no", "false", "0") and False in self.choices:
            return False
        allowed = " | ".join(_show(c) for c in self.choices)
        raise BadOption(f"option {self.name}={value!r} is not allowed; choose {allowed}")


def _show(value: Any) -> str:
    return {True: "on", False: "off"}.get(value, str(value)) if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class Variant:
    """Everything the tool knows about a game before playing it."""

    id: str
    title: str
    seeds: str  # the seed files the rules come from
    players: tuple[int, ...]  # allowed player counts
    options: tuple[Option, ...]
    game: type[Game]
    sense: int = 1  # +1: written points are good; -1: they are penalties
    to_target: bool = True  # whole games to a target; False: a fixed number of deals (sport)
    default_players: int = 4
    #: False while the engine plays the game but the referee above it does not yet (the CLI,
    #: leagues and ``check`` refuse it with a one-line error)
    refereed: bool = True

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        known = ", ".join(o.name for o in self.options) or "none"
        raise BadOption(f"{self.id} has no option {name!r} (its options: {known})")

    def resolve_options(self, players: int, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """Every option of the game with its value: the given ones checked, the rest defaulted.

        Raises:
            BadOption: an unknown option, a bad value, or an option that does not fit the number
                of players.
        """
        self.check_players(players)
        values = dict(self._defaults)
        if not given:
            return values  # the common case: a new game of a match with the default options
        for name, value in given.items():
            opt = self.option(name)
            values[name] = opt.parse(value)
            if opt.players is not None and players not in opt.players and values[name] != opt.default:
                counts = ", ".join(map(str, opt.players))
                raise BadOption(f"option {name} fits {self.id} with {counts} players, not {players}")
        return values

    @functools.cached_property
    def _defaults(self) -> dict[str, Any]:
        """Every option at its default (copied by :meth:`resolve_options`: a game may keep it)."""
        return {o.name: o.default for o in self.options}

    def check_players(self, players: int) -> None:
        if players not in self.players:
            counts = ", ".join(map(str, self.players))
            raise BadOption(f"{self.id} is played by {counts} players, not {players}")

    def new_game(self, players: int | None = None, options: dict[str, Any] | None = None, deals: int | None = None) -> Game:
        players = self.default_players if players is None else players
        return self.game(self, players, self.resolve_options(players, options), deals)

    def shape(self, players: int | None = None, options: dict[str, Any] | None = None) -> DealShape:
        players = self.default_players if players is None else players
        return self.game.deal_shape(players, self.resolve_options(players, options))

    def pair_play(self, players: int, options: dict[str, Any] | None = None) -> bool:
        """Whether ``players`` seats with these options play in two pairs (seats 0+2 and 1+3)."""
        return self.game.uses_pairs(players, self.resolve_options(players, options))


VARIANTS: dict[str, Variant] = {}


def register(v: Variant) -> Variant:
    VARIANTS[v.id] = v
    return v


# -- records ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DealRecord:
    """The result of one deal: how it ended, what every hand was worth, what each side wrote.

    ``wrote[side]`` is what was added to that side's total (after the rule of 13, eggs and
    the rest); ``notes`` says why, in words; ``totals`` are the totals after the deal.  A void
    deal (redeal) has ``end=None`` and ``void`` giving the reason.
    """

    number: int  # played deals before this one in the game
    leader: int
    lead_tile: Tile | None
    end: DealEnd | None
    hands: tuple[tuple[Tile, ...], ...]  # what each seat still held
    values: tuple[int, ...]  # each hand's value as the game counts it
    wrote: tuple[int, ...]  # per side
    totals: tuple[int, ...]  # per side, after this deal
    notes: tuple[str, ...] = ()
    void: str | None = None
    winner: int | None = None  # the side that won the deal, if one did
    #: per side, the points written during play (telephone, muggins), already in ``wrote``
    played: tuple[int, ...] = ()
    #: the rule that decided the deal, in games that name one (sea_kozel, general, blitz), e.g.
    #: ``"bald"``, ``"svoyak"``, ``"void_fish"``; see each game module
    rule: str | None = None


_new = object.__new__
# Game.finish makes a DealRecord without its __init__, naming every field: these, in order.
assert tuple(DealRecord.__dataclass_fields__) == ("number", "leader", "lead_tile", "end", "hands", "values", "wrote", "totals",
                                                 "notes", "void", "winner", "played", "rule")


@dataclass(frozen=True)
class Special:
    """A special state pending at a deal's start (sea_kozel, RULES.md §3 and SK-8…SK-14), for
    telling bots: ``kind`` is ``"hundred"`` (``side`` plays for a hundred), ``"write_off"``
    (``side`` writes off its fish: this is deal ``deal`` of ``of``) or ``"eggs"`` (``total``
    waits; deal ``deal`` of ``of``)."""

    kind: str
    side: int | None = None
    deal: int | None = None
    of: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class GameOutcome:
    """How a game ended: the winning and losing sides, flags such as a dry win, and why."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    losers: tuple[int, ...]
    reason: str
    dry: tuple[int, ...] = ()  # sides that won without a point against them
    #: per side, what a match runner counts for this game where it is not ``totals`` (sea_kozel:
    #: a deal that wins the match outright — bald, a hundred, 6-6, svoyak — counts as reaching 125)
    score: tuple[int, ...] = ()

    @property
    def drawn(self) -> bool:
        return not self.winners

    def verdicts(self, holders: Sequence[Collection[int]], sense: int) -> list[int]:
        """Each holder's game as a match counts it, +1 won, 0 drawn, -1 lost; ``holders[b]`` are
        the sides bot ``b`` played.  Where points are good (``sense`` +1) a bot wins holding a
        winning side, and the others lose; in the penalty games a bot loses holding a losing
        side (a goat), and the others win.  A game every holder won, or every holder lost,
        separates nobody: drawn for all (docs/result-json.md)."""
        if sense > 0:
            won = [any(s in self.winners for s in sides) for sides in holders]
            lost = [not w and any(won) for w in won]
        else:
            lost = [any(s in self.losers for s in sides) for sides in holders]
            won = [not x and any(lost) for x in lost]
        if all(won) or all(lost):
            return [0] * len(holders)
        return [1 if w else -1 if x else 0 for w, x in zip(won, lost)]


# -- the base game ---------------------------------------------------------------------------


class Game(ABC):
    """A game in progress across deals.  Subclasses set the class attributes and the hooks."""

    pairs: ClassVar[bool] = False  # True when 4 players play in two pairs
    #: True when the game writes points during play (its deals record Scored events)
    scores_in_play: ClassVar[bool] = False
    default_deals: ClassVar[int | None] = None  # games of a fixed number of deals: how many
    #: every hand is a row dealt face down, unseen even by its owner and turned up in order
    #: (kolbasa): what a seat knows of the deal is the tiles turned up, not a hand
    face_down_rows: ClassVar[bool] = False
    #: the kinds of special state a deal may be played under (:meth:`special`; sea_kozel's)
    special_kinds: ClassVar[tuple[str, ...]] = ()

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        self.variant = variant
        self.players = players
        self.options = options
        self.deals = deals
        self.pair_play = self.uses_pairs(players, options)
        if self.pair_play:
            self.sides: list[tuple[int, ...]] = [(0, 2), (1, 3)]
            self.side_of = [0, 1, 0, 1]
        else:
            self.sides = [(s,) for s in range(players)]
            self.side_of = list(range(players))
        self.totals = [0] * len(self.sides)
        self.names = [self.side_name(s) for s in range(len(self.sides))]  # for notes
        self.records: list[DealRecord] = []
        #: False: ``records`` keeps only the last deal (a long match's driver needs no more, and
        #: would otherwise grow by a record a deal)
        self.keep_records = True
        self.played = 0  # deals played (void deals not counted)
        #: after this many played deals the game is over, drawn (games of a fixed number of
        #: deals have none unless one is set)
        self.deal_limit: int | None = MAX_DEALS if variant.to_target else None
        self.last: DealRecord | None = None  # the last played deal
        self._outcome: GameOutcome | None = None
        self._state: DealState | None = None
        self._lead: tuple[int, Tile | None] = (0, None)
        #: set by :meth:`score` in games that name the deciding rule (:attr:`DealRecord.rule`)
        self.rule: str | None = None
        self._shape: DealShape | None = None

    # -- hooks for game modules --------------------------------------------------------

    def special(self) -> Special | None:
        """The special state pending for the next deal (sea_kozel), or ``None``."""
        return None

    def tell(self, special: Special | None) -> None:
        """Set up the special state the next deal is played under as :meth:`special` told it to
        the seats (a seat's sampler rebuilds the game from what it was told); games without
        special states have nothing to set."""
        return None

    def seen_table(self, lead: Tile | None) -> SeenTable:
        """A fresh table as every seat sees it grow from a deal's events (``lead``: the tile the
        referee placed first, if it did); a game on another layout, or whose turns say more
        about what a seat could place, returns its own."""
        return SeenTable(Line())

    @classmethod
    def uses_pairs(cls, players: int, options: dict[str, Any]) -> bool:
        return cls.pairs and players == 4

    @classmethod
    @abstractmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        """How many tiles each of ``players`` gets, and whether the rest is a bazaar."""

    def draw_rule(self) -> tuple[str, int]:
        """How a player who cannot place gets tiles, and how many bazaar tiles are kept back."""
        return (DRAW_UNTIL_FIT if self.shape.undealt == "bazaar" else NO_DRAW, 0)

    def void_reason(self, deal: Deal) -> str | None:
        """Why this deal must be redealt, or ``None`` (most games never redeal)."""
        return None

    @abstractmethod
    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        """The leader and the forced lead tile (``None``: any tile) for the next deal."""

    def hand_value(self, hand: int) -> int:
        """A hand's value as this game counts it (plain pips by default)."""
        return pips_of(hand)

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        """The deal state this game plays on (a line by default; cross games override it)."""
        return LineDeal(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep)

    @abstractmethod
    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        """What each side writes for a finished deal, and the side that won it (or ``None``).
        Append to ``notes`` a sentence for every rule that changed what was written.  In games
        that score during play, :attr:`totals` already holds the points written during the deal."""

    def score_fault(self, seat: int, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        """A deal stopped by ``seat``'s fault is that side's loss (PROTOCOL.md, "Faults").

        Where points are good, every other side writes what the faulting side holds, as the
        opponents would on going out; penalty games override this so the faulting side writes
        on itself.
        """
        side = self.side_of[seat]
        held = self.side_values(values)[side]
        wrote = [0 if s == side else held for s in range(len(self.sides))]
        notes.append(f"seat {seat} faulted: {self.side_name(side)} loses the deal and every other side writes its {held}")
        return wrote, (1 - side if len(self.sides) == 2 else None)

    @abstractmethod
    def game_over(self) -> GameOutcome | None:
        """The outcome once the game is over, checked after every deal."""

    # -- driving -------------------------------------------------------------------------

    @property
    def shape(self) -> DealShape:
        shape = self._shape
        if shape is None:  # worked out once: players and options are fixed for the game
            shape = self._shape = self.deal_shape(self.players, self.options)
        return shape

    @property
    def next_number(self) -> int:
        return self.played

    def _record(self, rec: DealRecord) -> None:
        if not self.keep_records:
            self.records.clear()
        self.records.append(rec)

    def start(self, deal: Deal) -> DealState | None:
        """Begin the next deal from ``deal``.  Returns ``None`` when the deal is void (a redeal):
        the reason is recorded and the caller takes the next deal of the stream."""
        if self._outcome is not None:
            raise RuntimeError("the game is over")
        reason = self.void_reason(deal)
        if reason is not None:
            rec = DealRecord(
                self.played, -1, None, None, deal.hands, tuple(0 for _ in deal.hands),
                tuple(0 for _ in self.sides), tuple(self.totals), (f"redeal: {reason}",), void=reason,
            )
            self._record(rec)
            return None
        leader, lead_tile = self.choose_lead(deal)
        self._lead = (leader, lead_tile)
        draw, keep = self.draw_rule()
        self._state = self.new_deal(deal, leader, lead_tile, draw, keep)
        return self._state

    def finish(self, state: DealState) -> DealRecord:
        """Score a finished deal and return its record."""
        end = state.end
        if end is None:
            raise RuntimeError("the deal is not over")
        values = list(map(self.hand_value, state.hands))
        notes: list[str] = []
        played: tuple[int, ...] = ()
        self.rule = None
        if self.scores_in_play:
            during = [0] * len(self.sides)
            for event in state.history:
                if type(event) is Scored:
                    during[self.side_of[event.seat]] += event.points
            for side, points in enumerate(during):
                self.totals[side] += points
            played = tuple(during)
            if any(during):
                notes.append("written during play: " + ", ".join(f"{self.names[s]} {p}" for s, p in enumerate(during) if p))
        if end.reason == FAULT:
            wrote, winner = self.score_fault(end.seat, values, notes)
        else:
            wrote, winner = self.score(state, values, notes)
        totals = self.totals
        for side, points in enumerate(wrote):
            totals[side] += points
        if played:
            wrote = [w + p for w, p in zip(wrote, played)]
        leader, lead_tile = self._lead
        # A frozen dataclass's __init__ sets each of the record's 13 fields through
        # object.__setattr__: filling its __dict__ at once makes the same record, several times faster.
        rec = _new(DealRecord)
        rec.__dict__.update(
            number=self.played, leader=leader, lead_tile=lead_tile, end=end, hands=tuple(map(tiles_tuple, state.hands)),
            values=tuple(values), wrote=tuple(wrote), totals=tuple(totals), notes=tuple(notes), void=None, winner=winner,
            played=played, rule=self.rule,
        )
        self._record(rec)
        self.last = rec
        self.played += 1
        self._state = None
        self._outcome = self.game_over()
        if self._outcome is None and self.deal_limit is not None and self.played >= self.deal_limit:
            self._outcome = GameOutcome(tuple(self.totals), (), (), f"deal limit ({self.deal_limit}) reached")
        return rec

    def outcome(self) -> GameOutcome | None:
        return self._outcome

    # -- helpers shared by game modules ------------------------------------------------------

    def side_values(self, values: list[int]) -> list[int]:
        if self.pair_play:  # the usual cases first: pairs 0+2 and 1+3, or every seat alone
            return [values[0] + values[2], values[1] + values[3]]
        if len(self.sides) == len(values):
            return list(values)
        return [sum(values[s] for s in seats) for seats in self.sides]

    def side_name(self, side: int) -> str:
        if self.pair_play:
            return "pair A" if side == 0 else "pair B"
        return f"seat {side}"

    def leader_after(self, rec: DealRecord) -> int:
        """The seat that ended the previous deal (went out, or the fisherman); after a fault,
        the next seat, which belongs to another side."""
        assert rec.end is not None
        if rec.end.reason == FAULT:
            return (rec.end.seat + 1) % self.players
        return rec.end.seat

    def to_target_outcome(self, target: int) -> GameOutcome | None:
        """Games won by the first side to reach ``target`` (draw, block, club…)."""
        reached = [s for s, t in enumerate(self.totals) if t >= target]
        if not reached:
            return None
        losers = tuple(s for s in range(len(self.sides)) if s not in reached)
        return GameOutcome(tuple(self.totals), tuple(reached), losers, f"{self.side_name(reached[0])} reached {target}")


# -- lead searches (RULES.md §5: they look only at hands) ------------------------------------


def holder(deal: Deal, t: Tile) -> int | None:
    return deal.holder(t)


def double_holder(deal: Deal, order: list[int]) -> tuple[int, Tile] | None:
    """The first double of ``order`` (numbers) found in a hand, and who holds it."""
    for n in order:
        seat = deal.holder(DOUBLE[n])
        if seat is not None:
            return seat, DOUBLE[n]
    return None


HIGHEST_FIRST = [6, 5, 4, 3, 2, 1, 0]
LOWEST_FIRST = [1, 2, 3, 4, 5, 6, 0]  # Kozel's order: 1-1 … 6-6, then 0-0


def heaviest_holder(deal: Deal) -> tuple[int, Tile]:
    """The heaviest tile in any hand (RULES.md §2.8) and who holds it."""
    held = 0
    for m in deal.masks:
        held |= m
    for t in BY_WEIGHT:
        if held >> t & 1:
            seat = deal.holder(t)
            assert seat is not None
            return seat, t
    raise ValueError("every hand is empty")


def forced_lead(deal: Deal, order: list[int]) -> tuple[int, Tile]:
    """The double-order lead, falling back to the heaviest tile when no hand holds a double."""
    return double_holder(deal, order) or heaviest_holder(deal)


# Every suit's count in a set of tiles, packed four bits a suit (suit n at bit 4n), and the
# count of doubles in the eighth nibble (bit 28), from four lookups of 7 tile ids each:
# redeal_reason runs once a deal in kozel and osel.
_NIBBLE_SIX = sum(2 << 4 * n for n in range(7)) + (3 << 28)  # a suit's 6 or 7, or 5+ doubles, set bit 3
_NIBBLE_HIGH = sum(8 << 4 * n for n in range(8))


def _suit_table(k: int) -> list[int]:
    out = []
    for b in range(128):
        packed = 0
        for i in range(7):
            t = 7 * k + i
            if b >> i & 1:
                for n in range(7):
                    if SUIT[n] >> t & 1:
                        packed += 1 << 4 * n
                if DOUBLES >> t & 1:
                    packed += 1 << 28
        out.append(packed)
    return out


_SUIT_TABLES = [_suit_table(k) for k in range(4)]
_SUIT_TABLES[0] = [packed + _NIBBLE_SIX for packed in _SUIT_TABLES[0]]  # biased once, not once a hand


def redeal_reason(deal: Deal) -> str | None:
    """RULES.md §2.9: five or more doubles, or six or more tiles of one suit, in one hand."""
    s0, s1, s2, s3 = _SUIT_TABLES
    for m in deal.masks:
        if (s0[m & 127] + s1[m >> 7 & 127] + s2[m >> 14 & 127] + s3[m >> 21 & 127]) & _NIBBLE_HIGH:
            break
    else:
        return None  # the common case, found without the 32 counts below
    for seat, m in enumerate(deal.masks):
        doubles = (m & DOUBLES).bit_count()
        if doubles >= 5:
            return f"seat {seat} holds {doubles} doubles"
        for n, suit in enumerate(SUIT):
            k = (m & suit).bit_count()
            if k >= 6:
                return f"seat {seat} holds {k} tiles of the {n} suit"
    return None


def fish_fewest(values: list[int]) -> int | None:
    """The single seat with the fewest pips, or ``None`` on a tie for fewest."""
    low = min(values)
    seats = [s for s, v in enumerate(values) if v == low]
    return seats[0] if len(seats) == 1 else None
