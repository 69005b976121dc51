"""The same game everywhere (issue 35 item 4): seeded games played in the AEC environment with
random masked actions are played again by ``referee match`` (its runner, table and log, with
scripted bots answering each turn with the environment's choice), and every seat must be sent
the very messages the environment says it was told: the same ``deal``, events, ``turn`` (its
legal moves, hand, ends, counts; the clock's fields aside), ``deal_end`` and ``game_end``, so
the same legal moves at every turn, the same events and the same scores.

The match points (``reward="games"``) are each game as the match counts it for the bot in the
seat.  And an observation never holds a hidden tile: a hypothesis property over every game and
seat count, at every move of whole deals, moves every tile a seat cannot see (the other hands,
the bazaar, the sleeping tiles, kolbasa's face-down rows) and wants every observation as it was.

The fast tier plays a few deals of every game and seat count; the slow one 1,000 deals a game
(``SWEEP``), as the issue asks.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from pathlib import Path

import msgspec
import numpy as np
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("pettingzoo")

from protocol import messages as m
from protocol.bot import State
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import HELLO, BotTransport, ScriptedBot, play_line
from referee.conversation.house import BotSource
from referee.engine.core.deal import Deal, deal_from_seed
from referee.engine.core.kolbasa import KolbasaDeal
from referee.engine.core.line import Drew
from referee.engine.core.shuffle import BLAKE2B
from referee.engine.registry import variant, variant_names
from referee.envs import aec_env
from referee.envs.episode import SEED_LIMIT, EnvTable
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

GAMES = [(g, n) for g in variant_names() for n in variant(g).players]
SWEEP = 1000


def normal(msg: m.ToBotMessage) -> bytes:
    """A message as compared: a turn without its clock and id (the environment has no clock)."""
    if type(msg) is m.Turn:
        msg = msgspec.structs.replace(msg, time_ms=0, bank_ms=None, id=m.UNSET)
    return m.encode_line(msg)


def env_games(game: str, players: int, seed: int, deals: int, *, reward: str = "points",
              earned: list[list[float]] | None = None) -> tuple[int, list[list[list[bytes]]], list[list[list[bytes]]]]:
    """Whole games of the environment from ``seed`` until at least ``deals`` deals are played:
    how many games, and for every game and seat the lines it was told and the plays it
    answered (each game of a match is played by processes of its own); ``earned`` gets every
    game's rewards, per seat."""
    env = aec_env(game, players, episode="game", reward=reward)
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
        if earned is not None:
            earned.append([0.0] * n)
        for agent in env.agent_iter():
            _, r, term, trunc, info = env.last()
            if earned is not None:
                earned[-1][env.agent_name_mapping[agent]] += r
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


def replay(game: str, players: int, seed: int, games: int, answers: list[list[list[bytes]]], tmp_path: Path,
           results: list[dict] | None = None) -> list[Replayer]:
    """The environment's games played again by ``referee match``; ``results`` gets its result."""
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
    result = trio.run(lambda: run_match(spec, BotSource(launch), block=0, handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0))
    with result:
        whole = msgspec.to_builtins(result.whole())
        assert whole["faults"] == []
    if results is not None:
        results.append(whole)
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


@pytest.mark.parametrize(("game", "players", "seed"), [
    ("block", 2, 7), ("kozel", 4, 7), ("draw", 3, 7), ("sea_kozel", 4, 7), ("muggins", 3, 43), ("mexican_train", 2, 29),
    ("telephone", 2, 24), ("sport", 4, 3)])
def test_the_match_points_are_each_game_as_the_match_counts_it(game, players, seed, tmp_path):
    """``reward="games"``: a seat earns +1, 0 or -1 for a game its side won, drew or lost, as
    the match counts the same game for the bot in that seat (``won_by``, ``lost_by``; in every
    orientation), and nothing for the deals before the last.  Drawn games among these: muggins
    43 (two seats reach the target at once), mexican_train 29 (both seats share the lowest total:
    every side a winner), telephone 24 (both sides reach 225), sport 3 (level after 12 deals)."""
    earned: list[list[float]] = []
    games, _, answers = env_games(game, players, seed, 1, reward="games", earned=earned)
    results: list[dict] = []
    replay(game, players, seed, games, answers, tmp_path, results)
    whole = results[0]
    assert len(whole["game_results"]) == games * len(whole["orientations"])
    for g in whole["game_results"]:
        seating = whole["orientations"][g["orientation"]]
        want = [1 if bot in g["won_by"] else -1 if bot in g["lost_by"] else 0 for bot in seating]
        assert earned[g["game"]] == want, f"{game} game {g['game']} ({g['reason']}): env {earned[g['game']]}, match {want}"
    drawn = not whole["game_results"][0]["won_by"]
    assert drawn == (game in ("muggins", "mexican_train", "telephone", "sport"))


