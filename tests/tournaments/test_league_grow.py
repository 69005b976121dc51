"""Leagues get the ladder's fixes (issue 41, item 9): a bot added to a balanced design of tables
of N extends the design and keeps every finished table; ``league status`` shows the tables in
play (since when, by which run) and an ETA."""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.tournaments.test_league import BOTS, HANG, cli, referee, start_league, write_league
from tournaments.schedule import Fixed, State, extend_design
from tournaments.store import dump

SIX = [("greedy", "greedy_bot.py", None), ("first", "first_bot.py", None), ("r3", "random_bot.py", "3"),
       ("r5", "random_bot.py", "5"), ("r7", "random_bot.py", "7"), ("r9", "random_bot.py", "9")]


def toml(bots) -> str:
    parts = ["seed = 2", "[game]", 'variant = "draw"', "players = 3", "bots = 3", "games = 1", "[clock]", "startup = 30.0", "move = 10.0"]
    for name, script, bot_seed in bots:
        parts += ["[[bot]]", f'name = "{name}"', f'command = "{BOTS / script}"']
        if bot_seed is not None:
            parts.append(f'env = {{ BOT_SEED = "{bot_seed}" }}')
    return "\n".join(parts) + "\n"


@pytest.mark.parametrize(("n", "k", "added"), [(6, 3, 1), (6, 3, 2), (9, 4, 1), (8, 2, 3), (12, 3, 5)])
def test_a_design_grown_by_new_bots_keeps_its_tables_and_seats_everyone_enough(n, k, added):
    names = [f"b{i}" for i in range(n + added)]
    old = Fixed("round-robin", names[:n], k, 5, tables=None)
    before = old.plan(State())
    grown = Fixed("round-robin", names, k, 5)
    after = grown.plan(State(design=before.design or {**old.design_key(), "blocks": old.blocks()}))
    assert after.tables[:len(before.tables)] == before.tables  # every table it had, the same keys
    seats = Counter(b for t in after.tables for b in t.bots)
    assert all(seats[b] >= grown.per_bot for b in names)
    assert all(len(set(t.bots)) == k for t in after.tables)
    # the new tables are few: each seats a bot that still needed one
    had = Counter(b for t in before.tables for b in t.bots)
    assert len(after.tables) - len(before.tables) <= sum(max(0, grown.per_bot - had[b]) for b in names)
    # drawn once and stored: the next plan takes it as it is
    again = Fixed("round-robin", names, k, 5).plan(State(design=after.design))
    assert again.tables == after.tables and again.design is None


def test_extend_design_is_deterministic_and_leaves_the_given_tables_alone():
    blocks = [["a", "b", "c"], ["d", "e", "f"], ["a", "d", "b"]]
    one = extend_design(blocks, list("abcdefg"), 3, 2, 9)
    assert one == extend_design(blocks, list("abcdefg"), 3, 2, 9)
    assert blocks == [["a", "b", "c"], ["d", "e", "f"], ["a", "d", "b"]]
    seats = Counter(b for block in blocks + one for b in block)
    assert all(seats[b] >= 2 for b in "abcdefg")


@pytest.mark.slow
def test_adding_a_bot_to_a_finished_balanced_league_keeps_its_tables_and_plays_only_the_new_ones(tmp_path):
    path = write_league(tmp_path, toml(SIX))
    first = referee("league", "run", str(path), "-j", "2", "-q")
    assert first.returncode == 0, first.stderr
    db = path.with_suffix(".db")
    before = dump(db, timings=True)["matches"]
    assert len(before) == 6

    path.write_text(toml([*SIX, ("r11", "random_bot.py", "11")]), encoding="utf-8")
    status = json.loads(cli("league", "status", str(path), "-f", "json").stdout)
    assert status["counts"]["done"] == 6 and status["counts"]["pending"] == 3
    assert all("r11" in t["bots"] for t in status["tables"] if t["status"] == "pending")
    assert "grown as bots were added: at least 3 tables per bot" in status["game"]
    second = referee("league", "run", str(path), "-j", "2", "-q")
    assert second.returncode == 0, second.stderr
    assert "played 3 tables" in second.stdout
    after = dump(db, timings=True)["matches"]
    assert [row for row in after if "r11" not in row[1].split(",")] == before  # the finished tables, untouched
    table = json.loads(cli("league", "table", str(path), "-f", "json").stdout)
    assert len(table["standings"]) == 7


@pytest.mark.slow
def test_league_status_shows_the_tables_in_play_since_when_by_which_run_and_an_eta(tmp_path):
    path = write_league(tmp_path, toml(SIX))
    db = path.with_suffix(".db")
    proc = start_league(path, "--concurrency", "2")
    try:
        deadline = time.monotonic() + HANG
        data = None
        while time.monotonic() < deadline:
            r = cli("league", "status", str(path), "-f", "json")
            data = json.loads(r.stdout) if r.exit_code == 0 and r.stdout.strip() else None
            if data and data["run"] and data["counts"]["in play"] and data["counts"]["done"]:
                break
            time.sleep(0.05)
        assert data is not None and data["run"]["id"].endswith(f":{proc.pid}")
        playing = [t for t in data["tables"] if t["status"] == "in play"]
        assert playing and all(t["run"] == data["run"]["id"] and t["since"] <= time.time() for t in playing)
        assert data["eta"] is not None and data["eta"] >= 0
        lines = cli("league", "status", str(path)).stdout
        assert "in play " in lines and f"by run {data['run']['id']}" in lines and "left at the pace so far" in lines
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    # the run is gone: what it left in play is not shown as in play
    after = json.loads(cli("league", "status", str(path), "-f", "json").stdout)
    assert after["run"] is None and after["counts"]["in play"] == 0
    assert Path(db).exists()
