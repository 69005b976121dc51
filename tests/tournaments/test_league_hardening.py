"""``referee league`` against what a bot, a file or the machine can do to it: a process killed
while it makes the database, bad and random league files, damaged or read-only databases, rows
deleted by hand, a full disk, a log folder taken away or shared, a match process that is stopped.

Every failure must be one line (exit code 2 when the file or the database is at fault) and must
lose no finished match.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import alive

from referee.base import exitcodes as X
from referee.matches.job import MatchJob
from tests.tournaments.test_league import BOTS as ROOT_BOTS
from tests.tournaments.test_league import (
    FOUR,
    HANG,
    cli,
    league_toml,
    referee,
    start_league,
    write_league,
)
from tests.tournaments.test_league import (
    test_bad_league_files_are_refused_in_one_line_before_any_match as refused_in_one_line,
)
from tournaments.config import LeagueError, load_league
from tournaments.runner import last_words, make_job, run_league, stall_limit
from tournaments.store import SCHEMA_VERSION, TABLES, open_store

pytestmark = pytest.mark.slow  # leagues of real bot processes, killed and restarted

# -- the schema is made in one transaction ----------------------------------------------------------

KILL_AT = """
import os, signal, sqlite3, sys
from pathlib import Path
from tournaments import store

at = int(sys.argv[2])
count = 0
real = sqlite3.connect

def die_at(statement):
    global count
    count += 1
    if count == at:
        os.kill(os.getpid(), signal.SIGKILL)

def connect(*args, **kwargs):
    conn = real(*args, **kwargs)
    conn.set_trace_callback(die_at)
    return conn

