"""The statistics of a duplicate match: intervals, likelihood of superiority, pair classes, Elo,
ranking with rank ranges, and the sequential probability ratio test (SPRT).

Pure: no I/O, no clock, no randomness; only the standard library and msgspec structs for the
figures.  Every figure is computed from *boards*: ``board[o][i]`` is bot ``i``'s net (what its
sides wrote, times the game's sense) on a board in orientation ``o``.  A board is one
paired unit played in every orientation: a deal in both orientations (sport), a game pair for
games to a target, and with *n* bots at *n* seats the unit played in all *n* rotations.  Only
finished boards count, each folded into a :class:`Boards` tally as it finishes (running means and
deviations, :class:`Moments`), so that no figure needs the list of boards.

Figures per bot (``i``) against the field:

* **margin** — per board, ``net_i`` less the mean net of the other bots, averaged over the
  orientations (two bots: ``net_A − net_B``); its mean with a Student-t interval at the chosen
  confidence.
* **LOS** — the likelihood of superiority, ``P(true margin > 0)``: the Student-t distribution
  function at ``mean / (sd / √n)`` with ``n − 1`` degrees of freedom (the same distribution as
  the interval, so "the interval excludes 0" and "LOS > (1 + confidence) / 2" agree).
* **classes** — each play (a board in one orientation) scores 1 when the bot's margin in it is
  positive, ½ when zero, 0 when negative; a board's class is the sum of its plays' scores in
  halves, ``0 … 2n``.  With two bots these are the five pentanomial classes of fastchess and
  fishtest: LL, LD, DD+WL, WD, WW.
* **Elo**, two bots — from the board scores (class / 2n): the mean score ``s`` turned into a
  logistic Elo difference ``−400 · log10(1/s − 1)``, its interval from ``s ± t · sd/√n`` of the
  board scores mapped the same way (as fastchess does with pentanomial pairs).  When one bot
  won every play the score is 1, its Elo infinite and its interval a point: the Elo is then a
  one-sided bound instead (:func:`elo_bound`; ``elo`` null, ``elo_ci`` ``[bound, null]``).
* **Elo**, three or more bots — from the margin (:func:`field_elo`): the logistic Elo of
  ``Φ(margin / sd)``, ``sd`` the field's pooled spread of board margins.  A score of plays won
  cannot serve here: a bot can win fewer plays than another by larger margins, and the ranking
  is by the margin, so such an Elo would put place 2 above place 1.  This one increases with
  the margin (the ranking's order) and is 0 at the field's mean.

The SPRT is the generalised SPRT (GSPRT) of fishtest and fastchess, see :func:`llr_elo` and
:func:`llr_margin`; it decides nothing before its ``min_pairs`` boards (:data:`MIN_PAIRS`).

Figures that round to zero are stored as 0, never as ``-0.0`` (:func:`_clean`), and
:func:`signed` prints them without a sign.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
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


def _clean(x: float) -> float:
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
        return MeanRecord(mean=_clean(round(self.mean, 4)), ci95=_interval(self.mean, self.half95), n=self.n, sd=_clean(round(self.sd, 4)),
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
    return [_clean(round(mean - half, 4)), _clean(round(mean + half, 4))] if math.isfinite(half) else None


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


# -- Elo -----------------------------------------------------------------------------------------


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


def _finite(x: float, digits: int = 1) -> float | None:
    return _clean(round(x, digits)) if math.isfinite(x) else None


# -- pair classes ---------------------------------------------------------------------------------

PENTANOMIAL = ("LL", "LD", "DD+WL", "WD", "WW")


def class_labels(orientations: int) -> list[str]:
    """Names of the board classes: the pentanomial names for two orientations, else the board
    score as a fraction of the plays won (``"3/6"``: three halves out of six)."""
    if orientations == 2:
        return list(PENTANOMIAL)
    return [f"{k}/{2 * orientations}" for k in range(2 * orientations + 1)]


# -- the match's figures -------------------------------------------------------------------------


class Standing(msgspec.Struct, kw_only=True):
    """One bot's figures against the field over the finished boards of a match."""

    bot: str
    place: int  # 1 for the best margin; bots with equal margins share a place
    places: list[int]  # the places its figures allow: [best, worst] (statistically tied bots overlap)
    margin: MeanRecord  # the margin per board
    los: float | None  # P(margin > 0)
    classes: list[int]  # boards per class, see class_labels
    score: float | None  # mean board score (plays won, a level play counting half)
    elo: float | None  # logistic Elo against the field (null: infinite or no boards)
    #: its interval at the confidence (null ends: infinite); two bots, every play won: [bound, null],
    #: every play lost: [null, −bound], with ``elo`` null (:func:`elo_bound`)
    elo_ci: list[float | None] | None
    los_next: float | None = None  # P(this bot's margin exceeds the next place's), paired per board
    ahead_of_next: bool | None = None  # that difference is significant at the confidence


