"""Tests of the independent reading of sea_kozel, general and blitz (tests/reference/kozel_family_rules.py).

The worked examples of issue 12, each played through the reference: a deal is started for real,
then, where an example needs a position, the hands and the two ends are set and the deciding
turn is played move by move.  Random playouts then check what must hold whatever the details:
the 28 tiles are conserved, nobody draws or passes holding a tile that fits, a deal ends only by
going out, a fish (when nobody can place or draw) or blitz's redeal, and sea_kozel never leaves
two sides with points.
"""

from __future__ import annotations

import random

import pytest
from reference.cross_rules import TILES, halves
from reference.kozel_family_rules import RefGame, sea_value

# -- helpers ----------------------------------------------------------------------------------


def deal(players: int, give: dict[int, list[str]] | None = None) -> tuple[list[list[str]], list[str]]:
    """Hands of 7 holding ``give[seat]``, filled from the rest of the set in order; the rest
    (two players) is the bazaar."""
    give = give or {}
    used = {t for h in give.values() for t in h}
    rest = [t for t in TILES if t not in used]
    hands = []
    for s in range(players):
        h = list(give.get(s, []))
        while len(h) < 7:
            h.append(rest.pop(0))
        hands.append(h)
    return hands, rest


def position(g: RefGame, hands: dict[int, list[str]], ends: tuple[int, int], seat: int) -> None:
    """Set a deal in progress to ``hands`` (every seat given), the two ends and the seat to move."""
    assert g.started and g.ended is None
    g.hands = [list(hands[s]) for s in range(g.players)]
    g.drawn = len(g.bazaar)  # nothing left to draw
    g.ends = {"left": ends[0], "right": ends[1]}
    g.lead = g.lead or "0-0"
    g.turn = seat
    g.phase = "one"
    g.turn_tiles = []


def place(g: RefGame, tile: str, end: str | None) -> list[tuple]:
    move = ("place", tile, end, False)
    assert move in g.legal(), (move, g.legal())
    return g.play(move)


def ending(events: list[tuple]) -> tuple:
    assert events and events[-1][0] == "deal_end", events
    return events[-1]


def four(a0: list[str], a1: list[str], a2: list[str], a3: list[str]) -> dict[int, list[str]]:
    return {0: a0, 1: a1, 2: a2, 3: a3}


# -- two doubles at once (TURN-2, TURN-3) ----------------------------------------------------------


def test_0_0_and_6_6_at_once_is_bald_in_sea_kozel():
    g = RefGame("sea_kozel", 4)
    g.start_deal(*deal(4))
    position(g, four(["0-0", "6-6"], ["1-2"], ["1-3"], ["2-3"]), (0, 6), 0)
    assert place(g, "0-0", "left") == [("placed", 0, "0-0", "left", False, False)]
    assert g.to_move() == 0 and g.legal() == [("place", "6-6", "right", False), ("stop",)]  # TURN-2
    ev = place(g, "6-6", "right")
    assert ev[-1] == ("deal_end", "bald", [0, 0], [0, 0])  # TURN-3, SK-9: bald before the 6-6 rule
    assert g.game_over() and g.winners() == [0]


@pytest.mark.parametrize("cap, over", [(3, False), (2, True)])
def test_0_0_and_6_6_at_once_give_two_generals(cap, over):
    g = RefGame("general", 4, {"generals": str(cap)})
    g.start_deal(*deal(4))
    position(g, four(["0-0", "6-6"], ["1-2"], ["1-3"], ["2-3"]), (0, 6), 0)
    place(g, "0-0", "left")
    ev = place(g, "6-6", "right")
    # GEN-3: both to the next seat clockwise (seat 1, pair B); GEN-5: reaching the cap loses.
    assert ev[1:] == [("general", 1, 1), ("general", 1, 1), ("deal_end", "two_generals", [0, 2], [0, 2])]
    assert g.game_over() == over and g.winners() == ([0] if over else [])


def test_a_second_double_is_optional_and_only_on_the_other_end():
    g = RefGame("sea_kozel", 4)
    g.start_deal(*deal(4))
    position(g, four(["3-3", "5-5", "3-5"], ["1-2"], ["1-3"], ["2-6"]), (3, 5), 0)
    place(g, "3-3", "left")
    assert g.legal() == [("place", "5-5", "right", False), ("stop",)]
    with pytest.raises(ValueError, match="other end"):
        g.play(("place", "3-5", "right", False))
    assert g.play(("stop",)) == [("passed", 1)]  # 1-2 fits neither 3 nor 5
    assert g.to_move() == 2


