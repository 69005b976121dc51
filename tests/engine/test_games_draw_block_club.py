"""draw, block and club worked examples (RULES.md §3 draw, block, club; §5; seeds 000, 004):
how each deals, who leads, and what a domino or a fish writes."""

from __future__ import annotations

import pytest
from support import end_deal, tiles

from referee.engine import (
    TERMINAL,
    BadOption,
    Deal,
    DealEnd,
    Placed,
    parse_tile,
    play,
    variant,
)

T = parse_tile
ALL = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


def deal_of(*hands, undealt=None) -> Deal:
    used = {n for h in hands for n in h}
    rest = undealt if undealt is not None else [n for n in ALL if n not in used]
    deal = Deal(tuple(tiles(*h) for h in hands), tiles(*rest))
    assert sorted([t for h in deal.hands for t in h] + list(deal.undealt)) == list(range(28))
    return deal


@pytest.mark.parametrize(
    "vid, players, hand, undealt, kind",
    [
        ("draw", 2, 7, 14, "bazaar"), ("draw", 3, 5, 13, "bazaar"), ("draw", 4, 5, 8, "bazaar"),
        ("block", 2, 7, 14, "sleeping"), ("block", 3, 6, 10, "sleeping"), ("block", 4, 7, 0, "sleeping"),
        ("club", 2, 7, 14, "bazaar"), ("club", 3, 7, 7, "bazaar"), ("club", 4, 7, 0, "bazaar"),
        ("kozel", 2, 7, 14, "bazaar"), ("kozel", 3, 7, 7, "bazaar"), ("kozel", 4, 7, 0, "sleeping"),
        ("sport", 4, 7, 0, "sleeping"),
    ],
)
def test_deal_shapes(vid, players, hand, undealt, kind):
    shape = variant(vid).shape(players)
    assert (shape.players, shape.hand_size, shape.undealt_count) == (players, hand, undealt)
    if undealt:
        assert shape.undealt == kind


@pytest.mark.parametrize("vid", ["draw", "block", "club"])
def test_player_counts(vid):
    for n in (2, 3, 4):
        variant(vid).new_game(n)
    for n in (1, 5):
        with pytest.raises(BadOption):
            variant(vid).new_game(n)


# -- leads -------------------------------------------------------------------------------------

