"""``referee league run --cluster``: leagues on a local Dask cluster of two worker processes.

The same four deterministic sample bots as tests/tournaments/test_league.py, so a league played on the
cluster must store exactly what the same league stores when played locally.  Workers and the
coordinator are killed with SIGKILL in the middle of matches; nothing may be lost, doubled, or
left running.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from tests.tournaments.test_league import BOTS, HANG, done_count, league_toml, referee, start_league, table_json, write_league
from tournaments.cluster import ClusterError, parse_address
from tournaments.config import load_league
from tournaments.runner import run_league
from tournaments.store import dump

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_db(tmp_path_factory) -> Path:
    """The league played locally (two lanes): what every cluster run must store."""
    path = write_league(tmp_path_factory.mktemp("local"), league_toml())
    report = trio.run(lambda: run_league(load_league(path), 2))
    assert report.played == 6 and not report.failed
    return path


def _children(pid: int) -> list[int]:
    """Children of every thread of ``pid`` (Dask starts match processes from worker threads)."""
    out = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:  # the process ended while we looked
        return out
    for task in tasks:
        try:
            out += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in _children(p):
            out.append(c)
            todo.append(c)
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pids: list[int]) -> list[int]:
    left = []
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.append(p)
    return left


def _wait_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + 30
    while (left := _alive(pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _busy_dask_worker(coordinator: int) -> int | None:
    """A Dask worker process of the coordinator's local cluster that is playing a match now (it
    has a ``tournaments.worker`` child)."""
    for p in _tree(coordinator):
        if "tournaments.worker" in _cmdline(p):
            continue
        if any(_cmdline(c).strip().endswith("-m tournaments.worker") for c in _children(p)):
            return p
    return None


def _mid_league(proc: subprocess.Popen, db: Path) -> list[int]:
    """Wait until a match is stored while another is playing; every process of the run then."""
    deadline = time.monotonic() + HANG
    while done_count(db) < 1 or _busy_dask_worker(proc.pid) is None:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no match was stored while another was playing"
        time.sleep(0.02)
    return _tree(proc.pid)


def test_a_league_on_a_local_cluster_stores_what_a_local_run_stores(local_db, tmp_path):
    path = write_league(tmp_path / "cl", league_toml())
    run = referee("league", "run", str(path), "--cluster", "local:2", "-q")
    assert run.returncode == 0, run.stderr
    assert "played 6 matches" in run.stdout
    assert "2 workers connected" in run.stderr
    assert dump(path.with_suffix(".db")) == dump(local_db.with_suffix(".db"))
    assert table_json(path) == table_json(local_db)
    logs = path.parent / "league-logs"
    assert len(list(logs.glob("*.jsonl"))) == 6 and not list(logs.glob(".*.part.*"))
    verify = referee("verify", str(logs / "first-vs-greedy.jsonl"))
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_worker_killed_mid_match_is_replaced_and_its_match_recorded_once(local_db, tmp_path):
    path = write_league(tmp_path / "wk", league_toml())
    db = path.with_suffix(".db")
    proc = start_league(path, "--cluster", "local:2", "-q")
    try:
        deadline = time.monotonic() + HANG
        while (victim := _busy_dask_worker(proc.pid)) is None:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no match started on the cluster"
            time.sleep(0.02)
        doomed = [victim, *_tree(victim)]
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, err
    assert b"played 6 matches" in out
    assert not _wait_gone(doomed), "the killed worker's match process or bots were left running"
    assert done_count(db) == 6
    assert dump(db) == dump(local_db.with_suffix(".db"))


def test_the_coordinator_killed_with_sigkill_resumes_with_nothing_lost_or_doubled(local_db, tmp_path):
    path = write_league(tmp_path / "co", league_toml())
    db = path.with_suffix(".db")
    proc = start_league(path, "--cluster", "local:2", "-q")
    try:
        everything = _mid_league(proc, db)
        os.kill(proc.pid, signal.SIGKILL)  # the coordinator alone, not its process group
        _, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert not _wait_gone(everything), "workers, match processes or bots outlived the coordinator"
    # multiprocessing's resource tracker outlives the coordinator and cleans up after it, silently
    assert b"leaked semaphore" not in err and b"resource_tracker" not in err, err
    stored = done_count(db)
    assert 1 <= stored < 6
    again = referee("league", "run", str(path), "--cluster", "local:2", "-q")
    assert again.returncode == 0, again.stderr
    assert f"played {6 - stored} match" in again.stdout
    assert dump(db) == dump(local_db.with_suffix(".db"))
    logs = path.parent / "league-logs"
    assert len(list(logs.glob("*.jsonl"))) == 6 and not list(logs.glob(".*.part.*"))


def test_a_bot_that_cannot_start_on_a_worker_is_named_before_any_match(tmp_path):
    broken = tmp_path / "broken_bot.py"
    broken.write_text("import sys\nprint('cannot find my opening book', file=sys.stderr)\nsys.exit(1)\n")
    tmp_path.chmod(0o755)  # in the sandbox, as root, the bot runs as a user of its own
    text = league_toml([("greedy", "greedy_bot.py", None), ("first", "first_bot.py", None)])
    text = text.replace(str(Path(__file__).resolve().parents[2] / "sample_bots" / "first_bot.py"), str(broken))
    path = write_league(tmp_path / "nb", text)
    run = referee("league", "run", str(path), "--cluster", "local:1", "-q")
    assert run.returncode == 3, run.stdout + run.stderr
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and "cannot find my opening book" in line
    assert "on worker tcp://127.0.0.1:" in line and "'first'" in line
    assert done_count(path.with_suffix(".db")) == 0


@pytest.mark.parametrize("address", ["local:0", "local:x", "local", "tcp://a b"])
def test_bad_cluster_addresses_are_refused_in_one_line(address):
    with pytest.raises(ClusterError):
        parse_address(address)


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    path = write_league(tmp_path / "un", league_toml([("greedy", "greedy_bot.py", None), ("first", "first_bot.py", None)]))
    run = subprocess.run([sys.executable, "-c", (
        "import sys; import tournaments.cluster as c; c_connect = c.connect\n"
        "def connect(address, timeout=30.0): return c_connect(address, timeout=2.0)\n"
        "c.connect = connect\n"
        "from referee.commands import main; sys.argv = ['referee', 'league', 'run', sys.argv[1], '--cluster', 'tcp://127.0.0.1:9', '-q']; main()"
    ), str(path)], capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stdout + run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "cannot reach the scheduler" in run.stderr


def test_without_dask_cluster_names_the_install_command(tmp_path):
    path = write_league(tmp_path / "nd", league_toml([("greedy", "greedy_bot.py", None), ("first", "first_bot.py", None)]))
    run = subprocess.run([sys.executable, "-c", (
        "import sys; sys.modules['distributed'] = None\n"
        "from referee.commands import main; sys.argv = ['referee', 'league', 'run', sys.argv[1], '--cluster', 'local:2']; main()"
    ), str(path)], capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip().splitlines() == [
        "error: --cluster needs Dask's distributed scheduler, which is not installed: pip install 'referee[cluster]'"]


def test_sigterm_stops_a_cluster_run_cleanly_and_the_next_run_finishes(local_db, tmp_path):
    path = write_league(tmp_path / "st", league_toml())
    db = path.with_suffix(".db")
    proc = start_league(path, "--cluster", "local:2", "-q")
    try:
        everything = _mid_league(proc, db)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert b"interrupted" in err and b"Traceback" not in err
    assert not _wait_gone(everything), "workers, match processes or bots outlived an interrupted run"
    again = referee("league", "run", str(path), "--cluster", "local:2", "-q")
    assert again.returncode == 0, again.stderr
    assert dump(db) == dump(local_db.with_suffix(".db"))


# -- tables of N bots and Swiss rounds on the cluster --------------------------------------------------

N_SEAT_SWISS = """seed = 5
schedule = "swiss"
rounds = 2
[game]
variant = "muggins"
players = 3
bots = 3
[clock]
startup = 30.0
move = 10.0
""" + "".join(f'[[bot]]\nname = "{name}"\ncommand = "{BOTS / script}"\n' + (f'env = {{ BOT_SEED = "{seed}" }}\n' if seed else "")
              for name, script, seed in (("greedy", "greedy_bot.py", None), ("first", "first_bot.py", None), ("r3", "random_bot.py", "3"),
                                         ("r5", "random_bot.py", "5"), ("r7", "random_bot.py", "7")))


def test_a_swiss_league_of_three_bot_tables_on_a_cluster_stores_what_a_local_run_stores(tmp_path):
    local = write_league(tmp_path / "local", N_SEAT_SWISS)
    report = trio.run(lambda: run_league(load_league(local), 2))
    assert report.played == 2 and not report.failed and report.rounds == 2
    path = write_league(tmp_path / "cl", N_SEAT_SWISS)
    run = referee("league", "run", str(path), "--cluster", "local:2", "-q")
    assert run.returncode == 0, run.stderr
    assert "played 2 tables" in run.stdout and "2 of 2 tables done" in run.stdout
    assert dump(path.with_suffix(".db")) == dump(local.with_suffix(".db"))
    assert table_json(path) == table_json(local)


# A bot outside the sandbox that kills the Dask worker playing it (its match process's parent) at
# its first turn: every worker that plays the table dies, as if the machine took it down.
WORKER_KILLER = """
import json, os, signal, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "killer", "version": "1", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        match = os.getppid()
        with open(f"/proc/{match}/stat") as f:
            worker = int(f.read().rsplit(")", 1)[1].split()[1])
        os.kill(worker, signal.SIGKILL)
    elif msg["type"] == "match_end":
        break
"""


def test_a_table_whose_workers_died_is_not_counted_as_an_attempt(tmp_path):
    (tmp_path / "killer.py").write_text(WORKER_KILLER, encoding="utf-8")
    text = league_toml([("greedy", "greedy_bot.py", None)]) + '[[bot]]\nname = "killer"\ncommand = "killer.py"\nsandbox = false\n'
    path = write_league(tmp_path, text)
    run = referee("league", "run", str(path), "--cluster", "local:1", "-q")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "died 3 times" in run.stderr and "not counted as an attempt" in run.stderr, run.stderr
    conn = sqlite3.connect(path.with_suffix(".db"))
    try:
        assert conn.execute("SELECT status, attempts FROM matches").fetchall() == [("failed", 0)]
    finally:
        conn.close()
    status = referee("league", "status", str(path))
    assert "failed   greedy vs killer" in status.stdout and "(attempt" not in status.stdout and "given up" not in status.stdout