# -- hundreds (SK-7, SK-8, SK-9, SK-11) -----------------------------------------------------------


def test_fish_with_f_under_25_and_o_25_or_more_then_the_hundred_won():
    g = RefGame("sea_kozel", 4)
    g.start_deal(*deal(4))  # the first deal is led by the lowest double (SK-18)
    # seat 1 lays the fish: F = 1 + 3 = 4 (pair B), O = 11 + 22 = 33 (pair A)
    ev = _fish_now(g, 1, four(["5-6"], ["0-1"], ["6-6", "5-5"], ["1-2"]))
    assert ev[-1] == ("deal_end", "fish_hundred", [0, 33], [0, 33])  # SK-11: a normal win worth O
    assert g.pending() == {"kind": "hundred", "side": 1} and g.next_leader() == 1  # SK-17, SK-8
    g.start_deal(*deal(4, {1: ["6-6"]}))
    assert g.pending() == {"kind": "hundred", "side": 1}
    assert g.to_move() == 1 and ("lead_hundred", "6-6") not in g.legal()  # granted: any tile (SK-7)
    position(g, four(["0-1"], ["0-2"], ["0-3"], ["2-5"]), (5, 5), 3)
    assert ending(place(g, "2-5", "left")) == ("deal_end", "hundred", [0, 0], [0, 33])  # SK-9
    assert g.game_over() and g.winners() == [1]


def _fish_now(g: RefGame, fisherman: int, others: dict[int, list[str]]) -> list[tuple]:
    """In the deal in progress, the fisherman lays 3-4 on the 3 and nobody holds a 4."""
    hands = {s: list(others[s]) for s in range(g.players)}
    hands[fisherman] = ["3-4"] + hands[fisherman]
    position(g, hands, (4, 3), fisherman)
    return place(g, "3-4", "right")


def declared(g: RefGame) -> None:
    """Pair B writes 30 (seat 3 out); seat 3 leads the next deal holding 6-6 and declares."""
    g.start_deal(*deal(4))
    assert won_deal_now(g, 3, four(["5-6", "4-6"], ["0-1"], ["3-6"], [])) == ("deal_end", "write", [0, 30], [0, 30])
    assert g.next_leader() == 3
    g.start_deal(*deal(4, {3: ["6-6"]}))
    assert g.pending() is None
    assert ("lead_hundred", "6-6") in g.legal() and ("place", "6-6", None, False) in g.legal()  # SK-7
    assert g.play(("lead_hundred", "6-6")) == [("declared", 3, "hundred"), ("placed", 3, "6-6", None, False, False)]


def won_deal_now(g: RefGame, seat: int, others: dict[int, list[str]]) -> tuple:
    hands = {s: others.get(s) or ["0-1"] for s in range(g.players)}
    hands[seat] = ["2-5"]
    position(g, hands, (5, 5), seat)
    return ending(place(g, "2-5", "left"))


def test_a_declared_hundred_lost_holding_25_or_more_is_svoyak():
    g = RefGame("sea_kozel", 4)
    declared(g)
    # seat 0 goes out; pair B holds 13 + 12 = 25
    assert won_deal_now(g, 0, four([], ["6-6", "0-1"], ["1-1"], ["5-6", "0-1"])) == ("deal_end", "svoyak", [0, 0], [0, 30])
    assert g.game_over() and g.winners() == [0]


def test_a_declared_hundred_lost_holding_less_scores_normally():
    g = RefGame("sea_kozel", 4)
    declared(g)
    # pair B holds 1 + 3 = 4 (the hundred is spent), worth 4: under 25
    assert won_deal_now(g, 2, four(["1-1"], ["0-1"], [], ["1-2"])) == ("deal_end", "under_25", [0, 0], [0, 30])
    assert not g.game_over() and g.pending() is None