def test_a_game_every_bot_won_or_lost_is_drawn_for_all():
    """docs/result-json.md: a game every bot lost, or every bot won, separates nobody.  Two bots
    sharing the four seats of kozel without teams (sides 0 and 2 one bot's, 1 and 3 the
    other's), as the match and the environment count it alike."""
    from referee.engine.core.game import GameOutcome

    holders = [{0, 2}, {1, 3}]
    both_goats = GameOutcome((101, 105, 20, 30), (2, 3), (0, 1), "seat 0 and seat 1 reached 101: goats")
    assert both_goats.verdicts(holders, -1) == [0, 0]
    assert both_goats.verdicts([{0}, {1}, {2}, {3}], -1) == [-1, -1, 1, 1]
    one_goat = GameOutcome((101, 5, 20, 30), (1, 2, 3), (0,), "seat 0 reached 101: the goat")
    assert one_goat.verdicts(holders, -1) == [-1, 1]
    both_reached = GameOutcome((100, 101, 0, 3), (0, 1), (2, 3), "seat 0 and seat 1 reached 100")
    assert both_reached.verdicts(holders, 1) == [0, 0]
    assert both_reached.verdicts([{0}, {1}, {2}, {3}], 1) == [1, 1, -1, -1]
    assert GameOutcome((50, 50), (), (), "drawn").verdicts([{0}, {1}], 1) == [0, 0]


@pytest.mark.slow
@pytest.mark.parametrize("game", variant_names())
def test_a_thousand_deals_of_every_game_are_the_same_game(game, tmp_path):
    deals, seed = 0, 100
    while deals < SWEEP:
        deals += same_game(game, variant(game).default_players, seed, SWEEP - deals, tmp_path)
        seed += 1


# -- no hidden tile in an observation ---------------------------------------------------------


def hidden_tiles(state, seat: int) -> list[int]:
    """The tiles ``seat`` cannot see now: every other hand, the bazaar not yet drawn, the
    sleeping tiles; in kolbasa the face-down tiles never turned up, in both rows (a row is face
    down even to its owner, KB-15)."""
    if isinstance(state, KolbasaDeal):
        return [t for s in range(2) for t in unseen_block(state, s)]
    out = [t for s in range(state.n) if s != seat for t in range(28) if state.hands[s] >> t & 1]
    out += state.bazaar[state.drawn:]
    out += [t for t in range(28) if getattr(state, "sleeping", 0) >> t & 1]
    return out


def unseen_block(state: KolbasaDeal, seat: int) -> list[int]:
    row, k = state.rows[seat], state.unseen[seat]
    right = len(row) - (seat == state.turn)  # the mover's last tile is turned up, waiting for its place
    return row[right - k : right]


def moved(state, m):
    """A copy of ``state`` with each tile ``t`` where ``m(t)`` was: in the hands (kolbasa: the
    rows), the bazaar, the sleeping tiles and the tiles of ``drew`` events."""
    alt = state.copy()
    if isinstance(state, KolbasaDeal):
        alt.rows = [[m(t) for t in row] for row in state.rows]
        alt.hands = [sum(1 << t for t in row) for row in alt.rows]
        return alt
    alt.hands = [sum(1 << m(t) for t in range(28) if h >> t & 1) for h in state.hands]
    alt.bazaar = tuple(map(m, state.bazaar))
    if hasattr(state, "sleeping"):
        alt.sleeping = sum(1 << m(t) for t in range(28) if state.sleeping >> t & 1)
    alt.history = [Drew(e.seat, tuple(map(m, e.tiles)), e.count) if type(e) is Drew else e for e in state.history]
    return alt


def places(state, seat: int) -> tuple:
    """Where the tiles ``seat`` cannot see are, place by place."""
    if isinstance(state, KolbasaDeal):
        return tuple(tuple(unseen_block(state, s)) for s in range(2))
    return (tuple(h for s, h in enumerate(state.hands) if s != seat), state.bazaar[state.drawn:], getattr(state, "sleeping", 0))


def told_again(table, snaps: list, seat: int, m) -> list[np.ndarray]:
    """``seat``'s observation at every move of the deal, made again by the code of ``table`` (as
    it was at the deal's first move) from fresh views, in a world where each tile ``t`` was
    ``m(t)`` from the deal on: the deal message, then at each move the new events and the turn,
    as :meth:`EnvTable.play` tells them."""
    dealt = deal_from_seed(table.seed, table.cursor - 1, table.game.shape, BLAKE2B)
    fresh = copy.copy(table)
    fresh.views = [State() for _ in range(table.players)]
    fresh.outbox = {}
    out = []
    for k, snap in enumerate(snaps):
        alt = moved(snap, m)
        if k == 0:
            EnvTable._begin(fresh, Deal(tuple(tuple(map(m, h)) for h in dealt.hands), tuple(map(m, dealt.undealt))), alt)
        else:
            fresh.state = alt
            fresh._tell()
        out.append(fresh.observe(seat))
    return out


