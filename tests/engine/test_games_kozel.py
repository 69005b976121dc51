"""Kozel worked examples (RULES.md §3 kozel, §2.9, §5; seeds 000, 001, 002).

Scoring examples end a deal by hand: the deal is started for real (so leads and redeals run),
then the hands left and the way it ended are set, and ``game.finish()`` scores it.  Only
``finish()`` reads them, so this checks the scoring rules in isolation; the random playouts in
``test_engine_playouts.py`` check the same rules on real endings.
"""

from __future__ import annotations

import pytest
import support
from support import tiles

from referee.engine import (
    BadOption,
    Deal,
    Placed,
    parse_tile,
    play,
    variant,
)

T = parse_tile
M, A, O, S = 0, 1, 2, 3  # noqa: E741   002's table: Masha, Alex, Olya, Serg


# Seat s gets every fourth tile id from s: no hand has 5 doubles or 6 of a suit; 1-1 is seat 3's.
RR = tuple(tuple(range(s, 28, 4)) for s in range(4))
DEAL4 = Deal(RR, ())
DEAL3 = Deal(RR[:3], RR[3])
DEAL2 = Deal(RR[:2], RR[2] + RR[3])


def deal_for(players: int) -> Deal:
    return {4: DEAL4, 3: DEAL3, 2: DEAL2}[players]


def end_deal(game, left: dict[int, tuple[str, ...]], reason: str, seat: int, deal: Deal | None = None):
    """Start the next deal (by default one without a redeal), then end it with ``left[seat]`` in
    the hands; return the record."""
    return support.end_deal(game, left, reason, seat, deal or deal_for(game.players))


def kozel(players=4, **options):
    return variant("kozel").new_game(players, options)


# -- hand values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "zero_zero, b1, b3, values, wrote",
    [
        (25, ("0-0",), ("6-6",), (0, 25, 3, 50), 75),
        (10, ("0-0",), ("6-6",), (0, 10, 3, 50), 60),  # zero_zero=10 changes only the lone 0-0
        (25, ("0-1",), ("0-0", "6-6"), (0, 1, 3, 12), 13),  # both together: their 12 pips
        (10, ("0-1",), ("0-0", "6-6"), (0, 1, 3, 12), 13),
        (25, ("0-0", "0-1"), ("6-6", "1-1"), (0, 1, 3, 14), 15),  # not alone: plain pips
    ],
)
def test_lone_double_values(zero_zero, b1, b3, values, wrote):
    game = kozel(zero_zero=zero_zero)
    rec = end_deal(game, {1: b1, 2: ("1-2",), 3: b3}, "domino", 0)
    assert rec.values == values
    assert rec.wrote == (0, wrote)


def test_lone_double_values_alone_two_players():
    game = kozel(2, zero_zero=10)
    assert end_deal(game, {1: ("0-0",)}, "domino", 0).wrote == (0, 0)  # 10 < 13: dropped
    game = kozel(2)
    assert end_deal(game, {1: ("0-0",)}, "domino", 0).wrote == (0, 25)
    assert end_deal(game, {0: ("6-6",)}, "domino", 1).wrote == (50, 0)


# -- going out, fish options, eggs -------------------------------------------------------------------


def test_going_out_the_opponents_write_both_hands():
    game = kozel()
    rec = end_deal(game, {0: ("1-2",), 1: ("5-6", "4-4"), 2: ("1-3",), 3: ("2-2",)}, "domino", 2)
    assert rec.wrote == (0, 23)
    assert rec.winner == 0


def test_fish_heavier_pair_takes_all():
    game = kozel()
    rec = end_deal(game, {0: ("6-6", "0-4"), 1: ("4-5",), 2: ("0-1",), 3: ("1-6",)}, "fish", 0)
    # pair A 16 + 1 = 17, pair B 9 + 7 = 16: A holds more and writes all 33.
    assert rec.wrote == (33, 0)


def test_fish_max_takes_all_compares_single_hands_in_pairs():
    left = {0: ("4-6",), 1: ("4-5",), 2: ("0-1",), 3: ("2-6",)}  # 10, 9, 1, 8: A 11, B 17
    assert end_deal(kozel(), dict(left), "fish", 0).wrote == (0, 28)
    assert end_deal(kozel(fish="max_takes_all"), dict(left), "fish", 0).wrote == (28, 0)


