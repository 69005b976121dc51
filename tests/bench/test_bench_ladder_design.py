"""bench.ladder_design: the expected pairs in the wrong order and its gradient are right, and the
best spread told the true strengths never needs more deals than the even one."""

from __future__ import annotations

import numpy as np
import pytest

from bench import ladder_design as D

pytest.importorskip("scipy")


def test_the_gradient_is_the_derivative() -> None:
    rng = np.random.default_rng(4)
    b = D.incidence(5)
    gaps = np.abs(b @ rng.normal(0.0, 10.0, 5))
    w = rng.uniform(5.0, 50.0, len(b))
    d, grad = D.wrong_pairs(w, gaps, b)
    for p in range(len(b)):
        step = np.zeros(len(b))
        step[p] = 1e-4 * w[p]
        numeric = (D.wrong_pairs(w + step, gaps, b)[0] - D.wrong_pairs(w - step, gaps, b)[0]) / (2 * step[p])
        assert grad[p] == pytest.approx(numeric, rel=1e-4, abs=1e-12)


def test_two_bots_a_known_answer() -> None:
    # two bots 10 points apart, 100 deals: the difference's variance is σ²/(100 + prior/2)
    b = D.incidence(2)
    d, _ = D.wrong_pairs(np.array([100.0]), np.array([10.0]), b)
    from scipy.stats import norm

    assert d == pytest.approx(norm.sf(10.0 / (D.NOISE / np.sqrt(100.0 + D.PRIOR_DEALS / 2))))


def test_the_best_spread_is_never_worse_and_helps_an_uneven_field() -> None:
    strengths = np.array([30.0, 29.0, 0.0, -25.0, -26.0, -60.0])  # two close pairs, the rest far apart
    b = D.incidence(len(strengths))
    gaps = np.abs(b @ strengths)
    deals = 2000.0
    even, _ = D.wrong_pairs(np.full(len(b), deals / len(b)), gaps, b)
    best, theta = D.best_spread(deals, gaps, b, np.zeros(len(b)))
    assert best < 0.8 * even
    # the deals go to the close pairs
    share = np.exp(theta - theta.max())
    share /= share.sum()
    close = [n for n, g in enumerate(gaps) if g == 1.0]
    assert share[close].sum() > 0.5


def test_a_field_needs_fewer_deals_spread_best_than_evenly() -> None:
    even, best = D.field(6, 0)
    assert 0 < best <= even
