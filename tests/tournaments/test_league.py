"""``referee league``: real leagues of the sample bots, resumed after SIGKILL and Ctrl-C, bots
added later, bad league files, table formats and the rating fit.

The bots are deterministic (first_bot, greedy_bot, and random_bot with a fixed BOT_SEED), so two
runs of a league store the same results; clocks are generous because no test is about time.
Deadlines only catch hangs; no test asserts how long anything took.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
import trio
from support.commands import cli

from referee.base import exitcodes as X
from tournaments import ratings
from tournaments.config import GAUNTLET, LeagueError, load_league
from tournaments.runner import run_league
from tournaments.standings import HEADERS
from tournaments.store import dump, open_store

pytestmark = pytest.mark.slow  # leagues of real bot processes

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots"
HANG = 120  # seconds after which a league run counts as hung

FOUR = [
    ("greedy", "greedy_bot.py", None),
    ("first", "first_bot.py", None),
    ("random", "random_bot.py", "3"),
    ("random-b", "random_bot.py", "5"),
]


def league_toml(bots=FOUR, *, deals: int = 4, seed: int = 1, head: str = "", game: str = "") -> str:
    parts = [f"seed = {seed}", head, "[game]", 'variant = "sport"', f"deals = {deals}", game,
             "[clock]", "startup = 30.0", "move = 10.0"]
    for name, script, bot_seed in bots:
        parts += ["[[bot]]", f'name = "{name}"', f'command = "{BOTS / script}"']
        if bot_seed is not None:
            parts.append(f'env = {{ BOT_SEED = "{bot_seed}" }}')
    return "\n".join(parts) + "\n"


def write_league(directory: Path, text: str, name: str = "league.toml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def referee(*args: str, timeout: float = HANG) -> subprocess.CompletedProcess:
    """Run ``python -m referee ...`` as a real process."""
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False)


def done_count(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not written yet
        return 0
    finally:
        conn.close()


def start_league(path: Path, *extra: str) -> subprocess.Popen:
    """A league run in its own session and process group, as a shell would start a job."""
    return subprocess.Popen([sys.executable, "-m", "referee", "league", "run", str(path), *extra],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def wait_for_commit(proc: subprocess.Popen, db: Path) -> None:
    deadline = time.monotonic() + HANG
    while done_count(db) < 1:
        assert proc.poll() is None, f"the league ended before its first match was stored: {proc.communicate()}"
        assert time.monotonic() < deadline, "no match was stored"
        time.sleep(0.02)


# -- one finished league, shared ------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """The four-bot league played to the end, two matches at once; returns the league file."""
    path = write_league(tmp_path_factory.mktemp("played"), league_toml())
    done = referee("league", "run", str(path), "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    assert "played 6 matches" in done.stdout
    return path


def table_json(path: Path, *more: str) -> dict:
    r = cli("league", "table", str(path), "--format", "json", *more)
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_a_league_completes_and_the_table_agrees_with_the_stored_matches(played):
    db = played.with_suffix(".db")
    names = [b[0] for b in FOUR]
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT round, bots, leg, status, winner, boards, log, result FROM matches").fetchall()
        seats = conn.execute("SELECT bots, seat, bot, place, score, points FROM seats ORDER BY bots, seat").fetchall()
        boards = conn.execute("SELECT bots, COUNT(*) FROM boards WHERE seat = 0 GROUP BY bots").fetchall()
        opposite = conn.execute("SELECT COUNT(*) FROM boards a JOIN boards b USING (round, bots, leg, board) "
                                "WHERE a.seat = 0 AND b.seat = 1 AND a.margin = -b.margin").fetchone()[0]
    finally:
        conn.close()
    # every pairing exactly once, all done, in round 0 and leg 0
    pairs = sorted(tuple(b.split(",")) for _, b, *_ in rows)
    assert pairs == sorted(tuple(sorted((x, y))) for i, x in enumerate(names) for y in names[i + 1:])
    assert all((r, leg, status) == (0, 0, "done") for r, _, leg, status, *_ in rows)
    assert {tuple(b.split(",")): n for b, n in boards} == dict.fromkeys(pairs, 4)  # 4 deals = 4 boards
    assert opposite == 24  # two bots: B's margin is -A's on every board
    by_table = {}
    for bots, seat, bot, place, score, points in seats:
        by_table.setdefault(bots, []).append((seat, bot, place, score, points))
    for _, bots, _, _, winner, _boards, log, result in rows:
        res = json.loads(result)
        (_, a, place_a, score_a, pa), (_, b, place_b, score_b, pb) = by_table[bots]
        assert [x["name"] for x in res["bots"]] == [a, b] == bots.split(",")
        assert res["ahead"] == winner and score_a == (0.5 if winner is None else 1.0 if winner == a else 0.0) == 1 - score_b
        assert (place_a, place_b) == ((1, 1) if winner is None else (1, 2) if winner == a else (2, 1))
        assert (pa, pb) == (sum(d["points"][0] for d in res["deals"]), sum(d["points"][1] for d in res["deals"]))
        assert len(res["deals"]) == 8  # 4 deals in each of 2 orientations
        assert (db.parent / log).is_file()
    assert not list((db.parent / "league-logs").glob(".*part*"))

    data = table_json(played)
    assert data["pairings"] == {"total": 6, "done": 6, "failed": 0, "pending": 0}
    assert "Bradley–Terry" in data["rating_method"]
    st = {r["bot"]: r for r in data["standings"]}
    assert set(st) == set(names)
    for name, r in st.items():
        mine = [seat for table in by_table.values() for seat in table if any(x[1] == name for x in table)]
        own = [x for x in mine if x[1] == name]
        other = [x for x in mine if x[1] != name]
        assert r["matches"] == 3 == r["won"] + r["drawn"] + r["lost"] == len(own)
        assert r["points"] == 2 * r["won"] + r["drawn"]
        pf, pa = sum(x[4] for x in own), sum(x[4] for x in other)
        assert (r["for"], r["against"], r["diff"]) == (pf, pa, pf - pa)
        assert (r["won"], r["drawn"]) == (sum(1 for x in own if x[3] == 1), sum(1 for x in own if x[3] == 0.5))
        assert r["rating_low"] < r["rating"] < r["rating_high"]
        assert all(r[k] == 0 for k in ("timeout", "illegal", "bad_output", "out_of_turn", "crash", "startup"))
    assert sum(r["won"] for r in st.values()) == sum(r["lost"] for r in st.values())
    assert sum(r["diff"] for r in st.values()) == 0
    assert abs(sum(r["rating"] for r in st.values())) < 1
    ranks = [r["rank"] for r in data["standings"]]
    points = [r["points"] for r in data["standings"]]
    assert ranks[0] == 1 and points == sorted(points, reverse=True)

    status = cli("league", "status", str(played))
    assert status.exit_code == 0 and "6 done, 0 failed, 0 pending" in status.stdout


def test_a_stored_log_replays_through_the_engine(played):
    from referee.audit.verify import verify

    log = next((played.parent / "league-logs").glob("*.jsonl"))
    counts = verify(log)
    assert counts.deals == 8


def test_table_formats_parse(played):
    r = cli("league", "table", str(played), "--format", "csv")
    assert r.exit_code == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert list(rows[0]) == HEADERS and len(rows) == 4
    assert {row["bot"] for row in rows} == {b[0] for b in FOUR}
    assert "Bradley–Terry" in r.stderr

    md = cli("league", "table", str(played), "--format", "markdown")
    assert md.exit_code == 0
    lines = [ln for ln in md.stdout.splitlines() if ln.startswith("|")]
    assert len(lines) == 2 + 4
    widths = {ln.count("|") for ln in lines}
    assert len(widths) == 1
    assert set(lines[1].replace("|", "").replace("-", "").replace(":", "")) <= {""}
    assert "Bradley–Terry" in md.stdout

    text = cli("league", "table", str(played))
    assert text.exit_code == 0 and "Bradley–Terry" in text.stdout and "greedy" in text.stdout

    assert table_json(played)["standings"][0]["rank"] == 1


def test_changed_settings_are_refused_in_one_line(played, tmp_path):
    db = tmp_path / "copy.db"
    shutil.copy(played.with_suffix(".db"), db)
    changed = write_league(tmp_path, league_toml(deals=8))
    for command in ("run", "table", "status"):
        r = cli("league", command, str(changed), "--db", str(db))
        assert r.exit_code == X.USAGE, (command, r.stdout)
        assert r.stderr.count("\n") == 1 and "game.deals" in r.stderr and "not be comparable" in r.stderr
    reseeded = write_league(tmp_path, league_toml(seed=2), "reseeded.toml")
    r = cli("league", "run", str(reseeded), "--db", str(db))
    assert r.exit_code == X.USAGE and "seed" in r.stderr
    # a bot whose command changed after it has results
    swapped = [("greedy", "first_bot.py", None), *FOUR[1:]]
    r = cli("league", "run", str(write_league(tmp_path, league_toml(swapped), "swapped.toml")), "--db", str(db))
    assert r.exit_code == X.USAGE and "bot 'greedy'" in r.stderr and r.stderr.count("\n") == 1
    assert done_count(db) == 6


# -- resume -----------------------------------------------------------------------------------------


def test_a_league_killed_with_sigkill_resumes_to_the_same_database(played, tmp_path):
    path = write_league(tmp_path / "killed", league_toml())
    db = path.with_suffix(".db")
    proc = start_league(path, "--concurrency", "2")
    try:
        wait_for_commit(proc, db)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate(timeout=HANG)
    assert proc.returncode == -signal.SIGKILL
    stored = done_count(db)
    assert 1 <= stored < 6, "the kill came too late to interrupt anything"

    again = referee("league", "run", str(path), "-q")
    assert again.returncode == 0, again.stderr
    assert f"played {6 - stored} match" in again.stdout
    assert dump(db) == dump(played.with_suffix(".db"))
    logs = path.parent / "league-logs"
    assert len(list(logs.glob("*.jsonl"))) == 6 and not list(logs.glob(".*.part.*"))


def test_ctrl_c_stops_the_matches_in_play_and_the_next_run_finishes(played, tmp_path):
    path = write_league(tmp_path / "interrupted", league_toml())
    db = path.with_suffix(".db")
    proc = start_league(path, "--concurrency", "2")
    try:
        wait_for_commit(proc, db)
        second = cli("league", "run", str(path))  # a second run of the same league is refused
        assert second.exit_code == X.USAGE and "another run of this league" in second.stderr
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends to the foreground job
        _, stderr = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == X.INTERRUPTED, stderr
    assert b"run the same command again" in stderr
    status = cli("league", "status", str(path))
    assert "0 failed" in status.stdout
    assert not list((path.parent / "league-logs").glob(".*.part.*"))  # half-played logs were removed
    again = referee("league", "run", str(path), "-q")
    assert again.returncode == 0, again.stderr
    assert dump(db) == dump(played.with_suffix(".db"))


def test_adding_a_bot_plays_exactly_its_new_pairings(played, tmp_path):
    path = write_league(tmp_path, league_toml(FOUR[:3]))
    first = referee("league", "run", str(path), "-j", "2")
    assert first.returncode == 0, first.stderr
    db = path.with_suffix(".db")
    before = dump(db, timings=True)["matches"]
    assert len(before) == 3

    path.write_text(league_toml(FOUR), encoding="utf-8")
    status = cli("league", "status", str(path))
    assert "3 done, 0 failed, 3 pending" in status.stdout
    assert status.stdout.count("pending  ") == 3 and all("random-b" in ln for ln in status.stdout.splitlines() if "pending  " in ln)
    second = referee("league", "run", str(path), "-j", "2")
    assert second.returncode == 0, second.stderr
    assert "played 3 matches" in second.stdout
    after = dump(db, timings=True)["matches"]
    assert [row for row in after if "random-b" not in row[1].split(",")] == before  # old rows untouched, timings included
    assert dump(db) == dump(played.with_suffix(".db"))
    third = referee("league", "run", str(path))
    assert third.returncode == 0 and "played 0 matches" in third.stdout


# -- failing match processes ------------------------------------------------------------------------


def two_bot_league(tmp_path: Path) -> Path:
    return write_league(tmp_path, league_toml(FOUR[:2]))


async def test_a_crashing_match_process_is_a_recorded_failure_and_is_played_again(tmp_path):
    path = two_bot_league(tmp_path)
    league = load_league(path)
    crash = [sys.executable, "-c", "import os, sys; sys.stdin.readline(); os.kill(os.getpid(), 9)"]
    with trio.fail_after(HANG):
        report = await run_league(league, worker_argv=crash)
    assert report.played == 0 and len(report.failed) == 1
    assert "SIGKILL" in report.failed[0][1]
    status = cli("league", "status", str(path))
    assert "0 done, 1 failed, 0 pending" in status.stdout and "SIGKILL" in status.stdout

    with trio.fail_after(HANG):
        report = await run_league(league)
    assert report.played == 1 and not report.failed
    assert "1 done, 0 failed" in cli("league", "status", str(path)).stdout


async def test_a_hung_match_process_is_stopped_and_recorded(tmp_path):
    path = two_bot_league(tmp_path)
    hang = [sys.executable, "-c", "import sys, time; sys.stdin.readline(); time.sleep(600)"]
    with trio.fail_after(HANG):
        report = await run_league(load_league(path), worker_argv=hang, stall=0.5)
    assert report.played == 0 and "no progress" in report.failed[0][1]


async def test_a_lane_replaces_a_match_process_that_died_and_goes_on(tmp_path):
    # A child that plays one match, then dies on the next job: that match fails, the lane starts
    # a new child for the one after, and the next run plays the failed one.
    path = write_league(tmp_path, league_toml(FOUR[:3]))
    once = [sys.executable, "-c", (
        "import json, os, sys, msgspec, trio\n"
        "from tournaments import worker\n"
        "record = trio.run(worker.play, worker.decode_job(sys.stdin.readline().encode()))\n"
        "print(json.dumps({'k': 'result', **msgspec.to_builtins(record)}), flush=True)\n"
        "sys.stdin.readline()\n"
        "os._exit(7)\n")]
    league = load_league(path)
    with trio.fail_after(HANG):
        report = await run_league(league, worker_argv=once)
    assert report.played == 2 and len(report.failed) == 1
    assert "exited with code 7" in report.failed[0][1]
    with trio.fail_after(HANG):
        report = await run_league(league)
    assert report.played == 1 and not report.failed and report.left == 0


SLOPPY = """
import json, sys
turns = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "sloppy", "version": "1", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        turns += 1
        if turns == 4:
            print("this is not JSON", flush=True)
        else:
            first = msg["legal"][0]
            print(json.dumps({"type": "play", "tile": first["tile"], "end": first.get("end")}), flush=True)
    elif msg["type"] == "match_end":
        break
