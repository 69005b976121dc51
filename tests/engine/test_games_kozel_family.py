"""Worked examples of sea_kozel, general and blitz (RULES.md §3, §6 TURN-2/3/8/10, SK, GEN, BL).

Turns are played for real through each game's own deal: the deal is started (so leads run),
then, where the example needs a position, the hands and the ends are set and the turn is played
move by move.  Scoring sequences end deals by hand, as ``test_games_kozel.py`` does: the hands
left, how the deal ended, the last turn's tiles and the declaration are set, and
``game.finish()`` scores it; the property tests against the independent reading check the same
rules on real endings.
"""

from __future__ import annotations

import pytest
import support
from support import mask, tiles

from referee.engine import (
    DOMINO,
    FISH,
    STOP,
    TERMINAL,
    Deal,
    DealEnd,
    IllegalPlay,
    Placed,
    parse_tile,
    play,
    variant,
)
from referee.engine.core.game import Special
from referee.engine.core.layout import LEFT, RIGHT
from referee.engine.core.line import DECLINE, HUNDRED, WRITE_OFF, Declared
from referee.engine.core.turns import ChainDeal, DoublesDeal

T = parse_tile

# Seat s gets every fourth tile id from s: 0-0 is seat 0's, 1-1 and 6-6 seat 3's.
RR = tuple(tuple(range(s, 28, 4)) for s in range(4))
DEAL4 = Deal(RR, ())
DEAL2 = Deal(RR[:2], RR[2] + RR[3])


def game(name: str, players: int = 4, **options):
    return variant(name).new_game(players, options)


def end_deal(g, left: dict[int, tuple[str, ...]], reason: str, seat: int, last_turn: tuple[str, ...] = (),
             declared: str | None = None, deal: Deal | None = None):
    """Start the next deal, then end it with ``left[seat]`` in the hands (and, in the games of
    doubles, ``last_turn`` and ``declared`` as the deal's last turn left them); return the record."""

    def arrange(state) -> None:
        if isinstance(state, DoublesDeal):
            state.last_turn = tiles(*last_turn)
            state.declared = declared

    return support.end_deal(g, left, reason, seat, deal or (DEAL4 if g.players == 4 else DEAL2), arrange)


def position(state, hands: dict[int, tuple[str, ...]], ends: tuple[int, int], seat: int) -> None:
    """Set the hands, the two ends and the seat to move of a deal in progress."""
    for s in range(state.n):
        state.hands[s] = mask(hands.get(s, ()))
    state.ends[0], state.ends[1] = ends
    state.turn = seat


def go_out_with(state, seat: int, first: str, second: str) -> None:
    """``seat`` holds exactly ``first`` and ``second`` and lays them as one turn, left then right."""
    a, b = T(first), T(second)
    position(state, {seat: (first, second), (seat + 1) % 4: ("2-3",)}, (int(first[0]), int(second[0])), seat)
    state.push(play(a, LEFT), seat)
    assert state.continuing and state.to_move() == seat
    assert state.legal_plays() == [play(b, RIGHT), STOP]
    state.push(play(b, RIGHT), seat)


# -- two doubles at once (TURN-2, TURN-3) ---------------------------------------------------------


def test_going_out_with_0_0_and_6_6_at_once_is_bald_in_sea_kozel():
    g = game("sea_kozel")
    state = g.start(DEAL4)
    go_out_with(state, 0, "0-0", "6-6")
    assert state.end == DealEnd(DOMINO, 0) and state.last_turn == tiles("0-0", "6-6")
    rec = g.finish(state)
    assert rec.rule == "bald" and rec.winner == 0
    out = g.outcome()
    assert out is not None and out.winners == (0,) and "bald" in out.reason
    assert out.score == (125, 0)  # a match runner counts an outright win as reaching 125


def test_going_out_with_0_0_and_6_6_at_once_gives_two_generals():
    g = game("general")
    state = g.start(DEAL4)
    go_out_with(state, 0, "0-0", "6-6")
    rec = g.finish(state)
    assert rec.rule == "two_generals"
    assert rec.wrote == (0, 2) and g.totals == [0, 2]  # to seat 1, the next seat: pair B


