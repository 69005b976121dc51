"""Rule 4's outlook reads the band of the covariance it needs, with the tables in play as rank-one
corrections: its choice and its expected gains are those of the dense reference (the whole
covariance copied in standings order and updated for every table in play), on random fields."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from tournaments.ladder.matchmaking import Outlook
from tournaments.ladder.rating import Fit, Outcome, Ratings


class DenseOutlook(Outlook):
    """The reference: the fit's covariance copied whole in standings order, each table in play a
    ``k × k`` Sherman–Morrison update, and every entry read off the copy."""

    def __init__(self, fit: Fit, ranked: list[int], resolution: float) -> None:
        super().__init__(fit, ranked, resolution)
        self.dense = np.array(fit.unit[np.ix_(self.ranked, self.ranked)], dtype=float)

    def expect(self, seats: list[int], deals: float) -> None:
        h = deals / len(seats)
        for n, a in enumerate(seats):
            for b in seats[n + 1:]:
                v = self.dense[:, a] - self.dense[:, b]
                self.dense -= (h / (1.0 + h * (v[a] - v[b]))) * np.outer(v, v)

    def gains(self, window: int, deals: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = len(self.ranked)
        P = np.array([p for p in range(k) for g in range(1, window + 1) if p + g < k], dtype=int)
        Q = np.array([p + g for p in range(k) for g in range(1, window + 1) if p + g < k], dtype=int)
        first = np.searchsorted(P, P - window)
        last = np.searchsorted(P, Q + window, side="right")
        width = int((last - first).max())
        near = first[:, None] + np.arange(width)[None, :]
        valid = (near < last[:, None])
        near = np.where(valid, near, np.arange(len(P))[:, None])
        valid &= Q[near] <= (Q + window)[:, None]
        U = self.dense
        var = np.maximum(U[P, P] + U[Q, Q] - 2 * U[P, Q], 1e-300)
        pc, qc, pm, qm = P[:, None], Q[:, None], P[near], Q[near]
        cov = U[pc, pm] - U[pc, qm] - U[qc, pm] + U[qc, qm]
        h = deals / 2.0
        after = np.maximum(var[near] - h * cov * cov / (1.0 + h * var)[:, None], 1e-300)
        return P, Q, np.where(valid, self.gain(P, Q, var, near, after), 0.0).sum(axis=1)


def random_field(rng: random.Random) -> tuple[Ratings, list[int], list[list[int]], float, int]:
    """Ratings of a random field after random tables (of two and three), its standings' order,
    random tables in play (places), their deals and a window."""
    k = rng.randint(5, 60)
    names = [f"e{i:02d}" for i in range(k)]
    strength = {n: rng.gauss(0, 10) for n in names}
    ratings = Ratings(rng.choice([0.5, 2.0, 8.0]))
    for n in rng.sample(names, k):
        ratings.add_bot(n)
    # few tables leave the noise unknown (the marks' branch of gain unused), many reach the marks
    for t in range(rng.choice([rng.randint(0, k // 2), rng.randint(k, 8 * k)])):
        seated = tuple(rng.sample(names, rng.choice([2, 2, 2, 3])))
        deals = rng.choice([4, 8, 12])
        raw = [Fraction(round(deals * (strength[b] + rng.gauss(0, 20))), deals) for b in seated]
        mean = sum(raw, Fraction(0)) / len(seated)
        ratings.add(Outcome(t, t, seated, tuple(r - mean for r in raw), deals))
    fit = ratings.fit()
    in_play = [rng.sample(range(k), rng.choice([2, 2, 3])) for _ in range(rng.randint(0, 8))]
    if in_play and rng.random() < 0.3:
        in_play += [in_play[0]] * 3  # one pair at several tables in play
    return ratings, list(fit.order), in_play, ratings.deals_per_table(), rng.choice([1, 2, 3, 3, 4, k - 1])


@pytest.mark.parametrize("seed", range(40))
def test_the_banded_outlook_chooses_as_the_dense_reference(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(5):
        ratings, ranked, in_play, deals, window = random_field(rng)
        fit = ratings.fit()
        banded, dense = Outlook(fit, ranked, ratings.resolution), DenseOutlook(fit, ranked, ratings.resolution)
        for seats in in_play:
            banded.expect(seats, deals)
            dense.expect(seats, deals)
        P, Q, gains = banded.gains(window, deals)
        P0, Q0, gains0 = dense.gains(window, deals)
        assert np.array_equal(P, P0) and np.array_equal(Q, Q0)
        assert np.allclose(gains, gains0, rtol=1e-9, atol=1e-12)
        best, reference = banded.best(window, deals), dense.best(window, deals)
        if best != reference:  # only a tie to rounding may part them
            at = {(int(p), int(q)): c for c, (p, q) in enumerate(zip(P0, Q0))}
            assert gains0[at[best]] == pytest.approx(gains0[at[reference]], rel=1e-9)
        # the band itself is the dense reference's, entry for entry
        width = min(2 * window, len(ranked) - 1)
        band = banded.band(width)
        for d in range(width + 1):
            assert np.allclose(band[: len(ranked) - d, d], np.diagonal(dense.dense, d), rtol=1e-9, atol=1e-12)
