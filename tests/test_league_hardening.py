"""``referee league`` against what a bot, a file or the machine can do to it: a process killed
while it makes the database, bad and random league files, damaged or read-only databases, rows
deleted by hand, a full disk, a log folder taken away or shared, a match process that is stopped.

Every failure must be one line (exit code 2 when the file or the database is at fault) and must
lose no finished match.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_league import FOUR, cli, league_toml, write_league

from referee import exitcodes as X
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