def test_one_general_for_0_0_with_another_double_and_the_next_seat_gets_it():
    g = game("general")
    state = g.start(DEAL4)
    go_out_with(state, 1, "0-0", "3-3")
    rec = g.finish(state)
    assert rec.rule == "general" and rec.wrote == (1, 0)  # seat 2 is pair A


def test_a_pair_of_doubles_needs_the_other_end_and_may_stop():
    g = game("general")
    state = g.start(DEAL4)
    position(state, {0: ("3-3", "5-5", "1-2"), 1: ("1-3",)}, (3, 5), 0)
    with pytest.raises(IllegalPlay) as bad:
        state.push(STOP, 0)
    assert bad.value.reason == IllegalPlay.CANNOT_STOP
    state.push(play(T("3-3"), LEFT), 0)
    assert state.continuing and state.legal_plays() == [play(T("5-5"), RIGHT), STOP]
    with pytest.raises(IllegalPlay, match="second double on the other end"):
        state.push(play(T("1-2"), LEFT), 0)
    state.push(STOP, 0)
    assert not state.continuing and state.to_move() == 1


def test_a_non_double_or_a_lead_never_starts_a_pair():
    g = game("general")
    state = g.start(DEAL4)
    position(state, {0: ("3-4", "5-5", "1-2"), 1: ("1-4",)}, (3, 5), 0)
    state.push(play(T("3-4"), LEFT), 0)
    assert not state.continuing and state.to_move() == 1


def test_general_leads_1_1_every_deal_automatically():
    g = game("general")
    for _ in range(2):
        state = g.start(DEAL4)
        assert type(state) is DoublesDeal
        assert state.history[0] == Placed(3, T("1-1"), None, True)
        assert state.to_move() == 0 and not state.continuing  # a lead never starts a pair
        g.finish(_ended(state, {}, DOMINO, 2))


# -- sea_kozel: the first deal, the 25 rule, wiping ----------------------------------------------


def test_sea_kozel_first_deal_leads_the_lowest_double_and_writes_only_25_or_more():
    g = game("sea_kozel")
    state = g.start(DEAL4)
    assert state.history[0] == Placed(3, T("1-1"), None, True)  # SK-18
    g.finish(_ended(state, {1: ("6-5", "6-4"), 3: ("6-3",)}, DOMINO, 0))
    assert g.last.rule == "write" and g.totals == [30, 0]  # worth: the two opponents' hands (SK-4)
    rec = end_deal(g, {0: ("1-2",), 2: ("0-3",)}, DOMINO, 1)
    assert rec.rule == "under_25" and g.totals == [30, 0]  # 6 < 25: nothing happens
    rec = end_deal(g, {0: ("5-6", "4-6"), 2: ("1-3",)}, DOMINO, 3)
    assert rec.rule == "wipe" and rec.wrote == (-30, 0) and g.totals == [0, 0]  # only one side has points


def _ended(state, left, reason, seat, last_turn=()):
    state.hands = [mask(left.get(s, ())) for s in range(state.n)]
    state.end = DealEnd(reason, seat)
    state.turn = TERMINAL
    state.last_turn = tiles(*last_turn)
    return state


def test_125_wins():
    g = game("sea_kozel", 2)
    for _ in range(4):
        end_deal(g, {1: ("6-6", "5-6")}, DOMINO, 0)  # worth 23: under 25, nothing
    assert g.totals == [0, 0]
    for _ in range(4):
        end_deal(g, {1: ("6-6", "5-6", "0-2")}, DOMINO, 0)
    assert g.totals == [100, 0] and g.outcome() is None
    end_deal(g, {1: ("6-6", "5-6", "0-2")}, DOMINO, 0)
    assert g.outcome().winners == (0,) and g.totals == [125, 0]


# -- a hundred ------------------------------------------------------------------------------------


