"""The engine's kolbasa against an independent reading of RULES.md.

``tests/reference/kolbasa_rules.py`` (:class:`RefGame`) re-derives kolbasa from RULES.md §3 and
§7 KB-1…KB-15 alone.  Here the same deals are played through both with the same random places,
and after every step the two must agree on: the seat to move, the tile turned up, every legal
place (and the refusal of a random other one), every event the step caused (tiles turned up,
placed, sent to a tail, the sausage a knife cut and where it went), both rows tile by tile, the
layout (the start and both lines, half by half), how and when the deal ends and who ended it,
what each seat wrote, the totals, the eggs waiting, who starts the next deal, and the goat.

Two sweeps: whole games to the goat from seeded deal streams (slow: thousands of deals), and a
quick hypothesis search over arbitrary rows, either starter and arbitrary place choices, which
shrinks any disagreement to a short deal.

Translation between the two notations: the engine's place ``p`` is the reference's
``place_name(p)`` (``None`` for the start); its tiles are ``tile_name`` of the reference's.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.kolbasa_rules import MAX_PLACEMENTS, RefGame

from referee.engine import Deal, IllegalPlay, Placed, deal_from_seed, tile_name, variant
from referee.engine.core.kolbasa import KolbasaDeal
from referee.engine.core.layout import place_name
from referee.engine.core.line import Cut, Play, Tailed, Turned

#: (seed, games): whole games to the goat from the seed's deal stream
CASES = [(1, 500), (2, 500), (3, 500)]


def ref_events(history) -> list[tuple]:
    out: list[tuple] = []
    for e in history:
        if type(e) is Turned:
            out.append(("turned", e.seat, tile_name(e.tile)))
        elif type(e) is Placed:
            out.append(("placed", e.seat, tile_name(e.tile), None if e.end is None else place_name(e.end)))
            assert e.forced == (e.end is None), e  # only the start (KB-9) is placed by the referee
        elif type(e) is Tailed:
            out.append(("tailed", e.seat, tile_name(e.tile)))
        elif type(e) is Cut:
            out.append(("cut", e.seat, e.to, [tile_name(t) for t in e.tiles]))
        else:  # pragma: no cover
            raise AssertionError(e)
    return out


def same_table(state: KolbasaDeal, ref: RefGame, where: str) -> None:
    """Both rows tile by tile and the layout half by half."""
    assert [[tile_name(t) for t in r] for r in state.rows] == ref.rows, f"{where}: rows differ"
    lay = state.layout
    assert lay.start == ref.layout.start, f"{where}: the start differs"
    assert (list(lay.lines[0]), list(lay.lines[1])) == ref.layout.lines, f"{where}: the lines differ"


def place_kind(place: str | None) -> str:
    """``top``, ``bottom``, ``insert`` or ``knife``, for counting what a sweep reached."""
    if place is None:
        return "start"
    kind, _, _ = place.partition(":")
    return "insert" if ":" in place and kind != "knife" else kind


def play_deal(state: KolbasaDeal, ref: RefGame, got: list[tuple], rng: random.Random, where: str,
              seen: Counter) -> tuple:
    """Play one deal to its end through both from their automatic starts (``got``: the
    reference's), comparing after every step; return the reference's ``deal_end`` event."""
    shown = 0
    while True:
        mine = ref_events(state.history[shown:])
        shown = len(state.history)
        if state.end is not None:
            assert ref.deal_over() and got[-1][0] == "deal_end", f"{where}: the engine ended the deal, the reference did not"
            got, end = got[:-1], got[-1]
        for e in got:
            seen[e[0] if e[0] != "placed" else place_kind(e[3])] += 1
        assert mine == got, f"{where}: events differ\nengine    {mine}\nreference {got}"
        same_table(state, ref, where)
        if state.end is not None:
            assert (state.end.reason, state.end.seat) == end[1:3], f"{where}: the deal's end differs"
            seen[state.end.reason] += 1
            return end
        seat = state.to_move()
        assert ref.to_move() == seat, where
        assert state.up is not None and tile_name(state.up) == ref.up(), where
        legal = state.legal_plays()
        mapped = sorted(("place", tile_name(p.tile), place_name(p.end)) for p in legal)
        assert mapped == ref.legal(), f"{where}: places differ\nengine    {mapped}\nreference {ref.legal()}"
        # a random place that is not legal is refused by both
        bad = rng.choice([0, 1, 100 + rng.randrange(8), 200 + rng.randrange(8), 300 + rng.randrange(8)])
        if ("place", ref.up(), place_name(bad)) not in ref.legal():
            with pytest.raises(ValueError):
                ref.play(("place", ref.up(), place_name(bad)))
            with pytest.raises(IllegalPlay):
                state.check(Play(state.up, bad), seat)
            seen["refused"] += 1
        seen["choices"] += len(legal) > 1
        p = rng.choice(legal)
        if place_kind(place_name(p.end)) == "knife":
            i = p.end - 300
            seen["double knife"] += tile_name(p.tile) in ("0-0", "1-1", "2-2", "3-3", "4-4", "5-5", "6-6")
            seen["last-tile knife"] += len(ref.rows[seat]) == 1
            seen["knife, lines of unequal length"] += len(ref.layout.lines[0]) != len(ref.layout.lines[1])
            seen["knife inside both lines"] += i < min(map(len, ref.layout.lines))
        got = ref.play(("place", tile_name(p.tile), place_name(p.end)))
        state.push(p, seat)


def play_one(game, ref: RefGame, deal: Deal, rng: random.Random, where: str, seen: Counter, cap: bool = False) -> None:
    """One deal of a game through both, then its scores: what each seat wrote, the totals, the
    eggs, and the game's end.  ``cap``: both deals start 3 placements short of KB-14's 1,000."""
    leader = ref.next_leader()  # KB-10
    got = ref.start_deal([[tile_name(t) for t in r] for r in deal.hands])
    state = game.start(deal)
    assert isinstance(state, KolbasaDeal) and state.leader == leader, where
    if cap:
        state.placements = ref.placements = MAX_PLACEMENTS - 3
    eggs = ref.eggs
    _, _, _, wrote, totals = play_deal(state, ref, got, rng, where, seen)
    rec = game.finish(state)
    assert list(rec.wrote) == wrote and list(rec.totals) == totals == ref.totals(), f"{where}: the scores differ"
    assert game.eggs == ref.eggs, f"{where}: the eggs differ"
    seen["eggs"] += ref.eggs > eggs
    seen["eggs written"] += bool(eggs) and not ref.eggs
    outcome = game.outcome()
    assert (outcome is not None) == ref.game_over(), f"{where}: the goat differs"
    if outcome is not None:
        assert list(outcome.losers) == ref.losers() and list(outcome.winners) == ref.winners(), where
        seen["game"] += 1


def play_games(seed: int, games: int, seen: Counter) -> None:
    """Whole games to the goat from the deal stream of ``seed``, one deal after another."""
    v = variant("kolbasa")
    shape = v.shape(2, {})
    rng = random.Random(seed)
    index = 0
    for g in range(games):
        game = v.new_game(2, {})
        ref = RefGame("kolbasa", 2, {})
        while game.outcome() is None:
            play_one(game, ref, deal_from_seed(seed, index, shape), rng, f"kolbasa seed {seed} deal {index} (game {g})", seen)
            index += 1
    seen["deals"] += index


@pytest.mark.slow  # 1,500 whole games, about 4,000 deals
def test_whole_games_agree_with_the_reference():
    seen: Counter = Counter()
    for seed, games in CASES:
        play_games(seed, games, seen)
    # the sweep reached what it is for
    for what in ("refused", "choices", "top", "bottom", "insert", "knife", "cut", "tailed", "domino", "fish", "eggs", "eggs written",
                 "double knife", "last-tile knife", "knife, lines of unequal length", "knife inside both lines"):
        assert seen[what], (what, seen)
    assert seen["game"] == sum(games for _, games in CASES)


def test_a_few_games_agree_with_the_reference():
    """The quick sweep, for every run of the suite."""
    seen: Counter = Counter()
    play_games(7, 12, seen)
    assert seen["knife"] and seen["insert"] and seen["domino"], seen


@settings(max_examples=150, deadline=None)
@given(
    orders=st.lists(st.permutations(range(28)), min_size=1, max_size=3),
    totals=st.tuples(st.integers(0, 100), st.integers(0, 100)),
    eggs=st.integers(0, 60),
    cap=st.booleans(),
    choices=st.randoms(use_true_random=False),
)
@pytest.mark.slow
def test_any_rows_agree_with_the_reference(orders, totals, eggs, cap, choices):
    """A game's next few deals from any rows, from any totals and eggs waiting, with arbitrary
    places; ``cap`` puts each deal 3 placements short of KB-14's limit.  The first rows
    hypothesis tries are orderly and short of knives, the rest as arbitrary as a shuffle, and a
    disagreement shrinks to a short example."""
    game = variant("kolbasa").new_game(2, {})
    ref = RefGame("kolbasa", 2, {})
    game.totals[:] = ref._totals[:] = list(totals)
    game.eggs = ref.eggs = eggs
    seen: Counter = Counter()
    for order in orders:
        if ref.game_over():
            break
        rows = (tuple(order[:14]), tuple(order[14:]))
        play_one(game, ref, Deal(rows, ()), choices, f"rows {[[tile_name(t) for t in r] for r in rows]}", seen, cap)
    if cap:  # three placements cannot empty a row: every deal ended at the limit, as a fish
        assert seen["fish"] == seen["start"] and not seen["domino"], seen
