"""``referee match --cluster``: one match's segments on a local Dask cluster of two workers.

The log and the result are made on the coordinator in board order, so they must equal what
``-j 1`` gives for the same seed and bots (timings stripped), in a 2-player game, sport in pairs
and a 3-bot table, with the SPRT deciding too.  A worker killed with SIGKILL in the middle of a
segment: the segment is played again elsewhere and counted once, nothing charged to the bots.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial

import msgspec
import pytest
import trio

from referee.audit.verify import verify
from referee.base import exitcodes as X
from referee.base.clock import TimeControl
from referee.base.cluster import parse_address
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.stats.sprt import SprtSpec
from tests.helpers import read_log, strip_timings
from tests.matches.test_lanes import CASES, GREEDY, RANDOM, played, spec_of
from tests.tournaments.test_cluster import _children, _cmdline, _tree, _wait_gone

pytestmark = pytest.mark.slow

HANG = 300


_shared = sys.modules["conftest"]


@pytest.fixture(autouse=True)
def no_leaks():
    """conftest's check less sockets: the module's Dask client (and the event loop thread Dask keeps
    for the rest of the process) opens and closes connections as it likes.  Processes (the
    workers' bots among them) and every other descriptor are checked as everywhere."""
    processes_before = _shared._our_processes().keys()
    fds_before = _shared._open_fds()
    yield
    deadline = time.monotonic() + _shared._GRACE
    while (left := {p: d for p, d in _shared._our_processes().items() if p not in processes_before}) and time.monotonic() < deadline:
        time.sleep(0.01)
    leaked = {fd: t for fd, t in _shared._open_fds().items() if fds_before.get(fd) != t and not t.startswith("socket:")}
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not left, "processes left alive: " + ", ".join(left.values())
    assert not leaked, f"file descriptors left open: {leaked}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    pytest.importorskip("distributed")
    from referee.matches.cluster import on_cluster

    with on_cluster(parse_address("local:2")) as on:
        assert on.workers == 2 and on.lanes == 2
        yield on


def played_on(spec: MatchSpec, cluster) -> tuple[dict, list]:
    with trio.run(partial(run_match, spec, handle_signals=False, lanes=cluster.lanes, cluster=cluster)) as result:
        whole = msgspec.to_builtins(result.whole())
    assert spec.log_path is not None
    return whole, [strip_timings(r) for _, r in read_log(spec.log_path)]


@pytest.mark.parametrize("case", CASES)
def test_the_result_and_the_log_on_a_cluster_are_those_of_one_lane(tmp_path, cluster, case):
    kw = CASES[case]
    one = played(spec_of(tmp_path, "j1", **kw), 1)
    on = played_on(spec_of(tmp_path, "cl", **kw), cluster)
    assert on[0] == one[0]
    assert on[1] == one[1]
    counts = verify(tmp_path / "cl.jsonl")
    assert counts.games == len(one[0]["orientations"]) * kw["games"]
    # the bots' stderr files came back from the workers, beside the log, as a local run names them
    assert sorted(p.name for p in (tmp_path / "cl.stderr").iterdir()) == sorted(p.name for p in (tmp_path / "j1.stderr").iterdir())


def test_the_sprt_on_a_cluster_stops_after_the_board_one_lane_stops_after(tmp_path, cluster):
    sprt = SprtSpec(kind="margin", h0=0.0, h1=60.0, alpha=0.2, beta=0.2, min_pairs=2)
    kw = {"game": "block", "players": 2, "n_bots": 2, "games": 40, "sprt": sprt, "tc": TimeControl(move=2.0)}
    one = played(spec_of(tmp_path, "j1", **kw), 1)
    on = played_on(spec_of(tmp_path, "cl", **kw), cluster)
    assert one[0]["stopped_by"] == "sprt" and on[0] == one[0]
    assert on[1] == one[1]
    assert one[0]["sprt"]["pairs"] < 40
    verify(tmp_path / "cl.jsonl")


def referee(*args: str, timeout: float = HANG) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


MATCH = [GREEDY, f"{RANDOM} 3", "--variant", "block", "--players", "2", "--seed", "4", "-q"]


def _busy_worker(coordinator: int) -> tuple[int, list[int]] | None:
    """A Dask worker process of the coordinator's local cluster playing a segment now, and its
    bots (children running a sample bot)."""
    for p in _tree(coordinator):
        bots = [c for c in _children(p) if "sample_bots" in _cmdline(c)]
        if bots and "sample_bots" not in _cmdline(p):
            return p, bots
    return None


def test_a_worker_killed_mid_segment_has_its_segment_played_again_and_counted_once(tmp_path):
    local = referee("match", *MATCH, "--games", "8", "--log", str(tmp_path / "j1.jsonl"), "--json", str(tmp_path / "j1.json"))
    assert local.returncode == 0, local.stderr
    log, result = tmp_path / "cl.jsonl", tmp_path / "cl.json"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", *MATCH, "--games", "8", "--cluster", "local:2",
                             "--log", str(log), "--json", str(result)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + HANG
        while (busy := _busy_worker(proc.pid)) is None:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no segment started on the cluster"
            time.sleep(0.01)
        victim, bots = busy
        os.kill(victim, signal.SIGKILL)  # its bots were alive a moment ago: its segment was being played
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, err
    assert not _wait_gone(bots), "the killed worker's bots were left running"
    one, on = json.loads((tmp_path / "j1.json").read_text()), json.loads(result.read_text())
    assert on == one
    assert len(on["game_results"]) == 16 and not on["faults"]  # every game once, nothing charged to a bot
    assert [strip_timings(r) for _, r in read_log(log)] == [strip_timings(r) for _, r in read_log(tmp_path / "j1.jsonl")]
    verify(log)


def test_ctrl_c_on_a_cluster(tmp_path):
    """SIGINT to a match on a cluster and its workers: the finished pairs are printed and in --json
    (interrupted), no worker dies of it with a traceback, and no worker or bot is left behind."""
    log, result = tmp_path / "m.jsonl", tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", *MATCH, "--games", "5000", "--cluster", "local:2",
                             "--log", str(log), "--json", str(result)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + HANG
        while not (log.exists() and log.read_bytes().count(b'"k":"game_end"') >= 6):
            assert time.monotonic() < deadline and proc.poll() is None, "the match did not get going"
            time.sleep(0.05)
        everything = _tree(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C at a terminal: the local cluster's workers get it too
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == X.INTERRUPTED, err
    assert "interrupted after" in err and "Traceback" not in err
    data = json.loads(result.read_text())
    assert data["interrupted"] is True
    boards = len(data["game_results"]) // 2
    assert boards >= 3 and f"interrupted after {boards} pair" in err
    records = [r for _, r in read_log(log)]
    assert records[-1]["k"] == "interrupted"
    assert not _wait_gone(everything), "workers or bots outlived an interrupted match"


@pytest.mark.parametrize("address", ["local:0", "local:x", "tcp://a b"])
def test_a_bad_address_is_one_line(tmp_path, address):
    run = referee("match", GREEDY, RANDOM, "--cluster", address, "--log", str(tmp_path / "m.jsonl"))
    assert run.returncode == X.USAGE, run.stdout + run.stderr
    assert run.stderr.strip().splitlines() == [run.stderr.strip()] and "--cluster" in run.stderr
    assert not (tmp_path / "m.jsonl").exists()


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    pytest.importorskip("distributed")
    run = subprocess.run([sys.executable, "-c", (
        "import sys; import referee.matches.cluster as c; c_connect = c.connect\n"
        "c.connect = lambda address, timeout=30.0: c_connect(address, timeout=2.0)\n"
        "from referee.commands import main\n"
        "sys.argv = ['referee', 'match', sys.argv[1], sys.argv[1], '--cluster', 'tcp://127.0.0.1:9', '--log', sys.argv[2]]; main()"
    ), GREEDY, str(tmp_path / "m.jsonl")], capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)
    assert run.returncode == X.USAGE, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the scheduler" in lines[0], run.stderr
    assert not (tmp_path / "m.jsonl").exists()


# A bot that kills the Dask worker playing it (its parent: a match's segment is played in the
# worker's own process) at its first turn: every worker that plays the segment dies, as if the
# machine took it down.
WORKER_KILLER = """
import json, os, signal, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "killer", "version": "1", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        os.kill(os.getppid(), signal.SIGKILL)
"""


def test_a_segment_whose_workers_keep_dying_stops_the_match_in_one_line(tmp_path):
    killer = tmp_path / "killer.py"
    killer.write_text(WORKER_KILLER, encoding="utf-8")
    run = referee("match", GREEDY, str(killer), "--variant", "block", "--players", "2", "--cluster", "local:1",
                  "--log", str(tmp_path / "m.jsonl"), "-q")
    assert run.returncode == X.USAGE, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert lines[-1].startswith("error: the workers playing game 1 in seating ") and "died 3 times" in lines[-1], run.stderr
    assert "Traceback" not in run.stderr and not run.stdout.strip()


def test_a_bot_that_cannot_start_on_a_worker_is_reported_as_here(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nprint('cannot find my opening book', file=sys.stderr)\nsys.exit(1)\n", encoding="utf-8")
    run = referee("match", GREEDY, str(broken), "--variant", "block", "--players", "2", "--cluster", "local:1",
                  "--log", str(tmp_path / "m.jsonl"), "-q")
    assert run.returncode == X.BOT_START, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "cannot find my opening book" in run.stderr
    assert run.stderr.startswith("error: a bot could not be started: broken: bot 'broken' exited with code 1")
