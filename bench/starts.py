"""What a match's process starts cost: ``python -m bench.starts [--against DIR] [--repeat R]``.

Since round 3 every orientation of a match is played by processes of its own (a process never
sees a deal twice, PROTOCOL.md "Fair play"), so a sport match between two bots starts 8
processes where it started 4.  This measures, for a 16-deal and a 400-deal sport match between
two bots, the processes started and the wall time of the whole match (``run_match`` from the
header to the result: starts, handshakes, play and closing), with Python bots (first_bot.py,
which import json and read stdin: a realistic start) and C bots (echo_first: the cheapest one).

``--against DIR`` measures another checkout in the same run (say ``git worktree add /tmp/before
0acc301``), interleaved, so the before/after ratio comes from one run on a machine in one mood.
Each measurement is one fresh Python process.  Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.referee import OUT, build

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys, time
from pathlib import Path
import trio
import referee
from referee.engine import variant
if (Path(referee.__file__).parent / "matches").is_dir():
    from referee.matches.spec import MatchSpec
    from referee.matches.match import run_match
    from referee.bots.bot import Bot
else:  # a tree from before the folders (round 2: one process per bot, shared by the orientations)
    from referee.match import MatchSpec, run_match
    from referee.table import Bot
bot, deals, work = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
argv = [sys.executable, bot] if bot.endswith(".py") else [bot]
v = variant("sport")
spec = MatchSpec(v, [Bot("A", argv), Bot("B", argv)], 4, v.resolve_options(4, {}), deals=deals, seed=1,
                 log_path=work / "m.jsonl", stderr_dir=work / "m.stderr")
t0 = time.perf_counter()
trio.run(run_match, spec)
seconds = time.perf_counter() - t0
with open(work / "m.jsonl", "rb") as f:
    starts = sum(1 for line in f if line.startswith(b'{"k":"hello"'))
print(json.dumps({"seconds": seconds, "starts": starts}))
"""


def measure(tree: Path, bot: Path, deals: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-starts-") as tmp:
        done = subprocess.run([sys.executable, "-c", CHILD, str(bot), str(deals), tmp], cwd=tree, capture_output=True, text=True,
                              env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, check=False)
        if done.returncode != 0:
            raise SystemExit(f"bench.starts: the match in {tree} failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout.splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.starts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", type=Path, metavar="DIR", help="another checkout to measure beside this one")
    ap.add_argument("--repeat", type=int, default=3, help="measurements of each figure, interleaved (default 3)")
    args = ap.parse_args()
    echo_first, _ = build(OUT)
    bots = {"python": ROOT / "sample_bots" / "first_bot.py", "c": echo_first}
    trees = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    rows: dict[tuple[str, str, int], list[dict[str, float]]] = {}
    for _ in range(args.repeat):
        for deals in (16, 400):
            for kind, bot in bots.items():
                for name, tree in trees.items():
                    rows.setdefault((name, kind, deals), []).append(measure(tree, bot, deals))
    print(f"{'tree':<8} {'bots':<7} {'deals':>5} {'starts':>6} {'seconds (median)':>17} {'vs against':>10}")
    for (name, kind, deals), got in rows.items():
        median = statistics.median(g["seconds"] for g in got)
        base = rows.get(("against", kind, deals))
        ratio = f"{median / statistics.median(g['seconds'] for g in base):.2f}x" if base and name == "this" else ""
        print(f"{name:<8} {kind:<7} {deals:>5} {int(got[0]['starts']):>6} {median:>17.3f} {ratio:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
