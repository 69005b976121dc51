"""Line-deal mechanics (RULES.md §2, §5) on hand-built deals: the fish of seed 002, compulsory
play and automatic passes, drawing until a tile fits, Kozel's kept bazaar tile, the club's one
draw per turn, ends and the checked path's refusals."""

from __future__ import annotations

import pytest
from support import tiles

from referee.engine import (
    LEFT,
    RIGHT,
    STOP,
    TERMINAL,
    Deal,
    Drew,
    IllegalPlay,
    LineDeal,
    Passed,
    Placed,
    parse_tile,
    play,
    variant,
)
from referee.engine.core.line import DRAW_UNTIL_FIT, NO_DRAW, line_of

T = parse_tile


def make_deal(*hands: tuple[str, ...], undealt: tuple[str, ...] | None = None) -> Deal:
    """A deal from tile names; the undealt tiles default to the rest, in tile order."""
    hs = tuple(tiles(*h) for h in hands)
    used = {t for h in hs for t in h}
    rest = tiles(*undealt) if undealt is not None else tuple(t for t in range(28) if t not in used)
    deal = Deal(hs, rest)
    everything = sorted([t for h in hs for t in h] + list(rest))
    assert everything == list(range(28)), "the test deal is not a partition of the 28 tiles"
    return deal


def run(state, script) -> None:
    """Play ``(seat, tile, end)`` steps through the checked path, asserting the seat is to move."""
    for seat, name, end in script:
        assert state.to_move() == seat, (seat, name, state.history[-3:])
        state.push(play(T(name), end), seat)


ALL_NAMES = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]

# -- seed 002's fish: 1-2, 2-6, 0-2, 2-3 on the table, the line closed by 2-4 and 5-2 ----------

FILLERS = ["0-0", "0-1", "0-3", "0-4", "0-5", "1-1", "1-3", "1-5", "1-6",
           "3-3", "3-4", "3-6", "4-4", "4-5", "4-6", "5-5", "5-6", "6-6"]


def test_002_fish_with_2_2_on_the_table():
    """Sport, deal 0 (seat 0 leads any tile): every 2 is out, 2-2 included → fish at once."""
    deal = make_deal(
        ("2-6", "1-4", "3-5", "0-0", "0-1", "0-3", "0-4"),
        ("2-2", "0-2", "2-5", "0-5", "1-1", "1-3", "1-5"),
        ("1-2", "2-4", "1-6", "3-3", "3-4", "3-6", "4-4"),
        ("0-6", "2-3", "4-5", "4-6", "5-5", "5-6", "6-6"),
    )
    game = variant("sport").new_game(4)
    state = game.start(deal)
    run(state, [
        (0, "2-6", None), (1, "2-2", LEFT), (2, "1-2", LEFT), (3, "0-6", RIGHT), (0, "1-4", LEFT),
        (1, "0-2", RIGHT), (2, "2-4", LEFT), (3, "2-3", RIGHT), (0, "3-5", RIGHT),
    ])
    assert state.to_move() == 1 and state.end is None
    run(state, [(1, "2-5", RIGHT)])
    assert state.to_move() == TERMINAL
    assert (state.end.reason, state.end.seat) == ("fish", 1)  # the fisherman placed last
    assert state.ends == [2, 2]
    assert line_of(state.history) == [(2, 4), (4, 1), (1, 2), (2, 2), (2, 6), (6, 0), (0, 2), (2, 3), (3, 5), (5, 2)]
    assert not any(type(e) is Passed for e in state.history), "a fish is declared without knocks"
    rec = game.finish(state)
    # pair A (seats 0, 2) holds 8 + 37 = 45, pair B 17 + 52 = 69: A holds fewer and writes 69.
    assert rec.values == (8, 17, 37, 52)
    assert rec.wrote == (69, 0)


def _not_yet_fish_deal():
    return make_deal(
        ("2-6", "0-2", "2-5", "0-0", "0-1", "0-3", "0-4"),
        ("1-2", "2-4", "0-5", "1-1", "1-3", "1-5", "1-6"),
        ("0-6", "2-3", "3-3", "3-4", "3-6", "4-4", "4-5"),
        ("1-4", "3-5", "2-2", "4-6", "5-5", "5-6", "6-6"),
    )


