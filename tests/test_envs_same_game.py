"""The same game everywhere (issue 35 item 4): seeded games played in the AEC environment with
random masked actions are played again by ``referee match`` (its runner, table and log, with
scripted bots answering each turn with the environment's choice), and every seat must be sent
the very messages the environment says it was told: the same ``deal``, events, ``turn`` (its
legal moves, hand, ends, counts; the clock's fields aside), ``deal_end`` and ``game_end``, so
the same legal moves at every turn, the same events and the same scores.

And an observation never holds a hidden tile: changing every tile a seat cannot see (the other
hands, the bazaar, the sleeping tiles) leaves its observation as it was.

The fast tier plays a few deals of every game and seat count; the slow one 1,000 deals a game
(``SWEEP``), as the issue asks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import msgspec
import numpy as np
import pytest
import trio
import trio.testing

pytest.importorskip("pettingzoo")

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import HELLO, BotTransport, ScriptedBot, play_line
from referee.engine.registry import variant, variant_names
from referee.envs import aec_env
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

GAMES = [(g, n) for g in variant_names() for n in variant(g).players]
SWEEP = 1000


def normal(msg: m.ToBotMessage) -> bytes:
    """A message as compared: a turn without its clock and id (the environment has no clock)."""
    if type(msg) is m.Turn:
        msg = msgspec.structs.replace(msg, time_ms=0, bank_ms=None, id=m.UNSET)
    return m.encode_line(msg)


def env_games(game: str, players: int, seed: int, deals: int) -> tuple[int, list[list[list[bytes]]], list[list[list[bytes]]]]:
    """Whole games of the environment from ``seed`` until at least ``deals`` deals are played:
    how many games, and for every game and seat the lines it was told and the plays it
    answered (each game of a match is played by processes of its own)."""
    env = aec_env(game, players, episode="game")
    n = env.table.players
    told: list[list[list[bytes]]] = []
    answers: list[list[list[bytes]]] = []
    env.table.outbox = {s: [] for s in range(n)}
    rng = np.random.default_rng(seed)
    games = played = 0
    env.reset(seed=seed)
    while True:
        games += 1
        answers.append([[] for _ in range(n)])
        told.append([[] for _ in range(n)])
        for agent in env.agent_iter():
            _, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.agent_name_mapping[agent]
            table = env.table
            for s, box in table.outbox.items():
                told[-1][s] += [normal(m.to_bot_decoder.decode(x)) for line in box for x in line.splitlines()]
                box.clear()
            told[-1][seat].append(normal(table.turn))
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            chosen = [o for o in table.turn.legal if table.codec.action_of(o) == action]
            assert len(chosen) == 1, "an action is one legal entry"
            answers[-1][seat].append(play_line(chosen[0]))
            env.step(action)
        for s, box in env.table.outbox.items():
            told[-1][s] += [normal(m.to_bot_decoder.decode(x)) for line in box for x in line.splitlines()]
            box.clear()
        played += env.table.deals
        if played >= deals:
            return games, told, answers
        env.reset()


class Replayer(ScriptedBot):
    """A seat of one game of the match: answers each turn with the environment's play for that
    seat in that game, and keeps every message it is sent."""

    def __init__(self, answers: list[list[list[bytes]]], name: str) -> None:
        self.answers = answers
        self.queue: list[bytes] = []
        super().__init__(self.script, name)

    def script(self, msg: m.ToBotMessage) -> Sequence[tuple[float, bytes | None]]:
        if type(msg) is m.Hello:
            return [(0.0, HELLO)]
        if type(msg) is m.DealStart and not self.queue and msg.deal_number == 0:
            self.queue = list(reversed(self.answers[msg.game_number][msg.seat]))
        if type(msg) is m.Turn:
            return [(0.0, self.queue.pop())]
        return []


def replay(game: str, players: int, seed: int, games: int, answers: list[list[list[bytes]]], tmp_path: Path) -> list[Replayer]:
    v = variant(game)
    opts = v.resolve_options(players)
    started: list[Replayer] = []

    async def launch(nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int, hidden: Sequence[Path]) -> BotTransport:
        r = Replayer(answers, name)
        started.append(r)
        return r

    bots = [Bot(name, [name]) for name in "ABCD"[: 2 if players % 2 == 0 else players]]
    spec = MatchSpec(v, bots, players, opts, games=games,
                     deals=None if v.to_target else v.game.default_deals, seed=seed, tc=TimeControl(startup=5, move=5),
                     log_path=tmp_path / f"{game}{players}-{seed}.jsonl", stderr_dir=tmp_path / "err")
    result = trio.run(lambda: run_match(spec, launch=launch, handle_signals=False, block=0), clock=trio.testing.MockClock(autojump_threshold=0))
    with result:
        assert msgspec.to_builtins(result.whole())["faults"] == []
    return started


def same_game(game: str, players: int, seed: int, deals: int, tmp_path: Path) -> int:
    games, told, answers = env_games(game, players, seed, deals)
    bots = replay(game, players, seed, games, answers, tmp_path)
    seats_seen = set()
    for bot in bots:
        got = [normal(msg) for msg in bot.received if type(msg) not in (m.Hello, m.MatchEnd)]
        seat, g = next((msg.seat, msg.game_number) for msg in bot.received if type(msg) is m.DealStart)
        seats_seen.add(seat)
        assert bot.queue == [], f"seat {seat} was asked fewer turns in the match than in the environment"
        want = told[g][seat]
        for i, (a, b) in enumerate(zip(got, want)):
            assert a == b, f"{game} {players}p seed {seed}, seat {seat}, message {i}:\nmatch: {a!r}\nenv:   {b!r}"
        assert len(got) == len(want)
    assert seats_seen == set(range(players))
    return sum(1 for game_told in told for line in game_told[0] if line.startswith(b'{"type":"deal_end"'))


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_the_environment_and_referee_match_play_the_same_game(game, players, tmp_path):
    assert same_game(game, players, 7, 3, tmp_path) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("game", variant_names())
def test_a_thousand_deals_of_every_game_are_the_same_game(game, tmp_path):
    deals, seed = 0, 100
    while deals < SWEEP:
        deals += same_game(game, variant(game).default_players, seed, SWEEP - deals, tmp_path)
        seed += 1


# -- no hidden tile in an observation ---------------------------------------------------------


def hidden_swapped(env, seat: int, rng: random.Random) -> None:
    """Deal the tiles ``seat`` cannot see again among the places it cannot see (other hands,
    the bazaar), each place keeping its size, in the engine's state."""
    state = env.table.state
    others = [s for s in range(len(state.hands)) if s != seat]
    pool = [t for s in others for t in range(28) if state.hands[s] >> t & 1] + list(state.bazaar)
    rng.shuffle(pool)
    for s in others:
        k = state.hands[s].bit_count()
        state.hands[s] = sum(1 << t for t in pool[:k])
        pool = pool[k:]
    if hasattr(state, "bazaar") and state.bazaar:
        state.bazaar = tuple(pool) if isinstance(state.bazaar, tuple) else list(pool)


