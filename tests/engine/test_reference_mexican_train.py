"""Tests of the independent mexican_train reference (tests/reference/mexican_train_rules.py) itself.

The worked examples issue 17 names, each played as a real deal through the reference (a double
covered by its player, a double left hanging and covered by the next player, a pass that leaves
a marker and the owner's play that removes it, going out on a double, a round blocked with
markers ignored), and random playouts that check what must hold in every round whatever the
details: the 28 tiles are conserved, a seat draws one tile only when it cannot place, markers
follow passes and the owners' plays, an open double is covered before anything else, a round
ends only by a domino or a block, and the seven rounds add up.
"""

from __future__ import annotations

import random

import pytest
from reference.mexican_train_rules import MEXICAN, TILES, RefGame, halves, is_double, pips, station, train_of

# -- helpers ----------------------------------------------------------------------------------


def deal(game: RefGame, *hands: list[str], bazaar: list[str] | None = None) -> tuple[list[list[str]], list[str]]:
    """The given hands; the rest of the 27 tiles form the bazaar in set order, or as given first."""
    used = {t for h in hands for t in h}
    rest = [t for t in TILES if t not in used and t != station(game.rounds_played)]
    front = list(bazaar or [])
    rest = front + [t for t in rest if t not in front]
    return [list(h) for h in hands], rest


def place(game: RefGame, tile: str, train: str) -> list[tuple]:
    move = ("place", tile, train)
    assert move in game.legal(), (move, game.legal())
    return game.play(move)


def trains_of(game: RefGame, seat: int) -> set[str]:
    return {m[2] for m in game.legal()} if game.to_move() == seat else set()


# -- the rule book's setup (MT-1, MT-2, MT-3, MT-14) ---------------------------------------------


def test_players_options_and_deals_are_checked():
    for n in (1, 5):
        with pytest.raises(ValueError, match="MT-2"):
            RefGame("mexican_train", n)
    with pytest.raises(ValueError, match="no options"):
        RefGame("mexican_train", 2, {"rounds": "3"})
    with pytest.raises(ValueError, match="unknown variant"):
        RefGame("kolbasa", 2)
    g = RefGame("mexican_train", 3)
    hands, bazaar = deal(g, TILES[1:8], TILES[8:15], TILES[15:22])  # 0-0 … in a 6-6 round: fine
    with pytest.raises(ValueError, match="27 tiles without the station 6-6"):
        g.start_deal(hands, bazaar[:-1] + ["6-6"])
    with pytest.raises(ValueError, match="deals 7"):
        g.start_deal([hands[0][:-1], hands[1], hands[2]], bazaar + [hands[0][-1]])
    assert g.start_deal(hands, bazaar) is not None


def test_station_sizes_and_starters_over_seven_rounds():
    """§3: 8, 7 or 6 tiles each; MT-1: round k puts (6−k)-(6−k) on the station and seat k mod n
    starts it; MT-14: exactly seven rounds."""
    for n, size in ((2, 8), (3, 7), (4, 6)):
        g = RefGame("mexican_train", n)
        rng = random.Random(n)
        for k in range(7):
            assert g.next_leader() == k % n
            rest = [t for t in TILES if t != station(k)]
            rng.shuffle(rest)
            g.start_deal([rest[i * size:(i + 1) * size] for i in range(n)], rest[n * size:])
            assert {tr.shows for tr in g.trains.values()} == {6 - k}
            assert set(g.trains) == {MEXICAN, *(train_of(s) for s in range(n))}
            while not g.deal_over():
                g.play(rng.choice(g.legal()))
        assert g.game_over() and g.next_leader() is None
        with pytest.raises(ValueError, match="over"):
            g.start_deal([[]] * n, [])


# -- worked examples (issue 17) ------------------------------------------------------------------