def test_002_position_is_not_a_fish_while_2_2_is_in_a_hand():
    """§5: 002 calls it a fish even with 2-2 in a hand; by §2.6 it is not, 2-2 can still go."""
    game = variant("sport").new_game(4)
    state = game.start(_not_yet_fish_deal())
    run(state, [
        (0, "2-6", None), (1, "1-2", LEFT), (2, "0-6", RIGHT), (3, "1-4", LEFT), (0, "0-2", RIGHT),
        (1, "2-4", LEFT), (2, "2-3", RIGHT), (3, "3-5", RIGHT), (0, "2-5", RIGHT),
    ])
    assert state.ends == [2, 2]
    assert state.end is None
    # seats 1 and 2 hold no 2: they knock automatically; seat 3 must play 2-2 (either end).
    assert state.history[-2:] == [Passed(1), Passed(2)]
    assert state.to_move() == 3
    assert state.legal_plays() == [play(T("2-2"), LEFT), play(T("2-2"), RIGHT)]
    run(state, [(3, "2-2", RIGHT)])
    assert (state.end.reason, state.end.seat) == ("fish", 3)


def _sleeping_fish_deal(two_two_in_hand: bool):
    s0 = ["6-6", "1-2", "1-4", "2-4", "3-5", "0-0", "2-2" if two_two_in_hand else "1-1"]
    s1 = ["2-6", "0-6", "0-2", "2-3", "2-5", "3-4", "4-5"]
    return make_deal(tuple(s0), tuple(s1))


SLEEPING_SCRIPT = [
    (1, "2-6", LEFT), (0, "1-2", LEFT), (1, "0-6", RIGHT), (0, "1-4", LEFT), (1, "0-2", RIGHT),
    (0, "2-4", LEFT), (1, "2-3", RIGHT), (0, "3-5", RIGHT), (1, "2-5", RIGHT),
]


def test_002_fish_with_2_2_sleeping():
    """Block, two players, 14 tiles sleep: 2-2 is among them, so the closed line is a fish."""
    deal = _sleeping_fish_deal(two_two_in_hand=False)
    assert T("2-2") in deal.undealt
    game = variant("block").new_game(2)
    state = game.start(deal)
    assert state.history[0] == Placed(0, T("6-6"), None, True)  # the highest double, forced
    run(state, SLEEPING_SCRIPT)
    assert (state.end.reason, state.end.seat) == ("fish", 1)
    assert line_of(state.history)[0] == (2, 4) and line_of(state.history)[-1] == (5, 2)
    rec = game.finish(state)
    # seat 0 holds 0-0 and 1-1 (2), seat 1 holds 3-4 and 4-5 (16): seat 0 writes 16 - 2.
    assert rec.values == (2, 16)
    assert rec.wrote == (14, 0)
    assert rec.winner == 0


def test_002_sleeping_variant_with_2_2_in_a_hand_is_not_a_fish():
    state = variant("block").new_game(2).start(_sleeping_fish_deal(two_two_in_hand=True))
    run(state, SLEEPING_SCRIPT)
    assert state.end is None
    assert state.to_move() == 0
    assert [p.tile for p in state.legal_plays()] == [T("2-2"), T("2-2")]


def test_fish_exactly_when_nobody_can_place_nor_draw_with_a_stock():
    """A closed line is not a fish while drawable tiles remain: the draws happen first (§5)."""
    # Two players with a bazaar (LineDeal directly): the ends close on 2 while 2-2 is in the
    # bazaar; the next player must draw until it comes, then place it.
    deal = make_deal(
        ("2-6", "0-6", "0-2", "2-3", "2-5", "0-0", "1-1"),
        ("1-2", "1-4", "2-4", "3-5", "0-1", "3-4", "4-5"),
        undealt=("5-5", "6-6", "2-2", "0-3", "0-4", "0-5", "1-3", "1-5", "1-6", "3-3", "3-6", "4-4", "4-6", "5-6"),
    )
    state = LineDeal(deal, leader=0, draw=DRAW_UNTIL_FIT)
    run(state, [
        (0, "2-6", None), (1, "1-2", LEFT), (0, "0-6", RIGHT), (1, "1-4", LEFT), (0, "0-2", RIGHT),
        (1, "2-4", LEFT), (0, "2-3", RIGHT), (1, "3-5", RIGHT), (0, "2-5", RIGHT),
    ])
    assert state.ends == [2, 2] and state.end is None
    assert state.history[-1] == Drew(1, tiles("5-5", "6-6", "2-2"), 3)
    assert state.to_move() == 1
    assert {p.tile for p in state.legal_plays()} == {T("2-2")}
    run(state, [(1, "2-2", LEFT)])
    # now every 2 is out but 11 tiles can still be drawn: seat 0 draws them all, then knocks,
    # and only then is it a fish.
    assert state.history[-2] == Drew(0, state.bazaar[3:], 11)
    assert state.history[-1] == Passed(0)
    assert (state.end.reason, state.end.seat) == ("fish", 1)


