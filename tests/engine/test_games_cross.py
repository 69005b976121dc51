"""Worked examples of the cross games: osel, telephone, muggins (RULES.md §3, §6 LAY/TURN/OS/TEL/MUG).

Positions are played for real through each game's own deal (``game.new_deal``, or ``game.start``
where the lead rule is the point) with chosen hands; scoring examples that need only the end of
a deal set the hands left and the ending by hand, as ``test_games_kozel.py`` does.
"""

from __future__ import annotations

import msgspec
import pytest
from support import end_deal, mask, tiles

from referee.engine import (
    FISH,
    STOP,
    Deal,
    DealEnd,
    IllegalPlay,
    Placed,
    Scored,
    parse_tile,
    play,
    variant,
)
from referee.engine.core.cross import CrossDeal, arms
from referee.engine.core.layout import DOWN, LEFT, RIGHT, UP
from referee.engine.core.line import DOMINO, DRAW_UNTIL_FIT, NO_DRAW

T = parse_tile


def deal_with(players: int, hand_size: int, **held: tuple[str, ...]) -> Deal:
    """A deal where seat ``s`` holds ``held[f"s{s}"]`` first, filled up with the lowest free tiles
    in seat order; what is left is the undealt stock, lowest first."""
    chosen = {s: list(tiles(*held.get(f"s{s}", ()))) for s in range(players)}
    taken = {t for ts in chosen.values() for t in ts}
    free = [t for t in range(28) if t not in taken]
    hands = []
    for s in range(players):
        hand = chosen[s]
        while len(hand) < hand_size:
            hand.append(free.pop(0))
        hands.append(tuple(hand))
    return Deal(tuple(hands), tuple(free))


def game(name: str, players: int, **options):
    return variant(name).new_game(players, options)


def scored(state) -> list[tuple[int, int, int]]:
    return [(e.seat, e.points, e.count) for e in state.history if type(e) is Scored]


# -- telephone -----------------------------------------------------------------------------------


def house_example(**options):
    """003's example: house 4-4 covered on both sides, ends 6 and 3; then 6-6 on the 6, then 4-5
    on the house."""
    g = game("telephone", 4, **options)
    deal = deal_with(4, 7, s0=("4-4", "4-5", "0-1"), s1=("4-6", "0-2"), s2=("3-4", "0-3"), s3=("6-6", "0-4"))
    state = g.new_deal(deal, 0, None, NO_DRAW, 0)
    state.push(play(T("4-4")), 0)
    state.push(play(T("4-6"), RIGHT), 1)
    state.push(play(T("3-4"), LEFT), 2)
    assert state.ends == [3, 6, 4, 4]  # covered on both sides: the house opens
    assert state.count() == 9  # up and down count nothing until a tile lies on them
    state.push(play(T("6-6"), RIGHT), 3)
    state.push(play(T("4-5"), UP), 0)
    return g, state


def test_telephone_house_example_writes_15_then_20():
    _g, state = house_example()
    assert scored(state) == [(3, 15, 15), (0, 20, 20)]  # 6+6+3, then 6+6+3+5
    assert state.count() == 20


def test_telephone_scale_5_writes_a_fifth():
    _g, state = house_example(scale=5)
    assert scored(state) == [(3, 3, 15), (0, 4, 20)]


def test_telephone_house_arms_stay_shut_until_both_sides_are_covered():
    g = game("telephone", 4)
    deal = deal_with(4, 7, s0=("4-4", "0-1"), s1=("4-6", "4-5", "0-2"))
    state = g.new_deal(deal, 0, None, NO_DRAW, 0)
    state.push(play(T("4-4")), 0)
    assert state.ends == [4, 4, -1, -1]
    with pytest.raises(IllegalPlay, match="'up' is not open: the first double .4-4. must be covered on both sides") as exc:
        state.push(play(T("4-6"), UP), 1)
    assert exc.value.reason == IllegalPlay.BAD_END
    state.push(play(T("4-6"), RIGHT), 1)
    assert state.count() == 4 * 2 + 6  # a lead double with one side covered counts both halves at its open side


