"""One conformance suite that every transport behind the table passes (referee/bots/transport.py),
in the spirit of trio's stream conformance tests: the same few behaviours asked of each.

The transports: a real bot process (:func:`~referee.bots.transport.launch_process`), a scripted bot
in the referee's process (:class:`~referee.bots.transport.ScriptedBot`), verify's tape of logged
lines (:class:`~referee.audit.verify.ReplayBot`, which plays a log's bots again) and the person's
seat of ``referee play`` (:class:`~referee.play.seat.PersonSeat`, answered here by a task acting
as the page).  Each plays one deal of block, two seats, bot A behaving as the test asks:

* its ``hello`` is answered and logged with the bot's name;
* every turn is answered within the clock, with one of the turn's legal moves;
* a line longer than the match's limit is refused (a ``bad_output`` fault that keeps its start);
* its exit is seen (a ``crash`` fault that says the process ended);
* once the match is over no transport it started is left running, and the log verifies.

The learning environment's opponent (``SeatEnv``'s bot program) goes through the same
conversation without a match around it; it is asked the same behaviours at the end.

A person cannot write a line at all (the page sends one of the turn's entries, and the seat
writes the ``play`` line), nor end a process: those two behaviours are asked of the other three.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from protocol import messages as m
from referee.audit import verify as verify_module
from referee.audit.verify import verify
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import HELLO, BotTransport, ScriptedBot, launch_process, play_line
from referee.conversation.house import BotSource
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.play.seat import Person
from referee.records import records as R

MAX_LINE = 1000
TOO_LONG = MAX_LINE + 500
TRANSPORTS = ["process", "scripted", "tape", "person"]

#: A bot in Python speaking the protocol, told how to behave by its first argument.
BOT = f"""
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({{"type": "hello", "name": "conforming", "version": "1", "author": "tests", "protocol": 1}}), flush=True)
    elif msg["type"] == "turn":
        if mode == "too_long":
            print("x" * {TOO_LONG}, flush=True)
        elif mode == "exits":
            sys.exit(0)
        else:
            print(json.dumps({{"type": "play", **msg["legal"][0]}}), flush=True)
"""


def script_for(mode: str) -> Callable[[m.ToBotMessage], Sequence[tuple[float, bytes | None]]]:
    """The scripted bot of ``mode``, as the process above behaves."""

    def script(msg: m.ToBotMessage) -> Sequence[tuple[float, bytes | None]]:
        if type(msg) is m.Hello:
            return [(0.0, HELLO)]
        if type(msg) is m.Turn:
            if mode == "too_long":
                return [(0.0, b"x" * TOO_LONG)]
            if mode == "exits":
                return [(0.0, None)]
            return [(0.05, play_line(msg.legal[0]))]
        return []

    return script


def spec_of(tmp_path: Path, bots: list[Bot], tc: TimeControl) -> MatchSpec:
    v = variant("block")
    return MatchSpec(v, bots, 2, v.resolve_options(2), games=1, seed=23, tc=tc, max_faults=1, max_line=MAX_LINE, deal_limit=1,
                     log_path=tmp_path / "match.jsonl", stderr_dir=tmp_path / "stderr")


class Played:
    """A match played through one transport: its log's records and the transports it started."""

    def __init__(self, log: Path, started: list[Any], move: float) -> None:
        self.log = log
        self.move_ms = move * 1000
        self.records = [rec for _, rec, _ in R.read_records(log)]
        self.started = started

    def of(self, kind: type) -> list:
        return [rec for rec in self.records if isinstance(rec, kind)]


def by_process(tmp_path: Path, mode: str) -> Played:
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    started: list[BotTransport] = []

    async def launch(nursery: trio.Nursery, b: Bot, **kw: Any) -> BotTransport:
        proc = await launch_process(nursery, b, **kw)
        started.append(proc)
        return proc

    spec = spec_of(tmp_path, [Bot("A", [sys.executable, str(bot), mode]), Bot("B", [sys.executable, str(bot), "plays"])],
                   TimeControl(startup=30, move=30))
    trio.run(lambda: run_match(spec, BotSource(launch), block=0, handle_signals=False)).close()
    return Played(spec.log_path, started, spec.tc.move)


def by_script(tmp_path: Path, mode: str) -> Played:
    started: list[ScriptedBot] = []

    async def launch(nursery: trio.Nursery, b: Bot, *, name: str, max_line: int, **kw: Any) -> BotTransport:
        sb = ScriptedBot(script_for(mode if b.name == "A" else "plays"), name, max_line)
        started.append(sb)
        return sb

    spec = spec_of(tmp_path, [Bot("A", ["a"]), Bot("B", ["b"])], TimeControl(startup=5, move=1))
    trio.run(lambda: run_match(spec, BotSource(launch), block=0, handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0)).close()
    return Played(spec.log_path, started, spec.tc.move)