class Figures(msgspec.Struct, kw_only=True):
    """Everything the match result says about who is better, and how sure it is."""

    confidence: float
    rule: str
    class_labels: list[str]
    standings: list[Standing]  # in ranking order
    ahead: str | None  # the bot with the best margin (null: level at the top)
    significant: bool  # the leader's advantage over the second place is significant
    winner: str | None  # ``ahead`` when significant, else null


RULE = ("ranked by the mean margin per {unit} against the field (paired over the orientations); a winner is named only when "
        "the leader's paired margin over the second place has a {pct} interval above 0")


def _percent(confidence: float) -> str:
    return f"{100 * confidence:g}%"


def board_margins(board: Sequence[Sequence[float]], bot: int) -> list[float]:
    """``[orientation]``: the bot's net less the mean net of the others on one board."""
    return [net[bot] - (sum(net) - net[bot]) / (len(net) - 1) for net in board]


class Boards:
    """The finished boards of a match, folded in one at a time into everything :func:`figures`
    and :func:`sprt_state` need (per bot: the board margins, the play margins, the classes and
    the board scores; per two bots: the difference of their nets), so that a long match keeps
    no list of boards."""

    def __init__(self, bots: int, orientations: int) -> None:
        self.bots = bots
        self.orientations = orientations
        self.count = 0
        self.margin = [Moments() for _ in range(bots)]  # per board, averaged over the orientations
        self.plays = [Moments() for _ in range(bots)]  # per play (board and orientation): read unpaired
        self.classes = [[0] * (2 * orientations + 1) for _ in range(bots)]
        self.scores = [Moments() for _ in range(bots)]  # board scores (plays won, a level play half)
        self.diff = {(i, j): Moments() for i in range(bots) for j in range(bots) if i != j}

    @classmethod
    def of(cls, boards: Sequence[Sequence[Sequence[float]]], bots: int | None = None) -> Boards:
        """The tally of a list of boards (``[board][orientation][bot]`` nets)."""
        tally = cls(len(boards[0][0]) if boards else bots or 2, len(boards[0]) if boards else 2)
        for board in boards:
            tally.add(board)
        return tally

    def add(self, board: Sequence[Sequence[float]]) -> None:
        """Fold in one finished board: ``board[orientation][bot]`` nets."""
        # Once per board of every match, so written out for speed: the margins are
        # board_margins', a play scores 1 won, ½ level, 0 lost (counted here in halves).
        self.count += 1
        n = len(board)
        others = self.bots - 1
        totals = [sum(net) for net in board]
        for i in range(self.bots):
            plays = self.plays[i]
            margin = 0.0
            halves = 0  # plays won, in halves: a level play is half a win
            for net, total in zip(board, totals):
                x = net[i] - (total - net[i]) / others
                plays.add(x)
                margin += x
                halves += 2 if x > 0 else 1 if x == 0 else 0
            self.margin[i].add(margin / n)
            self.classes[i][halves] += 1
            self.scores[i].add(halves / (2 * n))
        for (i, j), m in self.diff.items():
            d = 0.0
            for net in board:
                d += net[i] - net[j]
            m.add(d / n)


def rank_ranges(n: int, better: Callable[[int, int], bool]) -> list[list[int]]:
    """For items ``0 … n−1`` in ranking order: ``[best, worst]`` places each can hold, where
    ``better(a, b)`` says ``a`` is significantly better than ``b``.  Items that are not
    significantly apart share places."""
    out = []
    for i in range(n):
        above = sum(1 for j in range(n) if j != i and better(j, i))
        below = sum(1 for j in range(n) if j != i and better(i, j))
        out.append([1 + above, n - below])
    return out


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
    return _clean(400.0 * (math.log10(p) - math.log10(q)))


