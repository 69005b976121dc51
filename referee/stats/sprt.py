"""The sequential probability ratio test (SPRT) of a match: the generalised SPRT (GSPRT) of
fishtest and fastchess on the board classes (logistic Elo, :func:`llr_elo`; normalized Elo,
:func:`llr_normalized`) or on the margins in points (:func:`llr_margin`); it decides nothing
before its ``min_pairs`` boards (:data:`MIN_PAIRS`).  Pure, as :mod:`referee.stats.means`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from referee.stats.elo import score_of_elo
from referee.stats.figures import Boards
from referee.stats.means import Moments, clean, signed

#: The pairs an SPRT plays before it may decide, unless ``min_pairs=`` says otherwise: below
#: this the spread of the pairs is no estimate, and the error rates run far above alpha and beta
#: (``python -m bench.sprt``, docs/sprt.md).
MIN_PAIRS = 10


#: The largest ``min_pairs`` accepted (a million pairs: far beyond any budget worth playing).
MAX_MIN_PAIRS = 1_000_000


class SprtSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """A sequential test of H0 (``h0``) against H1 (``h1``) with error rates ``alpha`` (accepting
    H1 when H0 holds) and ``beta`` (accepting H0 when H1 holds).  ``kind`` says what ``h0`` and
    ``h1`` measure: ``"elo"`` the logistic Elo difference of the board scores, ``"nelo"`` their
    normalized Elo (fastchess's ``model=normalized``, :func:`llr_normalized`), ``"margin"`` the
    mean margin per board in points.  The test decides nothing before ``min_pairs`` boards.

    ``min_pairs`` is left out of the encoding when 0, so that a test from a log written before
    it existed (no minimum) encodes as it did; every other field is always written."""

    kind: str
    h0: float
    h1: float
    alpha: float
    beta: float
    min_pairs: int = 0

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR: ``ln(β / (1 − α))`` (Wald)."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR: ``ln((1 − β) / α)`` (Wald)."""
        return math.log((1.0 - self.beta) / self.alpha)

    @property
    def words(self) -> str:
        """The test's hypotheses as ``--sprt`` takes them: "elo0=0 elo1=5 model=normalized"."""
        what = "margin" if self.kind == "margin" else "elo"
        return (f"{what}0={self.h0 + 0.0:g} {what}1={self.h1 + 0.0:g}" + (" model=normalized" if self.kind == "nelo" else ""))

    def decide(self, llr: float, pairs: int | None = None) -> str | None:
        """"H1" at or above the upper bound, "H0" at or below the lower, else ``None``; always
        ``None`` below ``min_pairs`` boards (when ``pairs`` is given)."""
        if pairs is not None and pairs < self.min_pairs:
            return None
        return "H1" if llr >= self.upper else "H0" if llr <= self.lower else None


class SprtState(msgspec.Struct, kw_only=True):
    """Where the test stands after ``pairs`` boards (``decision`` stays null below the test's
    ``min_pairs``, whatever the LLR)."""

    test: SprtSpec
    pairs: int
    llr: float
    lower: float
    upper: float
    decision: str | None  # "H0", "H1", or null while undecided

    def line(self) -> str:
        verdict = {"H0": "H0 accepted", "H1": "H1 accepted", None: "continue"}[self.decision]
        if self.decision is None and self.pairs < self.test.min_pairs:
            verdict += f" (no decision before {self.test.min_pairs} pairs)"
        return (f"LLR {signed(self.llr, 3)} ({signed(self.lower, 3)}, {signed(self.upper, 3)}) after {self.pairs} "
                f"pair{'' if self.pairs == 1 else 's'}: {verdict}")


_SPRT_KEYS = {"elo0", "elo1", "margin0", "margin1", "alpha", "beta", "min_pairs", "model"}

#: ``model=`` of an Elo test, as fastchess names them, and the test's kind.
MODELS = {"logistic": "elo", "normalized": "nelo"}

#: The largest normalized Elo a bound may be: 10 times a large advantage, and well inside what the
#: maximum-likelihood fit of :func:`mle_with_t` reaches (a pair score's distribution with that t).
MAX_NELO = 1000.0


def is_sprt_word(word: str) -> bool:
    """True for a ``key=value`` word of an SPRT setting."""
    key, sep, _ = word.partition("=")
    return bool(sep) and key.strip().lower() in _SPRT_KEYS


def parse_sprt(words: Sequence[str]) -> SprtSpec:
    """``["elo0=0", "elo1=20", "alpha=0.05", "beta=0.05", "min_pairs=20"]`` (or
    ``margin0=``/``margin1=``) as a test; words may also hold several settings separated by
    spaces or commas.  ``alpha`` and ``beta`` default to 0.05, ``min_pairs`` to :data:`MIN_PAIRS`;
    ``model=`` (an Elo test's, :data:`MODELS`) to ``logistic``, and ``model=normalized`` reads
    ``elo0``/``elo1`` as normalized Elo (:func:`llr_normalized`).

    Raises:
        ValueError: a setting is unknown, repeated, missing, not a number or out of range.
    """
    values: dict[str, float] = {}
    model: str | None = None
    for word in (w for text in words for w in text.replace(",", " ").split()):
        key, sep, value = word.partition("=")
        key = key.strip().lower()
        if not sep or key not in _SPRT_KEYS:
            raise ValueError(f"SPRT setting {word!r}: write elo0=… elo1=… (or margin0=… margin1=…) and optionally alpha=… beta=… "
                             "min_pairs=… model=…")
        if key in values or (key == "model" and model is not None):
            raise ValueError(f"SPRT setting {key} is given twice")
        if key == "model":
            model = value.strip().lower()
            if model not in MODELS:
                raise ValueError(f"SPRT setting model={value!r}: the models are {' and '.join(MODELS)} (of an Elo test)")
            continue
        try:
            values[key] = clean(float(value))
        except ValueError:
            raise ValueError(f"SPRT setting {key}={value!r}: not a number") from None
        if not math.isfinite(values[key]):
            raise ValueError(f"SPRT setting {key}={value!r}: not a finite number")
    elo = {"elo0", "elo1"} & values.keys()
    margin = {"margin0", "margin1"} & values.keys()
    if elo and margin:
        raise ValueError("SPRT: test either Elo (elo0, elo1) or the margin in points (margin0, margin1), not both")
    what = "elo" if elo else "margin"
    if model is not None and what == "margin":
        raise ValueError("SPRT: model= is an Elo test's (logistic or normalized), not the margin's")
    h0, h1 = values.get(f"{what}0"), values.get(f"{what}1")
    if h0 is None or h1 is None:
        raise ValueError(f"SPRT: give both {what}0 and {what}1 (e.g. elo0=0 elo1=20)")
    if h0 >= h1:
        raise ValueError(f"SPRT: {what}0 must be less than {what}1")
    kind = MODELS[model or "logistic"] if what == "elo" else "margin"
    if kind == "nelo" and max(abs(h0), abs(h1)) > MAX_NELO:
        raise ValueError(f"SPRT: a normalized Elo bound must lie within ±{MAX_NELO:g}")
    alpha, beta = values.get("alpha", 0.05), values.get("beta", 0.05)
    if not (0 < alpha < 1 and 0 < beta < 1 and alpha + beta < 1):
        raise ValueError("SPRT: alpha and beta must be between 0 and 1 and add up to less than 1")
    min_pairs = values.get("min_pairs", MIN_PAIRS)
    if min_pairs != int(min_pairs) or not 0 <= min_pairs <= MAX_MIN_PAIRS:
        raise ValueError(f"SPRT: min_pairs must be a whole number from 0 to {MAX_MIN_PAIRS:,}, not {min_pairs:g}")
    return SprtSpec(kind=kind, h0=h0, h1=h1, alpha=alpha, beta=beta, min_pairs=int(min_pairs))


def _secular(a: Sequence[float], p: Sequence[float]) -> float:
    """Solve ``Σ p_i a_i / (1 + x a_i) = 0`` for ``x`` in ``(−1/max a, −1/min a)``; needs
    ``min a < 0 < max a``.  The left side falls strictly from +∞ to −∞ there, so Newton's steps
    from 0 are kept inside a shrinking bracket (a step leaving it bisects instead) until the
    root is found to the last bits, as plain bisection finds it in ten times the steps."""
    lo, hi = -1.0 / max(a), -1.0 / min(a)
    x = 0.0
    for _ in range(300):
        f = 0.0
        df = 0.0
        for ai, pi in zip(a, p):
            q = ai / (1.0 + x * ai)
            f += pi * q
            df -= pi * q * q
        if f > 0:
            lo = x
        elif f < 0:
            hi = x
        else:
            return x
        step = x - f / df if df else lo
        if not lo < step < hi:
            step = (lo + hi) / 2.0
        if step == x or step in (lo, hi):
            break
        x = step
    return x


def mle_with_mean(values: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """The distribution on ``values`` with mean ``s`` that is most likely given the observed
    frequencies ``probs``: ``p_i = p̂_i / (1 + x (a_i − s))`` with ``x`` solving the secular
    equation ``Σ p̂_i (a_i − s) / (1 + x (a_i − s)) = 0`` (Van den Bergh, "Comments on
    Normalized Elo", Proposition 1.1; fishtest ``LLRcalc.MLE_expected``)."""
    a = [v - s for v in values]
    x = _secular(a, probs)
    return [pi / (1.0 + x * ai) for ai, pi in zip(a, probs)]


def llr_expected(counts: Sequence[float], values: Sequence[float], s0: float, s1: float) -> float:
    """The generalised log-likelihood ratio of "mean ``s1``" against "mean ``s0``" for counts
    of outcomes with the given ``values``: ``N · Σ p̂_i (ln p1_i − ln p0_i)``, where ``p0`` and
    ``p1`` are the most likely distributions with means ``s0`` and ``s1`` (:func:`mle_with_mean`).
    Counts are used as given (no regularisation)."""
    n = float(sum(counts))
    probs = [c / n for c in counts]
    p0 = mle_with_mean(values, probs, s0)
    p1 = mle_with_mean(values, probs, s1)
    return n * sum(ph * (math.log(b) - math.log(a)) for ph, a, b in zip(probs, p0, p1) if ph > 0)


def llr_elo(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of Elo ``elo1`` against ``elo0`` for board classes.

    This is the pentanomial GSPRT of fishtest (``LLRcalc.LLR_logistic``) and fastchess
    (``SPRT::getLLR`` with the logistic model): the board scores ``k / (len(counts) − 1)`` are
    treated as a multinomial whose mean is the expected score ``L(elo) = 1 / (1 + 10^(−elo/400))``;

        LLR = N · Σ_i p̂_i · (ln p1_i − ln p0_i)

    with ``p̂`` the observed class frequencies (an empty class counts 0.001, as both do) and
    ``p0``, ``p1`` the maximum-likelihood distributions with means ``L(elo0)`` and ``L(elo1)``
    (:func:`mle_with_mean`).  With two orientations the classes are the pentanomial LL, LD,
    DD+WL, WD, WW; with *n* rotations the same formula runs over ``2n + 1`` classes.
    """
    if sum(counts) == 0:
        return 0.0
    regular = [c if c else 1e-3 for c in counts]
    top = len(counts) - 1
    return llr_expected(regular, [k / top for k in range(len(counts))], score_of_elo(elo0), score_of_elo(elo1))


#: The normalized Elo of a t of 1 per play: ``800 / ln 10`` (fishtest and fastchess).
NELO_SCALE = 800.0 / math.log(10.0)


def t_of_nelo(nelo: float, plays: int) -> float:
    """The t of a board (its expected score less ½, over the spread of board scores) at a
    normalized Elo ``nelo``, for boards of ``plays`` plays: ``√plays · nelo / (800 / ln 10)``.
    The ``√plays`` makes nElo a figure per play, as fastchess's pentanomial √2 does per game, so
    that it reads the same whatever the plays per board."""
    return math.sqrt(plays) * nelo / NELO_SCALE


def nelo_of(scores: Moments, plays: int) -> float | None:
    """The normalized Elo of board scores: ``(mean − ½) / sd · (800 / ln 10) / √plays`` (``sd``
    over the boards, as the test's); ``None`` below two boards or with no spread."""
    if scores.n < 2 or scores.m2 == 0.0:
        return None
    return (scores.mean - 0.5) / math.sqrt(scores.m2 / scores.n) * NELO_SCALE / math.sqrt(plays)


def _t_of(values: Sequence[float], p: Sequence[float], ref: float) -> float:
    mu = sum(a * q for a, q in zip(values, p))
    sd = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(values, p)))
    return (mu - ref) / sd if sd > 0.0 else math.copysign(math.inf, mu - ref)


def _fit_t(values: Sequence[float], probs: Sequence[float], t: float, ref: float, start: Sequence[float],
           tol: float, rounds: int) -> list[float] | None:
    """Van den Bergh's fixed point for :func:`mle_with_t` from ``start``; ``None`` where a step
    has no root (its φ all of one sign) or the steps do not settle."""
    p = list(start)
    for _ in range(rounds):
        mu = sum(a * q for a, q in zip(values, p))
        sd = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(values, p)))
        if sd == 0.0:
            return None
        phi = [a - ref - 0.5 * t * sd * (1.0 + ((a - mu) / sd) ** 2) for a in values]
        if not min(phi) < 0.0 < max(phi):
            return None
        x = _secular(phi, probs)
        new = [ph / (1.0 + x * f) for ph, f in zip(probs, phi)]
        moved = max(abs(a - b) for a, b in zip(new, p))
        p = new
        if moved < tol:
            return p
    return None


