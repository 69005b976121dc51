"""Means with intervals: Student's t, a stream's mean and spread kept as it comes
(:class:`Moments`), its Student-t interval (:class:`Estimate`) and its likelihood of superiority
(``P(true mean > 0)``, the same t distribution as the interval, so "the interval excludes 0" and
"LOS > (1 + confidence) / 2" agree), and the numbers as people and JSON read them.

Pure: no I/O, no clock, no randomness; only the standard library and msgspec structs.  Figures
that round to zero are stored as 0, never as ``-0.0`` (:func:`clean`), and :func:`signed` prints
them without a sign.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import msgspec

# -- Student's t -----------------------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def beta_inc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: int) -> float:
    """``P(T ≤ t)`` for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * beta_inc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (infinite for ``df < 1``).
    Remembered: a result's figures ask for the same few, each some forty beta functions."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, not {p}")
    if df < 1:
        return math.inf if p > 0.5 else -math.inf
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    return t_quantile(0.975, df)


def check_confidence(confidence: float) -> None:
    """Raises ValueError unless 0 < confidence < 1."""
    if not 0.0 < confidence < 1.0 or math.isnan(confidence):
        raise ValueError(f"the confidence level must be between 0 and 1 (e.g. 0.95), not {confidence}")


# -- numbers for people and for JSON ------------------------------------------------------------


def clean(x: float) -> float:
    """``x`` with a negative zero made zero (``-0.0 + 0.0`` is ``0.0``): a figure rounded to
    zero is stored and printed as 0, never as "-0"."""
    return x + 0.0


def signed(x: float, digits: int = 0) -> str:
    """``x`` with its sign and ``digits`` decimals ("+4.80", "−" as "-"), and a value that rounds
    to zero without a sign ("0.00", never "-0.00" or "+0.00")."""
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


# -- means with intervals ----------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A mean with its interval at ``confidence`` (``half`` is the half-width; infinite with one
    sample) and its 95% interval."""

    mean: float
    half: float
    n: int
    sd: float
    confidence: float = 0.95
    half95: float = math.inf

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half

    def record(self) -> MeanRecord:
        """The estimate as results give it (rounded to 4 decimals)."""
        return MeanRecord(mean=clean(round(self.mean, 4)), ci95=_interval(self.mean, self.half95), n=self.n, sd=clean(round(self.sd, 4)),
                          ci=_interval(self.mean, self.half), confidence=self.confidence)

    def __str__(self) -> str:
        if not math.isfinite(self.half):
            return f"{signed(self.mean, 2)} (one sample, no interval)"
        return f"{signed(self.mean, 2)} ± {self.half:.2f}"


class MeanRecord(msgspec.Struct, kw_only=True):
    """A mean with its intervals, as the match result writes it (``null`` intervals: one sample)."""

    mean: float
    ci95: list[float] | None
    n: int
    sd: float
    ci: list[float] | None  # at the result's confidence
    confidence: float


def _interval(mean: float, half: float) -> list[float] | None:
    return [clean(round(mean - half, 4)), clean(round(mean + half, 4))] if math.isfinite(half) else None


class Moments:
    """The count, mean and sum of squared deviations of a stream of numbers, kept as they come
    (Welford's update), so a long match keeps no list of its margins."""

    __slots__ = ("n", "mean", "m2")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    @classmethod
    def of(cls, xs: Iterable[float]) -> Moments:
        m = cls()
        for x in xs:
            m.add(x)
        return m

    def add(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    @property
    def sd(self) -> float:
        """The sample standard deviation (0 below two samples)."""
        return math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else 0.0

    def estimate(self, confidence: float = 0.95) -> Estimate:
        """The mean with its Student-t interval at ``confidence``."""
        n = self.n
        if n == 0:
            return Estimate(0.0, math.inf, 0, 0.0, confidence)
        if n == 1:
            return Estimate(self.mean, math.inf, 1, 0.0, confidence)
        sd = self.sd
        se = sd / math.sqrt(n)
        return Estimate(self.mean, t_quantile((1 + confidence) / 2, n - 1) * se, n, sd, confidence, t975(n - 1) * se)

    def los(self) -> float | None:
        """The likelihood of superiority ``P(true mean > 0)`` (Student t); ``None`` below two samples."""
        if self.n < 2:
            return None
        sd = self.sd
        if sd == 0.0:
            return 1.0 if self.mean > 0 else 0.0 if self.mean < 0 else 0.5
        return t_cdf(self.mean / (sd / math.sqrt(self.n)), self.n - 1)


def estimate(xs: Iterable[float], confidence: float = 0.95) -> Estimate:
    """The mean of ``xs`` with its Student-t interval at ``confidence``."""
    return Moments.of(xs).estimate(confidence)


def los(xs: Iterable[float]) -> float | None:
    """The likelihood of superiority ``P(true mean > 0)`` (Student t); ``None`` below two samples."""
    return Moments.of(xs).los()


def rounded(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else clean(round(x, digits))