def declared_hundred():
    """Pair B writes 30 in the first deal; seat 3 went out and leads the second holding 6-6."""
    g = game("sea_kozel")
    end_deal(g, {0: ("6-5", "6-4"), 2: ("6-3",)}, DOMINO, 3)
    assert g.totals == [0, 30] and g.special() is None
    state = g.start(DEAL4)
    assert state.to_move() == 3
    legal = state.legal_plays()
    assert play(T("6-6")) in legal and HUNDRED in legal  # SK-7: a separate decision
    state.push(HUNDRED, 3)
    assert state.history[:2] == [Declared(3, "hundred"), Placed(3, T("6-6"), None)]
    return g, state


def test_a_hundred_declared_and_won_wins_the_match():
    g, state = declared_hundred()
    rec = g.finish(_ended(state, {0: ("0-1",), 2: ("0-2",)}, DOMINO, 1))
    assert rec.rule == "hundred" and g.outcome().winners == (1,)


def test_a_hundred_lost_holding_25_or_more_is_svoyak():
    g, state = declared_hundred()
    rec = g.finish(_ended(state, {1: ("6-5", "4-6"), 3: ("3-3",)}, DOMINO, 0))
    assert rec.rule == "svoyak"
    out = g.outcome()
    assert out.winners == (0,) and out.losers == (1,) and "svoyak" in out.reason


def test_a_hundred_lost_holding_less_scores_normally():
    g, state = declared_hundred()
    rec = g.finish(_ended(state, {1: ("0-5",), 3: ("3-3",)}, DOMINO, 0))
    assert rec.rule == "under_25" and g.outcome() is None and g.special() is None


def test_a_declared_hundred_stands_through_the_fish_decision():
    """SK-9 with SK-12: declining gives the other side the fish, so a hundred declared in that
    deal is won by it, or lost as svoyak by a fisherman's side holding 25 or more; the decline
    must not replace the declaration (it did: the deal was scored as a plain decline)."""
    g, state = declared_hundred()
    _ended(state, {0: ("6-5", "6-4"), 2: ("6-3",), 1: ("0-1",), 3: ("0-2",)}, FISH, 0)
    state.declared = DECLINE  # seat 0 (pair A, F = 30 > O = 3) declines: pair B wins the fish
    rec = g.finish(state)
    assert rec.rule == "hundred" and g.outcome().winners == (1,)

    g, state = declared_hundred()
    _ended(state, {1: ("6-5", "6-4"), 3: ("6-3",), 0: ("0-1",), 2: ("0-2",)}, FISH, 3)
    state.declared = DECLINE  # the hundred's own fisherman declines holding 30: svoyak
    rec = g.finish(state)
    assert rec.rule == "svoyak" and g.outcome().winners == (0,)


def test_no_hundred_is_offered_in_the_first_deal_or_to_a_side_without_points():
    g = game("sea_kozel")
    end_deal(g, {0: ("0-1",)}, DOMINO, 3)  # pair B wins, but worth 1: no points
    state = g.start(DEAL4)
    assert state.to_move() == 3 and HUNDRED not in state.legal_plays()
    with pytest.raises(IllegalPlay, match="may not declare a hundred"):
        state.push(HUNDRED, 3)


def test_going_out_with_6_6_grants_a_hundred_or_wins_the_match():
    g = game("sea_kozel")
    rec = end_deal(g, {1: ("0-1",), 3: ("0-2",)}, DOMINO, 2, last_turn=("6-6",))
    assert rec.rule == "six_six_hundred" and g.special() == Special("hundred", side=0)
    state = g.start(DEAL4)
    assert state.to_move() == 2 and HUNDRED not in state.legal_plays()  # granted: any tile, no declaring
    g = game("sea_kozel")
    rec = end_deal(g, {1: ("5-6",), 3: ("6-6", "0-2")}, DOMINO, 2, last_turn=("6-6",))
    assert rec.rule == "six_six" and g.outcome().winners == (0,)


# -- fish ---------------------------------------------------------------------------------------


