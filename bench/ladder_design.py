"""What any choice of pairs could buy for Kendall τ, told the answer: ``python -m bench.ladder_design [--fields N] [--bots K]``.

:mod:`bench.ladder` measures the matchmaker against random pairing and a round robin.  This asks
the question behind its τ figure: on the same model (bots' strengths of standard deviation
:data:`bench.ladder.SPREAD`, a deal's paired margin the true difference plus noise of standard
deviation :data:`bench.ladder.NOISE`, the ratings' least-squares fit with its ridge of
:data:`tournaments.ladder.rating.PRIOR_DEALS`), how few deals would do if the deals were spread
over the pairs in the best way for the field's **true** strengths, against the same deals spread
evenly over every pair (a round robin)?

With ``w_p`` deals on pair ``p`` the fit's difference of bots ``i`` and ``j`` has variance
``σ² R_ij(w)`` (``R`` the inverse of the information ``Bᵀ W B + prior · I``, read between ``i``
and ``j``), so the expected number of pairs in the wrong order is
``D(w) = Σ_{i<j} P(N(0,1) > |s_i − s_j| / (σ √R_ij))``, and τ = 0.95 is ``D = 0.025 · k(k−1)``.
For each field it finds the deals ``N_even`` at which the even spread reaches that ``D``, and
``N_best`` at which the best spread does (``w`` optimised over every pair by L-BFGS on a softmax,
with the exact gradient ``∂R_ij/∂w_p = −(b_ijᵀ R b_p)²``; restarts from random spreads find the
same optimum).  ``N_best / N_even`` bounds what a static choice of pairs buys on expectation,
however it is made; a rule that does not know the strengths has to learn them as it goes.

It prints a line per field and the mean, the spread, the least and the most of the ratio.
scipy is needed (open-spiel brings it, in the ``rl`` extra that ``test`` includes, and in ``bench``).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from bench.ladder import NOISE, SPREAD
from tournaments.ladder.rating import PRIOR_DEALS

TAU = 0.95


def incidence(k: int) -> np.ndarray:
    """``B``: a row per pair ``i < j``, ``+1`` at ``i`` and ``−1`` at ``j``."""
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    b = np.zeros((len(pairs), k))
    for n, (i, j) in enumerate(pairs):
        b[n, i], b[n, j] = 1.0, -1.0
    return b


def wrong_pairs(w: np.ndarray, gaps: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray]:
    """``D(w)``, the expected pairs in the wrong order with ``w`` deals on each pair, and its gradient in ``w``."""
    from scipy.stats import norm

    info = b.T @ (w[:, None] * b) + PRIOR_DEALS * np.eye(b.shape[1])
    x = b @ np.linalg.inv(info) @ b.T  # x[p, q] = b_pᵀ C b_q
    r = np.maximum(np.diag(x), 1e-300)
    z = gaps / (NOISE * np.sqrt(r))
    d_dr = norm.pdf(z) * z / (2.0 * r)
    return float(norm.sf(z).sum()), -(d_dr[:, None] * x * x).sum(axis=0)


def best_spread(deals: float, gaps: np.ndarray, b: np.ndarray, start: np.ndarray) -> tuple[float, np.ndarray]:
    """The least ``D`` of ``deals`` deals spread over the pairs, and the softmax logits that spread them."""
    from scipy.optimize import minimize

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        e = np.exp(theta - theta.max())
        p = e / e.sum()
        d, grad = wrong_pairs(deals * p, gaps, b)
        g = grad * deals
        return d, p * (g - float(p @ g))

    found = minimize(objective, start, jac=True, method="L-BFGS-B", options={"maxiter": 400})
    return float(found.fun), found.x


def field(k: int, seed: int) -> tuple[float, float]:
    """``N_even`` and ``N_best`` for field ``seed`` of ``k`` bots."""
    from scipy.optimize import brentq

    strengths = np.random.default_rng([seed, k]).normal(0.0, SPREAD, k)
    b = incidence(k)
    gaps = np.abs(b @ strengths)
    target = (1.0 - TAU) / 2.0 * len(b)
    n_even = brentq(lambda n: wrong_pairs(np.full(len(b), n / len(b)), gaps, b)[0] - target, 1.0, 1e9, rtol=1e-4)
    theta = np.zeros(len(b))

    def best(n: float) -> float:
        nonlocal theta
        d, theta = best_spread(n, gaps, b, theta)
        return d - target

    n_best = brentq(best, 0.05 * n_even, 1.2 * n_even, rtol=1e-3)
    return n_even, n_best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ladder_design", description=__doc__.split("\n\n")[0])
    parser.add_argument("--fields", type=int, default=40, help="simulated fields (default 40)")
    parser.add_argument("--bots", type=int, default=20, help="bots a field (default 20; the cost grows as bots⁶)")
    args = parser.parse_args(argv)
    ratios = []
    print(f"{args.bots} bots a field, strengths sd {SPREAD:g}, noise sd {NOISE:g} points a deal, prior {PRIOR_DEALS} deal; "
          f"deals for an expected Kendall tau of {TAU} with the true order")
    for f in range(args.fields):
        even, best = field(args.bots, f)
        ratios.append(best / even)
        print(f"field {f:3d}: even spread {even:9.0f}  best spread told the truth {best:9.0f}  ratio {best / even:.3f}", flush=True)
    r = np.array(ratios)
    sd = float(r.std(ddof=1)) if len(r) > 1 else 0.0
    print(f"best spread over even spread: mean {r.mean():.3f} (sd {sd:.3f}, least {r.min():.3f}, most {r.max():.3f}) over {len(r)} fields")
    return 0


if __name__ == "__main__":
    sys.exit(main())
