"""``referee ladder table`` in every format, and its club column for Kozel: seed 002's club rating
recomputed here from the stored games, independently of tournaments.ladder.club."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from decimal import ROUND_HALF_UP, Decimal

import pytest

from referee.base import exitcodes as X
from tests.ladder.test_host import BOTS, FIELD, referee, write

pytestmark = pytest.mark.slow  # a real host


def kozel_toml() -> str:
    parts = ["seed = 3", "sandbox = false", "[game]", 'variant = "kozel"', "games = 1"]
    for name, script, _ in FIELD[:2]:
        parts += ["[[bot]]", f'name = "{name}"', f'command = "{BOTS / script}"']
    return "\n".join(parts) + "\n"


def test_the_club_column_is_seed_002s_rating_of_the_stored_games(tmp_path):
    path = write(tmp_path, kozel_toml())
    r = referee("ladder", "run", str(path), "--max-deals", "1", "-q")
    assert r.returncode == 0, r.stderr
    expected = {"greedy": 0, "first": 0}
    conn = sqlite3.connect(tmp_path / "ladder.db")
    for (text,) in conn.execute("SELECT result FROM matches WHERE status = 'done'"):
        result = json.loads(text)
        assert not [f for f in result["faults"] if f["kind"] == "timeout"]
        names = [b["name"] for b in result["bots"]]
        for game in result["game_results"]:
            for name, points in zip(names, game["points"]):  # (100 − points) / 10, a half away from zero
                expected[name] += int((Decimal(100 - points) / 10).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    conn.close()
    data = json.loads(referee("ladder", "table", str(path), "-f", "json").stdout)
    assert data["club"] is True
    assert {row["bot"]: row["club"] for row in data["rows"]} == expected
    rows = list(csv.DictReader(io.StringIO(referee("ladder", "table", str(path), "-f", "csv").stdout)))
    assert {row["bot"]: int(row["club"]) for row in rows} == expected
    md = referee("ladder", "table", str(path), "-f", "markdown").stdout
    assert "| club |" in md and "club rating" in md
    text = referee("ladder", "table", str(path))
    assert text.returncode == 0 and "club" in text.stdout


def test_a_ladder_that_has_not_run_has_an_empty_table_and_status(tmp_path):
    path = write(tmp_path, kozel_toml())
    for command in ("table", "status"):
        for fmt in ("table", "csv", "json", "markdown"):
            r = referee("ladder", command, str(path), "-f", fmt)
            assert r.returncode == 0, (command, fmt, r.stderr)
    assert "not created yet" in referee("ladder", "status", str(path)).stdout
    r = referee("ladder", "retire", str(path), "greedy")
    assert r.returncode == X.USAGE and "no such database" in r.stderr
