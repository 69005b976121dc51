"""A knockout league shows its bracket and its byes (issue 33 item 6): ``league status`` in every
format and the league page of its web report name every round's tables in bracket order, the bot
each sent on, and the bots that went on without playing.

Five bots at tables of two: the bracket's second round has four slots, so round 1 is one table
(seeds 4 and 5) and three byes (seeds 1 to 3), then two semi-finals and the final.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.tournaments.test_league import cli, referee, write_league
from tests.tournaments.test_league_tables import FIVE, toml
from tournaments.schedule import Knockout

pytestmark = pytest.mark.slow  # a league of real bot processes

KNOCKOUT = toml(FIVE, variant="sport", players=4, per_table=2, length="deals = 4", head='schedule = "knockout"')
NAMES = [name for name, _, _ in FIVE]


@pytest.fixture(scope="module")
def knockout(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("knockout")
    path = write_league(d, KNOCKOUT)
    site = d / "site"
    r = referee("league", "run", str(path), "--report", str(site), "-q")
    assert r.returncode == 0, r.stderr
    return path, site


def expected_round_1() -> list[list[str]]:
    """Round 1 as the schedule draws it (the bots' order is their seed)."""
    first = Knockout(NAMES, 2).first_round()
    assert sorted(len(s) for s in first) == [1, 1, 1, 2]  # three byes and one table
    return first


def test_league_status_lists_a_knockouts_byes_and_bracket(knockout):
    path, _ = knockout
    first = expected_round_1()
    byes = [s[0] for s in first if len(s) == 1]
    table = next(s for s in first if len(s) == 2)
    data = json.loads(cli("league", "status", str(path), "--format", "json").stdout)
    assert data["byes"] == [{"round": 1, "bot": b} for b in byes]
    rounds = data["bracket"]
    assert [r["round"] for r in rounds] == [1, 2, 3] and rounds[-1]["final"]
    assert [s["bots"] for s in rounds[0]["slots"]] == first
    # Each round's bots are the ones the round before sent on, in bracket order.
    for before, after in zip(rounds, rounds[1:]):
        assert [b for s in after["slots"] for b in s["bots"]] == [s["on"] for s in before["slots"]]
    champion = rounds[-1]["slots"][0]["on"]
    assert champion == data["champion"]

    lines = cli("league", "status", str(path)).stdout.splitlines()
    for b in byes:
        assert f"  bye      round 1: {b}" in lines
    on = rounds[0]["slots"][[s["bots"] for s in rounds[0]["slots"]].index(table)]["on"]
    line_1 = next(line for line in lines if line.startswith("  round 1: "))
    assert f"{table[0]} vs {table[1]}: {on} goes on" in line_1 and all(f"{b} (bye)" in line_1 for b in byes)
    assert any(line.startswith("  final: ") and line.endswith(f": {champion} won") for line in lines)
    assert lines.index("bracket:") < lines.index(line_1)

    rows = list(csv.DictReader(io.StringIO(cli("league", "status", str(path), "--format", "csv").stdout)))
    assert sorted(r["bots"] for r in rows if r["status"] == "bye") == sorted(byes)
    markdown = cli("league", "status", str(path), "--format", "markdown").stdout
    assert all(f"| 1 | {b} | bye |" in markdown for b in byes) and "Bracket:" in markdown


class Bracket(HTMLParser):
    """The league page's bracket: each round's slots, each slot's bots, which is a bye and which
    bot went on."""

    def __init__(self) -> None:
        super().__init__()
        self.rounds: list[dict] = []
        self.inside = 0  # depth within #bracket
        self.bot: dict | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if a.get("id") == "bracket":
            self.inside = 1
            return
        if not self.inside:
            return
        self.inside += tag != "span"
        if "bracket-round" in cls:
            self.rounds.append({"round": int(a["data-round"]), "slots": []})
        elif "bracket-slot" in cls:
            self.rounds[-1]["slots"].append({"bye": "bye" in cls, "bots": [], "on": None})
        elif "bracket-bot" in cls:
            self.bot = {"on": "on" in cls, "text": ""}

    def handle_endtag(self, tag: str) -> None:
        if not self.inside or tag == "span":
            return
        if self.bot is not None and tag == "div":
            slot = self.rounds[-1]["slots"][-1]
            name = self.bot["text"].split()[0]
            slot["bots"].append(name)
            if self.bot["on"]:
                slot["on"] = name
            self.bot = None
        self.inside -= 1

    def handle_data(self, data: str) -> None:
        if self.bot is not None:
            self.bot["text"] += data


def test_the_league_page_shows_the_bracket_and_its_byes(knockout):
    path, site = knockout
    data = json.loads(cli("league", "status", str(path), "--format", "json").stdout)
    page = (site / "index.html").read_text(encoding="utf-8")
    assert re.search(r"<h2>Bracket</h2>", page)
    parsed = Bracket()
    parsed.feed(page)
    assert [r["round"] for r in parsed.rounds] == [r["round"] for r in data["bracket"]]
    for shown, want in zip(parsed.rounds, data["bracket"]):
        assert [s["bots"] for s in shown["slots"]] == [s["bots"] for s in want["slots"]]
        assert [s["bye"] for s in shown["slots"]] == [s["bye"] for s in want["slots"]]
        assert [s["on"] for s in shown["slots"] if not s["bye"]] == [s["on"] for s in want["slots"] if not s["bye"]]
    byes = [s["bots"][0] for s in parsed.rounds[0]["slots"] if s["bye"]]
    assert len(byes) == 3 and all(f'data-bye="{b}"' in page for b in byes)


def test_a_finished_knockouts_page_names_its_champion_not_a_leader(knockout):
    """Issue 40: a finished knockout's page said its champion "leads the table"."""
    path, site = knockout
    rows = json.loads(cli("league", "table", str(path), "--format", "json").stdout)["standings"]
    [champion] = [r["bot"] for r in rows if r["stage"] == "won"]
    page = (site / "index.html").read_text(encoding="utf-8")
    card = re.search(r'<div class="card" id="leader"><div class="big">([^<]*)</div><div class="label">([^<]*)</div>', page)
    assert card is not None and card.groups() == (champion, "won the knockout"), page
    assert "leads the table" not in page


@pytest.mark.parametrize(("stages", "ranks", "done", "failed", "schedule", "want"), [
    (["", "", ""], [1, 2, 3], 3, 0, "round-robin", (["a"], "won the league")),
    (["", "", ""], [1, 1, 3], 3, 0, "round-robin", (["a", "b"], "share first place")),
    (["", "", ""], [1, 2, 3], 2, 0, "round-robin", (["a"], "leads the table")),
    (["", "", ""], [1, 2, 3], 2, 1, "round-robin", (["a"], "leads the table")),
    (["won", "final", "round 1"], [1, 2, 3], 2, 0, "knockout", (["a"], "won the knockout")),
    (["", "", "round 1"], [1, 1, 3], 1, 0, "knockout", (["a", "b"], "lead the table")),
])
def test_the_leader_card_says_what_the_standings_are(stages, ranks, done, failed, schedule, want):
    from types import SimpleNamespace

    from tournaments.report import leader

    rows = [SimpleNamespace(bot=b, stage=st, rank=r) for b, st, r in zip("abc", stages, ranks)]
    s = SimpleNamespace(rows=rows, done=done, failed=failed, pairings=3 if schedule != "knockout" else 2, expected=3 if schedule != "knockout" else 2,
                        league=SimpleNamespace(schedule=schedule))
    got = leader(s)
    assert got is not None and (got["bots"], got["label"]) == want
