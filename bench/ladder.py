"""Is the ladder's matchmaking worth it? ``python -m bench.ladder [--quick] [--fields N] [--seed S]``.

``python -m bench.ladder --host [--fields 50,200,1000] [--tables N]`` measures the host's own
overhead per table instead (:mod:`bench.ladder_host`).

Simulates ladders of bots of known strengths, in-process, with the ladder's own ratings
(:class:`tournaments.ladder.rating.Ratings`) and matchmaking
(:class:`tournaments.ladder.matchmaking.Matchmaker`), beside two schedules that ignore the
results: uniform random pairing and a round robin (every pair once, in an order shuffled every
cycle, over and over).  Every schedule is fitted and judged by the same ratings.

**The bots.**  A field of ``k`` bots (20 and 100) whose strengths are drawn from a normal
distribution of standard deviation :data:`SPREAD` points a deal.  Each table seats two, plays
:data:`DEALS` deals, and its margin per deal is the true difference plus the mean of
``DEALS`` noises **resampled from real sport deals**: the paired margins of ``greedy`` against
``random`` over 2000 duplicate deals played by the referee (``bench/sprt_pairs.json``, the
``sport, greedy vs random`` sample: each deal's two orientations summed), centred on their mean
and scaled to a standard deviation of :data:`NOISE` points (from 24.9), so the noise has the real
shape (whole points, skew, heavy tails) at the issue's scale.  Each table's result counts only
:data:`LAG` tables later, as a host running several tables at once sees it.

**What it prints**, per field size and schedule, means over the simulated fields: the deals
played when Kendall's τ between the ratings' order and the true order first reaches 0.95, the
deals played when the order is first certified (every two neighbours separated, or tied within the
resolution, :data:`RESOLUTION` points a deal), and the share of the 95% intervals printed at that
moment that hold the true strengths (centred as the ratings are).  A field not certified within
the cap counts at the cap (and says so).  It ends with one line a script can read, for the
20-bot field: the matchmaker's deals over random pairing's and over the round robin's to reach
τ ≥ 0.95, its deals to certify over the round robin's, and the coverage of its intervals.

numpy is needed (a dependency of the referee since the ladder's ratings use it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from tournaments.ladder.matchmaking import Matchmaker, Outlook
from tournaments.ladder.rating import Outcome, Ratings

PAIRS = Path(__file__).resolve().parent / "sprt_pairs.json"
SAMPLE = "sport, greedy vs random"

SPREAD = 10.0      # the standard deviation of the bots' strengths, points a deal
NOISE = 20.0       # the standard deviation of a deal's paired margin about the true difference
DEALS = 12         # deals a table (a sport game)
RESOLUTION = 0.5   # "tied": within half a point a deal (a fortieth of a deal's noise), with 95% confidence
LAG = 8            # a table's result counts this many tables later
TAU = 0.95


def real_noise(path: Path = PAIRS, sample: str = SAMPLE, sd: float = NOISE) -> np.ndarray:
    """The real deals' paired margins, centred and scaled to standard deviation ``sd``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    pairs = next(s["pairs"] for s in data["samples"] if s["name"] == sample)
    m = np.array([sum(p) for p in pairs], dtype=float)
    m -= m.mean()
    return m * (sd / m.std())


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's τ between two orders of the same bots (no ties in continuous strengths)."""
    sa = np.sign(a[:, None] - a[None, :])
    sb = np.sign(b[:, None] - b[None, :])
    n = len(a)
    return float((sa * sb).sum()) / (n * (n - 1))


Schedule = Callable[[int, list[str], Ratings, dict[str, int], dict[str, int], list[tuple[str, ...]]], tuple[str, ...]]


def random_pairing(rng: np.random.Generator) -> Schedule:
    def choose(table: int, active: list[str], ratings: Ratings, played: dict[str, int], waited: dict[str, int],
               in_play: list[tuple[str, ...]]) -> tuple[str, ...]:
        i, j = rng.choice(len(active), 2, replace=False)
        return active[i], active[j]
    return choose


def round_robin(rng: np.random.Generator) -> Schedule:
    queue: list[tuple[str, str]] = []

    def choose(table: int, active: list[str], ratings: Ratings, played: dict[str, int], waited: dict[str, int],
               in_play: list[tuple[str, ...]]) -> tuple[str, ...]:
        if not queue:
            pairs = [(a, b) for n, a in enumerate(active) for b in active[n + 1:]]
            queue.extend(pairs[i] for i in rng.permutation(len(pairs)))
        return queue.pop()
    return choose


