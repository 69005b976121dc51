"""The OpenSpiel games (issue 35 item 3): every game registered as ``referee_<game>`` passes
OpenSpiel's ``random_sim_test`` (serialization included) for every seat count, loads through
Shimmy's ``OpenSpielCompatibilityV0``, takes house rules as parameters, and plays the same game
as the AEC environment (item 4): the same deal dealt by chance nodes, the same legal actions,
observations and returns at every step — and the AEC environment is ``referee match``'s game
(tests/envs/test_envs_same_game.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import pyspiel
from support import random_play

import referee.envs.openspiel  # noqa: F401  (registers the games)
from referee.engine.core.deal import deal_from_seed
from referee.engine.core.shuffle import BLAKE2B
from referee.engine.registry import variant, variant_names
from referee.envs import aec_env

GAMES = [(g, n) for g in variant_names() for n in variant(g).players]
#: simulations of random_sim_test: the issue's 100 for every game and seat count in the slow
#: tier (some 5 s a game under load, kolbasa's long deals 25 s), 10 in the fast one
SIMS, FAST_SIMS = 100, 10


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_random_sim_test_passes(game, players):
    loaded = pyspiel.load_game(f"referee_{game}", {"players": players})
    pyspiel.random_sim_test(loaded, num_sims=FAST_SIMS, serialize=True, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize(("game", "players"), GAMES)
def test_random_sim_test_passes_a_hundred_times(game, players):
    loaded = pyspiel.load_game(f"referee_{game}", {"players": players})
    pyspiel.random_sim_test(loaded, num_sims=SIMS, serialize=True, verbose=False)


def test_every_game_is_registered_with_its_seat_counts_and_options():
    names = {g.short_name for g in pyspiel.registered_games()}
    for g in variant_names():
        assert f"referee_{g}" in names
        t = pyspiel.load_game(f"referee_{g}").get_type()
        assert (t.min_num_players, t.max_num_players) == (min(variant(g).players), max(variant(g).players))
    kozel = pyspiel.load_game("referee_kozel", {"players": 4, "rule13": "hang"})
    assert kozel.get_parameters()["rule13"] == "hang" and kozel.num_players() == 4
    with pytest.raises(Exception, match="rule13='sideways' is not allowed"):
        pyspiel.load_game("referee_kozel", {"rule13": "sideways"})
    with pytest.raises(Exception, match="played by 4 players, not 3"):
        pyspiel.load_game("referee_sport", {"players": 3})


@pytest.mark.parametrize("game", variant_names())
def test_shimmy_loads_it(game):
    from shimmy import OpenSpielCompatibilityV0

    env = OpenSpielCompatibilityV0(game_name=f"referee_{game}")
    assert random_play(env, 3) > 3
    env.close()


def same_deal(game: str, players: int, seed: int) -> int:
    """Deal ``seed``'s first deals (void ones too) by chance nodes and play random legal actions
    in OpenSpiel and in the AEC environment side by side; how many decisions were compared."""
    loaded = pyspiel.load_game(f"referee_{game}", {"players": players})
    state = loaded.new_initial_state()
    shape = variant(game).shape(players)
    index = 0
    while state.is_chance_node():
        deal = deal_from_seed(seed, index, shape, BLAKE2B)
        index += 1
        for t in [t for hand in deal.hands for t in hand] + list(deal.undealt):
            assert state.is_chance_node()
            state.apply_action(t)
    env = aec_env(game, players, reward="margin")
    env.reset(seed=seed)
    if state.is_terminal():  # the engine played the deal alone: the environment went on to the next
        assert state.returns() == pytest.approx(env.table.carry) and any(env.table.carry)
        return 0
    assert env.table.cursor == index, "both dealt the same deals, void ones skipped"
    rng = np.random.default_rng(seed)
    compared = 0
    while not state.is_terminal():
        seat = state.current_player()
        agent = env.agent_selection
        assert agent == f"player_{seat}"
        mask = env.infos[agent]["action_mask"]
        assert state.legal_actions() == np.flatnonzero(mask).tolist()
        for s in range(players):
            assert np.array_equal(np.array(state.observation_tensor(s), np.float32), env.observe(f"player_{s}"))
        action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
        env.step(action)
        compared += 1
    assert all(env.terminations.values())
    assert state.returns() == pytest.approx([env._cumulative_rewards[a] for a in env.possible_agents])
    assert sum(state.returns()) == pytest.approx(0)
    clone = pickle.loads(pickle.dumps(state))
    assert clone.returns() == state.returns() and str(clone) == str(state)
    return compared


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_openspiel_and_the_aec_environment_play_the_same_deal(game, players):
    assert sum(same_deal(game, players, seed) for seed in range(5)) > 10


@pytest.mark.slow
@pytest.mark.parametrize("game", variant_names())
def test_two_hundred_deals_of_every_game_are_the_same_in_openspiel(game):
    for seed in range(200):
        same_deal(game, variant(game).default_players, 1000 + seed)


def test_a_deal_with_no_decision_ends_at_once_with_its_margins():
    assert same_deal("block", 2, 294) == 0
