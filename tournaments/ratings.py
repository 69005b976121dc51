"""Ratings: a Plackett–Luce fit by the MM algorithm, on an Elo scale, with 95% intervals.

Only the standard library.  The model: bot ``i`` has a strength ``p_i > 0``; on a board (one
paired unit of a table, played in every rotation) the finishing order of the table's bots is
drawn place by place, the first among those left being bot ``i`` with probability
``p_i / Σ p`` over them (Plackett 1975, Luce 1959).  With two bots a board is a game won by ``i``
with probability ``p_i / (p_i + p_j)``: the Plackett–Luce model of two is the Bradley–Terry
model, and this fit is exactly the Bradley–Terry fit two-bot leagues had before tables of N.

**Why this model.**  A table of N bots says more than who won: it orders the bots.
Plackett–Luce uses the whole order with one strength per bot, the order of a board being the
bots' paired margins on it (their net less the others' mean, over the rotations: luck cancels,
so the order is the bots' doing).  It is the natural generalisation of the Bradley–Terry model
the two-bot ratings used, has a fit that is simple and always climbs the likelihood (Hunter's MM
algorithm: Hunter 2004, "MM algorithms for generalized Bradley–Terry models", §5), and needs
no library.  The TrueSkill family (e.g. ``openskill``) fits the same kind of data online, one
game after another, so its ratings depend on the order the tables finished in; a league stores
every board and can afford the batch fit, whose figures do not depend on that order.

**Ties.**  Bots with equal margins on a board share a place: the board counts as the average
of every strict order that breaks the tie, each with an equal share (two bots level: half a win
each, as the Bradley–Terry fit counted a draw).

**Prior (regularisation).**  Every bot also plays :data:`PRIOR_DRAWS` virtual drawn games
against a fixed reference of strength 1.  Without them a bot that won everything would have an
infinite strength (the likelihood keeps growing) and bots never compared would float freely;
with them every strength is finite and a bot with no games sits at the reference.  Two virtual
draws weigh little against a league's real outcomes: they pull each rating towards the
pool's average by about as much as one win and one loss would.

**Scale.**  ``rating = 400 · log10(p)``, the Elo scale (a 400-point gap is 10:1 odds of the
first place between two bots), shifted so the bots' mean rating is 0, or, with an ``anchor`` (a
gauntlet's bot), so the anchor is 0 and every other rating is a difference from it.

**Intervals.**  From the observed information: the negative Hessian of the log-likelihood
(prior included) in ``θ = ln p``, a sum over the choices of a place of
``diag(q) − q qᵀ`` (``q``: the choice probabilities among the bots left), is inverted for the
covariance, and the variance of each *centred* rating ``θ_i − mean(θ)`` (with an anchor: of
``θ_i − θ_anchor``, and the anchor itself has no interval) gives ``rating ± 1.96 · se``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PRIOR_DRAWS = 2.0
ELO = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


def method(anchor: str | None = None, per_table: int = 2) -> str:
    """The rating method in words, with what the ratings are relative to."""
    scale = "mean 0" if anchor is None else f"relative to {anchor}, the gauntlet bot, at 0"
    if per_table == 2:
        return (f"Bradley–Terry (MM algorithm) on duplicate boards, draws as half a win, Elo scale ({scale}); "
                f"prior: {PRIOR_DRAWS:g} virtual draws per bot against a reference; ± is a 95% interval from the observed information")
    return (f"Plackett–Luce (MM algorithm) on the finishing order of every duplicate board, bots level sharing the orders that "
            f"break the tie, Elo scale ({scale}); prior: {PRIOR_DRAWS:g} virtual draws per bot against a reference; "
            f"± is a 95% interval from the observed information")


METHOD = method()


@dataclass(frozen=True)
class Rating:
    name: str
    rating: float
    low: float
    high: float
    games: float  # real boards counted (virtual draws excluded)

    @property
    def half(self) -> float:
        return (self.high - self.low) / 2


def fit(names: Sequence[str], outcomes: Iterable[tuple[str, str, float]], prior: float = PRIOR_DRAWS,
        tol: float = 1e-10, max_iter: int = 100_000, anchor: str | None = None) -> dict[str, Rating]:
    """Fit ratings to two-bot ``outcomes``: ``(a, b, score of a)`` with 1 a win, 0.5 a draw, 0
    a loss (the Bradley–Terry fit: :func:`fit_orders` of orders of two).

    Raises:
        ValueError: an outcome names a bot not in ``names``, a score outside [0, 1],
            ``prior`` is not positive, or ``anchor`` is not in ``names``.
    """
    orders: list[tuple[Sequence[Sequence[str]], float]] = []
    for a, b, score in outcomes:
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a score must be between 0 and 1, not {score!r}")
        if a == b:
            if a not in names:
                raise ValueError(f"an outcome names an unknown bot: {a!r} vs {b!r}")
            continue
        # a score s is s of a win and 1 − s of a loss (½: a tie, the two orders half each)
        if score > 0:
            orders.append(([[a], [b]], score))
        if score < 1:
            orders.append(([[b], [a]], 1.0 - score))
    return fit_orders(names, orders, prior=prior, tol=tol, max_iter=max_iter, anchor=anchor)


def fit_orders(names: Sequence[str], orders: Iterable[tuple[Sequence[Sequence[str]], float]], prior: float = PRIOR_DRAWS,
               tol: float = 1e-10, max_iter: int = 100_000, anchor: str | None = None) -> dict[str, Rating]:
    """Fit ratings to finishing ``orders``: each ``(places, weight)``, ``places`` the bots of one
    board from the first place down, bots sharing a place in one list (``[["a"], ["b", "c"]]``),
    ``weight`` how many times it counts (1 a board).  Ratings are centred on the bots' mean, or
    relative to ``anchor`` when one is given.

    Raises:
        ValueError: an order names a bot not in ``names`` or one twice, a weight is negative,
            ``prior`` is not positive, or ``anchor`` is not in ``names``.
    """
    if anchor is not None and anchor not in names:
        raise ValueError(f"the anchor {anchor!r} is not one of the bots")
    if prior <= 0:
        raise ValueError("prior must be positive: without it a bot that won everything has no finite rating")
    index = {n: i for i, n in enumerate(names)}
    k = len(names)
    if k == 0:
        return {}
    counted = _counted(orders, index)
    chosen, sets, games = _choices(counted, k)
    p = _strengths(chosen, sets, k, prior, tol, max_iter)
    cov = _inverse(_information(p, sets, prior))
    theta = [math.log(x) for x in p]
    ref = names.index(anchor) if anchor is not None else None
    mean = sum(theta) / k if ref is None else theta[ref]
    out = {}
    for i, name in enumerate(names):
        # Var(θ_i − mean θ) = (e_i − 1/k)ᵀ C (e_i − 1/k); with an anchor, (e_i − e_a)ᵀ C (e_i − e_a)
        if ref is None:
            c = [(1.0 if j == i else 0.0) - 1.0 / k for j in range(k)]
        else:
            c = [(1.0 if j == i else 0.0) - (1.0 if j == ref else 0.0) for j in range(k)]
        var = sum(c[r] * cov[r][s] * c[s] for r in range(k) for s in range(k))
        se = math.sqrt(max(var, 0.0))
        r = ELO * (theta[i] - mean)
        out[name] = Rating(name, r, r - Z95 * ELO * se, r + Z95 * ELO * se, games[i])
    return out


def _counted(orders: Iterable[tuple[Sequence[Sequence[str]], float]], index: dict[str, int]) -> dict[tuple[tuple[int, ...], ...], float]:
    """The orders checked, as places of bot indexes, and the weight of each (the same order
    given twice counts twice).  Raises ValueError as :func:`fit_orders` says."""
    counted: dict[tuple[tuple[int, ...], ...], float] = {}
    for places, weight in orders:
        if weight < 0 or not math.isfinite(weight):
            raise ValueError(f"a weight must be a finite number at least 0, not {weight!r}")
        groups: list[tuple[int, ...]] = []
        for group in places:
            for b in group:
                if b not in index:
                    raise ValueError(f"an order names an unknown bot: {b!r}")
            if group:
                groups.append(tuple(sorted(index[b] for b in group)))
        members = [i for g in groups for i in g]
        if len(set(members)) != len(members):
            raise ValueError(f"an order names a bot twice: {places!r}")
        if len(members) >= 2 and weight > 0:
            counted[tuple(groups)] = counted.get(tuple(groups), 0.0) + weight
    return counted


def _choices(counted: dict[tuple[tuple[int, ...], ...], float], k: int) -> tuple[list[float], list[tuple[tuple[int, ...], float]], list[float]]:
    """An order as its choices (Plackett-Luce): the weight of the places each bot won, every set
    of bots left at a choice with its weight, and each bot's boards."""
    chosen = [0.0] * k  # the weight of the choices of a place each bot won
    stages: dict[tuple[int, ...], float] = {}  # the bots left at a choice -> its weight
    games = [0.0] * k
    for ranked, weight in counted.items():
        for i in (i for g in ranked for i in g):
            games[i] += weight
        # a shared place: every order that breaks the tie, an equal share each
        breaks = list(itertools.product(*(itertools.permutations(g) for g in ranked)))
        share = weight / len(breaks)
        for parts in breaks:
            order = [i for part in parts for i in part]
            for j in range(len(order) - 1):
                left = tuple(sorted(order[j:]))
                stages[left] = stages.get(left, 0.0) + share
                chosen[order[j]] += share
    return chosen, list(stages.items()), games