def mle_with_t(values: Sequence[float], probs: Sequence[float], t: float, ref: float = 0.5,
               tol: float = 1e-12, rounds: int = 2000) -> list[float]:
    """The distribution on ``values`` whose ``(mean − ref) / sd`` is ``t`` that is most likely
    given the observed frequencies ``probs`` (all above 0) (Van den Bergh, "Comments on
    Normalized Elo", section 4.1; fastchess ``getLLR_normalized``): repeat

        φ_i = a_i − ref − t·σ/2 · (1 + ((a_i − μ)/σ)²),   p_i = p̂_i / (1 + x φ_i)

    with ``μ``, ``σ`` the current distribution's mean and spread and ``x`` the root of the
    secular equation ``Σ p̂_i φ_i / (1 + x φ_i) = 0``, until ``p`` stops moving.  The paper and
    fastchess start from the uniform distribution, from which a step has no root once ``t`` is
    large (about 1 for pair scores: a normalized Elo near 250); this starts from ``probs``
    (whose own t needs no step) and, where a step still fails, walks ``t`` there from the
    observed t in smaller and smaller steps, each fit starting from the last.

    Raises:
        ValueError: no step size reaches ``t`` (a ``t`` beyond what the values allow).
    """
    if (p := _fit_t(values, probs, t, ref, probs, tol, rounds)) is not None:
        return p
    here = _t_of(values, probs, ref)
    for steps in (4, 16, 64, 256):
        p = list(probs)
        for k in range(1, steps + 1):
            fitted = _fit_t(values, probs, here + (t - here) * k / steps, ref, p, tol, rounds)
            if fitted is None:
                break
            p = fitted
        else:
            return p
    raise ValueError(f"no distribution of these scores near the observed one has a normalized t of {t:g}")


