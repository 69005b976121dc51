"""Tests of the independent kolbasa reference (tests/reference/kolbasa_rules.py) itself.

The worked examples of issue 17 played as real deals through the reference (003's knife across
two lines of three, a knife at the first junction of lines of unequal length, 003's inserted 1-1
that renews the junctions), the other KB readings on positions set up by hand (a tail, a knife
that is the last tile, a double as a knife, a fish at once, eggs, the goat, KB-14), and random
playouts that check what must hold in every deal: the 28 tiles are conserved, a tile is tailed
only when it fits nowhere, and each deal ends by a domino or a fish.
"""

from __future__ import annotations

import random

import pytest
from reference.kolbasa_rules import GOAT, MAX_PLACEMENTS, TILES, RefGame, Sausage, pips

# -- helpers ----------------------------------------------------------------------------------


def rows_of(right0: str, right1: str) -> list[list[str]]:
    """Two rows of 14 ending (on the right, turned up first) with the given tiles; the rest of
    the set, in set order, fills their left parts."""
    r0, r1 = right0.split(), right1.split()
    rest = [t for t in TILES if t not in r0 + r1]
    cut = 14 - len(r0)
    return [rest[:cut] + r0, rest[cut:] + r1]


def put(g: RefGame, tile: str, place: str) -> list[tuple]:
    move = ("place", tile, place)
    assert move in g.legal(), (move, g.legal())
    return g.play(move)


def laid(right0: str, right1: str, *moves: str) -> RefGame:
    """A deal from :func:`rows_of`, then the given moves, each ``"tile place"``."""
    g = RefGame("kolbasa")
    g.start_deal(rows_of(right0, right1))
    for m in moves:
        put(g, *m.split())
    return g


def position(start: tuple[int, int], top: list[tuple[int, int]], bottom: list[tuple[int, int]],
             row0: list[str], row1: list[str], seat: int, game: RefGame | None = None) -> tuple[RefGame, list[tuple]]:
    """A deal in progress set up by hand: ``seat`` turns up next; return the game and the events
    of the automatic turns up to the first decision."""
    g = game or RefGame("kolbasa")
    g.started, g.ended = True, None
    g.layout = Sausage(start, (list(top), list(bottom)))
    g.rows = [list(row0), list(row1)]
    g.last_placer = 1 - seat
    g.placements = 20
    events: list[tuple] = []
    g._advance(seat, events)
    return g, events


def places(g: RefGame, tile: str) -> list[str]:
    return sorted(g.layout.places(tile))


# -- setup (§3, KB-8, KB-9, KB-10, KB-12) ---------------------------------------------------------


def test_players_options_and_rows_are_checked():
    with pytest.raises(ValueError, match="2 players"):
        RefGame("kolbasa", 3)
    with pytest.raises(ValueError, match="no options"):
        RefGame("kolbasa", 2, {"target": "50"})
    with pytest.raises(ValueError, match="unknown variant"):
        RefGame("mexican_train", 2)
    g = RefGame("kolbasa")
    rows = rows_of("", "")
    with pytest.raises(ValueError, match="kolbasa deals 14"):
        g.start_deal([rows[0][:-1], rows[1] + rows[0][-1:]])
    with pytest.raises(ValueError, match="28 tiles, each once"):
        g.start_deal([rows[0][:-1] + rows[1][:1], rows[1]])
    assert g.start_deal(rows)


def test_the_starter_lays_the_rightmost_tile_as_the_start():
    """KB-9, KB-2: seat 0 starts the first deal (KB-10); its rightmost tile a-b is the start with
    a on top; then seat 1 turns up its own rightmost tile."""
    g = RefGame("kolbasa")
    assert g.next_leader() == 0
    ev = g.start_deal(rows_of("2-3", "2-4"))
    assert ev == [("turned", 0, "2-3"), ("placed", 0, "2-3", None), ("turned", 1, "2-4")]
    assert g.layout.start == (2, 3) and g.layout.lines == ([], [])
    assert g.to_move() == 1 and g.up() == "2-4" and g.legal() == [("place", "2-4", "top")]
    with pytest.raises(ValueError, match="chooses only where it goes"):
        g.play(("place", "1-1", "top"))
    with pytest.raises(ValueError, match="its places: top"):
        g.play(("place", "2-4", "bottom"))


# -- worked examples (issue 17, seed 003) -----------------------------------------------------------


def knife_position() -> RefGame:
    """Two lines of three tiles each from the start 2-3, the top ending in 5, the bottom in 0."""
    g = laid("5-5 0-4 1-4 1-3 2-3", "3-3 0-5 5-6 4-6 2-4", "2-4 top", "1-3 bottom", "4-6 top")
    assert g.legal() == [("place", "1-4", "bottom"), ("place", "1-4", "knife:1")]
    put(g, "1-4", "bottom")
    put(g, "5-6", "top")
    put(g, "0-4", "bottom")
    assert g.layout.lines == ([(2, 4), (4, 6), (6, 5)], [(3, 1), (1, 4), (4, 0)])
    return g


