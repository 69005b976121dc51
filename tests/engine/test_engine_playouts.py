"""Random legal playouts of whole games, checked against an independent reading of RULES.md.

Everything the engine decides is re-derived here from RULES.md alone, without calling the
engine's helpers (tile tables, lead searches, draw loop, hand values, rule of 13, eggs):

* :class:`DealModel` replays a deal by §2 (layout and ends §2.1/§5, compulsory play §2.2,
  drawing §2.4/§5, forced leads §2.5, fish §2.6/§5) and predicts every event the engine must
  record after each play: the draws, the passes, whose turn it is, or how the deal ends.
* ``*Ref`` classes re-implement each game's leads and scoring (§3, §5) and predict the record
  ``game.finish()`` returns and the game's outcome.

Each step of every playout also checks, on the engine's own state: the 28 tiles are conserved
(no duplicates), the legal-play list equals a brute-force enumeration, the seat to move holds a
playable tile, the deal neither ended early nor missed a fish, and the checked path ``push``
rejects illegal plays with the right reason and leaves the state untouched.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import (
    TERMINAL,
    Deal,
    Drew,
    IllegalPlay,
    Passed,
    Placed,
    parse_tile,
    play,
    tile_name,
    variant,
)
from referee.engine.core.game import MAX_DEALS

# -- tiles, from RULES.md §1 only --------------------------------------------------------------

#: The engine numbers tiles 0-0, 0-1, … 0-6, 1-1, … 6-6 (tiles.py docstring); our own table.
HALVES: list[tuple[int, int]] = [(a, b) for a in range(7) for b in range(a, 7)]
N = len(HALVES)
ZZ = HALVES.index((0, 0))
SS = HALVES.index((6, 6))


def pips(t: int) -> int:
    return HALVES[t][0] + HALVES[t][1]


def is_double(t: int) -> bool:
    return HALVES[t][0] == HALVES[t][1]


def fits(t: int, v: int) -> bool:
    return v in HALVES[t]


def other_half(t: int, v: int) -> int:
    a, b = HALVES[t]
    return b if v == a else a


def weight(t: int) -> tuple[int, int]:
    """§2.8: the pip sum, then the larger half."""
    return (pips(t), max(HALVES[t]))


def mask_to_set(mask: int) -> set[int]:
    return {t for t in range(N) if mask >> t & 1}


def test_tile_numbering_matches_our_table():
    assert N == 28
    for t, (a, b) in enumerate(HALVES):
        assert tile_name(t) == f"{a}-{b}"
        assert parse_tile(f"{b}-{a}") == t


# -- how each game deals and draws (RULES.md §3), written down independently ---------------------

UNTIL_FIT, ONE, NONE = "until_fit", "one", "none"


def expected_shape(vid: str, players: int) -> tuple[int, str, str, int]:
    """(hand size, what the rest is, draw rule, bazaar tiles never drawn)."""
    if vid == "sport":
        return 7, "sleeping", NONE, 0
    if vid == "kozel":
        return (7, "sleeping", NONE, 0) if players == 4 else (7, "bazaar", UNTIL_FIT, 1)
    if vid == "draw":
        return (7 if players == 2 else 5), "bazaar", UNTIL_FIT, 0
    if vid == "block":
        return (6 if players == 3 else 7), "sleeping", NONE, 0
    if vid == "club":
        return 7, "bazaar", ONE, 0
    raise AssertionError(vid)


# -- one deal, replayed by §2 ------------------------------------------------------------------


@dataclass
class DealModel:
    hands: list[set[int]]
    stock: list[int]  # bazaar in order (drawn from the front), or the sleeping tiles
    draw: str
    keep: int
    ends: list[int] | None = None  # [left, right]
    layout: list[int] = field(default_factory=list)
    taken: int = 0  # bazaar tiles drawn so far
    turn: int | None = None
    end: tuple[str, int] | None = None
    last_placer: int | None = None
    events: list[tuple] = field(default_factory=list)

    @classmethod
    def start(cls, deal: Deal, draw: str, keep: int, leader: int, lead_tile: int | None) -> DealModel:
        m = cls([set(h) for h in deal.hands], list(deal.undealt), draw, keep)
        m.turn = leader
        if lead_tile is not None:
            assert lead_tile in m.hands[leader]
            m._place(leader, lead_tile, None, forced=True)
        return m

    @property
    def n(self) -> int:
        return len(self.hands)

    def drawable(self) -> int:
        if self.draw == NONE:
            return 0
        return max(0, len(self.stock) - self.taken - self.keep)

    def can_place(self, seat: int) -> bool:
        if self.ends is None:
            return bool(self.hands[seat])
        return any(fits(t, v) for t in self.hands[seat] for v in self.ends)

    def nobody_can_move(self) -> bool:
        return self.drawable() == 0 and not any(self.can_place(s) for s in range(self.n))

    def legal(self, seat: int) -> set[tuple[int, int | None]]:
        """Brute force: every tile of the hand on every end (§2.1), any tile for the lead."""
        if self.ends is None:
            return {(t, None) for t in self.hands[seat]}
        return {(t, e) for t in self.hands[seat] for e in (0, 1) if fits(t, self.ends[e])}

    def play(self, tile: int, end: int | None) -> None:
        assert self.end is None and self.turn is not None
        assert (tile, end) in self.legal(self.turn), "the engine offered an illegal play"
        self._place(self.turn, tile, end, forced=False)

    def _place(self, seat: int, tile: int, end: int | None, forced: bool) -> None:
        self.hands[seat].remove(tile)
        if end is None:
            a, b = HALVES[tile]
            self.ends = [a, b]  # §5: left shows the smaller half
        else:
            assert self.ends is not None and fits(tile, self.ends[end])
            self.ends[end] = other_half(tile, self.ends[end])
        self.layout.append(tile)
        self.last_placer = seat
        self.events.append(("placed", seat, tile, end, forced))
        if not self.hands[seat]:
            self.end, self.turn = ("domino", seat), None
            return
        p = seat
        while True:
            if self.nobody_can_move():  # §2.6, §5: detected at once, draws first
                self.end, self.turn = ("fish", self.last_placer), None
                return
            p = (p + 1) % self.n
            if self.can_place(p):
                self.turn = p
                return
            if self.drawable():
                got = []
                while self.drawable():
                    t = self.stock[self.taken]
                    self.taken += 1
                    self.hands[p].add(t)
                    got.append(t)
                    if self.can_place(p) or self.draw == ONE:
                        break
                self.events.append(("drew", p, tuple(got)))
                if self.can_place(p):
                    self.turn = p
                    return
            self.events.append(("passed", p))


def engine_event(e) -> tuple:
    if type(e) is Placed:
        return ("placed", e.seat, e.tile, e.end, e.forced)
    if type(e) is Drew:
        assert e.count == len(e.tiles)
        return ("drew", e.seat, tuple(e.tiles))
    if type(e) is Passed:
        return ("passed", e.seat)
    raise AssertionError(f"unknown event {e!r}")


# -- per-step checks on the engine's state ------------------------------------------------------


def check_conservation(state) -> None:
    parts: list[int] = []
    for h in state.hands:
        parts += sorted(mask_to_set(h))
    parts += list(state.bazaar[state.drawn :])
    parts += sorted(mask_to_set(state.sleeping))
    parts += [e.tile for e in state.history if type(e) is Placed]
    assert len(parts) == 28, f"{len(parts)} tiles accounted for"
    assert sorted(parts) == list(range(28)), "a tile is duplicated or lost"


def check_against_model(state, model: DealModel) -> None:
    assert [engine_event(e) for e in state.history] == model.events
    assert [mask_to_set(h) for h in state.hands] == model.hands
    if model.ends is not None:
        assert list(state.ends) == model.ends
    if model.end is None:
        assert state.to_move() == model.turn
        assert state.end is None
    else:
        assert state.to_move() == TERMINAL
        assert state.end is not None and (state.end.reason, state.end.seat) == model.end
    assert state.drawn == model.taken


def check_step(state, model: DealModel) -> None:
    check_conservation(state)
    check_against_model(state, model)
    seat = state.to_move()
    if seat == TERMINAL:
        if model.end[0] == "fish":
            assert model.nobody_can_move(), "fish declared while someone could place or draw"
            assert model.end[1] == model.last_placer
        else:
            assert not model.hands[model.end[1]]
        assert state.legal_plays() == []
        return
    assert not model.nobody_can_move(), "the deal goes on after a fish"
    got = [(p.tile, p.end) for p in state.legal_plays()]
    assert got == sorted(got), "legal plays are not in (tile, end) order"
    assert len(set(got)) == len(got)
    assert set(got) == model.legal(seat)
    assert got, "the seat to move has nothing to play"


def snapshot(state) -> tuple:
    return (
        list(state.hands), list(state.ends), state.turn, state.drawn, list(state.history),
        state.end, state.last_placer, state.sleeping,
    )


def expected_reason(state, model: DealModel, tile: int, end: int | None, seat: int | None) -> str | None:
    """Our reading of which rule a play breaks (None: it is legal)."""
    if seat is not None and seat != model.turn:
        return IllegalPlay.NOT_YOUR_TURN
    if tile not in model.hands[model.turn]:
        return IllegalPlay.NOT_YOUR_TILE
    if model.ends is None:
        return None
    if end is None or end not in (0, 1):
        return IllegalPlay.BAD_END
    if not fits(tile, model.ends[end]):
        return IllegalPlay.NO_MATCH
    return None


def probe_illegal(state, model: DealModel, rnd: random.Random) -> None:
    """Try a few random plays on the checked path; illegal ones must be refused, untouched."""
    for _ in range(3):
        tile = rnd.randrange(28)
        end = rnd.choice([None, 0, 1, 2, 3])
        seat = rnd.choice([None, model.turn, rnd.randrange(model.n)])
        reason = expected_reason(state, model, tile, end, seat)
        if reason is None:
            continue
        before = snapshot(state)
        with pytest.raises(IllegalPlay) as info:
            state.push(play(tile, end), seat)
        assert info.value.reason == reason, (tile_name(tile), end, seat, str(info.value))
        assert str(info.value)
        assert snapshot(state) == before, "a refused play changed the state"


# -- games, scored by our own reading of §3 and §5 -------------------------------------------------


def lone_value(hand: set[int], zero_zero: int, six_six: int, both: int | None) -> int:
    if hand == {ZZ}:
        return zero_zero
    if hand == {SS}:
        return six_six
    if hand == {ZZ, SS} and both is not None:
        return both
    return sum(pips(t) for t in hand)


def plain(hand: set[int]) -> int:
    return sum(pips(t) for t in hand)


def find_in_hands(deal: Deal, t: int) -> int | None:
    for s, h in enumerate(deal.hands):
        if t in h:
            return s
    return None


def double_order_lead(deal: Deal, numbers: list[int]) -> tuple[int, int]:
    for n in numbers:
        t = HALVES.index((n, n))
        s = find_in_hands(deal, t)
        if s is not None:
            return s, t
    best = max((t for h in deal.hands for t in h), key=weight)  # §2.8
    return find_in_hands(deal, best), best


class Ref:
    """Base of the reference games: sides, totals, and the record checks."""

    def __init__(self, players: int, options: dict, pairs: bool) -> None:
        self.players = players
        self.options = options
        self.pairs = pairs
        self.sides = [(0, 2), (1, 3)] if pairs else [(s,) for s in range(players)]
        self.side_of = {s: i for i, seats in enumerate(self.sides) for s in seats}
        self.totals = [0] * len(self.sides)
        self.played = 0

    def is_void(self, deal: Deal) -> bool:
        return False

    def value(self, hand: set[int]) -> int:
        return plain(hand)

    def side_values(self, values: list[int]) -> list[int]:
        return [sum(values[s] for s in seats) for seats in self.sides]

    def finish(self, model: DealModel) -> tuple[list[int], list[int]]:
        values = [self.value(h) for h in model.hands]
        wrote = self.score(model.end, values)
        self.totals = [a + b for a, b in zip(self.totals, wrote)]
        self.played += 1
        return values, wrote


class SportRef(Ref):
    def __init__(self, players, options, deals):
        super().__init__(players, options, pairs=True)
        self.deals = deals

    def lead(self, deal):
        return self.played % 4, None  # deal k: seat k mod 4, any tile

    def value(self, hand):
        if self.options["lone_doubles"]:
            return lone_value(hand, 25, 50, 75)
        return plain(hand)

    def score(self, end, values):
        a, b = self.side_values(values)
        wrote = [0, 0]
        if end[0] == "domino":
            side = end[1] % 2
            wrote[side] = (a, b)[1 - side]
        elif a < b:
            wrote[0] = b
        elif b < a:
            wrote[1] = a
        return wrote

    def check_outcome(self, out):
        assert self.played == self.deals
        a, b = self.totals
        if a == b:
            assert out.winners == () and out.losers == ()
        else:
            w = 0 if a > b else 1
            assert out.winners == (w,) and out.losers == (1 - w,)


class KozelRef(Ref):
    def __init__(self, players, options):
        super().__init__(players, options, pairs=players == 4 and options["teams"] == "pairs")
        self.pending = [0] * len(self.sides)  # hanging or remembered points
        self.carry = 0
        self.last_ender: int | None = None

    def is_void(self, deal):
        # §2.9 and §5: five doubles, or six tiles of one suit (a double counts once), hands only.
        for hand in deal.hands:
            if sum(1 for t in hand if is_double(t)) >= 5:
                return True
            for n in range(7):
                if sum(1 for t in hand if n in HALVES[t]) >= 6:
                    return True
        return False

    def lead(self, deal):
        if self.last_ender is not None:
            return self.last_ender, None
        if self.players == 4:
            one_one = HALVES.index((1, 1))
            return find_in_hands(deal, one_one), one_one
        return double_order_lead(deal, [1, 2, 3, 4, 5, 6, 0])

    def value(self, hand):
        return lone_value(hand, self.options["zero_zero"], 50, None)

    def score(self, end, values):
        k = len(self.sides)
        sv = self.side_values(values)
        total = sum(values)
        raw = [0] * k
        remember = self.options["rule13"] == "remember"
        self.last_ender = end[1]
        if end[0] == "domino":
            w = self.side_of[end[1]]
            if remember:
                self.pending[w] = 0
            raw = [0 if i == w else sv[i] for i in range(k)]
        else:
            mode = self.options["fish"]
            if mode == "each_writes_own":
                raw = list(sv)
            else:
                cmp = sv if mode == "heavier_pair_takes_all" else values
                top = max(cmp)
                tops = [i for i, v in enumerate(cmp) if v == top]
                if len(tops) > 1:  # eggs / a pot: nobody writes, the total waits
                    self.carry += total
                    return [0] * k
                taker = tops[0] if mode == "heavier_pair_takes_all" else self.side_of[tops[0]]
                raw[taker] = total
                if remember:
                    for i in range(k):
                        if i != taker:
                            self.pending[i] = 0
        if self.carry:
            top = max(raw)
            if top > 0 and raw.count(top) == 1:
                raw[raw.index(top)] += self.carry
                self.carry = 0
        return [self._rule13(i, raw[i]) for i in range(k)]

    def _rule13(self, i, amount):
        if amount == 0 or self.totals[i] > 0:
            return amount
        mode = self.options["rule13"]
        if mode == "drop":
            return amount if amount >= 13 else 0
        if mode == "hang":
            amount += self.pending[i]
            if amount < 13:
                self.pending[i] = amount
                return 0
            self.pending[i] = 0
            return amount
        if amount <= 12:  # remember: only the deal's own sum is tested
            self.pending[i] += amount
            return 0
        amount += self.pending[i]
        self.pending[i] = 0
        return amount

    def check_outcome(self, out):
        limit = self.options["target"] + 1
        goats = tuple(i for i, t in enumerate(self.totals) if t >= limit)
        assert goats, "the game ended without a goat"
        winners = tuple(i for i in range(len(self.sides)) if i not in goats)
        assert out.losers == (goats if winners else ())  # every side a goat: drawn, no losers
        assert out.winners == winners
        assert out.dry == tuple(i for i in winners if self.totals[i] == 0)

    def over(self):
        return any(t >= self.options["target"] + 1 for t in self.totals)


class DrawRef(Ref):
    """draw and block (§3 draw, block; §5 draw / block fish)."""

    def __init__(self, players, options):
        super().__init__(players, options, pairs=False)
        self.last_winner: int | None = None

    def lead(self, deal):
        if self.played and self.last_winner is not None:
            return self.last_winner, None
        return double_order_lead(deal, [6, 5, 4, 3, 2, 1, 0])

    def value(self, hand):
        if self.options["lone_doubles"]:
            return lone_value(hand, 25, 50, 75)
        return plain(hand)

    def score(self, end, values):
        wrote = [0] * self.players
        if end[0] == "domino":
            w = end[1]
            wrote[w] = sum(values) - values[w]
        else:
            low = min(values)
            if values.count(low) > 1:
                self.last_winner = None
                return wrote
            w = values.index(low)
            wrote[w] = sum(values) - 2 * low
        self.last_winner = w
        return wrote

    def target(self):
        return self.options["target"]

    def over(self):
        return any(t >= self.target() for t in self.totals)

    def check_outcome(self, out):
        reached = tuple(i for i, t in enumerate(self.totals) if t >= self.target())
        assert reached and out.winners == reached
        assert out.losers == tuple(i for i in range(self.players) if i not in reached)


class ClubRef(DrawRef):
    def lead(self, deal):
        return double_order_lead(deal, [6, 5, 4, 3, 2, 1, 0])  # every deal (004)

    def value(self, hand):
        return plain(hand)

    def score(self, end, values):
        wrote = [0] * self.players
        if end[0] == "domino":
            w = end[1]
        else:
            low = min(values)
            if values.count(low) > 1:
                return wrote
            w = values.index(low)
        wrote[w] = sum(values) - values[w]
        return wrote

    def target(self):
        return 101


def make_ref(vid, players, options, deals):
    if vid == "sport":
        return SportRef(players, options, deals)
    if vid == "kozel":
        return KozelRef(players, options)
    if vid in ("draw", "block"):
        return DrawRef(players, options)
    if vid == "club":
        return ClubRef(players, options)
    raise AssertionError(vid)


# -- the playout driver ----------------------------------------------------------------------------

POLICIES = ("random", "heavy_first", "light_first", "hoard_blanks")


def choose(policy: str, legal: list, rnd: random.Random):
    if policy == "random" or rnd.random() < 0.1:
        return rnd.choice(legal)
    if policy == "heavy_first":
        return max(legal, key=lambda p: (pips(p.tile), rnd.random()))
    if policy == "light_first":
        return min(legal, key=lambda p: (pips(p.tile), rnd.random()))
    # keep 0-0 and 6-6 to the end, so lone doubles are left in hands
    return min(legal, key=lambda p: (p.tile in (ZZ, SS), rnd.random()))


def random_deal(rnd: random.Random, players: int, hand_size: int) -> Deal:
    order = list(range(28))
    rnd.shuffle(order)
    hands = tuple(tuple(order[s * hand_size : (s + 1) * hand_size]) for s in range(players))
    return Deal(hands, tuple(order[players * hand_size :]))


@dataclass
class Stats:
    """What a batch of playouts met, so a sweep can prove the rare branches were reached."""

    seen: dict = field(default_factory=dict)

    def add(self, what: str) -> None:
        self.seen[what] = self.seen.get(what, 0) + 1


def play_game(vid: str, players: int, options: dict, seed: int, policy: str, deals: int | None = None,
              stats: Stats | None = None, probe: bool = True) -> None:
    rnd = random.Random(seed)
    v = variant(vid)
    game = v.new_game(players, options, deals) if deals is not None else v.new_game(players, options)
    resolved = game.options
    ref = make_ref(vid, players, resolved, game.deals)
    hand_size, undealt, draw, keep = expected_shape(vid, players)
    shape = game.shape
    assert (shape.players, shape.hand_size, shape.undealt) == (players, hand_size, undealt)
    stats = stats or Stats()
    starts = 0
    while game.outcome() is None:
        starts += 1
        assert starts <= MAX_DEALS * 2
        deal = random_deal(rnd, players, hand_size)
        void = ref.is_void(deal)
        state = game.start(deal)
        if state is None:
            assert void, "a playable deal was declared void"
            assert game.records[-1].void
            stats.add("void")
            continue
        assert not void, "a deal with 5 doubles or 6 of a suit was played"
        leader, lead_tile = ref.lead(deal)
        assert state.leader == leader
        model = DealModel.start(deal, draw, keep, leader, lead_tile)
        if lead_tile is None:
            assert not state.history, "a free lead was placed for the leader"
        check_step(state, model)
        moves = 0
        while state.to_move() != TERMINAL:
            moves += 1
            assert moves <= 28, "a deal that does not end"
            if probe and rnd.random() < 0.3:
                probe_illegal(state, model, rnd)
            p = choose(policy, state.legal_plays(), rnd)
            seat = state.to_move()
            if rnd.random() < 0.5:
                state.apply(p)
            else:
                state.push(p, seat)
            model.play(p.tile, p.end)
            check_step(state, model)
        if draw == UNTIL_FIT and keep:
            assert len(state.bazaar) - state.drawn >= keep, "the last bazaar tile was drawn"
        stats.add(model.end[0])
        if model.end[0] == "fish" and keep and len(model.stock) - model.taken == keep:
            stats.add("fish with the last tile kept")
        if any(e[0] == "drew" for e in model.events):
            stats.add("drew")
        if any(e[0] == "passed" for e in model.events):
            stats.add("passed")
        before = (list(ref.totals), list(getattr(ref, "pending", [])), getattr(ref, "carry", 0))
        values, wrote = ref.finish(model)
        _note_branches(stats, ref, values, model, before)
        rec = game.finish(state)
        assert list(rec.values) == values, "hand values"
        assert list(rec.wrote) == wrote, (rec.notes, values)
        assert list(rec.totals) == ref.totals
        assert list(game.totals) == ref.totals
        if vid == "kozel":
            assert game.carry.amount == ref.carry
            if ref.options["rule13"] != "drop":
                assert game.rule13.pending == ref.pending
        if vid == "sport":
            assert game.outcome() is None or ref.played == ref.deals
    out = game.outcome()
    played = [r for r in game.records if r.void is None]
    assert len(played) == ref.played
    assert [sum(r.wrote[i] for r in played) for i in range(len(ref.totals))] == ref.totals
    assert tuple(out.totals) == tuple(ref.totals)
    ref.check_outcome(out)
    if vid != "sport":
        assert ref.over()
    stats.add("game")
    if getattr(out, "dry", ()):
        stats.add("dry")


def _note_branches(stats: Stats, ref: Ref, values, model, before) -> None:
    for h in model.hands:
        if h == {ZZ}:
            stats.add("lone 0-0")
        elif h == {SS}:
            stats.add("lone 6-6")
        elif h == {ZZ, SS}:
            stats.add("0-0 and 6-6")
    if isinstance(ref, KozelRef):
        totals, pending, carry = before
        if ref.carry > carry:
            stats.add("eggs carried")
        if carry and ref.carry == 0:
            stats.add("eggs awarded")
        if carry and ref.carry > carry:
            stats.add("eggs accumulated")
        if any(ref.pending[i] > pending[i] for i in range(len(pending))):
            stats.add("points hang or are remembered")
        if any(p and not q and ref.totals[i] > totals[i] for i, (p, q) in enumerate(zip(pending, ref.pending))):
            stats.add("pending points opened")


# -- the property tests -------------------------------------------------------------------------

seeds = st.integers(min_value=0, max_value=2**63)
policies = st.sampled_from(POLICIES)


def examples(n: int):
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@examples(80)
@given(seed=seeds, policy=policies, lone=st.booleans(), deals=st.sampled_from([4, 8, 12]))
def test_sport_playouts(seed, policy, lone, deals):
    play_game("sport", 4, {"lone_doubles": lone}, seed, policy, deals=deals)


@pytest.mark.parametrize("players, teams", [(4, "pairs"), (4, "none"), (2, None), (3, None)])
@examples(80)
@given(
    seed=seeds,
    policy=policies,
    rule13=st.sampled_from(["drop", "hang", "remember"]),
    fish=st.sampled_from(["heavier_pair_takes_all", "each_writes_own", "max_takes_all"]),
    zero_zero=st.sampled_from([25, 10]),
    target=st.sampled_from([100, 50, 150]),
)
def test_kozel_playouts(players, teams, seed, policy, rule13, fish, zero_zero, target):
    options = {"rule13": rule13, "fish": fish, "zero_zero": zero_zero, "target": target}
    if teams:
        options["teams"] = teams
    play_game("kozel", players, options, seed, policy)


@pytest.mark.parametrize("players", [2, 3, 4])
@examples(40)
@given(seed=seeds, policy=policies, lone=st.booleans(), target=st.sampled_from([100, 50, 150]))
def test_draw_playouts(players, seed, policy, lone, target):
    play_game("draw", players, {"lone_doubles": lone, "target": target}, seed, policy)


@pytest.mark.parametrize("players", [2, 3, 4])
@examples(40)
@given(seed=seeds, policy=policies, lone=st.booleans(), target=st.sampled_from([100, 50, 150]))
def test_block_playouts(players, seed, policy, lone, target):
    play_game("block", players, {"lone_doubles": lone, "target": target}, seed, policy)


@pytest.mark.parametrize("players", [2, 3, 4])
@examples(40)
@given(seed=seeds, policy=policies)
def test_club_playouts(players, seed, policy):
    play_game("club", players, {}, seed, policy)


# -- a deterministic sweep: the rare branches are really reached by the checks above -------------


@pytest.mark.slow
def test_sweep_reaches_the_rare_branches():
    stats = Stats()
    for i in range(12):
        for players, teams in ((4, "pairs"), (4, "none"), (2, None), (3, None)):
            for fish in ("heavier_pair_takes_all", "max_takes_all", "each_writes_own"):
                opts = {"fish": fish, "rule13": ("hang", "remember", "drop")[i % 3], "zero_zero": (25, 10)[i % 2]}
                if teams:
                    opts["teams"] = teams
                play_game("kozel", players, opts, 1000 * i + players, POLICIES[i % 4], stats=stats, probe=False)
    for i in range(20):
        for players in (2, 3, 4):
            play_game("club", players, {}, i, POLICIES[i % 4], stats=stats, probe=False)
            play_game("draw", players, {"lone_doubles": True}, i, "hoard_blanks", stats=stats, probe=False)
            play_game("block", players, {"lone_doubles": True}, i, POLICIES[i % 4], stats=stats, probe=False)
    for what in ("domino", "fish", "drew", "passed", "void", "lone 0-0", "lone 6-6", "eggs carried",
                 "eggs awarded", "points hang or are remembered", "pending points opened", "dry", "0-0 and 6-6",
                 "fish with the last tile kept"):
        assert stats.seen.get(what), f"no playout reached {what!r}: {stats.seen}"