def test_fish_with_f_under_25_and_o_25_or_more_wins_and_grants_a_hundred():
    g = game("sea_kozel")
    rec = end_deal(g, {1: ("0-5", "0-6"), 3: ("4-5",), 0: ("5-6", "3-6"), 2: ("4-6",)}, FISH, 1)
    assert rec.rule == "fish_hundred" and rec.winner == 1
    assert g.totals == [0, 30]  # worth O = 30, written
    assert g.special() == Special("hundred", side=1)
    state = g.start(DEAL4)
    assert state.to_move() == 1  # SK-17: the fisherman's side won, he leads
    rec = g.finish(_ended(state, {0: ("0-1",), 2: ("0-2",)}, DOMINO, 3))
    assert rec.rule == "hundred" and g.outcome().winners == (1,)


def fish_to_decide(g):
    """Seat 0 lays 3-4 and nobody can place any more: a fish with F = 31 > O = 3 (SK-12)."""
    state = g.start(DEAL4)
    position(state, {0: ("3-4", "6-6", "1-1"), 1: ("0-1",), 2: ("2-6", "3-6"), 3: ("0-2",)}, (3, 5), 0)
    state.push(play(T("3-4"), LEFT), 0)
    assert state.end is None and state.to_move() == 0
    assert state.legal_plays() == [WRITE_OFF, DECLINE]
    with pytest.raises(IllegalPlay, match="write off or decline"):
        state.push(play(T("1-1"), LEFT), 0)
    return state


def test_declining_a_fish_gives_the_other_side_the_win_worth_f():
    g = game("sea_kozel")
    g.finish(_ended(g.start(DEAL4), {}, DOMINO, 3))  # a first deal, worth nothing
    state = fish_to_decide(g)
    state.push(DECLINE, 0)
    assert state.end == DealEnd(FISH, 0) and state.history[-1] == Declared(0, "decline")
    rec = g.finish(state)
    assert rec.rule == "declined" and rec.winner == 1 and g.totals == [0, 31]


def test_a_written_off_fish_that_succeeds():
    g = game("sea_kozel")
    g.finish(_ended(g.start(DEAL4), {}, DOMINO, 3))
    state = fish_to_decide(g)
    state.push(WRITE_OFF, 0)
    rec = g.finish(state)
    assert rec.rule == "write_off" and rec.wrote == (0, 0)
    assert g.special() == Special("write_off", side=0, deal=1, of=3)
    state = g.start(DEAL4)
    assert state.to_move() == 0 and state.lead_tile is None  # the fisherman leads any tile
    rec = g.finish(_ended(state, {1: ("0-1",)}, DOMINO, 2))  # won, but worth 1
    assert g.special() == Special("write_off", side=0, deal=2, of=3)
    rec = end_deal(g, {1: ("5-6", "4-6")}, DOMINO, 2)  # won, worth 21
    assert g.special() == Special("write_off", side=0, deal=3, of=3)
    rec = end_deal(g, {1: ("5-6", "4-6", "2-3")}, DOMINO, 0)  # won, worth 26: written off
    assert rec.rule == "write" and g.totals == [26, 0] and g.special() is None


def test_a_written_off_fish_that_fails_after_three_deals_grants_the_other_side_a_hundred():
    g = game("sea_kozel")
    g.finish(_ended(g.start(DEAL4), {}, DOMINO, 3))
    state = fish_to_decide(g)
    state.push(WRITE_OFF, 0)
    g.finish(state)
    for k in (1, 2, 3):
        assert g.special() == Special("write_off", side=0, deal=k, of=3)
        end_deal(g, {0: ("0-1",)}, DOMINO, 1)  # pair B wins, worth 1
    assert g.special() == Special("hundred", side=1)
    assert g.start(DEAL4).to_move() == 1  # the natural leader, seat 1, is on pair B


# -- eggs ---------------------------------------------------------------------------------------


def test_eggs_taken():
    g = game("sea_kozel")
    rec = end_deal(g, {0: ("0-5",), 1: ("1-4",), 2: ("2-2",), 3: ("0-4",)}, FISH, 0)
    assert rec.rule == "eggs" and g.special() == Special("eggs", deal=1, of=3, total=18)
    state = g.start(DEAL4)
    assert state.history[0] == Placed(3, T("1-1"), None, True)  # eggs deals: 1-1 led by its holder
    assert HUNDRED not in state.legal_plays()
    rec = g.finish(_ended(state, {0: ("0-3",), 2: ("0-4",)}, DOMINO, 1))
    assert rec.rule == "eggs_taken" and g.totals == [0, 25] and g.special() is None  # 18 + 7


