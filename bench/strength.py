"""search_bot's strength, measured with the referee itself: a duplicate match per game and opponent.

    python -m bench.strength [--games sport,kozel,...] [--against greedy,random] [--out DIR]

For every game (13, each at the player count below) and each opponent (greedy_bot, random_bot
seeded with ``BOT_SEED=1``) it runs ``referee match`` as a user would, under ``nice``:

* games scored to a target and sport: one match, stopped by the referee's own SPRT
  (``--sprt "elo0=0 elo1=50 alpha=0.05 beta=0.05"`` on the pairs' logistic Elo) within a budget
  of ``--budget`` games (sport: ``4 × --budget`` deals);
* mexican_train, whose match is one seven-round game in each seating (seven paired deals): a
  fixed number of matches on seeds 1, 2, … (``--mt-matches``), their paired deals pooled.

It prints a Markdown table: the pairs played, search_bot's mean margin per pair (a deal in sport
and mexican_train, a game elsewhere; its net points less the opponent's, penalties counted
against it) with its 95% Student-t interval, the referee's verdict (the SPRT's, or whether the
pooled interval is above 0), and search_bot's time per move as the referee's clock saw it (mean
and 95th percentile over all its moves, forced ones included); on stderr, how many of its
searches its time bound cut short (their moves depend on the load).  The logs and JSON results stay
in ``--out``.  Nothing here asserts anything; it is a record of a run, see bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sample_bots"
#: (game, players): the head-to-head form of each game (pairs where the game has them).
GAMES = [("sport", 4), ("kozel", 4), ("draw", 2), ("block", 2), ("club", 2), ("sea_kozel", 4), ("osel", 4),
         ("telephone", 4), ("muggins", 2), ("general", 4), ("blitz", 4), ("mexican_train", 2), ("kolbasa", 2)]
OPPONENTS = {"greedy": BOTS / "greedy_bot.py", "random": BOTS / "random_bot.py"}
SPRT = "elo0=0 elo1=50 alpha=0.05 beta=0.05"
#: t quantiles for a 95% two-sided interval (df → t); larger df use 1.96 + 2.4 / df.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}


def t95(df: int) -> float:
    if df in _T95:
        return _T95[df]
    below = [k for k in _T95 if k < df]
    return _T95[max(below)] if df <= 30 else 1.96 + 2.4 / df


def referee(args: list[str]) -> None:
    cmd = ["nice", "-n", "10", sys.executable, "-m", "referee", "match", *args]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"referee failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")


def move_times(log: Path, bot: int) -> list[float]:
    """The ms the referee measured for each play of bot ``bot`` in a match log."""
    seatings: dict[int, list[int]] = {}
    seating: list[int] = []
    out = []
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            if r["k"] == "game":
                seatings[r["orientation"]] = r["seating"]
            elif r["k"] == "deal":
                seating = seatings[r["orientation"]]
            elif r["k"] == "play" and seating and seating[r["seat"]] == bot:
                out.append(r["ms"])
    return out


def pooled_deals(results: list[dict]) -> list[float]:
    """search_bot's margin in every paired deal of fixed-deal matches (its net less the other's,
    averaged over the orientations)."""
    margins = []
    for res in results:
        by_deal: dict[tuple[int, int], list[float]] = {}
        for d in res["deals"]:
            by_deal.setdefault((d["game"], d["deal"]), []).append(d["net"][0] - d["net"][1])
        margins += [sum(v) / len(v) for v in by_deal.values() if len(v) == 2]
    return margins


def run_row(game: str, players: int, who: str, out: Path, budget: int, mt_matches: int) -> dict:
    stem = out / f"{game}-{who}"
    base = [str(BOTS / "search_bot.py"), str(OPPONENTS[who]), "--variant", game, "--players", str(players),
            "--env", "BOT_SEED=1", "--env", f"PYTHONPATH={ROOT}", "--overwrite", "-q"]  # the bots import this checkout
    start = time.monotonic()
    if game == "mexican_train":
        results, times = [], []
        for seed in range(1, mt_matches + 1):
            log, js = Path(f"{stem}-{seed}.jsonl"), Path(f"{stem}-{seed}.json")
            referee([*base, "--seed", str(seed), "--log", str(log), "--json", str(js)])
            results.append(json.loads(js.read_text()))
            times += move_times(log, 0)
        margins = pooled_deals(results)
        mean = statistics.mean(margins)
        half = t95(len(margins) - 1) * statistics.stdev(margins) / math.sqrt(len(margins))
        verdict = f"interval above 0 ({len(results)} matches pooled)" if mean - half > 0 else f"not significant ({len(results)} matches pooled)"
        unit = "deal"
        n = len(margins)
    else:
        amount = ["--deals", str(4 * budget)] if game == "sport" else ["--games", str(budget)]
        log, js = Path(f"{stem}.jsonl"), Path(f"{stem}.json")
        referee([*base, *amount, "--seed", "1", "--sprt", SPRT, "--log", str(log), "--json", str(js)])
        res = json.loads(js.read_text())
        m = res["margin"]["search_bot"]["paired"]
        mean, n, unit = m["mean"], m["n"], res["unit"]
        low, high = m["ci95"]
        half = (high - low) / 2
        sprt = res.get("sprt") or {}
        decision = {"H1": "H1 (search_bot stronger) accepted", "H0": "H0 accepted", None: "undecided"}[sprt.get("decision")]
        verdict = f"SPRT: {decision} after {sprt.get('pairs')} pairs" + ("" if res["stopped_by"] else f" (budget of {budget} spent)")
        if res.get("significant") and res.get("winner") == "search_bot":
            verdict += "; margin significant"
        times = move_times(log, 0)
    times.sort()
    # search_bot says on stderr when its time bound cut a search short: its moves then depend on the load.
    cut = sum(f.read_text(errors="replace").count("the time bound stopped")
              for f in out.glob(f"{stem.name}*.stderr/search_bot*"))
    return {
        "game": game, "players": players, "against": who, "unit": unit, "n": n, "mean": mean, "half": half,
        "verdict": verdict, "ms_mean": statistics.mean(times), "ms_p95": times[int(0.95 * (len(times) - 1))],
        "moves": len(times), "cut": cut, "wall_s": time.monotonic() - start,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.strength", description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="", help="comma-separated games (default: all 13)")
    ap.add_argument("--against", default="greedy,random", help="opponents: greedy, random (default both)")
    ap.add_argument("--budget", type=int, default=100, help="games (sport: 4 × deals) a match may last before its SPRT decides")
    ap.add_argument("--mt-matches", type=int, default=4, help="mexican_train matches pooled (7 paired deals each)")
    ap.add_argument("--out", type=Path, default=ROOT / "referee-logs" / "strength")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    chosen = [g for g in args.games.split(",") if g] or [g for g, _ in GAMES]
    rows = []
    print("| game | players | against | pairs | search_bot's margin per pair [95% interval] | verdict | ms/move mean (p95) |")
    print("|---|---|---|---|---|---|---|")
    for game, players in GAMES:
        if game not in chosen:
            continue
        for who in args.against.split(","):
            r = run_row(game, players, who, args.out, args.budget, args.mt_matches)
            rows.append(r)
            print(f"| {game} | {players} | {who}_bot | {r['n']} {r['unit']}s | {r['mean']:+.1f} "
                  f"[{r['mean'] - r['half']:+.1f}, {r['mean'] + r['half']:+.1f}] | {r['verdict']} | "
                  f"{r['ms_mean']:.0f} ({r['ms_p95']:.0f}) |", flush=True)
    (args.out / "strength.json").write_text(json.dumps(rows, indent=1))
    cut = sum(r["cut"] for r in rows)
    print(f"\nsearches the time bound cut short: {cut} of search_bot's {sum(r['moves'] for r in rows)} moves"
          f"{'' if cut else ' (every move was a full search)'}", file=sys.stderr)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}; logs and results in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
