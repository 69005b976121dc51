"""Leagues of tables of N bots, Swiss and knockout leagues, end to end with the sample bots:
3-bot mexican_train tables and 4-bot tables of a 4-seat game of individuals, with their
standings, web report, and ``table`` and ``status`` in every format; a Swiss league and an N-seat
league killed with SIGKILL and resumed with nothing lost or doubled; a knockout whose final is
tied on every leg and goes to the better seed.

The bots are deterministic, so two runs of a league store the same tables apart from timings.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import trio

from tests.tournaments.test_league import BOTS, HANG, cli, done_count, referee, start_league, wait_for_commit, write_league
from tests.web.test_web import browser, page, url  # noqa: F401  (the browser fixtures: chromium, as test_web drives it)
from tournaments.config import load_league
from tournaments.runner import run_league
from tournaments.standings import headers, standings
from tournaments.status import CSV_HEADERS
from tournaments.store import dump, open_store

pytestmark = pytest.mark.slow  # leagues of real bot processes

FIVE = [
    ("greedy", "greedy_bot.py", None),
    ("first", "first_bot.py", None),
    ("random", "random_bot.py", "3"),
    ("random-b", "random_bot.py", "5"),
    ("random-c", "random_bot.py", "7"),
]


def toml(bots=FIVE[:4], *, variant: str, players: int, per_table: int, length: str = "", head: str = "", seed: int = 2) -> str:
    parts = [f"seed = {seed}", head, "[game]", f'variant = "{variant}"', f"players = {players}", f"bots = {per_table}", length,
             "[clock]", "startup = 30.0", "move = 10.0"]
    for name, script, bot_seed in bots:
        parts += ["[[bot]]", f'name = "{name}"', f'command = "{BOTS / script}"']
        if bot_seed is not None:
            parts.append(f'env = {{ BOT_SEED = "{bot_seed}" }}')
    return "\n".join(parts) + "\n"


TRAINS = toml(variant="mexican_train", players=3, per_table=3)
DRAW4 = toml(FIVE, variant="draw", players=4, per_table=4, seed=4)
SWISS = toml(FIVE, variant="sport", players=4, per_table=2, length="deals = 4", head='schedule = "swiss"\nrounds = 3')


def table_rows(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {
            "matches": conn.execute("SELECT round, bots, leg, status, winner, boards, log, result FROM matches ORDER BY 1, 2, 3").fetchall(),
            "seats": conn.execute("SELECT round, bots, leg, seat, bot, place, score, points FROM seats ORDER BY 1, 2, 3, 4").fetchall(),
            "boards": conn.execute("SELECT round, bots, leg, board, seat, margin FROM boards ORDER BY 1, 2, 3, 4, 5").fetchall(),
        }
    finally:
        conn.close()


def formats(path: Path) -> dict[str, str]:
    """``table`` and ``status`` in every format (exit code 0 each)."""
    out = {}
    for command in ("table", "status"):
        for fmt in ("table", "csv", "json", "markdown"):
            r = cli("league", command, str(path), "--format", fmt)
            assert r.exit_code == 0, (command, fmt, r.stderr)
            out[f"{command}-{fmt}"] = r.stdout
    return out


# -- three bots a table -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trains(tmp_path_factory) -> tuple[Path, Path]:
    """Four bots at 3-bot mexican_train tables, played to the end with a live report."""
    d = tmp_path_factory.mktemp("trains")
    path = write_league(d, TRAINS)
    site = d / "site"
    r = referee("league", "run", str(path), "-j", "2", "--report", str(site), "-q")
    assert r.returncode == 0, r.stderr
    assert "played 4 tables" in r.stdout and "4 of 4 tables done" in r.stdout
    return path, site


def test_a_league_of_three_bot_tables_seats_every_three_of_four_bots_once(trains):
    path, _ = trains
    rows = table_rows(path.with_suffix(".db"))
    tables = [tuple(b.split(",")) for _, b, *_ in rows["matches"]]
    assert sorted(tables) == [("first", "greedy", "random"), ("first", "greedy", "random-b"), ("first", "random", "random-b"),
                              ("greedy", "random", "random-b")]
    seats: dict[str, list[tuple]] = {}
    for _r, bots, _l, seat, bot, place, score, points in rows["seats"]:
        seats.setdefault(bots, []).append((seat, bot, place, score, points))
    for _r, bots, _l, status, winner, boards, log, result in rows["matches"]:
        res = json.loads(result)
        assert status == "done" and [b["name"] for b in res["bots"]] == bots.split(",")
        assert len(res["orientations"]) == 3  # every rotation of the seating
        assert boards == 7  # mexican_train: seven rounds, 6-6 down to 0-0, each a board
        ranked = {s["bot"]: s["place"] for s in res["ranking"]["standings"]}
        mine = seats[bots]
        assert [bot for _, bot, *_ in mine] == bots.split(",")
        assert {bot: place for _, bot, place, _, _ in mine} == ranked
        for _, bot, place, score, points in mine:
            ahead = sum(1 for _, _, p, _, _ in mine if p > place)
            level = sum(1 for _, b, p, _, _ in mine if p == place and b != bot)
            assert score == (ahead + level / 2) / 2
            assert points == next(t["points"] for t in res["totals"] if t["bot"] == bot)
        firsts = [bot for _, bot, place, _, _ in mine if place == 1]
        assert winner == (firsts[0] if len(firsts) == 1 else None) == res["ahead"]
        verify = referee("verify", str(path.parent / log))
        assert verify.returncode == 0, verify.stdout + verify.stderr
    # every board: one margin per bot, and they sum to 0 (each is the bot's net less the others' mean)
    by_board: dict[tuple, list[float]] = {}
    for _r, bots, _leg, board, _seat, margin in rows["boards"]:
        by_board.setdefault((bots, board), []).append(margin)
    assert len(by_board) == 28 and all(len(m) == 3 and abs(sum(m)) < 1e-9 for m in by_board.values())


def test_the_standings_of_three_bot_tables_count_places_points_and_head_to_head(trains):
    path, _ = trains
    data = json.loads(formats(path)["table-json"])
    assert data["bots_per_table"] == 3 and data["pairings"] == {"total": 4, "done": 4, "failed": 0, "pending": 0}
    assert "Plackett–Luce" in data["rating_method"]
    rows = table_rows(path.with_suffix(".db"))
    places: dict[str, list[int]] = {}
    points: Counter[str] = Counter()
    for _r, bots, _l, _s, bot, place, _score, _pts in rows["seats"]:
        places.setdefault(bot, []).append(place)
        others = [x[5] for x in rows["seats"] if x[1] == bots and x[4] != bot]
        points[bot] += sum(2 if place < p else 1 if place == p else 0 for p in others)
    for r in data["standings"]:
        mine = places[r["bot"]]
        assert r["matches"] == 3 == len(mine)
        assert [r["finish_1"], r["finish_2"], r["finish_3"]] == [mine.count(1), mine.count(2), mine.count(3)]
        assert r["finish"] == pytest.approx(sum(mine) / 3, abs=1e-4)
        assert r["finish_low"] <= r["finish"] <= r["finish_high"]
        assert r["points"] == points[r["bot"]] and r["points_per_table"] == pytest.approx(points[r["bot"]] / 3, abs=1e-4)
        assert r["rating_low"] < r["rating"] < r["rating_high"]
    assert [r["points"] for r in data["standings"]] == sorted((r["points"] for r in data["standings"]), reverse=True)
    assert abs(sum(r["rating"] for r in data["standings"])) < 1
    h2h = data["head_to_head"]
    for a, row in h2h.items():
        for b, cell in row.items():
            back = h2h[b][a]
            assert (cell["won"], cell["drawn"], cell["lost"]) == (back["lost"], back["drawn"], back["won"])
            assert cell["meetings"] == 2 == cell["won"] + cell["drawn"] + cell["lost"]  # two tables hold any two of four bots


def test_table_and_status_of_three_bot_tables_in_every_format(trains):
    path, _ = trains
    out = formats(path)
    league = load_league(path)
    with open_store(league.db_path, create=False) as store:
        s = standings(league, store)
    assert list(csv.DictReader(io.StringIO(out["table-csv"])).fieldnames or []) == headers(s)
    assert len(list(csv.DictReader(io.StringIO(out["table-csv"])))) == 4
    md = out["table-markdown"]
    assert "| # | bot | T | finishes | place | pts | pts/T |" in md and "| head to head (ahead–level–behind) |" in md
    text = " ".join(out["table-table"].split())
    assert all(b in text for b in ("greedy", "first", "random", "random-b")) and "head to head" in text
    assert "3 bots a table" in text and "Plackett–Luce" in text
    status = json.loads(out["status-json"])
    assert status["counts"] == {"total": 4, "done": 4, "in play": 0, "failed": 0, "given up": 0, "pending": 0}
    assert all(len(t["places"]) == 3 for t in status["tables"])
    rows = list(csv.DictReader(io.StringIO(out["status-csv"])))
    assert list(rows[0]) == CSV_HEADERS and len(rows) == 4 and {r["status"] for r in rows} == {"done"}
    assert "tables: 4: 4 done, 0 failed, 0 pending" in out["status-table"]
    assert out["status-table"].count("  done     ") == 4 and " 1st" in out["status-table"]
    assert out["status-markdown"].count("| done |") == 4


def test_the_web_report_shows_three_bot_tables_and_their_standings(trains, page, tmp_path):  # noqa: F811
    path, site = trains
    page.goto(url(site / "index.html"))
    page.screenshot(path=str(tmp_path / "trains.png"), full_page=True)
    md = referee("league", "table", str(path), "--format", "markdown").stdout
    want = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in md.splitlines()
            if ln.startswith("| ") and not ln.startswith(("| #", "| head to head"))][:4]
    got = page.eval_on_selector_all("#standings tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.innerText.trim()))")
    assert got == want
    assert page.locator("#head-to-head td.n").count() == 12 and page.locator("#cross").count() == 0
    assert page.locator("#tables tbody tr").count() == 4
    assert "Plackett–Luce" in page.inner_text("body") and "tables played" in page.inner_text(".cards")
    page.click("#tables a.match-link >> nth=0")
    page.wait_for_url("**/matches/*/index.html")
    assert page.locator("#deals a.replay").count() == 21  # 7 rounds in each of 3 rotations


def test_an_n_seat_league_killed_with_sigkill_resumes_to_the_same_database(trains, tmp_path):
    path = write_league(tmp_path / "killed", TRAINS)
    db = path.with_suffix(".db")
    proc = start_league(path, "--concurrency", "2")
    try:
        wait_for_commit(proc, db)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate(timeout=HANG)
    stored = done_count(db)
    assert 1 <= stored < 4, "the kill came too late to interrupt anything"
    again = referee("league", "run", str(path), "-q")
    assert again.returncode == 0, again.stderr
    assert f"played {4 - stored} table" in again.stdout
    assert dump(db) == dump(trains[0].with_suffix(".db"))
    logs = path.parent / "league-logs"
    assert len(list(logs.glob("*.jsonl"))) == 4 and not list(logs.glob(".*.part.*"))


# -- four bots a table -----------------------------------------------------------------------------


def test_a_four_seat_game_of_individuals_seats_four_bots_at_every_table(tmp_path):
    path = write_league(tmp_path, DRAW4)
    r = referee("league", "run", str(path), "-j", "2", "-q")
    assert r.returncode == 0, r.stderr
    rows = table_rows(path.with_suffix(".db"))
    assert len(rows["matches"]) == 5  # every 4 of the 5 bots
    seats = Counter(bot for *_, bot, _p, _s, _pts in rows["seats"])
    assert seats == dict.fromkeys([b for b, _, _ in FIVE], 4)
    for *_, result in rows["matches"]:
        assert len(json.loads(result)["orientations"]) == 4
    out = formats(path)
    data = json.loads(out["table-json"])
    assert data["bots_per_table"] == 4 and all(r["matches"] == 4 for r in data["standings"])
    assert all(sum(r[f"finish_{i}"] for i in range(1, 5)) == 4 for r in data["standings"])
    assert "| head to head" in out["table-markdown"] and "finish_4" in out["table-csv"].splitlines()[0]
    assert json.loads(out["status-json"])["counts"]["done"] == 5
    assert out["status-table"].count(" 4th") == 5
    site = tmp_path / "site"
    report = cli("report", str(path), "-O", str(site))
    assert report.exit_code == 0 and "5 of 5 tables played" in report.stdout
    # Two bots a table would not be comparable with the tables of four played.
    pairs = write_league(tmp_path, DRAW4.replace("bots = 4", "bots = 2"), "pairs.toml")
    for command in ("run", "table", "status"):
        r = cli("league", command, str(pairs), "--db", str(path.with_suffix(".db")))
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, (command, r.stderr)
        assert "game.bots is 2 but the results in league.db were played with 4" in r.stderr, r.stderr


# -- Swiss ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def swiss(tmp_path_factory) -> Path:
    path = write_league(tmp_path_factory.mktemp("swiss"), SWISS)
    r = referee("league", "run", str(path), "-j", "2", "-q")
    assert r.returncode == 0, r.stderr
    return path


def test_a_swiss_league_draws_every_round_from_the_standings_with_no_repeat_and_one_bye_each(swiss):
    conn = sqlite3.connect(swiss.with_suffix(".db"))
    try:
        draws = conn.execute("SELECT round, slot, bots FROM draws ORDER BY round, slot").fetchall()
        kind = conn.execute("SELECT value FROM meta WHERE key = 'schedule'").fetchone()[0]
    finally:
        conn.close()
    assert kind == "swiss" and sorted({r for r, _, _ in draws}) == [1, 2, 3]
    tables = [tuple(b.split(",")) for _, _, b in draws if "," in b]
    byes = [b for _, _, b in draws if "," not in b]
    assert len(tables) == 6 and len({frozenset(t) for t in tables}) == 6  # no two bots met twice
    assert len(byes) == 3 and len(set(byes)) == 3  # five bots: one bye a round, never twice
    assert byes[0] == "random-c"  # round 1: the lowest seed sits out
    data = json.loads(formats(swiss)["table-json"])
    st = {r["bot"]: r for r in data["standings"]}
    assert sum(r["byes"] for r in st.values()) == 3
    for r in st.values():
        assert r["matches"] + r["byes"] == 3
        assert r["points"] == 2 * r["won"] + r["drawn"] + r["byes"]  # a bye scores a draw
    # Buchholz: the match points of every bot met
    met: dict[str, list[str]] = {}
    for a, b in tables:
        met.setdefault(a, []).append(b)
        met.setdefault(b, []).append(a)
    assert all(r["buchholz"] == sum(st[o]["points"] for o in met[b]) for b, r in st.items())
    order = [(-r["points"], -r["buchholz"], -r["diff"]) for r in data["standings"]]
    assert order == sorted(order)
    status = cli("league", "status", str(swiss))
    assert "rounds: 3 of 3 drawn" in status.stdout and status.stdout.count("  bye      ") == 3


def test_a_swiss_league_killed_with_sigkill_resumes_to_the_same_database(swiss, tmp_path):
    path = write_league(tmp_path / "killed", SWISS)
    db = path.with_suffix(".db")
    proc = start_league(path, "--concurrency", "2")
    try:
        deadline = time.monotonic() + HANG
        while done_count(db) < 3:  # round 1 (two tables) done and a table of round 2
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the league did not reach round 2"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate(timeout=HANG)
    stored = done_count(db)
    assert 3 <= stored < 6, "the kill came too late to interrupt anything"
    again = referee("league", "run", str(path), "-q")
    assert again.returncode == 0, again.stderr
    assert f"played {6 - stored} match" in again.stdout
    assert dump(db) == dump(swiss.with_suffix(".db"))


def test_the_bots_of_a_swiss_league_are_fixed_once_it_is_drawn(swiss, tmp_path):
    db = tmp_path / "copy.db"
    db.write_bytes(swiss.with_suffix(".db").read_bytes())
    fewer = write_league(tmp_path, toml(FIVE[:4], variant="sport", players=4, per_table=2, length="deals = 4",
                                        head='schedule = "swiss"\nrounds = 3'), "fewer.toml")
    r = cli("league", "run", str(fewer), "--db", str(db))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "removed random-c" in r.stderr, r.stderr
    more = write_league(tmp_path, SWISS.replace("rounds = 3", "rounds = 2"), "more.toml")
    r = cli("league", "run", str(more), "--db", str(db))
    assert r.exit_code == 2 and "rounds can grow, not shrink" in r.stderr, r.stderr


# -- knockout ---------------------------------------------------------------------------------------


def test_a_knockout_final_level_on_every_leg_goes_to_the_better_seed(tmp_path):
    # greedy and its twin play identically: every match between them is level on every board.
    bots = [("greedy", "greedy_bot.py", None), ("twin", "greedy_bot.py", None), ("first", "first_bot.py", None)]
    path = write_league(tmp_path, toml(bots, variant="sport", players=4, per_table=2, length="deals = 4",
                                       head='schedule = "knockout"'))
    r = referee("league", "run", str(path), "-q")
    assert r.returncode == 0, r.stderr
    rows = table_rows(path.with_suffix(".db"))
    keys = [(rnd, bots, leg) for rnd, bots, leg, *_ in rows["matches"]]
    assert keys == [(1, "first,twin", 0), *((2, "greedy,twin", leg) for leg in range(4))]
    finals = [json.loads(m[7]) for m in rows["matches"][1:]]
    assert all(f["ahead"] is None for f in finals)  # level every time ...
    assert len({f["seed"] for f in finals}) == 4  # ... on other deals each leg
    data = json.loads(formats(path)["table-json"])
    stages = {r["bot"]: (r["rank"], r["stage"]) for r in data["standings"]}
    assert stages == {"greedy": (1, "won"), "twin": (2, "final"), "first": (3, "round 1")}
    status = cli("league", "status", str(path)).stdout
    assert "champion: greedy" in status and "round 2: greedy vs twin (leg 4)" in status


# -- failures and messages ----------------------------------------------------------------------------


async def test_a_killed_match_process_was_killed(tmp_path):
    path = write_league(tmp_path, TRAINS)
    crash = [sys.executable, "-c", "import os, sys; sys.stdin.readline(); os.kill(os.getpid(), 9)"]

    with trio.fail_after(HANG):
        report = await run_league(load_league(path), worker_argv=crash)
    assert report.failed and all(reason == "the match process was killed by SIGKILL" for _, reason in report.failed)
    assert "was killed by SIGKILL" in cli("league", "status", str(path)).stdout


def test_an_n_seat_table_not_fully_stored_is_played_again(trains, tmp_path):
    # Seats deleted by hand: the table counts as not played, and the next run plays and stores it again.
    path = write_league(tmp_path, TRAINS)
    db = path.with_suffix(".db")
    db.write_bytes(trains[0].with_suffix(".db").read_bytes())
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM seats WHERE bots = 'first,greedy,random' AND seat = 1")
    conn.commit()
    conn.close()
    assert "3 done, 0 failed, 1 pending" in cli("league", "status", str(path)).stdout
    r = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(path), "-q"], capture_output=True, text=True,
                       timeout=HANG, stdin=subprocess.DEVNULL, check=False)
    assert r.returncode == 0 and "played 1 table" in r.stdout, r.stderr
    assert table_rows(db)["seats"] == table_rows(trains[0].with_suffix(".db"))["seats"]
