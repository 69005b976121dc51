"""SPRT error rates and lengths on real domino pairs: ``python -m bench.sprt [--runs N] [--seed S]``.

For each sample of real pairs in ``bench/sprt_pairs.json`` (played by the referee:
``python -m bench.sprt_collect`` says how) and each test of :data:`TESTS`, it runs the referee's
own SPRT (:func:`referee.stats.sprt.sprt_llr` on a :class:`referee.stats.figures.Boards` tally, decided by
:meth:`referee.stats.sprt.SprtSpec.decide`) on pairs drawn with replacement from the sample, made to
hold exactly H0 or H1:

* a **margin** test draws pairs whose margins are shifted so that their mean is ``margin0``
  (or ``margin1``): the real spread and shape, the hypothesis' mean;
* an **Elo** test draws pairs from the sample reweighted to the most likely distribution whose
  mean pair score is that of ``elo0`` (or ``elo1``) (:func:`referee.stats.sprt.mle_with_mean`, the
  distribution the GSPRT itself compares), so every draw is a real pair;
* a **normalized Elo** test (``model=normalized``) likewise, to the most likely distribution
  whose pair scores have the t (mean less ½, over their spread) of ``elo0`` (or ``elo1``) read
  as normalized Elo (:func:`referee.stats.sprt.mle_with_t`).

A third column draws the sample as it is (the bots' real strength).  Every run plays until the
test decides, up to ``--cap`` pairs, once for every minimum of :data:`MINIMUMS` on the same
draws (a test with minimum *m* decides at the first pair ≥ *m* whose LLR is beyond a bound).
It prints, per minimum: how often H1 was accepted when H0 held (should be about alpha), how often
H0 was accepted when H1 held (about beta), and the mean number of pairs played.  The runs are
seeded from ``--seed`` and the names, so every figure is the same on every machine.

Nothing here is a test and nothing asserts anything; docs/sprt.md reads the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.stats.elo import elo_of_score, score_of_elo
from referee.stats.figures import Boards
from referee.stats.sprt import NELO_SCALE, SprtSpec, mle_with_mean, mle_with_t, parse_sprt, sprt_llr, t_of_nelo

PAIRS = Path(__file__).resolve().parent / "sprt_pairs.json"

#: The minimums compared (pairs before the test may decide).
MINIMUMS = (0, 5, 10, 15, 20, 30, 50)

#: Per sample, the tests simulated: bounds near the bots' real strength in each game's own scale,
#: short ones (about 20 to 40 pairs expected, where a minimum matters most) and longer ones.
TESTS: dict[str, list[str]] = {
    "sport, greedy vs random": ["margin0=0 margin1=5", "margin0=0 margin1=3", "elo0=0 elo1=50", "elo0=0 elo1=30 model=normalized"],
    "sport, first vs random": ["margin0=0 margin1=5", "elo0=0 elo1=50", "elo0=0 elo1=30 model=normalized"],
    "kozel, greedy vs random": ["margin0=0 margin1=30", "margin0=0 margin1=20", "elo0=0 elo1=100",
                                "elo0=0 elo1=100 model=normalized"],
    "kozel, first vs random": ["margin0=0 margin1=30", "margin0=0 margin1=20", "elo0=0 elo1=100", "elo0=0 elo1=100 model=normalized"],
    "sea_kozel, greedy vs random": ["margin0=0 margin1=40", "margin0=0 margin1=25", "elo0=0 elo1=100",
                                    "elo0=0 elo1=100 model=normalized"],
    "draw, 3 bots: greedy vs first and random": ["margin0=0 margin1=15", "elo0=0 elo1=100", "elo0=0 elo1=30 model=normalized"],
}


@dataclass(frozen=True)
class Sample:
    name: str
    command: str
    pairs: list[list[float]]  # [pair][orientation]: the first bot's margin against the field

    @property
    def orientations(self) -> int:
        return len(self.pairs[0])

    def margins(self) -> list[float]:
        return [sum(p) / len(p) for p in self.pairs]

    def scores(self) -> list[float]:
        """Per pair, its score: plays won (a level play half) over the plays."""
        return [sum(1.0 if x > 0 else 0.5 if x == 0 else 0.0 for x in p) / len(p) for p in self.pairs]


def load(path: Path = PAIRS) -> list[Sample]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Sample(s["name"], s["command"], s["pairs"]) for s in data["samples"]]


Draw = Callable[[random.Random], list[list[float]]]


def _nets(pair: Sequence[float], shift: float = 0.0) -> list[list[float]]:
    """A pair as a two-bot board whose first bot's margin in each orientation is the given one."""
    return [[x + shift, 0.0] for x in pair]


