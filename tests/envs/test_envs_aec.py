"""PettingZoo's own tests on every game and seat count (issue 35 item 1): ``api_test`` with no
warning, ``seed_test``, ``render_test``, a pickle round-trip, ``max_cycles``; and what the
environment promises beyond them: an illegal action is a fault, the rewards are the game's
scoring, a reset with a seed is the deal ``referee match --seed`` plays."""

from __future__ import annotations

import pickle
import warnings

import pytest

pytest.importorskip("pettingzoo")

import numpy as np
from pettingzoo.test import api_test, render_test, seed_test
from support import random_play

from referee.engine.core.deal import deal_from_seed
from referee.engine.core.shuffle import BLAKE2B
from referee.engine.registry import variant, variant_names
from referee.envs import aec_env

GAMES = [(g, n) for g in variant_names() for n in variant(g).players]


@pytest.mark.parametrize("episode", ["deal", "game"])
@pytest.mark.parametrize(("game", "players"), GAMES)
def test_pettingzoo_api_test_passes_with_no_warning(game, players, episode):
    env = aec_env(game, players, episode=episode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env, num_cycles=1000)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_seed_render_and_pickle(game, players):
    seed_test(lambda: aec_env(game, players, episode="game"), num_cycles=500)
    render_test(lambda render_mode=None: aec_env(game, players, render_mode=render_mode))
    env = aec_env(game, players, render_mode="ansi")
    env.reset(seed=5)
    for _ in range(3):
        env.step(int(np.flatnonzero(env.infos[env.agent_selection]["action_mask"])[0]))
        if env.terminations[env.agent_selection]:
            break
    copy = pickle.loads(pickle.dumps(env))
    assert copy.render() == env.render()
    assert copy.agent_selection == env.agent_selection
    for agent in env.possible_agents:
        if agent in env.agents:
            assert np.array_equal(copy.observe(agent), env.observe(agent))
            assert np.array_equal(copy.infos[agent]["action_mask"], env.infos[agent]["action_mask"])
    # the copy plays on by itself, the same as the original
    assert random_play(copy, 8) == random_play(env, 8)


def test_max_cycles_truncates_every_agent():
    env = aec_env("block", 2, episode="game", max_cycles=5)
    made = random_play(env, 3)
    assert made == 5
    env.reset(seed=3)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.infos[env.agent_selection]["action_mask"])[0]))
    assert all(env.truncations.values()) and not any(env.terminations.values())


def test_a_seeded_reset_deals_what_referee_match_deals():
    env = aec_env("block", 2)
    env.reset(seed=77)
    shape = variant("block").shape(2)
    deal = deal_from_seed(77, 0, shape, BLAKE2B)
    for seat, hand in enumerate(deal.hands):
        obs = env.observe(f"player_{seat}")
        placed = obs[56:84]  # placed_by, the observer's own row: a forced lead is already on the table
        assert sorted(np.flatnonzero(obs[:28] + placed).tolist()) == sorted(hand)


def test_an_action_outside_the_mask_is_the_movers_fault():
    env = aec_env("block", 2)
    env.reset(seed=1)
    agent = env.agent_selection
    mask = env.infos[agent]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    assert env.infos[agent]["fault"] == "illegal action"
    seat = int(agent[-1])
    rec = env.table.last
    assert rec.end.reason == "fault" and rec.end.seat == seat
    # block's fault scoring: the other seat writes what the faulting seat holds
    assert env._cumulative_rewards[agent] == 0 and env._cumulative_rewards[f"player_{1 - seat}"] == rec.values[seat] > 0


@pytest.mark.parametrize(("game", "players", "reward"), [("block", 2, "points"), ("kozel", 4, "points"), ("kozel", 4, "margin"),
                                                          ("draw", 3, "margin")])
def test_the_rewards_are_the_deals_scoring_times_the_sense(game, players, reward):
    env = aec_env(game, players, reward=reward)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(0)
    env.reset(seed=4)
    for agent in env.agent_iter():
        _, r, term, trunc, info = env.last()
        totals[agent] += r
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"]))))
    rec, table = env.table.last, env.table
    sense = variant(game).sense
    wrote = [sense * w for w in rec.wrote]
    for seat, agent in enumerate(env.possible_agents):
        own = wrote[table.game.side_of[seat]]
        want = own if reward == "points" else own - (sum(wrote) - own) / (len(wrote) - 1)
        assert totals[agent] == pytest.approx(want)
    if reward == "margin":
        assert sum(totals[a] for a in env.possible_agents if int(a[-1]) in [s[0] for s in table.game.sides]) == pytest.approx(0)


def test_bad_arguments_are_refused_in_words():
    from referee.engine.core.errors import BadOption, UnknownVariant

    with pytest.raises(UnknownVariant, match="unknown variant 'chess'"):
        aec_env("chess")
    with pytest.raises(BadOption, match="played by 4 players, not 3"):
        aec_env("sport", 3)
    with pytest.raises(BadOption, match="no option"):
        aec_env("block", 2, {"nonsense": 1})
    with pytest.raises(ValueError, match="reward='money'"):
        aec_env("block", 2, reward="money")
    with pytest.raises(ValueError, match="render_mode='rgb'"):
        aec_env("block", 2, render_mode="rgb")
    env = aec_env("block", 2)
    with pytest.raises(ValueError, match="out of range"):
        env.reset(seed=-1)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="give an action"):
        env.step(None)


def test_kolbasa_observations_are_current_for_every_seat():
    """kolbasa's rows, lines and counts come whole with each ``turn``, so the seat not to move
    saw them as of its last turn (issue 40 §4: 10,089 of 20,748 observations were stale).  Every
    seat's observation, after every move, equals what the engine says now, read from its state
    directly: the public rows (the seat's own is its ``hand``), the lines, each row's length."""
    from referee.engine.core.tiles import N_TILES, tile

    env = aec_env("kolbasa", 2, episode="game")
    codec = env.table.codec
    at = {s.name: s.start for s in codec.sections}
    checked = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        for _agent in env.agent_iter(400):
            _, _, term, trunc, info = env.last()
            state = env.table.state
            rows = state.public_rows()
            lay = state.layout
            table = {tile(*t) for t in [*([tuple(lay.start)] if lay.start[0] >= 0 else []), *lay.lines[0], *lay.lines[1]]}
            for me in range(2):
                obs = env.observe(f"player_{me}")
                for s in range(2):
                    want = np.zeros(N_TILES, np.float32)
                    want[[t for t in rows[s] if t is not None]] = 1
                    got = obs[at["rows"] + ((s - me) % 2) * N_TILES:][:N_TILES]
                    assert np.array_equal(got, want), (seed, me, s)
                    assert obs[at["counts"] + (s - me) % 2] == len(state.rows[s])
                hand = np.zeros(N_TILES, np.float32)
                hand[[t for t in rows[me] if t is not None]] = 1
                assert np.array_equal(obs[at["hand"]:at["hand"] + N_TILES], hand)
                assert set(np.flatnonzero(obs[at["table"]:at["table"] + N_TILES])) == table
                checked += 1
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert checked > 400

