"""Seed 002's club rating: the seed's worked examples, and its rounding (a half away from zero)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tournaments.ladder.club import ClubRating, game_rating, school_round


def test_a_finished_game_gives_masha_eight() -> None:
    # "Masha набрала 25 очков ... (100 − 25) / 10 = 7,5. Округляем = 8."
    assert game_rating({"Masha": 25})["Masha"] == 8


def test_a_game_cut_by_timeout_gives_masha_one_olya_two_and_alex_nothing() -> None:
    # Alex 32 out by timeout; Masha 30: 0.2 → 0 → at least 1; Olya 13: 1.9 → 2.
    assert game_rating({"Alex": 32, "Masha": 30, "Olya": 13}, timed_out="Alex") == {"Alex": 0, "Masha": 1, "Olya": 2}


@pytest.mark.parametrize(("x", "n"), [(Fraction(15, 2), 8), (Fraction(13, 2), 7), (Fraction(5, 2), 3), (Fraction(1, 2), 1),
                                      (Fraction(-1, 2), -1), (Fraction(-5, 2), -3), (Fraction(-1, 10), 0), (Fraction(14, 10), 1),
                                      (Fraction(19, 10), 2), (Fraction(0), 0)])
def test_school_rounding_sends_a_half_away_from_zero(x: Fraction, n: int) -> None:
    assert school_round(x) == n


def test_python_round_would_differ_on_six_and_a_half() -> None:
    """The point of school_round: 35 points is (100 − 35) / 10 = 6.5, which the seed rounds to 7."""
    assert round(6.5) == 6
    assert game_rating({"a": 35})["a"] == 7


def test_the_goat_past_a_hundred_loses_rating() -> None:
    assert game_rating({"goat": 125, "b": 40}) == {"goat": -3, "b": 6}
    assert game_rating({"goat": 101})["goat"] == 0


def test_a_timeout_gives_at_least_one_even_to_a_player_with_more_points() -> None:
    assert game_rating({"out": 10, "a": 60}, timed_out="out") == {"out": 0, "a": 1}


def test_an_unknown_player_out_by_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of the game's players"):
        game_rating({"a": 1}, timed_out="b")


def test_the_column_sums_games() -> None:
    club = ClubRating()
    club.add_game({"Masha": 25, "Alex": 101})
    club.add_game({"Alex": 32, "Masha": 30, "Olya": 13}, timed_out="Alex")
    assert club.totals == {"Masha": 9, "Alex": 0, "Olya": 2}
    assert club.games == {"Masha": 2, "Alex": 2, "Olya": 1}
