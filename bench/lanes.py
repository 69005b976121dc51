"""What lanes buy one match: ``python -m bench.lanes [--deals N] [--games G] [--lanes 1,2] [--cluster local:2] [--repeat R]``.

Plays the same seeded sport match of search_bot.py against greedy_bot.py with ``referee match
-j N`` for each N given, alternated, ``--repeat`` times, each a fresh ``referee`` process (the
command a bot author runs, from start to result), and prints the median wall time of each N and
its speed-up against the first (the baseline of the same run).  The logs are compared too,
timings stripped: the lanes must change nothing but the time.

With ``--cluster ADDRESS`` the same match is also played with ``referee match --cluster ADDRESS``
in the same alternation (its time includes starting a ``local:N`` cluster and its workers).

A one-game sport match has two segments (one per seating), so two lanes is as far as it goes;
``--games`` splits the same deals into more games (more segments).  The machine's load is printed
beside the figures: on a shared machine the ratio is only as good as the cores left free.
Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEARCH = ROOT / "sample_bots" / "search_bot.py"
GREEDY = ROOT / "sample_bots" / "greedy_bot.py"


def stripped(log: Path) -> list[object]:
    from referee.records.records import strip_timings

    return [strip_timings(json.loads(line)) for line in log.read_bytes().splitlines()]


def play(lanes: int, deals: int, games: int | None, work: Path, extra: list[str]) -> tuple[float, Path]:
    log = work / f"j{lanes or 'cluster'}-{time.monotonic_ns()}.jsonl"
    argv = [sys.executable, "-m", "referee", "match", str(SEARCH), str(GREEDY), "--deals", str(deals), "--seed", "1",
            "-q", "--log", str(log), *(["--games", str(games)] if games else []), *extra]
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"bench.lanes: {' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, log


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.lanes", description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=100, help="deals per game (default 100)")
    ap.add_argument("--games", type=int, default=None, help="games (default 1)")
    ap.add_argument("--lanes", default="1,2", help="the -j values, the first the baseline (default 1,2)")
    ap.add_argument("--cluster", default=None, help="also play the match with --cluster ADDRESS (e.g. local:2)")
    ap.add_argument("--repeat", type=int, default=3, help="matches of each, alternated (default 3)")
    args = ap.parse_args()
    lanes = [int(n) for n in args.lanes.split(",")]
    before = os.getloadavg()
    runs: dict[str, list[float]] = {}
    logs: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="bench-lanes-") as tmp:
        work = Path(tmp)
        for _ in range(args.repeat):
            for n in lanes:
                seconds, log = play(n, args.deals, args.games, work, ["-j", str(n)])
                runs.setdefault(f"-j {n}", []).append(seconds)
                logs.setdefault(f"-j {n}", log)
            if args.cluster:
                seconds, log = play(0, args.deals, args.games, work, ["--cluster", args.cluster])
                runs.setdefault(f"--cluster {args.cluster}", []).append(seconds)
                logs.setdefault(f"--cluster {args.cluster}", log)
        base = statistics.median(runs[f"-j {lanes[0]}"])
        same = {name: stripped(log) == stripped(logs[f"-j {lanes[0]}"]) for name, log in logs.items()}
    load = os.getloadavg()
    print(f"sport, search_bot vs greedy_bot, {args.deals} deals x {args.games or 1} game(s), seed 1, "
          f"{args.repeat} runs each alternated; load (1, 5, 15 min) {before[0]:.1f} {before[1]:.1f} {before[2]:.1f} before, "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} after, on {os.cpu_count()} cores")
    print(f"{'lanes':<18} {'seconds (median)':>17} {'all runs':>28} {'speed-up':>9} {'same log':>9}")
    for name, got in runs.items():
        median = statistics.median(got)
        print(f"{name:<18} {median:>17.2f} {' '.join(f'{s:.1f}' for s in got):>28} {base / median:>8.2f}x {str(same[name]):>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
