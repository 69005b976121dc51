"""Deals consistent with what a seat knows (referee/engine/sampling.py, issue 26).

The property tests play a random part of a random deal of every game, build the seat to move's
:class:`Knowledge` from what the engine would tell it (its hand as dealt, the events through
``seen_by``, its legal moves), and check every sampled deal against it twice over: by hand —
the counts, the seat's own tiles, every tile seen placed coming from the hand or the draws of
the seat that placed it, and the voids (a seat that passed or drew held nothing that fitted, nor
did the tiles it drew before the one that fitted) — and by replaying the deal's decisions on it
with the engine, which must give the seat exactly the same events and legal moves.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import tiles

from referee.engine import TERMINAL, Deal, Drew, Passed, Placed, check_deal, variant
from referee.engine.core.layout import Cross, Line, Trains
from referee.engine.core.line import Turned
from referee.engine.core.tiles import LOW, SUIT, mask_of
from referee.engine.core.view import seen_by, view
from referee.engine.sampling import Knowledge, Sampler, fork_game, replay, sample_deal, sample_state, table_game

#: Every game, with the player counts and options that change what a seat can know.
GAMES = [("sport", 4, {}), ("kozel", 4, {}), ("kozel", 3, {}), ("kozel", 2, {}), ("draw", 2, {}), ("draw", 4, {}),
         ("block", 3, {}), ("club", 2, {}), ("club", 4, {}), ("sea_kozel", 4, {}), ("sea_kozel", 2, {}),
         ("osel", 4, {}), ("osel", 3, {}), ("telephone", 4, {}), ("telephone", 2, {}), ("muggins", 3, {}),
         ("general", 4, {}), ("blitz", 4, {}), ("mexican_train", 4, {}), ("mexican_train", 2, {}), ("kolbasa", 2, {})]


#: The cross games, and whether the first double opens ``up`` and ``down`` at once: this file's own
#: reading of RULES.md, to check the sampler (which asks the game) by hand.
CROSS_GAMES = {"osel": True, "telephone": False, "muggins": False}

def knowledge_of(game, state, deal: Deal, seat: int) -> Knowledge:
    """What the engine tells ``seat``, as the sampler takes it."""
    return Knowledge(
        variant=game.variant.id, players=game.players, seat=seat, leader=state.leader,
        hand=() if game.variant.id == "kolbasa" else tuple(deal.hands[seat]),
        history=tuple(seen_by(e, seat) for e in state.history), options=dict(game.options),
        legal=tuple(state.legal_plays()), scores=tuple(game.totals), deal_number=game.played, special=game.special(),
    )


def position(spec, seed: int, stop: float):
    """A decision part-way through a random deal some deals into a random game: (game, deal,
    state), the state with a seat to move."""
    vid, players, options = spec
    rnd = random.Random(seed)
    v = variant(vid)
    game = v.new_game(players, options)
    index = rnd.randrange(1000) * 7  # mexican_train's deal i is round i mod 7, from 6-6
    from referee.engine import deal_from_seed

    while True:
        deal = deal_from_seed(seed, index, v.shape(players, options))
        index += 1
        state = game.start(deal)
        if state is None:
            continue
        moves = 0
        while state.to_move() != TERMINAL and (moves < 2 or rnd.random() > stop):
            state.apply(rnd.choice(state.legal_plays()))
            moves += 1
        if state.to_move() != TERMINAL and (rnd.random() < 0.6 or game.played >= 3):
            return game, deal, state
        while state.to_move() != TERMINAL:
            state.apply(rnd.choice(state.legal_plays()))
        game.finish(state)
        if game.outcome() is not None:
            game = v.new_game(players, options)


def fits_now(vid: str, players: int, history, upto: int, seat: int) -> int:
    """The tiles ``seat`` could place after the first ``upto`` events, from the layout alone:
    worked out here again, with the engine's layout classes, not the sampler's."""
    if vid == "mexican_train":
        station = history[0].tile
        lay = Trains(players, LOW[station])
        markers, open_train = 0, -1
        for e in history[1:upto]:
            if type(e) is Placed:
                lay.place(e.tile, e.end)
                if e.end == e.seat:
                    markers &= ~(1 << e.seat)
                open_train = e.end if LOW[e.tile] == LOW[e.tile] and e.tile in tiles("0-0", "1-1", "2-2", "3-3", "4-4", "5-5", "6-6") else -1
            elif type(e) is Passed:
                markers |= 1 << e.seat
        if open_train >= 0:
            return SUIT[lay.ends[open_train]]
        trains = [t for t in range(players + 1) if t in (seat, players) or markers >> t & 1]
        m = 0
        for t in trains:
            m |= SUIT[lay.ends[t]]
        return m
    lay = Cross(CROSS_GAMES[vid]) if vid in CROSS_GAMES else Line()
    for e in history[:upto]:
        if type(e) is Placed:
            lay.place(e.tile, e.end, e.closed)
    m = 0
    for v in lay.ends:
        if v >= 0:
            m |= SUIT[v]
    return m


def check_by_hand(k: Knowledge, game, deal: Deal) -> None:
    """The sampled ``deal`` against ``k``, event by event, without the engine's deal states."""
    check_deal(deal, game.shape)
    if k.variant == "kolbasa":
        return
    assert deal.hands[k.seat] == tuple(sorted(k.hand)) or sorted(deal.hands[k.seat]) == sorted(k.hand)
    hands = [set(h) for h in deal.hands]
    bazaar = list(deal.undealt)
    drawn = 0
    history = k.history
    for i, e in enumerate(history):
        if type(e) is Placed:
            if e.forced and e.end is None and k.variant == "mexican_train":
                continue  # the station is in no hand
            assert e.tile in hands[e.seat], f"{e} from a hand that does not hold it"
            hands[e.seat].discard(e.tile)
        elif type(e) is Drew:
            fit = fits_now(k.variant, k.players, history, i, e.seat)
            assert not mask_of(hands[e.seat]) & fit, f"seat {e.seat} drew holding a tile that fitted"
            got = bazaar[drawn : drawn + e.count]
            drawn += e.count
            assert len(got) == e.count
            if e.tiles:
                assert tuple(got) == e.tiles  # the seat's own draws, as it was told
            nxt = history[i + 1] if i + 1 < len(history) else None
            # the last tile drawn fitted when the drawer placed next (or is the seat, to move now)
            placed_next = type(nxt) is Placed and nxt.seat == e.seat or nxt is None and e.seat == k.seat
            assert not mask_of(got[:-1] if placed_next else got) & fit, "a tile drawn before the last one fitted"
            hands[e.seat] |= set(got)
        elif type(e) is Passed:
            fit = fits_now(k.variant, k.players, history, i, e.seat)
            assert not mask_of(hands[e.seat]) & fit, f"seat {e.seat} passed holding a tile that fitted"
    counts = [len(h) for h in hands]
    want = [0] * k.players
    for e in history:  # the counts the seat was told: dealt, plus draws, less placements
        if type(e) is Drew:
            want[e.seat] += e.count
        elif type(e) is Placed and not (k.variant == "mexican_train" and e.end is None):
            want[e.seat] -= 1
    assert counts == [game.shape.hand_size + w for w in want]


