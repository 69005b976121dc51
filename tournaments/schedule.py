"""Schedules: which tables a league plays, and in which rounds.

A *table* is one duplicate match of N bots (the league's ``[game] bots``, 2 by default): one
:func:`referee.matches.match.run_match` with every rotation of its seating on the same deals
(RULES.md §4).  It is named by a :class:`TableKey`: its round, its bots and its leg.

* **round-robin**: every N-subset of the bots (the *complete design*: with two bots, every
  pairing) when that is no more tables than a round robin of pairs, C(n, N) ≤ C(n, 2);
  otherwise, or whenever the file gives ``tables = T``, a *balanced design*
  (:func:`balanced_design`): every bot at exactly T tables and every two bots meeting as nearly
  the same number of times as the search finds, drawn from the league's seed.  All in round 0.
* **gauntlet**: every table holds the gauntlet bot and N − 1 of the others, the others in a
  complete or balanced design of their own (two bots: the gauntlet bot against each other once).
* **swiss** (:func:`swiss_round`): ``rounds`` rounds; each is drawn when the one before is
  complete, from the standings, into tables of bots of similar standing that have not met.
* **knockout** (:class:`Knockout`): a seeded bracket (the bots' order in the file is their seed,
  1 first); the first place of each table goes on; a table whose first place is shared is played
  again on other deals (:data:`TIE_LEGS` further legs), then the better seed goes on.

Pure: no I/O, no clock; the league's seed is the only randomness.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

#: Legs a knockout table whose first place is shared is played again, each on other deals,
#: before the better seed among those sharing it goes on.
TIE_LEGS = 3

#: Nodes the Swiss pairing search may visit before it settles for repeated meetings.
SEARCH_BUDGET = 200_000


@dataclass(frozen=True, order=True)
class TableKey:
    """One table of a league: its ``round`` (0 for round robin and gauntlet; Swiss and knockout
    rounds count from 1), its ``bots`` in alphabetical order (the first takes the first
    orientation), and its ``leg``: 0, or the k-th further table of the same bots in the same
    round (a knockout tie played again, a balanced design that seats the same bots twice)."""

    round: int
    bots: tuple[str, ...]
    leg: int = 0

    @classmethod
    def of(cls, names: Iterable[str], round: int = 0, leg: int = 0) -> TableKey:
        return cls(round, tuple(sorted(names)), leg)

    @property
    def text(self) -> str:
        """The bots as the database keeps them: the names joined by commas."""
        return ",".join(self.bots)

    @property
    def label(self) -> str:
        """``a vs b``, ``a, b, c``; with ``round 2:`` before and `` (leg 2)`` after as need be."""
        who = " vs ".join(self.bots) if len(self.bots) == 2 else ", ".join(self.bots)
        return (f"round {self.round}: " if self.round else "") + who + (f" (leg {self.leg + 1})" if self.leg else "")

    @property
    def stem(self) -> str:
        """The file name of its log and stderr folder: ``a-vs-b`` (as before tables of N),
        ``a-vs-b-vs-c``, ``a-vs-b@r2``, ``a-vs-b@r2@leg1`` ('@' is in no bot name)."""
        return "-vs-".join(self.bots) + (f"@r{self.round}" if self.round else "") + (f"@leg{self.leg}" if self.leg else "")


def leg_seed(seed: int, key: TableKey) -> int:
    """The deal stream of a table: the league's seed, or for a further leg (a knockout tie
    played again) a seed of its own derived from it, so the leg plays other deals."""
    if key.leg == 0:
        return seed
    digest = hashlib.sha256(f"referee-league-leg:{seed}:{key.round}:{key.text}:{key.leg}".encode()).digest()
    return int.from_bytes(digest, "big")  # 256 bits: as secret as the league's seed


# -- designs: which N-subsets meet --------------------------------------------------------------


def complete_design(n: int, k: int) -> list[tuple[int, ...]]:
    """Every k-subset of ``range(n)``, in colex order (by the largest member, then the next): a
    bot added at the end only adds subsets at the end."""
    return sorted(itertools.combinations(range(n), k), key=lambda c: c[::-1])


def fewest_tables(n: int, k: int, meet_all: bool = True) -> int:
    """The default tables per bot of a balanced design: the fewest that can let every bot meet
    every other (``ceil((n-1)/(k-1))``, or 1 when ``meet_all`` is false), raised until
    ``n × T`` is a multiple of ``k`` (every table full)."""
    t = max(1, math.ceil((n - 1) / (k - 1))) if meet_all and k > 1 else 1
    while (n * t) % k:
        t += 1
    return t


def balanced_design(n: int, k: int, per_bot: int, seed: int) -> list[tuple[int, ...]]:
    """``n × per_bot / k`` blocks of ``k`` distinct members of ``range(n)``, every member in
    exactly ``per_bot`` blocks, and every two members together as nearly the same number of
    times as a local search finds.

    Each block starts as ``k`` members among those with the most seats left (so every block
    fills).  Then simulated annealing swaps two members of two blocks to lower ``Σ λ²`` (λ: the
    times a pair meets; their sum is fixed, so the sum of squares is least when they are as equal
    as can be): half the swaps are random, half bring together a member and the one it has met
    least.  It stops at the least possible sum, or after :func:`_design_steps` swaps, keeping
    the best blocks seen.  Deterministic: the same arguments give the same blocks.

    Raises:
        ValueError: ``n × per_bot`` is not a multiple of ``k``, or ``k > n``.
    """
    if k > n or k < 1 or per_bot < 1:
        raise ValueError(f"cannot seat {n} bots at tables of {k}")
    if (n * per_bot) % k:
        raise ValueError(f"{n} bots at {per_bot} tables each do not fill tables of {k}")
    rng = random.Random(f"referee-balanced-design:{seed}:{n}:{k}:{per_bot}")
    left = [per_bot] * n
    blocks: list[list[int]] = []
    for _ in range(n * per_bot // k):
        block = sorted(range(n), key=lambda i: (-left[i], rng.random()))[:k]
        for i in block:
            left[i] -= 1
        blocks.append(block)
    if k == 1 or n == k:
        return [tuple(sorted(b)) for b in blocks]
    meet = [[0] * n for _ in range(n)]
    where: list[list[int]] = [[] for _ in range(n)]
    for bi, block in enumerate(blocks):
        for x in block:
            where[x].append(bi)
        for a, b in itertools.combinations(block, 2):
            meet[a][b] += 1
            meet[b][a] += 1
    pairs = n * (n - 1) // 2
    total = len(blocks) * k * (k - 1) // 2
    q, r = divmod(total, pairs)
    least = (pairs - r) * q * q + r * (q + 1) * (q + 1)  # every λ at q or q + 1
    cost = sum(meet[a][b] ** 2 for a in range(n) for b in range(a + 1, n))
    best, best_blocks = cost, [b[:] for b in blocks]
    steps = _design_steps(len(blocks))
    hot, cold = 1.0, 0.05
    # A pass that ends above the least sum is stuck in a local minimum (13 bots at tables of 4, 8
    # each: one seed in eight): the next pass heats the blocks again, up to DESIGN_PASSES.
    for _ in range(DESIGN_PASSES):
        if best == least:
            break
        for step in range(steps):
            if best == least:
                break
            swap = _pick_swap(rng, blocks, meet, where, q, per_bot)
            if swap is None:
                continue
            bi, bj, x, y = swap
            b1, b2 = blocks[bi], blocks[bj]
            change = _swap_change(b1, b2, x, y)
            d = sum((meet[a][b] + v) ** 2 - meet[a][b] ** 2 for (a, b), v in change.items() if v)
            temperature = hot * (cold / hot) ** (step / steps)
            if d <= 0 or rng.random() < math.exp(-d / temperature):
                for (a, b), v in change.items():
                    meet[a][b] += v
                    meet[b][a] += v
                b1[b1.index(x)] = y
                b2[b2.index(y)] = x
                where[x][where[x].index(bi)] = bj
                where[y][where[y].index(bj)] = bi
                cost += d
                if cost < best:
                    best, best_blocks = cost, [b[:] for b in blocks]
    return [tuple(sorted(b)) for b in best_blocks]


def _stored_blocks(stored: dict[str, object]) -> list[list[str]]:
    """A stored design's blocks (:meth:`Fixed._extends` checked they are lists of names)."""
    blocks = stored["blocks"]
    assert isinstance(blocks, list)
    return [list(b) for b in blocks]


