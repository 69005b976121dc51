"""The real pairs behind ``python -m bench.sprt``: ``python -m bench.sprt_collect [--quick]``.

Plays the matches of :data:`MATCHES` with the referee (the sample bots, ``random_bot.py`` with a
fixed seed, so every match is the same each time) and writes, per match, every finished pair's
margins of its first bot against the field, one per orientation, to ``bench/sprt_pairs.json``.
The sample bots are deterministic given their seed and the deals, so the file comes out byte for
byte the same on every machine; it is committed, so the simulation needs no bots.
``--quick`` plays a tenth of each match and writes to ``bench/out/`` instead (a smoke run);
``--out FILE`` writes elsewhere (to compare a fresh collection with the committed one).  A match
with a fault (a bot too slow on a loaded machine, say) is refused: its pairs would not be the
bots' play, nor the same on every machine; the generous ``--move-time`` makes that unlikely.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIRS = Path(__file__).resolve().parent / "sprt_pairs.json"

GREEDY = "sample_bots/greedy_bot.py"
FIRST = "sample_bots/first_bot.py"
RANDOM = "python3 sample_bots/random_bot.py 7"

#: (name, the referee's arguments): the first bot's margins against the field are kept.
MATCHES: list[tuple[str, list[str]]] = [
    ("sport, greedy vs random", [GREEDY, RANDOM, "--variant", "sport", "--deals", "2000", "--seed", "1"]),
    ("sport, first vs random", [FIRST, RANDOM, "--variant", "sport", "--deals", "2000", "--seed", "1"]),
    ("kozel, greedy vs random", [GREEDY, RANDOM, "--variant", "kozel", "--games", "1000", "--seed", "1"]),
    ("kozel, first vs random", [FIRST, RANDOM, "--variant", "kozel", "--games", "1000", "--seed", "1"]),
    ("sea_kozel, greedy vs random", [GREEDY, RANDOM, "--variant", "sea_kozel", "--games", "1000", "--seed", "1"]),
    ("draw, 3 bots: greedy vs first and random", [GREEDY, FIRST, RANDOM, "--variant", "draw", "--games", "1000", "--seed", "1"]),
]


def command_line(args: list[str]) -> str:
    return "referee match " + " ".join(shlex.quote(a) for a in args)


def pairs_of(result: dict) -> list[list[float]]:
    """Per finished pair (board), the first bot's margin against the field in each orientation:
    its net less the mean net of the others (:func:`referee.stats.figures.board_margins`)."""
    from referee.stats.figures import board_margins

    n = len(result["orientations"])
    by_unit: dict[tuple[int, int], dict[int, list[int]]] = {}
    if result["unit"] == "deal":
        for d in result["deals"]:
            by_unit.setdefault((d["game"], d["deal"]), {})[d["orientation"]] = d["net"]
    else:
        for g in result["game_results"]:
            by_unit.setdefault((g["game"], 0), {})[g["orientation"]] = [result["sense"] * p for p in g["points"]]
    out = []
    for unit in sorted(by_unit):
        nets = by_unit[unit]
        if len(nets) == n:
            out.append([_number(x) for x in board_margins([nets[o] for o in range(n)], 0)])
    return out


def _number(x: float) -> float | int:
    return int(x) if x == int(x) else x


def _shrunk(args: list[str]) -> list[str]:
    out = list(args)
    for flag in ("--deals", "--games"):
        if flag in out:
            i = out.index(flag) + 1
            out[i] = str(max(4, int(out[i]) // 10))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sprt_collect", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of each match, written to bench/out/")
    parser.add_argument("--out", type=Path, help="where to write (default bench/sprt_pairs.json)")
    args = parser.parse_args(argv)
    target = args.out or (ROOT / "bench" / "out" / "sprt_pairs.json" if args.quick else PAIRS)
    samples = []
    with tempfile.TemporaryDirectory() as work:
        for k, (name, match_args) in enumerate(MATCHES):
            if args.quick:
                match_args = _shrunk(match_args)
            out = Path(work) / "result.json"
            t0 = time.monotonic()
            cmd = [sys.executable, "-m", "referee", "match", *match_args, "--move-time", "60", "--json", str(out),
                   "--log", str(Path(work) / f"match{k}.jsonl")]
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"{name}: the referee exited {done.returncode}:\n{done.stderr[-2000:]}", file=sys.stderr)
                return 1
            result = json.loads(out.read_text(encoding="utf-8"))
            if result["faults"]:
                print(f"{name}: {len(result['faults'])} faults ({result['faults'][0]['kind']} …): not the bots' own play", file=sys.stderr)
                return 1
            pairs = pairs_of(result)
            samples.append({"name": name, "command": command_line(match_args), "variant": result["variant"],
                            "unit": result["unit"], "bots": [b["name"] for b in result["bots"]], "pairs": pairs})
            print(f"{name}: {len(pairs)} pairs in {time.monotonic() - t0:.0f} s", flush=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    body = ",\n".join("  " + json.dumps(s, separators=(",", ":")) for s in samples)
    target.write_text(f'{{"samples": [\n{body}\n]}}\n', encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
