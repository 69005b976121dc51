"""Ratings: a Bradley–Terry fit by the MM algorithm, on an Elo scale, with 95% intervals.

Only the standard library.  The model: bot ``i`` has a strength ``p_i > 0`` and beats bot ``j``
with probability ``p_i / (p_i + p_j)``; a draw counts as half a win for each.  The fit maximises
the likelihood of every recorded outcome with Hunter's MM (minorise–maximise) iteration
(Hunter 2004, "MM algorithms for generalized Bradley–Terry models"), which climbs the
likelihood at every step and needs no step size.

**Prior (regularisation).**  Every bot also plays :data:`PRIOR_DRAWS` virtual drawn games
against a fixed reference of strength 1.  Without them a bot that won everything would have an
infinite strength (the likelihood keeps growing) and bots never compared would float freely;
with them every strength is finite and a bot with no games sits at the reference.  Two virtual
draws weigh little against a league's real outcomes: they pull each rating towards the
pool's average by about as much as one win and one loss would.

**Scale.**  ``rating = 400 · log10(p)``, the Elo scale (a 400-point gap is 10:1 odds), shifted so
the bots' mean rating is 0, or, with an ``anchor`` (a gauntlet's bot), so the anchor is 0 and
every other rating is a difference from it.

**Intervals.**  From the observed information: the negative Hessian of the log-likelihood
(prior included) in ``θ = ln p`` is inverted for the covariance, and the variance of each
*centred* rating ``θ_i − mean(θ)`` (with an anchor: of ``θ_i − θ_anchor``, and the anchor itself
has no interval) gives ``rating ± 1.96 · se``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PRIOR_DRAWS = 2.0
ELO = 400.0 / math.log(10.0)
Z95 = 1.959963984540054

def method(anchor: str | None = None) -> str:
    """The rating method in words, with what the ratings are relative to."""
    scale = "mean 0" if anchor is None else f"relative to {anchor}, the gauntlet bot, at 0"
    return (f"Bradley–Terry (MM algorithm) on duplicate boards, draws as half a win, Elo scale ({scale}); "
            f"prior: {PRIOR_DRAWS:g} virtual draws per bot against a reference; ± is a 95% interval from the observed information")


METHOD = method()


@dataclass(frozen=True)
class Rating:
    name: str
    rating: float
    low: float
    high: float
    games: float  # real games counted (virtual draws excluded)

    @property
    def half(self) -> float:
        return (self.high - self.low) / 2


def fit(names: Sequence[str], outcomes: Iterable[tuple[str, str, float]], prior: float = PRIOR_DRAWS,
        tol: float = 1e-10, max_iter: int = 100_000, anchor: str | None = None) -> dict[str, Rating]:
    """Fit ratings to ``outcomes``: ``(a, b, score of a)`` with 1 a win, 0.5 a draw, 0 a loss.
    Ratings are centred on the bots' mean, or relative to ``anchor`` when one is given.

    Raises:
        ValueError: an outcome names a bot not in ``names``, a score outside [0, 1],
            ``prior`` is not positive, or ``anchor`` is not in ``names``.
    """
    if anchor is not None and anchor not in names:
        raise ValueError(f"the anchor {anchor!r} is not one of the bots")
    if prior <= 0:
        raise ValueError("prior must be positive: without it a bot that won everything has no finite rating")
    index = {n: i for i, n in enumerate(names)}
    k = len(names)
    wins = [[0.0] * k for _ in range(k)]  # wins[i][j]: i's score against j
    games = [[0.0] * k for _ in range(k)]
    for a, b, score in outcomes:
        if a not in index or b not in index:
            raise ValueError(f"an outcome names an unknown bot: {a!r} vs {b!r}")
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a score must be between 0 and 1, not {score!r}")
        i, j = index[a], index[b]
        if i == j:
            continue
        wins[i][j] += score
        wins[j][i] += 1.0 - score
        games[i][j] += 1.0
        games[j][i] += 1.0
    if k == 0:
        return {}

    half = prior / 2.0
    scored = [sum(row) + half for row in wins]
    p = [1.0] * k
    for _ in range(max_iter):
        new = []
        for i in range(k):
            denom = prior / (p[i] + 1.0)
            gi, pi = games[i], p[i]
            for j in range(k):
                if gi[j]:
                    denom += gi[j] / (pi + p[j])
            new.append(scored[i] / denom)
        change = max(abs(math.log(x / y)) for x, y in zip(new, p))
        p = new
        if change < tol:
            break

    # Observed information in θ = ln p (prior included), then the covariance.
    info = [[0.0] * k for _ in range(k)]
    for i in range(k):
        share = p[i] / (p[i] + 1.0)
        info[i][i] += prior * share * (1.0 - share)
        for j in range(k):
            if i != j and games[i][j]:
                q = p[i] / (p[i] + p[j])
                w = games[i][j] * q * (1.0 - q)
                info[i][i] += w
                info[i][j] -= w
    cov = _inverse(info)
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
        out[name] = Rating(name, r, r - Z95 * ELO * se, r + Z95 * ELO * se, sum(games[i]))
    return out


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
