"""Tests of the independent cross-game reference (tests/reference/cross_rules.py) itself.

The worked examples of RULES.md and issue 11, each played as a real deal through the reference,
and random playouts that check what must hold in every deal whatever the rules' details:
the 28 tiles are conserved, a seat draws or passes only when it cannot place, a deal ends only
by a domino or a fish, and the points add up.
"""

from __future__ import annotations

import random

import pytest
from reference.cross_rules import TILES, Layout, RefGame, halves, round_near5

# -- helpers ----------------------------------------------------------------------------------


def deal(game: RefGame, *hands: list[str], bazaar: list[str] | None = None) -> tuple[list[list[str]], list[str]]:
    """The given hands; the rest of the tiles form the bazaar in set order unless given."""
    used = {t for h in hands for t in h}
    rest = [t for t in TILES if t not in used]
    if bazaar is not None:
        assert sorted(bazaar) == sorted(rest)
        rest = bazaar
    return [list(h) for h in hands], rest


def later_deal(game: RefGame, leader: int) -> None:
    """Make the next deal a later one led freely by ``leader`` (as after a deal ``leader`` won)."""
    game._leader = leader


def later_game(variant: str, players: int, options: dict | None = None, leader: int = 0) -> RefGame:
    """A game whose next deal is led freely by ``leader``."""
    game = RefGame(variant, players, options or {})
    later_deal(game, leader)
    return game


def run(game: RefGame, *moves) -> list[tuple]:
    """Play moves written as (tile, end), (tile, end, closed) or "stop"; return their events."""
    events = []
    for m in moves:
        move = ("stop",) if m == "stop" else ("place", m[0], m[1], m[2] if len(m) > 2 else False)
        assert move in game.legal(), (move, game.legal())
        events += game.play(move)
    return events


def scored(events) -> list[tuple]:
    return [e for e in events if e[0] == "scored"]


# -- telephone (LAY-3..6, §3 telephone, TEL-2, X-2) ---------------------------------------------


def test_003_telephone_example_house_4_4():
    """003: house 4-4 covered on both sides, ends 6 and 3; 6-6 on the 6 writes 15 (6+6+3),
    then 4-5 on the house writes 20 (6+6+3+5)."""
    g = later_game("telephone", 2)
    assert g.start_deal(*deal(g, ["4-4", "3-4", "4-5", "0-0", "0-1", "0-2", "1-1"],
                              ["4-6", "6-6", "1-2", "1-3", "2-2", "0-3", "0-4"])) == []
    ev = run(g, ("4-4", None))
    assert scored(ev) == [] and g.layout.count() == 8  # a lone house counts its pips once
    ev = run(g, ("4-6", "left"))
    assert g.layout.count() == 6 + 8  # the house's open side counts both halves (LAY-6)
    ev = run(g, ("3-4", "right"))
    assert {"up", "down"} <= set(g.layout.arms)  # covered on both sides: four directions
    assert g.layout.count() == 9  # up and down add nothing until a tile lies on them
    ev = run(g, ("6-6", "left"))
    assert scored(ev) == [("scored", 1, 15, 15)]
    ev = run(g, ("4-5", "up"))
    assert scored(ev) == [("scored", 0, 20, 20)]
    assert g.totals() == [20, 15]


def test_telephone_house_arms_closed_until_both_sides_covered():
    g = later_game("telephone", 2)
    g.start_deal(*deal(g, ["4-4", "3-4", "4-5", "0-0", "0-1", "0-2", "1-1"],
                       ["4-6", "6-6", "1-2", "1-3", "2-2", "0-3", "0-4"]))
    run(g, ("4-4", None), ("4-6", "left"))
    assert ("place", "4-5", "up", False) not in g.legal()  # LAY-5: only one side covered
    with pytest.raises(ValueError, match="no open end 'up'"):
        g.play(("place", "4-5", "up", False))
    with pytest.raises(ValueError, match="no closed doubles"):
        g.play(("place", "3-4", "right", True))


def test_lead_scores_3_2_writes_5_and_6_4_writes_10():
    # TEL-2, X-2: the first deal's 3-2 is led automatically and scores.
    g = RefGame("telephone", 4, {})
    hands = [TILES[i * 7:(i + 1) * 7] for i in range(4)]
    holder = next(s for s, h in enumerate(hands) if "2-3" in h)
    ev = g.start_deal(hands, [])
    assert ev[:2] == [("placed", holder, "2-3", None, False, True), ("scored", holder, 5, 5)]
    assert g.totals()[holder % 2] == 5
    assert g.to_move() == (holder + 1) % 4
    # a later deal, led freely with 6-4
    g = later_game("telephone", 2, {"scale": "5"}, leader=1)
    g.start_deal(*deal(g, ["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6"],
                       ["4-6", "1-1", "1-2", "1-3", "1-4", "1-5", "1-6"]))
    assert g.to_move() == 1 and ("place", "4-6", None, False) in g.legal()
    assert scored(g.play(("place", "4-6", None, False))) == [("scored", 1, 2, 10)]  # TEL-6: 10/5