def extend_design(blocks: Sequence[Sequence[str]], names: Sequence[str], k: int, per_bot: int, seed: int) -> list[list[str]]:
    """The tables to add to the design ``blocks`` (of some of ``names``) so that every bot sits at
    ``per_bot`` tables at least: each new table seats the bot with the most tables still to
    play, then, one by one, the bot that has met those already seated least, among those with
    tables still to play first and else those with the fewest tables (so an old bot may sit at
    one table more than ``per_bot``).  The blocks given stay as they are: a league that grows
    keeps every table it played.  Deterministic: the same arguments give the same tables."""
    rng = random.Random(f"referee-design-extension:{seed}:{len(names)}:{k}:{per_bot}")
    seats = Counter(b for block in blocks for b in block)
    meet = meetings(blocks)
    order = {b: (i, rng.random()) for i, b in enumerate(names)}
    out: list[list[str]] = []
    while any(seats[b] < per_bot for b in names) and len(names) >= k:
        block = [min(names, key=lambda b: (seats[b] - per_bot, order[b][1]))]
        while len(block) < k:
            rest = [b for b in names if b not in block]
            block.append(min(rest, key=lambda b: (seats[b] >= per_bot, sum(meet[frozenset((b, c))] for c in block),
                                                  seats[b], order[b][1])))
        for b in block:
            seats[b] += 1
        for a, b in itertools.combinations(block, 2):
            meet[frozenset((a, b))] += 1
        out.append(sorted(block, key=lambda b: order[b][0]))
    return out


