"""Whether the referee's clock can be trusted under load: spurious time faults of instant bots.

``python -m bench.timing`` builds ``echo_first`` (the C bot that answers every turn at once with
the first legal play) into ``bench/out/`` and plays sport matches of four of them with the real
command line (``referee match``, each match its own process with its four bots), ``k`` matches
per core at once, for each move limit.  An instant bot never deserves a timeout: every
``timeout`` fault it gets is the referee's (or the machine's) doing, a spurious fault.

For each cell it prints the moves played, the spurious faults and their rate per 10,000 moves,
and the referee's own latency: for every turn, the time from the ``turn`` written (the log's
``out`` record's time, stamped just before the write) to the bot's line read (its ``in``
record's time), the very interval the clock judges.  echo_first's own time in it is a few
microseconds of parsing (unknown per move, so nothing is subtracted): the rest is the pipe,
the wake-ups of both processes and the referee's scheduling.  p50, p99, p99.9 and the worst, in
milliseconds.

The **baseline**, measured in the same run before the cells (and again after them), is one match
alone at the longest limit: the latency the machine gives one referee at the moment.  Each
cell's p99 is shown as a ratio to the baseline's.  The machine's load average is printed with
every cell: other work on the machine is part of what is measured.

Default: 1, 2 and 4 matches per core, limits 20, 50 and 100 ms, 40 deals a game (a few minutes on
2 cores).  ``--full`` plays 100 deals a game (the issue's "8 matches of 100 sport deals").
``--margin MS`` plays every cell with ``--time-margin MS`` (a second table, beside the first,
with ``--margin 0,MS``).  Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.referee import OUT, build

ROOT = Path(__file__).resolve().parent.parent

_T = re.compile(rb'"seat":(-?\d+),"t":([0-9.]+)')


@dataclass
class Cell:
    """One measurement: ``matches`` at once, each move limited to ``limit_ms``."""

    per_core: float
    matches: int
    limit_ms: int
    margin_ms: float
    moves: int = 0
    timeouts: int = 0
    other_faults: int = 0
    latencies: list[float] = field(default_factory=list)  # ms
    #: each timeout's detail, as the fault record says it (the referee's own wait for a CPU, if any)
    details: list[str] = field(default_factory=list)
    wall: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)  # the 1-minute load average before and after

    def rate(self) -> float:
        return 1e4 * self.timeouts / max(1, self.moves)

    def quantile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]



def _fields(line: bytes) -> tuple[bytes, bytes]:
    """An ``out`` or ``in`` record's seat and time (every such record has both)."""
    found = _T.search(line)
    assert found is not None, line
    seat, t = found.groups()
    return seat, t

def read_log(path: Path, cell: Cell) -> None:
    """Add a match log's turns, latencies and faults to ``cell``.  Lines are scanned, not
    decoded: an ``out`` record holding a ``turn`` opens a turn of its seat, the seat's next ``in``
    record ends it (what else a seat writes before its answer counts from there too: an instant
    bot writes nothing else)."""
    asked: dict[int, float] = {}
    with open(path, "rb") as f:
        for line in f:
            kind = line[6:12]
            if kind.startswith(b"out"):
                if b'"type":"turn"' in line:
                    seat, t = _fields(line)
                    asked[int(seat)] = float(t)
            elif kind.startswith(b"in"):
                seat, t = _fields(line)
                began = asked.pop(int(seat), None)
                if began is not None:
                    cell.latencies.append((float(t) - began) * 1000)
                    cell.moves += 1
            elif kind.startswith(b"fault"):
                if b'"kind":"timeout"' in line:
                    cell.timeouts += 1
                    cell.details.append(json.loads(line).get("detail", ""))
                    cell.moves += 1  # a turn that got no line in time
                else:
                    cell.other_faults += 1