def test_003_knife_cuts_everything_before_it_into_the_opponents_row():
    g = knife_position()
    pad0, pad1 = g.rows[0][:-1], g.rows[1][:-2]
    assert g.to_move() == 1 and g.up() == "0-5"
    # 5-0 fits either line end, or lies across both at position 3, the open ends (KB-3).
    assert g.legal() == [("place", "0-5", "bottom"), ("place", "0-5", "knife:3"), ("place", "0-5", "top")]
    sausage = ["2-3", "2-4", "4-6", "5-6", "1-3", "1-4", "0-4"]  # KB-5: start, top outward, bottom outward
    assert put(g, "0-5", "knife:3") == [("placed", 1, "0-5", "knife:3"), ("cut", 1, 0, sausage), ("turned", 0, "5-5")]
    assert g.rows == [sausage + pad0 + ["5-5"], pad1 + ["3-3"]]
    # The knife is the new start, the half that met the top junction (5) on top (KB-2).
    assert g.layout.start == (5, 0) and g.layout.lines == ([], [])
    assert g.legal() == [("place", "5-5", "top")]


def test_a_knife_at_the_first_junction_with_lines_of_unequal_length():
    g = laid("5-5 0-4 1-4 1-3 2-3", "3-3 0-5 5-6 4-6 2-4", "2-4 top", "1-3 bottom", "4-6 top")
    pad1 = g.rows[1][:-3]
    # Top 2-4 4-6 (two tiles), bottom 3-1 (one): position 1 shows 4 over 1, the bottom's open end.
    ev = put(g, "1-4", "knife:1")
    assert ev[:2] == [("placed", 0, "1-4", "knife:1"), ("cut", 0, 1, ["2-3", "2-4", "1-3"])]
    assert g.rows[1] == ["2-3", "2-4", "1-3"] + pad1 + ["3-3", "0-5", "5-6"]
    assert g.layout.start == (4, 1) and g.layout.lines == ([(4, 6)], [])  # the top keeps its tile after 1
    assert [g.layout.end(0), g.layout.end(1)] == [6, 1]


def test_003_inserted_double_renews_the_junctions():
    g = laid("4-4 3-5 1-5 0-1", "2-2 1-1 2-6 0-6", "0-6 top", "1-5 bottom", "2-6 top", "3-5 bottom")
    # Start 0-1; top 0-6 6-2, bottom 1-5 5-3: position 1 shows 6 over 5, position 2 shows 2 over 3.
    assert places(g, "5-6") == ["knife:1"] and places(g, "2-3") == ["bottom", "knife:2", "top"]
    assert g.legal() == [("place", "1-1", "bottom:0")]  # KB-6: junction 0, against the start
    put(g, "1-1", "bottom:0")
    assert g.layout.lines[1] == [(1, 1), (1, 5), (5, 3)]
    # The bottom line moved apart: 5-6 and 2-3 are knives no more, 1-6 and 2-5 now are.
    assert places(g, "5-6") == [] and places(g, "2-3") == ["bottom", "top"]
    assert places(g, "1-6") == ["knife:1"] and places(g, "2-5") == ["knife:2", "top"]


# -- the other readings ---------------------------------------------------------------------------


def test_a_tile_that_fits_nowhere_goes_to_the_tail_and_the_turn_passes():
    """KB-7: automatic, to the left end of the own row; a double on an empty line goes on its end
    (there is no junction j < 0 to insert it into)."""
    g = laid("0-0 1-2 0-1", "3-3 5-6 1-4")
    ev = put(g, "1-4", "bottom")
    assert ev == [("placed", 1, "1-4", "bottom"), ("turned", 0, "1-2"), ("tailed", 0, "1-2"),
                  ("turned", 1, "5-6"), ("tailed", 1, "5-6"), ("turned", 0, "0-0")]
    assert g.rows[0][0] == "1-2" and g.rows[1][0] == "5-6"
    assert g.legal() == [("place", "0-0", "top")]


def test_a_double_may_be_a_knife_or_be_inserted():
    """KB-4, KB-6: 3-3 fits the bottom end, top junction 2, and position 2 where the top's
    junction and the bottom's open end both show 3."""
    g, ev = position((2, 1), [(2, 5), (5, 3), (3, 4)], [(1, 6), (6, 3)], ["0-0", "3-3"], ["4-4", "0-1"], 0)
    assert ev == [("turned", 0, "3-3")]
    assert g.legal() == [("place", "3-3", p) for p in ("bottom", "knife:2", "top:2")]
    ev = g.play(("place", "3-3", "knife:2"))
    assert ev[:2] == [("placed", 0, "3-3", "knife:2"), ("cut", 0, 1, ["1-2", "2-5", "3-5", "1-6", "3-6"])]
    assert g.layout.start == (3, 3) and g.layout.lines == ([(3, 4)], [])