def _pick_swap(rng: random.Random, blocks: list[list[int]], meet: list[list[int]], where: list[list[int]], q: int,
               per_bot: int) -> tuple[int, int, int, int] | None:
    """A swap :func:`balanced_design` may try: member ``x`` of block ``bi`` for member ``y`` of
    block ``bj``; ``None`` when the draw gives none (the random draws are the design's: their
    order is part of what a seed deals).  Half the swaps bring a member together with one it
    has met least, half are random."""
    n, k = len(meet), len(blocks[0])
    x = rng.randrange(n)
    if rng.random() < 0.5:  # bring x together with a bot it has met least
        row = meet[x]
        low = min(row[z] for z in range(n) if z != x)
        if low >= q and rng.random() < 0.5:
            return None
        fewest = [z for z in range(n) if z != x and row[z] == low]
        y = fewest[rng.randrange(len(fewest))]
        bi, bj = where[x][rng.randrange(per_bot)], where[y][rng.randrange(per_bot)]
        b1, b2 = blocks[bi], blocks[bj]
        if bi == bj or y in b1:
            return None
        leaving = [w for w in b1 if w != x and w not in b2]
        if not leaving:
            return None
        return bi, bj, leaving[rng.randrange(len(leaving))], y
    bi, bj = rng.randrange(len(blocks)), rng.randrange(len(blocks))
    b1, b2 = blocks[bi], blocks[bj]
    x, y = b1[rng.randrange(k)], b2[rng.randrange(k)]
    if bi == bj or x in b2 or y in b1:
        return None
    return bi, bj, x, y


def _swap_change(b1: list[int], b2: list[int], x: int, y: int) -> dict[tuple[int, int], int]:
    """How the meetings change when ``x`` (in ``b1``) and ``y`` (in ``b2``) swap blocks."""
    change: dict[tuple[int, int], int] = {}
    for z in b1:
        if z != x:
            change[(x, z)] = change.get((x, z), 0) - 1
            change[(y, z)] = change.get((y, z), 0) + 1
    for z in b2:
        if z != y:
            change[(y, z)] = change.get((y, z), 0) - 1
            change[(x, z)] = change.get((x, z), 0) + 1
    return change


#: Annealing passes of a balanced design's search (each of :func:`_design_steps` swaps) at most.
DESIGN_PASSES = 4


def _design_steps(blocks: int) -> int:
    """Swaps the balanced design's search may try: about 400 per table, within 20 000 and
    200 000 a pass (a second or two of CPU a pass for 50 bots; the design is drawn once and stored)."""
    return min(200_000, max(20_000, 400 * blocks))


def meetings(tables: Iterable[Sequence[str]]) -> Counter[frozenset[str]]:
    """How many times each two bots sat at one table."""
    out: Counter[frozenset[str]] = Counter()
    for table in tables:
        for a, b in itertools.combinations(table, 2):
            out[frozenset((a, b))] += 1
    return out