def test_telephone_first_lead_3_2_is_forced_and_writes_5():
    g = game("telephone", 4)
    deal = deal_with(4, 7, s2=("2-3",))
    state = g.start(deal)
    assert state.history[:2] == [Placed(2, T("2-3"), None, True), Scored(2, 5, 5)]
    assert state.to_move() == 3


def test_telephone_3_2_in_the_bazaar_forces_the_highest_double():
    g = game("telephone", 2)
    deal = deal_with(2, 7, s0=("0-1", "5-5"), s1=("6-6",))
    assert deal.holder(T("2-3")) is None
    state = g.start(deal)
    assert state.history[0] == Placed(1, T("6-6"), None, True)
    assert scored(state) == []  # 12 is not a multiple of 5


def test_telephone_a_6_4_lead_writes_10():
    g = game("telephone", 4)
    state = g.new_deal(deal_with(4, 7, s1=("4-6",)), 1, None, NO_DRAW, 0)
    state.push(play(T("4-6")), 1)
    assert scored(state) == [(1, 10, 10)]


def test_telephone_pairs_write_during_play_and_the_record_adds_it():
    g, state = house_example()
    state.forfeit(1)  # end it here: seat 1's fault
    rec = g.finish(state)
    assert rec.played == (20, 15)  # seat 0 is pair A, seat 3 pair B
    assert rec.totals == rec.wrote and rec.wrote[1] == 15  # the fault: pair A writes what pair B holds


def test_telephone_loser_pays_rounds_down_and_never_below_zero():
    g = game("telephone", 4)
    deal = deal_with(4, 7, s0=("2-3",))
    g.totals[:] = [30, 10]
    # Seat 0 went out (the forced 3-2 wrote 5 for pair A); seat 2 (pair A) holds 9 → 5 off;
    # seat 1 holds 14 → 10 off, seat 3 holds 8 → 5 off: pair B would go to -5, stops at 0.
    rec = end_deal(g, {1: ("6-6", "0-2"), 2: ("4-5",), 3: ("2-6",)}, DOMINO, 0, deal)
    assert rec.played == (5, 0)
    assert rec.totals == (30, 0)
    assert rec.wrote == (0, -10)


def test_telephone_scale_5_deducts_a_fifth_rounded_down():
    g = game("telephone", 2, scale=5)
    g.totals[:] = [40, 40]
    rec = end_deal(g, {0: ("6-6", "2-5"), 1: ("0-4",)}, FISH, 0, deal_with(2, 7, s0=("2-3",)))
    # the lead 3-2 wrote 5 / 5 = 1 for seat 0; 19 // 5 = 3 off seat 0, 4 // 5 = 0 off seat 1
    assert rec.played == (1, 0)
    assert rec.totals == (38, 40)


