"""kolbasa's replay shows the public tiles of the rows face up (issue 33 item 6; RULES.md KB-15,
PROTOCOL.md "What is public"): a tile once turned up stays known to both players wherever it goes,
back into a row as a tail or with a cut sausage, so the replay draws it face up there; only the
tiles as dealt, which nobody has seen, stay face down.

A seeded match of greedy_bot against first_bot (seed 4: tails and knives in its first deal), its
report opened in Chromium and every deal stepped through from the deal to its end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web.test_web import BOTS, chromium, url, watched_page

pytestmark = pytest.mark.slow  # plays a match and drives chromium

# Every row as drawn: each tile's name (null when face down with no name) and whether it is face down.
ROWS = """() => [...document.querySelectorAll('#seats .hand')].map(h => [Number(h.dataset.seat),
  [...h.querySelectorAll('.tiles svg')].map(s => [s.dataset.tile || null, s.classList.contains('face-down')])])"""


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("kolbasa")
    log = tmp / "kolbasa.jsonl"
    for args in (["match", BOTS / "greedy_bot.py", BOTS / "first_bot.py", "--variant", "kolbasa", "--seed", "4", "--log", log, "-q"],
                 ["report", log, "-O", tmp / "site"]):
        subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True, timeout=300, check=True)
    return tmp / "site"


def test_kolbasas_replay_shows_the_public_tiles_of_the_rows_face_up(site, browser):
    docs = sorted(site.glob("g1-o0-d*.json"))  # one seating: the other plays the same deals
    assert docs
    shown_public = 0
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as page:
        for path in docs:
            doc = json.loads(path.read_text())
            steps = doc["steps"]
            assert doc.get("rows")
            page.goto(url(path.with_suffix(".html")))
            turned: set[str] = set()
            for i, s in enumerate(steps):
                if s["kind"] == "turn":
                    turned.add(s["tile"])  # KB-15: known to both players from now on, wherever it goes
                page.evaluate("n => window.replay.go(n)", i)
                for seat, drawn in page.evaluate(ROWS):
                    row = s["hands"][seat]
                    assert len(drawn) == len(row), (path.name, i, seat)
                    for j, (tile, (name, face_down)) in enumerate(zip(row, drawn)):
                        up = tile == s.get("up") and j == len(row) - 1
                        public = tile in turned
                        assert face_down == (not public and not up), (path.name, i, seat, j, tile, s["text"])
                        if not face_down:
                            assert name == tile, (path.name, i, seat, j)
                        shown_public += public and not up
    # the match had tails and knives: public tiles lay in the rows
    assert shown_public > 50