def play_cell(bot: Path, cell: Cell, deals: int, work: Path, seed: int) -> Cell:
    """Play ``cell.matches`` matches at once, each in its own ``referee match`` process."""
    procs = []
    logs = []
    cell.load = (os.getloadavg()[0], 0.0)
    began = time.perf_counter()
    for i in range(cell.matches):
        log = work / f"m{cell.matches}-{cell.limit_ms}-{cell.margin_ms:g}-{i}.jsonl"
        logs.append(log)
        argv = [sys.executable, "-m", "referee", "match", str(bot), str(bot),
                "--deals", str(deals), "--seed", str(seed + i), "--move-time", f"{cell.limit_ms / 1000:g}",
                "--max-faults", "1000000", "--log", str(log), "--overwrite", "-q"]
        if cell.margin_ms:
            argv += ["--time-margin", f"{cell.margin_ms:g}"]
        procs.append(subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"bench.timing: a match failed (exit {p.returncode}): {err.decode(errors='replace').strip()[-400:]}")
    cell.wall = time.perf_counter() - began
    cell.load = (cell.load[0], os.getloadavg()[0])
    for log in logs:
        read_log(log, cell)
        log.unlink()
    return cell


def show(cells: list[Cell], baseline: list[Cell]) -> None:
    base = sorted(x for b in baseline for x in b.latencies)
    base_p99 = base[min(len(base) - 1, int(0.99 * len(base)))] if base else float("nan")
    print(f"{'per core':>8} {'matches':>7} {'limit':>6} {'margin':>6} {'moves':>7} {'timeouts':>8} {'/10k':>7} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'p99.9 ms':>8} {'max ms':>7} {'p99÷base':>8} {'load':>10} {'wall s':>6}")
    for c in [*baseline[:1], *cells, *baseline[1:]]:
        label = "base" if c in baseline else f"{c.per_core:g}"
        print(f"{label:>8} {c.matches:>7} {c.limit_ms:>4}ms {c.margin_ms:>4g}ms {c.moves:>7} {c.timeouts:>8} {c.rate():>7.1f} "
              f"{c.quantile(0.5):>7.2f} {c.quantile(0.99):>7.2f} {c.quantile(0.999):>8.2f} {max(c.latencies, default=0):>7.1f} "
              f"{c.quantile(0.99) / base_p99:>8.1f} {c.load[0]:>4.1f}→{c.load[1]:<4.1f} {c.wall:>6.1f}")
    for c in [*baseline, *cells]:
        for detail in c.details:
            print(f"  timeout at {c.per_core:g} per core, {c.limit_ms} ms, margin {c.margin_ms:g} ms: {detail}")
    others = sum(c.other_faults for c in [*cells, *baseline])
    if others:
        print(f"(and {others} faults that are not timeouts: the figures are suspect)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.timing", description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-core", default="1,2,4", help="matches per core at once, comma-separated (default 1,2,4)")
    ap.add_argument("--limits", default="20,50,100", help="move limits in ms, comma-separated (default 20,50,100)")
    ap.add_argument("--margin", default="0", help="--time-margin of every match in ms; several, comma-separated, for a table each")
    ap.add_argument("--deals", type=int, default=None, help="deals per game, a multiple of 4 (default 40; --full: 100)")
    ap.add_argument("--full", action="store_true", help="the full run: 100 deals a game")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    deals = args.deals or (100 if args.full else 40)
    cores = os.cpu_count() or 1
    per_core = [float(x) for x in args.per_core.split(",")]
    limits = [int(x) for x in args.limits.split(",")]
    margins = [float(x) for x in args.margin.split(",")]
    bot, _ = build(OUT)
    print(f"bench.timing: {cores} cores, sport, echo_first against echo_first (4 processes) a match, {deals} deals a game × 2 orientations, "
          f"load average {os.getloadavg()[0]:.1f} at the start\n")
    with tempfile.TemporaryDirectory(prefix="bench-timing-") as tmp:
        work = Path(tmp)
        top = max(limits)
        baseline = [play_cell(bot, Cell(0, 1, top, 0.0), deals, work, args.seed)]
        cells = []
        for margin in margins:
            for k in per_core:
                for limit in limits:
                    cells.append(play_cell(bot, Cell(k, max(1, round(k * cores)), limit, margin), deals, work, args.seed))
                    print(f"  … {cells[-1].matches} matches at {limit} ms (margin {margin:g} ms): {cells[-1].timeouts} timeouts "
                          f"in {cells[-1].moves} moves", file=sys.stderr)
        baseline.append(play_cell(bot, Cell(0, 1, top, 0.0), deals, work, args.seed))
    show(cells, baseline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
