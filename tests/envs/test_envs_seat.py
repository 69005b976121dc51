"""Gymnasium's environment of one seat (issue 35 item 2): ``check_env`` passes with bots in the
process and bot programs behind the protocol (Python, JavaScript, the sandbox); an opponent that
plays an illegal move loses the deal, one that crashes or keeps silent ends the environment in
one clear error, and no process is left behind."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("gymnasium")

import numpy as np
from gymnasium.utils.env_checker import check_env

from referee.envs import SeatEnv
from referee.envs.seat import OpponentError, random_bot

ROOT = Path(__file__).resolve().parents[2]
RANDOM_PY = str(ROOT / "sample_bots" / "random_bot.py")
RANDOM_JS = str(ROOT / "sample_bots" / "random_bot.js")

#: a bot that answers hello, then at its turns does what ``BEHAVIOUR`` says (argv[1])
BAD_BOT = '''import json, sys, time
how = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "bad", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        if how == "illegal":
            print(json.dumps({"type": "play", "tile": [6, 6], "end": "up"}), flush=True)
        elif how == "silent":
            time.sleep(60)
        elif how == "crash":
            sys.exit(3)
        elif how == "garbage":
            print("not json", flush=True)
    elif msg["type"] == "match_end":
        break
'''


def play_episodes(env: SeatEnv, episodes: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    returns = []
    env.reset(seed=seed)
    for _ in range(episodes):
        _, info = env.reset()
        done, total = False, 0.0
        while not done:
            _, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            total += r
        returns.append(total)
    return returns


def checked(env: SeatEnv) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    assert [str(w.message) for w in caught] == []


#: every game once, each in a seat count of its own where it has several (the last seat learns)
EVERY_GAME = [("block", 2), ("sport", 4), ("osel", 3), ("mexican_train", 3), ("kolbasa", 2), ("sea_kozel", 4), ("muggins", 2),
              ("kozel", 3), ("blitz", 4), ("draw", 4), ("club", 3), ("general", 4), ("telephone", 2)]


def test_every_game_is_checked():
    from referee.engine.registry import variant_names

    assert sorted(g for g, _ in EVERY_GAME) == sorted(variant_names())


@pytest.mark.parametrize(("game", "players"), EVERY_GAME)
def test_check_env_passes_with_bots_in_the_process(game, players):
    # the match points on some games, so that check_env sees that reward too
    env = SeatEnv(game, random_bot(1), players=players, seat=players - 1, episode="game",
                  reward="games" if game in ("draw", "general", "kozel") else "points")
    checked(env)
    assert len(play_episodes(env, 2, 3)) == 2
    env.close()


FIRST_PY = str(ROOT / "sample_bots" / "first_bot.py")


def test_check_env_passes_with_a_bot_program():
    env = SeatEnv("block", [FIRST_PY], players=2)  # deterministic: a seeded reset repeats the episode
    try:
        checked(env)
    finally:
        env.close()


@pytest.mark.parametrize("command", [RANDOM_PY, RANDOM_JS])
def test_a_bot_program_in_any_language_is_an_opponent(command):
    env = SeatEnv("block", [command], players=2)
    try:
        assert len(play_episodes(env, 5, 4)) == 5
    finally:
        env.close()


def test_a_bot_program_in_the_sandbox_is_an_opponent():
    env = SeatEnv("draw", [RANDOM_PY, [sys.executable, RANDOM_PY, "7"]], players=3, sandbox=True)
    try:
        assert len(play_episodes(env, 3, 5)) == 3
    finally:
        env.close()


def test_the_protocol_opponent_and_the_in_process_one_play_the_same_game():
    """random_bot.py with seed 9 and its in-process twin do not draw the same numbers, but the
    first-legal bot does: first_bot.py through the protocol and ``legal[0]`` in the process must
    give the learner the same observations and rewards, deal after deal."""
    a = SeatEnv("club", [FIRST_PY], players=2, episode="game")
    b = SeatEnv("club", [lambda turn, state: turn.legal[0]], players=2, episode="game")
    try:
        for env in (a, b):
            env.reset(seed=12)
        seen = []
        for env in (a, b):
            obs, info = env.reset(seed=12)
            trace = [obs]
            done = False
            while not done:
                obs, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
                trace += [obs, r]
            seen.append(trace)
        assert len(seen[0]) == len(seen[1]) > 10
        assert all(np.array_equal(x, y) for x, y in zip(*seen))
    finally:
        a.close()
        b.close()


def bad(tmp_path: Path, how: str) -> list[str]:
    script = tmp_path / "bad.py"
    script.write_text(BAD_BOT, encoding="utf-8")
    return [sys.executable, str(script), how]


def test_an_illegal_play_loses_the_opponent_the_deal(tmp_path):
    env = SeatEnv("block", [bad(tmp_path, "illegal")], players=2, seat=0)
    try:
        for seed in range(6):
            obs, info = env.reset(seed=seed)
            done = False
            while not done:
                obs, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            if info.get("fault") == 1:
                assert env.table.last.end.reason == "fault" and env.table.last.end.seat == 1
                assert r == env.table.last.values[1] > 0  # block: the learner writes what the faulting seat holds
                return
        pytest.fail("the bad bot never got a turn")
    finally:
        env.close()


@pytest.mark.parametrize(("how", "said"), [("silent", "did not answer within 0.5 s"), ("crash", "exited"),
                                           ("garbage", "not a play")])
def test_a_broken_opponent_ends_the_environment_in_one_error(tmp_path, how, said):
    env = SeatEnv("block", [bad(tmp_path, how)], players=2, seat=0, move_seconds=0.5)
    try:
        with pytest.raises(OpponentError, match=said):
            for seed in range(6):
                _, info = env.reset(seed=seed)
                done = False
                while not done:
                    _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    finally:
        env.close()


def test_bad_arguments_are_refused_in_words(tmp_path):
    with pytest.raises(ValueError, match="needs 3 opponents"):
        SeatEnv("sport", [RANDOM_PY, RANDOM_PY])
    with pytest.raises(ValueError, match="seat=2"):
        SeatEnv("block", [RANDOM_PY], players=2, seat=2)
    with pytest.raises(TypeError, match="neither a command line"):
        SeatEnv("block", [42], players=2)
    with pytest.raises(OpponentError, match="did not start"):
        SeatEnv("block", [[sys.executable, "-c", "import sys; sys.exit(0)"]], players=2, startup_seconds=2)
    with pytest.raises(Exception, match="not found|no such|does not exist|not an executable"):
        SeatEnv("block", [str(tmp_path / "missing_bot")], players=2)