store.sqlite3.connect = connect
store.open_store(Path(sys.argv[1]), create=True).close()
"""


def test_a_process_killed_at_any_statement_while_making_the_database_leaves_one_the_next_run_takes(tmp_path):
    # A SIGKILL in the first milliseconds of a new league, made exact: the process kills itself
    # as SQLite starts its k-th statement, for every k.  Whatever is left, status reads it and
    # the next run makes (or finds) the whole schema.
    path = write_league(tmp_path, league_toml(FOUR[:2]))
    db = path.with_suffix(".db")
    k = 1
    while True:
        for leftover in tmp_path.glob("league.db*"):
            leftover.unlink()
        proc = subprocess.run([sys.executable, "-c", KILL_AT, str(db), str(k)], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False, timeout=60)
        status = cli("league", "status", str(path))
        assert status.exit_code == 0, (k, status.stderr)
        store = open_store(db, create=True)
        assert store is not None
        with store:
            assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} >= set(TABLES)
        if proc.returncode == 0:  # got through every statement: every moment was tried
            break
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        k += 1
    assert k > 5


def test_a_half_made_schema_left_by_an_older_version_is_completed(tmp_path):
    # Older versions made the tables one by one; a kill left some of them, empty, at user_version 0.
    path = write_league(tmp_path, league_toml(FOUR[:2]))
    conn = sqlite3.connect(path.with_suffix(".db"))
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("CREATE TABLE bots (name TEXT PRIMARY KEY, identity TEXT NOT NULL)")
    conn.commit()
    conn.close()
    assert cli("league", "status", str(path)).exit_code == 0
    assert cli("league", "table", str(path)).exit_code == 0
    with open_store(path.with_suffix(".db"), create=True) as store:
        assert store.tables() == []


def test_a_database_of_something_else_is_still_refused(tmp_path):
    path = write_league(tmp_path, league_toml(FOUR[:2]))
    conn = sqlite3.connect(path.with_suffix(".db"))
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    for command in ("run", "status", "table"):
        r = cli("league", command, str(path))
        assert r.exit_code == X.USAGE and r.stderr.count("\n") == 1 and "not a league database" in r.stderr, r.stderr


# -- league files ------------------------------------------------------------------------------------

BAD = [
    (league_toml(FOUR[1:3]).replace('BOT_SEED', '"A=B"'), "env: 'A=B' cannot name an environment variable"),
    (league_toml(FOUR[1:3]).replace('env = {', 'env = { "" = "x",'), "cannot name an environment variable"),
    (league_toml([FOUR[0], ("random", "random_bot.py", "3\\u0000")]), "bot 'random'.env.BOT_SEED: contains a NUL byte"),
    (league_toml(FOUR[:2]).replace('greedy_bot.py"', 'greedy_bot.py\\u0000"'), "bot 'greedy'.command: contains a NUL byte"),
    (league_toml(FOUR[:2]).replace("startup = 30.0", "startup = 1e308"), "clock.startup: 1e+308 is out of bounds (from 0 to 86400 s)"),
    (league_toml(FOUR[:2]).replace("move = 10.0", "move = inf"), "clock.move: inf is out of bounds"),
    (league_toml(FOUR[:2]).replace("move = 10.0", "move = 10.0\nbank = nan"), "clock.bank: nan is out of bounds"),
    (league_toml(FOUR[:2], head="memory_mb = 9223372036854775807"), "memory_mb: 9223372036854775807 is out of bounds"),
    (league_toml(FOUR[:2], head="cpu_seconds = 9223372036854775807"), "cpu_seconds: 9223372036854775807 is out of bounds"),
    (league_toml(FOUR[:2], head="max_line = 9223372036854775807"), "max_line: 9223372036854775807 is out of bounds"),
    (league_toml(FOUR[:2], deals=4_000_000_000), "game.deals: 4000000000 is out of bounds"),
    (league_toml(FOUR[:2], head="[points]\nwin = 1e300"), "points.win: 1e+300 is out of bounds"),
    (league_toml(FOUR[:2], seed='"x"'), "seed: 'x' is not a seed: give a whole number"),
    (league_toml(FOUR[:2], head="max_line = 1.5"), "max_line: expected an integer, got 1.5"),
    (league_toml(FOUR[:2], head="game = 3"), "TOML syntax error"),
    (league_toml(FOUR[:2]).replace("[game]", "game = 3\n[other]"), "game: expected a table"),
    (league_toml(FOUR[:2]).replace("[[bot]]", "[[bot]]\ncolour = 1", 1), "bot #1: colour: unknown key"),
    (league_toml(FOUR[:2]).replace(f'command = "{ROOT_BOTS}/first_bot.py"', 'command = ["x", 3]'), "bot 'first'.command: expected a command line"),
    ('bot = 3\n', "bot: write each bot as a [[bot]] table"),
    ('name = ""\n' + league_toml(FOUR[:2]), "name: must not be empty"),
]


@pytest.mark.parametrize("text, expected", BAD, ids=[e for _, e in BAD])
def test_bad_league_files_are_refused_in_one_line_naming_the_key(tmp_path, text, expected):
    refused_in_one_line(tmp_path, text, expected)


async def test_a_failure_reason_is_the_error_not_a_border_of_its_traceback(tmp_path):
    # A match process that dies of an exception inside trio's nurseries prints the traceback in
    # boxes; its last line is "+------...", which used to become the pairing's reason.
    nested = [sys.executable, "-c", (
        "import sys, trio\n"
        "sys.stdin.readline()\n"
        "async def boom():\n"
        "    raise OverflowError('cannot convert float infinity to integer')\n"
        "async def main():\n"
        "    async with trio.open_nursery() as outer:\n"
        "        async with trio.open_nursery() as inner:\n"
        "            inner.start_soon(boom)\n"
        "trio.run(main)\n")]
    path = write_league(tmp_path, league_toml(FOUR[:2]))
    with trio.fail_after(HANG):
        report = await run_league(load_league(path), worker_argv=nested)
    [(_, reason)] = report.failed
    assert reason == "the match process exited with code 1: OverflowError: cannot convert float infinity to integer"
    status = cli("league", "status", str(path))
    assert "failed   first vs greedy: the match process exited with code 1: OverflowError" in status.stdout
    assert "+--" not in status.stdout


def test_the_match_process_ends_a_bug_with_one_line_naming_the_exception(tmp_path):
    league = load_league(write_league(tmp_path, league_toml(FOUR[:2])))
    job = msgspec.structs.replace(make_job(league, league.pairings()[0], tmp_path / "m.jsonl", tmp_path / "stderr"),
                                  game=msgspec.structs.replace(make_job(league, league.pairings()[0], tmp_path, tmp_path).game,
                                                               variant="nonsense"))
    proc = subprocess.run([sys.executable, "-m", "tournaments.worker"], input=msgspec.json.encode(job).decode() + "\n",
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tournaments.worker: bug: UnknownVariant: unknown variant 'nonsense'"), proc.stderr
    assert last_words(proc.stderr).startswith("UnknownVariant: ")


def test_a_job_names_every_way_deals_come_from_a_seed():
    """A job's ``deals_from`` is one of the engine's derivations, every one of them."""
    from referee.engine.core.shuffle import DERIVATIONS
    from referee.matches.job import DealsFrom, within

    assert all(within(name, DealsFrom) for name in DERIVATIONS)
    assert not any(within(name, DealsFrom) for name in ("sha1", "BLAKE2B", "blake2b ", ""))


@pytest.mark.parametrize("edit", [
    lambda job: {**job, "bots": [{k: v for k, v in b.items() if k != "sandbox"} for b in job["bots"]]},
    lambda job: {**job, "bots": [{**{k: v for k, v in b.items() if k != "sandbox"}, "sandbx": True} for b in job["bots"]]},
    lambda job: {**job, "limits": {**job["limits"], "max_line": 1 << 30}},
    lambda job: {k: v for k, v in job.items() if k != "tc"},
    lambda job: {k: v for k, v in job.items() if k != "deals_from"},
    lambda job: {**job, "deals_from": "sha1"},
], ids=["no sandbox", "sandbox misspelt", "max_line out of bounds", "no clock", "no deals_from", "unknown deals_from"])
def test_a_job_that_leaves_out_or_misspells_a_setting_is_refused_not_played(tmp_path, edit):
    """The match process decodes a typed job (referee.matches.job.MatchJob): no key unknown, every bound
    kept, and no default for safety settings, so a job without ``sandbox`` (or with it
    misspelt) is refused rather than played with its bots unconfined."""
    league = load_league(write_league(tmp_path, league_toml(FOUR[:2])))
    job = msgspec.to_builtins(make_job(league, league.pairings()[0], tmp_path / "m.jsonl", tmp_path / "stderr"))
    proc = subprocess.run([sys.executable, "-m", "tournaments.worker"], input=json.dumps(edit(job)) + "\n",
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("tournaments.worker: bad job: "), proc.stderr
    assert not (tmp_path / "m.jsonl").exists()


# -- fuzzing: whatever the file holds, one line --------------------------------------------------------

_WORDS = ["name", "seed", "schedule", "gauntlet", "max_faults", "max_line", "memory_mb", "cpu_seconds", "database", "logs",
          "variant", "players", "deals", "games", "options", "startup", "move", "bank", "increment", "win", "draw", "loss",
          "command", "cwd", "env", "BOT_SEED", "rule13", "target", "x=y", ""]
_TABLES = ["[game]", "[clock]", "[points]", "[game.options]", "[[bot]]", "[bot]", "[[game]]", "[other]"]


def _toml_float(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf") if math.isinf(x) else repr(x)


_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats().map(_toml_float),
    st.text(max_size=12).map(json.dumps),
    st.sampled_from(["true", "false", "[]", "{}", '["a", 1]', '"sport"', '"kozel"', '"gauntlet"', '"first"', "1979-05-27",
                     json.dumps(str(ROOT_BOTS / "first_bot.py")), json.dumps(str(ROOT_BOTS / "greedy_bot.py")), '"."',
                     '{ BOT_SEED = "3" }', '{ "A=B" = 1 }', '"\\u0000"', "4", "12", "0", "-1", "1e308"]),
)
_LINES = st.one_of(
    st.tuples(st.sampled_from(_WORDS).map(json.dumps), _VALUES).map(" = ".join),
    st.sampled_from(_TABLES),
)


def _assert_one_line_or_league(tmp: str, content: bytes) -> None:
    path = Path(tmp) / "fuzz.toml"
    path.write_bytes(content)
    try:
        league = load_league(path)
    except LeagueError as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message and message.startswith(f"{path}: "), message
        assert not set(message.removeprefix(f"{path}: ")) <= set("+-| "), message
        return
    # What loads must be playable: nothing a match process or exec() would choke on.
    job = make_job(league, league.pairings()[0], path, path)
    assert msgspec.json.decode(msgspec.json.encode(job), type=MatchJob) == job  # what the match process decodes
    for bot in league.bots:
        assert all("\0" not in word for word in bot.argv)
        assert all(key and "=" not in key and "\0" not in key + value for key, value in bot.env.items())
    assert all(0 <= x <= 86400 for x in (league.tc.startup, league.tc.move, league.tc.bank or 0, league.tc.increment))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_as_a_league_file_give_a_league_or_one_line(content):
    with tempfile.TemporaryDirectory() as tmp:
        _assert_one_line_or_league(tmp, content)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_as_a_league_file_gives_a_league_or_one_line(content):
    with tempfile.TemporaryDirectory() as tmp:
        _assert_one_line_or_league(tmp, content.encode("utf-8", "surrogatepass"))


_VALID = league_toml(FOUR[1:3]).splitlines()


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=25), st.lists(st.tuples(st.integers(0, len(_VALID)), _LINES), max_size=4))
def test_league_shaped_files_give_a_league_or_one_line(lines, changes):
    # Random lines alone (mostly refused early), and a valid league with a few lines inserted.
    with tempfile.TemporaryDirectory() as tmp:
        _assert_one_line_or_league(tmp, "\n".join(lines).encode("utf-8", "surrogatepass"))
        valid = list(_VALID)
        for at, line in changes:
            valid.insert(at, line)
        _assert_one_line_or_league(tmp, "\n".join(valid).encode("utf-8", "surrogatepass"))


# -- the watchdog: a match that makes no progress is ended, and not replayed for ever ---------------------

STOPPER = """
import json, os, signal, sys
from pathlib import Path
pid_file = Path(os.environ["PID_FILE"])
pid_file.with_suffix(".part").write_text(f"{os.getpid()} {os.getppid()}")
pid_file.with_suffix(".part").rename(pid_file)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "stopper", "version": "1", "protocol": 1}), flush=True)
        os.kill(os.getppid(), signal.SIGSTOP)  # the referee's process: the whole match freezes