# -- compulsory play, drawing and passing -------------------------------------------------------


def test_draw_until_a_tile_fits_then_place_it():
    deal = make_deal(
        ("6-6", "0-0", "1-1", "2-2", "3-3", "4-4", "5-5"),
        ("0-3", "0-4", "0-5", "1-2", "1-3", "1-4", "1-5"),
        undealt=("0-1", "0-2", "5-6", "0-6", "1-6", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5", "3-6", "4-5", "4-6"),
    )
    game = variant("draw").new_game(2)
    state = game.start(deal)
    assert state.history[0] == Placed(0, T("6-6"), None, True)
    # seat 1 has no 6: it draws one tile at a time until 5-6 comes, and must place it.
    assert state.history[1:] == [Drew(1, tiles("0-1", "0-2", "5-6"), 3)]
    assert state.to_move() == 1
    assert state.legal_plays() == [play(T("5-6"), LEFT), play(T("5-6"), RIGHT)]
    assert state.bazaar_left() == 11
    with pytest.raises(IllegalPlay) as info:
        state.push(play(T("0-1"), LEFT), 1)  # a drawn tile that does not fit
    assert info.value.reason == IllegalPlay.NO_MATCH


def test_bazaar_exhausted_then_pass():
    deal = make_deal(
        ("6-6", "0-6", "1-6", "2-6", "3-6", "4-6", "5-6"),
        ("0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "1-1"),
    )
    state = variant("draw").new_game(2).start(deal)
    assert state.history[1] == Drew(1, deal.undealt, 14)
    assert state.history[2] == Passed(1)
    assert state.to_move() == 0
    assert state.drawable() == 0
    assert state.hands[1].bit_count() == 21


def test_block_passes_without_drawing():
    deal = make_deal(
        ("6-6", "0-6", "1-6", "0-0", "1-1", "2-2", "3-3"),
        ("0-1", "0-2", "0-3", "0-4", "0-5", "1-2", "1-3"),
    )
    state = variant("block").new_game(2).start(deal)
    assert state.history[1:] == [Passed(1)]
    assert state.to_move() == 0
    run(state, [(0, "0-6", LEFT)])
    assert state.to_move() == 1  # seat 1 has 0s now


def test_player_with_a_playable_tile_is_never_skipped_and_may_not_stop():
    deal = _not_yet_fish_deal()
    state = variant("sport").new_game(4).start(deal)
    run(state, [(0, "2-6", None)])
    assert state.to_move() == 1
    with pytest.raises(IllegalPlay) as info:
        state.push(STOP, 1)
    assert info.value.reason == IllegalPlay.MUST_PLAY


def test_kozel_three_players_never_draw_the_last_bazaar_tile():
    deal = make_deal(
        ("3-3", "0-3", "1-3", "2-3", "0-4", "0-5", "0-6"),
        ("1-4", "1-5", "1-6", "2-4", "2-5", "2-6", "4-4"),
        ("3-4", "3-5", "4-5", "4-6", "5-5", "5-6", "6-6"),
        undealt=("1-1", "2-2", "0-1", "0-2", "1-2", "0-0", "3-6"),
    )
    game = variant("kozel").new_game(3)
    state = game.start(deal)
    # 1-1 and 2-2 lie in the bazaar, which lead searches ignore: 3-3 is the lowest double held.
    assert state.history[0] == Placed(0, T("3-3"), None, True)
    # seat 1 has no 3: it draws the six drawable tiles; 3-6 would fit but is the last, kept back.
    assert state.history[1] == Drew(1, tiles("1-1", "2-2", "0-1", "0-2", "1-2", "0-0"), 6)
    assert state.history[2] == Passed(1)
    assert state.to_move() == 2
    assert state.bazaar_left() == 1 and state.drawable() == 0


def test_kozel_two_players_fish_while_the_kept_last_tile_would_fit():
    """001/003: the last bazaar tile is never drawn, so it cannot prevent a fish even if it fits."""
    deal = make_deal(
        ("3-3", "2-5", "4-4", "0-4", "0-5", "2-3", "0-1"),
        ("0-6", "4-5", "1-5", "1-6", "1-4", "6-6", "0-3"),
        undealt=("0-2", "5-5", "2-4", "1-1", "1-3", "3-5", "2-2", "3-4", "4-6", "3-6", "2-6", "5-6", "1-2", "0-0"),
    )
    game = variant("kozel").new_game(2)
    state = game.start(deal)
    assert state.history[0] == Placed(0, T("3-3"), None, True)  # 1-1 and 2-2 are in the bazaar
    run(state, [
        (1, "0-3", RIGHT), (0, "0-5", RIGHT), (1, "4-5", RIGHT), (0, "0-4", RIGHT), (1, "0-6", RIGHT),
        (0, "2-3", LEFT), (1, "1-6", RIGHT), (0, "0-1", RIGHT),
    ])
    assert state.end is None
    run(state, [(1, "0-2", LEFT)])
    assert state.ends == [0, 0]
    assert state.bazaar_left() == 1 and state.bazaar[-1] == T("0-0")  # it fits, but is kept
    assert state.drawable() == 0
    assert (state.end.reason, state.end.seat) == ("fish", 1)
    assert all(not (h >> T("0-0") & 1) for h in state.hands)


def test_club_draws_one_tile_a_turn():
    deal = make_deal(
        ("6-6", "5-6", "0-0", "1-1", "2-2", "3-3", "4-4"),
        ("0-2", "0-3", "0-4", "1-2", "1-3", "1-4", "2-3"),
        undealt=("0-1", "2-5", "0-5", "0-6", "1-5", "1-6", "2-4", "2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "5-5"),
    )
    game = variant("club").new_game(2)
    state = game.start(deal)
    assert state.history[0] == Placed(0, T("6-6"), None, True)
    # seat 1 has no 6: one tile (0-1) does not fit, it stays in the hand and the turn passes.
    assert state.history[1:] == [Drew(1, (T("0-1"),), 1), Passed(1)]
    assert state.to_move() == 0
    assert state.hands[1] >> T("0-1") & 1
    run(state, [(0, "5-6", LEFT)])  # ends 5 and 6
    # seat 1 again has nothing: it draws one tile, 2-5 fits, and it must place that tile.
    assert state.history[-1] == Drew(1, (T("2-5"),), 1)
    assert state.to_move() == 1
    assert state.legal_plays() == [play(T("2-5"), LEFT)]
    assert state.bazaar_left() == 12


# -- ends and the checked path -----------------------------------------------------------------


def test_lead_sets_left_to_the_smaller_half_and_double_fits_give_two_moves():
    deal = _not_yet_fish_deal()
    state = variant("sport").new_game(4).start(deal)
    assert state.ends == [-1, -1]
    assert state.legal_plays() == [play(t, None) for t in sorted(deal.hands[0])]
    run(state, [(0, "2-6", None)])
    assert state.ends == [2, 6]  # §5: left shows the smaller half
    # seat 1 holds 1-2, 2-4, 1-6: 1-2 and 2-4 fit left, 1-6 fits right.
    assert state.legal_plays() == [play(T("1-2"), LEFT), play(T("1-6"), RIGHT), play(T("2-4"), LEFT)]


def test_tile_fitting_both_ends_is_two_moves():
    deal = make_deal(("2-5", "0-0"), ("2-2", "5-5"), undealt=tuple(n for n in ALL_NAMES if n not in ("2-5", "0-0", "2-2", "5-5")))
    state = LineDeal(deal, leader=0, draw=NO_DRAW)
    run(state, [(0, "2-5", None)])
    assert state.legal_plays() == [play(T("2-2"), LEFT), play(T("5-5"), RIGHT)]
    run(state, [(1, "2-2", LEFT)])
    assert state.ends == [2, 5]


def _snapshot(state):
    return (list(state.hands), list(state.ends), state.turn, state.drawn, list(state.history), state.end)


@pytest.mark.parametrize(
    "tile, end, seat, reason",
    [
        ("2-2", RIGHT, 1, IllegalPlay.NO_MATCH),  # fits the left end only
        ("0-5", LEFT, 1, IllegalPlay.NO_MATCH),  # fits no end
        ("2-2", None, 1, IllegalPlay.BAD_END),  # no end named
        ("2-2", 2, 1, IllegalPlay.BAD_END),  # "up" is not an open end of a line
        ("2-2", 3, 1, IllegalPlay.BAD_END),
        ("0-0", LEFT, 1, IllegalPlay.NOT_YOUR_TILE),  # seat 0 holds it
        ("5-5", LEFT, 1, IllegalPlay.NOT_YOUR_TILE),  # seat 2 holds it
        ("2-2", LEFT, 0, IllegalPlay.NOT_YOUR_TURN),
        ("2-2", LEFT, 3, IllegalPlay.NOT_YOUR_TURN),
    ],
)
def test_push_refuses_with_the_reason_and_changes_nothing(tile, end, seat, reason):
    deal = make_deal(
        ("2-6", "1-4", "3-5", "0-0", "0-1", "0-3", "0-4"),
        ("2-2", "0-2", "2-5", "0-5", "1-1", "1-3", "1-5"),
        ("1-2", "2-4", "1-6", "3-3", "3-4", "3-6", "5-5"),
        ("0-6", "2-3", "4-5", "4-6", "4-4", "5-6", "6-6"),
    )
    state = variant("sport").new_game(4).start(deal)
    run(state, [(0, "2-6", None)])
    before = _snapshot(state)
    with pytest.raises(IllegalPlay) as info:
        state.push(play(T(tile), end), seat)
    assert info.value.reason == reason
    assert isinstance(info.value, ValueError)
    assert _snapshot(state) == before


def test_push_refuses_a_tile_not_held_for_the_lead_and_after_the_deal():
    deal = _not_yet_fish_deal()
    state = variant("sport").new_game(4).start(deal)
    before = _snapshot(state)
    with pytest.raises(IllegalPlay) as info:
        state.push(play(T("1-2")), 0)
    assert info.value.reason == IllegalPlay.NOT_YOUR_TILE
    assert _snapshot(state) == before
    # a lead that names an end is recorded as a lead
    assert state.push(play(T("2-6"), RIGHT), 0) == play(T("2-6"))
    state.forfeit(1)
    with pytest.raises(IllegalPlay) as info:
        state.push(play(T("1-2"), LEFT), 1)
    assert info.value.reason == IllegalPlay.DEAL_OVER


def test_forced_lead_is_placed_by_the_referee_not_asked_for():
    """§2.5 and §5: a forced lead is never a player's move (so MUST_LEAD_TILE cannot arise)."""
    deal = make_deal(
        ("6-6", "0-6", "1-6", "0-0", "1-1", "2-2", "3-3"),
        ("0-1", "0-2", "0-3", "0-4", "0-5", "1-2", "6-5"),
    )
    state = variant("block").new_game(2).start(deal)
    assert state.history[0] == Placed(0, T("6-6"), None, True)
    assert state.ends == [6, 6]
    assert state.to_move() == 1
    assert state.legal_plays() == [play(T("5-6"), LEFT), play(T("5-6"), RIGHT)]


def test_checked_path_refuses_any_malformed_play_with_illegal_play():
    """``push`` is the path for untrusted input: whatever ``Play`` value arrives, it is refused
    with :class:`IllegalPlay` (never another exception) and the state is left as it was."""
    from referee.engine import Play

    deal = _not_yet_fish_deal()
    state = variant("sport").new_game(4).start(deal)
    for tile, end in [(28, None), (100, 0), (-3, None), (27, 9), (-1, 5)]:
        before = _snapshot(state)
        with pytest.raises(IllegalPlay) as info:
            state.push(Play(tile, end), 0)
        assert info.value.reason in (IllegalPlay.NOT_YOUR_TILE, IllegalPlay.MUST_PLAY)
        assert _snapshot(state) == before
    run(state, [(0, "2-6", None)])
    for tile, end, reason in [
        (T("1-2"), 4, IllegalPlay.BAD_END), (T("1-2"), 7, IllegalPlay.BAD_END), (T("1-2"), -1, IllegalPlay.BAD_END),
        (28, LEFT, IllegalPlay.NOT_YOUR_TILE), (-7, RIGHT, IllegalPlay.NOT_YOUR_TILE),
    ]:
        before = _snapshot(state)
        with pytest.raises(IllegalPlay) as info:
            state.push(Play(tile, end), 1)
        assert info.value.reason == reason, str(info.value)
        assert "down" not in str(info.value)
        assert _snapshot(state) == before
