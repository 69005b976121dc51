"""The ladder's ratings: a least-squares fit of every table's paired margins, and a certified order.

**The model** (Gaussian, on the scale of the game's points per deal).  Bot ``i`` has a strength
``s_i``; at a table of ``N`` bots playing ``d`` deals, its duplicate margin per deal ``y_i`` (its
net less the others' mean, over the rotations: luck cancels) is ``s_i − mean_{j≠i} s_j`` plus
noise whose variance is ``σ² / d``.  With two bots that is ``y_a = s_a − s_b + ε``.  Dividing a
table's margins by ``c = N / (N − 1)`` gives ``s_i − mean_table s`` plus the centred noise of
independent per-bot noises, so the generalised least-squares fit is an ordinary weighted one:
each table adds ``d · (I − J/N)`` to the information matrix of its bots and ``d · y / c`` to the
right-hand side.

**Why least squares, not Bradley–Terry.**  A duplicate margin is a number, not a win: the league's
Plackett–Luce fit (``tournaments.ratings``) keeps only the order on each board, and throws away
by how much.  Measured on 20 simulated fields of 20 bots (``bench.ladder``'s: strengths of sd 10,
real sport deals' noise), 250 random tables of 12 deals each: Kendall τ with the true order 0.924
for this fit, 0.900 for the league's Bradley–Terry fit of the same deals won, drawn and lost (the
paired difference 0.024 ± 0.006).  Its intervals are in the game's own points a deal.

**Order-invariant and incremental.**  The fit depends on the outcomes only through sums (the
information matrix, the right-hand side, the weighted sum of squares and the count of
observations), kept *exactly* (whole numbers times :data:`SCALE`, fractions), so the same outcomes in any order give bit for bit
the same standings, and a bot that stops playing keeps its rating as long as nobody else's
results move it (nothing decays with time, unlike TrueSkill's growing variance).  Adding an
outcome costs ``O(N²)`` whatever the number of results; the float solve (``O(k³)`` for ``k``
bots, numpy) runs once per change, when the standings are asked for.

**Prior.**  Every bot also has :data:`PRIOR_DEALS` virtual deal(s) level with a reference of
strength 0 (a ridge): a bot with no result sits at 0 with a wide interval instead of none, and
bots never compared (two groups that never met) still get finite ratings.  One deal weighs
nothing against a ladder's hundreds.

**Noise and intervals.**  ``σ²`` is estimated from the residuals (their weighted sum of squares
over the observations less the bots fitted), so it also absorbs what an additive model misses.
The intervals are ``rating ± t · se`` with Student's ``t`` on those degrees of freedom; before
there are any the intervals are infinite.

**Marks.**  For two neighbours of the standings with difference ``D`` (upper less lower) and its
standard error ``se``: *separated* when the 95% interval of ``D`` excludes 0 (``D > t.975 · se``);
*tied* when the two one-sided tests at 5% put ``|D|`` below the ladder's resolution ``δ``
(``|D| + t.95 · se < δ``: 95% confidence that they differ by less than ``δ`` points a deal);
otherwise *open*.  The order is *certified* when no mark is open.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

#: Virtual deals each bot plays level with a reference of strength 0 (the ridge).
PRIOR_DEALS = 1
#: The information matrix is kept times this (lcm of 2..8: a table of up to 8 bots adds whole numbers).
SCALE = 840

Verdict = Literal["separated", "tied", "open"]


@dataclass(frozen=True)
class Outcome:
    """One finished table of the ladder."""

    table: int                     # the ladder's table number (0, 1, 2, ...)
    deal_set: int                  # the deal set it played (table k of a pairing plays deal set k)
    bots: tuple[str, ...]          # the entries at the table (2, or N for tables of N)
    margins: tuple[Fraction, ...]  # each entry's duplicate margin per deal over the table (sums to 0)
    deals: int                     # deals played at the table (the weight)


@dataclass(frozen=True)
class Standing:
    name: str
    rating: float    # points per deal, the mean of the bots with results at 0
    lo: float        # 95% interval (infinite before the noise can be estimated)
    hi: float
    tables: int
    deals: int


@dataclass(frozen=True)
class Mark:
    """The verdict between two neighbours of the standings."""

    upper: str
    lower: str
    verdict: Verdict


@dataclass(frozen=True)
class Fit:
    """One solve of the model: what the standings, the marks and the matchmaker read."""

    names: tuple[str, ...]      # every bot, in the order they were added
    rating: np.ndarray          # strengths less the mean of the bots with results, by the index of ``names``
    unit: np.ndarray            # covariance of the centred strengths over σ² (the inverse information)
    sigma2: float               # the noise variance per deal of one bot's net (inf while unknown)
    dof: int                    # residual degrees of freedom
    order: tuple[int, ...]      # indexes, best first (ties by name)

    def se_diff(self, i: int, j: int) -> float:
        """The standard error of ``rating[i] − rating[j]``."""
        var = float(self.unit[i, i] + self.unit[j, j] - 2.0 * self.unit[i, j])
        return math.sqrt(self.sigma2 * max(var, 0.0))

    def se(self, i: int) -> float:
        """The standard error of ``rating[i]`` (centred on the field's mean)."""
        return math.sqrt(self.sigma2 * max(float(self.unit[i, i]), 0.0))


def t_quantile(p: float, dof: int) -> float:
    """Student's t quantile ``p`` (0.95 or 0.975) on ``dof`` degrees of freedom (inf below 1)."""
    if dof < 1:
        return math.inf
    if dof <= len(_T[p]):
        return _T[p][dof - 1]
    # Cornish–Fisher expansion in 1/dof: under 1e-5 off beyond 30 degrees of freedom
    z = _Z[p]
    n = float(dof)
    return (z + (z ** 3 + z) / (4 * n) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * n ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * n ** 3))


