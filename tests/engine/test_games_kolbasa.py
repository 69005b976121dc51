"""kolbasa (RULES.md §3, §7 KB-1…KB-15): worked examples played through the engine, the game to
the goat, what a seat sees, and random deals checked against an independent reading.

The worked examples build the layout by playing real turns from hand-made rows (listed left to
right: the last tile is turned up first); places are ``0`` top end, ``1`` bottom end, ``100 + j``
/ ``200 + j`` a double inserted into junction ``j`` of the top / bottom line, ``300 + i`` a knife
at position ``i``.
"""

from __future__ import annotations

import random

import pytest
from support import tiles

from referee.engine import (
    DOMINO,
    FISH,
    TERMINAL,
    Deal,
    IllegalPlay,
    Placed,
    deal_from_seed,
    format_deal_line,
    parse_deal_line,
    parse_tile,
    refereed_variant,
    variant,
)
from referee.engine.core.kolbasa import KolbasaDeal, seat_view
from referee.engine.core.line import Cut, Play, Tailed, Turned

T = parse_tile


def deal_of(row0: str, row1: str, leader: int = 0) -> KolbasaDeal:
    return KolbasaDeal(Deal((tiles(*row0.split()), tiles(*row1.split())), ()), leader=leader)


def put(d: KolbasaDeal, name: str, place: int) -> None:
    d.push(Play(T(name), place), d.to_move())


def pairs(line: list[tuple[int, int]]) -> list[str]:
    return [f"{a}-{b}" for a, b in line]


# -- worked examples -----------------------------------------------------------------------------


def knife_position() -> KolbasaDeal:
    """Two lines of three tiles each from the start 2-3, the top ending in 5, the bottom in 0."""
    d = deal_of("5-5 0-4 1-4 1-3 2-3", "3-3 0-5 5-6 4-6 2-4")
    assert d.history[:2] == [Turned(0, T("2-3")), Placed(0, T("2-3"), None, True)]
    assert d.layout.start == (2, 3)  # KB-2: the lower half on top
    put(d, "2-4", 0)
    put(d, "1-3", 1)
    put(d, "4-6", 0)
    assert d.up == T("1-4") and d.legal_plays() == [Play(T("1-4"), 1), Play(T("1-4"), 301)]
    put(d, "1-4", 1)
    put(d, "5-6", 0)
    put(d, "0-4", 1)
    assert pairs(d.layout.lines[0]) == ["2-4", "4-6", "6-5"] and pairs(d.layout.lines[1]) == ["3-1", "1-4", "4-0"]
    assert d.ends == [5, 0]
    return d


def test_003_knife_cuts_everything_before_it_into_the_opponents_row():
    d = knife_position()
    assert d.to_move() == 1 and d.up == T("0-5")
    # 5-0 fits either line end, or lies across both at position 3 (the open ends).
    assert d.legal_plays() == [Play(T("0-5"), 0), Play(T("0-5"), 1), Play(T("0-5"), 303)]
    put(d, "0-5", 303)
    sausage = tiles("2-3", "2-4", "4-6", "5-6", "1-3", "1-4", "0-4")
    assert Cut(1, 0, sausage) in d.history
    # KB-5: the start, the top line outward, the bottom line outward, at the left of seat 0's row.
    assert d.rows[0] == [*sausage, T("5-5")] and d.rows[1] == [T("3-3")]
    # The knife is the new start, with the half that met the top junction (5) on top.
    assert d.layout.start == (5, 0) and d.layout.lines == ([], []) and d.ends == [5, 0]
    assert d.to_move() == 0 and d.up == T("5-5")
    assert d.all_tiles() == sum(1 << t for t in (*sausage, *tiles("5-5", "3-3", "0-5")))


