"""League throughput on a Dask cluster: the same league at ``--concurrency 2`` and on ``--cluster local:2``.

    python -m bench.cluster                    # options: --deals N, --repeat N, --bots python|c

The league is bench.league's (the four sample bots at sport, ``--deals`` deals per orientation,
default 48; 6 matches).  Each round plays it from a fresh database twice, alternating: locally
with two lanes (worker processes), and on a local Dask cluster of two worker processes.  For the
cluster it reports the whole run, and the run without the cluster's start-up and the bot check
on every worker (the time until the first match is submitted), which is what a long league pays
per match.  The cluster's *overhead per match* is (cluster run without start-up − local run) ×
2 lanes / matches: scheduling the task, shipping the result and the log back, and writing them.
Each round also submits the league's matches one at a time and measures each task's own
overhead directly (submit to result, less the match's time on the worker), which is less
sensitive to a busy machine than the difference of two whole runs.

Figures come from the best run of each (the least disturbed by other work), medians beside them.
Nothing here is a test and nothing asserts a timing.  See bench/README.md, "Leagues on a cluster".
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

from bench.league import league_text


class _Clock:
    """A league display that notes when the matches were submitted (after start-up and the probe)."""

    def __init__(self) -> None:
        self.begun: float | None = None

    def begin(self, pairings: int, done: int, pending: int) -> None:
        self.begun = time.perf_counter()

    def started(self, pair) -> None:
        pass

    def progress(self, pair, done, total) -> None:
        pass

    def finished(self, pair, record, error) -> None:
        pass


def run_local(toml: Path, db: Path) -> tuple[float, int]:
    from tournaments.config import load_league
    from tournaments.runner import run_league

    league = load_league(toml, db)
    t0 = time.perf_counter()
    report = trio.run(lambda: run_league(league, 2))
    if report.failed:
        raise SystemExit(f"bench.cluster: {len(report.failed)} local matches failed, e.g. {report.failed[0]}")
    return time.perf_counter() - t0, report.played


def run_cluster(toml: Path, db: Path) -> tuple[float, float, int]:
    """Wall seconds of the whole run, seconds from submitting the matches to the end, matches."""
    from tournaments.cluster import Address, run_league_on_cluster
    from tournaments.config import load_league

    league = load_league(toml, db)
    clock = _Clock()
    t0 = time.perf_counter()
    report = run_league_on_cluster(league, Address(local=2), display=clock)
    end = time.perf_counter()
    if report.failed:
        raise SystemExit(f"bench.cluster: {len(report.failed)} cluster matches failed, e.g. {report.failed[0]}")
    assert clock.begun is not None
    return end - t0, end - clock.begun, report.played


def task_overhead(toml: Path, db: Path) -> list[float]:
    """Each match of the league submitted alone to a fresh ``local:2`` cluster, one after the
    other: seconds from submitting to holding the result, less the match's own time on the
    worker.  That is the scheduling, the task's start, and shipping the result and log back."""
    from tournaments.cluster import Address, connect, play_match
    from tournaments.config import load_league
    from tournaments.runner import make_job

    league = load_league(toml, db)
    out = []
    with connect(Address(local=2)) as client:
        for pair in league.pairings():
            job = make_job(league, pair, Path("match.jsonl"), Path("stderr"))
            t0 = time.time()
            got = client.submit(play_match, job, 600.0, pure=False).result()
            t1 = time.time()
            if got["record"] is None:
                raise SystemExit(f"bench.cluster: a match failed: {got['error']}")
            out.append((t1 - t0) - (got["finished"] - got["started"]))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.cluster", description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=48, help="deals per orientation (sport: a multiple of 4; default 48)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds, each playing the league locally and on the cluster (default 3)")
    ap.add_argument("--bots", choices=("python", "c"), default="python", help="the sample bots (python, default) or the C ones")
    args = ap.parse_args(argv)
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise SystemExit("bench.cluster needs Dask: pip install 'referee[cluster]'") from None
    load = os.getloadavg()[0]
    print(f"cores: {os.cpu_count()}   load average before: {load:.2f}   {args.bots} bots, sport, {args.deals} deals per "
          "orientation, 6 matches per league", file=sys.stderr)
    local: list[tuple[float, int]] = []
    cluster: list[tuple[float, float, int]] = []
    alone: list[float] = []
    matches_per = 6
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        toml = Path(tmp) / "bench.toml"
        toml.write_text(league_text(args.deals, args.bots, Path(tmp)), encoding="utf-8")
        for r in range(args.repeat):
            local.append(run_local(toml, Path(tmp) / f"local{r}.db"))
            print(f"  round {r + 1}: local --concurrency 2: {local[-1][1]} matches in {local[-1][0]:.2f} s", file=sys.stderr)
            cluster.append(run_cluster(toml, Path(tmp) / f"cluster{r}.db"))
            print(f"  round {r + 1}: --cluster local:2: {cluster[-1][2]} matches in {cluster[-1][0]:.2f} s "
                  f"({cluster[-1][1]:.2f} s after start-up)", file=sys.stderr)
            alone += task_overhead(toml, Path(tmp) / f"alone{r}.db")
            print(f"  round {r + 1}: one match at a time: overhead per task {1000 * statistics.median(alone[-matches_per:]):.0f} ms (median)",
                  file=sys.stderr)
    matches = local[0][1]
    rows = [
        ("local, --concurrency 2", [w for w, _ in local]),
        ("--cluster local:2, whole run", [w for w, _, _ in cluster]),
        ("--cluster local:2, after start-up", [m for _, m, _ in cluster]),
    ]
    print(f"{'mode':<34} {'matches':>7} {'best s':>7} {'median s':>8} {'matches/min':>11} {'(median)':>8}")
    for name, walls in rows:
        best, median = min(walls), statistics.median(walls)
        print(f"{name:<34} {matches:>7} {best:>7.2f} {median:>8.2f} {60 * matches / best:>11.1f} {60 * matches / median:>8.1f}")
    start_up = [w - m for w, m, _ in cluster]
    best_over = (min(m for _, m, _ in cluster) - min(w for w, _ in local)) * 2 / matches
    median_over = (statistics.median(m for _, m, _ in cluster) - statistics.median(w for w, _ in local)) * 2 / matches
    print(f"cluster start-up and bot check on every worker: best {min(start_up):.2f} s, median {statistics.median(start_up):.2f} s")
    print(f"cluster overhead per match: best {1000 * best_over:.0f} ms, median {1000 * median_over:.0f} ms "
          "((cluster after start-up − local) × 2 lanes / matches)")
    print(f"cluster overhead per task, one match at a time: min {1000 * min(alone):.0f} ms, median {1000 * statistics.median(alone):.0f} ms "
          f"(submit to result, less the match's own time on the worker; n = {len(alone)}, the first task of each worker "
          "thread includes starting its match process)")


if __name__ == "__main__":
    main()