def test_a_declared_hundred_stands_through_the_fish_decision():
    """SK-9 with SK-12: declining gives the other side the fish, which wins its hundred."""
    g = RefGame("sea_kozel", 4)
    declared(g)
    # seat 0 (pair A) lays the fish: F = 11 + 15 = 26 against O = 3 + 1: the decision (SK-12)
    ev = _fish_now(g, 0, four(["5-6"], ["1-2"], ["6-6", "0-3"], ["0-1"]))
    assert ev[-1][0] != "deal_end" and g.to_move() == 0 and g.legal() == [("decline",), ("write_off",)]
    assert g.play(("decline",)) == [("declined", 0), ("deal_end", "hundred", [0, 0], [0, 30])]
    assert g.winners() == [1]


def test_going_out_with_6_6_grants_a_hundred_or_wins():
    g = RefGame("sea_kozel", 2)
    g.start_deal(*deal(2))
    position(g, {0: ["6-6"], 1: ["0-1", "0-2"]}, (6, 1), 0)
    assert ending(place(g, "6-6", "left")) == ("deal_end", "six_six_hundred", [0, 0], [0, 0])
    assert g.pending() == {"kind": "hundred", "side": 0} and g.next_leader() == 0
    g.start_deal(*deal(2))
    position(g, {0: ["5-6"], 1: ["6-6", "0-2"]}, (3, 6), 1)  # seat 1 goes out: the hundred is spent
    g.hands[1] = ["6-6"]
    g.hands[0] = ["5-6", "4-6", "3-3"]  # seat 0 holds 26: svoyak
    assert ending(place(g, "6-6", "right")) == ("deal_end", "svoyak", [0, 0], [0, 0])
    g = RefGame("sea_kozel", 2)
    g.start_deal(*deal(2))
    position(g, {0: ["6-6"], 1: ["5-6", "4-6", "1-3"]}, (6, 1), 0)
    assert ending(place(g, "6-6", "left")) == ("deal_end", "six_six", [0, 0], [0, 0])  # losers hold 25
    assert g.winners() == [0]


# -- writing off the fish (SK-12, SK-13) ------------------------------------------------------------


def write_off(g: RefGame) -> None:
    g.start_deal(*deal(4))
    # seat 0 lays the fish: pair A holds 11 + 15 = 26, pair B 3 + 1: F > O and F >= 25
    ev = _fish_now(g, 0, four(["5-6"], ["1-2"], ["6-6", "0-3"], ["0-1"]))
    assert g.to_move() == 0 and g.legal() == [("decline",), ("write_off",)] and ev[-1][0] == "placed"
    assert g.play(("write_off",)) == [("write_off", 0), ("deal_end", "write_off", [0, 0], [0, 0])]
    assert g.pending() == {"kind": "write_off", "side": 0, "deal": 1, "of": 3} and g.next_leader() == 0


def test_declining_the_fish_gives_the_other_side_worth_f():
    g = RefGame("sea_kozel", 4)
    g.start_deal(*deal(4))
    _fish_now(g, 0, four(["5-6"], ["1-2"], ["6-6", "0-3"], ["0-1"]))
    assert g.play(("decline",)) == [("declined", 0), ("deal_end", "declined", [0, 26], [0, 26])]
    assert g.next_leader() == 1  # SK-17: his side lost it, the seat after him leads


def test_a_written_off_fish_that_succeeds():
    g = RefGame("sea_kozel", 4)
    write_off(g)
    g.start_deal(*deal(4, {0: ["6-6"]}))
    assert g.to_move() == 0 and ("lead_hundred", "6-6") not in g.legal()  # SK-13
    # deal 1 of 3: pair B wins it, worth 4: nothing, still written off
    assert won_deal_now(g, 1, four(["1-2"], [], ["0-1"], [])) == ("deal_end", "under_25", [0, 0], [0, 0])
    assert g.pending() == {"kind": "write_off", "side": 0, "deal": 2, "of": 3} and g.next_leader() == 0
    g.start_deal(*deal(4))
    assert won_deal_now(g, 2, four(["0-1"], ["5-6", "4-6"], [], ["3-6"])) == ("deal_end", "write", [30, 0], [30, 0])
    assert g.pending() is None and g.next_leader() == 2


