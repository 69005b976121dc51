"""A league's deals are secret unless its file says otherwise (issue 21): without ``seed`` the
first run draws one from the operating system and keeps it in the database, every table and
every later run (a resume) deals from it, ``table`` and ``status`` read it back, and no bot is
told it.  A short seed the file gives is played, with a one-line warning."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from referee.base import exitcodes as X
from referee.base.seeds import GUESSABLE_BITS
from tests.tournaments.test_league import FOUR, cli, league_toml, write_league

pytestmark = pytest.mark.slow  # leagues of real bot processes


def stored_seed(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        (text,) = conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
    finally:
        conn.close()
    return int(text, 16)


def headers(logs: Path) -> list[dict]:
    return [json.loads(p.read_text().splitlines()[0]) for p in sorted(logs.rglob("*.jsonl"))]


def test_a_league_without_a_seed_deals_from_a_secret_one_it_keeps(tmp_path):
    text = league_toml(FOUR[:3]).replace("seed = 1\n", "")
    league = write_league(tmp_path, text)
    db = tmp_path / "league.db"
    first = cli("league", "run", str(league), "--db", str(db))
    assert first.exit_code == X.OK, first.output
    seed = stored_seed(db)
    assert seed.bit_length() > GUESSABLE_BITS
    assert "warning" not in first.output
    more = league_toml(FOUR).replace("seed = 1\n", "")
    (tmp_path / "more.toml").write_text(more)
    rest = cli("league", "run", str(tmp_path / "more.toml"), "--db", str(db))  # a later run: its new tables deal from the same seed
    assert rest.exit_code == X.OK, rest.output
    assert stored_seed(db) == seed
    logs = headers(tmp_path / "league-logs")
    assert len(logs) == 6 and {h["seed"] for h in logs} == {seed}  # 3 tables, then the 3 of the bot added and all(h["deals_from"] == "blake2b" for h in logs)
    for path in (tmp_path / "league-logs").rglob("*.jsonl"):  # never in what a bot was sent
        assert all(str(seed) not in line and f"{seed:x}" not in line for line in path.read_text().splitlines()
                   if line.startswith('{"k":"out"'))
    assert cli("league", "table", str(league), "--db", str(db)).exit_code == X.OK
    status = cli("league", "status", str(league), "--db", str(db))
    assert status.exit_code == X.OK and "a secret seed" not in status.output


def test_a_short_seed_is_played_with_a_warning(tmp_path):
    league = write_league(tmp_path, league_toml(FOUR[:2], seed=42))
    result = cli("league", "run", str(league), "--db", str(tmp_path / "league.db"))
    assert result.exit_code == X.OK, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning: seed 42 is short")]
    assert len(warnings) == 1 and "leave seed out" in warnings[0]
    assert {h["seed"] for h in headers(tmp_path / "league-logs")} == {42}


def test_a_seed_past_tomls_integers_is_given_as_a_string(tmp_path):
    seed = 2**100 + 7
    league = write_league(tmp_path, league_toml(FOUR[:2]).replace("seed = 1", f'seed = "{seed:#x}"'))
    result = cli("league", "run", str(league), "--db", str(tmp_path / "league.db"))
    assert result.exit_code == X.OK, result.output
    assert "warning" not in result.output and {h["seed"] for h in headers(tmp_path / "league-logs")} == {seed}