def test_a_knife_at_the_first_junction_with_lines_of_unequal_length():
    d = deal_of("5-5 0-4 1-4 1-3 2-3", "3-3 0-5 5-6 4-6 2-4")
    put(d, "2-4", 0)
    put(d, "1-3", 1)
    put(d, "4-6", 0)
    # Top 2-4 4-6 (two tiles), bottom 3-1 (one): position 1 shows 4 over 1, so 1-4 is a knife.
    put(d, "1-4", 301)
    assert Cut(0, 1, tiles("2-3", "2-4", "1-3")) in d.history
    assert d.rows[1] == [*tiles("2-3", "2-4", "1-3"), *tiles("3-3", "0-5", "5-6")]
    assert d.layout.start == (4, 1) and pairs(d.layout.lines[0]) == ["4-6"] and d.layout.lines[1] == []
    assert d.ends == [6, 1]


def test_003_inserted_double_renews_the_junctions():
    # Start 0-1; top 0-6 6-2, bottom 1-5 5-3: position 1 shows 6 over 5, position 2 shows 2 over 3.
    d = deal_of("4-4 3-5 1-5 0-1", "2-2 1-1 2-6 0-6")
    put(d, "0-6", 0)
    put(d, "1-5", 1)
    put(d, "2-6", 0)
    put(d, "3-5", 1)
    places = d.layout.places
    assert places(T("5-6")) == [301] and places(T("2-3")) == [0, 1, 302]
    assert d.up == T("1-1") and d.legal_plays() == [Play(T("1-1"), 200)]  # bottom junction 0 shows 1
    put(d, "1-1", 200)
    assert pairs(d.layout.lines[1]) == ["1-1", "1-5", "5-3"]
    # The bottom line moved apart: 5-6 and 2-3 are knives no more, 1-6 and 2-5 now are.
    assert 301 not in places(T("5-6")) and 302 not in places(T("2-3"))
    assert places(T("1-6")) == [301] and places(T("2-5")) == [0, 302]


def test_a_tile_that_fits_nowhere_goes_to_the_tail_and_the_turn_passes():
    d = deal_of("0-0 1-2 0-1", "3-3 5-6 1-4")
    put(d, "1-4", 1)  # start 0-1: the bottom end shows 1, then 4
    # Seat 0 turns up 1-2 (the ends show 0 and 4): to its tail; seat 1's 5-6 too; seat 0's 0-0
    # fits the top end (the top line is empty, so there is no junction to insert it into).
    assert d.history[-5:] == [Turned(0, T("1-2")), Tailed(0, T("1-2")), Turned(1, T("5-6")), Tailed(1, T("5-6")),
                              Turned(0, T("0-0"))]
    assert d.rows == [list(tiles("1-2", "0-0")), list(tiles("5-6", "3-3"))]
    assert d.to_move() == 0 and d.legal_plays() == [Play(T("0-0"), 0)]
    with pytest.raises(IllegalPlay) as e:
        d.push(Play(T("1-2"), 0), 0)
    assert e.value.reason == IllegalPlay.NOT_YOUR_TILE
    with pytest.raises(IllegalPlay) as e:
        d.push(Play(T("0-0"), 100), 0)
    assert e.value.reason == IllegalPlay.BAD_END and "its places: top" in str(e.value)


def test_a_knife_that_is_the_last_tile_still_cuts_and_goes_out():
    d = deal_of("0-5 5-6 1-3 2-3", "1-4 2-4")
    put(d, "2-4", 0)
    put(d, "1-3", 1)
    assert d.up == T("1-4") and [p.end for p in d.legal_plays()] == [0, 1, 301]
    put(d, "1-4", 301)  # KB-13: it cuts first
    assert d.history[-1] == Cut(1, 0, tiles("2-3", "2-4", "1-3"))
    assert d.rows == [list(tiles("2-3", "2-4", "1-3", "0-5", "5-6")), []]
    assert d.end is not None and (d.end.reason, d.end.seat) == (DOMINO, 1)


