"""The ladder's matchmaking: which entries sit at the next table.

``Matchmaker.choose`` is a pure function of its arguments (the table number, the active entries in
join order, the ratings, the tables each entry was seated at, the tables each has waited, the
tables in play): the same arguments give the same table on every machine, whatever ``-j`` or the
timing.  The rule draws nothing at random today; ``seed`` is the ladder's, so that a randomised
rule would still be a function of the ladder's seed and the table number.  The rule, first that
applies:

1. **No starvation.**  An entry that has waited ``wait`` tables (default ``patience × ⌈k / S⌉``,
   ``k`` active entries, ``S`` seats) is *overdue*; the overdue entries are seated first, the
   longest waiting first (ties by join order), up to every seat.  So none waits more than
   ``wait + ⌊(k − 1) / S⌋`` tables (:meth:`Matchmaker.bound`): once overdue, each table it is not
   at seats ``S`` entries that waited at least as long, and each of the ``k − 1`` others can be
   ahead of it only once (seated, it has waited less than it ever after).
2. **Placement and the floor.**  An entry seated at fewer than ``floor`` tables (a newcomer) sits
   with the entries nearest its rating (with no result yet: the middle of the field), with at most
   two of its tables in play at once, so that its later tables follow its first results.
3. **Refresh.**  Every ``refresh``-th table seats the two neighbours of the standings whose last
   meeting is the oldest (never met: oldest of all), so no comparison rests on old tables alone,
   and a pair that looked settled by luck is played again (without it the intervals lose their
   coverage: rule 4 stops playing a pair when its estimate looks settled, which keeps the luck).
4. **Where the order is uncertain.**  Otherwise, among the pairs of entries at most ``window``
   places apart in the standings, the pair whose table is expected to do most (:class:`Outlook`),
   with the tables in play counted as if played (what a table will tell does not depend on its
   result): while the expected Kendall τ of the standings with the true order is below
   :data:`ORDER_TAU`, the fall in the expected number of pairs in the wrong order (every pair
   within ``window`` places: ``Σ P(N(0,1) > |D| / se)``); after that, the fall in the log of the
   variance of each open neighbour mark, floored at the variance that would settle it (a tied
   mark counts :data:`TIED_WEIGHT` towards separating, so the ladder keeps ordering after
   certification).  Each of the ``O(k · window)`` candidates reads only the pairs near it, entries
   of the covariance at most ``2 · window`` places apart in the standings, and only that band is
   worked out: the tables in play are rank-one corrections of the fit's covariance, not a copy of
   it updated (``O(k · m)`` a pair in play and ``O(k · window · m)`` for the band, ``m`` the pairs
   in play and the fit's own updates pending: a few dozen), so the choice is linear in the field.  The fit is the ratings' own (incremental,
   :mod:`tournaments.ladder.rating`).

The other seats of a table (after rule 1's, 2's or 3's first entries) go to the entries nearest
the first in rating, ties broken by join order; the table's entries are returned in that order.
:meth:`Matchmaker.rule` names the rule that seats a table (``bench.ladder`` counts them).

**What choosing pairs can buy** (issue 41 item 8, ``python -m bench.ladder``; bench/README.md has
the figures).  Certification: about a quarter of a round robin's deals, rule 4's marks objective
at work.  Kendall τ ≥ 0.95 with the true order: about 0.8× random pairing's deals, not the 0.5×
the issue asked for, and no variant tried does measurably better (a wider window, ordering
longer, more or less refresh or placement, the least-settled neighbours, random tables mixed in).
Nor would knowing the answer: rule 4 told the true strengths needs 0.97× random pairing's
deals (it plays the truly close pairs; the real rule, likely, gains by also replaying the pairs
that only look close because their order is wrong).  A table's margin is a number whose noise
does not depend on who plays (unlike a win, most informative between equals), so a table tells
as much about any two entries; the least-squares fit pools every path between two entries, and
random pairing's comparisons already reach every pair by short paths.  Seating near neighbours makes those paths long (random pairs
within 3 true places need 1.3× random pairing's deals), and what is left to a rule, more tables
for the close pairs and fewer for the clear ends, is worth 0.76× an even spread's deals at best:
the best spread of deals over every pair, told the true strengths (``python -m bench.ladder_design``,
40 fields of 20 bots; no field near 0.5×).  The rule is already about there.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from tournaments.ladder.rating import Fit, Ratings, t_quantile


class Matchmaker:
    def __init__(self, seats: int = 2, *, floor: int = 4, seed: bytes | int = 0, patience: int = 8, refresh: int = 10,
                 window: int = 3) -> None:
        if seats < 2:
            raise ValueError(f"a table seats two entries or more, not {seats}")
        if floor < 0 or patience < 1 or refresh < 1:
            raise ValueError("floor must be at least 0, patience and refresh at least 1")
        self.seats = seats
        self.floor = floor
        self.seed = seed
        self.patience = patience
        self.refresh = refresh
        self.window = window

    def wait(self, field: int) -> int:
        """Tables an entry may wait before it is overdue, in a field of ``field`` active entries."""
        return self.patience * -(-field // self.seats)

    def bound(self, field: int) -> int:
        """The most tables an entry waits while others play, in a field of ``field`` active entries."""
        return self.wait(field) + (field - 1) // self.seats

    def choose(self, table: int, active: Sequence[str], ratings: Ratings, played: Mapping[str, int],
               waited: Mapping[str, int], in_play: Sequence[Sequence[str]] = ()) -> tuple[str, ...]:
        """The entries of table ``table``.

        Args:
            table: the ladder's table number.
            active: the entries that may play, in join order.
            ratings: the ratings of the outcomes the host has counted.
            played: tables each entry was seated at (finished or in play).
            waited: tables each entry has waited since it was last seated (or since it became active).
            in_play: the entries of the tables seated whose outcomes ``ratings`` does not count yet
                (their information is expected: what they will tell does not depend on their result).

        Raises:
            ValueError: fewer active entries than seats, or an entry the ratings do not know.
        """
        if len(active) < self.seats:
            raise ValueError(f"{len(active)} active entries cannot fill a table of {self.seats}")
        fit = ratings.fit()
        position = {name: i for i, name in enumerate(fit.names)}
        missing = [a for a in active if a not in position]
        if missing:
            raise ValueError(f"{missing[0]!r} has no rating: add it to the ratings first")
        join = {name: n for n, name in enumerate(active)}
        k = len(active)
        rule = self.rule(table, active, ratings, played, waited)
        if rule == 1:
            overdue = sorted((a for a in active if waited.get(a, 0) >= self.wait(k)), key=lambda a: (-waited.get(a, 0), join[a]))
            return self._fill(overdue[: self.seats], active, fit, position)
        if rule == 2:
            newcomers = [a for a in active if self._newcomer(a, ratings, played)]
            first = min(newcomers, key=lambda a: (played.get(a, 0), join[a]))
            return self._fill([first], active, fit, position, skip=played.get(first, 0) - ratings.tables(first))
        rank = {i: r for r, i in enumerate(fit.order)}
        ranked = sorted(active, key=lambda a: rank[position[a]])
        if rule == 3:
            def age(p: tuple[str, str]) -> int:
                last = ratings.last_met(*p)
                return -1 if last is None else last
            a, b = min(zip(ranked, ranked[1:]), key=lambda p: (age(p), join[p[0]]))
            return self._fill([a, b], active, fit, position)
        deals = ratings.deals_per_table()
        view = Outlook(fit, [position[a] for a in ranked], ratings.resolution)
        place = {a: n for n, a in enumerate(ranked)}
        for seated in in_play:
            if all(b in place for b in seated):  # a table with a retired entry: left out
                view.expect([place[b] for b in seated], deals)
        p, q = view.best(self.window, deals)
        return self._fill([ranked[p], ranked[q]], active, fit, position)

    def rule(self, table: int, active: Sequence[str], ratings: Ratings, played: Mapping[str, int],
             waited: Mapping[str, int]) -> int:
        """Which of the module's rules (1 to 4) seats table ``table``: the first that applies, as
        :meth:`choose` applies it (the bench counts them).  ``O(k)``."""
        k = len(active)
        if any(waited.get(a, 0) >= self.wait(k) for a in active):
            return 1
        if any(self._newcomer(a, ratings, played) for a in active):
            return 2
        if table % self.refresh == self.refresh - 1:
            return 3
        return 4

    def _newcomer(self, entry: str, ratings: Ratings, played: Mapping[str, int]) -> bool:
        """Below the floor and fewer than two placement tables in play (a newcomer waits for its
        results before more placement tables)."""
        n = played.get(entry, 0)
        return n < self.floor and n - ratings.tables(entry) < 2

    def _fill(self, first: list[str], active: Sequence[str], fit: Fit, position: Mapping[str, int],
              skip: int = 0) -> tuple[str, ...]:
        """``first`` and then the entries nearest ``first[0]`` in rating, up to every seat (the
        ``skip`` nearest passed over: a newcomer's second table in play meets others)."""
        seated = list(first[: self.seats])
        rest = [a for a in active if a not in seated]  # in join order
        distance = np.abs(fit.rating[[position[a] for a in rest]] - fit.rating[position[seated[0]]])
        need = self.seats - len(seated)
        skip = min(skip, len(rest) - need)
        nearest = np.lexsort((np.arange(len(rest)), distance))[: skip + need]  # by distance, then join order
        seated += [rest[i] for i in nearest[skip:]]
        return tuple(seated)


class Outlook:
    """The field's pairs as they will be once the tables in play are counted, and what one more
    table would add to them.

    The covariance (in units of σ², over the active entries in standings order) after a table of
    ``d`` deals is a Sherman–Morrison update of the fit's: a table of ``N`` adds ``d/N`` of the
    information of every difference of two of its entries.  Rule 4 reads only the entries of
    entries a few places apart, so the fit's covariance is neither copied nor updated: the tables
    in play are kept as rank-one corrections beside the fit's own pending ones,
    ``U = base − Σ_t α_t v_t v_tᵀ`` (``base`` read through ``ranked``), and only the band of ``U``
    that :meth:`best` reads is worked out."""

    def __init__(self, fit: Fit, ranked: list[int], resolution: float) -> None:
        self.fit = fit
        self.ranked = np.array(ranked, dtype=int)
        self.resolution = resolution
        self.alpha = np.array(fit.alpha, dtype=float)
        self.v = fit.z[:, self.ranked]  # the corrections' vectors, over the standings' places

    def column(self, a: int) -> np.ndarray:
        """Column ``a`` of ``U`` (``a`` a place in the standings): ``O(k · m)`` for ``m`` corrections."""
        return self.fit.base[self.ranked[a], self.ranked] - (self.alpha * self.v[:, a]) @ self.v

    def expect(self, seats: list[int], deals: float) -> None:
        """Count a table in play (its information, not its result); ``seats`` are places:
        ``O(k · m)`` a pair of its seats, for ``m`` corrections counted before."""
        h = deals / len(seats)
        for n, a in enumerate(seats):
            for b in seats[n + 1:]:
                v = self.column(a) - self.column(b)
                self.alpha = np.append(self.alpha, h / (1.0 + h * (v[a] - v[b])))
                self.v = np.vstack([self.v, v])

    def band(self, width: int) -> np.ndarray:
        """``U[x, x + d]`` at ``[x, d]`` for ``d`` up to ``width`` (0 past the last place):
        ``O(k · width · m)``."""
        k = len(self.ranked)
        out = np.zeros((k, width + 1))
        base, r, v, alpha = self.fit.base, self.ranked, self.v, self.alpha
        for d in range(min(width, k - 1) + 1):
            out[:k - d, d] = base[r[:k - d], r[d:]] - alpha @ (v[:, :k - d] * v[:, d:])
        return out

    def best(self, window: int, deals: float) -> tuple[int, int]:
        """The positions of the two entries whose table is expected to do most (the module's
        rule 4), ties to the first."""
        P, Q, gains = self.gains(window, deals)
        c = int(np.argmax(gains))
        return int(P[c]), int(Q[c])

    def gains(self, window: int, deals: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The candidates (places ``P[c] < Q[c]``, at most ``window`` apart) and what a table of
        each is expected to do.  Each candidate reads only the pairs near it, entries of ``U`` at
        most ``2 · window`` places apart: ``O(k · window³)``, besides the band's ``O(k · window · m)``."""
        P, Q, near, valid, (pp, qq, pq), (cpp, cpq, cqp, cqq) = _layout(len(self.ranked), window)
        band = self.band(2 * window).ravel()
        var = np.maximum(band[pp] + band[qq] - 2 * band[pq], 1e-300)
        # the covariance of each candidate's difference with each near pair's
        cov = band[cpp] - band[cpq] - band[cqp] + band[cqq]
        h = deals / 2.0
        after = np.maximum(var[near] - h * cov * cov / (1.0 + h * var)[:, None], 1e-300)
        return P, Q, np.where(valid, self.gain(P, Q, var, near, after), 0.0).sum(axis=1)

    def gain(self, P: np.ndarray, Q: np.ndarray, var: np.ndarray, near: np.ndarray, after: np.ndarray) -> np.ndarray:
        """What a table does to each near pair (``after``: its variance then) if played by each candidate (rows)."""
        fit = self.fit
        diff = fit.rating[self.ranked[P]] - fit.rating[self.ranked[Q]]
        neighbours = Q == P + 1
        if not (math.isfinite(fit.sigma2) and fit.dof >= 1):
            return np.where(neighbours[near], np.log(var[near] / after), 0.0)
        t2, t1 = t_quantile(0.975, fit.dof), t_quantile(0.95, fit.dof)
        separate = np.maximum(diff, 0.0) / t2
        need = np.maximum(separate, (self.resolution - np.abs(diff)) / t1)
        settle = need ** 2 / fit.sigma2   # the variance that would settle the mark, in units of σ²
        tied = var <= settle
        settle = np.where(tied, separate ** 2 / fit.sigma2, settle)
        z = np.abs(diff) / math.sqrt(fit.sigma2)
        wrong = _tail(z / np.sqrt(var))
        k = len(self.ranked)
        fall = wrong[near] - _tail(z[near] / np.sqrt(after))
        if 1.0 - 4.0 * float(wrong.sum()) / (k * (k - 1)) < ORDER_TAU:
            # ordering: the fall in the expected number of pairs in the wrong order
            return fall
        weight = np.where(neighbours, np.where(tied, TIED_WEIGHT, 1.0), 0.0)
        floor = settle[near]
        marks = weight[near] * np.log(np.maximum(var[near], floor) / np.maximum(after, floor))
        return marks + ORDER_WEIGHT * fall


@functools.lru_cache(maxsize=4)
def _layout(k: int, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...],
                                          tuple[np.ndarray, ...]]:
    """What :meth:`Outlook.gains` reads in a field of ``k`` (a function of ``k`` and ``window``
    alone, kept for the next table): the candidates ``P[c] < Q[c]``, the pairs near each
    (``near[c]``, where ``valid``), and where in the band (raveled, ``2 · window + 1`` a row) the
    entries ``U[P, P]``, ``U[Q, Q]``, ``U[P, Q]`` and each candidate's with each near pair's are."""
    P, Q = np.repeat(np.arange(k), window), np.tile(np.arange(1, window + 1), k)
    Q += P
    P, Q = P[Q < k], Q[Q < k]  # by P, then by Q
    # near[c]: the pairs within ``window`` places of candidate c (padded with c itself, masked)
    first = np.searchsorted(P, P - window)
    last = np.searchsorted(P, Q + window, side="right")
    width = int((last - first).max())
    near = first[:, None] + np.arange(width)[None, :]
    valid = (near < last[:, None])
    near = np.where(valid, near, np.arange(len(P))[:, None])
    valid &= Q[near] <= (Q + window)[:, None]
    near = np.where(valid, near, np.arange(len(P))[:, None])  # so every entry read is within 2 · window places
    row = 2 * window + 1

    def at(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.minimum(x, y) * row + np.abs(x - y)

    pc, qc, pm, qm = P[:, None], Q[:, None], P[near], Q[near]
    out = (P, Q, near, valid, (at(P, P), at(Q, Q), at(P, Q)), (at(pc, pm), at(pc, qm), at(qc, pm), at(qc, qm)))
    for a in (*out[:4], *out[4], *out[5]):
        a.flags.writeable = False
    return out


def _tail(z: np.ndarray) -> np.ndarray:
    """P(N(0,1) > z) for z ≥ 0: the chance that two entries z standard errors apart are in the
    wrong order (Abramowitz and Stegun 7.1.26, within 1e-7: a choice, not a test, reads it)."""
    x = z / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return 0.5 * poly * np.exp(-x * x)


#: The expected Kendall τ (with the true order) below which a table serves the order, above which the marks.
ORDER_TAU = 0.95
#: What the order still weighs once the marks lead.
ORDER_WEIGHT = 0.2
#: What settling a tied mark's order is worth beside settling an open mark.
TIED_WEIGHT = 0.05