def shifted(sample: Sample, mean: float) -> Draw:
    """Pairs of the sample, every margin moved so that the pairs' mean margin is ``mean``."""
    shift = mean - statistics.fmean(sample.margins())
    boards = [_nets(p, shift) for p in sample.pairs]
    return lambda rng: rng.choice(boards)


def tilted(sample: Sample, elo: float) -> Draw:
    """Pairs of the sample, reweighted to the most likely distribution whose mean pair score is
    the expected score of ``elo``."""
    return _reweighted(sample, lambda values, probs: mle_with_mean(values, probs, score_of_elo(elo)))


def normalized(sample: Sample, nelo: float) -> Draw:
    """Pairs of the sample, reweighted to the most likely distribution whose pair scores have
    the t of the normalized Elo ``nelo``."""
    return _reweighted(sample, lambda values, probs: mle_with_t(values, probs, t_of_nelo(nelo, sample.orientations)))


def _reweighted(sample: Sample, fit: Callable[[list[float], list[float]], list[float]]) -> Draw:
    """Pairs of the sample drawn with the probabilities ``fit`` gives each pair score (shared
    alike by the pairs of that score)."""
    scores = sample.scores()
    values = sorted(set(scores))
    probs = [scores.count(v) / len(scores) for v in values]
    weight = dict(zip(values, fit(values, probs)))
    boards = [_nets(p) for p in sample.pairs]
    cum: list[float] = []
    total = 0.0
    for s in scores:
        total += weight[s] / scores.count(s)
        cum.append(total)
    return lambda rng: rng.choices(boards, cum_weights=cum)[0]


def as_played(sample: Sample) -> Draw:
    boards = [_nets(p) for p in sample.pairs]
    return lambda rng: rng.choice(boards)


@dataclass
class Tally:
    """Per minimum: decisions and pairs played over the runs."""

    h0: int = 0
    h1: int = 0
    undecided: int = 0
    pairs: int = 0

    @property
    def runs(self) -> int:
        return self.h0 + self.h1 + self.undecided


def simulate(test: SprtSpec, draw: Draw, orientations: int, runs: int, rng: random.Random, cap: int,
             minimums: Sequence[int] = MINIMUMS) -> dict[int, Tally]:
    """``runs`` SPRTs on pairs from ``draw``, each decided once per minimum on the same pairs."""
    specs = {m: SprtSpec(kind=test.kind, h0=test.h0, h1=test.h1, alpha=test.alpha, beta=test.beta, min_pairs=m)
             for m in minimums}
    out = {m: Tally() for m in minimums}
    for _ in range(runs):
        tally = Boards(2, orientations)
        pending = list(minimums)
        while pending and tally.count < cap:
            tally.add(draw(rng))
            llr = sprt_llr(test, tally)
            for m in list(pending):
                decision = specs[m].decide(llr, tally.count)
                if decision is not None:
                    t = out[m]
                    if decision == "H1":
                        t.h1 += 1
                    else:
                        t.h0 += 1
                    t.pairs += tally.count
                    pending.remove(m)
        for m in pending:
            out[m].undecided += 1
            out[m].pairs += tally.count
    return out


