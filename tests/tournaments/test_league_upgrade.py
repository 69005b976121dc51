"""Databases of older versions keep working: ``tests/fixtures/league_v2`` is a league played
and stored by the code of schema version 2 (before tables of N bots: two-bot matches keyed by
``bot_a < bot_b``), with the ``table`` and ``status`` it printed then.  Read, it prints the same
and is left as it is; run, it is upgraded in place in one transaction (a kill at any statement
leaves the old or the new database, never a broken one) and holds exactly what this version
stores for the same matches.  Values no table can have, in an old database, are refused.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from referee.base import exitcodes as X
from tests.tournaments.test_league import BOTS, HANG, cli
from tests.tournaments.test_league_hardening import KILL_AT
from tournaments.store import SCHEMA_VERSION, dump, open_store

pytestmark = pytest.mark.slow  # plays the fixture's league on with real bots

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "league_v2"
OLD_PATH = "/tmp/leagues-bench/fx"  # where the fixture was played (its status names the database there)
BROKEN = "import sys\nprint('no opening book', file=sys.stderr)\nsys.exit(1)\n"


def meta(db: Path, key: str) -> str | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    finally:
        conn.close()
    return None if row is None else row[0]


def old_league(folder: Path) -> Path:
    """The fixture's league, database and all, in ``folder`` with its bots beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("league.toml", "league.db"):
        shutil.copy(FIXTURE / name, folder / name)
    bots = folder / "bots"
    bots.mkdir()
    for script in ("greedy_bot.py", "first_bot.py", "random_bot.py"):
        shutil.copy(BOTS / script, bots / script)
    (bots / "broken_bot.py").write_text(BROKEN, encoding="utf-8")
    folder.chmod(0o755)  # in the sandbox, as root, the bots run as a user of their own
    return folder / "league.toml"