# Two players: 6-6 in the bazaar, 5-5 and 2-2 held.
DEAL_55 = deal_of(
    ("2-2", "0-1", "0-2", "0-3", "1-2", "1-3", "2-3"),
    ("5-5", "0-4", "0-5", "1-4", "1-5", "2-4", "2-5"),
    undealt=("6-6", "0-0", "1-1", "3-3", "4-4", "0-6", "1-6", "2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "5-6"),
)
# Two players: every double in the bazaar; 3-6 and 4-5 (9 each) are the heaviest held.
DEAL_NO_DOUBLE = deal_of(
    ("4-5", "0-1", "0-2", "0-3", "0-4", "0-5", "1-2"),
    ("3-6", "1-3", "1-4", "1-5", "2-3", "2-4", "2-5"),
    undealt=("0-0", "1-1", "2-2", "3-3", "4-4", "5-5", "6-6", "5-6", "4-6", "0-6", "1-6", "2-6", "3-4", "3-5"),
)
DEAL_66 = deal_of(
    ("2-2", "0-1", "0-2", "0-3", "1-2", "1-3", "2-3"),
    ("6-6", "5-5", "0-4", "1-4", "1-5", "2-4", "2-5"),
)


@pytest.mark.parametrize("vid", ["draw", "block", "club"])
def test_first_deal_highest_double_held_leads_with_it(vid):
    state = variant(vid).new_game(2).start(DEAL_55)
    assert state.history[0] == Placed(1, T("5-5"), None, True)  # 6-6 is undealt: lead searches ignore it
    state = variant(vid).new_game(2).start(DEAL_66)
    assert state.history[0] == Placed(1, T("6-6"), None, True)


@pytest.mark.parametrize("vid", ["draw", "block", "club"])
def test_first_deal_no_double_held_heaviest_tile_leads(vid):
    state = variant(vid).new_game(2).start(DEAL_NO_DOUBLE)
    assert state.history[0] == Placed(1, T("3-6"), None, True)


@pytest.mark.parametrize("vid", ["draw", "block"])
@pytest.mark.parametrize("reason", ["domino", "fish"])
def test_draw_block_later_deals_the_winner_leads_any_tile(vid, reason):
    game = variant(vid).new_game(2)
    if reason == "fish":  # seat 1 made the fish, seat 0 holds fewer pips and wins
        rec = end_deal(game, {0: ("0-1",), 1: ("5-6",)}, "fish", 1, DEAL_66)
    else:
        rec = end_deal(game, {1: ("5-6",)}, "domino", 0, DEAL_66)
    assert rec.winner == 0
    state = game.start(DEAL_66)
    assert state.leader == 0 and state.history == [] and state.to_move() == 0
    assert state.legal_plays() == [play(t) for t in sorted(DEAL_66.hands[0])]


@pytest.mark.parametrize("vid", ["draw", "block"])
def test_draw_block_after_a_drawn_deal_the_highest_double_leads_again(vid):
    game = variant(vid).new_game(2)
    end_deal(game, {1: ("0-1",)}, "domino", 0, DEAL_66)  # seat 0 wins: seat 0 would lead
    rec = end_deal(game, {0: ("1-2",), 1: ("0-3",)}, "fish", 0, DEAL_66)  # 3 and 3: drawn
    assert rec.winner is None and rec.wrote == (0, 0)
    assert rec.leader == 0 and rec.lead_tile is None
    state = game.start(DEAL_55)
    assert state.history[0] == Placed(1, T("5-5"), None, True)


def test_club_every_deal_is_led_by_the_6_6_holder():
    game = variant("club").new_game(2)
    rec = end_deal(game, {1: ("0-1",)}, "domino", 0, DEAL_66)
    assert rec.winner == 0
    state = game.start(DEAL_66)
    assert state.history[0] == Placed(1, T("6-6"), None, True)
    game.finish(_end(state, "domino", 1))
    state = game.start(DEAL_55)
    assert state.history[0] == Placed(1, T("5-5"), None, True)


def _end(state, reason, seat):
    state.hands = [0] * len(state.hands)
    state.end = DealEnd(reason, seat)
    state.turn = TERMINAL
    return state


# -- scoring -----------------------------------------------------------------------------------

DEAL3_DRAW = deal_of(
    ("6-6", "0-1", "0-2", "0-3", "0-4"), ("1-1", "1-2", "1-3", "1-4", "1-5"), ("2-2", "2-3", "2-4", "2-5", "2-6"),
)
DEAL3_BLOCK = deal_of(
    ("6-6", "0-1", "0-2", "0-3", "0-4", "0-5"), ("1-1", "1-2", "1-3", "1-4", "1-5", "1-6"),
    ("2-2", "2-3", "2-4", "2-5", "2-6", "3-3"),
)
DEAL3_CLUB = deal_of(
    ("6-6", "0-1", "0-2", "0-3", "0-4", "0-5", "3-4"), ("1-1", "1-2", "1-3", "1-4", "1-5", "1-6", "3-5"),
    ("2-2", "2-3", "2-4", "2-5", "2-6", "3-3", "3-6"),
)
THREE = {"draw": DEAL3_DRAW, "block": DEAL3_BLOCK, "club": DEAL3_CLUB}


@pytest.mark.parametrize("vid", ["draw", "block", "club"])
def test_going_out_writes_every_opponents_pips(vid):
    game = variant(vid).new_game(3)
    rec = end_deal(game, {0: ("5-6",), 2: ("0-1", "1-2")}, "domino", 1, THREE[vid])
    assert rec.wrote == (0, 15, 0) and rec.winner == 1


@pytest.mark.parametrize("vid", ["draw", "block"])
def test_draw_block_fish_fewest_writes_the_others_less_their_own(vid):
    game = variant(vid).new_game(3)
    rec = end_deal(game, {0: ("0-5",), 1: ("3-6",), 2: ("5-5", "0-2")}, "fish", 2, THREE[vid])
    assert rec.values == (5, 9, 12)
    assert rec.wrote == (9 + 12 - 5, 0, 0) and rec.winner == 0
    game = variant(vid).new_game(2)
    rec = end_deal(game, {0: ("0-5",), 1: ("3-6",)}, "fish", 1, DEAL_66)
    assert rec.wrote == (4, 0)


def test_club_fish_fewest_writes_the_others_total():
    game = variant("club").new_game(3)
    rec = end_deal(game, {0: ("0-5",), 1: ("3-6",), 2: ("5-5", "0-2")}, "fish", 2, DEAL3_CLUB)
    assert rec.wrote == (21, 0, 0) and rec.winner == 0


@pytest.mark.parametrize("vid", ["draw", "block", "club"])
def test_fish_tie_for_fewest_nobody_writes(vid):
    game = variant(vid).new_game(4)
    deal = deal_of(*[tuple(ALL[s::4][: game.shape.hand_size]) for s in range(4)])
    rec = end_deal(game, {0: ("0-5",), 1: ("1-4",), 2: ("4-6",), 3: ("3-5",)}, "fish", 2, deal)
    assert rec.wrote == (0, 0, 0, 0) and rec.winner is None
    # a tie that is not for the fewest does not matter
    rec = end_deal(game, {0: ("0-4",), 1: ("1-4",), 2: ("4-6",), 3: ("0-5",)}, "fish", 2, deal)
    assert rec.winner == 0


@pytest.mark.parametrize("vid", ["draw", "block"])
def test_lone_doubles_option(vid):
    game = variant(vid).new_game(3, {"lone_doubles": True})
    rec = end_deal(game, {1: ("0-0",), 2: ("6-6",)}, "domino", 0, THREE[vid])
    assert rec.values == (0, 25, 50) and rec.wrote == (75, 0, 0)
    rec = end_deal(game, {1: ("0-0", "6-6"), 2: ("0-1",)}, "domino", 0, THREE[vid])
    assert rec.wrote == (76, 0, 0)
    game = variant(vid).new_game(3)
    rec = end_deal(game, {1: ("0-0",), 2: ("6-6",)}, "domino", 0, THREE[vid])
    assert rec.wrote == (12, 0, 0)


def test_club_uses_plain_pips():
    game = variant("club").new_game(3)
    rec = end_deal(game, {1: ("0-0",), 2: ("6-6",)}, "domino", 0, DEAL3_CLUB)
    assert rec.wrote == (12, 0, 0)
    with pytest.raises(BadOption):
        variant("club").new_game(3, {"lone_doubles": True})


@pytest.mark.parametrize("vid", ["draw", "block"])
@pytest.mark.parametrize("target", [50, 100, 150])
def test_draw_block_first_to_reach_the_target_wins(vid, target):
    game = variant(vid).new_game(2, {"target": target})
    end_deal(game, {1: worth(target - 1)}, "domino", 0, DEAL_66)
    assert game.outcome() is None
    end_deal(game, {1: ("0-1",)}, "domino", 0, DEAL_66)
    out = game.outcome()
    assert out.winners == (0,) and out.losers == (1,) and out.totals == (target, 0)


def test_club_first_to_reach_101_wins():
    game = variant("club").new_game(2)
    end_deal(game, {1: worth(100)}, "domino", 0, DEAL_66)
    assert game.outcome() is None
    end_deal(game, {1: ("0-1",)}, "domino", 0, DEAL_66)
    out = game.outcome()
    assert out.winners == (0,) and out.totals == (101, 0)


def worth(n: int) -> tuple[str, ...]:
    names = sorted((x for x in ALL if x != "0-0"), key=lambda x: -sum(map(int, x.split("-"))))
    out, left = [], n
    for name in names:
        p = sum(map(int, name.split("-")))
        if p <= left:
            out.append(name)
            left -= p
    assert left == 0 and out != ["6-6"]
    return tuple(out)
