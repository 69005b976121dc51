"""Nothing a bot or a file can do crashes the referee, fills the disk, or fools ``verify``.

Hostile input end to end: JSON nested too deep from a bot in ``check`` and in a league's match
process, and in deal files and logs; a flood of lines nobody asked for; bad command-line values
and unwritable or full log paths; SIGHUP; and a fuzz of arbitrary bytes as bot lines, deal files
and logs.  (One fault per hostile bot inside a match is tests/conversation/test_faults.py.)  Every error a
user can cause must be one line, never a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from support.commands import cli, one_line_error

from referee.base import exitcodes as X
from referee.conversation.house import BotSource

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sample_bots"
HOSTILE = Path(__file__).resolve().parent / "hostile_bots" / "hostile.py"
DEEP = "[" * 1000 + "]" * 1000
HANG = 120


# -- JSON nested too deep ---------------------------------------------------------------------------


def test_check_reports_json_nested_too_deep_as_bad_output(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    result = cli("check", f"{HOSTILE} deep {state}", "--variant", "draw", "--deals", "2", "--log-dir", tmp_path / "logs")
    assert result.exit_code == X.CHECK_FAILED, result.output
    assert "bad output" in result.stdout and "nested deeper than 64 levels" in result.stdout


async def test_a_league_charges_json_nested_too_deep_to_the_bot(tmp_path):
    """In a league's match process too: the pairing is played and stored, the bot is charged."""
    from tournaments.config import load_league
    from tournaments.runner import run_league

    state = tmp_path / "state"
    state.mkdir()
    path = tmp_path / "league.toml"
    path.write_text("\n".join([
        "seed = 1", "sandbox = false",  # the hostile bot records what it does in its state directory
        "[game]", 'variant = "sport"', "deals = 4", "[clock]", "startup = 30.0", "move = 10.0",
        "[[bot]]", 'name = "first"', f'command = "{BOTS / "first_bot.py"}"',
        "[[bot]]", 'name = "deep"', f'command = "{HOSTILE} deep {state}"',
    ]) + "\n", encoding="utf-8")
    with trio.fail_after(HANG):
        report = await run_league(load_league(path))
    assert report.played == 1 and not report.failed
    table = json.loads(cli("league", "table", path, "--format", "json").stdout)
    rows = {row["bot"]: row for row in table["standings"]}
    assert rows["deep"]["bad_output"] == 1 and rows["first"]["bad_output"] == 0


def test_a_deal_file_nested_too_deep_is_refused_in_one_line(tmp_path):
    good = cli("deals", "generate", "--variant", "sport", "--count", "4")
    path = tmp_path / "deals.jsonl"
    lines = good.stdout.splitlines()
    lines[2] = '{"hands": ' + DEEP + "}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (["deals", "show", path], ["match", BOTS / "first_bot.py", BOTS / "first_bot.py", "--deals-file", path,
                                           "--deals", "4", "--log", tmp_path / "m.jsonl"]):
        result = cli(*args)
        assert result.exit_code == X.USAGE, result.output
        one_line_error(result, "line 3", "nested deeper than 64 levels")


def test_a_log_nested_too_deep_is_refused_in_one_line(tmp_path):
    log = tmp_path / "m.jsonl"
    played = cli("match", BOTS / "first_bot.py", BOTS / "greedy_bot.py", "--deals", "4", "--log", log, "-q")
    assert played.exit_code == 0, played.output
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[5] = '{"k": "in", "seat": 0, "x": ' + DEEP + "}"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for command in ("verify", "replay"):
        result = cli(command, log)
        assert result.exit_code == X.USAGE, result.output
        one_line_error(result, "line 6", "nested deeper than 64 levels")


