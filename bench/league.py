"""League throughput: the same league at ``--concurrency 1`` and ``2``, matches per minute and the speed-up.

    python -m bench.league                     # options: --deals N, --repeat N, --no-affinity, --in-process, --tables
    python -m bench.league --baseline DIR      # this tree against another checkout, same league, alternated

The league is ``tournaments/example.toml``'s: the four sample bots (random_bot.js is replaced by
random_bot.py with another seed when node is missing) at sport, with ``--deals`` deals per
orientation (default 48).  Every run starts from a fresh database in a temporary directory, so
every run plays all 6 pairings.  ``--repeat`` (default 5) alternates the runs (1, 2, 1, 2, ...);
the figures come from the best run of each (the one least disturbed by other work), with the
median beside them, because a shared machine's speed drifts by tens of percent.
``--no-affinity`` adds concurrency 2 with the lanes free to use every CPU (the league's
``--no-affinity``; by default each lane keeps to a CPU of its own).  ``--in-process`` adds the
same two runs with every match in the league's own trio loop instead of worker processes.
``--tables`` plays a league of 3-bot tables instead: the same four bots at mexican_train for
three, every three of them at a table (4 tables, each 7 rounds in each of 3 rotations), so the
figures are tables per minute.

``--baseline DIR`` measures a change instead: the same league played by ``referee league run``
with this tree's code and with the checkout in ``DIR`` (any version with the same command line),
alternately, ``--repeat`` times each at ``--concurrency 2``; it prints the best and median wall
times of each and their ratio, so both see the same machine, however busy.

Before each round it also measures the machine's *two-core ceiling*: the throughput of two
busy-loop processes over one.  On an idle 2-core machine that is 2.0×; when other work shares
the cores it is less, and no speed-up can exceed it.

Nothing here is a test and nothing asserts a timing.  See bench/README.md, "League throughput".
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sample_bots"


HEAD = """
name = "bench"
seed = 1
[game]
variant = "sport"
deals = {deals}
[clock]
startup = 10.0
move = 2.0
"""

TABLES_HEAD = """
name = "bench-tables"
seed = 1
[game]
variant = "mexican_train"
players = 3
bots = 3
[clock]
startup = 10.0
move = 2.0
"""


def bot(name: str, command: Path, seed: int | None = None) -> str:
    return f'[[bot]]\nname = "{name}"\ncommand = "{command}"\n' + (f'env = {{ BOT_SEED = "{seed}" }}\n' if seed is not None else "")


def league_text(deals: int, kind: str, tmp: Path, tables: bool = False) -> str:
    """The example league's bots (``python``), or the C sample bots built into ``tmp`` (``c``);
    with ``tables``, at 3-bot mexican_train tables."""
    if kind == "c":
        out = tmp / "c"
        out.mkdir()
        done = subprocess.run(["make", "-s", "-C", str(BOTS / "c"), f"OUT={out}"], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"bench.league: building the C bots failed:\n{done.stderr}")
        bots = [bot("c-first", out / "echo_first"), *(bot(f"c-random-{k}", out / "random_bot", k) for k in (1, 2, 3))]
    else:
        js = shutil.which("node") is not None
        bots = [bot("greedy", BOTS / "greedy_bot.py"), bot("first", BOTS / "first_bot.py"), bot("random", BOTS / "random_bot.py", 7),
                bot("random-js", BOTS / "random_bot.js", 7) if js else bot("random-2", BOTS / "random_bot.py", 8)]
    return (TABLES_HEAD if tables else HEAD.format(deals=deals)) + "".join(bots)


BURN = "s = 0\nfor i in range(4_000_000):\n    s += i * i\n"


def ceiling() -> float:
    """What two cores give right now: the throughput of 2 busy-loop processes over 1 (2.0 on an
    idle 2-core machine; less when other work shares the cores)."""
    def wall(k: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(k)]
        for p in procs:
            p.wait()
        return time.perf_counter() - t0

    one = wall(1)
    two = wall(2)
    return 2 * one / two


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent not idle since boot (``/proc/stat``): unlike this
    process's children's times, it counts the bots in the sandbox too (bubblewrap's children are
    not reaped by the referee), and other work on the machine."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return float("nan")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def run_once(toml: Path, db: Path, concurrency: int, isolate: bool, affinity: bool = True) -> tuple[float, int, float, float]:
    """Wall seconds, matches played, CPU seconds of this process and its children, and the
    cores the machine kept busy meanwhile (:func:`busy_seconds` over the wall time)."""
    from tournaments.config import load_league
    from tournaments.runner import run_league

    league = load_league(toml, db)
    before = os.times()
    busy = busy_seconds()
    t0 = time.perf_counter()
    report = trio.run(lambda: run_league(league, concurrency, isolate=isolate, affinity=affinity))
    wall = time.perf_counter() - t0
    busy = busy_seconds() - busy
    after = os.times()
    cpu = sum(after[i] - before[i] for i in range(4))
    if report.failed:
        raise SystemExit(f"bench.league: {len(report.failed)} matches failed, e.g. {report.failed[0]}")
    return wall, report.played, cpu, busy / wall


def run_cli(tree: Path, toml: Path, db: Path, concurrency: int) -> tuple[float, float]:
    """Wall and CPU seconds (the run and every process it waited for: workers, bots) of
    ``referee league run`` with the code of ``tree`` (a checkout's root)."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(toml), "--db", str(db), "-j", str(concurrency), "-q"],
                          cwd=tree, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bench.league: the league run with {tree} failed:\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(args: argparse.Namespace) -> None:
    """``--baseline``: this tree against another checkout on the same league, alternated."""
    baseline = Path(args.baseline).resolve()
    if not (baseline / "tournaments" / "runner.py").is_file():
        raise SystemExit(f"bench.league: {baseline} is not a checkout of the referee (no tournaments/runner.py)")
    trees = {"this tree": ROOT, "baseline": baseline}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    cpus: dict[str, list[float]] = {name: [] for name in trees}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cores: {os.cpu_count()}   load average before: {load:.2f}   baseline: {baseline}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="bench-league-") as tmp:
        toml = Path(tmp) / "bench.toml"
        toml.write_text(league_text(args.deals, args.bots, Path(tmp)), encoding="utf-8")
        for r in range(args.repeat):
            for name, tree in (trees.items() if r % 2 == 0 else reversed(trees.items())):
                wall, cpu = run_cli(tree, toml, Path(tmp) / f"{name.replace(' ', '-')}-{r}.db", 2)
                walls[name].append(wall)
                cpus[name].append(cpu)
                print(f"  {name}: {wall:.2f} s, {cpu:.2f} s of CPU", file=sys.stderr)
    print(f"{'code':<10} {'best s':>7} {'median s':>8} {'CPU s (median)':>14}   (sport, {args.deals} deals per orientation, "
          f"6 matches, --concurrency 2)")
    for name in trees:
        print(f"{name:<10} {min(walls[name]):>7.2f} {statistics.median(walls[name]):>8.2f} {statistics.median(cpus[name]):>14.2f}")
    this, base = "this tree", "baseline"
    print(f"this tree / baseline: wall best {min(walls[this]) / min(walls[base]):.3f}, median "
          f"{statistics.median(walls[this]) / statistics.median(walls[base]):.3f}; CPU median "
          f"{statistics.median(cpus[this]) / statistics.median(cpus[base]):.3f} (below 1: less)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.league", description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=48,
                    help="deals per orientation (sport: a multiple of 4; default 48: shorter matches mostly measure "
                         "starting four bot processes at once, which already uses both cores at concurrency 1)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each concurrency, alternated (default 5)")
    ap.add_argument("--bots", choices=("python", "c"), default="python",
                    help="python: the example league's bots (default); c: the C sample bots (echo_first and random_bot with 3 seeds)")
    ap.add_argument("--in-process", action="store_true", help="also run concurrency 1 and 2 inside one trio loop (no worker processes)")
    ap.add_argument("--no-affinity", action="store_true", help="also run concurrency 2 with the lanes not pinned to CPUs of their own (--no-affinity)")
    ap.add_argument("--tables", action="store_true", help="a league of 3-bot mexican_train tables (4 tables) instead of sport pairings")
    ap.add_argument("--baseline", metavar="DIR", help="compare this tree with the checkout in DIR on the same league, alternated")
    args = ap.parse_args(argv)
    if args.baseline:
        compare(args)
        return

    modes = [("worker process per lane", 1, True, True), ("worker process per lane", 2, True, True)]
    if args.no_affinity:
        modes.append(("  lanes not pinned", 2, True, False))
    if args.in_process:
        modes += [("all in one trio loop", 1, False, True), ("all in one trio loop", 2, False, True)]
    times: dict[int, list[tuple[float, int, float, float]]] = {i: [] for i in range(len(modes))}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    what = "mexican_train, 3-bot tables, 4 tables" if args.tables else f"sport, {args.deals} deals per orientation, 6 matches"
    print(f"cores: {os.cpu_count()}   load average before: {load:.2f}   {args.bots} bots, {what} per league", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="bench-league-") as tmp:
        toml = Path(tmp) / "bench.toml"
        toml.write_text(league_text(args.deals, args.bots, Path(tmp), args.tables), encoding="utf-8")
        run = 0
        ceilings = []
        for _ in range(args.repeat):
            ceilings.append(ceiling())
            print(f"  two-core ceiling now: {ceilings[-1]:.2f}×", file=sys.stderr)
            for i, (_, conc, isolate, affinity) in enumerate(modes):
                run += 1
                db = Path(tmp) / f"run{run}.db"
                wall, played, cpu, cores = run_once(toml, db, conc, isolate, affinity)
                times[i].append((wall, played, cpu, cores))
                print(f"  run {run}: concurrency {conc} ({modes[i][0]}): {played} matches in {wall:.2f} s", file=sys.stderr)

    ceil_best, ceil_median = max(ceilings), statistics.median(ceilings)
    print(f"{'mode':<24} {'conc.':>5} {'matches':>7} {'best s':>7} {'median s':>8} {'matches/min':>11} {'CPU s':>6} {'cores':>5} "
          f"{'speed-up':>8} {'(median)':>8} {'of ceiling':>10} {'(median)':>8}")
    base: dict[bool, tuple[float, float]] = {}
    busy_one: dict[bool, float] = {}
    for i, (name, conc, isolate, _) in enumerate(modes):
        best = min(w for w, _, _, _ in times[i])
        median = statistics.median(w for w, _, _, _ in times[i])
        played = times[i][0][1]
        cpu = statistics.median(c for _, _, c, _ in times[i])
        cores = statistics.median(b for _, _, _, b in times[i])
        if conc == 1:
            busy_one.setdefault(isolate, cores)
        base.setdefault(isolate, (best, median))  # concurrency 1 of the same kind comes first
        up, up_median = base[isolate][0] / best, base[isolate][1] / median
        share = "" if conc == 1 else f"{100 * up / ceil_best:>9.0f}% {100 * up_median / ceil_median:>7.0f}%"
        print(f"{name:<24} {conc:>5} {played:>7} {best:>7.2f} {median:>8.2f} {60 * played / best:>11.1f} {cpu:>6.1f} {cores:>5.2f} "
              f"{up:>7.2f}× {up_median:>7.2f}× {share}")
    print(f"two-core ceiling (2 busy loops vs 1): best {ceil_best:.2f}×, median {ceil_median:.2f}× "
          f"— no speed-up can beat what the machine gives at the time; 'of ceiling': the speed-up over it, best to best and median to median")
    print("matches/min and speed-up from the best run of each (the least disturbed); median in brackets; cores: the machine's busy")
    print("CPU time over the wall time (median), bots in the sandbox and other work included")
    if True in busy_one and busy_one[True] > 0:
        cpus = len(os.sched_getaffinity(0))
        print(f"at concurrency 1 the league already kept {busy_one[True]:.2f} cores busy: with the same work, {cpus} lanes "
              f"can gain at most {cpus / busy_one[True]:.2f}× on {cpus} CPUs")


if __name__ == "__main__":
    main()
