"""Each lane of a league keeps to CPUs of its own (``--affinity``, the default): the split, the
worker's ``--cpus``, and the bots of a real league at ``--concurrency 2``, where they land."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from tests.tournaments.test_league import BOTS, HANG, league_toml, write_league
from tournaments.config import load_league
from tournaments.runner import WORKER_ARGV, LocalExecutor, lane_cpus, run_league


def test_one_lane_and_more_lanes_than_cpus_are_not_pinned():
    assert lane_cpus(1, [0, 1]) is None
    assert lane_cpus(3, [0, 1]) is None


def test_a_system_without_cpu_affinity_pins_nothing(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity")
    assert lane_cpus(2) is None
    assert LocalExecutor(2).lane_argv(0) == list(WORKER_ARGV)


@pytest.mark.parametrize(("lanes", "cpus", "expected"), [
    (2, [0, 1], [[0], [1]]),
    (2, [0, 1, 2, 3, 4, 5, 6, 7], [[0, 1, 2, 3], [4, 5, 6, 7]]),
    (3, [0, 1, 2, 3, 4, 5, 6, 7], [[0, 1], [2, 3], [4, 5]]),  # the remainder is left to others
    (2, [9, 2, 7, 5], [[2, 5], [7, 9]]),  # the CPUs this process may use, whichever they are
    (4, [0, 1, 2, 3], [[0], [1], [2], [3]]),
])
def test_lanes_split_the_cpus_into_equal_runs_that_never_overlap(lanes, cpus, expected):
    got = lane_cpus(lanes, cpus)
    assert got == expected
    flat = [c for run in got for c in run]
    assert len(flat) == len(set(flat)) and set(flat) <= set(cpus)


def test_the_lane_command_names_its_cpus_only_when_pinned():
    two = LocalExecutor(2)
    if len(os.sched_getaffinity(0)) >= 2:
        runs = lane_cpus(2)
        assert two.lane_argv(1) == [*WORKER_ARGV, "--cpus", ",".join(map(str, runs[1]))]
    assert LocalExecutor(2, affinity=False).lane_argv(1) == list(WORKER_ARGV)
    assert LocalExecutor(1).lane_argv(0) == list(WORKER_ARGV)
    assert LocalExecutor(2, isolate=False).cpus is None  # one process: nothing to pin


PINNED = """
import os, sys
from tournaments.worker import pin
print(pin(sys.argv[1:]))
print(sorted(os.sched_getaffinity(0)))
"""


def test_the_worker_pins_itself_before_anything_else_and_says_so_when_it_cannot():
    cpu = min(os.sched_getaffinity(0))
    done = subprocess.run([sys.executable, "-c", PINNED, "--cpus", str(cpu), "--probe"], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["['--probe']", f"[{cpu}]"]
    bad = subprocess.run([sys.executable, "-c", PINNED, "--cpus", "x"], capture_output=True, text=True, check=True)
    assert bad.stdout.splitlines()[0] == "[]"
    assert "--cpus x" in bad.stderr and "not pinned" in bad.stderr


# A bot that notes the CPUs it may use, then plays as first_bot.py.
NOTING = """
import os, sys
with open(os.path.join(os.environ["MASKS"], str(os.getpid())), "w") as f:
    f.write(",".join(map(str, sorted(os.sched_getaffinity(0)))))
os.execv(sys.executable, [sys.executable, {first!r}])
"""


def masks_of_a_league(tmp_path: Path, concurrency: int, affinity: bool) -> set[str]:
    masks = tmp_path / "masks"
    masks.mkdir()
    script = tmp_path / "noting_bot.py"
    script.write_text(NOTING.format(first=str(BOTS / "first_bot.py")))
    text = league_toml([(name, "first_bot.py", None) for name in ("a", "b", "c")], deals=4, head="sandbox = false")
    text = text.replace(f'command = "{BOTS / "first_bot.py"}"', f'command = "{script}"\nenv = {{ MASKS = "{masks}" }}')
    league = load_league(write_league(tmp_path, text))

    async def run():
        with trio.fail_after(HANG):
            return await run_league(league, concurrency, affinity=affinity)

    report = trio.run(run)
    assert report.played == 3 and not report.failed
    found = {p.read_text() for p in masks.iterdir()}
    assert len(list(masks.iterdir())) == 3 * 8  # three tables of sport, each 8 bot processes (a seat each, two seatings)
    return found


everything = ",".join(map(str, sorted(os.sched_getaffinity(0))))


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning two lanes takes two CPUs")
def test_the_bots_of_each_lane_keep_to_that_lanes_cpus(tmp_path):
    runs = {",".join(map(str, run)) for run in lane_cpus(2)}
    # Three tables on two lanes: both lanes play, and no bot may use another lane's CPUs.
    assert masks_of_a_league(tmp_path, 2, affinity=True) == runs


@pytest.mark.slow
@pytest.mark.parametrize(("concurrency", "affinity"), [(1, True), (2, False)])
def test_one_lane_or_no_affinity_leaves_the_bots_every_cpu(tmp_path, concurrency, affinity):
    assert masks_of_a_league(tmp_path, concurrency, affinity) == {everything}


class _Played(Exception):
    """Raised by the stand-in for run_league: the test needs what it was asked, not a league."""


@pytest.mark.parametrize(("flags", "expected"), [((), True), (("--no-affinity",), False), (("--affinity",), True)])
def test_league_run_passes_its_affinity_flag_to_the_lanes(tmp_path, monkeypatch, flags, expected):
    from tests.support.commands import cli

    asked: dict[str, object] = {}

    async def stand_in(league, concurrency, **kwargs):
        asked.update(kwargs, concurrency=concurrency)
        raise _Played

    monkeypatch.setattr("tournaments.runner.run_league", stand_in)
    path = write_league(tmp_path, league_toml(head='sandbox = false\nisolation = "concurrent"'))
    with pytest.raises(_Played):
        cli("league", "run", str(path), "-j", "2", "-q", *flags)
    assert asked["concurrency"] == 2 and asked["affinity"] is expected