def test_fish_max_takes_all_partners_tied_for_most_is_a_pot():
    """§3: "a tie for most carries the whole total into a pot" — read literally, also when the
    two hands tied for most are partners (RULES.md does not single this case out)."""
    game = kozel(fish="max_takes_all")
    rec = end_deal(game, {0: ("4-6",), 1: ("0-3",), 2: ("5-5",), 3: ("0-4",)}, "fish", 0)
    assert rec.wrote == (0, 0)
    rec = end_deal(game, {1: ("0-1",), 3: ("0-2",)}, "domino", 0)
    assert rec.wrote == (0, 3 + 27)


def test_fish_each_writes_own_with_the_rule_of_13():
    game = kozel(fish="each_writes_own")
    rec = end_deal(game, {0: ("4-6",), 1: ("4-5", "5-6"), 2: ("0-1",), 3: ("0-2",)}, "fish", 0)
    assert rec.wrote == (0, 22)  # A's 11 is under 13 and dropped


def test_eggs_go_to_the_pair_that_loses_the_next_deal():
    game = kozel()
    eggs = end_deal(game, {0: ("0-5",), 2: ("1-4",), 1: ("0-4",), 3: ("1-5",)}, "fish", 0)
    assert eggs.wrote == (0, 0)
    assert any("eggs" in n for n in eggs.notes)
    # next deal: the fisherman (seat 0) leads any tile; seat 0 goes out, pair B loses
    rec = end_deal(game, {1: ("1-2",), 3: ("0-4",)}, "domino", 0)
    assert rec.leader == 0 and rec.lead_tile is None
    assert rec.wrote == (0, 7 + 20)
    # the carried points are spent: the next loss is written plainly
    assert end_deal(game, {0: ("5-6", "4-4")}, "domino", 1).wrote == (19, 0)


def test_eggs_are_added_before_the_rule_of_13():
    game = kozel()
    end_deal(game, {0: ("0-2",), 2: ("1-1",), 1: ("0-1",), 3: ("0-3",)}, "fish", 3)  # 4 and 4: eggs of 8
    # pair A loses with 6: alone it would be dropped, with the 8 eggs it is 14 and counts
    assert end_deal(game, {0: ("0-3",), 2: ("1-2",)}, "domino", 3).wrote == (14, 0)


def test_eggs_that_meet_eggs_accumulate():
    game = kozel()
    end_deal(game, {0: ("0-5",), 2: ("1-4",), 1: ("0-4",), 3: ("1-5",)}, "fish", 0)  # 20
    end_deal(game, {0: ("0-2",), 2: ("1-1",), 1: ("0-1",), 3: ("0-3",)}, "fish", 1)  # 8
    rec = end_deal(game, {1: ("1-2",), 3: ("0-4",)}, "domino", 2)
    assert rec.wrote == (0, 7 + 28)


def test_eggs_two_players_tie_for_most():
    game = kozel(2)
    end_deal(game, {0: ("4-6",), 1: ("5-5",)}, "fish", 1)
    assert end_deal(game, {1: ("0-5",)}, "domino", 0).wrote == (0, 25)


def test_three_players_fish_most_takes_all_tie_is_eggs():
    game = kozel(3)
    rec = end_deal(game, {0: ("0-3",), 1: ("0-4",), 2: ("4-6",)}, "fish", 0)
    assert rec.wrote == (0, 0, 17)
    game = kozel(3)
    rec = end_deal(game, {0: ("0-3",), 1: ("4-6",), 2: ("5-5",)}, "fish", 0)
    assert rec.wrote == (0, 0, 0)
    rec = end_deal(game, {1: ("0-1",), 2: ("2-3",)}, "domino", 0)
    assert rec.wrote == (0, 0, 5 + 23)  # the 23 go to the largest write (seat 2's 5); 1 is dropped


# -- the rule of 13 ----------------------------------------------------------------------------


def test_rule13_drop():
    game = kozel()
    assert end_deal(game, {1: ("5-6",), 3: ("0-1",)}, "domino", 0).wrote == (0, 0)  # 12 dropped
    assert end_deal(game, {1: ("5-6",), 3: ("0-2",)}, "domino", 0).wrote == (0, 13)
    assert end_deal(game, {1: ("0-1",), 3: ("0-2",)}, "domino", 0).wrote == (0, 3)  # open: all counts
    assert end_deal(game, {0: ("0-1",), 2: ("0-2",)}, "domino", 1).wrote == (0, 0)
    assert game.totals == [0, 16]