def test_a_fish_ends_the_deal_at_once():
    # Start 0-1; seat 1 lays 1-2 on the bottom; the ends show 0 and 2 and neither row holds a
    # 0, a 2, or a knife for position 1 (0 over... the top line is empty): a fish.
    d = deal_of("5-5 0-1", "3-4 1-2")
    put(d, "1-2", 1)
    assert d.end is not None and (d.end.reason, d.end.seat) == (FISH, 1) and d.to_move() == TERMINAL


def test_kb14_counts_the_automatic_start_and_never_a_tail():
    """KB-14: 1,000 placements end a deal as a fish; the automatic start is one of them, a tile
    sent to the tail is not.  Here the start is placement 1, the tails of 1-2 and 5-6 add none,
    and the deal put 998 placements on has its 1,000th (and last) in seat 0's 0-0."""
    d = deal_of("0-0 1-2 0-1", "3-3 5-6 1-4")
    assert d.placements == 1 and d.history[:2] == [Turned(0, T("0-1")), Placed(0, T("0-1"), None, True)]
    put(d, "1-4", 1)
    assert d.placements == 2 and [type(e) for e in d.history].count(Tailed) == 2  # two tails, no placement
    d.placements = 999
    put(d, "0-0", 0)  # the 1,000th placement; seat 0 still holds 1-2: not out, so a fish
    assert d.end is not None and (d.end.reason, d.end.seat) == (FISH, 0)
    d = deal_of("0-0 1-2 0-1", "3-3 5-6 1-4")
    d.placements = 998
    put(d, "1-4", 1)  # 999 with the start: the deal goes on
    assert d.end is None


# -- the game ------------------------------------------------------------------------------------


def test_a_game_to_the_goat_scores_as_kb_says():
    v = variant("kolbasa")
    shape = v.shape()
    assert (shape.players, shape.hand_size, shape.undealt_count) == (2, 14, 0)
    line = format_deal_line(deal_from_seed(9, 0, shape), shape, 0)
    assert parse_deal_line(line, shape) == deal_from_seed(9, 0, shape)
    for seed in range(20):
        rng = random.Random(seed)
        game = v.new_game()
        index = 0
        while game.outcome() is None:
            state = game.start(deal_from_seed(seed, index, shape))
            assert state is not None
            assert state.leader == (0 if game.last is None or game.last.end is None else game.last.end.seat)
            index += 1
            while state.to_move() != TERMINAL:
                state.apply(rng.choice(state.legal_plays()))
            eggs = game.eggs
            rec = game.finish(state)
            assert rec.end is not None
            v0, v1 = rec.values
            if rec.end.reason == DOMINO:
                loser = 1 - rec.end.seat
                assert rec.values[1 - loser] == 0 and rec.wrote[loser] == rec.values[loser] + eggs
            elif v0 == v1:
                assert rec.wrote == (0, 0) and game.eggs == eggs + v0
            else:
                loser = 0 if v0 > v1 else 1
                assert rec.wrote[loser] == rec.values[loser] + eggs and rec.wrote[1 - loser] == 0
        out = game.outcome()
        assert out is not None and out.losers == tuple(s for s in range(2) if game.totals[s] >= 101)


def test_the_referee_plays_kolbasa():
    assert refereed_variant("kolbasa").id == "kolbasa"


# -- what a seat sees (KB-15) --------------------------------------------------------------------


def test_a_view_does_not_change_with_the_order_of_unseen_face_down_tiles():
    deal = deal_from_seed(4, 0, variant("kolbasa").shape())
    a = KolbasaDeal(deal, leader=0)
    # Swap two tiles of seat 1's row that have not been turned up yet: nothing public changes.
    row1 = list(deal.hands[1])
    row1[0], row1[1] = row1[1], row1[0]
    b = KolbasaDeal(Deal((deal.hands[0], tuple(row1)), ()), leader=0)
    for seat in (0, 1):
        assert seat_view(a, seat) == seat_view(b, seat)
    assert not hasattr(seat_view(a, 0), "hand")