"""
#: The watchdog's silence in the stopper's league: longer than any pause of a loaded machine, and
#: never waited out: the test moves trio's clock past it once the match process is stopped.
WATCH = 60.0


def _state(pid: int) -> str | None:
    """The process's state letter (T: stopped), or ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


async def _play_until_stopped(league, clock, pid_file: Path, **kw):
    """Run the league while its stopper stops its match process; once that process is seen
    stopped (the bot's pid file, then the process's state: events, not a time), move the clock
    past the watchdog's silence.  The league's report and the stopper's pid."""
    pid_file.unlink(missing_ok=True)
    reports = []

    async def play():
        reports.append(await run_league(league, silence=WATCH, **kw))

    with trio.fail_after(HANG + WATCH):  # a hang guard only: the clock jumps by WATCH once
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play)
            while not pid_file.exists():
                await trio.sleep(0.05)
            pid, parent = map(int, pid_file.read_text().split())
            while _state(parent) not in ("T", None):
                await trio.sleep(0.05)
            clock.jump(WATCH)
    return reports[0], pid


async def test_a_bot_that_stops_its_match_process_is_ended_recorded_and_given_up_after_three_tries(tmp_path, mock_clock):
    mock_clock.rate = 1  # real time, but for the jump past the watchdog
    (tmp_path / "stopper.py").write_text(STOPPER, encoding="utf-8")
    pid_file = tmp_path / "stopper.pid"
    # Only a bot outside the sandbox can reach its match process (tests/bots/test_sandbox.py).
    text = league_toml(FOUR[:1]) + (f'[[bot]]\nname = "stopper"\ncommand = "stopper.py"\nenv = {{ PID_FILE = "{pid_file}" }}\n'
                                    'sandbox = false\n')
    path = write_league(tmp_path, text)
    league = load_league(path)
    assert WATCH < stall_limit(league)  # the jump wakes the silence watchdog, not the stall one
    for attempt in (1, 2, 3):
        report, pid = await _play_until_stopped(league, mock_clock, pid_file)
        [(_, reason)] = report.failed
        assert f"gave no sign of life for {WATCH:g} s" in reason and "SIGSTOP" in reason
        assert not alive(pid)  # the bot went with its match process
        status = cli("league", "status", str(path))
        assert (f"(attempt {attempt} of 3)" in status.stdout) == (attempt < 3), status.stdout
    assert "given up greedy vs stopper: cut short 3 times" in status.stdout and "--retry" in status.stdout
    with trio.fail_after(HANG):
        report = await run_league(league, silence=WATCH)
    assert report.played == 0 and not report.failed and [k.bots for k, _ in report.given_up] == [("greedy", "stopper")]
    r = referee("league", "run", str(path))
    assert r.returncode == X.BUG and "given up: greedy vs stopper" in r.stderr, r.stderr
    report, _ = await _play_until_stopped(league, mock_clock, pid_file, retry=True)
    assert len(report.failed) == 1 and "(attempt 1 of 3)" in cli("league", "status", str(path)).stdout