def test_double_covered_by_its_player():
    """MT-7: a double obliges its player to move again, and the only legal moves are tiles that
    cover it on its train; after the cover the turn passes on."""
    g = RefGame("mexican_train", 2)
    hands, bazaar = deal(g, ["5-6", "5-5", "1-5", "0-0", "0-1", "0-2", "0-3", "0-6"],
                         ["4-6", "3-6", "2-6", "1-1", "1-2", "1-3", "1-4", "2-2"])
    assert g.start_deal(hands, bazaar) == []
    assert g.to_move() == 0  # MT-1: seat 0 starts the 6-6 round
    assert g.legal() == [("place", "0-6", "mexican"), ("place", "0-6", "seat0"),
                         ("place", "5-6", "mexican"), ("place", "5-6", "seat0")]
    assert place(g, "5-6", "seat0") == [("placed", 0, "5-6", "seat0")]
    assert trains_of(g, 1) == {"mexican", "seat1"}  # seat 0's train carries no marker (MT-4)
    assert place(g, "4-6", "seat1") == [("placed", 1, "4-6", "seat1")]
    assert place(g, "5-5", "seat0") == [("placed", 0, "5-5", "seat0")]
    assert g.to_move() == 0 and g.open_double == "seat0"
    assert g.legal() == [("place", "1-5", "seat0")]  # 0-6 would fit the Mexican, but not now
    with pytest.raises(ValueError, match="MT-7"):
        g.play(("place", "0-6", "mexican"))
    assert place(g, "1-5", "seat0") == [("placed", 0, "1-5", "seat0")]
    assert g.to_move() == 1 and g.open_double is None and g.trains["seat0"].shows == 1


def test_double_covered_by_a_drawn_tile():
    """MT-7: with no cover in hand the double's player draws one tile and plays it if it covers."""
    g = RefGame("mexican_train", 2)
    hands, bazaar = deal(g, ["5-6", "5-5", "0-0", "0-1", "0-2", "0-3", "0-4", "1-1"],
                         ["4-6", "3-6", "2-6", "1-2", "1-3", "1-4", "2-2", "2-3"], bazaar=["3-5"])
    g.start_deal(hands, bazaar)
    place(g, "5-6", "seat0")
    place(g, "4-6", "seat1")
    assert place(g, "5-5", "seat0") == [("placed", 0, "5-5", "seat0"), ("drew", 0, "3-5")]
    assert g.legal() == [("place", "3-5", "seat0")]
    assert place(g, "3-5", "seat0") == [("placed", 0, "3-5", "seat0")]
    assert g.to_move() == 1 and not g.trains["seat0"].marker


def test_double_left_hanging_and_covered_by_the_next_player():
    """MT-7, MT-8: the double's player cannot cover, draws a tile that does not cover, passes
    with a marker; the double hangs and the next player must cover it before anything else."""
    g = RefGame("mexican_train", 2)
    hands, bazaar = deal(g, ["5-6", "5-5", "0-0", "0-1", "0-2", "0-3", "0-4", "1-1"],
                         ["4-6", "3-5", "2-5", "1-2", "1-3", "1-4", "2-2", "3-6"], bazaar=["2-3"])
    g.start_deal(hands, bazaar)
    place(g, "5-6", "seat0")
    place(g, "4-6", "seat1")
    ev = place(g, "5-5", "seat0")
    # 2-3 would fit no train open to seat 0 anyway; what matters is that it does not cover
    assert ev == [("placed", 0, "5-5", "seat0"), ("drew", 0, "2-3"), ("passed", 0), ("marker", 0, True)]
    assert g.to_move() == 1 and g.open_double == "seat0"
    # 1-4 fits seat 1's own train and 3-6 the Mexican, but the hanging double comes first
    assert g.legal() == [("place", "2-5", "seat0"), ("place", "3-5", "seat0")]
    with pytest.raises(ValueError, match="covered first"):
        g.play(("place", "1-4", "seat1"))
    assert place(g, "3-5", "seat0") == [("placed", 1, "3-5", "seat0")]
    assert g.open_double is None and g.to_move() == 0
    assert g.trains["seat0"].marker  # only the owner's play removes it (MT-10)
    assert trains_of(g, 0) == {"seat0"}  # 0-3, 2-3 on its own 3; nothing on the Mexican's 6


