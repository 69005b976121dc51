"""mexican_train (RULES.md §3, §7 MT-1…MT-15): worked examples played through the engine, the
deal shape, the seven-round game, and random playouts checked against an independent reading.

The worked examples build a round from hand-picked hands and bazaar on the 6-6 station (two
players: train 0, train 1, and the Mexican train is index 2) and play it move by move.
"""

from __future__ import annotations

import random

import pytest
from support import tiles

from referee.engine import (
    DOMINO,
    FISH,
    TERMINAL,
    BadDeal,
    BadOption,
    Deal,
    Drew,
    IllegalPlay,
    Passed,
    Placed,
    deal_from_seed,
    format_deal_line,
    parse_deal_line,
    parse_tile,
    refereed_variant,
    tile_name,
    variant,
)
from referee.engine.core.deal import station_of
from referee.engine.core.trains import TrainDeal, train_play

T = parse_tile
SS = T("6-6")
MEX = 2  # the Mexican train with two players


def round_of(hands: list[tuple[str, ...]], bazaar: tuple[str, ...] = (), leader: int = 0, station: int = SS) -> TrainDeal:
    return TrainDeal(Deal(tuple(tiles(*h) for h in hands), tiles(*bazaar)), leader=leader, station=station)


def mv(name: str, train: int):
    return train_play(T(name), train)


# -- worked examples -----------------------------------------------------------------------------


def test_a_double_covered_by_its_player():
    r = round_of([("3-6", "3-3", "1-3", "0-0"), ("5-6", "2-5", "0-1", "1-1")])
    assert r.history == [Placed(0, SS, None, True)] and r.ends == [6, 6, 6]
    r.push(mv("3-6", 0), 0)
    r.push(mv("5-6", 1), 1)
    r.push(mv("3-3", 0), 0)
    # MT-7: the same seat moves again, and the only moves cover the double on its train.
    assert r.to_move() == 0 and r.open_train == 0
    assert r.legal_plays() == [mv("1-3", 0)]
    with pytest.raises(IllegalPlay) as e:
        r.push(mv("0-0", MEX), 0)
    assert e.value.reason == IllegalPlay.BAD_END and "3-3 on seat0 must be covered first" in str(e.value)
    r.push(mv("1-3", 0), 0)
    assert r.open_train == -1 and r.to_move() == 1 and r.ends == [1, 5, 6]


def test_a_double_left_hanging_is_covered_by_the_next_player():
    r = round_of([("3-6", "3-3", "0-0", "0-5"), ("5-6", "3-5", "2-4", "1-1")], bazaar=("2-2", "4-4"))
    r.push(mv("3-6", 0), 0)
    r.push(mv("5-6", 1), 1)
    k = len(r.history)
    r.push(mv("3-3", 0), 0)
    # Seat 0 cannot cover: one draw (2-2, no 3), a pass with a marker, and the double hangs.
    assert r.history[k + 1 :] == [Drew(0, (T("2-2"),), 1), Passed(0)]
    assert r.markers == 0b01 and r.open_train == 0 and r.to_move() == 1
    # Seat 1 must cover it before anything else, on seat 0's train (opened for this one tile),
    # although 5-something would fit its own train.
    assert r.legal_plays() == [mv("3-5", 0)]
    r.push(mv("3-5", 0), 1)
    assert r.open_train == -1 and r.ends == [5, 5, 6]
    assert r.markers == 0b01  # a cover by another seat does not lift seat 0's marker (MT-10)
    assert r.to_move() == 0


def test_a_pass_leaves_a_marker_and_the_owners_play_removes_it():
    r = round_of([("2-6", "1-1", "0-5"), ("1-6", "3-4", "1-3", "2-2")], bazaar=("4-4", "2-3"))
    r.push(mv("2-6", 0), 0)  # train 0 shows 2
    r.push(mv("1-6", 1), 1)  # train 1 shows 1
    # Seat 0 (1-1, 0-5) has nothing for its train (2) or the Mexican (6); 1-1 would fit train 1,
    # which carries no marker.  It draws 4-4, which fits nowhere, and passes: a marker (MT-6).
    assert r.history[-2:] == [Drew(0, (T("4-4"),), 1), Passed(0)]
    assert r.markers == 0b01 and r.to_move() == 1
    # Seat 0's train is now open to seat 1 too.
    assert r.legal_plays() == [mv("1-3", 1), mv("2-2", 0)]
    r.push(mv("1-3", 1), 1)  # train 1 shows 3
    # Seat 0 draws 2-3: it fits its own train (and train 1's 3, not open to it), so it must play
    # it there now (MT-5).
    assert r.history[-1] == Drew(0, (T("2-3"),), 1) and r.to_move() == 0
    assert r.legal_plays() == [mv("2-3", 0)]
    with pytest.raises(IllegalPlay) as e:
        r.push(mv("2-3", 1), 0)
    assert e.value.reason == IllegalPlay.BAD_END and "seat1 is not open to you" in str(e.value)
    r.push(mv("2-3", 0), 0)
    assert r.markers == 0  # the owner's play on its own train removes the marker (MT-10)
    assert r.to_move() == 1 and r.legal_plays() == [mv("3-4", 1)]  # train 0 is closed to seat 1 again