@settings(max_examples=120, deadline=None)
@given(spec=st.sampled_from(GAMES), seed=st.integers(0, 2**32), stop=st.floats(0.02, 0.4), rng_seed=st.integers(0, 2**32))
def test_sampled_deals_agree_with_everything_the_seat_knows(spec, seed, stop, rng_seed):
    game, deal, state = position(spec, seed, stop)
    seat = state.to_move()
    k = knowledge_of(game, state, deal, seat)
    table = table_game(k)
    rng = random.Random(rng_seed)
    replayed = 0
    for _ in range(4):
        sampled = sample_deal(k, rng, table)
        assert sampled is not None, "the true deal agrees with the knowledge, so some deal does"
        check_by_hand(k, table, sampled)
        again = replay(k, sampled, table)
        if again is None:
            assert k.variant == "sea_kozel", "only sea_kozel's write-off offer is left to the replay"
            continue
        replayed += 1
        assert view(again, seat) == view(state, seat) if k.variant not in ("mexican_train", "kolbasa") else True
        assert again.to_move() == seat and again.legal_plays() == state.legal_plays()
        assert [seen_by(e, seat) for e in again.history] == list(k.history)
        assert [h.bit_count() for h in again.hands] == [h.bit_count() for h in state.hands]
        assert again.bazaar_left() == state.bazaar_left()
        assert again.hands[seat] == state.hands[seat] or k.variant == "kolbasa"
    assert replayed or k.variant == "sea_kozel"