@pytest.mark.parametrize(("game", "players"), [(g, n) for g, n in GAMES if g != "kolbasa"])
def test_an_observation_never_holds_a_hidden_tile(game, players):
    """Two environments play the same moves; in one, before every move, the tiles the observer
    cannot see are dealt again.  The observer's observations stay equal up to the first draw
    (after that the tiles it draws differ, as they would)."""
    rng = random.Random(3)
    for seed in range(3):
        a, b = aec_env(game, players), aec_env(game, players)
        a.reset(seed=seed)
        b.reset(seed=seed)
        observer = b.possible_agents[seed % players]
        s = b.agent_name_mapping[observer]
        while a.agents and not a.terminations[a.agent_selection]:
            if b.table.state.bazaar_left() != b.table.views[s].bazaar:
                break
            hidden_swapped(b, s, rng)
            b.table._tell()  # the swap happens between the engine's moves: tell the seats again
            assert np.array_equal(a.observe(observer), b.observe(observer)), f"{game}: seat {s} sees a hidden tile"
            if a.agent_selection != observer:
                break  # the other seats' legal moves depend on their (swapped) hands
            action = int(np.flatnonzero(a.infos[a.agent_selection]["action_mask"])[0])
            a.step(action)
            b.step(action)


def test_a_deal_the_engine_plays_alone_is_scored_as_the_match_scores_it(tmp_path):
    """Block's deal 0 of seed 294 ends with no decision (the forced lead, then both seats
    blocked): the match scores it, and so do the environments, its rewards paid with the next
    move's; the game goes on as the match's does."""
    from referee.engine.core.line import TERMINAL

    game = variant("block").new_game(2)
    from referee.engine.core.deal import deal_from_seed
    from referee.engine.core.shuffle import BLAKE2B

    assert game.start(deal_from_seed(294, 0, game.shape, BLAKE2B)).to_move() == TERMINAL
    assert same_game("block", 2, 294, 3, tmp_path) >= 3
    env = aec_env("block", 2)
    env.reset(seed=294)
    assert env.table.deals == 1 and env.table.cursor == 2 and env.agents == env.possible_agents
    carried = env.table.carry
    assert any(carried)
    env.step(int(np.flatnonzero(env.infos[env.agent_selection]["action_mask"])[0]))
    assert [env.rewards[a] for a in env.possible_agents] == carried