def test_a_written_off_fish_that_fails_after_three_deals():
    g = RefGame("sea_kozel", 4)
    write_off(g)
    for k in (1, 2, 3):
        assert g.pending() == {"kind": "write_off", "side": 0, "deal": k, "of": 3}
        g.start_deal(*deal(4))
        assert g.to_move() == 0  # the fisherman leads every write-off deal
        won_deal_now(g, 2, four(["0-1"], ["0-2"], [], ["0-3"]))  # pair A wins, worth 5: not enough
    # SK-12: the other side plays for a hundred; SK-8: seat 2 would lead, so the seat after him
    assert g.pending() == {"kind": "hundred", "side": 1} and g.next_leader() == 3


# -- eggs (SK-14) -----------------------------------------------------------------------------


def eggs(g: RefGame) -> None:
    g.start_deal(*deal(4))
    ev = _fish_now(g, 0, four(["5-6"], ["5-5", "0-1"], ["0-2"], ["1-1"]))  # 13 against 13
    assert ev[-1] == ("deal_end", "eggs", [0, 0], [0, 0])
    assert g.pending() == {"kind": "eggs", "total": 26, "deal": 1, "of": 3} and g.next_leader() is None


def test_eggs_taken():
    g = RefGame("sea_kozel", 4)
    eggs(g)
    hands, bazaar = deal(4, {2: ["1-1"]})
    ev = g.start_deal(hands, bazaar)
    assert ev[0] == ("placed", 2, "1-1", None, False, True)  # led with 1-1 by its holder
    assert ("lead_hundred", "6-6") not in g.legal()
    # pair B goes out; pair A holds 1 + 2: eggs 26 + 3 = 29, written
    assert won_deal_now(g, 1, four(["0-1"], [], ["0-2"], ["0-0"])) == ("deal_end", "eggs_taken", [0, 29], [0, 29])
    assert g.pending() is None


def test_rotten_eggs_draw_the_match():
    g = RefGame("sea_kozel", 4)
    eggs(g)
    for k, total in ((1, 26), (2, 52), (3, 78)):
        assert g.pending() == {"kind": "eggs", "total": total, "deal": k, "of": 3}
        g.start_deal(*deal(4))
        ev = _fish_now(g, 0, four(["5-6"], ["5-5", "0-1"], ["0-2"], ["1-1"]))
    assert ev[-1] == ("deal_end", "rotten_eggs", [0, 0], [0, 0])
    assert g.game_over() and g.winners() == [] and g.losers() == []


def test_an_eggs_deal_fish_is_won_by_fewer_pips():
    g = RefGame("sea_kozel", 4)
    eggs(g)
    g.start_deal(*deal(4))
    ev = _fish_now(g, 0, four(["5-6"], ["0-1"], ["6-6", "0-3"], ["0-2"]))  # F = 26 > O = 3: no decision
    assert ev[-1] == ("deal_end", "eggs_taken", [0, 52], [0, 52]) and g.next_leader() == 1


# -- the 25 rule, wiping and 125 (SK-5, SK-19) -------------------------------------------------------


def test_only_one_side_ever_has_points():
    g = RefGame("sea_kozel", 2)
    g.start_deal(*deal(2))
    position(g, {0: ["2-5"], 1: ["5-6", "4-6", "3-3"]}, (5, 5), 0)
    assert ending(place(g, "2-5", "left")) == ("deal_end", "write", [27, 0], [27, 0])
    g.start_deal(*deal(2))
    position(g, {1: ["2-5"], 0: ["5-6", "4-6", "3-3"]}, (5, 5), 1)
    assert ending(place(g, "2-5", "left")) == ("deal_end", "wipe", [-27, 0], [0, 0])
    for _ in range(4):
        assert not g.game_over()
        g.start_deal(*deal(2))
        position(g, {1: ["2-5"], 0: ["6-6", "5-6", "4-6"]}, (5, 5), 1)
        place(g, "2-5", "left")
    assert g.totals() == [0, 132] and g.winners() == [1]  # 33 a deal; 125 reached in the fourth
    assert sea_value(["0-0", "6-6"]) == 75 and sea_value(["6-6"]) == 50 and sea_value(["0-0"]) == 25


# -- blitz (TURN-8, BL-1) ----------------------------------------------------------------------------


