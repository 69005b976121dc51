"""The referee's memory over a long match: ``python -m bench.memory [--deals N] [--every K] [--verify]``.

Plays one sport match of ``N`` deals per orientation (two bots: two orientations; default
5,000: 10,000 deals played, ``--deals 50000`` plays 100,000) in this process against :class:`bench.referee.StubBot` (no bot
processes, so only the referee's own memory is measured), with the match log written as the CLI
writes it.  Every ``K`` deals per orientation it prints the process's resident memory (VmRSS),
its peak so far (VmHWM), and the Python heap traced by :mod:`tracemalloc` (started after the
imports) with its peak so far: a buffer that fills and empties between two samples shows in the
peaks, not in the samples.  Then, from the same run: the growth per deal over the second half of
the match (where start-up effects are over), the heap at the end against the heap at the first
sample as a ratio, and whether that is flat (under 16 bytes a deal).  At the end, the same after
writing the ``--json`` file and printing the report as the CLI does (both streamed from the
match's spools), and with ``--verify`` the peaks of ``referee verify`` of the log.  Nothing here
asserts anything.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import tracemalloc
from functools import partial
from pathlib import Path

#: Growth per deal below which the heap counts as flat.
FLAT_BYTES = 16


def rss_mb(field: str = "VmRSS") -> float:
    """The process's resident memory (``VmHWM``: its peak so far), in MB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=5_000, help="deals per orientation (a multiple of 4)")
    parser.add_argument("--every", type=int, default=500, help="deals per orientation between samples")
    parser.add_argument("--verify", action="store_true", help="then verify the log, and print verify's peaks")
    args = parser.parse_args(argv)

    import trio
    from rich.console import Console

    from bench.referee import StubBot
    from referee.audit.verify import verify
    from referee.bots.bot import Bot
    from referee.commands.app import TABLE_ROWS
    from referee.conversation.house import BotSource
    from referee.engine import variant
    from referee.matches.match import run_match
    from referee.matches.report import render
    from referee.matches.results import write_json
    from referee.matches.spec import MatchSpec
    from referee.matches.watch import watching

    samples: list[tuple[int, float, float]] = []
    played = 0

    def heap_mb() -> float:
        return tracemalloc.get_traced_memory()[0] / 2**20

    def peaks() -> str:
        return f"peak RSS {rss_mb('VmHWM'):8.1f} MB   peak heap {tracemalloc.get_traced_memory()[1] / 2**20:8.3f} MB"

    def progress(_desc: str, advance: int) -> None:
        nonlocal played
        played += advance
        if played % (2 * args.every) == 0:
            gc.collect()
            samples.append((played, rss_mb(), heap_mb()))
            print(f"{played:>8} deals   RSS {samples[-1][1]:8.1f} MB   Python heap {samples[-1][2]:8.3f} MB   {peaks()}", flush=True)

    v = variant("sport")
    with tempfile.TemporaryDirectory() as work:
        spec = MatchSpec(v, [Bot("A", ["stub"]), Bot("B", ["stub"])], 4, v.resolve_options(4, {}), deals=args.deals, seed=1,
                         log_path=Path(work) / "match.jsonl", stderr_dir=Path(work) / "match.stderr")
        tracemalloc.start()
        gc.collect()
        print(f"{0:>8} deals   RSS {rss_mb():8.1f} MB   Python heap {heap_mb():8.3f} MB")
        with trio.run(partial(run_match, spec, BotSource(StubBot.launch), watching(progress))) as result:
            print(f"the match, at its end: {peaks()}")
            tracemalloc.reset_peak()
            write_json(Path(work) / "result.json", result)
            with open(os.devnull, "w") as null:  # as the CLI prints it (not into a string that grows with the rows)
                render(result.summary(), result.deals, result.games, Console(file=null, width=120), limit=TABLE_ROWS)
            gc.collect()
            print(f"after --json and the report   RSS {rss_mb():8.1f} MB   Python heap {heap_mb():8.3f} MB"
                  f"   (peak while writing them {tracemalloc.get_traced_memory()[1] / 2**20:.3f} MB)")
        if args.verify:
            gc.collect()
            tracemalloc.reset_peak()
            verify(Path(work) / "match.jsonl")
            print(f"verify of its log: {peaks()}   (the peak RSS is the whole process's, the match's included)")
    half = [s for s in samples if s[0] >= samples[-1][0] // 2]
    if len(half) >= 2:
        (d0, r0, h0), (d1, r1, h1) = half[0], half[-1]
        per_deal = (h1 - h0) * 2**20 / (d1 - d0)
        print(f"growth per deal over deals {d0}..{d1}: RSS {(r1 - r0) * 2**20 / (d1 - d0):.0f} bytes, "
              f"Python heap {per_deal:.1f} bytes")
        (first, _, hf), (last, _, hl) = samples[0], samples[-1]
        print(f"Python heap after {last} deals / after {first}: {hl / hf:.3f}  "
              + ("(flat)" if per_deal < FLAT_BYTES else "(NOT flat)"))  # a heap that shrank is flat too
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