class Counted:
    """The ladder's matchmaker, counting the tables each of its rules seats (``rules``: rule
    number to tables; 1 overdue, 2 placement, 3 refresh, 4 the uncertain pairs)."""

    def __init__(self, seed: int) -> None:
        self.mm = Matchmaker(2, floor=4, seed=seed)
        self.rules: dict[int, int] = {}

    def __call__(self, table: int, active: list[str], ratings: Ratings, played: dict[str, int], waited: dict[str, int],
                 in_play: list[tuple[str, ...]]) -> tuple[str, ...]:
        rule = self.mm.rule(table, active, ratings, played, waited)
        self.rules[rule] = self.rules.get(rule, 0) + 1
        return self.mm.choose(table, active, ratings, played, waited, in_play)


def matchmaker(seed: int) -> Schedule:
    return Counted(seed)


def oracle(strengths: np.ndarray) -> Schedule:
    """Not a schedule a ladder can run: rule 4's objective over every pair, with the *true*
    strengths in place of the ratings (the covariance is the fit's), after one table for each bot
    in join order; the bound of what choosing pairs by expected information can do."""
    truth = strengths - strengths.mean()
    order = tuple(int(i) for i in np.argsort(-truth))

    def choose(table: int, active: list[str], ratings: Ratings, played: dict[str, int], waited: dict[str, int],
               in_play: list[tuple[str, ...]]) -> tuple[str, ...]:
        k = len(active)
        fit = ratings.fit()
        if table < k or not np.isfinite(fit.sigma2):
            return active[table % k], active[(table + 1 + table // k) % k]
        view = Outlook(replace(fit, rating=truth, order=order), list(order), ratings.resolution)
        place = {active[i]: n for n, i in enumerate(order)}
        for seated in in_play:
            view.expect([place[b] for b in seated], ratings.deals_per_table())
        p, q = view.best(k - 1, ratings.deals_per_table())
        return active[order[p]], active[order[q]]
    return choose


@dataclass
class Run:
    """One simulated field under one schedule."""

    tau_deals: int | None = None
    certify_deals: int | None = None
    covered: int = 0
    intervals: int = 0
    deals: int = 0
    seconds: float = 0.0
    rules: dict[int, int] = field(default_factory=dict)  # the matchmaker's tables by rule, up to τ ≥ 0.95


@dataclass
class Row:
    runs: list[Run] = field(default_factory=list)

    def mean(self, key: str, cap: int) -> tuple[float, int]:
        """The mean over the runs (a run that never got there counts at ``cap``) and how many never did."""
        values = [getattr(r, key) for r in self.runs]
        missing = sum(v is None for v in values)
        return float(np.mean([cap if v is None else v for v in values])), missing

    def coverage(self) -> float:
        return sum(r.covered for r in self.runs) / max(1, sum(r.intervals for r in self.runs))


def simulate(strengths: np.ndarray, schedule: Schedule, noise: np.ndarray, rng: np.random.Generator, cap: int,
             deals: int = DEALS, lag: int = LAG, resolution: float = RESOLUTION, every: int = 1, certify: bool = True) -> Run:
    """Play one field until its order is certified and τ ≥ 0.95 (or ``cap`` deals; τ alone if not
    ``certify``), as a ladder's host would, looking at the standings after every ``every`` tables."""
    start = time.process_time()
    k = len(strengths)
    names = [f"bot{i:03d}" for i in range(k)]
    index = {n: i for i, n in enumerate(names)}
    ratings = Ratings(resolution)
    for n in names:
        ratings.add_bot(n)
    played = dict.fromkeys(names, 0)
    waited = dict.fromkeys(names, 0)
    pending: list[Outcome] = []
    run = Run()
    table = 0
    counted = 0
    look = 0
    while run.deals < cap:
        while pending and pending[0].table < table - lag:
            ratings.add(pending.pop(0))
            counted += deals
        seated = schedule(table, names, ratings, played, waited, [o.bots for o in pending])
        for n in names:
            waited[n] += 1
        for n in seated:
            played[n] += 1
            waited[n] = 0
        a, b = (index[n] for n in seated)
        total = int(round(deals * (strengths[a] - strengths[b]) + noise[rng.integers(0, len(noise), deals)].sum()))
        pending.append(Outcome(table, table, tuple(seated), (Fraction(total, deals), Fraction(-total, deals)), deals))
        run.deals += deals
        table += 1
        if counted == 0 or table % every:
            continue
        fit = ratings.fit()
        if run.tau_deals is None and kendall_tau(fit.rating, strengths) >= TAU:
            run.tau_deals = run.deals
            run.rules = dict(getattr(schedule, "rules", {}))
            if not certify:
                break
        # certification is looked for at every table until τ is reached, then at every 1% more
        # deals (the figure is then at most 1% late, alike for every schedule)
        if run.certify_deals is None and (run.tau_deals is None or run.deals >= look) and ratings.certified():
            run.certify_deals = run.deals
            cover(run, ratings, strengths, index)
        if run.deals >= look:
            look = int(run.deals * 1.01)
        if run.tau_deals is not None and run.certify_deals is not None:
            break
    if run.certify_deals is None and certify:
        cover(run, ratings, strengths, index)
    run.seconds = time.process_time() - start
    return run


def cover(run: Run, ratings: Ratings, strengths: np.ndarray, index: dict[str, int]) -> None:
    """Count the intervals printed now that hold the true strengths (centred as the ratings are)."""
    truth = strengths - strengths.mean()
    for s in ratings.standings():
        run.intervals += 1
        run.covered += s.lo <= truth[index[s.name]] <= s.hi


SCHEDULES: dict[str, Callable[[int], Schedule]] = {
    "matchmaker": matchmaker,
    "random pairing": lambda seed: random_pairing(np.random.default_rng(seed)),
    "round robin": lambda seed: round_robin(np.random.default_rng(seed)),
}


def one(k: int, f: int, name: str, seed: int, cap: int, resolution: float, certify: bool = True) -> Run:
    """Field ``f`` of ``k`` bots under schedule ``name`` (a process of its own may run it)."""
    strengths = np.random.default_rng([seed, k, f]).normal(0.0, SPREAD, k)
    schedule = oracle(strengths) if name == ORACLE else SCHEDULES[name](seed * 1000 + f)
    # the same noise stream for every schedule of a field: the schedules differ only in whom they seat
    return simulate(strengths, schedule, real_noise(), np.random.default_rng([seed, k, f, 1]), cap,
                    resolution=resolution, every=max(1, k // 10), certify=certify and name != ORACLE)


ORACLE = "oracle"  # rule 4 told the true strengths (--oracle): τ only


def bench(k: int, fields: int, seed: int, cap: int, out: Callable[[str], None], jobs: int = 1,
          resolution: float = RESOLUTION, with_oracle: bool = False, certify: bool = True) -> dict[str, Row]:
    """Every schedule on ``fields`` fields of ``k`` bots (and the oracle, τ only, if ``with_oracle``;
    every schedule τ only if not ``certify``); prints a table through ``out``."""
    names = [*SCHEDULES, *([ORACLE] if with_oracle else [])]
    tasks = [(k, f, name, seed, cap, resolution, certify) for f in range(fields) for name in names]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            runs = list(pool.map(one, *zip(*tasks)))
    else:
        runs = [one(*t) for t in tasks]
    rows = {name: Row() for name in names}
    for task, run in zip(tasks, runs):
        rows[task[2]].runs.append(run)
    out(f"\n{k} bots, {fields} fields (strength sd {SPREAD:g}, noise sd {NOISE:g} points a deal, {DEALS} deals a table, "
        f"resolution {resolution:g}, results counted {LAG} tables late; cap {cap} deals)")
    out(f"{'schedule':<16} {'deals to tau>=0.95':>20} {'deals to certify':>18} {'coverage':>9} {'cpu s/field':>12}")
    for name, row in rows.items():
        tau, tau_missing = row.mean("tau_deals", cap)
        seconds = float(np.mean([r.seconds for r in row.runs]))
        if name == ORACLE or not certify:
            out(f"{name:<16} {tau:>14.0f}{f' ({tau_missing} capped)' if tau_missing else '':>6} {'-':>12}{'':>6} {'-':>8} {seconds:>12.1f}")
            continue
        cert, cert_missing = row.mean("certify_deals", cap)
        out(f"{name:<16} {tau:>14.0f}{f' ({tau_missing} capped)' if tau_missing else '':>6} "
            f"{cert:>12.0f}{f' ({cert_missing} capped)' if cert_missing else '':>6} {row.coverage():>8.1%} {seconds:>12.1f}")
    out(spread(rows, cap))
    out(rules(rows["matchmaker"]))
    return rows


def spread(rows: dict[str, Row], cap: int) -> str:
    """How far the τ ratio can be trusted: the matchmaker's τ deals over random pairing's, with the
    standard deviation of that ratio over the fields resampled (bootstrap, a fixed seed)."""
    mm = np.array([cap if r.tau_deals is None else r.tau_deals for r in rows["matchmaker"].runs], dtype=float)
    rp = np.array([cap if r.tau_deals is None else r.tau_deals for r in rows["random pairing"].runs], dtype=float)
    picks = np.random.default_rng(0).integers(0, len(mm), (1000, len(mm)))
    ratios = mm[picks].mean(axis=1) / rp[picks].mean(axis=1)
    return (f"tau deals vs random pairing {mm.mean() / rp.mean():.2f} ± {ratios.std():.2f} (fields resampled); "
            f"median field {np.median(mm):.0f} against {np.median(rp):.0f}")


def rules(row: Row) -> str:
    """The matchmaker's tables up to τ ≥ 0.95, by the rule that seated them."""
    total = Counter[int]()
    for r in row.runs:
        total.update(r.rules)
    n = max(1, sum(total.values()))
    names = {1: "overdue", 2: "placement", 3: "refresh", 4: "uncertain pairs"}
    return "matchmaker's tables up to tau>=0.95: " + ", ".join(f"{names[i]} {total[i] / n:.0%}" for i in sorted(names))


def summary(rows: dict[str, Row], cap: int) -> str:
    """The line a script reads: the matchmaker's deals over the others' (τ ≥ 0.95, certified) and its coverage."""
    mm_tau = rows["matchmaker"].mean("tau_deals", cap)[0]
    mm_cert = rows["matchmaker"].mean("certify_deals", cap)[0]
    return (f"tau deals vs random pairing: {mm_tau / rows['random pairing'].mean('tau_deals', cap)[0]:.2f}; "
            f"vs round robin: {mm_tau / rows['round robin'].mean('tau_deals', cap)[0]:.2f}; "
            f"certify vs round robin: {mm_cert / rows['round robin'].mean('certify_deals', cap)[0]:.2f}; "
            f"coverage: {rows['matchmaker'].coverage():.0%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ladder", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer fields (a few minutes on 2 cores)")
    parser.add_argument("--fields", type=int, help="simulated 20-bot fields (default 60, --quick 24)")
    parser.add_argument("--seed", type=int, default=1, help="the simulation's seed (default 1)")
    parser.add_argument("--oracle", action="store_true",
                        help="also rule 4 told the true strengths (20-bot fields, τ only): what choosing pairs could do at best")
    parser.add_argument("--tau-only", action="store_true",
                        help="stop each field at tau >= 0.95 (no certification, no coverage): cheap enough for hundreds of fields")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: the CPUs)")
    parser.add_argument("--host", action="store_true",
                        help="instead: the host's overhead per table at 50, 200 and 1,000 bots (bench.ladder_host; its options follow)")
    given = sys.argv[1:] if argv is None else argv
    if "--host" in given:  # the host's own options (its --fields are sizes, not a count)
        from bench.ladder_host import main as host_main

        return host_main([a for a in given if a != "--host"])
    args = parser.parse_args(given)
    fields = args.fields or (24 if args.quick else 60)
    sizes = {20: (fields, 2_000_000), 100: (1, 300_000) if args.quick else (4, 2_000_000)}
    if args.tau_only:
        sizes[100] = (max(1, fields // 25), 2_000_000)
    results = {k: bench(k, n, args.seed, cap, print, jobs=args.jobs, with_oracle=args.oracle and k == 20, certify=not args.tau_only)
               for k, (n, cap) in sizes.items()}
    if args.tau_only:
        rows, cap = results[20], sizes[20][1]
        mm_tau = rows["matchmaker"].mean("tau_deals", cap)[0]
        print(f"tau deals vs random pairing: {mm_tau / rows['random pairing'].mean('tau_deals', cap)[0]:.2f}; "
              f"vs round robin: {mm_tau / rows['round robin'].mean('tau_deals', cap)[0]:.2f} (tau only)")
    else:
        print(summary(results[20], sizes[20][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