@pytest.mark.parametrize("spec", GAMES, ids=[f"{g}-{p}" for g, p, _ in GAMES])
def test_the_true_deal_replays_and_sample_state_finds_one(spec):
    """The real deal always replays to the seat's knowledge (the replay is no stricter than the
    rules), and :func:`sample_state` finds a state at the seat's decision."""
    for seed in range(6):
        game, deal, state = position(spec, seed, 0.15)
        seat = state.to_move()
        k = knowledge_of(game, state, deal, seat)
        table = table_game(k)
        again = replay(k, deal, table)
        assert again is not None and again.hands == state.hands and again.history == state.history
        found = sample_state(k, random.Random(seed), table)
        assert found is not None and found.to_move() == seat and found.legal_plays() == state.legal_plays()


def test_a_sampler_reads_the_events_once_and_draws_what_sample_deal_draws():
    """Sampler is sample_deal with the events read once: the same generator, the same deals."""
    for spec in (("sport", 4, {}), ("draw", 2, {}), ("mexican_train", 3, {}), ("kolbasa", 2, {})):
        game, deal, state = position(spec, 8, 0.2)
        k = knowledge_of(game, state, deal, state.to_move())
        sampler = Sampler(k)
        one, two = random.Random(4), random.Random(4)
        assert [sampler.deal(one) for _ in range(5)] == [sample_deal(k, two) for _ in range(5)]


def test_sampling_is_reproducible_from_the_generator():
    game, deal, state = position(("draw", 3, {}), 5, 0.1)
    k = knowledge_of(game, state, deal, state.to_move())
    first = [sample_deal(k, random.Random(9)) for _ in range(3)]
    assert first == [sample_deal(k, random.Random(9)) for _ in range(3)]
    assert len({sample_deal(k, random.Random(s)) for s in range(20)}) > 1  # and it does vary


def sport_knowledge(history, hand) -> Knowledge:
    return Knowledge(variant="sport", players=4, seat=0, leader=0, hand=tiles(*hand), history=tuple(history),
                     options={"lone_doubles": False})


def test_a_pass_is_a_void_no_sample_contradicts():
    """Seat 0 leads 3-5, seat 1 plays 5-6 on the right; seat 2 passes with the ends at 3 and 6,
    so it holds no 3 and no 6, in any sampled deal; seat 0's own tiles are never given away."""
    hand = ("3-5", "0-0", "0-1", "1-1", "1-2", "2-2", "4-4")
    history = [Placed(0, tiles("3-5")[0], None), Placed(1, tiles("5-6")[0], 1), Passed(2)]
    k = sport_knowledge(history, hand)
    rng = random.Random(1)
    threes_and_sixes = SUIT[3] | SUIT[6]
    for _ in range(200):
        deal = sample_deal(k, rng)
        assert deal is not None
        assert not deal.masks[2] & threes_and_sixes
        assert deal.hands[0] == tuple(sorted(tiles(*hand)))
        assert tiles("5-6")[0] in deal.hands[1]