def by_tape(tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> Played:
    """The scripted match's log played again by verify, whose bots are the tape's: the log it
    compares with is the one the tape reads, so the tape's bots behaved as the logged ones."""
    played = by_script(tmp_path, mode)
    started: list[Any] = []

    class Recorded(verify_module.ReplayBot):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            started.append(self)

    monkeypatch.setattr(verify_module, "ReplayBot", Recorded)
    counts = verify(played.log)
    assert counts.faults == len(played.of(R.Fault)) and counts.plays == len(played.of(R.Play))
    assert len(started) == len(played.of(R.Hello))
    played.started = started
    return played


def by_person(tmp_path: Path, mode: str) -> Played:
    if mode != "plays":
        pytest.skip("a person writes no line of their own and ends no process: the page sends one of the turn's entries")
    person_bot = Bot("A", [])
    person = Person("A", 0)
    spec = spec_of(tmp_path, [person_bot, Bot("B", ["b"])], TimeControl(startup=5, move=1))
    others: list[ScriptedBot] = []

    async def scripted_others(nursery: trio.Nursery, b: Bot, *, name: str, max_line: int, **kw: Any) -> BotTransport:
        sb = ScriptedBot(script_for("plays"), name, max_line)
        others.append(sb)
        return sb

    async def page() -> None:
        while True:
            await person.wait_change(person.version)
            if person.view.finished:
                person.go_on()
            ask = person.asking
            if ask is not None:
                await trio.sleep(0.05)
                person.answer(ask.turn.id, ask.legal[0])

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(page)
            result = await run_match(spec, BotSource(person.launcher(person_bot, scripted_others)), person.watch(),
                                     handle_signals=False)
            result.close()
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return Played(spec.log_path, [*person.seats, *others], spec.tc.move)


@pytest.fixture(params=TRANSPORTS)
def play(request, tmp_path, monkeypatch) -> Callable[[str], Played]:
    """Plays the match through the transport of the parameter, bot A behaving as ``mode`` says."""
    kind = request.param
    if kind == "process":
        return lambda mode: by_process(tmp_path, mode)
    if kind == "scripted":
        return lambda mode: by_script(tmp_path, mode)
    if kind == "tape":
        return lambda mode: by_tape(tmp_path, mode, monkeypatch)
    return lambda mode: by_person(tmp_path, mode)


def nothing_left_running(played: Played) -> None:
    assert played.started, "no transport was started"
    # a bot of the tape has no process to end: the tape read to the log's end (verify) is its close
    running = [p.name for p in played.started if not isinstance(p, verify_module.ReplayBot) and p.returncode is None]
    assert running == [], f"left running after the match: {running}"
    verify(played.log)


def test_the_hello_is_answered(play):
    played = play("plays")
    hellos = played.of(R.Hello)
    assert {h.bot.split("@")[0] for h in hellos} == {"A", "B"}  # "A@1": A in the second seating
    assert all(h.error is None and h.exit is None and h.overlong is None for h in hellos)
    assert all(json.loads(h.read[-1].line)["type"] == "hello" for h in hellos if h.read)
    nothing_left_running(played)


def test_every_turn_is_answered_within_the_clock_with_a_legal_move(play):
    played = play("plays")
    assert played.of(R.Fault) == []
    plays = played.of(R.Play)
    assert plays and all(p.ms is not None and p.ms <= played.move_ms for p in plays)
    nothing_left_running(played)


def test_a_line_too_long_is_refused(play):
    played = play("too_long")
    faults = [f for f in played.of(R.Fault) if f.bot.startswith("A")]
    assert faults and all(f.bot.split("@")[0] == "A" for f in played.of(R.Fault))
    fault = faults[0]
    assert fault.kind == "bad_output" and fault.overlong is not None and fault.overlong.prefix.startswith("xxxx")
    assert len(fault.overlong.prefix) < TOO_LONG
    nothing_left_running(played)


def test_an_exit_is_seen(play):
    played = play("exits")
    faults = [f for f in played.of(R.Fault) if f.bot.startswith("A")]
    assert faults and all(f.bot.split("@")[0] == "A" for f in played.of(R.Fault))
    fault = faults[0]
    assert fault.kind == "crash" and fault.exit is not None
    nothing_left_running(played)


# -- the learning environment's opponent: the same conversation, no match around it ----------


def by_environment(tmp_path: Path, mode: str) -> tuple[Any, list[Any], BaseException | None]:
    """Bot A as ``SeatEnv``'s opponent (referee/envs/seat.py) in block, the learner taking the
    first legal action: the environment, its programs, and the error that ended it, if any."""
    pytest.importorskip("gymnasium")
    from referee.envs.seat import SeatEnv

    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    env = SeatEnv("block", [[sys.executable, str(bot), mode]], players=2, move_seconds=30, startup_seconds=30)
    programs = list(env._programs.values())
    error: BaseException | None = None
    try:
        for seed in range(3):
            _, info = env.reset(seed=seed)
            programs += [p for p in env._programs.values() if p not in programs]
            done = False
            while not done:
                _, _, done, _, info = env.step(int(info["action_mask"].nonzero()[0][0]))
                assert "fault" not in info
    except Exception as exc:  # noqa: BLE001 - what ended it is the test's to judge
        error = exc
    finally:
        env.close()
    return env, programs, error


@pytest.mark.parametrize("mode", ["plays", "too_long", "exits"])
def test_the_environments_opponent_is_one_more_transport(tmp_path, mode):
    """The hello is answered, every turn answered with a legal move; a line too long and an exit
    are the match's faults (raised as OpponentError in the fault's words); nothing is left running."""
    from referee.envs.seat import OpponentError

    env, programs, error = by_environment(tmp_path, mode)
    assert programs and all(p.player.entry.hello is not None and p.player.entry.hello.name == "conforming" for p in programs)
    if mode == "plays":
        assert error is None
    elif mode == "too_long":
        assert isinstance(error, OpponentError) and "bad_output" in str(error) and "xxxx" in str(error)
    else:
        assert isinstance(error, OpponentError) and "crash" in str(error)
    assert [p.name for p in programs if p.returncode is None] == [], "left running after the environment closed"