async def test_a_signal_just_after_the_last_table_leaves_a_complete_league_not_an_interrupted_one(tmp_path, monkeypatch):
    """Issue 40: Ctrl-C just after a league's last match said "6 of 6 pairings done; run the same
    command again" and exited 130."""
    from tournaments import runner

    path = write_league(tmp_path, league_toml(FOUR[:3]))
    league = load_league(path)

    class SignalAfterTheLast(runner.Quiet):
        def begin(self, pairings: int, done: int, pending: int) -> None:
            self.left = pending

        def finished(self, key, record, error) -> None:
            self.left -= 1
            if self.left == 0:
                os.kill(os.getpid(), signal.SIGINT)  # as a person's Ctrl-C, once every table is stored

    seen = []
    finish = runner.Session.finish

    def noting(session) -> None:
        seen.append(session.report.interrupted)
        finish(session)

    monkeypatch.setattr(runner.Session, "finish", noting)
    with trio.fail_after(HANG):
        report = await run_league(league, display=SignalAfterTheLast(), handle_signals=True)
    assert seen == [True]  # the signal was taken
    assert report.left == 0 and report.played == 3 and not report.interrupted
    status = cli("league", "status", str(path))
    assert "3 done, 0 failed, 0 pending" in status.stdout and "cut short" not in status.stdout, status.stdout
    again = referee("league", "run", str(path), "-q")
    assert again.returncode == X.OK and "played 0 matches" in again.stdout and "3 of 3" in again.stdout, again.stdout + again.stderr


