"""The running score of a match in play: one line after every finished pair (``referee match``
prints it on stderr on a terminal, like cutechess-cli's "Score of A vs B"), and the Elo and LOS
every so many pairs (``--rating-interval``, :func:`rating_line`).

The line is read from the match's running tally (:class:`referee.stats.figures.Boards`), so it says
what the final result would say if the match stopped there: the margin per pair with its
interval at the match's confidence, the pairs won, level and lost (two bots), and the SPRT's
log-likelihood ratio with its bounds.
"""

from __future__ import annotations

import math

from referee.matches.report import elo_text, los_text
from referee.matches.results import MatchResult
from referee.stats.figures import figures
from referee.stats.means import signed


def _pairs(n: int) -> str:
    return f"{n} pair" if n == 1 else f"{n} pairs"


def _margin(mean: float, half: float, digits: int) -> str:
    return signed(mean, digits) + (f" ± {half:.{digits}f}" if math.isfinite(half) else "")


def score_line(result: MatchResult) -> str:
    """Where the match stands after its finished pairs, in one line."""
    spec = result.spec
    tally = result.tally
    names = result.names
    unit = "game" if spec.variant.to_target else "deal"
    level = f"{100 * spec.confidence:g}%"
    n = tally.count
    if len(names) == 2:
        est = tally.margin[0].estimate(spec.confidence)
        interval = f" ({level})" if math.isfinite(est.half) else " (one pair: no interval yet)"
        line = f"Score of {names[0]} vs {names[1]} after {_pairs(n)}: {_margin(est.mean, est.half, 2)} per {unit}{interval}"
        half = len(result.seatings)  # plays in a pair; a pair is won when its plays are more won than lost
        classes = tally.classes[0]
        won, drawn = sum(classes[half + 1:]), classes[half]
        line += f", pairs won {won}, level {drawn}, lost {n - won - drawn}"
    else:
        parts = []
        for i, name in enumerate(names):
            est = tally.margin[i].estimate(spec.confidence)
            parts.append(f"{name} {_margin(est.mean, est.half, 1)}")
        line = f"After {_pairs(n)}, margin per {unit} against the field ({level}): " + " · ".join(parts)
    if result.sprt is not None:
        s = result.sprt
        line += f"; LLR {signed(s.llr, 2)} ({signed(s.lower, 2)}, {signed(s.upper, 2)})" + (
            f": {s.decision} accepted" if s.decision else f" (no decision before {s.test.min_pairs} pairs)" if s.pairs < s.test.min_pairs else "")
    return line


def rating_line(result: MatchResult) -> str:
    """The Elo and LOS after the finished pairs, in one line (``referee match --rating-interval``,
    fastchess's ``-ratinginterval``): two bots' Elo difference with its interval at the match's
    confidence and the first's LOS, or each bot's against the field."""
    spec = result.spec
    names = result.names
    unit = "game" if spec.variant.to_target else "deal"
    fig = figures(result.tally, names, spec.confidence, unit)
    rows = {r.bot: r for r in fig.standings}
    level = f"{100 * spec.confidence:g}%"
    head = f"After {_pairs(result.tally.count)}: "
    if len(names) == 2:
        first = rows[names[0]]
        return head + f"Elo {names[0]} − {names[1]} {elo_text(first)} ({level}), LOS {los_text(first.los)}"
    return head + f"Elo against the field ({level}): " + " · ".join(
        f"{name} {elo_text(rows[name], field=True)} LOS {los_text(rows[name].los)}" for name in names)
