"""Seed 002's club rating for Kozel ("Подсчет рейтинга по игре в «Козла»"), the ladder's extra column.

The seed's rule, a game at a time (RULES.md cites the seed as 002):

* a finished game: every player gains ``(100 − points) / 10`` rounded, ``points`` what the player
  wrote over the game (Masha with 25: 7.5, rounded to 8; the goat, past 100, gains a negative
  number or 0);
* a game cut short by a timeout: the player out by timeout gains nothing; every other player gains
  ``(points of the one out − own points) / 10`` "rounded by the rules of mathematics, but not less
  than 1" (Masha 30 against 32: 0.2, rounded to 0, so 1; Olya 13: 1.9, so 2).

**The rounding.**  "По правилам математики" is school rounding: to the nearest whole number, a
half away from zero (7.5 → 8, 6.5 → 7, −2.5 → −3), not Python's ``round``, which sends a half to
the even neighbour (6.5 → 6).  The seed's first formula says only "округляем" and its example
(7.5 → 8) agrees with school rounding, so both formulas use it.  Points are whole numbers, so the
tenths are exact (``Fraction``): no float ever decides a half.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

#: The seed's constant: a game is lost past 100 points.
HUNDRED = 100


def school_round(x: Fraction) -> int:
    """``x`` to the nearest whole number, a half away from zero (the seed's "rules of mathematics")."""
    whole, rest = divmod(abs(x), 1)
    n = int(whole) + (1 if rest >= Fraction(1, 2) else 0)
    return n if x >= 0 else -n


def game_rating(points: Mapping[str, int], timed_out: str | None = None) -> dict[str, int]:
    """What each player of one game gains in the club rating.

    Args:
        points: every player's points written over the game (a pair's, for a player in a pair).
        timed_out: the player out of the game by timeout, when the game was cut short so.

    Raises:
        ValueError: ``timed_out`` is not one of the players.
    """
    if timed_out is None:
        return {name: school_round(Fraction(HUNDRED - p, 10)) for name, p in points.items()}
    if timed_out not in points:
        raise ValueError(f"{timed_out!r}, out by timeout, is not one of the game's players")
    theirs = points[timed_out]
    return {name: 0 if name == timed_out else max(1, school_round(Fraction(theirs - p, 10))) for name, p in points.items()}


class ClubRating:
    """The club rating summed over games (a column beside the ladder's ratings)."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}
        self.games: dict[str, int] = {}

    def add_game(self, points: Mapping[str, int], timed_out: str | None = None) -> None:
        for name, gain in game_rating(points, timed_out).items():
            self.totals[name] = self.totals.get(name, 0) + gain
            self.games[name] = self.games.get(name, 0) + 1