def describe(sample: Sample) -> str:
    """The sample's strength, and how much each test's statistic says per pair: the mean over
    the spread (a t per pair) of the pair margins and of the pair scores.  The pairs a test
    needs go as 1 / t², so the ratio of the two squares is how many times the pairs the Elo test
    needs for the margin test's certainty at the bots' real strength."""
    margins = sample.margins()
    scores = sample.scores()
    score = statistics.fmean(scores)
    t_margin = statistics.fmean(margins) / statistics.stdev(margins)
    t_score = (score - 0.5) / statistics.stdev(scores)
    ratio = f"{(t_margin / t_score) ** 2:.1f}×" if t_score else "∞"
    nelo = (score - 0.5) / statistics.pstdev(scores) * NELO_SCALE / math.sqrt(sample.orientations)
    return (f"{len(margins)} pairs ({sample.orientations} orientations): margin per pair {statistics.fmean(margins):+.2f}, "
            f"sd {statistics.stdev(margins):.1f}; pair score {score:.3f} (Elo {elo_of_score(score):+.0f}, nElo {nelo:+.0f}), "
            f"sd {statistics.stdev(scores):.3f}\n"
            f"  t per pair: margin {t_margin:.3f}, score {t_score:.3f}: the Elo test needs {ratio} the pairs of the margin test")


def _rate(k: int, n: int) -> str:
    return f"{100 * k / n:5.1f}%" if n else "    —"


def run_test(sample: Sample, words: str, runs: int, seed: int, cap: int) -> None:
    test = parse_sprt([words, "min_pairs=0"])
    if test.kind == "margin":
        at_h0, at_h1 = shifted(sample, test.h0), shifted(sample, test.h1)
    elif test.kind == "nelo":
        at_h0, at_h1 = normalized(sample, test.h0), normalized(sample, test.h1)
    else:
        at_h0, at_h1 = tilted(sample, test.h0), tilted(sample, test.h1)
    t0 = time.process_time()
    columns = []
    for label, draw in (("H0", at_h0), ("H1", at_h1), ("real", as_played(sample))):
        rng = random.Random(f"{seed}:{sample.name}:{words}:{label}")
        columns.append(simulate(test, draw, sample.orientations, runs, rng, cap))
    se = 196 * math.sqrt(test.alpha * (1 - test.alpha) / runs)
    print(f"\n  {words} alpha={test.alpha:g} beta={test.beta:g}: {runs} runs a column "
          f"(a rate near {100 * test.alpha:g}% is measured to ±{se:.1f} points, 95%); {time.process_time() - t0:.0f} CPU s")
    print("  | min pairs | H0 true: H1 accepted | mean pairs | H1 true: H0 accepted | mean pairs "
          "| real bots: H1 accepted | H0 accepted | mean pairs | undecided |")
    print("  |---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in MINIMUMS:
        h0, h1, real = columns[0][m], columns[1][m], columns[2][m]
        undecided = h0.undecided + h1.undecided + real.undecided
        print(f"  | {m:>3} | {_rate(h0.h1, h0.runs)} | {h0.pairs / h0.runs:6.1f} | {_rate(h1.h0, h1.runs)} | {h1.pairs / h1.runs:6.1f} "
              f"| {_rate(real.h1, real.runs)} | {_rate(real.h0, real.runs)} | {real.pairs / real.runs:6.1f} | {undecided} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sprt", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000, help="runs per hypothesis and test (default 4000)")
    parser.add_argument("--seed", type=int, default=1, help="the simulation's seed (default 1)")
    parser.add_argument("--cap", type=int, default=20_000, help="pairs after which a run counts as undecided")
    parser.add_argument("--sample", action="append", help="only this sample (repeat; default: all)")
    parser.add_argument("--test", action="append", help='only this test, e.g. "margin0=0 margin1=5" (repeat)')
    parser.add_argument("--pairs-file", type=Path, default=PAIRS, help="the real pairs (default bench/sprt_pairs.json)")
    args = parser.parse_args(argv)
    samples = load(args.pairs_file)
    if args.sample:
        unknown = set(args.sample) - {s.name for s in samples}
        if unknown:
            print(f"no sample named {', '.join(sorted(unknown))}; the samples: {', '.join(s.name for s in samples)}", file=sys.stderr)
            return 2
        samples = [s for s in samples if s.name in args.sample]
    print(f"SPRT simulation: seed {args.seed}, {args.runs} runs a column, minimums {', '.join(map(str, MINIMUMS))}")
    for sample in samples:
        print(f"\n{sample.name}: {describe(sample)}\n  from: {sample.command}")
        for words in args.test or TESTS.get(sample.name, []):
            run_test(sample, words, args.runs, args.seed, args.cap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