def _keys(tables: Iterable[Sequence[str]], round: int = 0) -> list[TableKey]:
    """Keys for tables in order; the same bots a second time in the round get leg 1, and so on."""
    seen: Counter[tuple[str, ...]] = Counter()
    out = []
    for table in tables:
        key = TableKey.of(table, round)
        out.append(TableKey(round, key.bots, seen[key.bots]))
        seen[key.bots] += 1
    return out


# -- what the schedules know of the store -------------------------------------------------------


@dataclass
class State:
    """What a schedule needs from the league's database.

    ``draws``: the rounds drawn so far (Swiss, knockout): round → its slots in order, each a list
    of bots (one bot: a bye).  ``places``: for every done table, each bot's place at it (1 the
    best; bots level share a place).  ``standing``: the bots in standing order over the tables
    played so far (Swiss draws its rounds from it; called only then).  ``design``: the balanced
    design an earlier run stored.
    """

    draws: dict[int, list[list[str]]] = field(default_factory=dict)
    places: dict[TableKey, dict[str, int]] = field(default_factory=dict)
    standing: Callable[[], list[str]] = list
    design: dict[str, object] | None = None  # a stored balanced design (:class:`Fixed`)


@dataclass
class Plan:
    """The tables of a schedule known now, in order (those of every round drawn so far), and a
    round (``(round, slots)``) or a balanced design drawn now, which the caller stores before it
    plays them."""

    tables: list[TableKey]
    draw: tuple[int, list[list[str]]] | None = None
    finished: bool = False  # every round is drawn and decided (Swiss, knockout)
    design: dict[str, object] | None = None  # a balanced design drawn now, for the caller to store


class Schedule(ABC):
    """A schedule: :meth:`plan` says which tables exist so far and draws the next round when
    the last one is complete (:class:`Fixed`, :class:`Swiss`, :class:`Knockout`)."""

    kind = ""
    per_table = 2
    names: list[str]

    @abstractmethod
    def plan(self, state: State, *, draw: bool = False) -> Plan:
        """The tables known now, and a round or design drawn now when ``draw``."""

    def expected(self, state: State) -> int:
        """Tables the whole schedule will have, as far as can be told now (for progress)."""
        return len(self.plan(state).tables)

    @abstractmethod
    def describe(self) -> str:
        """The schedule in words, for ``league status``."""


