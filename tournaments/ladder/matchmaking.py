"""The ladder's matchmaking: which entries sit at the next table.

``Matchmaker.choose`` is a pure function of its arguments (the table number, the active entries in
join order, the ratings, the tables each entry was seated at, the tables each has waited) and of
the ladder's seed: the same arguments give the same table on every machine, whatever ``-j`` or
the timing.  The rule, first that applies:

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
   meeting is the oldest (never met: oldest of all), so no comparison rests on old tables alone.
4. **Where the order is uncertain.**  Otherwise the two neighbours of the standings whose mark is
   least settled (below), and for tables of ``N`` the entries nearest them in rating.

The other seats of a table (after rule 1's, 2's or 3's first entries) go to the entries nearest
the first in rating, ties broken by join order; the table's entries are returned in that order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from tournaments.ladder.rating import Fit, Ratings, t_quantile


class Matchmaker:
    def __init__(self, seats: int = 2, *, floor: int = 4, seed: bytes | int = 0, patience: int = 8, refresh: int = 20,
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

        overdue = sorted((a for a in active if waited.get(a, 0) >= self.wait(k)), key=lambda a: (-waited.get(a, 0), join[a]))
        if overdue:
            return self._fill(overdue[: self.seats], active, fit, position, join)
        # a newcomer waits for its results before more placement tables, two in play at most
        newcomers = [a for a in active if played.get(a, 0) < self.floor and played.get(a, 0) - ratings.tables(a) < 2]
        if newcomers:
            first = min(newcomers, key=lambda a: (played.get(a, 0), join[a]))
            return self._fill([first], active, fit, position, join, skip=played.get(first, 0) - ratings.tables(first))
        rank = {i: r for r, i in enumerate(fit.order)}
        ranked = sorted(active, key=lambda a: rank[position[a]])
        if table % self.refresh == self.refresh - 1:
            def age(p: tuple[str, str]) -> int:
                last = ratings.last_met(*p)
                return -1 if last is None else last
            a, b = min(zip(ranked, ranked[1:]), key=lambda p: (age(p), join[p[0]]))
            return self._fill([a, b], active, fit, position, join)
        deals = ratings.deals_per_table()
        view = Outlook(fit, [position[a] for a in ranked], ratings.resolution)
        for seated in in_play:
            if all(b in position for b in seated):
                view.expect([position[b] for b in seated], deals)
        p, q = view.best(self.window, deals)
        return self._fill([ranked[p], ranked[q]], active, fit, position, join)

    def _fill(self, first: list[str], active: Sequence[str], fit: Fit, position: Mapping[str, int],
              join: Mapping[str, int], skip: int = 0) -> tuple[str, ...]:
        """``first`` and then the entries nearest ``first[0]`` in rating, up to every seat (the
        ``skip`` nearest passed over: a newcomer's second table in play meets others)."""
        seated = list(first[: self.seats])
        centre = float(fit.rating[position[seated[0]]])
        rest = sorted((a for a in active if a not in seated), key=lambda a: (abs(float(fit.rating[position[a]]) - centre), join[a]))
        need = self.seats - len(seated)
        skip = min(skip, len(rest) - need)
        seated += rest[skip: skip + need]
        return tuple(seated)


#: What settling a tied mark's order is worth beside settling an open mark.
TIED_WEIGHT = 0.05


class Outlook:
    """The field's marks as they will be once the tables in play are counted, and what one more
    table would add to them.

    The covariance after a table of ``d`` deals is a low-rank update of the fit's (Sherman–
    Morrison, one pair of the table at a time: a table of ``N`` adds ``d/N`` of every pair's
    difference), kept as a list of vectors so that reading a column costs ``O(k)`` per table in
    play, never the whole ``k × k`` matrix."""

    def __init__(self, fit: Fit, ranked: list[int], resolution: float) -> None:
        self.fit = fit
        self.ranked = np.array(ranked, dtype=int)
        self.resolution = resolution
        self.updates: list[tuple[np.ndarray, float]] = []  # (v, c): unit' = unit − Σ c v vᵀ

    def column(self, i: int) -> np.ndarray:
        col = np.array(self.fit.unit[:, i], dtype=float)
        for v, c in self.updates:
            col -= c * v * v[i]
        return col

    def expect(self, seats: list[int], deals: float) -> None:
        """Count a table in play (its information, not its result)."""
        h = deals / len(seats)
        for n, a in enumerate(seats):
            for b in seats[n + 1:]:
                v = self.column(a) - self.column(b)
                self.updates.append((v, h / (1.0 + h * (v[a] - v[b]))))

    def best(self, window: int, deals: float) -> tuple[int, int]:
        """The positions (in the standings of the active entries) of the two entries whose table
        would bring the order nearest to settled (:meth:`gains`), ties to the first."""
        fit, ranked = self.fit, self.ranked
        k = len(ranked)
        cols = np.stack([self.column(int(i)) for i in ranked])  # cols[p] = column of the entry at position p
        d = np.arange(1, window + 1)
        # every pair of positions (p, p + g), g ≤ window: its variance (in units of σ²) and difference
        P = np.array([p for p in range(k) for g in d if p + g < k], dtype=int)
        Q = np.array([p + g for p in range(k) for g in d if p + g < k], dtype=int)
        A, B = ranked[P], ranked[Q]
        var = np.maximum(cols[P, A] + cols[Q, B] - 2 * cols[P, B], 1e-300)
        diff = fit.rating[A] - fit.rating[B]
        value = self.value(P, Q, diff, var)
        h = deals / 2.0
        best, where = -math.inf, (0, 1)
        for c in range(len(P)):
            p, q = int(P[c]), int(Q[c])
            a, b = int(A[c]), int(B[c])
            ux = cols[p] - cols[q]
            xux = ux[a] - ux[b]
            near = (P >= p - window) & (Q <= q + window)
            cov = ux[A[near]] - ux[B[near]]
            after = np.maximum(var[near] - h * cov * cov / (1.0 + h * xux), 1e-300)
            gain = float(np.sum(value(near, after)))
            if gain > best:
                best, where = gain, (p, q)
        return where

    def value(self, P: np.ndarray, Q: np.ndarray, diff: np.ndarray, var: np.ndarray):  # type: ignore[no-untyped-def]
        fit = self.fit
        neighbours = Q == P + 1
        if not (math.isfinite(fit.sigma2) and fit.dof >= 1):
            def log_gain(near: np.ndarray, after: np.ndarray) -> np.ndarray:
                return np.where(neighbours[near], np.log(var[near] / after), 0.0)
            return log_gain
        t2, t1 = t_quantile(0.975, fit.dof), t_quantile(0.95, fit.dof)
        separate = np.maximum(diff, 0.0) / t2
        need = np.maximum(separate, (self.resolution - np.abs(diff)) / t1)
        floor = need ** 2 / fit.sigma2   # the settling variance, in units of σ²
        tied = var <= floor
        floor = np.where(tied, separate ** 2 / fit.sigma2, floor)
        z = np.abs(diff) / np.sqrt(fit.sigma2)
        before = _tail(z / np.sqrt(var))
        k = len(self.ranked)
        ordering = 1.0 - 4.0 * float(before.sum()) / (k * (k - 1)) < ORDER_TAU
        weight = np.where(neighbours, np.where(tied, TIED_WEIGHT, 1.0), 0.0) * (0.0 if ordering else 1.0)
        order_weight = 1.0 if ordering else ORDER_WEIGHT

        def gain(near: np.ndarray, after: np.ndarray) -> np.ndarray:
            marks = weight[near] * np.log(np.maximum(var[near], floor[near]) / np.maximum(after, floor[near]))
            order = before[near] - _tail(z[near] / np.sqrt(after))
            return marks + order_weight * order
        return gain


_erfc = np.frompyfunc(math.erfc, 1, 1)


def _tail(z: np.ndarray) -> np.ndarray:
    """P(N(0,1) > z): the chance that two entries z standard errors apart are in the wrong order."""
    return np.asarray(_erfc(z / math.sqrt(2.0)), dtype=float) / 2.0


ORDER_TAU = 0.95
ORDER_WEIGHT = 0.0