_Z = {0.95: 1.6448536269514722, 0.975: 1.959963984540054}
_T = {
    0.975: (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010, 2.1788, 2.1604,
            2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555,
            2.0518, 2.0484, 2.0452, 2.0423),
    0.95: (6.3138, 2.9200, 2.3534, 2.1318, 2.0150, 1.9432, 1.8946, 1.8595, 1.8331, 1.8125, 1.7959, 1.7823, 1.7709,
           1.7613, 1.7531, 1.7459, 1.7396, 1.7341, 1.7291, 1.7247, 1.7207, 1.7171, 1.7139, 1.7109, 1.7081, 1.7056,
           1.7033, 1.7011, 1.6991, 1.6973),
}


def verdict(diff: float, se: float, dof: int, resolution: float) -> Verdict:
    """The mark between an upper and a lower neighbour whose ratings differ by ``diff`` (± ``se``)."""
    if not math.isfinite(se):
        return "open"
    if diff > t_quantile(0.975, dof) * se:
        return "separated"
    if abs(diff) + t_quantile(0.95, dof) * se < resolution:
        return "tied"
    return "open"


class Ratings:
    """Least squares over all outcomes; order-invariant (the same outcomes in any order give the
    same fit), refit incrementally (an outcome updates exact sums in ``O(N²)``; one solve per
    change, when asked)."""

    def __init__(self, resolution: float) -> None:
        if not (resolution > 0 and math.isfinite(resolution)):
            raise ValueError(f"the resolution must be a positive number of points a deal, not {resolution!r}")
        self.resolution = float(resolution)
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        # the data's information matrix times SCALE: whole numbers, so the sums are exact in any order
        self._info = np.zeros((0, 0), dtype=np.int64)
        self._rhs: list[Fraction] = []
        self._squares = Fraction(0)   # Σ deals · |y / c|²
        self._observations = 0        # Σ (N − 1) over the tables
        self._tables: list[int] = []
        self._deals: list[int] = []
        self._met: dict[tuple[int, int], int] = {}  # (i < j) -> the latest table at which they met
        self._fit: Fit | None = None

    # -- input -------------------------------------------------------------------------------

    def add_bot(self, name: str) -> None:
        """Enter a bot (rating 0, no results); entering it again changes nothing."""
        if name in self._index:
            return
        self._index[name] = len(self._names)
        self._names.append(name)
        self._rhs.append(Fraction(0))
        k = len(self._names)
        grown = np.zeros((k, k), dtype=np.int64)
        grown[: k - 1, : k - 1] = self._info
        self._info = grown
        self._tables.append(0)
        self._deals.append(0)
        self._fit = None

    def add(self, outcome: Outcome) -> None:
        """Count a finished table.

        Raises:
            ValueError: a bot not added, a bot twice, fewer than two bots, margins not one per bot
                or not summing to 0, or deals below 1.
        """
        bots, margins, deals = outcome.bots, outcome.margins, outcome.deals
        if len(bots) < 2 or len(set(bots)) != len(bots) or SCALE % len(bots):
            raise ValueError(f"table {outcome.table}: a table seats two to eight bots, each once, not {bots!r}")
        if len(margins) != len(bots):
            raise ValueError(f"table {outcome.table}: {len(margins)} margins for {len(bots)} bots")
        unknown = [b for b in bots if b not in self._index]
        if unknown:
            raise ValueError(f"table {outcome.table}: {unknown[0]!r} is not a bot of the ladder")
        y = [Fraction(m) for m in margins]
        if sum(y) != 0:
            raise ValueError(f"table {outcome.table}: the margins sum to {sum(y)}, not 0")
        if not isinstance(deals, int) or deals < 1:
            raise ValueError(f"table {outcome.table}: deals must be a whole number at least 1, not {deals!r}")
        n = len(bots)
        idx = [self._index[b] for b in bots]
        scale = Fraction(n - 1, n)  # 1 / c
        for a, i in enumerate(idx):
            self._rhs[i] += deals * y[a] * scale
            self._tables[i] += 1
            self._deals[i] += deals
            for j in idx:
                self._info[i, j] += deals * ((SCALE if i == j else 0) - SCALE // n)
                if i < j:
                    self._met[i, j] = max(self._met.get((i, j), -1), outcome.table)
        self._squares += deals * sum((v * scale) ** 2 for v in y)
        self._observations += n - 1
        self._fit = None

    # -- the fit -----------------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._names)

    def tables(self, name: str) -> int:
        return self._tables[self._index[name]]

    def deals_per_table(self) -> float:
        """The mean deals of the tables counted (1 before any)."""
        seats = sum(self._tables)
        return sum(self._deals) / seats if seats else 1.0

    def last_met(self, a: str, b: str) -> int | None:
        """The latest table at which ``a`` and ``b`` sat together, or None."""
        i, j = sorted((self._index[a], self._index[b]))
        return self._met.get((i, j))

    def fit(self) -> Fit:
        """The solve of the current sums (cached until the next change)."""
        if self._fit is None:
            self._fit = self._solve()
        return self._fit

    def _solve(self) -> Fit:
        k = len(self._names)
        if k == 0:
            return Fit((), np.zeros(0), np.zeros((0, 0)), math.inf, 0, ())
        info = self._info / SCALE
        rhs = np.array([float(v) for v in self._rhs])
        ridge = info + PRIOR_DEALS * np.eye(k)
        inverse = np.linalg.inv(ridge)
        s = inverse @ rhs
        rss = float(self._squares) - 2.0 * float(s @ rhs) + float(s @ info @ s)
        fitted = sum(1 for t in self._tables if t > 0)
        dof = self._observations - max(fitted - 1, 0)
        sigma2 = max(rss, 0.0) / dof if dof >= 1 else math.inf
        # centred on the mean of the bots with results, so a newcomer's wide prior does not widen theirs
        played = np.array([t > 0 for t in self._tables]) if fitted else np.ones(k, dtype=bool)
        # (I − 1 wᵀ) C (I − w 1ᵀ) with w the played bots' weights, in O(k²): C − 1 (wᵀC) − (C w) 1ᵀ + (wᵀ C w)
        w = played / played.sum()
        rating = s - float(w @ s)
        cw = inverse @ w
        unit = inverse - cw[None, :] - cw[:, None] + float(w @ cw)
        order = tuple(sorted(range(k), key=lambda i: (-round(float(rating[i]), 9), self._names[i])))
        return Fit(tuple(self._names), rating, unit, sigma2, dof, order)

    def standings(self) -> list[Standing]:
        """Every bot, best first (ties by name), with its 95% interval."""
        fit = self.fit()
        t = t_quantile(0.975, fit.dof)
        out = []
        for i in fit.order:
            r = float(fit.rating[i])
            half = t * fit.se(i) if math.isfinite(t) and math.isfinite(fit.sigma2) else math.inf
            out.append(Standing(self._names[i], r, r - half, r + half, self._tables[i], self._deals[i]))
        return out

    def marks(self) -> list[Mark]:
        """The verdict between every two neighbours of the standings (one fewer than the bots)."""
        fit = self.fit()
        out = []
        for i, j in zip(fit.order, fit.order[1:]):
            diff = float(fit.rating[i] - fit.rating[j])
            out.append(Mark(self._names[i], self._names[j], verdict(diff, fit.se_diff(i, j), fit.dof, self.resolution)))
        return out

    def certified(self) -> bool:
        """Every neighbour mark settled (separated or tied)."""
        return all(m.verdict != "open" for m in self.marks())


def ratings_of(outcomes: Iterable[Outcome], resolution: float, bots: Iterable[str] = ()) -> Ratings:
    """The ratings of ``outcomes`` from scratch (the bots they name entered in sorted order, after ``bots``)."""
    outcomes = list(outcomes)
    r = Ratings(resolution)
    for b in bots:
        r.add_bot(b)
    for b in sorted({b for o in outcomes for b in o.bots}):
        r.add_bot(b)
    for o in outcomes:
        r.add(o)
    return r