def test_hanging_double_must_be_covered_by_its_owner_too():
    """MT-8: every player in turn, its owner too; one who cannot draws one and passes."""
    g = RefGame("mexican_train", 2)
    hands, bazaar = deal(g, ["5-6", "5-5", "0-0", "0-1", "0-2", "0-3", "0-4", "1-1"],
                         ["4-6", "3-6", "2-6", "1-2", "1-3", "1-4", "2-2", "2-3"], bazaar=["2-4", "1-6", "3-5"])
    g.start_deal(hands, bazaar)
    place(g, "5-6", "seat0")
    place(g, "4-6", "seat1")
    ev = place(g, "5-5", "seat0")
    assert ev == [("placed", 0, "5-5", "seat0"), ("drew", 0, "2-4"), ("passed", 0), ("marker", 0, True),
                  ("drew", 1, "1-6"), ("passed", 1), ("marker", 1, True), ("drew", 0, "3-5")]
    assert g.legal() == [("place", "3-5", "seat0")]  # the owner covers it at last
    assert place(g, "3-5", "seat0") == [("placed", 0, "3-5", "seat0"), ("marker", 0, False)]
    assert g.to_move() == 1 and g.open_double is None


def test_pass_leaves_a_marker_and_the_owners_play_removes_it():
    """MT-15: the starter who cannot place draws one tile and passes; MT-6: the pass puts a marker
    on the passer's train, and MT-4 opens it to everyone even while empty; another seat's play
    leaves the marker; MT-10: the owner's own play on it removes it and closes the train again."""
    g = RefGame("mexican_train", 2)
    hands, bazaar = deal(g, ["0-0", "0-1", "0-2", "0-3", "0-4", "1-1", "1-2", "2-3"],
                         ["4-6", "3-6", "2-6", "1-6", "5-6", "0-6", "2-2", "1-4"], bazaar=["1-3"])
    assert g.start_deal(hands, bazaar) == [("drew", 0, "1-3"), ("passed", 0), ("marker", 0, True)]
    assert g.to_move() == 1 and g.trains["seat0"].marker
    assert trains_of(g, 1) == {"mexican", "seat0", "seat1"}
    assert place(g, "4-6", "seat0") == [("placed", 1, "4-6", "seat0")]
    assert g.trains["seat0"].marker  # another seat's play leaves it
    assert g.legal() == [("place", "0-4", "seat0")]  # seat 0's own train now shows 4
    assert place(g, "0-4", "seat0") == [("placed", 0, "0-4", "seat0"), ("marker", 0, False)]
    assert not g.trains["seat0"].marker
    assert trains_of(g, 1) == {"mexican", "seat1"}  # closed to seat 1 again
    with pytest.raises(ValueError, match="MT-4"):
        g.play(("place", "0-6", "seat0"))


def test_a_second_pass_puts_no_second_marker():
    """MT-6: a pass on a train that already has a marker changes nothing (no marker event)."""
    g = RefGame("mexican_train", 2)
    hands, bazaar = deal(g, ["0-0", "0-1", "0-2", "0-3", "0-4", "1-1", "1-2", "2-3"],
                         ["4-6", "3-6", "2-6", "1-6", "5-6", "0-6", "2-2", "1-4"], bazaar=["1-3", "2-4"])
    g.start_deal(hands, bazaar)
    assert place(g, "3-6", "seat1") == [("placed", 1, "3-6", "seat1"), ("drew", 0, "2-4"), ("passed", 0)]
    assert g.trains["seat0"].marker and g.to_move() == 1


def test_going_out_on_a_double_ends_the_round_at_once():
    """MT-9: the last tile is a double; the round ends at once and the double stays uncovered;
    MT-13: everyone writes the plain pips of their own hand."""
    g = RefGame("mexican_train", 2)
    hands, bazaar = deal(g, ["5-6", "4-5", "3-4", "2-3", "1-2", "0-1", "0-6", "0-0"],
                         ["1-6", "1-3", "3-5", "2-5", "2-4", "4-6", "3-6", "2-6"])
    g.start_deal(hands, bazaar)
    mine = [("5-6", "seat0"), ("0-6", "mexican"), ("4-5", "seat0"), ("3-4", "seat0"), ("2-3", "seat0"),
            ("1-2", "seat0"), ("0-1", "seat0")]
    theirs = [("1-6", "seat1"), ("1-3", "seat1"), ("3-5", "seat1"), ("2-5", "seat1"), ("2-4", "seat1"),
              ("4-6", "seat1"), ("3-6", "seat1")]
    for a, b in zip(mine, theirs):
        place(g, *a)
        place(g, *b)
    ev = place(g, "0-0", "seat0")
    assert ev == [("placed", 0, "0-0", "seat0"), ("deal_end", "domino", [0, 8], [0, 8])]
    assert g.deal_over() and g.to_move() is None and g.legal() == []
    assert g.open_double == "seat0"  # uncovered, and nobody was asked to cover it
    assert g.next_leader() == 1  # MT-1: seat 1 starts the 5-5 round