async def test_a_match_that_makes_no_progress_for_longer_than_its_clocks_allow_is_stopped(tmp_path):
    # Alive (its heartbeat comes) but no deal ends: the stall limit of the clocks.
    alive = [sys.executable, "-c", (
        "import json, sys, time\n"
        "sys.stdin.readline()\n"
        "while True:\n"
        "    print(json.dumps({'k': 'alive'}), flush=True)\n"
        "    time.sleep(0.2)\n")]
    path = write_league(tmp_path, league_toml(FOUR[:2]))
    with trio.fail_after(HANG):
        report = await run_league(load_league(path), worker_argv=alive, stall=1.5, silence=30.0)
    [(_, reason)] = report.failed
    assert "made no progress for 1.5 s, longer than its clocks allow" in reason


# -- logs: a match is done only with its log; a log folder belongs to one league -------------------------

REMOVER = """
import json, os, shutil, sys
from pathlib import Path
flag = Path(os.environ["FLAG"])
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if not flag.exists():
            flag.write_text("done")
            shutil.rmtree(os.environ["LOGS"])
        print(json.dumps({"type": "hello", "name": "remover", "version": "1", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        first = msg["legal"][0]
        print(json.dumps({"type": "play", "tile": first["tile"], "end": first.get("end")}), flush=True)
    elif msg["type"] == "match_end":
        break
"""


def test_a_match_whose_log_folder_was_removed_is_not_stored_as_done(tmp_path):
    (tmp_path / "remover.py").write_text(REMOVER, encoding="utf-8")
    logs = tmp_path / "league-logs"
    text = league_toml(FOUR[1:2]) + (f'[[bot]]\nname = "remover"\ncommand = "remover.py"\n'
                                      f'env = {{ FLAG = "{tmp_path / "flag"}", LOGS = "{logs}" }}\n'
                                      'sandbox = false\n')  # in the sandbox it could not see the logs
    path = write_league(tmp_path, text)
    r = cli("league", "run", str(path))
    assert r.exit_code == X.BUG, r.stderr
    assert "disappeared while the match was played" in r.stderr
    conn = sqlite3.connect(path.with_suffix(".db"))
    try:
        assert conn.execute("SELECT status, log FROM matches").fetchall() == [("failed", None)]
    finally:
        conn.close()
    r = cli("league", "run", str(path))
    assert r.exit_code == 0, r.stderr
    assert (logs / "first-vs-remover.jsonl").exists()


def test_a_log_folder_belongs_to_one_league(tmp_path):
    first = write_league(tmp_path, league_toml(FOUR[:2], head='database = "a.db"\nlogs = "shared"'), "a.toml")
    second = write_league(tmp_path, league_toml(FOUR[:2], head='database = "b.db"\nlogs = "shared"'), "b.toml")
    assert cli("league", "run", str(first)).exit_code == 0
    r = cli("league", "run", str(second))
    assert r.exit_code == X.USAGE and r.stderr.count("\n") == 1, r.stderr
    assert "the log folder" in r.stderr and "belongs to the league of" in r.stderr and "a.db" in r.stderr
    assert cli("league", "run", str(first)).exit_code == 0  # its owner still uses it
    # A folder whose league database is gone is taken over.
    (tmp_path / "a.db").unlink()
    assert cli("league", "run", str(second)).exit_code == 0