# -- random deals against an independent reading of KB-1…KB-7, KB-11 ----------------------------


HALVES = [(a, b) for a in range(7) for b in range(a, 7)]


def reading_places(start: tuple[int, int], top: list[int], bottom: list[int], t: int) -> list[int]:
    """``top``/``bottom``: the numbers each line's junctions show, junction 0 first."""
    a, b = HALVES[t]
    out = []
    if top[-1] in (a, b):
        out.append(0)
    if bottom[-1] in (a, b):
        out.append(1)
    if a == b:
        out += [100 + j for j in range(len(top) - 1) if top[j] == a]
        out += [200 + j for j in range(len(bottom) - 1) if bottom[j] == a]
    for i in range(1, min(len(top), len(bottom))):
        if sorted((top[i], bottom[i])) == [a, b]:
            out.append(300 + i)
    return out


def test_random_deals_follow_the_independent_reading():
    shape = variant("kolbasa").shape()
    for seed in range(60):
        rng = random.Random(seed)
        d = KolbasaDeal(deal_from_seed(seed, 0, shape), leader=seed % 2)
        rows = [list(h) for h in deal_from_seed(seed, 0, shape).hands]
        top: list[int] = []
        bottom: list[int] = []
        start = (-1, -1)
        seen = 0
        while True:
            for e in d.history[seen:]:
                if type(e) is Turned:
                    assert rows[e.seat][-1] == e.tile
                elif type(e) is Tailed:
                    rows[e.seat].insert(0, rows[e.seat].pop())
                elif type(e) is Placed:
                    assert rows[e.seat].pop() == e.tile
                    a, b = HALVES[e.tile]
                    if e.end is None:
                        start, top, bottom = (a, b), [a], [b]
                    elif e.end in (0, 1):
                        line = top if e.end == 0 else bottom
                        line.append(b if line[-1] == a else a)
                    elif e.end < 300:
                        line = top if e.end < 200 else bottom
                        line.insert(e.end % 100 + 1, a)
                    else:
                        i = e.end - 300
                        assert sorted((top[i], bottom[i])) == [a, b]
                        new_top = top[i]
                        top, bottom = [new_top, *top[i + 1 :]], [b if new_top == a else a, *bottom[i + 1 :]]
                elif type(e) is Cut:
                    rows[e.to][:0] = list(e.tiles)
            seen = len(d.history)
            assert d.rows == rows
            assert d.all_tiles() == (1 << 28) - 1
            assert [d.layout.junction(0, j) for j in range(len(d.layout.lines[0]) + 1)] == top
            assert [d.layout.junction(1, j) for j in range(len(d.layout.lines[1]) + 1)] == bottom
            if d.to_move() == TERMINAL:
                break
            seat = d.to_move()
            want = reading_places(start, top, bottom, rows[seat][-1])
            assert [p.end for p in d.legal_plays()] == want and want
            d.push(rng.choice(d.legal_plays()), seat)
        assert d.end is not None
        if d.end.reason == DOMINO:
            assert not rows[d.end.seat]
        else:
            assert d.end.reason == FISH
            assert not any(reading_places(start, top, bottom, t) for r in rows for t in r) or d.placements >= 1000


def test_a_fault_is_the_faulting_seats_loss_and_a_place_prints_without_a_crash():
    game = variant("kolbasa").new_game()
    state = game.start(deal_from_seed(2, 0, variant("kolbasa").shape()))
    assert state is not None
    seat = state.to_move()
    assert str(Play(T("0-5"), 303)) == "0-5 end 303"  # a knife's place, by index
    state.forfeit(seat)
    rec = game.finish(state)
    assert rec.wrote[seat] == rec.values[seat] > 0 and rec.wrote[1 - seat] == 0 and rec.winner == 1 - seat