def test_a_knife_that_is_the_last_tile_still_cuts_and_goes_out():
    """KB-13: the opponent writes the sausage too."""
    g, _ = position((2, 3), [(2, 4)], [(3, 1)], ["0-5", "5-6"], ["1-4"], 1)
    assert g.legal() == [("place", "1-4", p) for p in ("bottom", "knife:1", "top")]
    ev = g.play(("place", "1-4", "knife:1"))
    wrote = pips("2-3") + pips("2-4") + pips("1-3") + pips("0-5") + pips("5-6")
    assert ev == [("placed", 1, "1-4", "knife:1"), ("cut", 1, 0, ["2-3", "2-4", "1-3"]),
                  ("deal_end", "domino", 1, [wrote, 0], [wrote, 0])]
    assert g.next_leader() == 1  # KB-10: whoever went out starts the next deal


def test_a_fish_ends_the_deal_at_once_and_the_heavier_row_writes_its_own():
    """KB-11: right after the placement that made it; the fisherman is the last placer."""
    g, _ = position((0, 1), [], [], ["5-5", "6-6"], ["3-4", "1-2"], 1)
    ev = g.play(("place", "1-2", "bottom"))  # ends 0 and 2; nothing holds a 0 or a 2
    assert ev == [("placed", 1, "1-2", "bottom"), ("deal_end", "fish", 1, [22, 0], [22, 0])]
    assert g.to_move() is None and g.next_leader() == 1


def test_eggs_wait_and_go_with_the_next_write():
    """KB-11: equal rows, nobody writes; the eggs join the next write."""
    g, _ = position((0, 1), [], [], ["1-6"], ["3-4", "1-2"], 1)
    ev = g.play(("place", "1-2", "bottom"))  # ends 0 and 2: 1-6 and 3-4 fit nowhere, 7 pips each
    assert ev[-1] == ("deal_end", "fish", 1, [0, 0], [0, 0]) and g.eggs == 7
    g, _ = position((0, 1), [], [], ["2-3"], ["1-4", "1-2"], 1, game=g)
    ev = g.play(("place", "1-2", "bottom"))
    assert ev[1:] == [("turned", 0, "2-3")]  # 2-3 fits the bottom's 2: no fish
    ev = g.play(("place", "2-3", "bottom"))  # seat 0 goes out: seat 1 writes 1-4 and the eggs
    assert ev[-1] == ("deal_end", "domino", 0, [0, 12], [0, 12]) and g.eggs == 0


def test_the_goat_at_101_ends_the_game():
    """KB-12: 101 or more is the goat; the other seat wins."""
    g, _ = position((0, 1), [], [], ["5-6", "6-6"], ["1-2"], 1)
    g._totals = [78, 40]
    ev = g.play(("place", "1-2", "bottom"))
    assert ev[-1] == ("deal_end", "domino", 1, [23, 0], [101, 40])
    assert g.game_over() and g.goats() == [0] and g.winners() == [1] and g.next_leader() is None
    with pytest.raises(ValueError, match="goat"):
        g.start_deal(rows_of("", ""))


def test_a_deal_of_a_thousand_placements_ends_as_a_fish():
    """KB-14: the 1,000th placement ends the deal, the placer the fisherman."""
    g, _ = position((0, 1), [], [], ["5-6", "0-2"], ["3-3", "1-2"], 1)
    g.placements = MAX_PLACEMENTS - 1
    ev = g.play(("place", "1-2", "bottom"))
    assert ev[-1][:3] == ("deal_end", "fish", 1)


# -- random playouts -------------------------------------------------------------------------------


def test_random_playouts_keep_the_invariants():
    rng = random.Random(17)
    for _ in range(30):
        g = RefGame("kolbasa")
        while not g.game_over():
            tiles = list(TILES)
            rng.shuffle(tiles)
            leader = g.next_leader()
            rows = [tiles[:14], tiles[14:]]
            ev = g.start_deal(rows)
            first = rows[leader][-1]
            assert ev[:2] == [("turned", leader, first), ("placed", leader, first, None)]
            while True:
                for e in ev:
                    if e[0] == "tailed":
                        assert not g.layout.places(e[2])  # only a tile that fits nowhere
                on_table = [f"{min(g.layout.start)}-{max(g.layout.start)}"] + [
                    f"{min(t)}-{max(t)}" for line in g.layout.lines for t in line]
                assert sorted(on_table + g.rows[0] + g.rows[1]) == sorted(TILES)
                for k, line in enumerate(g.layout.lines):  # every line is a chain from the start
                    for j, (near, _) in enumerate(line):
                        assert near == g.layout.junction(k, j)
                if g.deal_over():
                    break
                assert g.legal()
                ev = g.play(rng.choice(g.legal()))
            reason, seat = ev[-1][1], ev[-1][2]
            if reason == "domino":
                assert not g.rows[seat]
            else:
                assert not any(g.layout.places(t) for r in g.rows for t in r)
        assert max(g.totals()) >= GOAT and sum(t >= GOAT for t in g.totals()) == 1
