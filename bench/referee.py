"""The referee's whole cost per move, beside the raw cost of a pipe round trip to the same bot.

``python -m bench.referee [--deals N] [--repeat R] [--round-trips K]`` builds ``echo_first`` (a
C bot that answers every turn at once with the first legal play) and ``bench/pipe_floor.c`` (a
trivial C driver) into ``bench/out/``, then measures, in the same run, alternating:

* **referee** — a real sport match, echo_first against echo_first (4 bot processes), ``N``
  deals per orientation, played in a fresh Python process by :func:`referee.matches.match.run_match`
  with the match log written as the CLI writes it.  The clock runs over every deal's play
  (from each deal's ``deal_begins`` to its ``deal_ends``, summed: the processes are started and greeted outside it);
  ``µs/move`` = that wall time over the plays made.  It is everything the referee does per
  move: the engine, building and encoding messages, the pipe, reading and decoding the answer,
  validating it, the clock, the log, and the deal starts and ends.
* **floor** — ``pipe_floor``: spawns one echo_first, then ``K`` times writes one realistic
  pre-encoded ``turn`` line and reads the reply line; ``µs/round trip`` = wall time over ``K``.
* **stub** — the same match, pinned, against :class:`StubBot` in the referee's own process (no
  pipes, no processes): the referee's own work per move.
* **strict** — the same match with strict isolation (``--isolation strict``: every bot process
  but the one asked for a play is frozen, by its cgroup's freezer or ``SIGSTOP``; PROTOCOL.md,
  "Fair play"), played right after the default one beside floors of its own; its cost per move
  is, per repeat, its µs/move less the default match's.  ``--no-strict`` leaves it out.

Each is run **pinned** (``taskset -c 0``: the referee or driver and every bot share CPU 0) and
**unpinned** (``taskset -c`` every CPU).  On a 2-core virtual machine an unpinned round trip
mostly waits for the other CPU to wake, so the pinned ratio is the one that says how much the
referee adds.  Each measurement is one subprocess; the repeats are interleaved so that a slow
spell of the machine falls on every figure alike.  Nothing here asserts anything.

``--against DIR`` measures another checkout too (say ``git worktree add /tmp/before REV``): its
matches (strict ones included, unless ``--no-strict``) run in DIR, interleaved with this tree's,
each beside floors measured just before and after it, so a before/after comparison comes from
one run.

``--profile`` instead plays one pinned match under cProfile and prints where the time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import msgspec
import trio

from referee.bots.transport import ScriptedBot
from referee.matches.spec import Isolation

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"


# -- building ------------------------------------------------------------------------------


def build(out: Path) -> tuple[Path, Path]:
    """Compile echo_first and pipe_floor into ``out``; their paths."""
    out.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("bench.referee: no C compiler (cc) on PATH")
    subprocess.run(["make", "-s", "-C", str(ROOT / "sample_bots" / "c"), f"OUT={out}", f"CC={cc}", str(out / "echo_first")], check=True)
    floor = out / "pipe_floor"
    subprocess.run([cc, "-O2", "-std=c99", "-Wall", "-Wextra", "-o", str(floor), str(ROOT / "bench" / "pipe_floor.c")], check=True)
    return out / "echo_first", floor


# -- the referee side (runs in the measuring subprocess) ------------------------------------


class _StubOption(msgspec.Struct):
    tile: tuple[int, int]
    end: str | None


class _StubMessage(msgspec.Struct):
    type: str
    legal: list[_StubOption] = []


class StubBot(ScriptedBot):
    """Stands in for a :class:`~referee.bots.process.BotProcess` running echo_first, inside the
    referee's process: no pipes, no other process.  It answers ``hello`` and each ``turn`` (the
    last line of a write) with the first legal play, as echo_first does, at once: the scripted
    bot of :mod:`referee.bots.transport` with its decoding cut to what echo_first reads."""

    HELLO = b'{"type":"hello","name":"stub","version":"1.0","author":"bench","protocol":1}\n'

    def __init__(self) -> None:
        super().__init__(name="stub")
        self._decode = msgspec.json.Decoder(_StubMessage).decode
        self._encode = msgspec.json.Encoder().encode
        self._out: list[bytes] = []
        # The clock a BotProcess reads (trio's clock's own method, bound once), not the scripted
        # bot's trio.current_time(), which goes through three more calls on every reading.
        self.now = trio.lowlevel.current_clock().current_time  # type: ignore[method-assign]  # a faster clock in place of the method, as a bench may

    @classmethod
    async def launch(cls, nursery: object, bot: object, **kwargs: object) -> StubBot:
        """A :class:`~referee.bots.transport.Launch`: the stub stands in for every bot."""
        return cls()

    def write_nowait(self, data: bytes) -> int:
        msg = self._decode(data[data.rfind(b"\n", 0, len(data) - 1) + 1 :])
        if msg.type == "turn":
            first = msg.legal[0]
            self._out.append(b'{"type":"play","tile":[%d,%d],"end":%s}' % (*first.tile, self._encode(first.end)))
        elif msg.type == "hello":
            self._out.append(self.HELLO[:-1])
        return len(data)

    def line_nowait(self) -> bytes | None:
        return self._out.pop(0) if self._out else None

    def line_within(self, seconds: float) -> bytes | None:
        return self.line_nowait()

    async def send(self, data: bytes) -> None:
        self.write_nowait(data)

    async def read_line(self) -> bytes:
        line = self.line_nowait()
        assert line is not None, "the stub bot was asked to read without a question"
        return line

    def ready_lines(self) -> list[bytes]:
        return []


def play_match(bot: Path | None, deals: int, work: Path, profiler=None, isolation: Isolation = "concurrent") -> dict:
    """Play one sport match in this process; the timed part and the number of plays.

    ``bot`` None plays against :class:`StubBot` (no processes).  A ``profiler`` (a
    :class:`cProfile.Profile`) is enabled from the timed part to the end of the match.  ``isolation`` is the
    match's (``"strict"``: the row also says how the processes were frozen)."""
    import trio

    from referee.bots import process
    from referee.bots.bot import Bot
    from referee.conversation.house import PROCESSES, BotSource
    from referee.engine import variant
    from referee.matches.match import run_match
    from referee.matches.spec import MatchSpec
    from referee.matches.watch import Watch

    # The timed part is every deal's play, summed: since a match is played in segments (each
    # orientation a table of its own, the next one opened while the current one plays), one
    # table's open and another's close no longer bound the play.
    marks = {"seconds": 0.0, "cpu": 0.0}
    frozen_by: set[str] = set()
    pause = process.BotProcess.pause

    def noted_pause(self: process.BotProcess) -> None:
        pause(self)
        frozen_by.add(str(self._frozen_by))

    process.BotProcess.pause = noted_pause  # type: ignore[method-assign]  # the bench notes how processes were frozen

    class Timing(Watch):
        """Times each deal's play, from its start to its end (a lane plays one deal at a time)."""

        def __init__(self) -> None:
            self.begun = (0.0, 0.0)

        def deal_begins(self, game: int, orientation: int, deal: object) -> None:
            if profiler is not None:
                profiler.enable()
            self.begun = time.perf_counter(), time.process_time()

        def deal_ends(self, game: int, orientation: int, record: object) -> None:
            wall, cpu = self.begun
            marks["seconds"] += time.perf_counter() - wall
            marks["cpu"] += time.process_time() - cpu
            if profiler is not None:
                profiler.disable()

    v = variant("sport")
    bots = [Bot("A", [str(bot or "stub")]), Bot("B", [str(bot or "stub")])]
    spec = MatchSpec(v, bots, 4, v.resolve_options(4, {}), deals=deals, seed=1,
                     log_path=work / "match.jsonl", stderr_dir=work / "match.stderr", isolation=isolation)
    bots_from = BotSource(StubBot.launch) if bot is None else PROCESSES
    result = trio.run(partial(run_match, spec, bots_from, Timing()))
    if profiler is not None:
        profiler.disable()
    with open(work / "match.jsonl", "rb") as f:
        plays = sum(1 for line in f if line.startswith(b'{"k":"play"'))
    faults = len(result.summary().faults)
    if faults or result.interrupted:
        raise SystemExit(f"bench.referee: the match had {faults} faults; the figures would be meaningless")
    seconds = marks["seconds"]
    cpu = marks["cpu"]
    if isolation == "strict" and bot is not None and not frozen_by:
        raise SystemExit("bench.referee: the strict match froze no process; the figures would be meaningless")
    return {"seconds": seconds, "plays": plays, "us": seconds / plays * 1e6, "cpu_us": cpu / plays * 1e6,
            "frozen_by": sorted(frozen_by)}