# -- the database: read-only, deleted rows, damaged pages; a full disk --------------------------------

def played_league(tmp_path: Path, bots=FOUR[:2]) -> Path:
    path = write_league(tmp_path, league_toml(bots))
    r = cli("league", "run", str(path))
    assert r.exit_code == 0, r.stderr
    return path


def test_rows_deleted_by_hand_are_played_again_and_stored(tmp_path):
    path = played_league(tmp_path)
    db = path.with_suffix(".db")
    conn = sqlite3.connect(db)  # foreign keys off, as in the sqlite3 shell: boards and faults stay
    boards = conn.execute("SELECT COUNT(*) FROM boards").fetchone()[0]
    conn.execute("DELETE FROM matches")
    conn.execute("DELETE FROM meta")
    conn.execute("DELETE FROM bots")
    conn.commit()
    conn.close()
    r = cli("league", "run", str(path))
    assert r.exit_code == 0, r.stderr
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT status FROM matches").fetchall() == [("done",)]
        assert conn.execute("SELECT COUNT(*) FROM boards").fetchone()[0] == boards
    finally:
        conn.close()


def test_a_damaged_database_is_refused_in_one_line_by_run_status_and_table(tmp_path):
    path = played_league(tmp_path)
    db = path.with_suffix(".db")
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) >= 4 * page
    data[2 * page + 8 : 3 * page] = bytes(range(256)) * ((page - 8) // 256) + bytes((page - 8) % 256)
    db.write_bytes(bytes(data))
    for command in ("run", "status", "table"):
        r = cli("league", command, str(path))
        assert r.exit_code == X.USAGE, (command, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and "damaged" in r.stderr, r.stderr
    assert db.read_bytes() == bytes(data)  # left as it was


def _read_only(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    """Run ``argv`` with ``folder`` read-only: a read-only bind mount in a mount namespace of
    its own as root (root writes through file modes), file modes otherwise."""
    if os.geteuid() == 0:
        script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
        return subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), *argv], capture_output=True, text=True,
                              timeout=HANG, stdin=subprocess.DEVNULL, check=False)
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    try:
        for p, mode in modes.items():
            p.chmod(mode & ~0o222)
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL, check=False)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def test_a_read_only_database_is_refused_in_one_line_and_still_read(tmp_path):
    folder = tmp_path / "ro"
    path = played_league(folder, FOUR[:2])
    path.write_text(league_toml(FOUR[:3]), encoding="utf-8")  # a bot added: the next run has matches to play
    before = path.with_suffix(".db").read_bytes()
    r = _read_only(folder, sys.executable, "-m", "referee", "league", "run", str(path))
    assert r.returncode == X.USAGE, r.stderr
    assert r.stderr.count("\n") == 1 and "read-only" in r.stderr, r.stderr
    for command in ("status", "table"):
        r = _read_only(folder, sys.executable, "-m", "referee", "league", command, str(path))
        assert r.returncode == 0 and "greedy" in r.stdout, (command, r.stderr)
    assert path.with_suffix(".db").read_bytes() == before


def _limit_file_size(size: int):
    def setup() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return setup


def test_a_full_disk_stops_the_league_cleanly_and_keeps_every_finished_match(tmp_path):
    # RLIMIT_FSIZE makes writes past a size fail (EFBIG) as a full disk does (ENOSPC), for the
    # league and its match processes alike.
    path = played_league(tmp_path, FOUR[:2])
    db = path.with_suffix(".db")
    log = tmp_path / "league-logs" / "first-vs-greedy.jsonl"
    limit = max(db.stat().st_size, 64 * 1024) + 16 * 1024
    assert log.stat().st_size > limit  # a match log does not fit: the next match fills the "disk"
    path.write_text(league_toml(FOUR[:3]), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(path)], capture_output=True, text=True,
                       timeout=HANG, stdin=subprocess.DEVNULL, check=False, preexec_fn=_limit_file_size(limit))
    assert r.returncode == X.USAGE, r.stderr
    # the league file's seed is short: the run says so as it begins, then stops in one line
    said = [line for line in r.stderr.splitlines() if not line.startswith("warning: seed 1 is short")]
    assert len(said) == 1 and r.stderr.count("\n") == 2, r.stderr
    assert "File too large" in r.stderr and "keeps every finished match" in r.stderr and "run the same command again" in r.stderr
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT round, bots, leg, status FROM matches").fetchall() == [(0, "first,greedy", 0, "done")]
    finally:
        conn.close()
    assert not list(log.parent.glob(".*.part.*"))
    r = cli("league", "run", str(path))
    assert r.exit_code == 0 and "3 of 3 pairings done" in r.stdout, r.stderr