def test_a_draw_before_a_fit_is_a_void_for_the_tiles_drawn_before_it():
    """draw for two: seat 1 draws three tiles and places the third at once: its hand as dealt and
    the first two tiles drawn hold nothing that fitted the ends then."""
    hand = ("0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6")
    history = [Placed(0, tiles("0-6")[0], None), Drew(1, (), 3), Placed(1, tiles("6-6")[0], 1)]
    k = Knowledge(variant="draw", players=2, seat=0, leader=0, hand=tiles(*hand), history=tuple(history))
    rng = random.Random(2)
    fit = SUIT[0] | SUIT[6]
    for _ in range(200):
        deal = sample_deal(k, rng)
        assert deal is not None
        assert not deal.masks[1] & fit
        assert not mask_of(deal.undealt[:2]) & fit and deal.undealt[2] == tiles("6-6")[0]


def test_contradictory_knowledge_gives_no_deal():
    """A tile seat 0 holds placed by seat 1 cannot come from any deal."""
    hand = ("3-5", "0-0", "0-1", "1-1", "1-2", "2-2", "4-4")
    history = [Placed(0, tiles("3-5")[0], None), Placed(1, tiles("0-5")[0], 1), Placed(2, tiles("0-0")[0], 1)]
    k = sport_knowledge(history, hand)
    assert sample_deal(k, random.Random(3)) is None


def test_a_sea_kozel_fisherman_deciding_gets_a_deal_where_the_write_off_is_offered():
    """SK-12: write_off and decline are offered only when the fisherman's side holds more than
    the other and 25 or more; the sampled state must offer them too (the replay sees to it)."""
    from referee.engine import deal_from_seed

    v = variant("sea_kozel")
    rnd = random.Random(0)
    for index in range(2000):
        game = v.new_game(2)
        deal = deal_from_seed(1, index, v.shape(2))
        state = game.start(deal)
        while state.to_move() != TERMINAL and not state.deciding:
            state.apply(rnd.choice(state.legal_plays()))
        if state.deciding:
            break
    else:
        pytest.fail("no write-off decision came up in 2,000 random first deals")
    k = knowledge_of(game, state, deal, state.to_move())
    found = sample_state(k, random.Random(1), table_game(k), tries=200)
    assert found is not None and found.deciding and found.legal_plays() == state.legal_plays()


def test_kolbasa_rows_keep_every_tile_turned_up_where_it_was():
    game, deal, state = position(("kolbasa", 2, {}), 11, 0.05)
    seat = state.to_move()
    k = knowledge_of(game, state, deal, seat)
    turned = [e for e in k.history if type(e) is Turned]
    rng = random.Random(4)
    for _ in range(20):
        rows = sample_deal(k, rng)
        assert rows is not None
        for s in range(2):
            mine = [e.tile for e in turned if e.seat == s]
            # the dealt block is turned from the right: its last tiles are the first turned up
            dealt = deal.hands[s]
            k_turned = min(len(mine), 14)
            assert rows.hands[s][14 - k_turned :] == dealt[14 - k_turned :]
        assert replay(k, rows, table_game(k)) is not None


def test_a_forked_game_scores_a_deal_without_touching_the_table_game():
    game, deal, state = position(("kozel", 4, {"rule13": "hang"}), 3, 0.1)
    k = knowledge_of(game, state, deal, state.to_move())
    table = table_game(k)
    before = (list(table.totals), table.played, list(table.rule13.pending), table.carry.amount)
    s = state.copy()
    while s.to_move() != TERMINAL:
        s.apply(s.legal_plays()[0])
    fork = fork_game(table)
    fork.finish(s)
    assert (list(table.totals), table.played, list(table.rule13.pending), table.carry.amount) == before
    assert fork.played == table.played + 1
