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

from tournaments.ladder.rating import Fit, Ratings, t_quantile


class Matchmaker:
    def __init__(self, seats: int = 2, *, floor: int = 4, seed: bytes | int = 0, patience: int = 8, refresh: int = 20) -> None:
        if seats < 2:
            raise ValueError(f"a table seats two entries or more, not {seats}")
        if floor < 0 or patience < 1 or refresh < 1:
            raise ValueError("floor must be at least 0, patience and refresh at least 1")
        self.seats = seats
        self.floor = floor
        self.seed = seed
        self.patience = patience
        self.refresh = refresh

    def wait(self, field: int) -> int:
        """Tables an entry may wait before it is overdue, in a field of ``field`` active entries."""
        return self.patience * -(-field // self.seats)

    def bound(self, field: int) -> int:
        """The most tables an entry waits while others play, in a field of ``field`` active entries."""
        return self.wait(field) + (field - 1) // self.seats

    def choose(self, table: int, active: Sequence[str], ratings: Ratings, played: Mapping[str, int],
               waited: Mapping[str, int]) -> tuple[str, ...]:
        """The entries of table ``table``.

        Args:
            table: the ladder's table number.
            active: the entries that may play, in join order.
            ratings: the ratings of the outcomes the host has counted.
            played: tables each entry was seated at (finished or in play).
            waited: tables each entry has waited since it was last seated (or since it became active).

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
        pairs = list(zip(ranked, ranked[1:]))
        if table % self.refresh == self.refresh - 1:
            def age(p: tuple[str, str]) -> int:
                last = ratings.last_met(*p)
                return -1 if last is None else last
            a, b = min(pairs, key=lambda p: (age(p), join[p[0]]))
            return self._fill([a, b], active, fit, position, join)
        a, b = min(pairs, key=lambda p: (settledness(fit, position[p[0]], position[p[1]], ratings.resolution), join[p[0]]))
        return self._fill([a, b], active, fit, position, join)

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


def settledness(fit: Fit, upper: int, lower: int, resolution: float) -> float:
    """How far the mark between two neighbours is from settled: below 1 open, above 1 settled
    (the larger of the difference over its separation threshold and the room under the
    resolution over the tie's)."""
    se = fit.se_diff(upper, lower)
    if not math.isfinite(se) or not math.isfinite(fit.sigma2):
        return -math.inf
    diff = float(fit.rating[upper] - fit.rating[lower])
    if se == 0:
        return math.inf
    return max(diff / (t_quantile(0.975, fit.dof) * se), (resolution - abs(diff)) / (t_quantile(0.95, fit.dof) * se))
