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
observations), kept *exactly* (whole numbers times :data:`SCALE`, fractions; the matrix sparse,
an entry per two bots that met), so the same outcomes in any order give bit for bit the same
standings and marks (an exact solve of the sums, :meth:`Ratings.exact`), and a bot that stops
playing keeps its rating as long as nobody else's results move it (nothing decays with time,
unlike TrueSkill's growing variance).  Adding an outcome costs ``O(N²)`` whatever the number of
results.  What is asked at every table (the matchmaking's fit, the host's look for certification)
is read off an incremental solve: the inverse information and the strengths updated by
Sherman–Morrison for each table (``Θ(k²)`` flops for ``k`` bots, where the exact solve is
``O(k³)``), replaced by an exact solve every :data:`REFIT_EVERY` outcomes or ``k``, whichever is
more (``O(k²)`` a table amortised).  A dense inverse updated exactly cannot cost less than
``Θ(k²)`` a table; what is saved is the passes over it: each update is kept aside as a rank-one
term (``O(k · m)`` to work out, ``m`` the terms kept; a reader works out the entries it needs
from the state and the terms) and :data:`FOLD_BLOCK` of them are applied in one matrix product
over the bots in name order (BLAS-3, a few rows at a time so that it runs on one thread), where
each was two passes (bench/README.md has the figures).  It equals the exact solve to rounding
(tests/ladder/test_rating.py holds it to 1e-9 after hundreds of tables, joins and retirements),
and wherever a result is reported it is the exact solve's: the standings, the marks, and a
certification, which the incremental solve only rules out while a mark is open and not within
:data:`GUARD` of its threshold.

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
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
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
    """One solve of the model: what the standings, the marks and the matchmaker read.

    With ``C`` the inverse of the information matrix with the prior (the covariance of the raw
    strengths over σ²) and ``w`` the centre's weights (uniform over the bots with results):
    ``unit = (I − 1 wᵀ) C (I − w 1ᵀ)``, ``cw = C w``, ``wcw = wᵀ C w``, so that
    ``C = unit + cw 1ᵀ + 1 cwᵀ − wcw``.  An incremental fit keeps ``unit`` as a dense ``base`` less
    the rank-one updates not applied to it yet, ``unit = base − Σ_t alpha_t z_t z_tᵀ`` (``z``'s rows,
    at most :data:`FOLD_BLOCK` of them): its readers work out the entries they need
    (:meth:`entries`, :meth:`rows`); :attr:`unit` is the whole matrix, ``O(k² · m)`` when first read."""

    names: tuple[str, ...]      # every bot, in the order they were added
    rating: np.ndarray          # strengths less the mean of the bots with results, by the index of ``names``
    base: np.ndarray            # unit before the updates z, alpha (k × k, symmetric)
    cw: np.ndarray              # C w
    wcw: float                  # wᵀ C w
    sigma2: float               # the noise variance per deal of one bot's net (inf while unknown)
    dof: int                    # residual degrees of freedom
    order: tuple[int, ...]      # indexes, best first (ties by name)
    z: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # m × k
    alpha: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @cached_property
    def unit(self) -> np.ndarray:
        """The covariance of the centred strengths over σ² (k × k, symmetric), worked out whole
        (each update entry by entry, as the ratings would apply it one at a time)."""
        if not len(self.alpha):
            return self.base
        unit = self.base.copy()
        for a, z in zip(self.alpha, self.z):
            unit -= np.multiply.outer(a * z, z)
        return unit

    def entries(self, i: np.ndarray | int, j: np.ndarray | int) -> np.ndarray:
        """``unit[i, j]`` (broadcast): ``O(m)`` an entry."""
        out = self.base[i, j]
        if len(self.alpha):
            out = out - np.tensordot(self.alpha, self.z[:, i] * self.z[:, j], axes=1)
        return np.asarray(out, dtype=float)

    def rows(self, i: np.ndarray) -> np.ndarray:
        """``unit[i]`` for the indexes ``i``: ``O(k · m)`` a row."""
        if not len(self.alpha):
            return self.base[i]
        return self.base[i] - (self.z[:, i] * self.alpha[:, None]).T @ self.z

    @cached_property
    def cov(self) -> np.ndarray:
        """``C``, the covariance of the raw strengths over σ² (``O(k²)``, when first read)."""
        cov = self.unit + self.cw[:, None]
        cov += (self.cw - self.wcw)[None, :]
        return cov

    def se_diff(self, i: int, j: int) -> float:
        """The standard error of ``rating[i] − rating[j]``."""
        var = float(self.entries(i, i) + self.entries(j, j) - 2.0 * self.entries(i, j))
        return math.sqrt(self.sigma2 * max(var, 0.0))

    def se(self, i: int) -> float:
        """The standard error of ``rating[i]`` (centred on the field's mean)."""
        return math.sqrt(self.sigma2 * max(float(self.entries(i, i)), 0.0))


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


