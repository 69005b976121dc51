"""Elo: the logistic Elo of an expected score and back, the one-sided bound of a bot that won
(or lost) every play (:func:`elo_bound`), and a bot's Elo against a field of three or more from
its margin (:func:`field_elo`).  Pure, as :mod:`referee.stats.means`.
"""

from __future__ import annotations

import math

from referee.stats.means import Estimate, clean


def elo_of_score(s: float) -> float:
    """The logistic Elo difference of an expected score ``s`` (±inf at 1 and 0)."""
    if s >= 1.0:
        return math.inf
    if s <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def score_of_elo(elo: float) -> float:
    """The expected score of a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_bound(boards: int, confidence: float = 0.95) -> float:
    """The lower bound at ``confidence`` of the Elo of a bot that won every play of ``boards``
    boards (negated, the upper bound of one that lost every play), where the score's interval
    collapses to a point at the edge and the logistic Elo is infinite.

    One-sided and exact (Clopper–Pearson): were the chance of winning a whole board ``p``, all
    ``n`` won has probability ``p^n``, at least ``1 − confidence`` down to ``p = (1 − confidence)^(1/n)``
    (at 95%, ``1 − p`` is about the rule of three's ``3/n``).  A board not won scores at least
    0, so the expected score is at least ``p``, and the Elo at least :func:`elo_of_score` of it:
    at 95%, about +183 after 10 boards, +317 after 20, +606 after 100, and below 0 (no evidence
    of superiority yet) up to 4."""
    if boards < 1:
        raise ValueError(f"a bound needs at least one board, not {boards}")
    return elo_of_score((1.0 - confidence) ** (1.0 / boards))


def alike_interval(score: float, boards: int, confidence: float = 0.95) -> list[float]:
    """The interval at ``confidence`` of the expected score of bots whose ``boards`` boards all
    scored ``score`` (every board in one class): their spread is 0, so the t interval is a point
    (``0 [0, 0]`` for two bots level on 4 pairs) and says nothing.  As :func:`elo_bound`, one-sided
    and exact: were the chance of a board scoring ``score`` ``p``, all ``n`` alike has probability
    ``p^n``, at least ``1 − confidence`` down to ``p = (1 − confidence)^(1/n)``; the other boards
    could score anything from 0 to 1, so the expected score lies in ``[p · score, p · score + 1 − p]``
    (at ``score`` 1, :func:`elo_bound`'s).  Two bots level on 4 pairs at 95%: ``[0.236, 0.764]``,
    Elo ±204; on 20, ±49; on 100, ±10."""
    if boards < 1:
        raise ValueError(f"an interval needs at least one board, not {boards}")
    p = (1.0 - confidence) ** (1.0 / boards)
    return [p * score, p * score + 1.0 - p]


def finite(x: float, digits: int = 1) -> float | None:
    return clean(round(x, digits)) if math.isfinite(x) else None


def elo_of_z(z: float) -> float:
    """The logistic Elo of the score ``Φ(z)`` (the standard normal distribution function), kept
    exact in the tails: ``400 · (log10 Φ(z) − log10 Φ(−z))``; ±inf where a tail is below the
    smallest float.  Odd and increasing in ``z``."""
    p = 0.5 * math.erfc(-z / math.sqrt(2.0))
    q = 0.5 * math.erfc(z / math.sqrt(2.0))
    if p == 0.0:
        return -math.inf
    if q == 0.0:
        return math.inf
    return clean(400.0 * (math.log10(p) - math.log10(q)))


def field_elo(est: Estimate, sd: float) -> tuple[float | None, list[float | None] | None]:
    """A bot's Elo against the field from its mean board margin (three or more bots):
    :func:`elo_of_z` of ``margin / sd``, with ``sd`` the field's pooled spread
    (:func:`pooled_sd`), and its interval from the margin's.  The same ``sd`` for every bot makes
    it increase with the margin, so it orders the bots as the ranking does; the margins sum to 0
    over the field, so 0 is the field's mean.  Null with no spread yet (below two boards, or
    every board alike)."""
    if est.n < 2 or sd == 0.0:
        return None, None
    elo = finite(elo_of_z(est.mean / sd))
    ci = [finite(elo_of_z(est.low / sd)), finite(elo_of_z(est.high / sd))] if math.isfinite(est.half) else None
    return elo, ci
