"""The referee's own wait for a CPU is not counted against a bot (PROTOCOL.md, "Limits"; issue 31
item 5): an answer that would be late has the referee's run-queue wait since the turn's write
taken off its time, the ``in`` record says how much (``wait``, ms), the play's ``ms`` is the time
less the wait, and ``verify`` judges by both, and by neither once the log is edited.  A fake
run-queue clock on trio's mock clock makes the waits exact; one test reads the real one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
import trio.testing

from protocol import messages as m
from referee.audit.verify import Inconsistent, verify
from referee.base.clock import TimeControl
from referee.base.runqueue import RunQueue, run_queue
from referee.bots.bot import Bot
from referee.bots.transport import BotTransport, Script, ScriptedBot, first_legal
from referee.conversation import faults as F
from referee.conversation.exchange import At, Terms, turn
from referee.conversation.house import BotSource
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.engine import variant
from referee.engine.core.deal import deal_from_seed
from referee.matches.match import run_match
from referee.sides import side_for
from tests.conversation.test_time_margin import edited, late_at, match_spec, records_of


class FakeWaits:
    """A run-queue clock that says the referee waited ``us`` microseconds whenever it is asked."""

    def __init__(self, us: int) -> None:
        self.us = us
        self.marks = 0
        self.asked = 0

    def mark(self) -> object:
        self.marks += 1
        return self.marks

    def since(self, mark: object) -> int:
        self.asked += 1
        return self.us


class ReadLate(ScriptedBot):
    """A scripted bot whose answer to its ``turn``-th turn (from 0) the referee reads ``lag``
    seconds after it was written: a referee that waited for a CPU.  From then on its clock
    readings are ``lag`` later (the referee's clock only goes forward)."""

    def __init__(self, script: Script, turn: int, lag: float, name: str = "A") -> None:
        super().__init__(script, name)
        self.turn, self.lag = turn, lag
        self.offset = 0.0
        self._turns = 0
        self._armed = False

    def write_nowait(self, data: bytes) -> int:
        n = super().write_nowait(data)
        for msg in self.received[len(self.received) - data.count(b"\n"):]:
            if type(msg) is m.Turn:
                self._armed = self._turns == self.turn
                self._turns += 1
        return n

    def _take(self) -> bytes:
        line = super()._take()
        if self._armed:
            self._armed = False
            self.offset += self.lag
        return line

    def now(self) -> float:
        return trio.current_time() + self.offset


async def one_turn(tmp_path: Path, think: float, waits: FakeWaits, tc: TimeControl | None = None, lag: float = 0.0):
    """One turn answered after ``think`` seconds and read ``lag`` seconds after that."""
    log = MatchLog(tmp_path / "turn.jsonl")
    tc = tc or TimeControl(move=0.5)
    terms = Terms(log, tc, trio.current_time(), block=0, waits=waits)
    game = variant("draw").new_game(2, {})
    state = game.start(deal_from_seed(3, 0, game.shape))
    assert state is not None
    p = Player(Entry(Bot("A", ["a"]), 0, tc), 0)
    p.channel.proc = ReadLate(late_at(0, think), 0, lag)
    fault = await turn(terms, p, At(state.to_move(), 0, 0), state, side_for(state), 1)
    log.close()
    return fault, p, [json.loads(line) for line in (tmp_path / "turn.jsonl").read_bytes().splitlines()]


async def test_an_answer_late_only_by_the_referees_wait_is_played(tmp_path, autojump_clock):
    waits = FakeWaits(40_000)
    fault, p, records = await one_turn(tmp_path, 0.49, waits, lag=0.04)
    assert fault is None
    inp, play = records[-2], records[-1]
    assert (inp["k"], inp["wait"]) == ("in", 40.0)
    assert (play["k"], play["ms"]) == ("play", 490.0) and "over" not in play
    assert p.entry.clock.used == 490_000  # the wait is not charged either
    assert waits.marks == 1 and waits.asked == 1


async def test_an_answer_late_beyond_the_referees_wait_is_a_timeout_that_says_so(tmp_path, autojump_clock):
    fault, _, records = await one_turn(tmp_path, 0.49, FakeWaits(20_000), lag=0.04)
    assert fault is not None and fault.kind == F.TIMEOUT
    assert fault.detail == ("no play within 500 ms: its line was read 530.0 ms after the turn was sent "
                            "(20.0 ms of it the referee's own wait for a CPU, not counted)")
    assert [r.get("wait") for r in records if r["k"] == "in"] == [20.0]


async def test_an_answer_on_time_never_asks_for_the_wait_and_logs_none(tmp_path, autojump_clock):
    waits = FakeWaits(40_000)
    fault, _, records = await one_turn(tmp_path, 0.4, waits, lag=0.01)
    assert fault is None and waits.asked == 0
    assert not any("wait" in r for r in records)


async def test_the_wait_comes_off_before_the_margin_is_looked_at(tmp_path, autojump_clock):
    """Late by 60 ms with a 50 ms margin, 30 of it the referee's wait: 30 ms over, within the margin."""
    fault, p, records = await one_turn(tmp_path, 0.54, FakeWaits(30_000), TimeControl(move=0.5, margin=0.05), lag=0.02)
    assert fault is None
    assert (records[-1]["ms"], records[-1]["over"], records[-2]["wait"]) == (530.0, 30.0, 30.0)


def play_with_waits(tmp_path: Path, name: str, us: int) -> list[bytes]:
    """A block match whose bot A answers its third turn in 490 ms, read by the referee 40 ms
    later, the run-queue clock saying it waited ``us`` microseconds."""
    spec = match_spec(tmp_path, name, 0.0)

    async def launch(nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int,
                     hidden: Sequence[Path]) -> BotTransport:
        return ReadLate(late_at(2, 0.49), 2, 0.04, name) if bot.name == "A" else ScriptedBot(first_legal, name)

    fake = FakeWaits(us)
    trio.run(lambda: run_match(spec, BotSource(launch, waits=lambda: fake), block=0, handle_signals=False),
             clock=trio.testing.MockClock(autojump_threshold=0))
    assert spec.log_path is not None
    return spec.log_path.read_bytes().splitlines(keepends=True)


def test_a_match_whose_late_line_the_wait_explains_verifies(tmp_path):
    recs = records_of(play_with_waits(tmp_path, "waited", 50_000))
    waited = [r for r in recs if r["k"] == "in" and "wait" in r]
    assert [r["wait"] for r in waited] == [50.0, 50.0]  # bot A's third turn in each seating
    assert not any(r["k"] == "fault" for r in recs)
    assert 480.0 in [r.get("ms") for r in recs if r["k"] == "play"]  # read at 530 ms, less the 50 ms wait
    assert verify(tmp_path / "waited.jsonl").faults == 0


@pytest.mark.parametrize("what", ["the wait made smaller", "the wait removed", "a wait on an answer on time"])
def test_a_log_whose_wait_was_edited_does_not_verify(tmp_path, what):
    lines = play_with_waits(tmp_path, "waited", 50_000)

    def edit(recs: list[dict]) -> None:
        waited = next(r for r in recs if r["k"] == "in" and "wait" in r)
        if what == "the wait made smaller":
            waited["wait"] = 10.0
        elif what == "the wait removed":
            del waited["wait"]
        else:
            next(r for r in recs if r["k"] == "in" and "wait" not in r and r["seat"] >= 0)["wait"] = 5.0

    with pytest.raises(Inconsistent):
        verify(edited(lines, tmp_path / "edited.jsonl", edit))


@pytest.mark.skipif(not sys.platform.startswith("linux") or run_queue() is None, reason="no per-thread schedstat")
def test_the_real_run_queue_clock_counts_a_wait_for_a_shared_cpu():
    """Pinned to one CPU beside a busy process, a thread that keeps busy for 300 ms is ready to
    run the whole time and runs about half of it: the run-queue clock counts the other half (at
    least a tenth, whatever the scheduler's shares)."""
    rq = run_queue()
    assert isinstance(rq, RunQueue)
    assert rq.since(b"not a mark") == 0
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    busy = subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"])
    try:
        time.sleep(0.2)  # the busy process is running
        os.sched_setaffinity(0, {cpu})
        mark = rq.mark()
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            pass
        waited = rq.since(mark)
    finally:
        os.sched_setaffinity(0, before)
        busy.kill()
        busy.wait()
    assert waited >= 30_000, waited
