"""``referee league`` against what a bot, a file or the machine can do to it: a process killed
while it makes the database, bad and random league files, damaged or read-only databases, rows
deleted by hand, a full disk, a log folder taken away or shared, a match process that is stopped.

Every failure must be one line (exit code 2 when the file or the database is at fault) and must
lose no finished match.
"""

from __future__ import annotations

import json
import math
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from test_league import BOTS as ROOT_BOTS
from test_league import FOUR, HANG, cli, league_toml, write_league

from referee import exitcodes as X
from tournaments.config import MAX_SECONDS, LeagueError, load_league
from tournaments.runner import last_words, make_job, run_league
from tournaments.store import SCHEMA_VERSION, TABLES, open_store

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
        assert store.matches() == []


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
    (league_toml(FOUR[:2]).replace("startup = 30.0", "startup = 1e308"), "clock.startup: 1e+308 seconds is more than a day"),
    (league_toml(FOUR[:2]).replace("move = 10.0", "move = inf"), "clock.move: expected a finite number"),
    (league_toml(FOUR[:2]).replace("move = 10.0", "move = 10.0\nbank = nan"), "clock.bank: expected a finite number"),
    (league_toml(FOUR[:2], head="memory_mb = 9223372036854775807"), "memory_mb: 9223372036854775807 is more than"),
    (league_toml(FOUR[:2], head="cpu_seconds = 9223372036854775807"), "cpu_seconds: 9223372036854775807 is more than"),
    (league_toml(FOUR[:2], head="max_line = 9223372036854775807"), "max_line: 9223372036854775807 is more than"),
    (league_toml(FOUR[:2], deals=4_000_000_000), "game.deals: 4000000000 is more than"),
    (league_toml(FOUR[:2], head="[points]\nwin = 1e300"), "points.win: 1e+300 is out of bounds"),
    (league_toml(FOUR[:2], seed='"x"'), "seed: expected an integer, got 'x'"),
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
    path = write_league(tmp_path, text)
    for command in ("run", "table", "status"):
        r = cli("league", command, str(path))
        assert r.exit_code == X.USAGE, (command, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and str(path) in r.stderr, r.stderr
        assert expected in r.stderr, r.stderr
    assert not path.with_suffix(".db").exists()


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


def test_the_match_process_ends_a_bug_with_one_line_naming_the_exception():
    proc = subprocess.run([sys.executable, "-m", "tournaments.worker"], input='{"variant": "sport"}\n', capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == "tournaments.worker: bug: KeyError: 'tc'", proc.stderr
    assert last_words(proc.stderr) == "KeyError: 'tc'"


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
    json.dumps(make_job(league, league.pairings()[0], path, path), allow_nan=False)
    for bot in league.bots:
        assert all("\0" not in word for word in bot.argv)
        assert all(key and "=" not in key and "\0" not in key + value for key, value in bot.env.items())
    assert all(0 <= x <= MAX_SECONDS for x in (league.tc.startup, league.tc.move, league.tc.bank or 0, league.tc.increment))


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