def child(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-referee-") as tmp:
        if args.profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            row = play_match(None if args.stub else args.bot, args.deals, Path(tmp), prof)
            print(f"{row['plays']} plays, {row['us']:.1f} µs/move under cProfile (its overhead included); "
                  "from the first table open to the end of the match\n")
            pstats.Stats(prof).sort_stats(args.sort).print_stats(args.top)
            return 0
        row = play_match(None if args.stub else args.bot, args.deals, Path(tmp), isolation=args.isolation)
    print(json.dumps(row))
    return 0


# -- the measuring parent --------------------------------------------------------------------


def pin(pinned: bool) -> list[str]:
    cpus = "0" if pinned else f"0-{(os.cpu_count() or 1) - 1}"
    return ["taskset", "-c", cpus]


def referee_us(pinned: bool, bot: Path | None, deals: int, root: Path = ROOT, strict: bool = False) -> tuple[float, int]:
    """µs per move and plays of one match in a fresh process; ``bot`` None: stub bots.  ``root``
    is the checkout whose referee plays (the process runs there, so it imports that one);
    ``strict``: with strict isolation (the mechanism that froze the processes is noted in
    :data:`FROZEN_BY`)."""
    who = ["--stub"] if bot is None else ["--bot", str(bot)]
    cmd = [*pin(pinned), sys.executable, "-m", "bench.referee", "--child", *who, "--deals", str(deals)]
    if strict:
        cmd += ["--isolation", "strict"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True, text=True)
    row = json.loads(done.stdout.strip().splitlines()[-1])
    FROZEN_BY.update(row.get("frozen_by", ()))
    if bot is not None and root == ROOT:
        CPU_US[strict].append(row["cpu_us"])
    return row["us"], row["plays"]


#: how the strict matches' processes were frozen ("cgroup", "signal")
FROZEN_BY: set[str] = set()
#: the referee process's CPU µs per move of every match with bots, by strict isolation or not
CPU_US: dict[bool, list[float]] = {False: [], True: []}


def floor_us(pinned: bool, floor: Path, bot: Path, trips: int) -> float:
    done = subprocess.run([*pin(pinned), str(floor), str(bot), str(trips)], check=True, capture_output=True, text=True)
    return float(done.stdout.split()[0])


def summary(xs: list[float]) -> str:
    """median [min–max]"""
    return f"{statistics.median(xs):7.1f} [{min(xs):.1f}–{max(xs):.1f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.referee", description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=40, help="sport deals per orientation, a multiple of 4 (default 40: ~1800 plays)")
    ap.add_argument("--repeat", type=int, default=5, help="measurements of each figure, interleaved (default 5)")
    ap.add_argument("--round-trips", type=int, default=20000, help="timed round trips per floor measurement (default 20000)")
    ap.add_argument("--profile", action="store_true", help="profile one pinned match with cProfile instead")
    ap.add_argument("--sort", default="tottime", help="with --profile: the pstats sort key (default tottime)")
    ap.add_argument("--top", type=int, default=30, help="with --profile: rows printed (default 30)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--bot", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--stub", action="store_true", help="with --profile: profile the match against stub bots")
    ap.add_argument("--isolation", choices=("concurrent", "strict"), default="concurrent", help=argparse.SUPPRESS)
    ap.add_argument("--no-strict", action="store_true", help="leave out the matches with strict isolation")
    ap.add_argument("--against", type=Path, metavar="DIR",
                    help="another checkout of the project (e.g. a git worktree of an older commit): its matches are "
                         "interleaved with this tree's, each beside its own floors, and both are printed")
    args = ap.parse_args(argv)
    if args.deals < 4 or args.deals % 4:
        ap.error("--deals must be a positive multiple of 4 (sport)")
    if args.repeat < 1 or args.round_trips < 1:
        ap.error("--repeat and --round-trips must be positive")
    if args.child:
        return child(args)
    if args.against is not None and not (args.against / "bench" / "referee.py").is_file():
        ap.error(f"--against {args.against}: not a checkout of this project (no bench/referee.py)")
    if shutil.which("taskset") is None:
        raise SystemExit("bench.referee: taskset (util-linux) is needed to pin to one CPU")

    bot, floor = build(OUT)
    if args.profile:
        who = ["--stub"] if args.stub else ["--bot", str(bot)]
        cmd = [*pin(True), sys.executable, "-m", "bench.referee", "--child", "--profile", *who,
               "--deals", str(args.deals), "--sort", args.sort, "--top", str(args.top)]
        return subprocess.run(cmd, cwd=ROOT).returncode

    trees = [("this tree", ROOT)] + ([(f"against {args.against}", args.against.resolve())] if args.against else [])
    print(f"Sport, echo_first vs echo_first (4 C processes), {args.deals} deals × 2 orientations per match; "
          f"floor: {args.round_trips:,} round trips; {args.repeat} interleaved repeats")
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, {platform.release()}")
    print()
    figures = {root: Figures() for _, root in trees}
    plays = 0
    for r in range(args.repeat):
        print(f"  repeat {r + 1}/{args.repeat} …", file=sys.stderr, flush=True)
        order = (True, False) if r % 2 == 0 else (False, True)
        for pinned in order:
            for _, root in trees if (r + pinned) % 2 else trees[::-1]:
                f1 = floor_us(pinned, floor, bot, args.round_trips)
                us, plays = referee_us(pinned, bot, args.deals, root)
                f2 = floor_us(pinned, floor, bot, args.round_trips)
                figures[root].add(pinned, us, (f1 + f2) / 2)  # the floor just before and just after this match
                if not args.no_strict:  # the same match, strict, beside floors of its own
                    strict_us = referee_us(pinned, bot, args.deals, root, strict=True)[0]
                    f3 = floor_us(pinned, floor, bot, args.round_trips)
                    figures[root].add_strict(pinned, strict_us, (f2 + f3) / 2)
                if pinned:
                    figures[root].stub.append(referee_us(True, None, args.deals, root)[0])

    head = f"{'':<10}{'referee µs/move':>26}{'floor µs/round trip':>26}{'ratio':>24}"
    for label, root in trees:
        if len(trees) > 1:
            print(label)
        print(head)
        print("-" * len(head))
        figures[root].print()
        print()
    print(f"Medians [min–max] of {args.repeat} repeats; {plays} plays per match.  µs/move: the wall time of the match's")
    print("deals (from each deal_begins to its deal_ends, summed) over its plays.  Floor: pipe_floor's µs per turn/reply round trip, the")
    print("mean of runs just before and after each match.  Ratio: per repeat, referee ÷ that floor.")
    print("pinned = taskset -c 0 (everything on CPU 0); issue 31 asks for a pinned ratio ≤ 4× and a stub ratio ≤ 2.5×.  stub: the same")
    print("match pinned, with in-process stub bots instead of processes (no pipes): the referee's own work, its")
    print("ratio taken against the pinned floor.")
    if FROZEN_BY:
        how = " and ".join({"cgroup": "the cgroup freezer", "signal": "SIGSTOP/SIGCONT"}.get(f, f) for f in sorted(FROZEN_BY))
        print(f"strict: the same match with --isolation strict (every process frozen but the one on turn, here by {how}),")
        print("played after each default one; cost: per repeat, its µs/move less the default match's.")
        print(f"The referee process's own CPU per move (pinned and unpinned, this tree): {summary(CPU_US[False]).strip()} µs by default, "
              f"{summary(CPU_US[True]).strip()} µs strict.")
    return 0


class Figures:
    """One tree's measurements over the repeats."""

    def __init__(self) -> None:
        self.ref: dict[bool, list[float]] = {True: [], False: []}
        self.floor: dict[bool, list[float]] = {True: [], False: []}
        self.stub: list[float] = []
        self.strict: dict[bool, list[float]] = {True: [], False: []}
        self.strict_floor: dict[bool, list[float]] = {True: [], False: []}

    def add(self, pinned: bool, us: float, floor: float) -> None:
        self.ref[pinned].append(us)
        self.floor[pinned].append(floor)

    def add_strict(self, pinned: bool, us: float, floor: float) -> None:
        self.strict[pinned].append(us)
        self.strict_floor[pinned].append(floor)

    def print(self) -> None:
        for pinned in (True, False):
            label = "pinned" if pinned else "unpinned"
            rat = [u / f for u, f in zip(self.ref[pinned], self.floor[pinned])]
            print(f"{label:<10}{summary(self.ref[pinned]):>26}{summary(self.floor[pinned]):>26}"
                  f"{f'{statistics.median(rat):5.1f}× [{min(rat):.1f}–{max(rat):.1f}]':>24}")
        srat = [s / f for s, f in zip(self.stub, self.floor[True])]
        print(f"{'stub':<10}{summary(self.stub):>26}{'(no processes)':>26}"
              f"{f'{statistics.median(srat):5.1f}× [{min(srat):.1f}–{max(srat):.1f}]':>24}")
        for pinned in (True, False):
            if not self.strict[pinned]:
                continue
            label = "strict, pinned" if pinned else "strict, unpinned"
            rat = [u / f for u, f in zip(self.strict[pinned], self.strict_floor[pinned])]
            cost = [s - u for s, u in zip(self.strict[pinned], self.ref[pinned])]
            print(f"{label:<18}{summary(self.strict[pinned]):>18}{summary(self.strict_floor[pinned]):>26}"
                  f"{f'{statistics.median(rat):5.1f}× [{min(rat):.1f}–{max(rat):.1f}]':>24}"
                  f"   cost {statistics.median(cost):+.1f} µs/move [{min(cost):+.1f}–{max(cost):+.1f}]")


if __name__ == "__main__":
    raise SystemExit(main())