def test_eggs_again_add_up_and_no_write_off_inside_eggs():
    g = game("sea_kozel")
    end_deal(g, {0: ("0-5",), 1: ("1-4",)}, FISH, 0)
    rec = end_deal(g, {0: ("0-6",), 1: ("1-5",)}, FISH, 1)
    assert rec.rule == "eggs" and g.special() == Special("eggs", deal=2, of=3, total=22)


def test_rotten_eggs_draw_the_match():
    g = game("sea_kozel")
    end_deal(g, {0: ("0-5",), 1: ("1-4",)}, FISH, 0)
    end_deal(g, {0: ("0-5",), 1: ("1-4",)}, FISH, 0)
    end_deal(g, {0: ("0-5",), 1: ("1-4",)}, FISH, 0)
    assert g.outcome() is None and g.special() == Special("eggs", deal=3, of=3, total=30)
    rec = end_deal(g, {0: ("0-5",), 1: ("1-4",)}, FISH, 0)
    assert rec.rule == "rotten_eggs"
    out = g.outcome()
    assert out is not None and out.drawn and "rotten" in out.reason


# -- blitz ----------------------------------------------------------------------------------------


def test_003_blitz_chain_3_4_then_4_6_6_2_2_1():
    g = game("blitz")
    state = g.start(DEAL4)
    assert type(state) is ChainDeal
    position(state, {0: ("3-4", "4-6", "2-6", "1-2", "5-5"), 1: ("0-1",), 2: ("1-5",), 3: ("0-3",)}, (3, 0), 0)
    state.push(play(T("3-4"), LEFT), 0)
    for t in ("4-6", "2-6", "1-2"):
        assert state.to_move() == 0 and state.continuing  # compulsory: it goes on
        assert [p.tile for p in state.legal_plays()] == [T(t)]
        with pytest.raises(IllegalPlay) as bad:
            state.push(STOP, 0)
        assert bad.value.reason == IllegalPlay.CANNOT_STOP
        state.push(play(T(t), LEFT), 0)
    assert state.ends == [1, 0] and not state.continuing and state.to_move() == 1  # 5-5 fits nowhere


def test_blitz_forced_1_1_starts_a_chain_and_going_out_mid_chain_ends_the_deal():
    g = game("blitz")
    state = g.start(DEAL4)
    assert state.history[0] == Placed(3, T("1-1"), None, True)
    assert state.to_move() == 3 and state.continuing  # seat 3 holds 1-5: the chain goes on
    position(state, {3: ("1-5", "5-6", "0-6")}, (1, 1), 3)
    state.push(play(T("1-5"), LEFT), 3)
    state.push(play(T("5-6"), LEFT), 3)
    state.push(play(T("0-6"), LEFT), 3)
    assert state.end == DealEnd(DOMINO, 3)
    rec = g.finish(state)
    assert rec.rule == DOMINO


def test_blitz_scores_as_individual_kozel():
    g = game("blitz")
    rec = end_deal(g, {0: ("6-6",), 1: ("0-0",), 2: ("1-2",)}, DOMINO, 3)
    assert rec.wrote == (50, 25, 0, 0)  # every loser writes its own hand; 3 < 13 is dropped
    rec = end_deal(g, {0: ("6-5",), 1: ("6-4",), 2: ("6-5",), 3: ("1-2",)}, FISH, 3)
    assert rec.rule == "eggs" and rec.wrote == (0, 0, 0, 0)  # a tie for the most


# -- general: void fish, the deal cap, the generals option ----------------------------------------


