"""The engine's osel, telephone and muggins against an independent reading of RULES.md.

``tests/reference/cross_rules.py`` (:class:`RefGame`) re-derives the three cross games from
RULES.md alone, in the protocol's notation.  Here the same seeded deals are played through both,
whole games at a time, with the same random moves, and after every move the two must agree on:
the seat to move, every legal move (closed doubles and ``stop`` included), every event the move
caused (placements, points written during play, draws tile by tile, passes), how and when each
deal ends, what each side wrote at its end, the totals, and how the game ends.

Thousands of deals per game and player count, telephone under every combination of its
options.  The policy leans towards closing and stopping, so osel's rare turns (TURN-6's
close-both-ends fish, extras, stop) come up often; a sweep checks that they did.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from reference.cross_rules import RefGame

from referee.engine import (
    Drew,
    Passed,
    Placed,
    Scored,
    deal_from_seed,
    play,
    tile_name,
    variant,
)
from referee.engine.core.layout import END_INDEX, END_NAMES
from referee.engine.core.line import STOP
from referee.engine.core.tiles import parse_tile

pytestmark = pytest.mark.slow  # thousands of deals against the independent reading

#: (variant, players, options, deals, seed): every player count, telephone's option values
#: (2000 or more deals per game and player count; whole games, so a case plays a few more).
CASES = [
    ("osel", 2, {}, 2000, 1),
    ("osel", 3, {}, 2000, 2),
    ("osel", 4, {}, 2000, 3),
    ("telephone", 2, {}, 1000, 4),
    ("telephone", 2, {"scale": 5, "endgame": "winner_takes"}, 1000, 6),
    ("telephone", 4, {}, 1000, 5),
    ("telephone", 4, {"scale": 5}, 1000, 7),
    ("telephone", 4, {"endgame": "winner_takes"}, 1000, 8),
    ("muggins", 2, {}, 2000, 9),
    ("muggins", 3, {}, 2000, 10),
    ("muggins", 4, {}, 2000, 11),
]


def ref_move(p) -> tuple:
    if p == STOP:
        return ("stop",)
    return ("place", tile_name(p.tile), None if p.end is None else END_NAMES[p.end], p.closed)


def engine_move(m: tuple):
    if m == ("stop",):
        return STOP
    _, tile, end, closed = m
    return play(parse_tile(tile), None if end is None else END_INDEX[end], closed)


def ref_events(history) -> list[tuple]:
    out: list[tuple] = []
    for e in history:
        if type(e) is Placed:
            out.append(("placed", e.seat, tile_name(e.tile), None if e.end is None else END_NAMES[e.end], e.closed, e.forced))
        elif type(e) is Scored:
            out.append(("scored", e.seat, e.points, e.count))
        elif type(e) is Drew:
            out += [("drew", e.seat, tile_name(t)) for t in e.tiles]
        elif type(e) is Passed:
            out.append(("passed", e.seat))
        else:  # pragma: no cover
            raise AssertionError(e)
    return out


def choose(rng: random.Random, legal: list):
    """Uniform, except that a closed double or stop is taken half the time when offered."""
    rare = [p for p in legal if p.closed or p == STOP]
    if rare and rng.random() < 0.5:
        return rng.choice(rare)
    return rng.choice(legal)


def play_games(vid: str, players: int, options: dict, at_least: int, seed: int, seen: Counter) -> int:
    """Whole games until ``at_least`` deals were played; the number of deals played."""
    v = variant(vid)
    shape = v.shape(players, options)
    rng = random.Random(seed)
    index = 0
    deals = 0
    while deals < at_least:
        game = v.new_game(players, options)
        ref = RefGame(vid, players, {k: str(x) for k, x in options.items()})
        while game.outcome() is None:
            deal = deal_from_seed(seed, index, shape)
            index += 1
            where = f"{vid} {players} {options} stream {index - 1}"
            got = ref.start_deal([[tile_name(t) for t in h] for h in deal.hands],
                                 [tile_name(t) for t in deal.undealt] if shape.undealt == "bazaar" else [])
            state = game.start(deal)
            if state is None:
                assert got == [("deal_end", "redeal", [0] * len(game.sides), list(game.totals))], where
                seen["redeal"] += 1
                continue
            deals += 1
            shown = len(state.history)
            mine = ref_events(state.history)
            while True:
                if state.end is not None:
                    rec = game.finish(state)
                    end_wrote = [w - p for w, p in zip(rec.wrote, rec.played)] if rec.played else list(rec.wrote)
                    mine.append(("deal_end", rec.end.reason, end_wrote, list(rec.totals)))
                assert mine == got, f"{where}: events differ\nengine    {mine}\nreference {got}"
                if state.end is not None:
                    break
                seat = state.to_move()
                assert ref.to_move() == seat, where
                legal = state.legal_plays()
                assert sorted(ref_move(p) for p in legal) == ref.legal(), f"{where}: legal moves differ at seat {seat}"
                assert all(engine_move(ref_move(p)) == p for p in legal)
                p = choose(rng, legal)
                seen["closed" if p.closed else "stop" if p == STOP else "continuing" if state.continuing else "place"] += 1
                got = ref.play(ref_move(p))
                state.push(p, seat)
                mine = ref_events(state.history[shown:])
                shown = len(state.history)
                for e in mine:
                    seen[e[0]] += 1
            assert ref.deal_over() and ref.totals() == list(game.totals), where
            seen[f"{vid} {rec.end.reason}"] += 1
            last = state.history[-2:]
            if vid == "osel" and rec.end.reason == "fish" and all(type(e) is Placed and e.closed for e in last):
                seen["osel close-both-ends fish"] += 1
        outcome = game.outcome()
        assert ref.game_over(), where
        assert ref.winners() == list(outcome.winners), where
        assert ref.losers() == list(outcome.losers), where  # none for a drawn game
        seen[f"{vid} game{' drawn' if outcome.drawn else ''}"] += 1
    return deals


@pytest.mark.parametrize("vid, players, options, deals, seed", CASES, ids=[f"{c[0]}-{c[1]}-{'-'.join(map(str, c[2].values())) or 'default'}" for c in CASES])
def test_engine_agrees_with_the_reference(vid, players, options, deals, seed):
    seen: Counter = Counter()
    play_games(vid, players, options, deals, seed, seen)
    # the sweep reached what it is for
    assert seen["placed"] and seen[f"{vid} domino"] and seen[f"{vid} fish"]
    if vid == "osel":
        assert seen["closed"] and seen["stop"] and seen["continuing"] and seen["osel close-both-ends fish"]
    else:
        assert seen["scored"]
    if players < 4 or vid == "muggins":
        assert seen["drew"]
