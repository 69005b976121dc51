"""Sport worked examples (RULES.md §3 sport, §5 sport; seeds 001, 003)."""

from __future__ import annotations

import random
from functools import partial

import pytest
import support

from referee.engine import TERMINAL, BadOption, Deal, parse_tile, variant

T = parse_tile
RR = Deal(tuple(tuple(range(s, 28, 4)) for s in range(4)), ())


#: every deal here is dealt round robin
end_deal = partial(support.end_deal, deal=RR)


def random_deal(rnd):
    order = list(range(28))
    rnd.shuffle(order)
    return Deal(tuple(tuple(order[7 * s : 7 * s + 7]) for s in range(4)), ())


def test_lead_rotates_over_eight_deals_with_any_tile():
    rnd = random.Random(8)
    game = variant("sport").new_game(4, deals=8)
    for k in range(8):
        assert game.outcome() is None
        deal = random_deal(rnd)
        state = game.start(deal)
        assert state.leader == k % 4
        assert state.history == [] and state.to_move() == k % 4
        assert [p.tile for p in state.legal_plays()] == sorted(deal.hands[k % 4])
        while state.to_move() != TERMINAL:
            state.apply(rnd.choice(state.legal_plays()))
        rec = game.finish(state)
        assert rec.leader == k % 4 and rec.lead_tile is None
    out = game.outcome()
    assert out is not None and len(game.records) == 8
    with pytest.raises(RuntimeError):
        game.start(random_deal(rnd))


@pytest.mark.parametrize("deals", [1, 2, 3, 5, 6, 7, 9, 10, 14, 0, -4])
def test_deal_counts_not_a_multiple_of_four_are_refused(deals):
    with pytest.raises(BadOption, match="multiple of 4"):
        variant("sport").new_game(4, deals=deals)


@pytest.mark.parametrize("deals", [4, 8, 12, 16])
def test_deal_counts_multiple_of_four(deals):
    assert variant("sport").new_game(4, deals=deals).deals == deals


def test_default_is_twelve_deals_and_four_players():
    assert variant("sport").new_game(4).deals == 12
    with pytest.raises(BadOption):
        variant("sport").new_game(2)


def test_going_out_the_pair_writes_both_opponents_hands():
    game = variant("sport").new_game(4, deals=4)
    rec = end_deal(game, {0: ("6-6",), 1: ("2-3", "0-1"), 2: (), 3: ("4-4",)}, "domino", 2)
    assert rec.wrote == (14, 0) and rec.winner == 0
    rec = end_deal(game, {0: ("6-6",), 2: ("0-0", "1-2")}, "domino", 3)
    assert rec.wrote == (0, 15) and rec.winner == 1


def test_fish_fewer_pips_writes_the_opponents_total_equal_nobody():
    game = variant("sport").new_game(4, deals=4)
    rec = end_deal(game, {0: ("1-2",), 1: ("5-6",), 2: ("0-4",), 3: ("0-1",)}, "fish", 1)
    assert rec.wrote == (12, 0)  # A 7 < B 12
    rec = end_deal(game, {0: ("5-6",), 1: ("1-2",), 2: ("0-4",), 3: ("0-1",)}, "fish", 1)
    assert rec.wrote == (0, 15)  # B 4 < A 15
    rec = end_deal(game, {0: ("5-6",), 1: ("4-5",), 2: ("0-1",), 3: ("0-3",)}, "fish", 1)
    assert rec.wrote == (0, 0) and rec.winner is None


@pytest.mark.parametrize(
    "lone, b1, b3, wrote",
    [
        (True, ("0-0",), ("6-6",), 75),
        (True, ("0-0", "6-6"), ("0-1",), 76),
        (True, ("0-0", "0-1"), ("6-6", "1-1"), 15),
        (False, ("0-0",), ("6-6",), 12),
        (False, ("0-0", "6-6"), ("0-1",), 13),
    ],
)
def test_lone_double_values(lone, b1, b3, wrote):
    game = variant("sport").new_game(4, {"lone_doubles": lone}, deals=4)
    rec = end_deal(game, {1: b1, 3: b3, 2: ("1-2",)}, "domino", 0)
    assert rec.wrote == (wrote, 0)


def test_lone_double_values_are_used_to_compare_a_fish():
    left = {0: ("0-0",), 2: ("1-1",), 1: ("3-4",), 3: ("4-5",)}  # A 0+2 or 25+2, B 16
    game = variant("sport").new_game(4, {"lone_doubles": True}, deals=4)
    assert end_deal(game, dict(left), "fish", 0).wrote == (0, 27)
    game = variant("sport").new_game(4, deals=4)
    assert end_deal(game, dict(left), "fish", 0).wrote == (16, 0)


def test_match_result_the_pair_that_wrote_more_wins_equal_is_a_draw():
    game = variant("sport").new_game(4, deals=4)
    end_deal(game, {1: ("5-6",)}, "domino", 0)
    end_deal(game, {0: ("5-6",)}, "domino", 1)
    end_deal(game, {1: ("0-1",)}, "domino", 2)
    assert game.outcome() is None
    end_deal(game, {0: ("0-2",)}, "domino", 3)
    out = game.outcome()
    assert out.totals == (12, 13) and out.winners == (1,) and out.losers == (0,)
    game = variant("sport").new_game(4, deals=4)
    for seat in range(4):
        end_deal(game, {(seat + 1) % 4: ("5-6",)}, "domino", seat)
    out = game.outcome()
    assert out.totals == (22, 22) and out.drawn