def test_general_void_fish_and_its_deal_cap():
    g = game("general", max_deals=10)
    for _ in range(9):
        rec = end_deal(g, {0: ("5-6",)}, FISH, 0)
        assert rec.rule == "void_fish" and rec.wrote == (0, 0) and rec.void is None
    assert g.outcome() is None
    end_deal(g, {}, FISH, 1)
    out = g.outcome()
    assert out is not None and out.drawn and "10 deals" in out.reason  # void fish count (GEN-6)


def test_general_cap_gives_the_win_to_fewer_generals_and_the_generals_option():
    g = game("general", max_deals=10)
    end_deal(g, {}, DOMINO, 0, last_turn=("6-6",))  # a general for pair B
    for _ in range(9):
        end_deal(g, {}, FISH, 0)
    assert g.outcome().winners == (0,)
    g = game("general", generals=1)
    end_deal(g, {}, DOMINO, 1, last_turn=("0-0",))
    out = g.outcome()
    assert out.losers == (0,) and "1 generals" in out.reason


# -- random playouts: the legal list is exactly what check accepts; no tile is lost ----------------

CANDIDATES = [play(t, e) for t in range(28) for e in (None, LEFT, RIGHT)] + [STOP, HUNDRED, WRITE_OFF, DECLINE]


@pytest.mark.parametrize("vid, players", [("sea_kozel", 4), ("sea_kozel", 2), ("general", 4), ("blitz", 4)])
def test_random_playouts_agree_with_check(vid, players):
    import random

    from referee.engine import deal_from_seed
    from referee.engine.core.tiles import ALL_TILES

    v = variant(vid)
    shape = v.shape(players)
    rng = random.Random(12)
    index = deals = 0
    while deals < 150:
        g = v.new_game(players)
        while g.outcome() is None:
            state = g.start(deal_from_seed(12, index, shape))
            index += 1
            if state is None:
                continue
            deals += 1
            while state.to_move() != TERMINAL:
                legal = state.legal_plays()
                assert len(set(legal)) == len(legal) and legal
                for p in CANDIDATES:
                    try:
                        state.check(p)
                        ok = True
                    except IllegalPlay:
                        ok = False
                    lead = state.ends[0] < 0 and p.tile >= 0 and p.declare is None
                    asked = play(p.tile) if lead else p  # a lead's end is ignored, as in every line game
                    assert ok == (asked in legal), (vid, str(p), [str(x) for x in legal])
                state.push(rng.choice(legal), state.to_move())
                assert state.all_tiles() == ALL_TILES
            g.finish(state)


# -- leads after a fish, and faults ----------------------------------------------------------------


def test_after_a_fish_the_fisherman_leads_if_his_side_won_else_the_seat_after_him():
    g = game("sea_kozel")
    end_deal(g, {1: ("0-1",), 0: ("5-6",)}, FISH, 1)  # pair B (the fisherman's) holds fewer: it won
    assert g.start(DEAL4).to_move() == 1
    g = game("sea_kozel")
    end_deal(g, {1: ("5-6",), 0: ("0-1",)}, FISH, 1)  # pair A won the fish: the seat after seat 1
    assert g.start(DEAL4).to_move() == 2


def test_a_fault_in_sea_kozel_is_a_lost_deal_and_in_a_hundred_deal_may_be_svoyak():
    g, state = declared_hundred()  # pair B plays for a hundred
    state.hands = [mask(h) for h in (("0-1",), ("6-5", "6-4"), ("0-2",), ("3-3",))]
    state.forfeit(3)
    rec = g.finish(state)
    assert rec.rule == "svoyak" and g.outcome().winners == (0,)
    g = game("sea_kozel")
    state = g.start(DEAL4)
    state.hands = [mask(h) for h in (("0-1",), ("6-5", "6-4"), ("0-2",), ("3-3",))]
    state.forfeit(1)
    rec = g.finish(state)
    assert rec.rule == "fault" and g.totals == [27, 0] and g.start(DEAL4).to_move() == 2


def test_a_fault_in_general_costs_the_faulting_pair_a_general():
    g = game("general")
    state = g.start(DEAL4)
    state.forfeit(2)
    rec = g.finish(state)
    assert rec.rule == "fault" and g.totals == [1, 0]
