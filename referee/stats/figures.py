"""The figures of a duplicate match: who is better, by how much, and how sure it is.

Every figure is computed from *boards*: ``board[o][i]`` is bot ``i``'s net (what its sides
wrote, times the game's sense) on a board in orientation ``o``.  A board is one paired unit
played in every orientation: a deal in both orientations (sport), a game pair for games to a
target, and with *n* bots at *n* seats the unit played in all *n* rotations.  Only finished
boards count, each folded into a :class:`Boards` tally as it finishes (running means and
deviations, :class:`referee.stats.means.Moments`), so that no figure needs the list of boards.

Figures per bot (``i``) against the field:

* **margin** — per board, ``net_i`` less the mean net of the other bots, averaged over the
  orientations (two bots: ``net_A − net_B``); its mean with a Student-t interval at the chosen
  confidence.
* **LOS** — the likelihood of superiority, ``P(true margin > 0)`` (:meth:`Moments.los`).
* **classes** — each play (a board in one orientation) scores 1 when the bot's margin in it is
  positive, ½ when zero, 0 when negative; a board's class is the sum of its plays' scores in
  halves, ``0 … 2n``.  With two bots these are the five pentanomial classes of fastchess and
  fishtest: LL, LD, DD+WL, WD, WW.
* **Elo**, two bots — from the board scores (class / 2n): the mean score ``s`` turned into a
  logistic Elo difference ``−400 · log10(1/s − 1)``, its interval from ``s ± t · sd/√n`` of the
  board scores mapped the same way (as fastchess does with pentanomial pairs); an end past a
  score of 0 or 1 is null (the pairs cannot bound it).  When one bot won every play the score is
  1, its Elo infinite and its interval a point: the Elo is then a one-sided bound instead
  (:func:`referee.stats.elo.elo_bound`; ``elo`` null, ``elo_ci`` ``[bound, null]``).  When every
  board is in one class (two bots level on every pair) the spread is 0 and the t interval a
  point: the interval is then the exact bound of :func:`referee.stats.elo.alike_interval`.
* **Elo**, three or more bots — from the margin (:func:`referee.stats.elo.field_elo`): the
  logistic Elo of ``Φ(margin / sd)``, ``sd`` the field's pooled spread of board margins.  A score
  of plays won cannot serve here: a bot can win fewer plays than another by larger margins, and
  the ranking is by the margin, so such an Elo would put place 2 above place 1.  This one
  increases with the margin (the ranking's order) and is 0 at the field's mean.

Pure, as :mod:`referee.stats.means`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import msgspec

from referee.stats.elo import alike_interval, elo_bound, elo_of_score, field_elo, finite
from referee.stats.means import MeanRecord, Moments, check_confidence, clean, rounded, t_quantile

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


def alike(classes: Sequence[int]) -> bool:
    """Whether every board is in one class (and there is at least one): no spread to take a t
    interval from."""
    return bool(classes) and max(classes) == sum(classes) > 0


def board_margin(board: Sequence[Sequence[float]], bot: int) -> float:
    """The bot's paired margin on one board (:func:`board_margins` averaged over the
    orientations), divided once from its exact value (the nets are whole): margins equal as
    fractions are equal floats, whatever the order of the plays that made them."""
    k = len(board[0])
    return sum(k * net[bot] - sum(net) for net in board) / ((k - 1) * len(board))


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
        #: per bot, exactly: the sum over boards and orientations of ``bots · net − the
        #: orientation's total``, which is the board margins' sum times ``orientations · (bots − 1)``:
        #: the ranking's order and its ties, free of the floats' rounding (two bots level as
        #: fractions are level here, whatever the order their margins were summed in).  Whole
        #: numbers, as every game's nets are, which a float adds exactly below 2⁵³.
        self.exact = [0.0] * bots

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
        everything = sum(totals)
        exact = self.exact
        for i in range(self.bots):
            plays = self.plays[i]
            margin = 0.0
            own = 0.0  # the bot's nets: whole, so summed exactly
            halves = 0  # plays won, in halves: a level play is half a win
            for net, total in zip(board, totals):
                x = net[i] - (total - net[i]) / others
                plays.add(x)
                margin += x
                own += net[i]
                halves += 2 if x > 0 else 1 if x == 0 else 0
            exact[i] += self.bots * own - everything
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


def pooled_sd(boards: Boards) -> float:
    """The spread of the bots' board margins, pooled over the field (0 below two boards)."""
    n = boards.count
    if n < 2:
        return 0.0
    return math.sqrt(sum(m.m2 for m in boards.margin) / (len(boards.margin) * (n - 1)))


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
                bound = clean(round(elo_bound(n, confidence), 1))
                elo, elo_ci = None, [bound, None] if s == 1.0 else [None, -bound]
            elif k == 2 and alike(counts):  # no spread: the exact bound
                elo = finite(elo_of_score(s))
                elo_ci = [finite(elo_of_score(x)) for x in alike_interval(s, n, confidence)]
            elif k == 2:
                elo = finite(elo_of_score(s))
                elo_ci = ([finite(elo_of_score(s - half)), finite(elo_of_score(s + half))] if math.isfinite(half) else None)
            else:
                elo, elo_ci = field_elo(est, spread)
            score: float | None = round(s, 4)
        else:
            elo, elo_ci, score = None, None, None
        per_bot.append((i, est, Standing(bot=names[i], place=0, places=[], margin=est.record(), los=rounded(boards.margin[i].los()),
                                         classes=counts, score=score, elo=elo, elo_ci=elo_ci)))
    exact = boards.exact
    order = sorted(per_bot, key=lambda e: (-exact[e[0]], e[0]))
    diffs = {pair: m.estimate(confidence) for pair, m in boards.diff.items()}

    def better(a: int, b: int) -> bool:
        return diffs[(order[a][0], order[b][0])].low > 0

    ranges = rank_ranges(k, better)
    rows: list[Standing] = []
    for place, (i, _, row) in enumerate(order):
        row.places = ranges[place]
        row.place = place + 1 if place == 0 or exact[i] != exact[order[place - 1][0]] else rows[-1].place
        if place + 1 < k:
            j = order[place + 1][0]
            row.los_next = rounded(boards.diff[(i, j)].los())
            row.ahead_of_next = diffs[(i, j)].low > 0
        rows.append(row)
    level = k > 1 and (not n or exact[order[0][0]] == exact[order[1][0]])
    ahead = None if level else names[order[0][0]]
    significant = bool(ahead is not None and rows[0].ahead_of_next)
    return Figures(confidence=confidence, rule=RULE.format(unit=unit, pct=_percent(confidence)),
                   class_labels=class_labels(orient or 2), standings=rows, ahead=ahead, significant=significant,
                   winner=ahead if significant else None)
