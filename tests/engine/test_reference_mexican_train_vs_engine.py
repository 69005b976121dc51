"""The engine's mexican_train against an independent reading of RULES.md.

``tests/reference/mexican_train_rules.py`` (:class:`RefGame`) re-derives mexican_train from
RULES.md alone.  Here the same seeded deals are played through both, whole seven-round games at a
time with 2, 3 and 4 players, with the same random moves, and after every move the two must
agree on: the seat to move, every legal move (and the refusal of a random other one), every event the move caused (placements, draws tile
by tile, passes), which trains carry markers, which double is open, how and when each round ends,
what each seat wrote, the totals, and the winners.

Translation between the two notations: the engine's train index ``s`` is the reference's
``"seat{s}"`` and index ``n`` (the number of players) its ``"mexican"``; the engine places the
station as a forced first event, which the reference leaves implied; the reference's marker
events are checked against the engine's marker state instead of its history, which has none.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from reference.mexican_train_rules import MEXICAN, RefGame, station

from referee.engine import Drew, Passed, Placed, RulesError, deal_from_seed, tile_name, variant
from referee.engine.core.tiles import parse_tile
from referee.engine.core.trains import train_play

pytestmark = pytest.mark.slow  # hundreds of whole games against the independent reading

#: (players, games, seed): seven rounds a game
CASES = [(2, 120, 1), (3, 120, 2), (4, 120, 3)]


def train_name(players: int, e: int) -> str:
    return MEXICAN if e == players else f"seat{e}"


def train_index(players: int, name: str) -> int:
    return players if name == MEXICAN else int(name.removeprefix("seat"))


def ref_events(players: int, history) -> list[tuple]:
    out: list[tuple] = []
    for e in history:
        if type(e) is Placed:
            out.append(("placed", e.seat, tile_name(e.tile), train_name(players, e.end)))
        elif type(e) is Drew:
            out += [("drew", e.seat, tile_name(t)) for t in e.tiles]
        elif type(e) is Passed:
            out.append(("passed", e.seat))
        else:  # pragma: no cover
            raise AssertionError(e)
    return out


def without_markers(events: list[tuple]) -> list[tuple]:
    return [e for e in events if e[0] != "marker"]


def play_games(players: int, games: int, seed: int, seen: Counter) -> None:
    v = variant("mexican_train")
    shape = v.shape(players, {})
    rng = random.Random(seed)
    for g in range(games):
        game = v.new_game(players, {})
        ref = RefGame("mexican_train", players, {})
        for k in range(7):
            index = 7 * g + k  # deal i of the stream sets aside (6 − i mod 7)-(6 − i mod 7)
            deal = deal_from_seed(seed, index, shape)
            where = f"mexican_train {players} seed {seed} deal {index} (round {k})"
            got = ref.start_deal([[tile_name(t) for t in h] for h in deal.hands], [tile_name(t) for t in deal.undealt])
            state = game.start(deal)
            assert state is not None, where
            first = state.history[0]
            assert type(first) is Placed and first.end is None and first.forced and tile_name(first.tile) == station(k), where
            shown = len(state.history)
            mine = ref_events(players, state.history[1:])
            while True:
                if state.end is not None:
                    rec = game.finish(state)
                    mine.append(("deal_end", rec.end.reason, list(rec.wrote), list(rec.totals)))
                assert mine == without_markers(got), f"{where}: events differ\nengine    {mine}\nreference {got}"
                markers = [bool(state.markers >> s & 1) for s in range(players)]
                assert markers == [ref.trains[f"seat{s}"].marker for s in range(players)], f"{where}: markers differ"
                if state.end is not None:
                    break
                opened = None if state.open_train < 0 else train_name(players, state.open_train)
                assert opened == ref.open_double, f"{where}: open double differs"
                seat = state.to_move()
                assert ref.to_move() == seat, where
                legal = state.legal_plays()
                mapped = sorted(("place", tile_name(p.tile), train_name(players, p.end)) for p in legal)
                assert mapped == ref.legal(), f"{where}: legal moves differ at seat {seat}\nengine    {mapped}\nreference {ref.legal()}"
                # a random move that is not legal is refused by both
                bad = ("place", tile_name(rng.randrange(28)), train_name(players, rng.randrange(players + 1)))
                if bad not in ref.legal():
                    with pytest.raises(ValueError):
                        ref.play(bad)
                    with pytest.raises(RulesError):
                        state.check(train_play(parse_tile(bad[1]), train_index(players, bad[2])), seat)
                    seen["refused"] += 1
                p = rng.choice(legal)
                move = ("place", tile_name(p.tile), train_name(players, p.end))
                assert train_play(parse_tile(move[1]), train_index(players, move[2])) == p
                got = ref.play(move)
                state.push(p, seat)
                mine = ref_events(players, state.history[shown:])
                shown = len(state.history)
                for e in got:
                    seen[e[0] if e[0] != "marker" else f"marker {'on' if e[2] else 'off'}"] += 1
            assert ref.deal_over() and ref.totals() == list(game.totals), where
            # the fisherman is the last placer (MT-11); a domino's seat is the one whose hand emptied
            assert rec.end.seat == (ref.last_placer if rec.end.reason == "fish" else [len(h) for h in ref.hands].index(0)), where
            seen[rec.end.reason] += 1
            if rec.end.reason == "fish" and ref.open_double is not None:
                seen["fish on an open double"] += 1
            if rec.end.reason == "domino" and ref.open_double is not None:
                seen["out on a double"] += 1
        outcome = game.outcome()
        assert outcome is not None and ref.game_over(), f"seed {seed} game {g}"
        assert ref.winners() == list(outcome.winners), f"seed {seed} game {g}"
        assert ref.losers() == list(outcome.losers), f"seed {seed} game {g}"
        seen["shared win" if len(outcome.winners) > 1 else "game"] += 1


@pytest.mark.parametrize("players, games, seed", CASES, ids=[f"{c[0]}-players" for c in CASES])
def test_engine_agrees_with_the_reference(players, games, seed):
    seen: Counter = Counter()
    play_games(players, games, seed, seen)
    # the sweep reached what it is for
    for what in ("refused", "placed", "drew", "passed", "marker on", "marker off", "domino", "fish", "out on a double"):
        assert seen[what], (what, seen)