def test_a_line_nested_too_deep_is_measured_outside_strings():
    from protocol.messages import MAX_DEPTH, too_deep

    assert not too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert too_deep(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    assert too_deep(b'{"a":' * (MAX_DEPTH + 1))  # cut short: still too deep
    assert not too_deep(b'{"a":"' + b"[{" * 500 + b'"}')  # brackets in a string do not count
    assert not too_deep(b'{"a":"\\"' + b"[" * 500 + b'"}')  # nor after an escaped quote
    assert not too_deep(b'[' + b"[]," * 500 + b"[]]")  # many arrays, none deep


# -- bad values and unwritable outputs on the command line -------------------------------------------


@pytest.mark.parametrize(("args", "words"), [
    (["--move-time", "inf"], ["--move-time: inf is out of bounds", "at most 86400 s"]),
    (["--startup-time", "1e308"], ["--startup-time: 1e+308 is out of bounds", "from 0 to 86400 s"]),
    (["--bank", "nan"], ["--bank: nan is out of bounds"]),
    (["--memory-mb", "0"], ["--memory-mb", "from 1 to"]),
    (["--cpu-seconds", "99999999999"], ["--cpu-seconds", "from 1 to"]),
    (["--max-line", "99999999999999"], ["--max-line", "from 256 to 16777216"]),
])
def test_values_out_of_range_are_refused_in_one_line(tmp_path, args, words):
    result = cli("match", BOTS / "first_bot.py", BOTS / "first_bot.py", "--deals", "4", "--log", tmp_path / "m.jsonl", *args)
    assert result.exit_code == X.USAGE, result.output
    one_line_error(result, *words)
    assert not (tmp_path / "m.jsonl").exists()


@pytest.mark.parametrize(("where", "words"), [
    ("folder", ["--log", "is a folder"]),
    ("under_a_file", ["cannot write the log", "is a file, not a folder"]),
    ("read_only", ["cannot write the log", "Permission denied"]),
])
def test_a_log_that_cannot_be_written_is_refused_before_any_bot_starts(tmp_path, where, words):
    if where == "folder":
        log = tmp_path
    elif where == "under_a_file":
        (tmp_path / "file").write_text("x")
        log = tmp_path / "file" / "m.jsonl"
    else:  # sysfs refuses new files even to root
        log = Path("/sys/referee-test.jsonl")
    result = cli("match", BOTS / "first_bot.py", BOTS / "first_bot.py", "--deals", "4", "--log", log)
    assert result.exit_code == X.USAGE, result.output
    one_line_error(result, *words)


@pytest.mark.slow
def test_a_log_that_fills_the_disk_stops_the_match_in_one_line(tmp_path):
    """RLIMIT_FSIZE makes the log's writes fail with EFBIG, as a full disk fails them with
    ENOSPC: the match stops, its bots are ended, and the error is one line (exit 2)."""
    log = tmp_path / "m.jsonl"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    done = subprocess.run([sys.executable, "-m", "referee", "match", str(BOTS / "first_bot.py"), str(BOTS / "greedy_bot.py"),
                           "--deals", "400", "--log", str(log), "-q"], capture_output=True, text=True, timeout=HANG,
                          stdin=subprocess.DEVNULL, preexec_fn=small_files, check=False)
    assert done.returncode == X.USAGE, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot write the log {log}: File too large"), done.stderr
    assert "the match was stopped" in lines[0]
    assert 0 < log.stat().st_size <= 200_000


async def test_a_full_disk_mid_match_raises_a_log_error_and_ends_every_bot(tmp_path, monkeypatch):
    """The same through run_match, with writes that fail with ENOSPC after 100 KB."""
    import errno
    import io

    import referee.conversation.log
    from referee.base.clock import TimeControl
    from referee.base.errors import LogError
    from referee.bots.bot import Bot
    from referee.engine import variant
    from referee.matches.match import run_match
    from referee.matches.spec import MatchSpec

    class Full(io.RawIOBase):
        written = 0

        def writable(self) -> bool:
            return True

        def write(self, data) -> int:
            if self.written + len(data) > 100_000:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.written += len(data)
            return len(data)

    monkeypatch.setattr(referee.conversation.log, "open", lambda *a, **k: io.BufferedWriter(Full(), 1 << 16), raising=False)
    v = variant("sport")
    bots = [Bot("first", [sys.executable, str(BOTS / "first_bot.py")]), Bot("greedy", [sys.executable, str(BOTS / "greedy_bot.py")])]
    spec = MatchSpec(v, bots, 4, v.resolve_options(4, {}), deals=400, tc=TimeControl(startup=30, move=10),
                     log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "stderr")
    with pytest.raises(LogError, match="No space left on device; the match was stopped"):
        with trio.fail_after(HANG):
            await run_match(spec)


def test_check_with_a_log_folder_that_cannot_be_written(tmp_path):
    result = cli("check", BOTS / "first_bot.py", "--log-dir", "/sys/referee-test")
    assert result.exit_code == X.USAGE, result.output
    one_line_error(result, "cannot write the log /sys/referee-test/", "the check was stopped")


# -- deadlines are hard (PROTOCOL.md, Limits) ------------------------------------------------------


def late_referee(monkeypatch, step: float) -> None:
    """Every reading of the referee's clock comes ``step`` seconds after the one before (on top
    of the real time): as if the referee were always busy that long between reading a bot's
    line and looking at the clock.  Whatever the scheduling, each line is then read late."""
    from referee.conversation import table as table_module
    real_init = table_module.Table.__init__
    calls = [0]

    def init(self, *args, **kwargs) -> None:
        real_init(self, *args, **kwargs)
        launch = self.house.bots.launch

        async def late(*args, **kwargs):
            proc = await launch(*args, **kwargs)
            real_now = proc.now

            def now() -> float:  # each process's readings, which the exchanges time its lines by
                calls[0] += 1
                return real_now() + calls[0] * step

            proc.now = now
            return proc

        self.house = dataclasses.replace(self.house, bots=dataclasses.replace(self.house.bots, launch=late))

    monkeypatch.setattr(table_module.Table, "__init__", init)


async def play_two(tmp_path, game: str = "draw", move: float = 0.5, startup: float = 5.0):
    from referee.base.clock import TimeControl
    from referee.bots.bot import Bot
    from referee.engine import variant
    from referee.matches.match import run_match
    from referee.matches.spec import MatchSpec

    v = variant(game)
    bots = [Bot("first", [sys.executable, str(BOTS / "first_bot.py")]), Bot("greedy", [sys.executable, str(BOTS / "greedy_bot.py")])]
    spec = MatchSpec(v, bots, 2, v.resolve_options(2, {}), games=1, tc=TimeControl(startup=startup, move=move),
                     log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "stderr")
    with trio.fail_after(HANG):
        return await run_match(spec)


async def test_an_answer_read_after_the_deadline_is_a_timeout(tmp_path, monkeypatch):
    """The referee decides by its own clock when it reads the line: an answer read 0.6 s after
    the turn went out, at a 0.5 s limit, is late even though it came without waiting."""
    late_referee(monkeypatch, 0.6)
    result = await play_two(tmp_path, move=0.5, startup=5.0)
    faults = [f for e in result.entries for f in e.faults]
    assert faults and all(f.kind == "timeout" for f in faults)
    assert re.search(r"no play within 500 ms: its line was read \d+\.\d ms after the turn was sent", faults[0].detail)
    log = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert not [r for r in log if r["k"] == "play"]


async def test_a_hello_read_after_the_startup_limit_is_late(tmp_path, monkeypatch):
    from referee.base.errors import BotStartError

    late_referee(monkeypatch, 3.0)
    with pytest.raises(BotStartError, match=r"no hello within the start-up limit of 2 s: its line was read \d+\.\d ms after"):
        await play_two(tmp_path, startup=2.0)


async def test_an_answer_in_time_is_charged_what_it_took(tmp_path, monkeypatch):
    """A line read 0.1 s late (by the referee's clock) is charged those 0.1 s with the bot's own
    time, and is no fault while that is within the limit.  The limit is generous: a sample bot
    on a loaded machine takes hundreds of milliseconds to answer by itself."""
    late_referee(monkeypatch, 0.1)
    result = await play_two(tmp_path, move=5.0, startup=10.0)
    assert not [f for e in result.entries for f in e.faults]
    log = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    charged = [r["ms"] for r in log if r["k"] == "play"]
    assert charged and all(100 <= ms < 5000 for ms in charged), charged  # each with the late reading in it


# -- SIGHUP ends a league like SIGTERM ----------------------------------------------------------------


@pytest.mark.slow
def test_sighup_stops_a_league_cleanly(tmp_path):
    """The terminal closing: the league stops its matches, says it was interrupted, exits 130,
    and the next run finishes it."""
    import signal
    import sqlite3
    import time

    lines = ["seed = 1", "[game]", 'variant = "sport"', "deals = 400", "[clock]", "startup = 30.0", "move = 10.0"]
    for name in ("first", "greedy"):
        lines += ["[[bot]]", f'name = "{name}"', f'command = "{BOTS / (name + "_bot.py")}"']
    path = tmp_path / "league.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "referee", "league", "run", str(path)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        logs = tmp_path / "league-logs"
        deadline = time.monotonic() + HANG
        while not any(p.stat().st_size > 20_000 for p in logs.glob(".*") if p.is_file()) if logs.exists() else True:
            assert proc.poll() is None and time.monotonic() < deadline, "the league's match did not get going"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGHUP)  # what a closing terminal sends to its foreground job
        _, stderr = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == X.INTERRUPTED, stderr
    assert b"interrupted" in stderr and b"Traceback" not in stderr
    conn = sqlite3.connect(path.with_suffix(".db"))
    try:
        assert conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'failed'").fetchone()[0] == 0
    finally:
        conn.close()


