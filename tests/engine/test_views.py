"""Per-seat views (referee/engine/core/view.py, RULES.md §1 "hand", §2.4, §4): a view never holds a
tile its seat may not know.  The property test swaps every hidden tile (other hands, the bazaar,
the sleeping tiles, other players' drawn tiles) for another hidden tile, keeping every count, and
the view must not change."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine import TERMINAL, Deal, Drew, Placed, parse_tile, variant
from referee.engine.core.view import view

GAMES = [("sport", 4, {}), ("kozel", 4, {}), ("kozel", 4, {"teams": "none"}), ("kozel", 2, {}), ("kozel", 3, {}),
         ("draw", 2, {}), ("draw", 3, {}), ("draw", 4, {}), ("block", 2, {}), ("block", 3, {}), ("block", 4, {}),
         ("club", 2, {}), ("club", 3, {}), ("club", 4, {})]


def bits(mask: int) -> list[int]:
    return [t for t in range(28) if mask >> t & 1]


def play_to(game_spec, seed: int, stop: float):
    """A state part-way through a random deal (of a random number of deals into the game)."""
    vid, players, options = game_spec
    rnd = random.Random(seed)
    game = variant(vid).new_game(players, options)
    k = game.shape.hand_size
    while True:
        order = list(range(28))
        rnd.shuffle(order)
        deal = Deal(tuple(tuple(order[s * k : (s + 1) * k]) for s in range(players)), tuple(order[players * k :]))
        state = game.start(deal)
        if state is None:
            continue
        moves = 0
        while state.to_move() != TERMINAL and (moves < 3 or rnd.random() > stop):
            state.apply(rnd.choice(state.legal_plays()))
            moves += 1
        if state.to_move() != TERMINAL or rnd.random() < 0.2:
            return state
        game.finish(state)
        if game.outcome() is not None:
            return state


def hidden_from(state, seat: int) -> list[int]:
    h = 0
    for s, hand in enumerate(state.hands):
        if s != seat:
            h |= hand
    for t in state.bazaar[state.drawn :]:
        h |= 1 << t
    h |= state.sleeping
    return bits(h)


def swap_hidden(state, seat: int, rnd: random.Random):
    """A copy of ``state`` with the tiles ``seat`` cannot see permuted among themselves."""
    hidden = hidden_from(state, seat)
    image = hidden[:]
    rnd.shuffle(image)
    pi = dict(zip(hidden, image))

    def m(t: int) -> int:
        return pi.get(t, t)

    def mm(mask: int) -> int:
        out = 0
        for t in bits(mask):
            out |= 1 << m(t)
        return out

    alt = state.copy()
    alt.hands = [h if s == seat else mm(h) for s, h in enumerate(state.hands)]
    alt.bazaar = tuple(m(t) for t in state.bazaar)
    alt.sleeping = mm(state.sleeping)
    alt.history = [
        Drew(e.seat, tuple(m(t) for t in e.tiles), e.count) if type(e) is Drew and e.seat != seat else e
        for e in state.history
    ]
    # still a partition of the 28 tiles
    parts = [t for h in alt.hands for t in bits(h)] + list(alt.bazaar[alt.drawn :]) + bits(alt.sleeping)
    parts += [e.tile for e in alt.history if type(e) is Placed]
    assert sorted(parts) == list(range(28))
    changed = alt.hands != state.hands or alt.bazaar != state.bazaar or alt.sleeping != state.sleeping
    return alt, changed


@settings(max_examples=250, deadline=None)
@given(spec=st.sampled_from(GAMES), seed=st.integers(0, 2**32), stop=st.floats(0.0, 0.5), swap_seed=st.integers(0, 2**32))
def test_view_does_not_depend_on_hidden_tiles(spec, seed, stop, swap_seed):
    state = play_to(spec, seed, stop)
    rnd = random.Random(swap_seed)
    for seat in range(state.n):
        v = view(state, seat)
        for _ in range(2):
            alt, _changed = swap_hidden(state, seat, rnd)
            assert view(alt, seat) == v


def test_swaps_really_move_hidden_tiles():
    """The property above has teeth: most swaps put hidden tiles in other places."""
    rnd = random.Random(0)
    changed = 0
    for i, spec in enumerate(GAMES * 3):
        state = play_to(spec, i, 0.2)
        for seat in range(state.n):
            alt, moved = swap_hidden(state, seat, rnd)
            assert view(alt, seat) == view(state, seat)
            changed += moved
    assert changed > len(GAMES) * 3 * 2


@settings(max_examples=150, deadline=None)
@given(spec=st.sampled_from(GAMES), seed=st.integers(0, 2**32), stop=st.floats(0.0, 0.5))
def test_view_holds_only_known_tiles(spec, seed, stop):
    state = play_to(spec, seed, stop)
    layout = {e.tile for e in state.history if type(e) is Placed}
    for seat in range(state.n):
        v = view(state, seat)
        own = set(bits(state.hands[seat]))
        drawn_by_me = {t for e in state.history if type(e) is Drew and e.seat == seat for t in e.tiles}
        known = own | layout | drawn_by_me
        assert set(v.hand) == own
        assert v.counts == tuple(h.bit_count() for h in state.hands)
        assert v.bazaar == len(state.bazaar) - state.drawn
        assert v.to_move == state.to_move()
        assert v.ends == tuple(state.ends)
        assert len(v.history) == len(state.history)
        for e, seen in zip(state.history, v.history):
            if type(e) is Drew:
                assert seen.seat == e.seat and seen.count == e.count == len(e.tiles)
                assert seen.tiles == (e.tiles if e.seat == seat else ())
                assert set(seen.tiles) <= known
            else:
                assert seen == e
        if state.to_move() == seat:
            assert list(v.legal) == state.legal_plays()
            assert {p.tile for p in v.legal} <= own
        else:
            assert v.legal == ()
        assert set(v.hand) <= known


def test_other_players_draws_show_only_the_count():
    T = parse_tile
    names = [("6-6", "0-0", "1-1", "2-2", "3-3", "4-4", "5-5"), ("0-3", "0-4", "0-5", "1-2", "1-3", "1-4", "1-5")]
    bazaar = ("0-1", "0-2", "5-6", "0-6", "1-6", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5", "3-6", "4-5", "4-6")
    deal = Deal(tuple(tuple(T(n) for n in h) for h in names), tuple(T(n) for n in bazaar))
    state = variant("draw").new_game(2).start(deal)
    mine = view(state, 1).history[1]
    theirs = view(state, 0).history[1]
    assert mine == Drew(1, (T("0-1"), T("0-2"), T("5-6")), 3)
    assert theirs == Drew(1, (), 3)
    assert view(state, 0).counts == (6, 10) and view(state, 0).bazaar == 11