def test_rule13_hang():
    game = kozel(rule13="hang")
    assert end_deal(game, {1: ("0-5",)}, "domino", 0).wrote == (0, 0)  # 5 hangs
    assert end_deal(game, {1: ("3-4",)}, "domino", 0).wrote == (0, 0)  # 5 + 7 = 12 still hangs
    assert end_deal(game, {0: ("5-6",)}, "domino", 1).wrote == (0, 0)  # A: 11 hangs
    assert end_deal(game, {1: ("0-4",)}, "domino", 0).wrote == (0, 16)  # 12 + 4
    assert end_deal(game, {1: ("0-1",)}, "domino", 0).wrote == (0, 1)
    assert end_deal(game, {0: ("0-2",)}, "domino", 1).wrote == (13, 0)  # A: 11 + 2
    assert game.totals == [13, 17]


def test_rule13_remember_pairs():
    game = kozel(rule13="remember")
    assert end_deal(game, {1: ("0-5",)}, "domino", 0).wrote == (0, 0)  # +5
    assert end_deal(game, {1: ("3-4",)}, "domino", 0).wrote == (0, 0)  # +12: only the deal's own sum is tested
    assert end_deal(game, {1: ("6-6", "0-1")}, "domino", 0).wrote == (0, 25)  # 13 opens, brings +12
    # going out clears the winner's remembered points
    game = kozel(rule13="remember")
    assert end_deal(game, {1: ("0-5",)}, "domino", 0).wrote == (0, 0)  # B +5
    assert end_deal(game, {0: ("0-1",)}, "domino", 1).wrote == (0, 0)  # B goes out: +5 cleared
    assert end_deal(game, {1: ("6-6", "0-1")}, "domino", 0).wrote == (0, 13)


def _table_002(fish: str = "heavier_pair_takes_all"):
    """Two deals that Alex wins, leaving Masha +19, Alex 0, Olya +7, Serg +4 remembered."""
    game = kozel(4, teams="none", rule13="remember", fish=fish, zero_zero=10)
    assert end_deal(game, {M: ("5-6", "0-1"), O: ("1-2",), S: ("0-2",)}, "domino", A).wrote == (0, 0, 0, 0)
    assert end_deal(game, {M: ("3-4",), O: ("0-4",), S: ("1-1",)}, "domino", A).wrote == (0, 0, 0, 0)
    return game


def test_002_remembered_points_table():
    game = _table_002()
    rec = end_deal(game, {A: ("0-3",), O: ("6-6", "0-1"), S: ("2-3",)}, "domino", M)
    # Masha goes out (+19 cleared, 0); Alex 3 → +3; Olya +7 writes 13 → 20; Serg +4 writes 5 → +9
    assert rec.values == (0, 3, 13, 5)
    assert rec.wrote == (0, 0, 20, 0)
    assert rec.totals == (0, 0, 20, 0)
    # what is remembered shows in the next deal: Olya goes out; Masha's 13 opens with nothing
    # added (her +19 was cleared), Alex's 10 joins his +3 without opening, Serg's 13 brings +9.
    rec = end_deal(game, {M: ("4-5", "0-4"), A: ("4-6",), S: ("6-6", "0-1")}, "domino", O)
    assert rec.wrote == (13, 0, 0, 22)
    # Alex now has +13 remembered: a later 13 opens with it
    rec = end_deal(game, {A: ("6-6", "0-1"), M: ("0-1",), S: ("0-2",)}, "domino", O)
    assert rec.wrote == (1, 26, 0, 2)


def test_002_fish_for_one():
    game = _table_002(fish="max_takes_all")
    rec = end_deal(game, {M: ("0-2",), A: ("1-2",), O: ("6-6", "0-1"), S: ("0-5",)}, "fish", S)
    # 2 + 3 + 13 + 5 = 23 to Olya, who holds the most, plus her remembered 7
    assert rec.wrote == (0, 0, 30, 0)
    # the others' remembered points are cleared: Masha's and Serg's 13s open with nothing added
    rec = end_deal(game, {M: ("6-6", "0-1"), A: ("6-6", "0-1"), S: ("6-6", "0-1")}, "domino", O)
    assert rec.leader == S  # the fisherman leads
    assert rec.wrote == (13, 13, 0, 13)


