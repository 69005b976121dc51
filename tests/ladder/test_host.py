"""``referee ladder``: a real host of the sample bots, killed with SIGKILL at random moments and
started again, bots added and retired while it runs, a faulting newcomer refused, bad input.

The bots are deterministic (first_bot, greedy_bot, random_bot with a fixed BOT_SEED) and the
sandbox is off (these tests are not about it), so two hosts of the same ladder store the same
tables.  Deadlines only catch hangs; no test asserts how long anything took.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.base import exitcodes as X
from tournaments.ladder.store import dump

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots"
HANG = 180  # seconds after which a host counts as hung

FIELD = [("greedy", "greedy_bot.py", None), ("first", "first_bot.py", None), ("random", "random_bot.py", "3")]
PER_TABLE = 8  # deals a table plays: 4 a seating, two seatings


def ladder_toml(bots=FIELD, *, seed: int = 7, extra: str = "") -> str:
    parts = [f"seed = {seed}", "sandbox = false", extra, "[game]", 'variant = "sport"', "deals = 4",
             "[clock]", "startup = 30.0", "move = 10.0"]
    for name, script, bot_seed in bots:
        parts += ["[[bot]]", f'name = "{name}"', f'command = "{BOTS / script}"']
        if bot_seed is not None:
            parts.append(f'env = {{ BOT_SEED = "{bot_seed}" }}')
    return "\n".join(parts) + "\n"


def write(directory: Path, text: str, name: str = "ladder.toml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def referee(*args: str, timeout: float = HANG) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False, cwd=ROOT)


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "referee", "ladder", "run", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True, cwd=ROOT)


def query(db: Path, sql: str, *args) -> list[tuple]:
    if not db.exists():
        return []
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # not made yet
        return []
    finally:
        conn.close()


def done(db: Path) -> list[tuple[int, str]]:
    return query(db, "SELECT round, bots FROM matches WHERE status = 'done' ORDER BY round")


def wait_for(what, proc: subprocess.Popen | None = None, deadline: float = HANG):
    """Poll ``what()`` until it is true (an event in the database, not a time)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = what()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the host ended ({proc.returncode}): {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def tree(pid: int) -> set[int]:
    """``pid`` and every process below it."""
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        out.add(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def alive(pids: set[int]) -> set[int]:
    left = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.add(p)
    return left


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


@contextlib.contextmanager
def hosting(*args: str) -> Iterator[subprocess.Popen]:
    """A host running (:func:`start`), killed with its group if the block leaves it running."""
    proc = start(*args)
    try:
        yield proc
    finally:
        _kill(proc)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> tuple[int, str]:
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=HANG)
    finally:
        _kill(proc)
    return proc.returncode, err.decode()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- kill and restart -------------------------------------------------------------------------------


@pytest.mark.slow
def test_sigkill_at_random_moments_then_restarts_store_what_an_uninterrupted_host_stores(tmp_path):
    path = write(tmp_path, ladder_toml())
    limit = str(12 * PER_TABLE)
    whole = referee("ladder", "run", str(path), "--db", str(tmp_path / "whole.db"), "-j", "2", "--max-deals", limit, "-q")
    assert whole.returncode == 0, whole.stderr
    assert len(done(tmp_path / "whole.db")) == 12

    db = tmp_path / "killed.db"
    rng = random.Random(41)  # the moments of the kills: reproducible
    kills = 0
    for _ in range(6):
        proc = start(str(path), "--db", str(db), "-j", "2", "--max-deals", limit, "-q")
        before = len(done(db))
        # a moment in the middle of play: after a table is chosen (or the bots are being checked), a little later
        wait_for(lambda p=proc: query(db, "SELECT 1 FROM in_play") or p.poll() is not None or not query(db, "SELECT 1 FROM ladder_entries"),
                 deadline=HANG)
        time.sleep(rng.uniform(0.0, 1.5))
        family = tree(proc.pid)
        if proc.poll() is not None:
            break
        os.kill(proc.pid, signal.SIGKILL)  # the host only: its match processes and bots must go by themselves
        proc.communicate(timeout=HANG)
        kills += 1
        others = family - {proc.pid}
        wait_for(lambda left=others: not alive(left), deadline=60)  # no process is left
        assert len(done(db)) >= before
    assert kills >= 3
    last = referee("ladder", "run", str(path), "--db", str(db), "-j", "2", "--max-deals", limit, "-q")
    assert last.returncode == 0, last.stderr
    # the same rows, each log in its own folder (the logs go beside each database)
    assert repr(dump(db)).replace("killed-logs/", "whole-logs/") == repr(dump(tmp_path / "whole.db"))
    logs = tmp_path / "killed-logs"
    assert len(list(logs.glob("table-*.jsonl"))) == 12 and not list(logs.glob(".*.part*"))
    assert query(db, "SELECT * FROM in_play") == []
    again = referee("ladder", "run", str(path), "--db", str(db), "--max-deals", limit, "-q")
    assert again.returncode == 0 and "played 0 tables" in again.stdout


# -- the field changes while it runs ----------------------------------------------------------------


@pytest.mark.slow
def test_a_bot_added_while_the_host_runs_plays_the_same_deals_and_a_retired_one_stops_and_keeps_its_rows(tmp_path):
    path = write(tmp_path, ladder_toml(FIELD[:2]))
    db = tmp_path / "ladder.db"
    with hosting(str(path), "-j", "2") as proc:
        wait_for(lambda: len(done(db)) >= 2, proc)
        added = referee("ladder", "add", str(path), "random", "--env", "BOT_SEED=3", "--", str(BOTS / "random_bot.py"))
        assert added.returncode == 0, added.stderr
        assert "random entered" in added.stdout
        first_of_random = wait_for(lambda: [r for r in done(db) if "random" in r[1].split(",")], proc)[0]
        status = referee("ladder", "status", str(path), "-f", "json")
        data = json.loads(status.stdout)
        assert data["run"] is not None and data["run"]["id"].endswith(f":{proc.pid}")
        assert {e["name"]: e["state"] for e in data["entries"]} == {"greedy": "active", "first": "active", "random": "active"}

        retired = referee("ladder", "retire", str(path), "first")
        assert retired.returncode == 0, retired.stderr
        since = wait_for(lambda: query(db, "SELECT retired_from FROM ladder_entries WHERE name = 'first' AND retired_from IS NOT NULL"),
                         proc)[0][0]
        wait_for(lambda: len([r for r in done(db) if r[0] >= since]) >= 2, proc)
        code, err = stop(proc)
    assert code == X.INTERRUPTED, err
    assert "table 0: first joins" in err or "first joins" in err
    chosen = query(db, "SELECT number, bots, deal_set FROM ladder_tables ORDER BY number")
    assert all("first" not in bots.split(",") for number, bots, _ in chosen if number >= since)
    assert any("first" in bots.split(",") for number, bots in done(db) if number < since)  # its rows stay
    # the newcomer's first table against a bot is deal set 0: the deals table 0 was dealt
    number = first_of_random[0]
    deal_set = query(db, "SELECT deal_set FROM ladder_tables WHERE number = ?", number)[0][0]
    assert deal_set == 0
    header = json.loads((tmp_path / "ladder-logs" / f"table-{number:06d}.jsonl").read_text().splitlines()[0])
    header0 = json.loads((tmp_path / "ladder-logs" / "table-000000.jsonl").read_text().splitlines()[0])
    assert header["seed"] == header0["seed"]
    assert query(db, "SELECT * FROM in_play") == []  # abandoned tables are not in play any more
    table = referee("ladder", "table", str(path), "-f", "csv")
    assert table.returncode == 0 and {"greedy", "first", "random"} <= {line.split(",")[1] for line in table.stdout.splitlines()[1:]}


def test_a_newcomer_that_faults_is_refused_with_the_checks_report_and_never_enters(tmp_path):
    path = write(tmp_path, ladder_toml(FIELD[:2]))
    r = referee("ladder", "add", str(path), "flawed", "--", str(ROOT / "tests" / "hostile_bots" / "flawed.py"), "illegal")
    assert r.returncode == X.USAGE
    assert "FAIL" in r.stdout and "illegal" in r.stdout  # referee check's report
    assert r.stderr.strip().splitlines()[-1].startswith("error: flawed is refused: it failed referee check")
    assert query(tmp_path / "ladder.db", "SELECT name FROM ladder_entries") == []


# -- bad input: one line, exit 2, nothing lost ---------------------------------------------------------


def test_bad_input_is_one_line_and_exit_2_and_loses_nothing(tmp_path):
    path = write(tmp_path, ladder_toml(FIELD[:2]))
    db = tmp_path / "ladder.db"
    r = referee("ladder", "run", str(path), "--max-deals", str(PER_TABLE), "-q")
    assert r.returncode == 0, r.stderr
    before = dump(db, timings=True)

    def refused(*args: str, words: str) -> None:
        r = referee("ladder", *args)
        assert r.returncode == X.USAGE, (args, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and words in r.stderr, (args, r.stderr)
        assert dump(db, timings=True) == before

    refused("add", str(path), "greedy", "--", str(BOTS / "first_bot.py"), words="greedy@2")
    refused("add", str(path), "ghost", "--", str(tmp_path / "no-such-bot.py"), words="ghost")
    refused("add", str(path), "bad name", "--", str(BOTS / "first_bot.py"), words="not a plain name")
    refused("retire", str(path), "nobody", words="no entry")
    refused("run", str(path), "--until", "never", words="--until")

    # a second host on the same database
    with hosting(str(path)) as proc:
        wait_for(lambda: query(db, "SELECT 1 FROM in_play"), proc)
        second = referee("ladder", "run", str(path))
        assert second.returncode == X.USAGE and second.stderr.count("\n") == 1
        assert "another run of this ladder" in second.stderr
        stop(proc)

    # a damaged database: every command says so in one line and leaves the file as it was
    damaged = tmp_path / "damaged.db"
    data = bytearray(db.read_bytes())
    data[4096:8192] = os.urandom(4096)  # a page of the tables
    damaged.write_bytes(bytes(data))
    digest = sha(damaged)
    for command in (["run", "-q"], ["status"], ["table"], ["add", "x", "--", str(BOTS / "first_bot.py")]):
        args = [command[0], str(path), "--db", str(damaged), *command[1:]] if command[0] != "add" else \
            ["add", str(path), "x", "--db", str(damaged), "--", str(BOTS / "first_bot.py")]
        r = referee("ladder", *args)
        assert r.returncode == X.USAGE, (command, r.stderr)
        assert r.stderr.count("\n") == 1 and "damaged" in r.stderr, (command, r.stderr)
        assert sha(damaged) == digest


def test_a_ladder_file_with_a_schedule_is_refused_in_one_line(tmp_path):
    path = write(tmp_path, ladder_toml(extra='schedule = "swiss"'))
    r = referee("ladder", "status", str(path))
    assert r.returncode == X.USAGE and r.stderr.count("\n") == 1 and "a ladder has no schedule" in r.stderr


def test_sigterm_while_the_files_bots_are_checked_ends_cleanly_with_130(tmp_path):
    path = write(tmp_path, ladder_toml(FIELD[:2]))
    with hosting(str(path)) as proc:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()  # the first thing the host says: it checks the first bot
        assert line.startswith("checking greedy"), line
        wait_for(lambda: list((tmp_path / "ladder-logs" / "checks").glob("greedy-*/*")), proc)  # its check is playing
        family = tree(proc.pid)
        code, err = stop(proc)
    assert code == X.INTERRUPTED, err
    assert err.strip().splitlines()[-1].startswith("interrupted while the bots were checked")
    wait_for(lambda: not alive(family - {proc.pid}), deadline=60)
    assert done(tmp_path / "ladder.db") == []


def test_a_newcomer_is_checked_in_the_sandbox_when_the_ladder_plays_in_it(tmp_path):
    bots = tmp_path / "bots"
    bots.mkdir()
    script = bots / "writes_beside_bot.py"
    script.write_bytes((ROOT / "tests" / "ladder" / "bots" / "writes_beside_bot.py").read_bytes())
    boxed = write(tmp_path / "boxed", ladder_toml([]).replace("sandbox = false", "sandbox = true"))
    r = referee("ladder", "add", str(boxed), "writer", "--", str(script))
    assert r.returncode == X.USAGE and "writer is refused" in r.stderr
    assert "FAIL" in r.stdout and "referee check writer" in r.stdout  # check's report
    assert not (bots / "writes_beside_bot.state").exists()
    plain = write(tmp_path / "plain", ladder_toml([]))
    r = referee("ladder", "add", str(plain), "writer", "--", str(script))
    assert r.returncode == 0, r.stdout + r.stderr
    entry = query(tmp_path / "plain" / "ladder.db", "SELECT bot FROM ladder_entries WHERE name = 'writer'")[0][0]
    assert json.loads(entry)["sandbox"] is False
