"""What the sandbox costs: a bot process's start-up, a move, and a whole match, with and without.

``python -m bench.sandbox [--repeat R] [--round-trips K] [--deals N]`` measures, in one run,
alternating plain and sandboxed so that a slow spell of the machine falls on both alike:

* **start-up** — from :meth:`BotProcess.start` to the first line read back, for two bots: ``cat``
  (the cost of the process and of the sandbox alone) and a Python echo loop (an interpreter
  starting, as a Python bot does); and the **teardown**, :meth:`BotProcess.kill` until the
  process is reaped and its cgroup removed.
* **per move** — ``K`` round trips through the running Python echo bot: one realistic ``turn``
  line written, the line read back; µs per round trip.  The pipes are the same inside the
  sandbox, so this says whether anything else is in the way.
* **match** — a sport match, greedy_bot against first_bot (4 processes), ``N`` deals per
  orientation, through :func:`referee.matches.match.run_match` as the CLI plays it; wall seconds and
  µs per move, start-ups included.

Figures are medians over ``R`` repeats; the last column is sandboxed ÷ plain.  Nothing here
asserts anything.  Needs bubblewrap (``apt-get install bubblewrap``).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.process import BotProcess
from referee.bots.sandbox import SandboxUnavailable, find_bwrap
from referee.bots.spawn import Confinement
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

ROOT = Path(__file__).resolve().parent.parent
ECHO = "import sys\nfor line in sys.stdin: sys.stdout.write(line); sys.stdout.flush()\n"
TURN = (b'{"type":"turn","game_number":0,"deal_number":3,"seat":1,"hand":[[0,3],[1,4],[2,2],[3,6],[5,5]],'
        b'"ends":{"left":4,"right":6},"legal":[{"tile":[1,4],"end":"left"},{"tile":[3,6],"end":"right"}],'
        b'"bazaar":0,"time_ms":5000,"bank_ms":null}\n')
MODES = ("plain", "sandbox")


async def start_and_echo(argv: list[str], sandbox: bool, scratch: Path, round_trips: int) -> tuple[float, float, float]:
    """Seconds to the first echo, µs per round trip afterwards, seconds to kill."""
    async with trio.open_nursery() as nursery:
        t0 = time.perf_counter()
        bot = await BotProcess.start(nursery, argv, name="echo", stderr_path=scratch / "echo.stderr.log",
                                     confinement=Confinement(sandbox=sandbox))
        await bot.send(b"hello\n")
        await bot.read_line()
        started = time.perf_counter() - t0
        per_move = 0.0
        if round_trips:
            t1 = time.perf_counter()
            for _ in range(round_trips):
                await bot.send(TURN)
                await bot.read_line()
            per_move = (time.perf_counter() - t1) / round_trips * 1e6
        t2 = time.perf_counter()
        await bot.kill()
        return started, per_move, time.perf_counter() - t2


async def match(sandbox: bool, scratch: Path, deals: int) -> tuple[float, float]:
    """Wall seconds of a sport match and µs per move."""
    bots = [Bot(name, [sys.executable, str(ROOT / "sample_bots" / script)], Confinement(sandbox=sandbox))
            for name, script in (("greedy", "greedy_bot.py"), ("first", "first_bot.py"))]
    v = variant("sport")
    log = scratch / f"match-{sandbox}.jsonl"
    spec = MatchSpec(v, bots, 4, v.resolve_options(4), deals=deals, seed=1, tc=TimeControl(startup=30, move=10),
                     log_path=log, stderr_dir=scratch / f"match-{sandbox}.stderr")
    t0 = time.perf_counter()
    await run_match(spec)
    wall = time.perf_counter() - t0
    moves = sum(1 for line in log.read_text().splitlines() if '"k":"play"' in line.replace(" ", ""))
    return wall, wall / max(moves, 1) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sandbox", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="measurements of each figure, interleaved (default 7)")
    ap.add_argument("--round-trips", type=int, default=5000, help="round trips per per-move measurement (default 5000)")
    ap.add_argument("--deals", type=int, default=8, help="sport deals per orientation in the match (default 8)")
    args = ap.parse_args(argv)
    try:
        find_bwrap()
    except SandboxUnavailable as exc:
        raise SystemExit(f"bench.sandbox: {exc}") from None

    figures: dict[tuple[str, str], list[float]] = {}

    def add(row: str, mode: str, value: float) -> None:
        figures.setdefault((row, mode), []).append(value)

    cat = ["/bin/cat"]
    python = [sys.executable, "-S", "-c", ECHO]

    async def run_all(scratch: Path) -> None:
        for _ in range(args.repeat):
            for mode in MODES:
                sandbox = mode == "sandbox"
                started, _, killed = await start_and_echo(cat, sandbox, scratch, 0)
                add("start-up, cat (ms)", mode, started * 1e3)
                add("teardown, cat (ms)", mode, killed * 1e3)
                started, per_move, _ = await start_and_echo(python, sandbox, scratch, args.round_trips)
                add("start-up, python (ms)", mode, started * 1e3)
                add("round trip, python echo (µs)", mode, per_move)
                wall, per = await match(sandbox, scratch, args.deals)
                add(f"match, {args.deals * 2} deals (s)", mode, wall)
                add("match, per move incl. start-ups (µs)", mode, per)

    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        trio.run(run_all, Path(tmp))

    who = "root: a uid per bot" if os.geteuid() == 0 else "an ordinary user: a user namespace per bot"
    print(f"bench.sandbox — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, as {who}; "
          f"median of {args.repeat}, interleaved")
    rows = list(dict.fromkeys(row for row, _ in figures))
    width = max(len(r) for r in rows)
    print(f"{'':<{width}}  {'plain':>10}  {'sandbox':>10}  {'ratio':>6}")
    for row in rows:
        plain, boxed = (statistics.median(figures[(row, m)]) for m in MODES)
        print(f"{row:<{width}}  {plain:>10.2f}  {boxed:>10.2f}  {boxed / plain if plain else float('nan'):>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