def test_a_double_on_a_marked_train_that_nobody_can_cover_blocks_the_round():
    r = round_of([("2-6", "1-5", "0-0", "0-3"), ("4-6", "1-4", "2-2", "0-5")], bazaar=("3-3",))
    r.push(mv("2-6", 0), 0)  # train 0 shows 2
    r.push(mv("4-6", 1), 1)  # train 1 shows 4
    assert r.history[-2:] == [Drew(0, (T("3-3"),), 1), Passed(0)] and r.markers == 0b01
    # Another seat may lay a double on a marked train.
    assert r.legal_plays() == [mv("1-4", 1), mv("2-2", 0)]
    r.push(mv("1-4", 1), 1)  # train 1 shows 1
    assert r.history[-1] == Passed(0) and r.to_move() == 1  # bazaar empty: no draw
    assert r.legal_plays() == [mv("2-2", 0)]
    r.push(mv("2-2", 0), 1)
    # Nobody holds a 2 to cover it and the bazaar is empty: blocked at once (MT-11).
    assert r.end is not None and (r.end.reason, r.end.seat) == (FISH, 1) and r.open_train == 0
    assert r.history[-1] == Placed(1, T("2-2"), 0)


def test_going_out_on_a_double_ends_the_round_with_the_double_uncovered():
    r = round_of([("3-6", "3-3"), ("5-6", "2-5", "0-1")])
    r.push(mv("3-6", 0), 0)
    r.push(mv("5-6", 1), 1)
    r.push(mv("3-3", 0), 0)
    assert r.end is not None and (r.end.reason, r.end.seat) == (DOMINO, 0) and r.to_move() == TERMINAL
    assert r.open_train == 0  # MT-9: it stays uncovered


def test_a_blocked_round_ignores_markers():
    # The bazaar is empty.  Seat 1 holds 2-4, which fits only seat 0's train (2), and seat 0's
    # train carries no marker: the round is not blocked, because a marker could still open it.
    r = round_of([("2-6", "0-1", "1-1"), ("3-6", "2-4", "0-0")])
    r.push(mv("2-6", 0), 0)  # train 0 shows 2
    r.push(mv("3-6", 1), 1)  # train 1 shows 3
    # Seat 0 (0-1, 1-1): nothing fits 2, 3 (no marker) or 6: a pass and a marker.
    assert r.history[-1] == Passed(0) and r.markers == 0b01 and r.end is None
    # Now seat 1 may play 2-4 on seat 0's marked train.
    assert r.legal_plays() == [mv("2-4", 0)]
    r.push(mv("2-4", 0), 1)  # train 0 shows 4
    # Nobody holds a 4, a 3 or a 6 (0-1, 1-1 against 0-0): blocked at once, markers or not.
    assert r.end is not None and (r.end.reason, r.end.seat) == (FISH, 1)
    assert r.history[-1] == Placed(1, T("2-4"), 0)


def test_the_starter_draws_and_passes_like_anyone_else():
    # MT-15: seat 1 starts round 1 of two players; it holds nothing for 5, draws 0-1, passes.
    r = round_of([("5-1", "0-0"), ("2-3", "3-4")], bazaar=("0-1",), leader=1, station=T("5-5"))
    assert r.history == [Placed(1, T("5-5"), None, True), Drew(1, (T("0-1"),), 1), Passed(1)]
    assert r.to_move() == 0 and r.markers == 0b10


# -- the game ------------------------------------------------------------------------------------


def test_seven_rounds_station_and_starter_rotate_and_every_player_writes_their_own_hand():
    v = variant("mexican_train")
    for n, size in ((2, 8), (3, 7), (4, 6)):
        shape = v.shape(n)
        assert (shape.hand_size, shape.undealt_count) == (size, 27 - n * size)
        game = v.new_game(n)
        rng = random.Random(n)
        for k in range(7):
            deal = deal_from_seed(5, k, shape)
            assert station_of(deal) == T(f"{6 - k}-{6 - k}")
            state = game.start(deal)
            assert state is not None and state.leader == k % n and state.lead_tile == station_of(deal)
            while state.to_move() != TERMINAL:
                state.apply(rng.choice(state.legal_plays()))
            rec = game.finish(state)
            assert rec.wrote == rec.values == tuple(sum(int(c) for t in h for c in tile_name(t).split("-")) for h in rec.hands)
        out = game.outcome()
        assert out is not None and game.played == 7
        low = min(game.totals)
        assert out.winners == tuple(s for s in range(n) if game.totals[s] == low)