def _tied_fish_for_one():
    game = kozel(4, teams="none", rule13="remember", fish="max_takes_all")
    rec = end_deal(game, {M: ("1-2",), A: ("6-6", "0-2"), O: ("5-6", "0-3"), S: ("0-4",)}, "fish", A)
    assert rec.values == (3, 14, 14, 4)
    assert rec.wrote == (0, 0, 0, 0)
    return game


def test_002_tied_fish_for_one_pot_goes_to_the_next_top_scorer():
    game = _tied_fish_for_one()
    rec = end_deal(game, {A: ("0-5",), O: ("3-5",), S: ("5-5", "4-6")}, "domino", M)
    assert rec.wrote == (0, 0, 0, 20 + 35)
    # Alex +5 and Olya +8 are remembered: a 13 opens with them
    rec = end_deal(game, {A: ("6-6", "0-1"), O: ("6-6", "0-1")}, "domino", M)
    assert rec.wrote == (0, 18, 21, 0)


def test_002_pot_is_added_before_the_rule_of_13():
    game = _tied_fish_for_one()
    rec = end_deal(game, {A: ("0-5",), O: ("3-5",), S: ("4-5",)}, "domino", M)
    assert rec.wrote == (0, 0, 0, 9 + 35)


def test_002_pot_accumulates_over_tied_fishes():
    game = _tied_fish_for_one()
    rec = end_deal(game, {M: ("0-1",), A: ("4-6",), O: ("5-5",), S: ("0-2",)}, "fish", M)
    assert rec.wrote == (0, 0, 0, 0)
    rec = end_deal(game, {A: ("0-1",), O: ("0-2",), S: ("6-6", "0-1")}, "domino", M)
    assert rec.wrote == (0, 0, 0, 13 + 35 + 23)


def test_002_pot_waits_when_the_next_top_write_is_tied():
    game = _tied_fish_for_one()
    rec = end_deal(game, {A: ("4-6",), O: ("5-5",), S: ("0-5",)}, "domino", M)
    assert rec.wrote == (0, 0, 0, 0)  # A and O tie at 10: the 35 waits (and 10, 10, 5 are remembered)
    rec = end_deal(game, {A: ("0-2",), O: ("0-3",), S: ("0-6",)}, "domino", M)
    assert rec.wrote == (0, 0, 0, 6 + 35 + 5)


# -- the end of the game -------------------------------------------------------------------------


def worth(n: int, exclude=()) -> tuple[str, ...]:
    """Tile names worth ``n`` pips together (never a lone 0-0 or 6-6)."""
    names = [f"{a}-{b}" for a in range(7) for b in range(a, 7) if f"{a}-{b}" not in exclude and (a, b) != (0, 0)]
    names.sort(key=lambda x: -sum(map(int, x.split("-"))))
    out, left = [], n
    for name in names:
        p = sum(map(int, name.split("-")))
        if p <= left:
            out.append(name)
            left -= p
    assert left == 0 and tuple(out) not in (("6-6",),)
    return tuple(out)


@pytest.mark.parametrize("target", [50, 100, 150])
def test_goats_at_target_plus_one_and_a_dry_win(target):
    game = kozel(target=target)
    first = target // 2
    end_deal(game, {1: worth(first)}, "domino", 0)
    rec = end_deal(game, {1: worth(target - first - 1)}, "domino", 0)
    assert rec.totals == (0, target - 1)
    assert game.outcome() is None
    end_deal(game, {1: ("0-1",)}, "domino", 0)
    assert game.totals == [0, target]
    assert game.outcome() is None  # reaching the target is not yet the goat
    end_deal(game, {1: ("0-1",)}, "domino", 0)
    out = game.outcome()
    assert out is not None
    assert out.losers == (1,) and out.winners == (0,)
    assert out.dry == (0,)
    assert "dry" in out.reason and str(target + 1) in out.reason
    with pytest.raises(RuntimeError):
        game.start(DEAL4)


def test_no_dry_win_when_the_winners_have_points_and_hanging_points_do_not_spoil_it():
    game = kozel()
    end_deal(game, {0: ("6-6", "0-1")}, "domino", 1)  # A writes 13
    end_deal(game, {1: worth(101)}, "domino", 0)
    assert game.outcome().losers == (1,) and game.outcome().dry == ()
    game = kozel(rule13="hang")
    end_deal(game, {0: ("0-5",)}, "domino", 1)  # 5 hangs for A
    end_deal(game, {1: worth(101)}, "domino", 0)
    assert game.totals == [0, 101]
    assert game.outcome().dry == (0,)