#: The incremental state is replaced by an exact solve of the sums once this many outcomes were
#: folded into it since the last (or as many as the bots with results, when more: an exact solve
#: costs ``O(k³)``, a fold ``O(k²)``, so the solves add ``O(k²)`` a table amortised).
REFIT_EVERY = 64
#: The rank-one updates of the incremental state are applied to its dense ``k × k`` matrix this many
#: at a time, in one matrix product (until then each reader works out the entries it needs from
#: the matrix and the updates pending, ``O(m)`` an entry).
FOLD_BLOCK = 32
#: A mark of the incremental fit this near its threshold (relative) is decided by an exact solve.
GUARD = 1e-6
#: Beyond this many seats (less one a table) of later outcomes, :meth:`Ratings.certified` solves ``whole`` exactly.
LATER_SEATS = 64


@dataclass(frozen=True)
class _Step:
    """What one outcome added to the sums, kept until the incremental state has folded it in."""

    idx: tuple[int, ...]          # the bots' indexes, in the outcome's order
    deals: int
    rhs: tuple[Fraction, ...]     # per seat, what it added to the right-hand side (deals · y / c)


class Ratings:
    """Least squares over all outcomes; order-invariant (the same outcomes in any order give the
    same standings), refit incrementally.

    The sums (the information matrix, sparse; the right-hand side; the sum of squares) are exact,
    so the standings, the marks and a certification are an exact solve of them (:meth:`exact`)
    whatever the order.  Beside them an incremental state (the inverse information ``C``, kept
    centred on the bots with results as :class:`Fit` has it, and the strengths ``s = C b``)
    follows every outcome: a table of ``N`` adds ``d/N · u uᵀ`` for each of its pairs
    (``u = e_a − e_b``), a Sherman–Morrison update (``O(k · m)`` kept as a rank-one term beside
    the ``m`` pending, ``Θ(k²)`` when :data:`FOLD_BLOCK` of them are applied together; ``O(k)`` for
    ``s``), folded in when the fit is next asked for (:meth:`fit`, what the matchmaking reads), and
    replaced by an exact solve every :data:`REFIT_EVERY` outcomes or ``k``, whichever is more.
    The state is a function of the sequence of outcomes alone (not of when the fit is asked for,
    nor of when or in what order the bots were entered: each fold works entry by entry or over
    the bots with results in name order, the terms are applied at fixed points of the sequence
    (every :data:`FOLD_BLOCK`, a bot's first result, an exact solve), each sum over bots runs in
    name order, the rows of bots without results are rebuilt from their formulas), so a host
    restarted on the same tables chooses the same ones."""

    def __init__(self, resolution: float) -> None:
        if not (resolution > 0 and math.isfinite(resolution)):
            raise ValueError(f"the resolution must be a positive number of points a deal, not {resolution!r}")
        self.resolution = float(resolution)
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        # the data's information matrix times SCALE, whole numbers (exact in any order): its diagonal,
        # and its off-diagonal entries (i < j) where two bots met (only those: sparse)
        self._diag: list[int] = []
        self._off: dict[tuple[int, int], int] = {}
        self._rhs: list[Fraction] = []
        self._b: list[float] = []     # float(self._rhs[i])
        self._squares = Fraction(0)   # Σ deals · |y / c|²
        self._observations = 0        # Σ (N − 1) over the tables
        self._tables: list[int] = []
        self._deals: list[int] = []
        self._played = 0              # bots with at least one table
        self._met: dict[tuple[int, int], int] = {}  # (i < j) -> the latest table at which they met
        self._by_name: tuple[np.ndarray, np.ndarray] | None = None  # (rank of each name, the centre), cached
        # the incremental state over the bots it knows: C as (unit, cw, wcw) centred on the bots with
        # results among the outcomes folded in (``known``; every bot while none has), and s = C b
        self._unit = np.zeros((0, 0))
        self._cw = np.zeros(0)
        self._wcw = 0.0
        self._s = np.zeros(0)
        self._known = np.zeros(0, dtype=bool)
        # unit = self._unit − Σ_t alpha_t z_t z_tᵀ: the rank-one updates not applied yet, z over the
        # bots known in name order (``_columns``: so one block product gives the same bits whatever
        # the bots' indexes), applied once FOLD_BLOCK are pending
        self._columns = np.zeros(0, dtype=int)
        self._column_of = np.zeros(0, dtype=int)  # each known bot's place in _columns
        self._z = np.zeros((FOLD_BLOCK, 0))
        self._alpha = np.zeros(FOLD_BLOCK)
        self._m = 0
        self._shared = False          # self._unit is a live fit's: copied before it is written
        self._pending: list[_Step] = []  # the outcomes since the last exact solve called for, not folded in yet
        self._since = 0               # outcomes counted since the last exact solve called for
        self._stale = False           # the state is to be the exact solve of the sums less the pending outcomes
        self._fit: Fit | None = None
        self._handed: weakref.ref[Fit] | None = None  # the last fit handed out (it shares self._unit and self._cw)
        self._exact: Fit | None = None

    # -- input -------------------------------------------------------------------------------

    def add_bot(self, name: str) -> None:
        """Enter a bot (rating 0, no results); entering it again changes nothing."""
        if name in self._index:
            return
        self._index[name] = len(self._names)
        self._names.append(name)
        self._rhs.append(Fraction(0))
        self._b.append(0.0)
        self._diag.append(0)
        self._tables.append(0)
        self._deals.append(0)
        self._by_name = None
        self._fit = self._exact = None

    def add(self, outcome: Outcome) -> None:
        """Count a finished table (``O(N²)``; the float work waits for the next fit).

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
        idx = tuple(self._index[b] for b in bots)
        scale = Fraction(n - 1, n)  # 1 / c
        rhs = tuple(deals * v * scale for v in y)
        for a, i in enumerate(idx):
            self._rhs[i] += rhs[a]
            self._b[i] = float(self._rhs[i])
            if self._tables[i] == 0:
                self._played += 1
                self._by_name = None
            self._tables[i] += 1
            self._deals[i] += deals
            self._diag[i] += deals * (SCALE - SCALE // n)
            for j in idx:
                if i < j:
                    self._off[i, j] = self._off.get((i, j), 0) - deals * (SCALE // n)
                    self._met[i, j] = max(self._met.get((i, j), -1), outcome.table)
        self._squares += deals * sum((v * scale) ** 2 for v in y)
        self._observations += n - 1
        self._since += 1
        if self._since >= max(REFIT_EVERY, self._played):  # an exact solve of the sums as they are now
            self._since, self._stale = 0, True
            self._pending.clear()
        else:
            self._pending.append(_Step(idx, deals, rhs))
        self._fit = self._exact = None

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
        """The incremental fit (cached until the next change): the outcomes not folded in yet are,
        ``O(k · m)`` each and ``Θ(k²)`` amortised (:meth:`_fold`).  It equals an exact solve (:meth:`exact`) to rounding (about 1e-12 relative)."""
        if self._fit is None:
            self._catch_up()
            z = np.zeros((self._m, len(self._names)))
            z[:, self._columns] = self._z[:self._m]
            self._fit = self._make_fit(self._unit, self._cw, self._wcw, self._s, z, self._alpha[:self._m].copy())
            self._handed = weakref.ref(self._fit)
        return self._fit

    def exact(self) -> Fit:
        """The exact solve of the sums (``O(k³)``; cached until the next change): what the standings
        and the marks report, bit for bit the same whatever the order of the outcomes."""
        if self._exact is None:
            cov, s = self._solve(self._diag, self._off, self._rhs)
            self._exact = self._make_fit(*self._centred(cov, np.array(self._diag) > 0), s)
        return self._exact

    def _centre_on(self, cov: np.ndarray, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """``(unit, cw, wcw)`` of ``C`` with ``w`` uniform over ``centre`` (indexes in name order:
        the sums are a function of the bots, not of their indexes); ``O(k²)``."""
        cw = cov[centre].sum(axis=0) / len(centre)
        wcw = float(cw[centre].sum() / len(centre))
        unit = cov - cw[:, None]
        unit -= (cw - wcw)[None, :]
        return unit, cw, wcw

    def _in_name_order(self, known: np.ndarray) -> np.ndarray:
        """The indexes ``known``, in name order."""
        rank = self._names_order()[0]
        idx = np.flatnonzero(known)
        return idx[np.argsort(rank[idx])]

    def _centred(self, cov: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The state of ``C``: centred on the bots ``known`` to have results (``w = 0``, ``unit = C``, while none has)."""
        if not known.any():
            return cov.copy(), np.zeros(len(cov)), 0.0
        return self._centre_on(cov, self._in_name_order(known))

    def _tidy(self) -> None:
        """The rows of the bots without results (uncoupled: ``C`` is ``1/prior`` on their diagonal, 0
        elsewhere; ``s`` and ``cw`` 0) as those formulas make them, whatever the folds did to them:
        so the state is the same whenever a bot was entered.  ``O(k)`` a bot without results."""
        unknown = np.flatnonzero(~self._known)
        if len(unknown) == 0:
            return
        self._cw[unknown] = 0.0
        self._s[unknown] = 0.0
        row = -(self._cw - self._wcw)
        self._own_unit()
        self._unit[unknown, :] = row[None, :]
        self._unit[:, unknown] = row[:, None]
        self._unit[unknown, unknown] += 1.0 / PRIOR_DEALS

    def _own_unit(self) -> None:
        """Before ``self._unit`` is written in place: a copy of it, if a fit handed out still reads it."""
        if self._shared:
            self._unit, self._shared = self._unit.copy(), False

    def _catch_up(self) -> None:
        """Fold the pending outcomes into the incremental state (after the exact solve called for, if one is)."""
        k = len(self._names)
        old = len(self._s)
        alive = self._handed is not None and self._handed() is not None
        self._handed = None
        self._shared = alive
        changed = False
        if old < k:  # bots entered since: no results (their rows are made by _tidy)
            unit = np.zeros((k, k))
            unit[:old, :old] = self._unit
            self._unit, self._shared = unit, False
            self._cw = np.concatenate([self._cw, np.zeros(k - old)])
            self._s = np.concatenate([self._s, np.zeros(k - old)])
            self._known = np.concatenate([self._known, np.zeros(k - old, dtype=bool)])
            self._column_of = np.concatenate([self._column_of, np.full(k - old, -1)])
            changed = True
        pending, self._pending = self._pending, []
        if self._stale:
            # the sums as they were at the last outcome that called for an exact solve: the later
            # outcomes taken off again (exact)
            diag, off, rhs = list(self._diag), dict(self._off), list(self._rhs)
            for step in pending:
                n = len(step.idx)
                for a, i in enumerate(step.idx):
                    diag[i] -= step.deals * (SCALE - SCALE // n)
                    rhs[i] -= step.rhs[a]
                    for j in step.idx:
                        if i < j:
                            off[i, j] += step.deals * (SCALE // n)
                            if off[i, j] == 0:
                                del off[i, j]
            cov, self._s = self._solve(diag, off, rhs)
            self._known = np.array(diag, dtype=int) > 0
            self._unit, self._cw, self._wcw = self._centred(cov, self._known)
            self._shared, self._stale, changed = False, False, True
            self._set_columns()
        if pending:
            if alive:
                self._cw = self._cw.copy()  # a fit handed out still reads the old one
            for step in pending:
                self._fold(step)
        if pending or changed:
            self._tidy()

    def _set_columns(self) -> None:
        """The bots known, in name order, as the columns of the pending updates (none pending)."""
        self._columns = self._in_name_order(self._known)
        self._column_of = np.full(len(self._known), -1)
        self._column_of[self._columns] = np.arange(len(self._columns))
        self._z = np.zeros((FOLD_BLOCK, len(self._columns)))
        self._m = 0

    def _row(self, i: int) -> np.ndarray:
        """``unit[i]`` over the columns (the bots known, in name order): ``O(k · m)``."""
        m, at = self._m, int(self._column_of[i])
        return self._unit[i, self._columns] - (self._alpha[:m] * self._z[:m, at]) @ self._z[:m]

    def _apply(self) -> None:
        """The pending rank-one updates applied to the dense state, in one matrix product over the
        bots known in name order (BLAS-3, a few rows at a time; ``O(k² · m)`` flops, one pass over
        the ``k × k`` state)."""
        m = self._m
        if not m:
            return
        z = self._z[:m]
        self._own_unit()
        za, columns = z.T * self._alpha[:m], self._columns
        # the product's columns in the bots' indexes (a bot without results reads any: _tidy
        # rebuilds its row and column), so that the rows are written whole
        at = np.maximum(self._column_of, 0)
        # a few rows at a time: OpenBLAS multiplies on one thread below m·n·k = 4 × 65536 (its
        # GEMM_MULTITHREAD_THRESHOLD), and its threads' spinning costs more CPU than this product
        rows = max(1, 4 * 65536 // (len(columns) * m))
        for r in range(0, len(columns), rows):
            self._unit[columns[r:r + rows]] -= (za[r:r + rows] @ z)[:, at]
        self._m = 0

    def _fold(self, step: _Step) -> None:
        """Sherman–Morrison for each pair of the table (``u = e_a − e_b``, ``h = d / N``):
        ``C ← C − α v vᵀ`` with ``v = C u``, ``α = h / (1 + h uᵀv)``; in the centred form
        ``unit ← unit − α z zᵀ`` with ``z = unit u`` (``v = z + uᵀcw``), ``cw`` and ``s ← C b`` in
        ``O(k)``.  The update of ``unit`` is kept as ``(α, z)``, ``z`` worked out in ``O(k · m)``
        from the dense state and the ``m`` updates pending, and applied with the others once
        :data:`FOLD_BLOCK` are pending (or the centre moves): the dense state is still ``Θ(k²)``
        flops a table, in a matrix product every ``FOLD_BLOCK`` tables instead of two passes over
        it a pair.  Entry by entry, or over the bots in name order: the result does not depend on
        the bots' indexes."""
        new = [i for i in step.idx if not self._known[i]]
        if new:  # a bot's first result: the centre takes it in (C is the same, in O(k²))
            self._apply()
            self._tidy()
            self._known[new] = True
            self._set_columns()
            centre = self._columns
            self._own_unit()
            unit, cw = self._unit, self._cw
            r = unit[centre].sum(axis=0) / len(centre)  # unit w'
            rho = float(r[centre].sum() / len(centre))
            m = float(cw[centre].sum() / len(centre))  # cwᵀ w'
            unit -= r[:, None]
            unit -= (r - rho)[None, :]
            cw += r
            cw += m - self._wcw
            self._wcw = rho + 2.0 * m - self._wcw
        cw, s, columns = self._cw, self._s, self._columns
        n = len(step.idx)
        h = step.deals / n
        z = np.zeros(len(s))  # 0 at the bots without results: their rows are _tidy's
        for x, a in enumerate(step.idx):
            for b in step.idx[x + 1:]:
                if self._m == FOLD_BLOCK:
                    self._apply()
                z[columns] = self._row(a) - self._row(b)  # symmetric: a row is a column
                dc = float(cw[a] - cw[b])
                alpha = h / (1.0 + h * float(z[a] - z[b]))
                ds = alpha * float(s[a] - s[b])  # C' b = C b − α v (uᵀ C b)
                s -= ds * z
                s -= ds * dc
                cw -= (alpha * dc) * z  # C' w = C w − α v (vᵀ w), vᵀ w = uᵀ cw
                cw -= alpha * dc * dc
                self._wcw -= alpha * dc * dc
                self._z[self._m] = z[columns]
                self._alpha[self._m] = alpha
                self._m += 1
        wcw = self._wcw
        for a, i in enumerate(step.idx):
            d = float(step.rhs[a])  # + C' Δb, C' e_i = unit[i] + cw + (cw_i − wcw)
            s[columns] += d * self._row(i)
            s += d * cw
            s += d * float(cw[i] - wcw)

    def _solve(self, diag: list[int], off: dict[tuple[int, int], int], rhs: list[Fraction]) -> tuple[np.ndarray, np.ndarray]:
        """``C`` and ``s`` of the sums given, exactly: the bots with results in name order (a
        function of the sums, not of the indexes), the others uncoupled."""
        k = len(self._names)
        cov = np.zeros((k, k))
        cov[np.arange(k), np.arange(k)] = 1.0 / PRIOR_DEALS
        s = np.zeros(k)
        played = sorted((i for i in range(k) if diag[i] > 0), key=self._names.__getitem__)
        p = len(played)
        if p:
            at = np.full(k, -1)
            at[played] = np.arange(p)
            info = np.zeros((p, p))
            info[np.arange(p), np.arange(p)] = np.array([diag[i] for i in played], dtype=float) / SCALE + PRIOR_DEALS
            if off:
                pairs = np.array(list(off), dtype=int)
                values = np.fromiter(off.values(), dtype=float, count=len(off)) / SCALE
                info[at[pairs[:, 0]], at[pairs[:, 1]]] = values
                info[at[pairs[:, 1]], at[pairs[:, 0]]] = values
            inverse = np.linalg.inv(info)
            inverse = (inverse + inverse.T) / 2.0
            cov[np.ix_(played, played)] = inverse
            s[played] = inverse @ np.array([float(rhs[i]) for i in played])
        return cov, s

    def _names_order(self) -> tuple[np.ndarray, np.ndarray]:
        """Each bot's rank by name, and the centre: the bots with results by name (all before any)."""
        if self._by_name is None:
            by_name = sorted(range(len(self._names)), key=self._names.__getitem__)
            rank = np.empty(len(by_name), dtype=int)
            rank[by_name] = np.arange(len(by_name))
            centre = [i for i in by_name if self._tables[i] > 0] if self._played else by_name
            self._by_name = (rank, np.array(centre, dtype=int))
        return self._by_name

    def _make_fit(self, unit: np.ndarray, cw: np.ndarray, wcw: float, s: np.ndarray, z: np.ndarray | None = None,
                  alpha: np.ndarray | None = None) -> Fit:
        k = len(self._names)
        if k == 0:
            return Fit((), np.zeros(0), np.zeros((0, 0)), np.zeros(0), 0.0, math.inf, 0, ())
        _, centre = self._names_order()
        if not self._played:  # no results: the state is C itself (no update pending), the ratings centred on every bot
            unit, cw, wcw = self._centre_on(unit, centre)
        rating, sigma2, dof, order = self._judged(s)
        if z is None or alpha is None:
            return Fit(tuple(self._names), rating, unit, cw, wcw, sigma2, dof, tuple(int(i) for i in order))
        return Fit(tuple(self._names), rating, unit, cw, wcw, sigma2, dof, tuple(int(i) for i in order), z, alpha)

    def _judged(self, s: np.ndarray) -> tuple[np.ndarray, float, int, np.ndarray]:
        """For the raw strengths ``s`` of every bot: the ratings, σ², the degrees of freedom and
        the order (indexes, best first, ties by name)."""
        rank, centre = self._names_order()
        # centred on the mean of the bots with results, so a newcomer's wide prior does not widen theirs
        rating = s - math.fsum(s[centre].tolist()) / len(centre)
        # the residuals' sum of squares: Σ d|y/c|² − 2 sᵀb + sᵀ L s, and sᵀ L s = sᵀ b − prior · sᵀ s
        b = np.array(self._b)
        rss = float(self._squares - Fraction(math.fsum((s * b).tolist())) - PRIOR_DEALS * Fraction(math.fsum((s * s).tolist())))
        dof = self._observations - max(self._played - 1, 0)
        sigma2 = max(rss, 0.0) / dof if dof >= 1 else math.inf
        return rating, sigma2, dof, np.lexsort((rank, -np.round(rating, 9)))

    def standings(self) -> list[Standing]:
        """Every bot, best first (ties by name), with its 95% interval (of the exact solve)."""
        fit = self.exact()
        t = t_quantile(0.975, fit.dof)
        out = []
        for i in fit.order:
            r = float(fit.rating[i])
            half = t * fit.se(i) if math.isfinite(t) and math.isfinite(fit.sigma2) else math.inf
            out.append(Standing(self._names[i], r, r - half, r + half, self._tables[i], self._deals[i]))
        return out

    def marks(self) -> list[Mark]:
        """The verdict between every two neighbours of the standings (one fewer than the bots), of the exact solve."""
        fit = self.exact()
        out = []
        for i, j in zip(fit.order, fit.order[1:]):
            diff = float(fit.rating[i] - fit.rating[j])
            out.append(Mark(self._names[i], self._names[j], verdict(diff, fit.se_diff(i, j), fit.dof, self.resolution)))
        return out

    def _with_later(self, later: list[Outcome], whole: Ratings) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int] | None:
        """``whole``'s ratings, order (best first), variances (over σ²) of each two neighbours'
        difference, σ² and degrees of freedom, from this incremental fit and ``later`` by Woodbury
        (``None``: too many later seats, a later bot this fit does not know, no bot here, or fewer
        than two bots there)."""
        k = len(whole._names)
        if k < 2:
            return None
        if sum(len(o.bots) - 1 for o in later) > LATER_SEATS or any(b not in self._index for o in later for b in o.bots):
            return None
        fit = self.fit()  # folds the outcomes pending into the state
        if not self._names:
            return None  # nothing to update (a host before its first choice)
        cw, wcw, s = fit.cw, fit.wcw, self._s
        # the later tables' information, d (I − J/N) on their seats, is U H Uᵀ with U's columns the
        # seats less the first (e_a − e_first) and H = d (I − J/N) over N − 1: H⁻¹ = (I + J) / d
        first, seat, blocks = [], [], []
        delta = np.zeros(len(s))
        for o in later:
            idx = [self._index[b] for b in o.bots]
            n = len(idx)
            first += [idx[0]] * (n - 1)
            seat += idx[1:]
            blocks.append((np.eye(n - 1) + 1.0) / o.deals)
            for i, m in zip(idx, o.margins):
                delta[i] += float(o.deals * Fraction(m) * Fraction(n - 1, n))
        t = s.copy()
        seated = np.flatnonzero(delta)
        for at_seat, row in zip(seated, fit.rows(seated)):
            t += delta[at_seat] * (row + cw + float(cw[at_seat] - wcw))  # s + C Δb
        at = np.array([self._index.get(name, -1) for name in whole._names])
        known = at >= 0
        if seat:
            A, B = np.array(seat), np.array(first)
            vt = fit.rows(A) - fit.rows(B) + (cw[A] - cw[B])[:, None]  # (C U)ᵀ, m × k
            hinv = np.zeros((len(seat), len(seat)))
            pos = 0
            for block in blocks:
                hinv[pos:pos + len(block), pos:pos + len(block)] = block
                pos += len(block)
            S = hinv + (vt[:, A] - vt[:, B])
            t = t - vt.T @ np.linalg.solve(S, t[A] - t[B])  # C' (b + Δb) = t − V S⁻¹ Uᵀ t
        s_all = np.zeros(k)
        s_all[known] = t[at[known]]
        rating, sigma2, dof, order = whole._judged(s_all)
        upper, lower = order[:-1], order[1:]
        # the neighbours' indexes in this fit (-1: a bot it does not know, uncoupled), and 0 in their stead
        hi, lo = at[upper], at[lower]
        hi0, lo0 = np.where(hi >= 0, hi, 0), np.where(lo >= 0, lo, 0)
        def raw(i: np.ndarray, j: np.ndarray) -> np.ndarray:
            return fit.entries(i, j) + cw[i] + cw[j] - wcw  # C's entries

        var = (np.where(hi >= 0, raw(hi0, hi0), 1.0 / PRIOR_DEALS) + np.where(lo >= 0, raw(lo0, lo0), 1.0 / PRIOR_DEALS)
               - 2.0 * np.where((hi >= 0) & (lo >= 0), raw(hi0, lo0), 0.0))
        if seat:
            q = np.where(hi >= 0, vt[:, hi0], 0.0) - np.where(lo >= 0, vt[:, lo0], 0.0)
            var = var - np.einsum("ij,ij->j", q, np.linalg.solve(S, q))
        return rating, order, var, sigma2, dof

    def certified(self, later: Sequence[Outcome] = (), whole: Ratings | None = None) -> bool:
        """Every neighbour mark of ``whole`` settled (separated or tied), as its exact solve has them.

        ``whole`` (by default these ratings) counts this one's outcomes and ``later`` (a host's
        ratings of every outcome, beside the choice's that lag behind them).  The marks are read off
        this incremental fit updated by ``later`` (Woodbury: ``O(k·m²)`` for ``m`` the seats of
        ``later`` less one a table, besides the fit's own folds) while one of them is open there and
        none is near its threshold; else (certified, or too near to tell) ``whole``'s exact solve
        decides.  So the host refits once a table, not once for the choice and again for this."""
        whole = self if whole is None else whole
        view = self._with_later(list(later), whole)
        if view is None:
            return all(m.verdict != "open" for m in whole.marks())
        rating, order, var, sigma2, dof = view
        if dof < 1:
            return False  # every mark open, none near
        se = np.sqrt(sigma2 * np.maximum(var, 0.0))
        diff = rating[order[:-1]] - rating[order[1:]]
        t2, t1, res = t_quantile(0.975, dof), t_quantile(0.95, dof), whole.resolution
        settled = (diff > t2 * se) | (np.abs(diff) + t1 * se < res)
        scale = np.abs(diff) + t2 * se + res
        near = bool(np.any(((np.abs(diff) > 0) & (np.abs(diff) < 1e-7)) | (np.abs(diff - t2 * se) <= GUARD * scale)
                           | (np.abs(np.abs(diff) + t1 * se - res) <= GUARD * scale)))
        if not near and not settled.all():
            return False
        return all(m.verdict != "open" for m in whole.marks())


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