def test_deals_list_27_tiles_and_a_wrong_station_is_refused():
    v = variant("mexican_train")
    shape = v.shape(2)
    line = format_deal_line(deal_from_seed(3, 1, shape), shape, 1)
    assert "5-5" not in line and parse_deal_line(line, shape) == deal_from_seed(3, 1, shape)
    with pytest.raises(BadDeal, match="every tile but one double"):
        parse_deal_line(line.replace('"0-1"', '"5-5"'), shape)
    game = v.new_game(2)
    with pytest.raises(BadDeal, match="round 0 puts 6-6 on the station, but this deal sets aside 5-5"):
        game.start(deal_from_seed(3, 1, shape))
    with pytest.raises(BadOption):
        v.new_game(5)
    with pytest.raises(BadOption):
        v.new_game(2, deals=6)


def test_the_referee_plays_mexican_train():
    assert refereed_variant("mexican_train").id == "mexican_train"


# -- random playouts against an independent reading of MT-3…MT-11 ---------------------------------


def _pairs() -> list[tuple[int, int]]:
    return [(a, b) for a in range(7) for b in range(a, 7)]


HALVES = _pairs()


class Reading:
    """Replays a round's history by RULES.md alone: train ends, markers, the open double."""

    def __init__(self, n: int, station: int) -> None:
        self.n = n
        self.ends = [HALVES[station][0]] * (n + 1)
        self.markers: set[int] = set()
        self.open: int | None = None

    def feed(self, e) -> None:
        if type(e) is Passed:
            self.markers.add(e.seat)
        elif type(e) is Placed and e.end is not None:
            a, b = HALVES[e.tile]
            v = self.ends[e.end]
            assert v in (a, b), f"{tile_name(e.tile)} placed on a train showing {v}"
            self.ends[e.end] = b if a == v else a
            if e.end == e.seat:
                self.markers.discard(e.seat)
            if self.open == e.end:
                self.open = None
            if a == b:
                self.open = e.end

    def trains_for(self, seat: int) -> list[int]:
        if self.open is not None:
            return [self.open]
        return [e for e in range(self.n + 1) if e in (seat, self.n) or e in self.markers]

    def legal(self, hand: list[int], seat: int) -> list[tuple[int, int]]:
        return sorted((t, e) for t in hand for e in self.trains_for(seat) if self.ends[e] in HALVES[t])

    def could_ever_place(self, hands: list[list[int]]) -> bool:
        ends = [self.ends[self.open]] if self.open is not None else self.ends
        return any(v in HALVES[t] for h in hands for t in h for v in ends)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_random_rounds_follow_the_independent_reading(n):
    v = variant("mexican_train")
    shape = v.shape(n)
    for seed in range(40):
        rng = random.Random(seed)
        deal = deal_from_seed(seed, seed % 7, shape)
        station = station_of(deal)
        assert station is not None
        r = TrainDeal(deal, leader=seed % n, station=station)
        reading = Reading(n, station)
        for e in r.history:
            reading.feed(e)
        seen = len(r.history)
        while True:
            hands = [[t for t in range(28) if h >> t & 1] for h in r.hands]
            assert r.all_tiles() == (1 << 28) - 1  # the 28 tiles are conserved
            assert sum(len(h) for h in hands) + r.bazaar_left() + sum(1 for e in r.history if type(e) is Placed) == 28
            if r.to_move() == TERMINAL:
                break
            seat = r.to_move()
            want = reading.legal(hands[seat], seat)
            assert [(p.tile, p.end) for p in r.legal_plays()] == want and want
            # Every (tile, train) pair not listed is refused by the checked path.
            for t in hands[seat][:3]:
                for e in range(n + 1):
                    if (t, e) not in want:
                        with pytest.raises(IllegalPlay):
                            r.check(train_play(t, e), seat)
            p = rng.choice(r.legal_plays())
            r.push(p, seat)
            # The automatic events after the move: draws of one tile, each followed by a pass or
            # by the drawer's move; passes only by seats that could not place.
            events = r.history[seen:]
            for i, e in enumerate(events):
                if type(e) is Drew:
                    assert e.count == 1
                elif type(e) is Passed:
                    drew = i > 0 and type(events[i - 1]) is Drew and events[i - 1].seat == e.seat
                    # a pass follows the passer's one draw, or finds the bazaar empty (MT-5, MT-6)
                    assert drew or r.bazaar_left() == 0
                reading.feed(e)
            seen = len(r.history)
        assert r.end is not None
        hands = [[t for t in range(28) if h >> t & 1] for h in r.hands]
        if r.end.reason == DOMINO:
            assert not hands[r.end.seat]
        else:
            assert r.end.reason == FISH and r.bazaar_left() == 0 and not reading.could_ever_place(hands)
            placers = [e.seat for e in r.history if type(e) is Placed and e.end is not None]
            assert r.end.seat == (placers[-1] if placers else -1)


def test_a_fault_makes_the_faulting_seat_write_every_pip_held():
    v = variant("mexican_train")
    game = v.new_game(4)
    state = game.start(deal_from_seed(1, 0, v.shape(4)))
    assert state is not None
    seat = state.to_move()
    assert str(train_play(T("1-2"), 4)) == "1-2 end 4"  # the Mexican train of four players
    state.forfeit(seat)
    rec = game.finish(state)
    assert rec.wrote == tuple(sum(rec.values) if s == seat else 0 for s in range(4))