"""


def test_faults_reach_the_table_and_a_bot_that_cannot_start_fails_its_pairings(tmp_path):
    (tmp_path / "sloppy.py").write_text(SLOPPY, encoding="utf-8")
    (tmp_path / "broken.py").write_text("raise SystemExit(1)\n", encoding="utf-8")
    tmp_path.chmod(0o755)  # in the sandbox, as root, the bots run as users of their own
    text = league_toml([FOUR[1]]) + (
        '[[bot]]\nname = "sloppy"\ncommand = "sloppy.py"\n'
        '[[bot]]\nname = "broken"\ncommand = "broken.py"\n')
    path = write_league(tmp_path, text)
    r = referee("league", "run", str(path), "-j", "2")
    assert r.returncode == X.BOT_START, r.stderr
    assert "played 1 match" in r.stdout and "2 failed" in r.stdout
    assert r.stderr.count("failed: broken vs") == 2 and "could not be started" in r.stderr
    status = cli("league", "status", str(path))
    assert "1 done, 2 failed, 0 pending" in status.stdout
    rows = {row["bot"]: row for row in table_json(path)["standings"]}
    assert rows["sloppy"]["bad_output"] >= 1 and rows["sloppy"]["matches"] == 1
    assert rows["first"]["bad_output"] == 0 and rows["broken"]["matches"] == 0
    conn = sqlite3.connect(path.with_suffix(".db"))
    try:
        kinds = conn.execute("SELECT bot, kind FROM faults").fetchall()
    finally:
        conn.close()
    assert kinds and all(k == ("sloppy", "bad_output") for k in kinds) and len(kinds) == rows["sloppy"]["bad_output"]


def test_a_start_up_failure_is_explained_in_the_league(tmp_path):
    """The failure line names the offending line and the hint, as ``match`` and ``check`` do;
    stderr that looks like rich markup is printed as written (issue 8)."""
    flawed = Path(__file__).resolve().parents[1] / "hostile_bots" / "flawed.py"
    text = league_toml([FOUR[1]]) + (
        f'[[bot]]\nname = "banner"\ncommand = "{flawed} banner"\n'
        f'[[bot]]\nname = "markup"\ncommand = "{flawed} markup_stderr"\n')
    path = write_league(tmp_path, text)
    r = referee("league", "run", str(path))
    assert r.returncode == X.BOT_START, r.stderr
    failed = [line for line in r.stderr.splitlines() if line.startswith("failed: ")]
    banner = [line for line in failed if "banner" in line]
    assert len(banner) == 2 and all("the line: 'flawed bot v2 -- ready'" in line for line in banner), r.stderr
    assert all("standard output is for protocol lines only" in line for line in banner)
    assert any("last stderr line: [/INFO] cannot go on" in line for line in failed), r.stderr
    status = cli("league", "status", str(path))
    assert status.exit_code == 0
    assert "the line: 'flawed bot v2 -- ready'" in status.stdout and "[/INFO] cannot go on" in status.stdout


def test_a_match_process_whose_league_is_gone_stops_its_bots_and_exits(tmp_path):
    # The league writes a job only after the last result, so input that ends mid-match means the
    # league died (kill -9): the child must not play on for nobody.
    from tournaments.runner import make_job

    league = load_league(two_bot_league(tmp_path))
    job = make_job(league, league.pairings()[0], tmp_path / "log.jsonl", tmp_path / "stderr")
    job = msgspec.structs.replace(job, game=msgspec.structs.replace(job.game, deals=400))
    proc = subprocess.Popen([sys.executable, "-m", "tournaments.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        proc.stdin.write(msgspec.json.encode(job) + b"\n")
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        assert first["k"] == "progress"
        proc.stdin.close()
        assert proc.wait(timeout=HANG) == 4, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            f.close()


async def test_matches_can_also_run_inside_the_league_process(tmp_path):
    path = two_bot_league(tmp_path)
    with trio.fail_after(HANG):
        report = await run_league(load_league(path), isolate=False)
    assert report.played == 1 and not report.failed
    assert table_json(path)["pairings"]["done"] == 1


# -- bad league files -------------------------------------------------------------------------------

BAD = [
    ("seed = = 1\n", "TOML syntax error"),
    (league_toml(game='variant = "chess"').replace('variant = "sport"\n', "", 1), "game.variant"),
    (league_toml([("twin", "first_bot.py", None), ("twin", "greedy_bot.py", None)]), "two bots are named 'twin'"),
    (league_toml(FOUR[:2]) + '[[bot]]\nname = "nocmd"\n', "bot 'nocmd': missing 'command'"),
    (league_toml([*FOUR[:2], ("ghost", "no_such_bot.py", None)]), "bot 'ghost'.command"),
    (league_toml(FOUR[:2], game="[game.options]\nrule13 = \"hang\""), "game.options"),
    (league_toml(FOUR[:2], game="[game.options]\nlone_doubles = \"maybe\""), "game.options"),
    (league_toml(FOUR[:2], head='schedule = "gauntlet"\ngauntlet = "nobody"'), "gauntlet: no bot is named 'nobody'"),
    (league_toml(FOUR[:2], deals=5), "game.deals"),
    (league_toml(FOUR[:2], head="sede = 3"), "sede: unknown key"),
    (league_toml(FOUR[:2], head='seed_ = "x"'), "unknown key"),
    (league_toml(FOUR[:1]), "at least two bots"),
    (league_toml(FOUR[:2]).replace("move = 10.0", "move = -1"), "clock"),
    (league_toml(FOUR[:2], head='schedule = "ladder"'), "schedule: 'ladder' is not a schedule"),
    # tables of N bots
    (league_toml(FOUR[:3], game="bots = 3"), "game.bots: sport in pairs takes 2 bots"),
    (league_toml(FOUR[:3], game="bots = 1"), "game.bots: a table takes at least 2 bots"),
    (league_toml(FOUR[:3]).replace('variant = "sport"\ndeals = 4', 'variant = "mexican_train"\nplayers = 3'),
     "game.bots: mexican_train with 3 players takes 3 bots, not 2 (set bots = 3 in [game])"),
    (league_toml(FOUR[:2]).replace('variant = "sport"\ndeals = 4', 'variant = "draw"\nplayers = 3\nbots = 3'),
     "a league of tables of 3 needs at least 3 bots"),
    (league_toml(FOUR[:3], head='rounds = 2'), "rounds: only a Swiss schedule has rounds"),
    (league_toml(FOUR[:3], head='schedule = "swiss"\nrounds = 4'), "rounds: 4 rounds of 3 bots at tables of 2"),
    (league_toml(FOUR[:3], head='schedule = "swiss"\nrounds = 0'), "rounds: a Swiss league plays at least 1 round"),
    (league_toml(FOUR[:3], head='schedule = "knockout"\ntables = 2'), "tables: only a round robin"),
    (league_toml(FOUR).replace('variant = "sport"\ndeals = 4', 'variant = "draw"\nplayers = 3\nbots = 3').replace(
        "seed = 1", 'seed = 1\ntables = 2'), "tables: 4 bots at 2 tables of 3 leave a table short; try 3"),
    (league_toml(FOUR).replace('variant = "sport"\ndeals = 4', 'variant = "draw"\nplayers = 3\nbots = 3').replace(
        "seed = 1", 'seed = 1\nschedule = "knockout"'), "schedule: a knockout of tables of 3 sends one bot of each table on"),
]


@pytest.mark.parametrize("text, expected", BAD, ids=[e for _, e in BAD])
def test_bad_league_files_are_refused_in_one_line_before_any_match(tmp_path, text, expected):
    path = write_league(tmp_path, text)
    for command in ("run", "table", "status"):
        r = cli("league", command, str(path))
        assert r.exit_code == X.USAGE, (command, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and str(path) in r.stderr, r.stderr
        assert expected in r.stderr, r.stderr
    assert not path.with_suffix(".db").exists()


def test_a_missing_league_file_is_refused(tmp_path):
    r = cli("league", "run", str(tmp_path / "none.toml"))
    assert r.exit_code == X.USAGE and "no such file" in r.stderr


def test_the_gauntlet_pairs_one_bot_with_all_the_others(tmp_path):
    path = write_league(tmp_path, league_toml(FOUR, head='gauntlet = "first"'))
    league = load_league(path)
    assert league.schedule == GAUNTLET
    assert sorted(k.bots for k in league.pairings()) == [("first", "greedy"), ("first", "random"), ("first", "random-b")]


def test_round_robin_adds_a_new_bots_pairings_at_the_end(tmp_path):
    three = load_league(write_league(tmp_path, league_toml(FOUR[:3]), "three.toml")).pairings()
    four = load_league(write_league(tmp_path, league_toml(FOUR), "four.toml")).pairings()
    assert four[: len(three)] == three and len(four) == 6 and len(set(four)) == 6


def test_the_example_league_file_loads():
    if shutil.which("node") is None:
        pytest.skip("the example enters random_bot.js, which needs node")
    league = load_league(ROOT / "tournaments" / "example.toml")
    assert len(league.bots) == 5 and league.variant.id == "sport" and league.deals == 4


def test_the_example_of_tables_of_three_loads():
    league = load_league(ROOT / "tournaments" / "example-tables.toml")
    assert league.per_table == 3 and [len(t.bots) for t in league.pairings()] == [3] * 4


def test_a_league_error_names_the_file(tmp_path):
    with pytest.raises(LeagueError, match="league.toml: bot: a league needs"):
        load_league(write_league(tmp_path, "[game]\n"))


def test_an_empty_database_gives_an_empty_table(tmp_path):
    path = write_league(tmp_path, league_toml(FOUR[:2]))
    data = table_json(path)
    assert data["pairings"]["pending"] == 1 and all(r["matches"] == 0 and r["rating"] == 0 for r in data["standings"])
    assert open_store(path.with_suffix(".db"), create=False) is None


# -- ratings ----------------------------------------------------------------------------------------


def test_symmetric_results_give_equal_ratings():
    names = ["a", "b", "c"]
    outcomes = [(x, y, s) for x, y in (("a", "b"), ("b", "c"), ("a", "c")) for s in (1.0, 0.0, 0.5, 0.5)]
    fitted = ratings.fit(names, outcomes)
    values = [fitted[n].rating for n in names]
    assert max(values) - min(values) < 1e-6 and abs(values[0]) < 1e-6
    halves = [fitted[n].half for n in names]
    assert max(halves) - min(halves) < 1e-6


def test_a_bot_that_won_everything_ranks_first_with_a_finite_interval():
    names = ["champ", "b", "c", "d"]
    outcomes = [("champ", o, 1.0) for o in names[1:] for _ in range(8)]
    outcomes += [("b", "c", 1.0), ("c", "d", 1.0), ("d", "b", 0.5)] * 3
    fitted = ratings.fit(names, outcomes)
    champ = fitted["champ"]
    assert all(math.isfinite(x) for x in (champ.rating, champ.low, champ.high))
    assert champ.rating == max(r.rating for r in fitted.values())
    assert all(champ.low > r.rating for n, r in fitted.items() if n != "champ")


def test_the_fit_solves_the_likelihood_equations():
    # At the maximum, each bot's score plus its virtual half-points equals its expected score
    # against the others and the reference.  Ratings are printed centred, so first find the
    # shift c back to the reference's scale: summed over bots the equations say Σ σ(θ_i) = k/2.
    names = ["a", "b", "c", "d"]
    outcomes = [("a", "b", 1.0), ("a", "b", 0.0), ("a", "b", 1.0), ("b", "c", 1.0), ("c", "d", 0.5), ("a", "d", 1.0),
                ("d", "b", 1.0), ("c", "a", 0.0), ("c", "a", 1.0)]
    fitted = ratings.fit(names, outcomes)
    theta0 = {n: fitted[n].rating / ratings.ELO for n in names}

    def anchor_score(c: float) -> float:
        return sum(1 / (1 + math.exp(-(t + c))) for t in theta0.values())

    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if anchor_score(mid) < len(names) / 2 else (lo, mid)
    p = {n: math.exp(theta0[n] + lo) for n in names}
    prior = ratings.PRIOR_DRAWS
    for n in names:
        score = prior / 2 + sum(s if a == n else 1 - s for a, b, s in outcomes if n in (a, b))
        expected = prior * p[n] / (p[n] + 1) + sum(p[n] / (p[a] + p[b]) for a, b, _ in outcomes if n in (a, b))
        assert score == pytest.approx(expected, abs=1e-6)


def test_a_single_game_moves_ratings_less_than_the_unregularised_fit_would():
    fitted = ratings.fit(["a", "b"], [("a", "b", 1.0)])
    assert 0 < fitted["a"].rating < 400 and fitted["b"].rating == pytest.approx(-fitted["a"].rating)
    with pytest.raises(ValueError):
        ratings.fit(["a", "b"], [("a", "x", 1.0)])