@pytest.mark.slow
def test_sighup_stops_a_check_cleanly(tmp_path):
    import signal
    import time

    state = tmp_path / "state"
    state.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "referee", "check", f"{HOSTILE} silent {state} every=1 deal=0 turn=0",
                             "--move-time", "60", "--log-dir", str(tmp_path / "logs")],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + HANG
        while not (state / "trigger").exists():  # the bot is thinking for ever
            assert proc.poll() is None and time.monotonic() < deadline, "the check did not get going"
            time.sleep(0.05)
        pid = json.loads((state / "trigger").read_text())["pid"]
        proc.send_signal(signal.SIGHUP)
        _, stderr = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == X.INTERRUPTED, stderr
    assert stderr.strip() == b"interrupted"
    assert not os.path.exists(f"/proc/{pid}")


# -- deals generate streams, shows progress, refuses what cannot be written -----------------------------


@pytest.mark.parametrize(("args", "words"), [
    (["--count", "99999999999999999999"], ["--count 99999999999999999999", "holds 2**64 deals"]),
    (["--count", "9999999999999999", "--output", "{tmp}/d.jsonl"], ["the deals need about", "PB", "free"]),
])
def test_deals_generate_refuses_counts_that_cannot_be_written(tmp_path, args, words):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = cli("deals", "generate", "--variant", "sport", *args)
    assert result.exit_code == X.USAGE, result.output
    one_line_error(result, *words)
    assert not (tmp_path / "d.jsonl").exists()