class Fixed(Schedule):
    """Round robin and gauntlet: every table is known from the start (round 0).

    A balanced design takes a second or two to draw for 50 bots, so the league stores the one it
    drew (``State.design``) and takes it again as long as the bots, the table size, the tables
    per bot and the seed are those it was drawn for."""

    def __init__(self, kind: str, names: Sequence[str], per_table: int, seed: int, *, anchor: str | None = None,
                 tables: int | None = None) -> None:
        self.kind = kind
        self.names = list(names)
        self.per_table = per_table
        self.anchor = anchor
        self.seed = seed
        self.others = [x for x in self.names if x != anchor] if anchor is not None else self.names
        self.k = per_table - 1 if anchor is not None else per_table
        n = len(self.others)
        limit = n if anchor is not None else math.comb(n, 2)
        self.complete = tables is None and math.comb(n, self.k) <= limit
        if self.complete:
            self.per_bot = math.comb(n - 1, self.k - 1)
        else:
            self.per_bot = tables if tables is not None else fewest_tables(n, self.k, meet_all=anchor is None)
        self._drawn: list[list[str]] | None = None
        self.extended = False  # the design is an earlier one grown by the tables of bots added since

    def design_key(self) -> dict[str, object]:
        """What a stored balanced design must have been drawn for."""
        return {"bots": self.others, "per_table": self.k, "tables": self.per_bot, "seed": self.seed}

    def blocks(self, stored: dict[str, object] | None = None) -> list[list[str]]:
        """The tables' bots (without the gauntlet bot): the complete design, the stored balanced
        design if it was drawn for these bots and settings, or a new one."""
        if self.complete:
            return [[self.others[i] for i in block] for block in complete_design(len(self.others), self.k)]
        if stored is not None and {k: v for k, v in stored.items() if k not in ("blocks", "extended")} == self.design_key():
            self.extended = bool(stored.get("extended"))
            return [list(b) for b in stored["blocks"]]  # type: ignore[attr-defined]  # the stored JSON: a list of lists
        if self._drawn is None and stored is not None and self._extends(stored):
            old = [list(b) for b in _stored_blocks(stored)]
            self._drawn = old + extend_design(old, self.others, self.k, self.per_bot, self.seed)
            self.extended = True
        if self._drawn is None:
            self._drawn = [[self.others[i] for i in block]
                           for block in balanced_design(len(self.others), self.k, self.per_bot, self.seed)]
        return self._drawn

    def _extends(self, stored: dict[str, object]) -> bool:
        """Whether ``stored`` is a design of some of these bots (none gone), drawn for the same
        table size and seed at no more tables per bot: bots were added, and the design grows
        by the tables they play rather than being drawn again (every table it had is kept)."""
        bots, blocks = stored.get("bots"), stored.get("blocks")
        if not isinstance(bots, list) or not isinstance(blocks, list) or not set(bots) < set(self.others):
            return False
        tables = stored.get("tables")
        return (stored.get("per_table") == self.k and stored.get("seed") == self.seed and isinstance(tables, int)
                and tables <= self.per_bot and all(isinstance(b, list) and set(b) <= set(bots) for b in blocks))

    def plan(self, state: State, *, draw: bool = False) -> Plan:
        blocks = self.blocks(state.design)
        seated = [[self.anchor, *b] for b in blocks] if self.anchor is not None else blocks
        plan = Plan(_keys(seated))
        design = {**self.design_key(), "blocks": blocks, **({"extended": True} if self.extended else {})}
        if not self.complete and state.design != design:
            plan.design = design
        return plan

    def describe(self) -> str:
        n = self.per_table
        if self.anchor is not None:
            what = f"gauntlet of {self.anchor}"
            if n > 2 or not self.complete:
                what += f", every other bot at {self.per_bot} table{'s' if self.per_bot != 1 else ''}"
            return what
        if n == 2 and self.complete:
            return "round robin"
        if self.complete:
            return f"round robin of every {n} bots"
        if self.extended:
            return f"round robin, balanced, grown as bots were added: at least {self.per_bot} table{'s' if self.per_bot != 1 else ''} per bot"
        return f"round robin, balanced: {self.per_bot} table{'s' if self.per_bot != 1 else ''} per bot"