def check_no_hidden_tile(table, snaps: list, seen: list[list[np.ndarray]], rng: random.Random) -> None:
    """The deal's states at each move (``snaps``) and every seat's observations then (``seen``):
    told again from nothing they are the same; and for every seat, at the deal's first move, a
    third and two thirds of the way, and its last, every tile the seat cannot see then moved to
    another hidden place (the hidden tiles in a random order, each taking the place of the next:
    one cycle, so no place that holds some but not all of them keeps its tiles) leaves every
    observation up to then as it was.  Those tiles were hidden from the seat all along, so the
    world moved is a deal as good as the real one, told from its start."""
    for seat in range(table.players):
        again = told_again(table, snaps, seat, lambda t: t)
        assert all(np.array_equal(a, b) for a, b in zip(again, seen[seat])), "an observation is not its messages'"
        last = len(snaps) - 1
        for k in sorted({0, last // 3, 2 * last // 3, last}):
            order = hidden_tiles(snaps[k], seat)
            rng.shuffle(order)
            pi = {t: order[(i + 1) % len(order)] for i, t in enumerate(order)}
            alt = moved(snaps[k], lambda t: pi.get(t, t))  # noqa: B023 - used at once
            assert sorted(hidden_tiles(alt, seat)) == sorted(order)
            if k == 0:  # teeth: at a deal's start every seat has hidden tiles in two places or more
                assert places(alt, seat) != places(snaps[0], seat), f"seat {seat}: no hidden tile moved"
            again = told_again(table, snaps[: k + 1], seat, lambda t: pi.get(t, t))  # noqa: B023
            for j, (a, b) in enumerate(zip(again, seen[seat])):
                where = np.flatnonzero(a != b)
                assert not where.size, f"seat {seat} sees a hidden tile at move {j}: {[section_of(table.codec, i) for i in where]}"


def section_of(codec, i: int) -> str:
    sec = next(sec for sec in codec.sections if sec.start <= i < sec.start + sec.size)
    return f"{sec.name}[{i - sec.start}]"


def one_deal(env, skip: int, rng: random.Random) -> tuple[EnvTable | None, list, list[list[np.ndarray]]]:
    """Deal ``skip`` of the environment's game played by random masked moves: a copy of the
    table at its first move, its state at each move and every seat's observation then (no
    table when the game ended sooner)."""
    table = env.table
    first: EnvTable | None = None
    snaps: list = []
    seen: list[list[np.ndarray]] = [[] for _ in range(table.players)]
    for _agent in env.agent_iter():
        _, _, term, trunc, info = env.last()
        if term or trunc or table.deals > skip:
            break
        if table.deals == skip:
            if first is None:
                first = copy.deepcopy(table)
            snaps.append(table.state.copy())
            for s in range(table.players):
                seen[s].append(table.observe(s))
        env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    return first, snaps, seen


def every_game(test):
    """An explicit example of every game and seat count, beside those hypothesis draws."""
    for i, spec in enumerate(GAMES):
        test = example(spec=spec, seed=i, skip=i % 2, moves=i)(test)
    return test


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@every_game
@given(spec=st.sampled_from(GAMES), seed=st.integers(0, SEED_LIMIT - 1), skip=st.integers(0, 2), moves=st.integers(0, 2**32))
def test_an_observation_never_holds_a_hidden_tile(spec, seed, skip, moves):
    """Every game and seat count: a whole deal of a game (its first, second or third) by random
    masked moves, every observation of every seat, under moves of every tile the seat cannot
    see (the other hands, the bazaar, the sleeping tiles, kolbasa's face-down rows)."""
    game, players = spec
    env = aec_env(game, players, episode="game")
    env.reset(seed=seed)
    rng = random.Random(moves)
    first, snaps, seen = one_deal(env, skip, rng)
    if first is not None:
        check_no_hidden_tile(first, snaps, seen, rng)


def test_a_leaked_tile_is_found(monkeypatch):
    """The check has teeth: a side that tells each seat its neighbour's hand in the deal
    message (a leak of the kind the test looks for) is caught."""
    from referee.sides.line import LineSide

    real = LineSide.deal_start

    def leaky(self, game, deal, state, seat, game_number):
        msg = real(self, game, deal, state, seat, game_number)
        msg.hand = real(self, game, deal, state, (seat + 1) % game.players, game_number).hand
        return msg

    monkeypatch.setattr(LineSide, "deal_start", leaky)
    env = aec_env("block", 2)
    env.reset(seed=1)
    rng = random.Random(0)
    first, snaps, seen = one_deal(env, 0, rng)
    with pytest.raises(AssertionError, match="seat 1 sees a hidden tile at move 0: .'hand"):
        check_no_hidden_tile(first, snaps, seen, rng)


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