def test_003_blitz_chain():
    """003: 3-4, then 4-6, 6-2, 2-1, each its own move, compulsory (no stop)."""
    g = RefGame("blitz", 4)
    g._leader = 0
    g.start_deal([TILES[s::4] for s in range(4)], [])
    position(g, four(["3-4", "4-6", "2-6", "1-2", "0-0"], ["0-5"], ["5-5"], ["0-3"]), (3, 5), 0)
    g.hands[1], g.hands[2], g.hands[3] = ["1-3"], ["3-5"], ["5-6"]
    for tile, shows in (("3-4", 3), ("4-6", 4), ("2-6", 6), ("1-2", 2)):
        assert g.to_move() == 0 and ("stop",) not in g.legal()
        end = "left" if g.ends["left"] == shows else "right"
        ev = place(g, tile, end)
    assert g.to_move() == 1 and ev[-1] == ("placed", 0, "1-2", "left", False, False)
    with pytest.raises(ValueError, match="no stop"):
        g.turn = 1
        g.phase = "chain"
        g.play(("stop",))


def test_blitz_forced_lead_starts_a_chain_and_a_fish_is_kozels():
    g = RefGame("blitz", 4)
    hands, _ = deal(4, {0: ["1-1", "1-2"], 1: ["5-5"]})
    ev = g.start_deal(hands, [])
    assert ev == [("placed", 0, "1-1", None, False, True)] and g.to_move() == 0  # X-2, TURN-8
    position(g, four(["3-4", "0-1"], ["5-6", "6-6"], ["2-2"], ["0-5"]), (4, 3), 0)
    g.phase = "chain"
    ev = place(g, "3-4", "right")
    # nobody holds a 4: the chain's player is the fisherman; seat 1 holds the most (11 + 12)
    assert ev[-1] == ("deal_end", "fish", [0, 33, 0, 0], [0, 33, 0, 0]) and g.next_leader() == 0


# -- general (GEN-2, GEN-6) ----------------------------------------------------------------------


def test_general_void_fish_and_its_deal_cap():
    g = RefGame("general", 4, {"max_deals": "3"})
    hands, _ = deal(4, {1: ["1-1"]})
    assert g.start_deal(hands, [])[0] == ("placed", 1, "1-1", None, False, True)  # GEN-1
    ev = _fish_now(g, 2, four(["5-6"], ["0-0"], ["0-1"], ["6-6"]))
    assert ev[-1] == ("deal_end", "void_fish", [0, 0], [0, 0]) and not g.game_over()  # GEN-2
    g.start_deal(hands, [])
    position(g, four(["0-1"], ["1-2"], ["6-6"], ["0-2"]), (6, 2), 2)
    ev = place(g, "6-6", "left")
    assert ev[-2:] == [("general", 3, 1), ("deal_end", "general", [0, 1], [0, 1])]
    g.start_deal(hands, [])
    ev = _fish_now(g, 0, four(["5-6"], ["0-0"], ["0-1"], ["6-6"]))
    assert ev[-1][1] == "void_fish" and g.game_over() and g.winners() == [0] and g.losers() == [1]  # GEN-6: fewer generals
    g = RefGame("general", 4, {"max_deals": "1"})
    g.start_deal(hands, [])
    _fish_now(g, 0, four(["5-6"], ["0-0"], ["0-1"], ["6-6"]))
    assert g.game_over() and g.winners() == [] and g.losers() == []  # equal counts draw, no losers


def test_options_are_checked():
    with pytest.raises(ValueError, match="no option"):
        RefGame("general", 4, {"target": "3"})
    with pytest.raises(ValueError, match="positive"):
        RefGame("general", 4, {"generals": "0"})
    with pytest.raises(ValueError, match="no options"):
        RefGame("blitz", 4, {"generals": "3"})
    with pytest.raises(ValueError, match="2 players or 4"):
        RefGame("sea_kozel", 3)


# -- random playouts -----------------------------------------------------------------------------