class Swiss(Schedule):
    """``rounds`` rounds, each drawn from the standings when the one before is complete."""

    kind = "swiss"

    def __init__(self, names: Sequence[str], per_table: int, rounds: int) -> None:
        self.names = list(names)
        self.per_table = per_table
        self.rounds = rounds

    def plan(self, state: State, *, draw: bool = False) -> Plan:
        tables = _drawn_tables(state)
        last = max(state.draws, default=0)
        current = [t for t in tables if t.round == last]
        complete = all(t in state.places for t in current)
        if not complete or last >= self.rounds:
            return Plan(tables, finished=complete and last >= self.rounds)
        if not draw:
            return Plan(tables)
        history = [slot for r in sorted(state.draws) for slot in state.draws[r]]
        slots = swiss_round(state.standing(), history, self.per_table)
        new = _keys([s for s in slots if len(s) > 1], last + 1)
        return Plan(tables + new, draw=(last + 1, slots))

    def expected(self, state: State) -> int:
        return self.rounds * (len(self.names) // self.per_table)

    def describe(self) -> str:
        return f"swiss, {self.rounds} round{'s' if self.rounds != 1 else ''}"


def _drawn_tables(state: State) -> list[TableKey]:
    out = []
    for r in sorted(state.draws):
        out += _keys([s for s in state.draws[r] if len(s) > 1], r)
    return out


def max_swiss_rounds(n: int, k: int) -> int:
    """Rounds after which some bot has met every other (with a bye every round it sits out)."""
    per_round = (n // k) * k  # bots seated each round
    if per_round == 0:
        return 0
    # a bot meets k-1 new bots a round; the rounds it sits out it meets none
    return max(1, math.ceil((n - 1) / (k - 1) * n / per_round))


def swiss_round(standing: Sequence[str], history: Sequence[Sequence[str]], k: int,
                budget: int = SEARCH_BUDGET) -> list[list[str]]:
    """One Swiss round: tables of ``k`` bots of similar standing that have not met, and byes.

    ``standing`` is every bot, best first; ``history`` every slot of the rounds before (a table,
    or one bot for a bye).  When the bots do not fill the tables, the ``n mod k`` lowest in the
    standing among those with the fewest byes sit out (one slot each, at the end).  The others
    are seated by a depth-first search that takes, for the best bot not yet seated, the nearest
    bots below it in the standing that it and each other have not met; it backtracks when a
    later bot cannot be seated.  If no seating without a repeated meeting turns up within the
    search's budget, the same search allows 1, then 2, 4, … repeated meetings, and takes the
    first seating it finds.  Returns the slots: tables in standing order, then the byes.
    """
    n = len(standing)
    met = meetings(s for s in history if len(s) > 1)
    byes = Counter(s[0] for s in history if len(s) == 1)
    sit_out = n % k
    position = {b: i for i, b in enumerate(standing)}
    out_now = sorted(standing, key=lambda b: (byes[b], -position[b]))[:sit_out]
    players = [b for b in standing if b not in out_now]
    byes_now = [[b] for b in sorted(out_now, key=position.__getitem__)]
    most = len(players) // k * math.comb(k, 2)  # meetings at one round's tables
    allowed = 0
    while allowed <= most:
        found = _seat(players, met, k, allowed, budget)
        if found is not None:
            return [*found, *byes_now]
        allowed = max(1, 2 * allowed)
    # the search ran out of budget even with every meeting allowed to repeat: consecutive tables
    return [*(players[i:i + k] for i in range(0, len(players), k)), *byes_now]


def _seat(players: list[str], met: Counter[frozenset[str]], k: int, allowed: int, budget: int) -> list[list[str]] | None:
    """Tables of ``k`` over ``players`` (in standing order) with at most ``allowed`` repeated
    meetings, found depth first; ``None`` when there is none or the budget runs out."""
    nodes = 0
    seated = [False] * len(players)
    tables: list[list[str]] = []

    def repeats(table: list[str], extra: str) -> int:
        return sum(met[frozenset((extra, other))] > 0 for other in table)

    def fill(table: list[int], start: int, left: int) -> bool:
        nonlocal nodes
        if len(table) == k:
            tables.append([players[i] for i in table])
            if search(left):
                return True
            tables.pop()
            return False
        for j in range(start, len(players)):
            if seated[j]:
                continue
            nodes += 1
            if nodes > budget:
                return False
            cost = repeats([players[i] for i in table], players[j])
            if cost > left:
                continue
            seated[j] = True
            table.append(j)
            if fill(table, j + 1, left - cost):
                return True
            table.pop()
            seated[j] = False
        return False

    def search(left: int) -> bool:
        first = next((i for i, s in enumerate(seated) if not s), None)
        if first is None:
            return True
        seated[first] = True
        if fill([first], first + 1, left):
            return True
        seated[first] = False
        return False

    return tables if search(allowed) else None


# -- knockout --------------------------------------------------------------------------------------


def bracket_order(size: int, k: int) -> list[int]:
    """Seeds 1…size in bracket order for tables of ``k``: consecutive groups of ``k`` meet, and
    the best seeds meet as late as can be (two bots: 1 v 8, 4 v 5, 2 v 7, 3 v 6)."""
    order = [1]
    while len(order) < size:
        m = len(order)
        order = [j * m + s if j % 2 == 0 else (j + 1) * m + 1 - s for s in order for j in range(k)]
    return order


def knockout_sizes(n: int, k: int) -> str | None:
    """Why ``n`` bots cannot make a knockout of tables of ``k`` (``None`` when they can): each
    table sends one bot on, so ``n − 1`` must be a multiple of ``k − 1``."""
    if n < k:
        return f"a knockout of tables of {k} needs at least {k} bots, not {n}"
    if (n - 1) % (k - 1):
        fits = [x for x in range(k, n + 2 * k) if (x - 1) % (k - 1) == 0]
        near = [x for x in fits if abs(x - n) < k][:2] or fits[:2]
        return (f"a knockout of tables of {k} sends one bot of each table on, so it takes {k}, {2 * k - 1}, {3 * k - 2}, … bots "
                f"(n − 1 a multiple of {k - 1}), not {n}: try {' or '.join(map(str, near))}")
    return None


class Knockout(Schedule):
    """A seeded bracket of tables of N: the first place of each goes on (see the module docstring)."""

    kind = "knockout"

    def __init__(self, names: Sequence[str], per_table: int) -> None:
        self.names = list(names)
        self.per_table = per_table
        self.seed_of = {b: i + 1 for i, b in enumerate(self.names)}

    def first_round(self) -> list[list[str]]:
        """Round 1's slots in bracket order: the best seeds have a bye (a slot of one bot) to
        round 2, the others play at tables of bots from across the lower half, snake-wise."""
        n, k = len(self.names), self.per_table
        m = 1
        while m * k < n:  # m: the slots of round 2 (a power of k; n when n is one, everyone plays round 1)
            m *= k
        playing = (n - m) // (k - 1)  # tables in round 1
        direct = m - playing
        lower = self.names[direct:]
        tables = []
        for i in range(playing):
            seats = [lower[(c * playing + i) if c % 2 == 0 else (c * playing + playing - 1 - i)] for c in range(k)]
            tables.append(seats)
        slot_of_seed = {s: [self.names[s - 1]] for s in range(1, direct + 1)}
        for i, seats in enumerate(tables):
            slot_of_seed[direct + i + 1] = seats
        return [slot_of_seed[s] for s in bracket_order(m, k)]

    def winner(self, state: State, round_: int, slot: list[str]) -> tuple[str | None, TableKey | None]:
        """The bot a slot sends on (``None`` while undecided) and the table still to play."""
        if len(slot) == 1:
            return slot[0], None
        base = TableKey.of(slot, round_)
        for leg in range(TIE_LEGS + 1):
            key = TableKey(round_, base.bots, leg)
            places = state.places.get(key)
            if places is None:
                return None, key
            first = [b for b, p in places.items() if p == 1]
            if len(first) == 1:
                return first[0], None
        return min(first, key=self.seed_of.__getitem__), None

    def plan(self, state: State, *, draw: bool = False) -> Plan:
        draws = dict(state.draws)
        new = None
        if not draws:
            if not draw:
                return Plan([])
            new = (1, self.first_round())
            draws[1] = new[1]
        tables: list[TableKey] = []
        for r in sorted(draws):
            winners = []
            for slot in draws[r]:
                won, _ = self.winner(state, r, slot)
                winners.append(won)
                if len(slot) > 1:
                    base = TableKey.of(slot, r)
                    for leg in range(TIE_LEGS + 1):
                        key = TableKey(r, base.bots, leg)
                        tables.append(key)
                        places = state.places.get(key)
                        if places is None or sum(p == 1 for p in places.values()) == 1:
                            break
            if r == max(draws) and all(w is not None for w in winners):
                if len(winners) == 1:
                    return Plan(tables, draw=new, finished=True)
                if draw and new is None:
                    k = self.per_table
                    slots = [[w for w in winners[i:i + k] if w is not None] for i in range(0, len(winners), k)]
                    new = (r + 1, slots)
                    tables += _keys(slots, r + 1)
        return Plan(tables, draw=new)

    def expected(self, state: State) -> int:
        legs = sum(1 for key in state.places if key.leg)
        return (len(self.names) - 1) // (self.per_table - 1) + legs

    def eliminated(self, state: State) -> dict[str, tuple[int, int]]:
        """For every bot the bracket has decided about: ``(round it went out in, its place at
        that table)``; the champion has ``(rounds + 1, 1)``."""
        out: dict[str, tuple[int, int]] = {}
        for r in sorted(state.draws):
            for slot in state.draws[r]:
                won, _ = self.winner(state, r, slot)
                if won is None or len(slot) == 1:
                    continue
                base = TableKey.of(slot, r)
                last = max((TableKey(r, base.bots, leg) for leg in range(TIE_LEGS + 1)
                            if TableKey(r, base.bots, leg) in state.places), key=lambda t: t.leg)
                places = state.places[last]
                for b in slot:
                    if b != won:
                        out[b] = (r, places[b] if places[b] > 1 else 2)
                if len(state.draws[r]) == 1:
                    out[won] = (r + 1, 1)
        return out

    def describe(self) -> str:
        return "knockout"