def version(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_the_fixture_is_a_database_of_version_2():
    conn = sqlite3.connect(FIXTURE / "league.db")
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        columns = [r[1] for r in conn.execute("PRAGMA table_info(matches)")]
        assert columns[:3] == ["bot_a", "bot_b", "status"] and "score_a" in columns and "attempts" in columns
        assert conn.execute("SELECT COUNT(*), SUM(status = 'done') FROM matches").fetchone() == (10, 3)
    finally:
        conn.close()


def test_an_old_database_reads_as_it_did_and_is_left_as_it_is(tmp_path):
    path = old_league(tmp_path / "old")
    db = path.with_suffix(".db")
    before = db.read_bytes()
    for fmt, name in (("json", "table-v2.json"), ("csv", "table-v2.csv"), ("markdown", "table-v2.md")):
        r = cli("league", "table", str(path), "--format", fmt)
        assert r.exit_code == 0, r.stderr
        assert r.stdout == (FIXTURE / name).read_text(encoding="utf-8"), fmt
    r = cli("league", "status", str(path))
    assert r.exit_code == 0, r.stderr
    assert r.stdout == (FIXTURE / "status-v2.txt").read_text(encoding="utf-8").replace(OLD_PATH, str(path.parent))
    for fmt in ("json", "csv", "markdown"):
        assert cli("league", "status", str(path), "--format", fmt).exit_code == 0
    report = cli("report", str(path), "-O", str(tmp_path / "site"))
    assert report.exit_code == 0 and "3 of 10 pairings played" in report.stdout, report.stderr
    assert db.read_bytes() == before and version(db) == 2  # a read never writes


def test_a_version_1_database_reads_and_upgrades_too(tmp_path):
    # Version 1 had no attempts column: failed pairings were played again for ever.
    path = old_league(tmp_path / "v1")
    db = path.with_suffix(".db")
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE matches DROP COLUMN attempts")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    r = cli("league", "table", str(path), "--format", "json")
    assert r.exit_code == 0 and r.stdout == (FIXTURE / "table-v2.json").read_text(encoding="utf-8"), r.stderr
    assert version(db) == 1
    r = cli("league", "run", str(path))
    assert r.exit_code == X.BOT_START and "6 of 10 pairings done" in r.stdout, r.stderr  # broken still cannot start
    assert version(db) == SCHEMA_VERSION


def _without_random(rows: list[tuple]) -> list[tuple]:
    """Rows of tables random_bot did not play (a table's bots are a comma-separated field)."""
    return [row for row in rows if not any(isinstance(v, str) and "random" in v.split(",") for v in row)]


def _without_commands(rows: list[tuple]) -> list[tuple]:
    """Match rows with the bots' command lines taken out of the stored result (they name the
    interpreter and the folder the league was played in)."""
    out = []
    for row in rows:
        row = list(row)
        for i, value in enumerate(row):
            if isinstance(value, str) and value.startswith('{"ahead"'):
                result = json.loads(value)
                for bot in result["bots"]:
                    bot.pop("command")
                row[i] = result
        out.append(tuple(row))
    return out


def test_a_run_upgrades_an_old_database_in_place_to_what_this_version_stores(tmp_path):
    path = old_league(tmp_path / "old")
    db = path.with_suffix(".db")
    r = cli("league", "run", str(path))
    assert r.exit_code == X.BOT_START, r.stderr  # the broken bot still cannot start: its pairings fail, nothing else does
    assert "played 3 matches" in r.stdout and "6 of 10 pairings done" in r.stdout
    assert version(db) == SCHEMA_VERSION
    conn = sqlite3.connect(db)
    try:
        kept = conn.execute("SELECT bots, seat, bot, place, score, points FROM seats WHERE bots IN "
                            "('first,greedy', 'greedy,random', 'first,random') ORDER BY bots, seat").fetchall()
        attempts = dict(conn.execute("SELECT bots, attempts FROM matches WHERE status = 'failed'").fetchall())
    finally:
        conn.close()
    old = sqlite3.connect(FIXTURE / "league.db")
    try:
        expected = []
        for a, b, score, pa, pb in old.execute("SELECT bot_a, bot_b, score_a, points_a, points_b FROM matches WHERE status = 'done' "
                                                "ORDER BY bot_a, bot_b"):
            expected += [(f"{a},{b}", 0, a, 1 if score >= 0.5 else 2, score, pa), (f"{a},{b}", 1, b, 1 if score <= 0.5 else 2, 1 - score, pb)]
    finally:
        old.close()
    assert kept == expected  # the old matches, seat by seat
    assert set(attempts) == {"broken,first", "broken,greedy", "broken,late", "broken,random"}
    assert set(attempts.values()) == {2}  # a bot that cannot start adds no attempt to the old count

    # Its new tables deal as its old ones did (the public splitmix64: it was played before deals
    # were keyed), so every pairing of the league plays the same deals.
    assert meta(db, "deals_from") == "splitmix64"
    headers = [json.loads(p.read_text().splitlines()[0]) for p in sorted((path.parent / "league-logs").glob("*.jsonl"))]
    assert headers and {h["deals_from"] for h in headers if "deals_from" in h} == {"splitmix64"}

    # The same league played from scratch by this version, in a database that deals as the old
    # one did, stores the same done tables.
    fresh = old_league(tmp_path / "fresh")
    (fresh.parent / "league.db").unlink()
    store = open_store(fresh.parent / "league.db", create=True)
    assert store is not None
    with store, store.transaction("write"):
        store.conn.execute("INSERT INTO meta VALUES ('deals_from', 'splitmix64')")
    r = cli("league", "run", str(fresh))
    assert r.exit_code == X.BOT_START and "6 of 10 pairings done" in r.stdout, r.stderr
    upgraded, new = dump(db), dump(fresh.with_suffix(".db"))
    # random_bot's tables are played again differently: each seating now has processes of its
    # own, so its seeded random stream starts again where the old version's went on.
    for table in ("seats", "boards", "faults", "bots", "draws"):
        assert _without_random(upgraded[table]) == _without_random(new[table]), table
    assert _without_commands(_without_random([m for m in upgraded["matches"] if m[3] == "done"])) == \
        _without_commands(_without_random([m for m in new["matches"] if m[3] == "done"]))
    assert any("first,greedy" in row for row in _without_random(new["seats"]))
    assert [m for m in upgraded["meta"] if m[0] == "settings"] == [m for m in new["meta"] if m[0] == "settings"]


@pytest.mark.parametrize("edit, expected", [
    ("UPDATE matches SET score_a = 1e308 WHERE bot_a = 'first' AND bot_b = 'greedy'", "hold a score of 1e+308, which no table can have"),
    ("UPDATE matches SET score_a = -1 WHERE bot_a = 'first' AND bot_b = 'greedy'", "hold a score of"),
    ("UPDATE matches SET points_a = 'lots' WHERE bot_a = 'first' AND bot_b = 'greedy'", "hold values that are not numbers"),
    ("UPDATE matches SET net_b = 1e300 WHERE bot_a = 'first' AND bot_b = 'greedy'", "hold a net of 1e+300"),
    ("UPDATE boards SET margin_a = 9e99 WHERE board = 0", "hold a margin of"),
])
def test_values_no_table_can_have_in_an_old_database_are_refused_in_one_line(tmp_path, edit, expected):
    path = old_league(tmp_path / "old")
    db = path.with_suffix(".db")
    conn = sqlite3.connect(db)
    conn.execute(edit)
    conn.commit()
    conn.close()
    before = db.read_bytes()
    for command in ("status", "table", "run"):
        r = cli("league", command, str(path))
        assert r.exit_code == X.USAGE, (command, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and expected in r.stderr, r.stderr
    assert db.read_bytes() == before and version(db) == 2  # a refused upgrade leaves the database as it was


def test_an_upgrade_killed_at_any_statement_leaves_the_old_or_the_new_database(tmp_path):
    path = old_league(tmp_path / "old")
    db = path.with_suffix(".db")
    pristine = db.read_bytes()
    want = (FIXTURE / "table-v2.json").read_text(encoding="utf-8")
    k = 1
    while True:
        for leftover in db.parent.glob("league.db*"):
            leftover.unlink()
        db.write_bytes(pristine)
        proc = subprocess.run([sys.executable, "-c", KILL_AT, str(db), str(k)], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False, timeout=HANG, env={**os.environ, "PYTHONPATH": os.getcwd()})
        assert version(db) in (2, SCHEMA_VERSION), k
        r = cli("league", "table", str(path), "--format", "json")
        assert r.exit_code == 0 and r.stdout == want, (k, r.stderr)
        if proc.returncode == 0:  # got through every statement: every moment was tried
            break
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        k += 1
    assert k > 10 and version(db) == SCHEMA_VERSION
