"""Drive each sample bot through scripted conversations, without the referee.

A tiny scripted referee built on the rules engine deals real deals (a sport game with the bot
at seat 0, then a two-player draw deal with a bazaar), plays the other seats itself, and checks
that every answer of the bot is one JSON line holding a ``play`` from the ``legal`` list.  The
messages carry unknown fields (some placed before ``type``, some holding decoy ``type`` keys),
and unknown message types are mixed in; the bots must ignore them.  Each bot must exit promptly
on ``match_end`` and on end of input.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import pytest

from protocol import messages as m
from referee.engine import TERMINAL, deal_from_seed, play, variant
from referee.engine.core.line import END_INDEX, END_NAMES, Drew, Placed
from referee.engine.core.tiles import HIGH, LOW, tile, tiles_of

ROOT = Path(__file__).resolve().parents[2]
BOTS_DIR = ROOT / "sample_bots"
ANSWER_S = 10.0  # generous: a slow CI machine starting node; no test asserts on timing
EXIT_S = 5.0
SEAT = 0


# -- the bots -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def c_bots(tmp_path_factory) -> Path:
    """The C bots built with their Makefile into a temporary directory."""
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("no C compiler (cc) or make")
    out = tmp_path_factory.mktemp("c_bots")
    done = subprocess.run(
        ["make", "-C", str(BOTS_DIR / "c"), f"OUT={out}"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"make failed:\n{done.stdout}\n{done.stderr}"
    return out


def node_command(script: str) -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return [node, str(BOTS_DIR / script)]


BOTS = {
    "py-random": lambda c: [sys.executable, str(BOTS_DIR / "random_bot.py")],
    "py-greedy": lambda c: [sys.executable, str(BOTS_DIR / "greedy_bot.py")],
    "py-first": lambda c: [sys.executable, str(BOTS_DIR / "first_bot.py")],
    "js-random": lambda c: node_command("random_bot.js"),
    "c-random": lambda c: [str(c() / "random_bot")],
    "c-echo_first": lambda c: [str(c() / "echo_first")],
}
RANDOM_BOTS = ["py-random", "js-random", "c-random"]
FIRST_BOTS = ["py-first", "c-echo_first"]


class Bot:
    """A bot process in its own process group, with line reads under a timeout."""

    def __init__(self, command: list[str], seed: str | None = None) -> None:
        env = dict(os.environ)
        env.pop("BOT_SEED", None)
        if seed is not None:
            env["BOT_SEED"] = seed
        self.log = tempfile.TemporaryFile()
        self.command = command
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
            start_new_session=True, cwd=BOTS_DIR,
        )
        self.pending = b""
        self.answers: list[bytes] = []

    def send(self, msg: m.ToBot | dict | str) -> None:
        if isinstance(msg, m.ToBot):
            data = m.encode_line(msg)
        elif isinstance(msg, dict):
            data = json.dumps(msg, ensure_ascii=False).encode() + b"\n"
        else:
            data = msg.encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_line(self, timeout: float = ANSWER_S) -> bytes:
        """The next stdout line (newline included), or fail after ``timeout`` seconds."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                pytest.fail(f"{self.command[-1]}: no answer within {timeout} s; log: {self.stderr()!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                pytest.fail(f"{self.command[-1]}: stdout closed (exit {self.proc.poll()}); log: {self.stderr()!r}")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        self.answers.append(line)
        return line + b"\n"

    def answer(self) -> m.FromBot:
        line = self.read_line()
        assert line.count(b"\n") == 1 and line.endswith(b"\n"), line
        assert isinstance(json.loads(line), dict), line
        try:
            return m.from_bot_decoder.decode(line)
        except msgspec.DecodeError as exc:
            pytest.fail(f"{self.command[-1]} sent a bad line ({exc}): {line!r}")

    def expect_exit(self, timeout: float = EXIT_S) -> None:
        """The bot exits by itself with status 0 and has written nothing more."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.command[-1]} did not exit within {timeout} s")
        rest = self.pending + self.proc.stdout.read()
        assert rest == b"", f"unexpected output: {rest!r}"
        assert code == 0, f"exit status {code}; log: {self.stderr()!r}"

    def stderr(self) -> bytes:
        self.log.seek(0)
        return self.log.read()[-2000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass  # a broken pipe on flush: the bot is gone anyway
        self.log.close()


@pytest.fixture
def start(request, c_bots_lazy):
    """``start(bot_id, seed=None)`` starts a bot; every bot is killed and reaped afterwards."""
    started: list[Bot] = []

    def _start(bot_id: str, seed: str | None = None) -> Bot:
        bot = Bot(BOTS[bot_id](c_bots_lazy), seed)
        started.append(bot)
        return bot

    yield _start
    for bot in started:
        bot.close()


@pytest.fixture
def c_bots_lazy(request):
    """Build the C bots only when a C bot is asked for (so the Python tests need no compiler)."""
    return lambda: request.getfixturevalue("c_bots")


# -- the scripted referee ----------------------------------------------------------------------

HELLO = m.Hello(protocol=1, referee="судья 0.1 (test)", limits=m.Limits(move_ms=5000))


def tj(t: int) -> list[int]:
    return [LOW[t], HIGH[t]]


def with_extras(msg: m.ToBot) -> dict:
    """The message as a dict with unknown fields before and after the known ones, some of them
    holding decoy ``type`` and ``legal`` keys a careless scanner would pick up."""
    body = msgspec.to_builtins(msg)
    return {
        "x_before": {"type": "match_end", "legal": []},
        **body,
        "x_after": ["}", "]", {"type": "turn"}, "quote \" and \\ backslash", None, True, 1.5e3],
        "x_unicode": "козёл",
    }


UNKNOWN = [
    {"type": "chat", "from": 2, "text": "хорошо", "legal": [{"tile": [6, 6], "end": "up"}]},
    {"type": "ping", "id": 7},
    {"type": "turn_v2", "legal": [{"tile": [9, 9], "end": "nowhere"}]},
]


def dealt_hand(state, seat: int) -> list[int]:
    """The hand as dealt: a forced lead is already on the table, but its holder was dealt it."""
    hand = state.hands[seat]
    if state.lead_tile is not None and state.leader == seat:
        hand |= 1 << state.lead_tile
    return tiles_of(hand)


def turn_message(state, seat: int) -> m.Turn:
    return m.Turn(
        legal=[m.PlayOption(tile=tuple(tj(p.tile)), end=None if p.end is None else END_NAMES[p.end]) for p in state.legal_plays()],
        hand=[tuple(tj(t)) for t in tiles_of(state.hands[seat])],
        ends={END_NAMES[e]: v for e, v in enumerate(state.ends) if v >= 0},
        counts=[h.bit_count() for h in state.hands],
        bazaar=state.bazaar_left(),
        time_ms=5000,
    )


def checked_play(answer: m.FromBot, turn: m.Turn) -> tuple[int, int | None]:
    """The answer as an engine (tile, end), after checking it is one of the turn's legal plays."""
    assert isinstance(answer, m.Play), f"expected a play, got {answer!r}"
    a, b = answer.tile
    legal = {(tuple(sorted(o.tile)), o.end) for o in turn.legal}
    assert ((min(a, b), max(a, b)), answer.end) in legal, f"{answer!r} is not in the legal list {turn.legal}"
    return tile(a, b), None if answer.end is None else END_INDEX[answer.end]


def play_game(bot: Bot, game_id: str, players: int, seed: int, deals: int, game_number: int, on_turn=None) -> None:
    """Play ``deals`` deals of a game with the bot at seat 0; the other seats play their first legal play."""
    game = variant(game_id).new_game(players=players, deals=deals if not variant(game_id).to_target else None)
    for index in range(deals):
        state = game.start(deal_from_seed(seed, index, game.shape))
        assert state is not None
        bot.send(with_extras(m.DealStart(
            game=game_id, options=dict(game.options), players=players, seat=SEAT, side=game.side_of[SEAT],
            partner=2 if game.pair_play else None, hand=[tuple(tj(t)) for t in dealt_hand(state, SEAT)],
            leader=state.leader, scores=list(game.totals), bazaar=state.bazaar_left(),
            game_number=game_number, deal_number=index,
        )))
        told = 0

        def events(state=state):
            nonlocal told
            for e in state.history[told:]:
                if type(e) is Placed:
                    msg = m.Placed(seat=e.seat, tile=tuple(tj(e.tile)), end=None if e.end is None else END_NAMES[e.end], forced=e.forced)
                elif type(e) is Drew:
                    mine = e.seat == SEAT
                    msg = m.Drew(seat=e.seat, count=e.count, tiles=[tuple(tj(t)) for t in e.tiles] if mine else None)
                else:
                    msg = m.Passed(seat=e.seat)
                bot.send(with_extras(msg) if told % 2 else msg)
                told += 1

        turns = 0
        while state.to_move() != TERMINAL:
            if state.turn != SEAT:
                state.apply(state.legal_plays()[0])
                continue
            events()
            bot.send(UNKNOWN[turns % len(UNKNOWN)])
            turn = turn_message(state, SEAT)
            bot.send(with_extras(turn) if turns % 2 else turn)
            answer = bot.answer()
            t, end = checked_play(answer, turn)
            if on_turn is not None:
                on_turn(turn, answer)
            state.push(play(t, end), SEAT)
            turns += 1
        events()
        rec = game.finish(state)
        bot.send(with_extras(m.DealEnd(
            reason=rec.end.reason, seat=rec.end.seat, hands=[[tuple(tj(t)) for t in h] for h in rec.hands],
            values=list(rec.values), wrote=list(rec.wrote), totals=list(rec.totals), notes=list(rec.notes),
        )))
    bot.send(m.GameEnd(totals=list(game.totals), winners=[0], losers=[1], reason="scripted end"))


def handshake(bot: Bot) -> m.BotHello:
    bot.send(with_extras(HELLO))
    hello = bot.answer()
    assert isinstance(hello, m.BotHello), f"expected hello, got {hello!r}"
    assert hello.name and hello.protocol == 1
    return hello


def play_match(bot: Bot, on_turn=None) -> None:
    handshake(bot)
    play_game(bot, "sport", 4, seed=1, deals=4, game_number=0, on_turn=on_turn)
    play_game(bot, "draw", 2, seed=5, deals=2, game_number=1, on_turn=on_turn)
    bot.send(m.MatchEnd())
    bot.expect_exit()


# -- the tests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bot_id", list(BOTS))
def test_plays_a_match_legally_and_exits_on_match_end(start, bot_id):
    bot = start(bot_id, seed="11")
    turns = []
    play_match(bot, on_turn=lambda turn, answer: turns.append((turn, answer)))
    assert any(not t.ends for t, _ in turns), "the script should include a lead turn"
    assert len(turns) >= 10
    if bot_id in FIRST_BOTS:
        for turn, answer in turns:
            assert (tuple(answer.tile), answer.end) == (tuple(turn.legal[0].tile), turn.legal[0].end)
    if bot_id == "py-greedy":
        for turn, answer in turns:
            assert sum(answer.tile) == max(sum(o.tile) for o in turn.legal), "greedy must play the heaviest tile"


@pytest.mark.parametrize("bot_id", list(BOTS))
def test_exits_on_end_of_input(start, bot_id):
    bot = start(bot_id)
    handshake(bot)
    bot.send(UNKNOWN[0])
    bot.proc.stdin.close()
    bot.expect_exit()


@pytest.mark.parametrize("bot_id", list(BOTS))
def test_exits_on_end_of_input_before_hello(start, bot_id):
    bot = start(bot_id)
    bot.proc.stdin.close()
    bot.expect_exit()


@pytest.mark.parametrize("bot_id", list(BOTS))
def test_ignores_junk_lines(start, bot_id):
    bot = start(bot_id)
    for junk in ["", "not json", "[1, 2, 3]", '"turn"', "{", '{"type": 7}', '{"no_type": true}']:
        bot.send(junk)
    handshake(bot)
    bot.send(m.MatchEnd(reason="done"))
    bot.expect_exit()


def lead_turn(hand: list[list[int]]) -> m.Turn:
    return m.Turn(
        legal=[m.PlayOption(tile=tuple(t), end=None) for t in hand], hand=[tuple(t) for t in hand],
        ends={}, counts=[len(hand)] * 4, bazaar=0, time_ms=5000,
    )


def ask(bot: Bot, turn: m.Turn) -> tuple[tuple[int, int], str | None]:
    bot.send(turn)
    answer = bot.answer()
    checked_play(answer, turn)
    return tuple(sorted(answer.tile)), answer.end


def test_greedy_tie_breaks(start):
    bot = start("py-greedy")
    handshake(bot)
    # Heaviest first: 5-5 (10) over 2-6 (8).
    assert ask(bot, lead_turn([[0, 1], [2, 6], [5, 5], [1, 4]])) == ((5, 5), None)
    # Equal pips (10): the double 5-5 before 4-6, although 4-6 is listed first.
    assert ask(bot, lead_turn([[4, 6], [5, 5], [0, 1]])) == ((5, 5), None)
    # Equal pips, no double: 2-4 on the left leaves 4 and 6 open, which the rest of the hand
    # (0-6, 1-4) both match; 0-6 on the right leaves 2 and 0 (only 2-4 matches).
    turn = m.Turn(
        legal=[m.PlayOption(tile=(0, 6), end="right"), m.PlayOption(tile=(2, 4), end="left")],
        hand=[(0, 6), (2, 4), (1, 4)], ends={"left": 2, "right": 6}, counts=[3, 3, 3, 3], bazaar=0, time_ms=5000,
    )
    assert ask(bot, turn) == ((2, 4), "left")
    # The same tile on either end: 3-5 on the right leaves 3 and 3 open (1-3, 2-3 follow);
    # on the left it leaves 5 and 5 (only 0-5 follows).
    turn = m.Turn(
        legal=[m.PlayOption(tile=(3, 5), end="left"), m.PlayOption(tile=(3, 5), end="right")],
        hand=[(3, 5), (1, 3), (2, 3), (0, 5)], ends={"left": 3, "right": 5}, counts=[4, 4, 4, 4], bazaar=0, time_ms=5000,
    )
    assert ask(bot, turn) == ((3, 5), "right")
    # A full tie: the first of the legal list.
    turn = m.Turn(
        legal=[m.PlayOption(tile=(1, 2), end="left"), m.PlayOption(tile=(0, 3), end="right")],
        hand=[(1, 2), (0, 3)], ends={"left": 1, "right": 0}, counts=[2, 2, 2, 2], bazaar=0, time_ms=5000,
    )
    assert ask(bot, turn) == ((1, 2), "left")
    bot.send(m.MatchEnd())
    bot.expect_exit()


@pytest.mark.parametrize("bot_id", RANDOM_BOTS)
def test_random_bots_repeat_with_a_seed_and_vary(start, bot_id):
    hand = [[0, 1], [0, 3], [1, 1], [1, 4], [2, 3], [2, 6], [5, 5]]
    runs = []
    for _ in range(2):
        bot = start(bot_id, seed="2024")
        handshake(bot)
        runs.append([ask(bot, lead_turn(hand)) for _ in range(20)])
        bot.send(m.MatchEnd())
        bot.expect_exit()
    assert runs[0] == runs[1], "the same BOT_SEED should give the same plays"
    assert len(set(runs[0])) > 1, "twenty random leads from seven tiles were all the same"