# -- a league interrupted more often than its matches last --------------------------------------------

SLOW = """
import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        time.sleep(60)
"""


def test_status_says_when_runs_keep_ending_before_any_match_finishes(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW, encoding="utf-8")
    text = league_toml(FOUR[:1]).replace("startup = 30.0", "startup = 90.0") + '[[bot]]\nname = "slow"\ncommand = "slow.py"\n'
    path = write_league(tmp_path, text)
    db = path.with_suffix(".db")
    for runs in (1, 2):
        proc = start_league(path)
        try:
            deadline = time.monotonic() + HANG
            while _meta(db, "cut_runs") != str(runs):
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.05)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    status = cli("league", "status", str(path))
    assert "the last 2 runs all ended before a match finished" in status.stdout, status.stdout
    assert "never advances" in status.stdout


def _meta(db: Path, key: str) -> str | None:
    try:
        conn = sqlite3.connect(db, timeout=30)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]
    except sqlite3.Error:
        return None
    finally:
        conn.close()


# -- fuzzing: damaged databases ----------------------------------------------------------------------


class _Blob(bytes):
    def __repr__(self) -> str:  # hypothesis shows its arguments: not 40 kB of them
        return f"<{len(self)} bytes>"


@pytest.fixture(scope="module")
def small_db(tmp_path_factory) -> bytes:
    """The bytes of a played two-bot league's database (its WAL folded in)."""
    path = write_league(tmp_path_factory.mktemp("small"), league_toml(FOUR[:2]))
    r = cli("league", "run", str(path))
    assert r.exit_code == 0, r.stderr
    return _Blob(path.with_suffix(".db").read_bytes())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_database_gives_a_table_or_one_line(small_db, data):
    damaged = bytearray(small_db)
    if data.draw(st.booleans()):
        del damaged[data.draw(st.integers(0, len(damaged))):]
    for _ in range(data.draw(st.integers(1, 8))):
        if damaged:
            at = data.draw(st.integers(0, len(damaged) - 1))
            damaged[at : at + 16] = data.draw(st.binary(min_size=1, max_size=16))[: len(damaged) - at]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_league(Path(tmp), league_toml(FOUR[:2]))
        path.with_suffix(".db").write_bytes(bytes(damaged))
        for command in ("status", "table"):
            r = cli("league", command, str(path))
            assert r.exit_code in (0, X.USAGE), (command, r.exit_code, r.stderr, r.exception)
            if r.exit_code:
                assert r.stderr.count("\n") == 1 and str(path.with_suffix(".db")) in r.stderr, r.stderr


@pytest.mark.parametrize("edit, expected", [
    ("UPDATE meta SET value = '{not json' WHERE key = 'settings'", "the settings (meta 'settings') cannot be read"),
    ("UPDATE bots SET identity = 'x' WHERE name = 'first'", "bot 'first' (bots) cannot be read"),
    ("UPDATE seats SET points = 'lots'", "hold a points of 'lots', which no table can have"),
    ("UPDATE boards SET margin = 'x' WHERE board = 0", "hold a margin of 'x', which no table can have"),
    ("UPDATE seats SET score = 1e308 WHERE seat = 0", "hold a score of 1e+308, which no table can have"),
    ("UPDATE seats SET place = 9 WHERE seat = 1", "hold a place of 9"),
    ("UPDATE boards SET margin = 1e300 WHERE board = 1", "hold a margin of 1e+300"),
])
def test_values_edited_by_hand_are_refused_in_one_line(tmp_path, edit, expected):
    path = played_league(tmp_path)
    conn = sqlite3.connect(path.with_suffix(".db"))
    conn.execute(edit)
    conn.commit()
    conn.close()
    for command in ("run", "status", "table"):
        r = cli("league", command, str(path))
        assert r.exit_code == X.USAGE, (command, r.stdout, r.stderr, r.exception)
        assert r.stderr.count("\n") == 1 and expected in r.stderr, r.stderr