def pooled_sd(boards: Boards) -> float:
    """The spread of the bots' board margins, pooled over the field (0 below two boards)."""
    n = boards.count
    if n < 2:
        return 0.0
    return math.sqrt(sum(m.m2 for m in boards.margin) / (len(boards.margin) * (n - 1)))


def field_elo(est: Estimate, sd: float) -> tuple[float | None, list[float | None] | None]:
    """A bot's Elo against the field from its mean board margin (three or more bots):
    :func:`elo_of_z` of ``margin / sd``, with ``sd`` the field's pooled spread
    (:func:`pooled_sd`), and its interval from the margin's.  The same ``sd`` for every bot makes
    it increase with the margin, so it orders the bots as the ranking does; the margins sum to 0
    over the field, so 0 is the field's mean.  Null with no spread yet (below two boards, or
    every board alike)."""
    if est.n < 2 or sd == 0.0:
        return None, None
    elo = _finite(elo_of_z(est.mean / sd))
    ci = [_finite(elo_of_z(est.low / sd)), _finite(elo_of_z(est.high / sd))] if math.isfinite(est.half) else None
    return elo, ci


def figures(boards: Boards, names: Sequence[str], confidence: float = 0.95, unit: str = "deal") -> Figures:
    """The figures of a match from its finished boards (see the module docstring)."""
    check_confidence(confidence)
    k = len(names)
    n = boards.count
    orient = boards.orientations if n else 0
    t = t_quantile((1 + confidence) / 2, n - 1) if n > 1 else math.inf
    spread = pooled_sd(boards)
    per_bot = []
    for i in range(k):
        counts = list(boards.classes[i]) if n else [0] * 5
        est = boards.margin[i].estimate(confidence)
        elo: float | None
        elo_ci: list[float | None] | None
        if n:
            s = boards.scores[i].mean
            sd = math.sqrt(boards.scores[i].m2 / n)  # of the boards' scores, as fastchess
            half = t * sd / math.sqrt(n)
            if k == 2 and s in (0.0, 1.0):  # every play won (lost): a one-sided bound, not ±inf
                bound = _clean(round(elo_bound(n, confidence), 1))
                elo, elo_ci = None, [bound, None] if s == 1.0 else [None, -bound]
            elif k == 2:
                elo = _finite(elo_of_score(s))
                elo_ci = ([_finite(elo_of_score(s - half)), _finite(elo_of_score(s + half))] if math.isfinite(half) else None)
            else:
                elo, elo_ci = field_elo(est, spread)
            score: float | None = round(s, 4)
        else:
            elo, elo_ci, score = None, None, None
        per_bot.append((i, est, Standing(bot=names[i], place=0, places=[], margin=est.record(), los=_round(boards.margin[i].los()),
                                         classes=counts, score=score, elo=elo, elo_ci=elo_ci)))
    order = sorted(per_bot, key=lambda e: (-e[1].mean, e[0]))
    diffs = {pair: m.estimate(confidence) for pair, m in boards.diff.items()}

    def better(a: int, b: int) -> bool:
        return diffs[(order[a][0], order[b][0])].low > 0

    ranges = rank_ranges(k, better)
    rows: list[Standing] = []
    for place, (i, est, row) in enumerate(order):
        row.places = ranges[place]
        row.place = place + 1 if place == 0 or est.mean != order[place - 1][1].mean else rows[-1].place
        if place + 1 < k:
            j = order[place + 1][0]
            row.los_next = _round(boards.diff[(i, j)].los())
            row.ahead_of_next = diffs[(i, j)].low > 0
        rows.append(row)
    level = k > 1 and (not n or order[0][1].mean == order[1][1].mean)
    ahead = None if level else names[order[0][0]]
    significant = bool(ahead is not None and rows[0].ahead_of_next)
    return Figures(confidence=confidence, rule=RULE.format(unit=unit, pct=_percent(confidence)),
                   class_labels=class_labels(orient or 2), standings=rows, ahead=ahead, significant=significant,
                   winner=ahead if significant else None)


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else _clean(round(x, digits))


# -- SPRT ----------------------------------------------------------------------------------------


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
            values[key] = _clean(float(value))
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
    return SprtState(test=test, pairs=boards.count, llr=_clean(round(llr, 4)), lower=round(test.lower, 4),
                     upper=round(test.upper, 4), decision=test.decide(llr, boards.count))