class Shadow:
    """The tiles and ends rebuilt from the events alone, to check the reference against them."""

    def __init__(self, players: int, hands: list[list[str]], bazaar: list[str], keep: int) -> None:
        self.hands = [list(h) for h in hands]
        self.bazaar = list(bazaar)
        self.keep = keep
        self.table: list[str] = []
        self.ends: dict[str, int] = {}

    def fits(self, seat: int) -> bool:
        return any(v in halves(t) for t in self.hands[seat] for v in self.ends.values())

    def apply(self, e: tuple) -> None:
        if e[0] == "placed":
            _, seat, tile, end, _, _ = e
            self.hands[seat].remove(tile)
            self.table.append(tile)
            a, b = halves(tile)
            if end is None:
                self.ends = {"left": a, "right": b}
            else:
                v = self.ends[end]
                assert v in (a, b)
                self.ends[end] = b if v == a else a
        elif e[0] == "drew":
            assert not self.fits(e[1]), f"seat {e[1]} drew holding a tile that fits"
            assert len(self.bazaar) > self.keep and self.bazaar[0] == e[2]
            self.hands[e[1]].append(self.bazaar.pop(0))
        elif e[0] == "passed":
            assert not self.fits(e[1]), f"seat {e[1]} passed holding a tile that fits"
            assert len(self.bazaar) <= self.keep, "a pass with tiles left to draw"

    def conserved(self) -> None:
        every = [t for h in self.hands for t in h] + self.bazaar + self.table
        assert sorted(every) == sorted(TILES)


RULES = {
    "sea_kozel": {"bald", "hundred", "svoyak", "six_six", "six_six_hundred", "fish_hundred", "write_off",
                  "declined", "eggs", "eggs_taken", "rotten_eggs", "write", "wipe", "under_25"},
    "general": {"general", "two_generals", "domino", "void_fish"},
    "blitz": {"domino", "fish", "eggs", "redeal"},
}
DOMINO_RULES = {"bald", "six_six", "six_six_hundred", "general", "two_generals", "domino"}
FISH_RULES = {"fish_hundred", "write_off", "declined", "eggs", "rotten_eggs", "void_fish", "fish"}


def play_random_game(variant: str, players: int, options: dict, seed: int, seen: set) -> None:
    rnd = random.Random(seed)
    g = RefGame(variant, players, options)
    for _ in range(300):
        if g.game_over():
            break
        order = TILES[:]
        rnd.shuffle(order)
        hands, bazaar = [order[s * 7:(s + 1) * 7] for s in range(players)], order[players * 7:]
        shadow = Shadow(players, hands, bazaar, g.keep)
        events = g.start_deal(hands, bazaar)
        mover = None
        while True:
            for e in events:
                shadow.apply(e)
                shadow.conserved()
            if g.deal_over():
                break
            legal = g.legal()
            assert legal == sorted(set(legal)) and legal
            bogus = ("place", rnd.choice(TILES), rnd.choice(["left", "right", None]), False)
            if bogus not in legal:
                with pytest.raises(ValueError):
                    g.play(bogus)
            if any(m[0] == "place" and m[2] is not None for m in legal):
                assert shadow.fits(g.to_move())
            mover = g.to_move()
            move = rnd.choice(legal)
            seen.add(move[0])
            events = g.play(move)
        end = events[-1]
        assert end[0] == "deal_end" and [e[0] for e in events].count("deal_end") == 1
        rule = end[1]
        assert rule in RULES[variant], rule
        seen.add(rule)
        assert end[3] == g.totals()
        if rule == "redeal":
            continue
        out = [s for s in range(players) if not shadow.hands[s]]
        if out:
            assert out == [mover] and rule not in FISH_RULES  # the mover went out
        else:
            # a fish: nobody can place, nobody can draw (§2.6)
            assert rule not in DOMINO_RULES and not any(shadow.fits(s) for s in range(players))
            assert len(shadow.bazaar) <= g.keep
        if variant == "sea_kozel":
            assert min(g.totals()) == 0  # only one side ever has points
        if variant == "blitz":
            assert all(t == 0 or t >= 13 for t in g.totals())  # rule of 13 drop
    assert g.game_over()


@pytest.mark.parametrize("variant, players, options", [
    ("sea_kozel", 4, {}), ("sea_kozel", 2, {}), ("general", 4, {}), ("general", 4, {"generals": "1", "max_deals": "5"}),
    ("blitz", 4, {}),
])
def test_random_playouts_keep_the_invariants(variant, players, options):
    seen: set = set()
    for seed in range(30):
        play_random_game(variant, players, options, seed, seen)
    assert "place" in seen
    if variant == "sea_kozel":
        assert {"write_off", "decline", "stop"} & seen
    if variant == "blitz":
        assert {"domino", "fish"} <= seen