def llr_normalized(counts: Sequence[int], nelo0: float, nelo1: float) -> float:
    """The GSPRT log-likelihood ratio of normalized Elo ``nelo1`` against ``nelo0`` for board
    classes: fastchess's ``model=normalized`` on pentanomial pairs.

    Normalized Elo measures an advantage against the spread of the results instead of on the
    logistic curve: a board's t is ``(E[score] − ½) / sd(score)``, and nElo is that t per play on
    the scale ``800 / ln 10`` (:func:`t_of_nelo`).  It does not depend on how drawish the game is
    (a logistic Elo of 5 is easy to see when every pair is decisive and hard when most are
    level; an nElo of 5 takes the same number of pairs either way), so a test's length in pairs
    is known from its bounds alone: about ``2 · 2.94 / (t1 − t0)²`` pairs when the truth is at
    a bound (α = β = 5%), ``t`` of each bound from :func:`t_of_nelo`.

        LLR = N · Σ_i p̂_i · (ln p1_i − ln p0_i)

    as :func:`llr_elo`, with ``p0``, ``p1`` now the most likely distributions with the t of
    ``nelo0`` and ``nelo1`` (:func:`mle_with_t`); an empty class counts 0.001.  Where no such
    fit is found (a bound's t far beyond the results seen, so the test is long decided), the
    normal approximation of the paper's section 4.2, ``N/2 · ln((1 + (t̂ − t0)²) / (1 + (t̂ − t1)²))``
    with ``t̂`` the observed t, stands in.
    """
    if sum(counts) == 0:
        return 0.0
    regular = [c if c else 1e-3 for c in counts]
    n = float(sum(regular))
    probs = [c / n for c in regular]
    top = len(counts) - 1
    values = [k / top for k in range(len(counts))]
    plays = top // 2  # classes count plays won in halves: 2 · plays + 1 of them
    t0, t1 = t_of_nelo(nelo0, plays), t_of_nelo(nelo1, plays)
    try:
        p0 = mle_with_t(values, probs, t0)
        p1 = mle_with_t(values, probs, t1)
    except ValueError:  # far outside the results seen: the normal approximation (section 4.2)
        t = _t_of(values, probs, 0.5)
        return n / 2.0 * math.log((1.0 + (t - t0) ** 2) / (1.0 + (t - t1) ** 2))
    return n * sum(ph * (math.log(b) - math.log(a)) for ph, a, b in zip(probs, p0, p1))