# -- issue 23 item 10: read-only index files, a full disk on opening, max_line ---------------------------

NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


def _as_a_user(*argv: str) -> subprocess.CompletedProcess:
    """Run ``argv`` subject to file modes: as root, without the capabilities that write through
    them (a read-only file is read-only to it, as to anyone else)."""
    prefix = NO_DAC if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL, check=False)


def test_reading_a_read_only_database_leaves_nothing_that_keeps_a_later_run_from_writing(tmp_path):
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("as root, the test needs setpriv to be subject to file modes")
    # Concurrent: a user may not make the cgroups strict isolation (a league's default) freezes.
    path = write_league(tmp_path, league_toml(FOUR[:2], head='isolation = "concurrent"'))
    assert cli("league", "run", str(path)).exit_code == 0
    db = path.with_suffix(".db")
    shm = db.with_name(db.name + "-shm")
    db.chmod(0o444)
    r = _as_a_user(sys.executable, "-m", "referee", "league", "table", str(path))
    assert r.returncode == 0 and "greedy" in r.stdout, r.stderr
    assert not shm.exists(), oct(shm.stat().st_mode)  # no index file of mode 0444 left beside it
    # One left read-only by any other reader (sqlite3 itself, or an older version's table) ...
    r = _as_a_user(sys.executable, "-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('SELECT * FROM meta').fetchall()",
                   str(db))
    assert r.returncode == 0 and shm.exists() and not shm.stat().st_mode & 0o222, r.stderr
    # ... does not make the database read-only once it is writable again.
    db.chmod(0o644)
    r = _as_a_user(sys.executable, "-m", "referee", "league", "run", str(path))
    assert r.returncode == 0 and "1 of 1 pairings done" in r.stdout, r.stderr


def test_a_full_disk_while_a_database_is_opened_says_so(tmp_path):
    # RLIMIT_FSIZE: SQLite cannot write the index file (-shm) a WAL database needs to be read.
    path = played_league(tmp_path, FOUR[:2])
    for leftover in tmp_path.glob("league.db-*"):
        leftover.unlink()
    for command in ("table", "status", "run"):
        r = subprocess.run([sys.executable, "-m", "referee", "league", command, str(path)], capture_output=True, text=True,
                           timeout=HANG, stdin=subprocess.DEVNULL, check=False, preexec_fn=_limit_file_size(1024))
        assert r.returncode == X.USAGE, (command, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and "not a league database" not in r.stderr, r.stderr
        assert "disk I/O error" in r.stderr and "may be full" in r.stderr and "free some space" in r.stderr, r.stderr
        for leftover in tmp_path.glob("league.db-*"):
            leftover.unlink()


def test_a_league_takes_no_longer_line_than_a_match_does(tmp_path):
    """One bound, in one type (referee.matches.job.MaxLine), for both front doors: the same value is
    refused by ``referee match`` and by a league file in the same words."""
    from tests.test_robustness import cli as match_cli
    from tournaments.config import LeagueFile

    assert msgspec.inspect.type_info(LeagueFile).fields[[f.name for f in msgspec.inspect.type_info(LeagueFile).fields].index("max_line")].type \
        == msgspec.inspect.type_info(MatchJob).fields[[f.name for f in msgspec.inspect.type_info(MatchJob).fields].index("limits")].type.fields[1].type
    refused = match_cli("match", ROOT_BOTS / "first_bot.py", ROOT_BOTS / "first_bot.py", "--max-line", str((16 << 20) + 1),
                        "--log", tmp_path / "m.jsonl")
    assert refused.exit_code == X.USAGE and f"--max-line: {(16 << 20) + 1} is out of bounds (from 256 to 16777216 bytes)" in refused.stderr


@pytest.mark.parametrize("max_line, ok", [(16 << 20, True), ((16 << 20) + 1, False), (1 << 30, False)])
def test_max_line_beyond_what_a_match_takes_is_refused(tmp_path, max_line, ok):
    path = write_league(tmp_path, league_toml(FOUR[:2], head=f"max_line = {max_line}"))
    if ok:
        assert load_league(path).max_line == max_line
        return
    with pytest.raises(LeagueError, match=f"max_line: {max_line} is out of bounds \\(from 256 to 16777216 bytes\\)"):
        load_league(path)