def test_several_goats_in_one_deal():
    game = kozel(3, fish="each_writes_own")
    end_deal(game, {0: worth(60), 1: worth(60), 2: ("0-1",)}, "fish", 2)
    rec = end_deal(game, {0: worth(41), 1: worth(50), 2: ("0-2",)}, "fish", 2)
    assert rec.totals == (101, 110, 0)
    out = game.outcome()
    assert out.losers == (0, 1) and out.winners == (2,) and out.dry == (2,)


@pytest.mark.parametrize("players", [4, 3, 2])
def test_every_side_a_goat_in_one_deal_is_drawn_and_names_no_losers(players):
    """§5: several sides past the target in the same deal are all goats; when that is every
    side nobody won, and a drawn game names no losers (X-0)."""
    game = kozel(players, fish="each_writes_own")
    sides = len(game.sides)
    game.totals[:] = [90] * sides
    held = [worth(20), worth(20), ("0-1",), ("0-2",)] if players == 4 else [worth(20)] * players
    end_deal(game, dict(enumerate(held)), "fish", 0)
    out = game.outcome()
    assert all(t >= 101 for t in out.totals), out.totals
    assert out.drawn and out.winners == () and out.losers == () and "drawn" in out.reason


# -- leads and redeals -----------------------------------------------------------------------------


@pytest.mark.parametrize("teams", ["pairs", "none"])
def test_first_deal_four_players_the_1_1_holder_leads_with_it(teams):
    game = kozel(4, teams=teams)
    state = game.start(DEAL4)
    assert state.leader == 3
    assert state.history[0] == Placed(3, T("1-1"), None, True)


def _two_player_deal(hand0, hand1, bazaar):
    deal = Deal((tiles(*hand0), tiles(*hand1)), tiles(*bazaar))
    assert sorted(deal.hands[0] + deal.hands[1] + deal.undealt) == list(range(28))
    return deal


def test_first_deal_two_players_lowest_double_held():
    deal = _two_player_deal(
        ("5-5", "0-1", "0-2", "0-3", "0-4", "1-2", "1-3"),
        ("3-3", "0-0", "0-5", "0-6", "1-4", "1-5", "1-6"),
        ("1-1", "2-2", "4-4", "6-6", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "5-6"),
    )
    state = kozel(2).start(deal)
    assert state.history[0] == Placed(1, T("3-3"), None, True)  # 1-1 and 2-2 lie in the bazaar