def _strengths(chosen: list[float], sets: list[tuple[tuple[int, ...], float]], k: int, prior: float, tol: float,
               max_iter: int) -> list[float]:
    """The bots' strengths by the minorize-maximize iteration, with ``prior`` virtual draws
    against a bot of strength 1."""
    half = prior / 2.0
    scored = [c + half for c in chosen]
    p = [1.0] * k
    for _ in range(max_iter):
        denom = [prior / (x + 1.0) for x in p]
        for left, weight in sets:
            w = weight / sum(p[i] for i in left)
            for i in left:
                denom[i] += w
        new = [scored[i] / denom[i] for i in range(k)]
        change = max(abs(math.log(x / y)) for x, y in zip(new, p))
        p = new
        if change < tol:
            break
    return p


def _information(p: list[float], sets: list[tuple[tuple[int, ...], float]], prior: float) -> list[list[float]]:
    """The observed information in θ = ln p (prior included)."""
    k = len(p)
    info = [[0.0] * k for _ in range(k)]
    for i in range(k):
        share = p[i] / (p[i] + 1.0)
        info[i][i] += prior * share * (1.0 - share)
    for left, weight in sets:
        total = sum(p[i] for i in left)
        q = {i: p[i] / total for i in left}
        for i in left:
            info[i][i] += weight * q[i] * (1.0 - q[i])
            for j in left:
                if i != j:
                    info[i][j] -= weight * q[i] * q[j]
    return info


def _inverse(m: list[list[float]]) -> list[list[float]]:
    """Gauss–Jordan inverse with partial pivoting (the information matrix is positive definite)."""
    n = len(m)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(m)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-300:
            raise ValueError("the information matrix is singular")
        a[col], a[pivot] = a[pivot], a[col]
        inv = 1.0 / a[col][col]
        a[col] = [x * inv for x in a[col]]
        for r in range(n):
            if r != col and a[r][col]:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [row[n:] for row in a]