@pytest.mark.parametrize("scale, held, wrote", [(1, ("6-6",), 10), (1, ("6-6", "0-1"), 15), (5, ("6-6", "0-1"), 3)])
def test_telephone_winner_takes_rounds_to_the_nearest_5(scale, held, wrote):
    g = game("telephone", 2, endgame="winner_takes", scale=scale)
    rec = end_deal(g, {1: held}, DOMINO, 0, deal_with(2, 7, s1=("2-3",)))
    # seat 1 led the forced 3-2 (5, or 1 under scale 5); seat 0 went out: 12 → 10, 13 → 15
    assert rec.wrote[0] == wrote
    assert rec.played == (0, 5 // scale)


def test_telephone_winner_takes_fish_goes_to_fewer_pips():
    g = game("telephone", 2, endgame="winner_takes")
    rec = end_deal(g, {0: ("0-1",), 1: ("5-6", "0-2")}, FISH, 1, deal_with(2, 7, s0=("2-3",)))
    assert rec.wrote == (5 + 15, 0)  # the lead's 5, then 13 rounded to 15
    rec = end_deal(g, {0: ("0-1",), 1: ("1-0",)}, FISH, 1, deal_with(2, 7, s1=("2-3",)))
    assert rec.wrote == (0, 0)  # equal totals write nothing


@pytest.mark.parametrize("scale, held, wrote", [(1, ("5-6", "0-1"), 10), (1, ("5-6", "0-2"), 15), (5, ("5-6", "0-2"), 3)])
def test_telephone_winner_takes_fish_write_is_rounded_like_a_dominos(scale, held, wrote):
    """TEL-7: the side with fewer pips writes the other's total rounded to the nearest 5, as a
    domino's write is: 12 → 10, 13 → 15; under scale 5, 15 / 5 = 3."""
    g = game("telephone", 2, endgame="winner_takes", scale=scale)
    rec = end_deal(g, {0: ("0-0",), 1: held}, FISH, 1, deal_with(2, 7, s1=("2-3",)))
    assert rec.wrote[0] == wrote


def test_telephone_225_wins_and_both_at_225_draw():
    g = game("telephone", 2)
    g.totals[:] = [220, 100]
    end_deal(g, {}, FISH, 0, deal_with(2, 7, s0=("2-3",)))  # the lead's 5 for seat 0; hands empty
    assert g.outcome().winners == (0,)
    g = game("telephone", 2)
    g.totals[:] = [220, 220]
    rec = end_deal(g, {}, FISH, 0, deal_with(2, 7, s0=("2-3",)))
    assert rec.totals == (225, 220)
    g = game("telephone", 2, scale=5)
    assert g.target == 72


def test_telephone_refuses_closing_with_a_reason():
    g = game("telephone", 4)
    state = g.new_deal(deal_with(4, 7, s0=("3-5",), s1=("3-3",)), 0, None, NO_DRAW, 0)
    state.push(play(T("3-5")), 0)
    with pytest.raises(IllegalPlay, match="never laid closed") as exc:
        state.push(play(T("3-3"), LEFT, True), 1)
    assert exc.value.reason == IllegalPlay.CANNOT_CLOSE
    with pytest.raises(IllegalPlay, match="nothing to stop") as exc:
        state.push(STOP, 1)
    assert exc.value.reason == IllegalPlay.CANNOT_STOP
    assert state.to_move() == 1 and len(state.history) == 1  # nothing changed


# -- muggins -------------------------------------------------------------------------------------


def test_muggins_lone_5_5_lead_counts_10():
    g = game("muggins", 2)
    deal = deal_with(2, 7, s0=("5-5", "0-1"), s1=("4-4",))
    assert deal.holder(T("6-6")) is None  # 6-6 sleeps in the bazaar: 5-5 is the highest double held
    state = g.start(deal)
    assert state.history[:2] == [Placed(0, T("5-5"), None, True), Scored(0, 10, 10)]


def test_muggins_spinner_opens_when_covered_and_counts_per_lay6():
    g = game("muggins", 2)
    state = g.new_deal(deal_with(2, 7, s0=("5-5", "0-5", "0-0"), s1=("3-5", "5-6", "0-1")), 0, None, DRAW_UNTIL_FIT, 0)
    state.push(play(T("5-5")), 0)  # 10
    state.push(play(T("3-5"), RIGHT), 1)  # 10 + 3 = 13 (LAY-6's example)
    assert state.count() == 13
    state.push(play(T("0-5"), LEFT), 0)  # 0 + 3 = 3; the spinner opens
    assert state.ends[UP] == state.ends[DOWN] == 5 and state.count() == 3
    state.push(play(T("5-6"), UP), 1)  # 0 + 3 + 6 = 9
    assert state.count() == 9
    assert scored(state) == [(0, 10, 10)]


def test_muggins_going_out_writes_10_and_the_fish_rounds():
    g = game("muggins", 2)
    rec = end_deal(g, {1: ("0-4",)}, DOMINO, 0, deal_with(2, 7, s0=("6-6",)))
    assert rec.wrote[0] == 10 and rec.played == (0, 0)  # 6-6 alone counts 12: nothing during play
    g = game("muggins", 3)
    # fewest is seat 0 with 3; others 9 + 6 = 15; 15 - 3 = 12 → 10 (1–2 down)
    rec = end_deal(g, {0: ("1-2",), 1: ("4-5",), 2: ("0-6",)}, FISH, 1, deal_with(3, 5, s0=("6-6",)))
    assert rec.wrote == (10, 0, 0)
    # 16 - 3 = 13 → 15 (3–4 up)
    rec = end_deal(g, {0: ("1-2",), 1: ("4-5",), 2: ("3-4",)}, FISH, 1, deal_with(3, 5, s0=("6-6",)))
    assert rec.wrote == (15, 0, 0)
    rec = end_deal(g, {0: ("1-2",), 1: ("0-3",), 2: ("3-4",)}, FISH, 1, deal_with(3, 5, s0=("6-6",)))
    assert rec.wrote == (0, 0, 0) and rec.winner is None  # a tie for fewest writes nothing


def test_muggins_after_a_tied_fish_the_forced_lead_comes_back():
    g = game("muggins", 2)
    end_deal(g, {0: ("1-2",), 1: ("0-3",)}, FISH, 1, deal_with(2, 7, s0=("6-6",)))
    state = g.start(deal_with(2, 7, s1=("6-6",)))
    assert state.history[0] == Placed(1, T("6-6"), None, True)
    g = game("muggins", 2)
    end_deal(g, {0: ("1-2",), 1: ("0-6",)}, FISH, 1, deal_with(2, 7, s0=("6-6",)))
    state = g.start(deal_with(2, 7, s1=("6-6",)))
    assert state.history == [] and state.to_move() == 0  # seat 0 won the fish: it leads any tile


def test_muggins_200_several_the_highest_wins_equal_draw():
    g = game("muggins", 3)
    g.totals[:] = [195, 210, 150]
    end_deal(g, {1: ("0-1",), 2: ("0-2",)}, DOMINO, 0, deal_with(3, 5, s0=("0-0",)))
    assert g.outcome().winners == (1,)  # 205 and 210: the highest wins
    g = game("muggins", 3)
    g.totals[:] = [200, 210, 150]
    end_deal(g, {1: ("0-1",), 2: ("0-2",)}, DOMINO, 0, deal_with(3, 5, s0=("0-0",)))
    assert g.outcome().winners == () and g.outcome().drawn
    assert g.outcome().losers == ()  # X-0: a drawn game names no losers (seat 2's 150 included)


# -- osel ----------------------------------------------------------------------------------------


def osel_state(**held):
    g = game("osel", 4)
    deal = deal_with(4, 7, **held)
    return g, g.new_deal(deal, 0, None, NO_DRAW, 0)


def test_osel_close_both_ends_fish():
    g, state = osel_state(s0=("3-5",), s1=("3-3", "5-5", "0-0"))
    state.push(play(T("3-5")), 0)
    legal = state.legal_plays()
    assert play(T("3-3"), LEFT, True) in legal and play(T("5-5"), RIGHT, True) in legal
    state.push(play(T("3-3"), LEFT, True), 1)
    assert state.to_move() == 1 and state.continuing
    assert state.legal_plays() == [play(T("5-5"), RIGHT, True)]  # the only legal move (TURN-6)
    with pytest.raises(IllegalPlay, match="only move is to close the right end too, with 5-5 closed"):
        state.push(STOP, 1)
    state.push(play(T("5-5"), RIGHT, True), 1)
    assert state.end == DealEnd(FISH, 1)
    assert state.history[-2:] == [Placed(1, T("3-3"), LEFT, False, True), Placed(1, T("5-5"), RIGHT, False, True)]
    rec = g.finish(state)
    assert rec.end == DealEnd(FISH, 1)  # scored as a kozel fish: the heavier pair takes all
    sides = [rec.values[0] + rec.values[2], rec.values[1] + rec.values[3]]
    heavier = 0 if sides[0] > sides[1] else 1
    assert rec.wrote[heavier] == sum(rec.values) and rec.wrote[1 - heavier] == 0
    assert g.leader_after(rec) == 1  # the closer leads next


def test_osel_closing_one_end_needs_the_other_double():
    _g, state = osel_state(s0=("3-5",), s1=("3-3", "0-0"))
    state.push(play(T("3-5")), 0)
    assert play(T("3-3"), LEFT, True) not in state.legal_plays()
    with pytest.raises(IllegalPlay, match="opens the cross and stays open") as exc:
        state.push(play(T("3-3"), LEFT, True), 1)
    assert exc.value.reason == IllegalPlay.CANNOT_CLOSE
    state.push(play(T("3-3"), LEFT), 1)  # open: the cross, three ends of 3 at once (LAY-4)
    assert state.ends == [3, 5, 3, 3]


def test_osel_second_closing_double_as_the_last_tile_is_going_out():
    _g, state = osel_state(s0=("3-5",), s1=("3-3", "5-5"))
    state.hands[1] = mask(("3-3", "5-5"))
    state.push(play(T("3-5")), 0)
    state.push(play(T("3-3"), LEFT, True), 1)
    state.push(play(T("5-5"), RIGHT, True), 1)
    assert state.end == DealEnd(DOMINO, 1)


def test_osel_extra_doubles_one_per_unused_end_then_stop():
    _g, state = osel_state(s0=("3-5", "3-3", "5-5", "6-6", "3-6"), s1=("1-3",))
    state.push(play(T("3-5")), 0)  # the lead is the turn's one tile
    assert state.continuing and state.to_move() == 0
    legal = state.legal_plays()
    # No double on the table and the lead was not one, but these are extras: the first is the
    # cross and lies open (TURN-5); TURN-6's closing is a turn of its own, never extras.
    assert legal == [play(T("3-3"), LEFT), play(T("5-5"), RIGHT), STOP]
    state.push(play(T("3-3"), LEFT), 0)  # the first double: the cross opens at once
    assert state.ends == [3, 5, 3, 3]
    assert state.legal_plays() == [play(T("5-5"), RIGHT), play(T("5-5"), RIGHT, True), STOP]
    with pytest.raises(IllegalPlay, match="only doubles may be added"):
        state.push(play(T("3-6"), UP), 0)
    state.push(play(T("5-5"), RIGHT, True), 0)  # closed: nothing more on the right
    assert state.ends == [3, -1, 3, 3]
    assert not state.continuing and state.to_move() == 1  # nothing more could be added: the turn ended
    with pytest.raises(IllegalPlay, match="the right end is closed"):
        state.push(play(T("1-3"), RIGHT), 1)


def test_osel_leader_never_closes_both_ends_with_extras():
    """TURN-6 is a turn of its own: its first double is the turn's one tile.  A leader who led a
    non-double and holds both line ends' doubles adds them as extras, the first open (the cross),
    and the deal goes on; the engine offered closing here before RULES.md said otherwise."""
    _g, state = osel_state(s0=("2-5", "2-2", "5-5"), s1=("1-3",))
    state.push(play(T("2-5")), 0)
    assert state.continuing and play(T("2-2"), LEFT, True) not in state.legal_plays()
    assert play(T("5-5"), RIGHT, True) not in state.legal_plays()
    with pytest.raises(IllegalPlay, match="closing both line ends is a turn of its own") as exc:
        state.push(play(T("5-5"), RIGHT, True), 0)
    assert exc.value.reason == IllegalPlay.CANNOT_CLOSE
    state.push(play(T("5-5"), RIGHT), 0)  # open: the cross (LAY-4)
    assert state.ends == [2, 5, 5, 5]
    assert play(T("2-2"), LEFT, True) in state.legal_plays()  # TURN-5: the cross exists now
    state.push(play(T("2-2"), LEFT, True), 0)
    assert state.end is None and state.ends == [-1, 5, 5, 5]


def test_osel_one_tile_then_a_double_on_another_end_or_stop():
    _g, state = osel_state(s0=("1-3",), s1=("3-4", "1-1", "2-2"))
    state.push(play(T("1-3")), 0)
    state.push(play(T("3-4"), RIGHT), 1)
    assert state.continuing and state.legal_plays() == [play(T("1-1"), LEFT), STOP]  # right was used
    state.push(STOP, 1)
    assert not state.continuing and state.to_move() == 2
    assert state.ends == [1, 4]  + [-1, -1]


def test_osel_up_before_the_cross_is_refused():
    _g, state = osel_state(s0=("1-3",), s1=("3-4", "1-5"))
    state.push(play(T("1-3")), 0)
    with pytest.raises(IllegalPlay, match="'up' is not open: no double has been played yet"):
        state.push(play(T("3-4"), UP), 1)


def test_osel_rule_of_13_hangs_and_is_forgotten():
    # OS-3: 8 hangs for pair B; a deal that gives pair B nothing forgets it; 8 then hangs anew.
    g = game("osel", 4)
    rr = Deal(tuple(tuple(range(s, 28, 4)) for s in range(4)), ())
    rec = end_deal(g, {1: ("2-6",)}, DOMINO, 0, rr)
    assert rec.wrote == (0, 0) and g.rule13.pending == [0, 8]
    rec = end_deal(g, {0: ("6-6", "0-1")}, DOMINO, 1, rr)  # pair B went out: it gets nothing
    assert rec.wrote == (13, 0) and g.rule13.pending == [0, 0]
    assert any("forgotten" in n for n in rec.notes)
    rec = end_deal(g, {1: ("2-6",)}, DOMINO, 0, rr)
    assert g.rule13.pending == [0, 8]
    rec = end_deal(g, {1: ("2-3",)}, DOMINO, 0, rr)
    assert rec.wrote == (0, 13)  # 8 + 5: the sum reaches 13


def test_osel_has_no_options_and_kozel_seats():
    v = variant("osel")
    assert v.options == ()
    assert v.players == (4, 2, 3)
    assert v.new_game(4).pair_play and not v.new_game(2).pair_play
    assert variant("osel").new_game(3).draw_rule() == (DRAW_UNTIL_FIT, 1)


# -- the cross drawn -----------------------------------------------------------------------------


def test_arms_draw_the_cross_from_the_history():
    _g, state = house_example()
    a = arms(state.history)
    assert a[None] == [(4, 4, False)]
    assert a[RIGHT] == [(4, 6, False), (6, 6, False)]
    assert a[LEFT] == [(4, 3, False)]
    assert a[UP] == [(4, 5, False)]
    assert isinstance(state, CrossDeal)


# -- at the table --------------------------------------------------------------------------------

BOT = r'''
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "x", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        play = {"type": "play", **msg["legal"][0]}
        if mode == "close" and play["tile"] is not None and play["end"] is not None:
            play["closed"] = True
        elif mode == "stop":
            play = {"type": "play", "tile": None, "stop": True}
        elif mode == "up" and msg["ends"]:
            play["end"] = "up"
        elif mode == "turn":
            play["turn"] = msg["id"] + 1000
        print(json.dumps(play), flush=True)
    elif msg["type"] == "match_end":
        break
'''


@pytest.mark.parametrize("mode, kind, why", [
    ("close", "illegal", "never laid closed"),
    ("stop", "illegal", "nothing to stop"),
    ("up", "illegal", "'up' is not open"),
    ("turn", "out_of_turn", "the play answers turn"),
])
def test_a_bot_that_breaks_the_cross_rules_gets_the_fault_and_the_reason(mode, kind, why, tmp_path):
    import sys

    import trio

    from referee.base.clock import TimeControl
    from referee.bots.bot import Bot
    from referee.matches.match import run_match
    from referee.matches.spec import MatchSpec

    v = variant("telephone")
    first = [sys.executable, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "sample_bots" / "first_bot.py")]
    spec = MatchSpec(v, [Bot("bad", [sys.executable, "-c", BOT, mode]), Bot("first", first)], 2, v.resolve_options(2),
                     games=1, seed=3, tc=TimeControl(startup=20, move=10), log_path=tmp_path / "m.jsonl",
                     stderr_dir=tmp_path / "err", max_faults=1)
    data = msgspec.to_builtins(trio.run(run_match, spec).whole())
    faults = [f for f in data["faults"] if f["bot"] == "bad"]
    assert faults and faults[0]["kind"] == kind and why in faults[0]["detail"], faults