def llr_margin(xs: Sequence[float], m0: float, m1: float) -> float:
    """The GSPRT log-likelihood ratio of mean margin ``m1`` against ``m0`` (points per board).

    The margins are read as normal with an unknown variance, profiled out:

        LLR = N/2 · ln(r0 / r1),   r_m = (1/N) Σ (x_i − m)²

    which is fishtest's ``LLRcalc.LLR_alt`` (Van den Bergh, "Support for the MLE of a
    multinomial", the approximation of :func:`llr_expected` for any distribution of results).
    Until the margins differ (no spread has been seen) the LLR is 0: one or two equal margins
    say nothing about how far the mean can be trusted.
    """
    return llr_margin_of(Moments.of(xs), m0, m1)


def llr_margin_of(xs: Moments, m0: float, m1: float) -> float:
    """:func:`llr_margin` of margins folded into :class:`Moments`."""
    n = xs.n
    if n < 2:
        return 0.0
    mean = xs.mean
    var = xs.m2 / n
    if var == 0.0:
        return 0.0
    r0 = var + (mean - m0) ** 2
    r1 = var + (mean - m1) ** 2
    return n / 2.0 * math.log(r0 / r1)


def sprt_llr(test: SprtSpec, boards: Boards, bot: int = 0) -> float:
    """The test's log-likelihood ratio on ``bot``'s boards against the field, unrounded."""
    if test.kind == "elo":
        return llr_elo(boards.classes[bot] if boards.count else [0] * 5, test.h0, test.h1)
    if test.kind == "nelo":
        return llr_normalized(boards.classes[bot] if boards.count else [0] * 5, test.h0, test.h1)
    return llr_margin_of(boards.margin[bot], test.h0, test.h1)


def sprt_state(test: SprtSpec, boards: Boards, bot: int = 0) -> SprtState:
    """The test on ``bot``'s boards against the field (two bots: bot 0 against bot 1).  Pure: the
    state depends only on ``test`` (its ``min_pairs`` included) and the boards, so a log's
    ``sprt`` records can be recomputed from its pairs and its header's ``sprt``."""
    llr = sprt_llr(test, boards, bot)
    return SprtState(test=test, pairs=boards.count, llr=clean(round(llr, 4)), lower=round(test.lower, 4),
                     upper=round(test.upper, 4), decision=test.decide(llr, boards.count))
