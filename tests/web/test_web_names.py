"""The report names bots where it named pairs and seats (issue 33 item 6): the match page's games
table says which bot won a game ("greedy_bot won — pair B reached 101: goats"), its verdict's
LOS says what it is the chance of, and a replay's scores panel names each side's bots."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import read_log

from tests.web.test_web import BOTS, chromium, url, watched_page

pytestmark = pytest.mark.slow  # plays matches and drives chromium


def referee(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True, timeout=300, check=True)


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path]:
    """A kozel match (games to a target, in pairs) and its report."""
    tmp = tmp_path_factory.mktemp("names")
    log = tmp / "kozel.jsonl"
    referee("match", BOTS / "greedy_bot.py", BOTS / "first_bot.py", "--variant", "kozel", "--seed", "2", "--games", "2", "--log", log, "-q")
    referee("report", log, "-O", tmp / "site")
    return log, tmp / "site"


def test_the_games_table_names_the_bot_that_won_each_game(site, browser):
    log, folder = site
    recs = [r for _, r in read_log(log)]
    names = [b["name"] for b in recs[0]["bots"]]
    seatings = {(r["game"], r["orientation"]): r["seating"] for r in recs if r["k"] == "game"}
    expected = []
    for r in (r for r in recs if r["k"] == "game_end"):
        seating = seatings[(r["game"], r["orientation"])]
        won = sorted({seating[s] for s in range(len(seating)) if s % 2 in r["winners"]})  # pairs: seats 0+2 are side 0
        expected.append((" and ".join(names[b] for b in won) + " won" if won else "drawn") + f" — {r['reason']}")
    assert expected and any(" won — pair " in e for e in expected)
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as page:
        page.goto(url(folder / "index.html"))
        cells = [c.strip() for c in page.locator("#games tbody tr td:nth-child(4)").all_inner_texts()]
        assert cells == expected
        # the verdict's LOS says whose superiority it is the likelihood of, as the figures' line does
        verdict = page.inner_text("#result .verdict")
        assert re.search(r"\(LOS, (greedy_bot better than first_bot|first_bot better than greedy_bot): \d+\.\d%\)", verdict), verdict
        assert re.search(r"LOS \(greedy_bot better than first_bot\): \d+\.\d%", page.inner_text("#result .figures"))


def test_a_replays_scores_panel_names_the_bots_of_each_side(site, browser):
    log, folder = site
    deal = sorted(folder.glob("*.html"))
    pages = [p for p in deal if p.name != "index.html"]
    assert pages
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as page:
        page.goto(url(pages[0]))
        labels = [t.strip() for t in page.locator("#scores .score span:first-child").all_inner_texts()]
        assert len(labels) == 2
        assert sorted(labels) == ["first_bot · pair B", "greedy_bot · pair A"] or sorted(labels) == ["first_bot · pair A", "greedy_bot · pair B"]
