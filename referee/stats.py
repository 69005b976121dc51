"""Small statistics for match results: means with Student-t 95% intervals.

Only the standard library: the t quantile comes from a table for small samples and the
Cornish–Fisher expansion beyond it (good to three decimals from 30 degrees of freedom on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
_Z975 = 1.959963984540054


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        return math.inf
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% interval (``half`` is the half-width; infinite with one sample)."""

    mean: float
    half: float
    n: int
    sd: float

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half

    def to_json(self) -> dict:
        finite = math.isfinite(self.half)
        return {"mean": round(self.mean, 4), "ci95": [round(self.low, 4), round(self.high, 4)] if finite else None,
                "n": self.n, "sd": round(self.sd, 4)}

    def __str__(self) -> str:
        if not math.isfinite(self.half):
            return f"{self.mean:+.2f} (one sample, no interval)"
        return f"{self.mean:+.2f} ± {self.half:.2f}"


def estimate(xs: list[float]) -> Estimate:
    n = len(xs)
    if n == 0:
        return Estimate(0.0, math.inf, 0, 0.0)
    mean = sum(xs) / n
    if n == 1:
        return Estimate(mean, math.inf, 1, 0.0)
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    sd = math.sqrt(var)
    return Estimate(mean, t975(n - 1) * sd / math.sqrt(n), n, sd)