def test_round_blocked_with_markers_ignored():
    """MT-11: with the bazaar empty, a seat holding a tile that matches a train end closed to it
    passes and the round goes on (markers regardless: a marker could still open it); the round
    ends blocked the moment no held tile matches any train end, though markers lie on every
    seat's train.  Here the last placement covers a hanging double (MT-8)."""
    g = RefGame("mexican_train", 2)
    hands = [["1-1", "2-3", "4-6", "5-5", "0-6", "1-4", "2-5", "2-2"],
             ["4-5", "3-6", "1-2", "0-5", "1-5", "3-4", "1-6", "2-6"]]
    bazaar = ["0-4", "3-3", "0-2", "1-3", "5-6", "4-4", "0-0", "0-1", "3-5", "2-4", "0-3"]
    assert g.start_deal(hands, bazaar) == []
    for tile, train in [("0-6", "seat0"), ("1-6", "mexican"), ("1-4", "mexican"), ("4-5", "mexican"),
                        ("2-5", "mexican"), ("2-6", "mexican"), ("4-6", "mexican"), ("3-6", "seat1"),
                        ("0-4", "seat0"), ("3-4", "seat1"), ("4-4", "seat0"), ("2-4", "seat0")]:
        place(g, tile, train)
    assert len(g.bazaar) == 1 and g.to_move() == 0
    ev = place(g, "2-3", "seat0")
    assert ev == [("placed", 0, "2-3", "seat0"), ("marker", 0, False), ("drew", 1, "0-3"), ("passed", 1)]
    assert g.bazaar == [] and g.to_move() == 0
    ev = place(g, "3-5", "seat0")
    # seat 1 holds 0-5 and 1-5, which match seat 0's 5, but seat 0's train has no marker
    assert ev == [("placed", 0, "3-5", "seat0"), ("passed", 1)]
    assert not g.deal_over() and {"0-5", "1-5"} <= set(g.hands[1])
    ev = place(g, "5-5", "seat0")
    assert ev == [("placed", 0, "5-5", "seat0"), ("passed", 0), ("marker", 0, True)]
    assert g.to_move() == 1 and g.open_double == "seat0"
    assert g.legal() == [("place", "0-5", "seat0"), ("place", "1-5", "seat0"), ("place", "5-6", "seat0")]
    ev = place(g, "5-6", "seat0")
    # the ends are now 6 (seat 0), 4 (seat 1), 4 (Mexican); no held tile shows 4 or 6
    assert g.trains["seat0"].marker and g.trains["seat1"].marker
    assert ev == [("placed", 1, "5-6", "seat0"), ("deal_end", "fish", [16, 20], [16, 20])]
    assert g.last_placer == 1


def test_round_blocked_by_a_double_nobody_can_cover():
    """MT-11: a hanging double that nothing held covers, with the bazaar empty, blocks the
    round at once, though other trains could still take tiles."""
    rng = random.Random(14548)
    found = 0
    for _ in range(400):
        rest = [t for t in TILES if t != "6-6"]
        rng.shuffle(rest)
        g = RefGame("mexican_train", 2)
        g.start_deal([rest[:8], rest[8:16]], rest[16:])
        while not g.deal_over():
            g.play(rng.choice(g.legal()))
        if g.ended == "fish" and g.open_double is not None:
            v = g.trains[g.open_double].shows
            assert not any(v in halves(t) for h in g.hands for t in h) and not g.bazaar
            found += 1
    assert found


