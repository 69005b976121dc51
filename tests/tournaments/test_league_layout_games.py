"""Leagues of the layout games (issues 11, 12 and 17): osel, telephone, muggins, sea_kozel, general,
blitz, kolbasa and mexican_train run as leagues like the line games, every match stored with a log that verifies."""

from __future__ import annotations

import subprocess
import sys

import pytest
import trio

from tests.tournaments.test_league import BOTS, HANG, write_league
from tournaments.config import load_league
from tournaments.runner import run_league
from tournaments.store import open_store

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("variant", "players", "length"), [
    ("osel", 2, "games = 1"), ("telephone", 2, "games = 1"), ("muggins", 4, "games = 1"), ("sea_kozel", 2, "games = 1"),
    ("general", 4, "games = 1"), ("blitz", 4, "games = 1"), ("kolbasa", 2, "games = 1"),
    ("mexican_train", 2, "deals = 7"), ("mexican_train", 4, "deals = 7"),  # seven rounds, always
    ("mexican_train", 2, "games = 2"),  # two seven-round games per orientation
])
def test_a_league_of_a_layout_game_stores_every_match_with_a_log_that_verifies(tmp_path, variant, players, length):
    bots = "".join(f'[[bot]]\nname = "{name}"\ncommand = "{BOTS / script}"\n'
                   for name, script in (("greedy", "greedy_bot.py"), ("first", "first_bot.py"), ("random", "random_bot.py 5")))
    text = (f'seed = 3\n[game]\nvariant = "{variant}"\nplayers = {players}\n{length}\n'
            f'[clock]\nstartup = 30.0\nmove = 10.0\n{bots}')
    path = write_league(tmp_path, text)
    league = load_league(path)
    report = trio.run(lambda: run_league(league, 1))
    assert report.played == 3 and not report.failed, report.failed
    store = open_store(league.db_path, create=False)
    assert store is not None
    with store:
        rows = store.tables()
    assert sorted(r.status for r in rows) == ["done"] * 3
    for row in rows:
        assert row.log is not None
        verify = subprocess.run([sys.executable, "-m", "referee", "verify", str(league.db_path.parent / row.log)],
                                capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL, check=False)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        if length == "games = 2":
            assert "consistent: 2 games in each of 2 orientations, 28 deals" in verify.stdout