def test_first_deal_lowest_double_order_puts_0_0_after_6_6():
    deal = _two_player_deal(
        ("0-0", "0-1", "0-2", "0-3", "1-2", "1-3", "1-4"),
        ("6-6", "0-4", "0-5", "1-5", "1-6", "2-3", "2-4"),
        ("1-1", "2-2", "3-3", "4-4", "5-5", "0-6", "2-5", "2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "5-6"),
    )
    state = kozel(2).start(deal)
    assert state.history[0] == Placed(1, T("6-6"), None, True)


def test_first_deal_no_double_in_any_hand_the_heaviest_tile_leads():
    # 5-6 and 4-6 are in the bazaar; 3-6 and 4-5 both weigh 9: 3-6 has the larger half (§2.8)
    deal = _two_player_deal(
        ("4-5", "0-1", "0-2", "0-3", "0-4", "0-5", "1-2"),
        ("3-6", "1-3", "1-4", "1-5", "2-3", "2-4", "2-5"),
        ("0-0", "1-1", "2-2", "3-3", "4-4", "5-5", "6-6", "5-6", "4-6", "0-6", "1-6", "2-6", "3-4", "3-5"),
    )
    state = kozel(2).start(deal)
    assert state.history[0] == Placed(1, T("3-6"), None, True)


def test_first_deal_three_players():
    deal = Deal((RR[0], RR[1], RR[3]), RR[2])  # 1-1 is seat 2's (RR[3])
    state = kozel(3).start(deal)
    assert state.history[0] == Placed(2, T("1-1"), None, True)


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("reason", ["domino", "fish"])
def test_later_deals_the_player_who_ended_the_last_leads_any_tile(players, reason):
    game = kozel(players)
    end_deal(game, dict.fromkeys(range(players), ("0-1",)), reason, 1)
    state = game.start(deal_for(players))
    assert state.leader == 1
    assert state.history == []
    assert state.to_move() == 1
    assert state.legal_plays() == [play(t) for t in sorted(deal_for(players).hands[1])]


FIVE_DOUBLES = Deal(
    (
        tiles("0-0", "1-1", "2-2", "3-3", "4-4", "0-1", "2-3"),
        tiles("5-5", "0-2", "0-3", "1-2", "1-3", "2-4", "3-5"),
        tiles("6-6", "0-4", "1-4", "2-5", "3-6", "4-5", "5-6"),
        tiles("0-5", "0-6", "1-5", "1-6", "2-6", "3-4", "4-6"),
    ),
    (),
)
SIX_OF_A_SUIT = Deal(
    (
        tiles("0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "1-1"),  # six 0s, without 0-0
        tiles("0-0", "2-2", "1-2", "1-3", "1-4", "1-5", "1-6"),
        tiles("3-3", "4-4", "2-3", "2-4", "2-5", "2-6", "3-4"),
        tiles("5-5", "6-6", "3-5", "3-6", "4-5", "4-6", "5-6"),
    ),
    (),
)
FIVE_OF_A_SUIT_WITH_ITS_DOUBLE = Deal(
    (
        tiles("6-6", "0-6", "1-6", "2-6", "3-6", "0-0", "1-2"),
        tiles("1-1", "0-1", "0-2", "0-3", "1-3", "1-4", "2-3"),
        tiles("2-2", "3-3", "0-4", "0-5", "1-5", "2-4", "2-5"),
        tiles("4-4", "5-5", "3-4", "3-5", "4-5", "4-6", "5-6"),
    ),
    (),
)


def _check(deal):
    assert sorted([t for h in deal.hands for t in h] + list(deal.undealt)) == list(range(28))
    return deal


@pytest.mark.parametrize("deal", [FIVE_DOUBLES, SIX_OF_A_SUIT], ids=["five doubles", "six of a suit"])
def test_void_first_deal_is_redealt_and_keeps_the_first_deal_lead(deal):
    _check(deal)
    game = kozel()
    assert game.start(deal) is None
    assert game.records[-1].void
    assert game.played == 0 and game.totals == [0, 0]
    state = game.start(DEAL4)
    assert state.history[0] == Placed(3, T("1-1"), None, True)


def test_five_of_a_suit_counting_its_double_once_is_not_void():
    _check(FIVE_OF_A_SUIT_WITH_ITS_DOUBLE)
    state = kozel().start(FIVE_OF_A_SUIT_WITH_ITS_DOUBLE)
    assert state is not None
    assert state.history[0] == Placed(1, T("1-1"), None, True)


def test_void_later_deal_keeps_the_previous_ender_as_leader():
    game = kozel()
    end_deal(game, {1: ("0-1",)}, "domino", 2)
    assert game.start(FIVE_DOUBLES) is None
    state = game.start(DEAL4)
    assert state.leader == 2 and state.history == []


def test_redeal_looks_only_at_hands():
    # two players: the bazaar holds all seven doubles and all seven 2s, which does not matter
    deal = _two_player_deal(
        ("0-1", "0-3", "0-4", "0-5", "0-6", "1-3", "1-4"),
        ("1-5", "1-6", "3-4", "3-5", "3-6", "4-5", "4-6"),
        ("0-0", "1-1", "2-2", "3-3", "4-4", "5-5", "6-6", "0-2", "1-2", "2-3", "2-4", "2-5", "2-6", "5-6"),
    )
    state = kozel(2).start(deal)
    assert state is not None
    assert state.history[0] == Placed(1, T("4-6"), None, True)  # no double held: heaviest tile
    # and in a hand it does count, for 2 and 3 players too
    assert kozel(2).start(Deal(FIVE_DOUBLES.hands[:2], FIVE_DOUBLES.hands[2] + FIVE_DOUBLES.hands[3])) is None


def test_options_are_checked():
    with pytest.raises(BadOption):
        kozel(rule13="sometimes")
    with pytest.raises(BadOption):
        kozel(target=101)
    with pytest.raises(BadOption):
        kozel(2, teams="none")
    with pytest.raises(BadOption):
        variant("kozel").new_game(5)