def test_telephone_first_lead_without_3_2_is_the_highest_double():
    g = RefGame("telephone", 2, {})
    hands, bazaar = deal(g, ["5-5", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6"],
                         ["4-4", "1-1", "1-4", "1-3", "1-5", "1-6", "6-6"])
    assert "2-3" in bazaar
    ev = g.start_deal(hands, bazaar)
    assert ev == [("placed", 1, "6-6", None, False, True)]  # TEL-2: 3-2 in the bazaar; 12 scores nothing
    assert g.to_move() == 0


def test_lone_5_5_lead_counts_10_and_5_3_makes_13():
    # LAY-6 in muggins: the first double alone counts its pips once; 5-5 then 5-3 on the
    # right counts 10 + 3. MUG-3: the first deal's lead is the highest double, forced.
    g = RefGame("muggins", 2, {})
    hands, bazaar = deal(g, ["5-5", "0-1", "0-2", "0-4", "0-6", "1-1", "1-2"],
                         ["3-5", "0-5", "2-2", "2-4", "3-3", "3-4", "4-4"])
    assert "6-6" in bazaar
    ev = g.start_deal(hands, bazaar)
    assert ev == [("placed", 0, "5-5", None, False, True), ("scored", 0, 10, 10)]
    ev = run(g, ("3-5", "right"))
    assert g.layout.count() == 13
    # seat 0 cannot place on 5 or 3: it draws from the front of the bazaar until a tile fits
    assert ev == [("placed", 1, "3-5", "right", False, False), ("drew", 0, "0-0"), ("drew", 0, "0-3")]
    assert g.legal() == [("place", "0-3", "right", False)]
    ev = run(g, ("0-3", "right"))
    assert scored(ev) == [("scored", 0, 10, 10)]  # the lead double's open side 10, plus 0
    ev = run(g, ("0-5", "left"))  # 5-5 covered on both sides: up and down open, count nothing yet
    assert {e: a.shows for e, a in g.layout.arms.items()} == {"left": 0, "right": 0, "up": 5, "down": 5}
    assert scored(ev) == [] and g.layout.count() == 0
    ev = run(g, ("0-2", "left"))
    assert g.layout.count() == 2


def test_telephone_options_are_checked():
    with pytest.raises(ValueError, match="scale"):
        RefGame("telephone", 2, {"scale": "3"})
    with pytest.raises(ValueError, match="no option"):
        RefGame("telephone", 2, {"target": "100"})
    with pytest.raises(ValueError, match="no options"):
        RefGame("osel", 4, {"rule13": "hang"})
    with pytest.raises(ValueError, match="not played by 3"):
        RefGame("telephone", 3, {})


# -- osel (TURN-4..6, OS-3) -------------------------------------------------------------------

OSEL_4 = [
    ["2-5", "0-1", "0-3", "0-4", "1-3", "1-4", "0-6"],
    ["2-2", "5-5", "1-2", "3-4", "4-6", "1-6", "0-0"],
    ["3-3", "4-4", "2-6", "3-6", "1-5", "0-2", "2-3"],
    ["6-6", "1-1", "5-6", "4-5", "3-5", "2-4", "0-5"],
]


def test_osel_close_both_ends_fish():
    """TURN-6, OS-4: before any double, 2-2 closed on the left, then 5-5 closed on the right:
    a fish at once (no draws first), scored as kozel's; the closer leads the next deal."""
    g = later_game("osel", 2)
    g.start_deal(*deal(g, OSEL_4[0], OSEL_4[1]))
    run(g, ("2-5", None))  # seat 0 holds no double: its turn ends with the lead
    assert g.to_move() == 1
    assert ("place", "2-2", "left", True) in g.legal() and ("place", "5-5", "right", True) in g.legal()
    run(g, ("2-2", "left", True))
    assert g.legal() == [("place", "5-5", "right", True)]  # the only legal move
    with pytest.raises(ValueError, match="TURN-6"):
        g.play(("stop",))
    with pytest.raises(ValueError, match="TURN-6"):
        g.play(("place", "5-5", "right", False))
    ev = run(g, ("5-5", "right", True))
    # left in hand: seat 0 has 1+3+4+4+5+6 = 23, seat 1 has 3+7+10+7+0 = 27; the heavier
    # writes everything (§3 kozel fish, 2 players: the one holding the most)
    assert ev == [("placed", 1, "5-5", "right", True, False), ("deal_end", "fish", [0, 50], [0, 50])]
    assert g.next_leader() == 1 and g.drawn == 0


def test_osel_close_both_ends_in_pairs():
    g = later_game("osel", 4)
    g.start_deal(*deal(g, *OSEL_4))
    run(g, ("2-5", None), ("2-2", "left", True))
    ev = run(g, ("5-5", "right", True))
    # pair A (seats 0, 2) holds 23 + 44, pair B 27 + 53: B writes all 147 and is the goat
    assert ev[-1] == ("deal_end", "fish", [0, 147], [0, 147])
    assert g.game_over() and g.winners() == [0] and g.next_leader() is None


def test_osel_closing_needs_the_other_double():
    g = later_game("osel", 4)
    hands = [list(h) for h in OSEL_4]
    hands[1][1], hands[3][0] = hands[3][0], hands[1][1]  # seat 1 holds 6-6 instead of 5-5
    g.start_deal(hands, [])
    run(g, ("2-5", None))
    assert ("place", "2-2", "left", False) in g.legal()
    assert ("place", "2-2", "left", True) not in g.legal()
    with pytest.raises(ValueError, match="may not be closed"):
        g.play(("place", "2-2", "left", True))


def test_osel_extra_doubles_and_closing():
    """TURN-4: after the turn's one tile only doubles, one per unused end, or stop; TURN-5: once
    the cross exists a double may be closed, shutting the end it was laid on."""
    g = later_game("osel", 4, leader=2)
    g.start_deal(*deal(g, *OSEL_4))
    # seat 2 leads 2-3 (ends 2 and 3) and may add 3-3 on the right (2-2 is not in its hand)
    run(g, ("2-3", None))
    assert g.to_move() == 2
    assert g.legal() == [("place", "3-3", "right", False), ("stop",)]
    ev = run(g, ("3-3", "right"))
    assert ev == [("placed", 2, "3-3", "right", False, False)]  # the cross: up and down show 3
    assert g.to_move() == 3 and sorted(g.layout.arms) == ["down", "left", "right", "up"]
    # seat 3 plays 3-5 up; it holds no double for an unused end (5-5 and 2-2 are elsewhere)
    run(g, ("3-5", "up"))
    assert g.to_move() == 0
    # seat 0 plays 0-3 down, then seat 1 plays 1-2 on the left and adds 5-5 closed on the up 5
    run(g, ("0-3", "down"))
    assert g.to_move() == 1
    run(g, ("1-2", "left"))
    assert g.to_move() == 1
    assert g.legal() == [
        ("place", "0-0", "down", False), ("place", "0-0", "down", True),
        ("place", "5-5", "up", False), ("place", "5-5", "up", True), ("stop",),
    ]
    with pytest.raises(ValueError, match="only doubles"):
        g.play(("place", "1-6", "left", False))
    ev = run(g, ("5-5", "up", True))
    assert ev[0] == ("placed", 1, "5-5", "up", True, False)
    assert g.layout.arms["up"].closed and g.to_move() == 1
    assert g.legal() == [("place", "0-0", "down", False), ("place", "0-0", "down", True), ("stop",)]
    assert run(g, "stop") == []
    assert g.to_move() == 2
    with pytest.raises(ValueError, match="closed"):
        g.play(("place", "1-5", "up", False))


def test_osel_lead_double_opens_four_ends():
    g = RefGame("osel", 4, {})
    hands = [list(h) for h in OSEL_4]
    ev = g.start_deal(hands, [])
    assert ev == [("placed", 3, "1-1", None, False, True)]  # the first deal: 1-1 by its holder
    assert {e: a.shows for e, a in g.layout.arms.items()} == {"left": 1, "right": 1, "up": 1, "down": 1}
    assert g.to_move() == 0


# The chain 1-2, 2-3, 3-4, 4-5, 5-6, 6-0, 0-2, 2-4, 4-6, 6-1, 1-3, 3-5, 5-0, laid to the right
# by two seats in turn: the leader places the odd ones and goes out with the 13th.
CHAIN = ["1-2", "2-3", "3-4", "4-5", "5-6", "0-6", "0-2", "2-4", "4-6", "1-6", "1-3", "3-5", "0-5"]


def chain_deal(game: RefGame, leader: int, leftover: str):
    out, other = CHAIN[0::2], CHAIN[1::2] + [leftover]
    hands = [out, other] if leader == 0 else [other, out]
    return deal(game, *hands)


def play_chain(game: RefGame) -> list[tuple]:
    return run(game, (CHAIN[0], None), *[(t, "right") for t in CHAIN[1:]])


def test_osel_rule_of_13_hangs_adds_up_and_is_forgotten():
    """OS-3: a side with nothing written adds each deal's amount to what hangs; a deal that gives
    it nothing forgets it; at 13 or more the whole sum is written."""
    g = later_game("osel", 2)
    g.start_deal(*chain_deal(g, 0, "0-1"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 0], [0, 0])
    assert g.hang == [0, 1] and g.next_leader() == 0
    g.start_deal(*chain_deal(g, 0, "3-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 0], [0, 0])
    assert g.hang == [0, 10]
    # seat 1 goes out first, by adding 1-1 to its first turn: side 1 gets nothing, its 10 is
    # forgotten; seat 0 is left with 0-1 and hangs 1
    g.start_deal(*deal(g, ["1-2", "3-4", "5-6", "0-2", "4-6", "1-3", "0-1"],
                       ["2-3", "1-1", "4-5", "0-6", "2-4", "1-6", "3-5"]))
    ev = run(g, ("1-2", None), ("2-3", "right"), ("1-1", "left"), *[(t, "right") for t in CHAIN[2:12]])
    assert ev[-1] == ("deal_end", "domino", [0, 0], [0, 0])
    assert g.hang == [1, 0] and g.next_leader() == 1
    g.start_deal(*chain_deal(g, 1, "3-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 0], [0, 0])
    assert g.hang == [10, 0]
    g.start_deal(*chain_deal(g, 1, "1-5"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [16, 0], [16, 0])  # 10 + 6 opens the account
    assert g.hang == [0, 0]
    g.start_deal(*chain_deal(g, 1, "0-1"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [1, 0], [17, 0])  # once open, every point


def test_osel_lone_doubles_in_a_losing_hand():
    g = later_game("osel", 2)
    g.start_deal(*chain_deal(g, 0, "6-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 50], [0, 50])  # lone 6-6 = 50
    g.start_deal(*chain_deal(g, 0, "0-0"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 25], [0, 75])  # lone 0-0 = 25
    g.start_deal(*chain_deal(g, 0, "3-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 9], [0, 84])
    g.start_deal(*chain_deal(g, 0, "6-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 50], [0, 134])
    assert g.game_over() and g.winners() == [0] and g.losers() == [1]  # §3 kozel: 101 or more is the goat
    with pytest.raises(ValueError, match="game is over"):
        g.start_deal(*chain_deal(g, 0, "6-6"))


def test_osel_redeal():
    g = RefGame("osel", 4, {})
    hands = [["0-0", "1-1", "2-2", "3-3", "4-4", "0-1", "0-2"]] + [
        ["5-5", "6-6", "0-3", "0-4", "0-5", "0-6", "1-2"],
        ["1-3", "1-4", "1-5", "1-6", "2-3", "2-4", "2-5"],
        ["2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "5-6"],
    ]
    assert g.start_deal(hands, []) == [("deal_end", "redeal", [0, 0], [0, 0])]  # §2.9: five doubles
    assert g.deal_over() and g.next_leader() is None  # the first-deal rule applies again


# -- telephone's deal end (TEL-5, TEL-6, TEL-7) -----------------------------------------------


def test_telephone_loser_pays():
    """The chain's counts: seat 0 writes 5 (1+4 after 3-4), seat 1 writes 5 (1+4 after 2-4)."""
    g = later_game("telephone", 2)
    g.start_deal(*chain_deal(g, 0, "2-5"))
    ev = play_chain(g)
    assert scored(ev) == [("scored", 0, 5, 5), ("scored", 1, 5, 5)]
    assert ev[-1] == ("deal_end", "domino", [0, -5], [5, 0])  # 7 rounds down to 5
    g.start_deal(*chain_deal(g, 0, "6-6"))
    ev = play_chain(g)
    assert ev[-1] == ("deal_end", "domino", [0, -5], [10, 0])  # 12 → 10, but never below 0


def test_telephone_scale_5():
    g = RefGame("telephone", 2, {"scale": "5"})
    assert g.target == 72
    later_deal(g, 0)
    g.start_deal(*chain_deal(g, 0, "0-4"))
    ev = play_chain(g)
    assert scored(ev) == [("scored", 0, 1, 5), ("scored", 1, 1, 5)]
    assert ev[-1] == ("deal_end", "domino", [0, 0], [1, 1])  # floor(4 / 5) = 0
    g.start_deal(*chain_deal(g, 0, "3-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, -1], [2, 1])  # floor(9 / 5) = 1


def test_telephone_winner_takes():
    g = later_game("telephone", 2, {"endgame": "winner_takes"})
    g.start_deal(*chain_deal(g, 0, "3-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [10, 0], [15, 5])  # 9 → 10
    g.start_deal(*chain_deal(g, 0, "2-5"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [5, 0], [25, 10])  # 7 → 5
    g = later_game("telephone", 2, {"endgame": "winner_takes", "scale": "5"})
    g.start_deal(*chain_deal(g, 0, "3-6"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [2, 0], [3, 1])  # 9 → 10 → 2


def test_round_near5():
    assert [round_near5(x) for x in (0, 1, 2, 3, 4, 5, 13, 17, 18)] == [0, 0, 0, 5, 5, 5, 15, 15, 20]


def test_layout_count_of_a_lead_non_double():
    lay = Layout(opens_at_once=False)
    lay.place("2-3", None)
    assert lay.count() == 5
    lay.place("3-3", "right")  # a double at an end counts both halves
    assert lay.count() == 2 + 6


def test_osel_leader_adds_extras_open_then_may_close_under_turn_5():
    # TURN-4: the lead is the turn's one tile and uses no end; TURN-6 is a turn of its own, never
    # extras: the first extra is the cross, open, and only then may a double be closed (TURN-5).
    g = later_game("osel", 2)
    g.start_deal(*deal(g, ["2-5", "2-2", "5-5", "0-1", "0-3", "0-4", "1-3"],
                       ["1-4", "0-6", "3-4", "4-6", "1-6", "0-0", "1-2"]))
    run(g, ("2-5", None))
    assert g.legal() == [("place", "2-2", "left", False), ("place", "5-5", "right", False), ("stop",)]
    run(g, ("5-5", "right"))
    assert g.layout.spinner == 5
    assert g.legal() == [("place", "2-2", "left", False), ("place", "2-2", "left", True), ("stop",)]
    ev = run(g, ("2-2", "left", True))
    assert ev[0] == ("placed", 0, "2-2", "left", True, False) and ev[-1][0] != "deal_end"
    assert g.to_move() == 1  # the turn ended (nothing more may be added) and the deal goes on


def test_osel_close_both_ends_with_the_last_tile_is_going_out():
    """TURN-6: if the second closed double is the player's last tile, it is a domino."""
    g = later_game("osel", 2)
    g.start_deal(
        [["3-5", "5-5", "3-6", "2-2", "0-3", "2-4", "1-3"], ["4-5", "1-1", "1-5", "1-6", "0-1", "0-4", "4-4"]],
        ["0-5", "5-6", "1-2", "1-4", "0-6", "0-0", "2-3", "4-6", "3-4", "2-6", "2-5", "0-2", "6-6", "3-3"],
    )
    ev = run(g, ("3-5", None), "stop", ("1-5", "right"), ("1-3", "left"), ("1-6", "left"), "stop",
             ("3-6", "left"), ("0-1", "right"), ("0-3", "left"), ("0-4", "left"), ("2-4", "left"),
             ("0-5", "right"), ("2-2", "left", True), ("5-5", "right", True))
    assert g.layout.spinner is None  # no double was ever laid open
    assert ev[-2:] == [("placed", 0, "5-5", "right", True, False), ("deal_end", "domino", [0, 19], [0, 19])]
    assert g.hands[1] == ["4-5", "1-1", "4-4"] and g.next_leader() == 0  # 9 + 2 + 8


def test_osel_eggs_are_carried_before_the_rule_of_13():
    """§3 kozel: equal totals in a fish are eggs; §5, OS-3: the next largest write takes them,
    and they count towards 13."""
    g = later_game("osel", 2)
    g.start_deal(
        [["1-3", "0-6", "4-4", "5-5", "2-5", "0-1", "0-4"], ["1-1", "3-5", "4-5", "1-4", "2-2", "3-6", "0-3"]],
        ["0-0", "3-3", "1-2", "2-6", "6-6", "2-3", "2-4", "1-5", "0-5", "1-6", "4-6", "0-2", "5-6", "3-4"],
    )
    ev = run(g, ("2-5", None), ("5-5", "right"), ("3-5", "right"), ("2-2", "left", True), ("1-3", "right"),
             ("1-1", "right", True), ("1-5", "up"), ("1-4", "up"), ("4-4", "up", True), ("4-5", "down"),
             ("2-4", "down"), ("0-2", "down"), ("0-0", "down", True))
    assert [plain_value(h) for h in g.hands] == [45, 45]
    assert ev[-1] == ("deal_end", "fish", [0, 0], [0, 0])
    assert g.eggs == 90 and g.drawn == 13  # every drawable tile was drawn first (TURN-7)
    leader = g.next_leader()
    g.start_deal(*chain_deal(g, leader, "0-1"))
    wrote = [0, 0]
    wrote[1 - leader] = 91  # 1 + the 90 eggs: at least 13, so written
    assert play_chain(g)[-1] == ("deal_end", "domino", wrote, wrote)
    assert g.eggs == 0


def plain_value(hand: list[str]) -> int:
    return sum(sum(halves(t)) for t in hand)


# Three four-player muggins fishes (MUG-5): the fewest pips writes the others' total minus its
# own, to the nearest 5; a tie for fewest writes nothing and brings back the forced lead.
MUGGINS_FISH = [
    (   # 71 − 9 = 62 → 60
        [["2-5", "1-3", "4-4", "1-4", "3-4"], ["0-2", "0-1", "1-6", "2-3", "0-5"],
         ["1-5", "5-6", "0-3", "3-6", "5-5"], ["3-3", "4-6", "1-2", "0-6", "2-6"]],
        ["6-6", "0-0", "1-1", "0-4", "2-4", "4-5", "3-5", "2-2"],
        [("1-3", None), ("1-6", "left"), ("3-6", "right"), ("2-6", "right"), ("2-5", "right"), ("0-5", "right"),
         ("5-6", "left"), ("0-6", "right"), ("6-6", "right"), ("4-5", "left"), ("4-6", "left")],
        [20, 20, 31, 9], [0, 0, 0, 60], 3,
    ),
    (   # 104 − 16 = 88 → 90
        [["0-1", "4-6", "1-6", "0-4", "3-4"], ["1-3", "3-3", "2-5", "2-2", "1-5"],
         ["0-5", "1-2", "3-6", "6-6", "0-6"], ["0-2", "2-6", "3-5", "0-3", "4-5"]],
        ["2-4", "5-6", "4-4", "0-0", "2-3", "1-1", "1-4", "5-5"],
        [("0-4", None), ("2-4", "right"), ("1-2", "right"), ("0-3", "left"), ("1-6", "right"), ("1-3", "left"),
         ("0-6", "right"), ("0-2", "right"), ("0-1", "left"), ("2-5", "right"), ("0-5", "right"),
         ("0-0", "right")],
        [39, 16, 21, 44], [0, 90, 0, 0], 1,
    ),
    (   # seats 0 and 2 both hold 14: nobody writes
        [["3-5", "0-1", "6-6", "0-2", "2-4"], ["3-3", "5-6", "1-5", "1-1", "4-6"],
         ["2-2", "1-6", "1-3", "5-5", "1-2"], ["4-4", "0-5", "0-0", "1-4", "0-4"]],
        ["0-3", "2-5", "2-6", "2-3", "0-6", "3-6", "3-4", "4-5"],
        [("3-5", None), ("1-5", "right"), ("1-3", "left"), ("1-4", "right"), ("0-1", "left"), ("4-6", "right"),
         ("1-6", "right"), ("0-4", "left"), ("2-4", "left"), ("1-1", "right"), ("1-2", "left")],
        [14, 17, 14, 67], [0, 0, 0, 0], None,
    ),
]


@pytest.mark.parametrize("hands, bazaar, moves, left, wrote, leader", MUGGINS_FISH)
def test_muggins_fish_rounds_to_the_nearest_5(hands, bazaar, moves, left, wrote, leader):
    g = later_game("muggins", 4)
    g.start_deal(hands, bazaar)
    ev = run(g, *moves)
    assert [plain_value(h) for h in g.hands] == left
    assert ev[-1][:3] == ("deal_end", "fish", wrote)
    assert g.next_leader() == leader  # MUG-3: the winner; after a tie, the forced lead again


def test_muggins_going_out_writes_10_and_200_wins():
    g = later_game("muggins", 2)
    g.start_deal(*chain_deal(g, 0, "6-6"))
    ev = play_chain(g)
    assert scored(ev) == [("scored", 0, 5, 5), ("scored", 1, 5, 5)]
    assert ev[-1] == ("deal_end", "domino", [10, 0], [15, 5])  # MUG-4: no opponents' pips
    g._totals = [186, 195]
    g.start_deal(*chain_deal(g, 0, "6-6"))
    assert play_chain(g)[-1][3] == [201, 200]
    assert g.game_over() and g.winners() == [0]  # MUG-6: both at 200 or more, the highest wins
    assert g.losers() == [1]
    g = later_game("muggins", 2)
    g._totals = [185, 195]
    g.start_deal(*chain_deal(g, 0, "6-6"))
    assert play_chain(g)[-1][3] == [200, 200]
    assert g.game_over() and g.winners() == [] and g.losers() == []  # equal highest: drawn


def test_a_drawn_muggins_game_names_no_losers_even_below_the_target():
    """MUG-6, X-0: two seats tie for the highest at 200 or more; the third, under 200, has not
    lost a drawn game either."""
    g = later_game("muggins", 3)
    g._totals = [210, 210, 150]
    g._check_end()
    assert g.game_over() and g.winners() == [] and g.losers() == []
    g._totals = [210, 205, 150]
    g._check_end()
    assert g.winners() == [0] and g.losers() == [1, 2]


# A four-player telephone fish (no bazaar): during play seat 0 writes 10 and 5, seat 3 writes 5;
# left in hand: 34, 22, 29, 17 (pair A 63, pair B 39).
TELEPHONE_FISH = (
    [["1-4", "6-6", "1-6", "0-4", "4-6", "1-3", "5-6"], ["0-2", "0-6", "0-0", "3-5", "3-6", "2-3", "0-3"],
     ["2-4", "2-2", "2-5", "5-5", "4-4", "3-4", "2-6"], ["1-5", "3-3", "1-2", "4-5", "0-5", "1-1", "0-1"]],
    [("4-6", None), ("3-6", "right"), ("3-4", "right"), ("4-5", "left"), ("0-4", "right"), ("0-2", "right"),
     ("2-4", "right"), ("1-5", "left"), ("1-4", "left"), ("4-4", "left")],
)


def test_telephone_fish_everyone_pays():
    # TEL-5: in a fish every player takes 30, 20, 25, 15 off their pair, never below 0.
    g = later_game("telephone", 4)
    g.start_deal(TELEPHONE_FISH[0], [])
    ev = run(g, *TELEPHONE_FISH[1])
    assert scored(ev) == [("scored", 0, 10, 10), ("scored", 0, 5, 5), ("scored", 3, 5, 5)]
    assert [plain_value(h) for h in g.hands] == [34, 22, 29, 17]
    assert ev[-1] == ("deal_end", "fish", [-15, -5], [0, 0])
    assert g.next_leader() == 2  # TEL-2: after a fish, the last placer (seat 2 laid 4-4)


def test_telephone_fish_winner_takes():
    # TEL-7: in a fish the pair with fewer pips (B, 39) writes the other's 63, to the nearest 5.
    g = later_game("telephone", 4, {"endgame": "winner_takes"})
    g.start_deal(TELEPHONE_FISH[0], [])
    assert run(g, *TELEPHONE_FISH[1])[-1] == ("deal_end", "fish", [0, 65], [15, 70])
    g = later_game("telephone", 4, {"endgame": "winner_takes", "scale": "5"})
    g.start_deal(TELEPHONE_FISH[0], [])
    assert run(g, *TELEPHONE_FISH[1])[-1] == ("deal_end", "fish", [0, 13], [3, 14])


def test_telephone_both_past_225_is_a_draw():
    g = later_game("telephone", 2)
    g._totals = [220, 224]
    g.start_deal(*chain_deal(g, 0, "0-4"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, 0], [225, 229])
    assert g.game_over() and g.winners() == []  # TEL-4
    g = later_game("telephone", 2)
    g._totals = [220, 224]
    g.start_deal(*chain_deal(g, 0, "2-5"))
    assert play_chain(g)[-1] == ("deal_end", "domino", [0, -5], [225, 224])  # checked after paying
    assert g.game_over() and g.winners() == [0]


# -- random playouts: what holds in every deal -------------------------------------------------

SETTINGS = [
    ("osel", 2, {}), ("osel", 3, {}), ("osel", 4, {}),
    ("telephone", 2, {}), ("telephone", 4, {}),
    ("telephone", 2, {"scale": "5", "endgame": "winner_takes"}),
    ("telephone", 4, {"scale": "5"}), ("telephone", 4, {"endgame": "winner_takes"}),
    ("muggins", 2, {}), ("muggins", 3, {}), ("muggins", 4, {}),
]


class Shadow:
    """The deal rebuilt from the events alone, to check each event when it happens."""

    def __init__(self, game: RefGame, hands, bazaar) -> None:
        self.game = game
        self.hands = [list(h) for h in hands]
        self.bazaar = list(bazaar)
        self.drawn = 0
        self.layout = Layout(game.variant == "osel")
        self.points = [0] * len(game.sides)
        self.closed_run = 0  # closed doubles laid in a row while no cross exists (TURN-6)

    def can_place(self, seat: int) -> bool:
        return any(v in halves(t) for t in self.hands[seat] for _, v in self.layout.open_ends())

    def drawable(self) -> int:
        return max(0, len(self.bazaar) - self.drawn - self.game.shape.keep)

    def apply(self, e: tuple) -> None:
        kind = e[0]
        if kind == "placed":
            _, seat, tile, end, closed, _ = e
            assert tile in self.hands[seat]
            if closed and self.layout.spinner is None:
                self.closed_run += 1
            self.hands[seat].remove(tile)
            self.layout.place(tile, end, closed)
        elif kind == "drew":
            _, seat, tile = e
            assert not self.can_place(seat), "drew while holding a tile that fits"
            assert self.drawable() > 0, "drew the bazaar's last tile, or from an empty bazaar"
            assert tile == self.bazaar[self.drawn], "not drawn from the front"
            self.drawn += 1
            self.hands[seat].append(tile)
        elif kind == "passed":
            _, seat = e
            assert not self.can_place(seat), "passed while holding a tile that fits"
            assert self.drawable() == 0, "passed while it could draw"
        elif kind == "scored":
            _, seat, points, count = e
            assert count > 0 and count % 5 == 0 and count == self.layout.count()
            assert points == count // self.game.scale
            self.points[self.game.side_of[seat]] += points
        else:
            reason = e[1]
            if reason == "redeal":
                assert not self.layout.placed
            elif reason == "domino":
                assert any(not h for h in self.hands)
            elif reason == "fish" and self.closed_run == 2:
                assert all(self.layout.arms[x].closed for x in ("left", "right"))  # TURN-6
            else:
                assert reason == "fish", reason
                assert all(h for h in self.hands)
                assert self.drawable() == 0 and not any(self.can_place(s) for s in range(len(self.hands)))

    def conserved(self) -> None:
        tiles = [t for h in self.hands for t in h] + self.bazaar[self.drawn:] + self.layout.placed
        assert sorted(tiles) == sorted(TILES)


def snapshot(g: RefGame) -> tuple:
    return (g.to_move(), g.legal(), [list(h) for h in g.hands], g.drawn, list(g.layout.placed), g.totals())


def play_random_game(variant: str, players: int, options: dict, seed: int) -> dict:
    """One whole game of random legal moves; returns what it met (ends, closings, stops…)."""
    rnd = random.Random(seed)
    g = RefGame(variant, players, options)
    seen: dict = {}
    for _ in range(200):
        if g.game_over():
            break
        order = TILES[:]
        rnd.shuffle(order)
        k = g.shape.hand
        hands, bazaar = [order[s * k:(s + 1) * k] for s in range(players)], order[players * k:]
        before = g.totals()
        leader = g.next_leader()
        shadow = Shadow(g, hands, bazaar)
        events = g.start_deal(hands, bazaar)
        if leader is not None:
            assert not any(e[0] == "placed" for e in events), "a free lead was played automatically"
        while not g.deal_over():
            shadow.conserved()
            legal = g.legal()
            assert legal and legal == sorted(set(legal)), legal
            if rnd.random() < 0.2:  # a random move that is not legal is refused and changes nothing
                bogus = ("place", rnd.choice(TILES), rnd.choice(["left", "right", "up", "down", None]),
                         rnd.random() < 0.3)
                if bogus not in legal:
                    snap = snapshot(g)
                    with pytest.raises(ValueError):
                        g.play(bogus)
                    assert snapshot(g) == snap
            move = rnd.choice(legal)
            seen[move[0]] = True
            events += g.play(move)
        for e in events:
            shadow.apply(e)
            seen[e[0] if e[0] != "deal_end" else e[1]] = True
            if e[0] == "placed" and e[4]:
                seen["closed"] = True
        shadow.conserved()
        assert g.to_move() is None and g.legal() == []
        assert [e[0] for e in events].count("deal_end") == 1 and events[-1][0] == "deal_end"
        _, _, wrote, totals = events[-1]
        assert totals == g.totals()
        assert [b + p + w for b, p, w in zip(before, shadow.points, wrote)] == totals, "points do not add up"
        assert all(t >= 0 for t in totals)
        if variant != "osel":
            assert all(t % (5 // g.scale) == 0 for t in totals)
    assert g.game_over(), "a game that does not end in 200 deals"
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("variant, players, options", SETTINGS)
def test_random_playouts_keep_the_invariants(variant, players, options):
    seen: dict = {}
    for seed in range(40):
        seen.update(play_random_game(variant, players, options, seed))
    assert seen.get("domino") and seen.get("fish"), seen
    if variant == "osel":
        assert seen.get("closed") and seen.get("stop"), seen
    if players < 4 or variant == "muggins":
        assert seen.get("drew"), seen