def test_deals_generate_streams(tmp_path):
    """A hundred billion deals into a pipe: the first arrive at once (nothing is built in memory
    first), and a reader that stops reading ends it quietly."""
    proc = subprocess.Popen([sys.executable, "-m", "referee", "deals", "generate", "--variant", "sport", "--count", "100000000000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        import select

        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "no deal within 20 s: the deals are not streamed"
        first = [json.loads(proc.stdout.readline()) for _ in range(3)]
        assert [d["deal"] for d in first] == [0, 1, 2]
        proc.stdout.close()  # like `| head -3`
        assert proc.wait(timeout=HANG) == 0
        assert proc.stderr.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def test_deals_generate_shows_progress_on_a_terminal(tmp_path):
    import pty
    import select

    controller, terminal = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "referee", "deals", "generate", "--variant", "sport", "--count", "100000000",
                             "--output", str(tmp_path / "d.jsonl")], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=terminal, env={**os.environ, "COLUMNS": "100", "TERM": "xterm"})
    os.close(terminal)
    seen = b""
    try:
        while b"sport deals" not in seen or b"/100000000" not in seen:
            ready, _, _ = select.select([controller], [], [], HANG)
            assert ready, seen
            seen += os.read(controller, 4096)
    finally:
        proc.kill()
        proc.wait()
        os.close(controller)
    assert (tmp_path / "d.jsonl").exists()


@pytest.mark.slow
@pytest.mark.parametrize("second", ["SIGINT", "SIGTERM"])
def test_a_second_signal_during_the_cleanup_neither_hangs_nor_cuts_it_short(tmp_path, second):
    """Ctrl-C while a bot that ignores every signal is thinking, then another signal while the
    referee waits out the bot's grace after match_end: the cleanup still ends the bot, closes the
    log on a whole line, and the referee says "interrupted" and exits 130 (one signal policy,
    referee.base.signals)."""
    import signal
    import time

    state = tmp_path / "state"
    state.mkdir()
    log = tmp_path / "match.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", f"{HOSTILE} hang_noterm {state} deal=0 turn=0",
                             str(BOTS / "first_bot.py"), "--variant", "draw", "--players", "2", "--move-time", "60",
                             "--log", str(log), "-q"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + HANG
        while not (state / "trigger").exists():  # the bot is thinking for ever, deaf to signals
            assert proc.poll() is None and time.monotonic() < deadline, "the match did not get going"
            time.sleep(0.05)
        pid = json.loads((state / "trigger").read_text())["pid"]
        proc.send_signal(signal.SIGINT)
        # The cleanup gives the deaf bot a second after match_end before killing it: land inside it.
        time.sleep(0.3)
        proc.send_signal(getattr(signal, second))
        _, stderr = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == X.INTERRUPTED, stderr
    assert stderr.strip().startswith(b"interrupted") and b"Traceback" not in stderr
    assert json.loads(log.read_bytes().splitlines()[-1])
    assert not os.path.exists(f"/proc/{pid}")


# -- memory flat in the number of deals (bench.memory measures it) ----------------------------------


def test_a_match_keeps_one_deal_record_per_game(tmp_path, monkeypatch):
    """The engine's games keep only their last deal record in a match (they kept every one)."""
    from functools import partial

    from bench.referee import StubBot
    from referee.bots.bot import Bot
    from referee.engine import variant
    from referee.engine.core.game import Variant
    from referee.matches.match import run_match
    from referee.matches.spec import MatchSpec

    games = []
    real = Variant.new_game

    def new_game(self, *args, **kwargs):
        games.append(real(self, *args, **kwargs))
        return games[-1]

    monkeypatch.setattr(Variant, "new_game", new_game)
    v = variant("sport")
    spec = MatchSpec(v, [Bot("A", ["stub"]), Bot("B", ["stub"])], 4, v.resolve_options(4, {}), deals=40,
                     log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "s")
    result = trio.run(partial(run_match, spec, BotSource(StubBot.launch), handle_signals=False))
    assert len(result.deals) == 80 and games
    played = [g for g in games if g.played]
    assert played and all(g.played == 40 and len(g.records) == 1 and g.records[-1] is g.last for g in played)