def test_seven_rounds_lowest_total_wins_and_ties_share():
    """MT-13, MT-14: totals add each round's hand pips; the lowest total wins, ties share."""
    for seed in range(40):
        rng = random.Random(seed)
        n = 2 + seed % 3
        g = RefGame("mexican_train", n)
        total = [0] * n
        while not g.game_over():
            size = g.hand_size
            rest = [t for t in TILES if t != station(g.rounds_played)]
            rng.shuffle(rest)
            g.start_deal([rest[i * size:(i + 1) * size] for i in range(n)], rest[n * size:])
            ev: list[tuple] = []
            while not g.deal_over():
                ev = g.play(rng.choice(g.legal()))
            _, _, wrote, totals = ev[-1]
            assert wrote == [sum(pips(t) for t in h) for h in g.hands]
            total = [a + b for a, b in zip(total, wrote)]
            assert totals == total == g.totals()
        assert g.rounds_played == 7
        assert g.winners() == [s for s in range(n) if total[s] == min(total)]
    # ties share the win: the last round played twice, the second time from totals that make
    # seats 0 and 1 finish level
    rest = [t for t in TILES if t != "0-0"]
    wrote = None
    for _ in range(2):
        g = RefGame("mexican_train", 3)
        g.rounds_played = 6
        g.start_deal([rest[:7], rest[7:14], rest[14:21]], rest[21:])
        if wrote is not None:
            g._totals = [100 - wrote[0], 100 - wrote[1], 101 - wrote[2]]
        while not g.deal_over():
            ev = g.play(g.legal()[0])
        wrote = ev[-1][2]
    assert g.game_over() and g.totals() == [100, 100, 101]
    assert g.winners() == [0, 1]


# -- random playouts: what holds in every round --------------------------------------------------


def check_round(players: int, k: int, rng: random.Random) -> None:
    """Round k of a game, random moves; every invariant checked after every move."""
    g = RefGame("mexican_train", players)
    g.rounds_played = k  # as after k rounds
    n = players
    size = g.hand_size
    rest = [t for t in TILES if t != station(k)]
    rng.shuffle(rest)
    events = g.start_deal([rest[i * size:(i + 1) * size] for i in range(n)], rest[n * size:])
    marker = [False] * n
    pending_cover: str | None = None  # the train of a double that must be covered next
    while True:
        for e in events:
            if e[0] == "placed":
                _, s, tile, train = e
                if pending_cover is not None:
                    assert train == pending_cover, (e, pending_cover)  # MT-7, MT-8
                    pending_cover = None
                elif train not in (MEXICAN, train_of(s)):
                    assert marker[int(train[4:])], e  # MT-4: another seat's train needs a marker
                if is_double(tile):
                    pending_cover = train
                if train == train_of(s):
                    marker[s] = False  # MT-10
            elif e[0] == "passed":
                marker[e[1]] = True  # MT-6
            elif e[0] == "marker":
                assert e[2] == marker[e[1]], e
        assert [g.trains[train_of(s)].marker for s in range(n)] == marker
        on_table = [t for tr in g.trains.values() for t in tr.tiles]
        assert sorted(on_table + [t for h in g.hands for t in h] + g.bazaar + [station(k)]) == sorted(TILES)
        # MT-5: one draw, then that seat places the drawn tile or passes at once
        for i, e in enumerate(events):
            if e[0] == "drew":
                after = events[i + 1:]
                if after:
                    assert after[0] == ("passed", e[1]), events
                else:
                    assert g.to_move() == e[1] and {m[1] for m in g.legal()} == {e[2]}, (events, g.legal())
        if g.deal_over():
            break
        legal = g.legal()
        assert legal and legal == sorted(set(legal))
        assert all(len(m) == 3 and m[1] in g.hands[g.to_move()] for m in legal)
        bad = ("place", rng.choice(TILES), rng.choice([MEXICAN, *(train_of(s) for s in range(n))]))
        if bad not in legal:
            with pytest.raises(ValueError):
                g.play(bad)
        events = g.play(rng.choice(legal))
    end = events[-1]
    assert end[0] == "deal_end" and sum(e[0] == "deal_end" for e in events) == 1
    if end[1] == "domino":
        assert sum(not h for h in g.hands) == 1
    else:
        assert end[1] == "fish" and not g.bazaar and all(g.hands)
        ends = {tr.shows for tr in g.trains.values()}
        if g.open_double is not None:
            ends = {g.trains[g.open_double].shows}
        assert not any(v in ends for h in g.hands for t in h for v in halves(t))
    assert end[2] == [sum(pips(t) for t in h) for h in g.hands]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_playouts_keep_the_invariants(players):
    rng = random.Random(players)
    for i in range(210):
        check_round(players, i % 7, rng)
