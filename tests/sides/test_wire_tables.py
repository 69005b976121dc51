"""The wire's precomputed shortcuts give what the plain definitions give."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from referee.engine import play
from referee.engine.core.line import HUNDRED, STOP, WRITE_OFF, Play
from referee.engine.core.tiles import ALL_TILES, N_TILES, bits
from referee.sides.base import TILE_JSON, hand_json, legal_json, play_option
from referee.sides.line import SIDE as LINE_SIDE


@given(st.integers(0, ALL_TILES))
def test_a_hand_is_its_tiles_in_id_order(hand):
    assert hand_json(hand) == [TILE_JSON[t] for t in bits(hand)]


def test_legal_json_is_play_option_of_each_play_interned_or_not():
    rng = random.Random(5)
    interned = [play(t, e) for t in range(N_TILES) for e in (None, 0, 1, 2, 3)]
    for _ in range(200):
        plays = rng.sample(interned, 5) + [STOP, HUNDRED, WRITE_OFF]
        assert legal_json(plays) == [play_option(p) for p in plays]
    # Plays made afresh (equal to an interned one, or not) answer the same as through the hash.
    for _ in range(3):
        fresh = [Play(9, 1), Play(9, 1, True), Play(27, None, False, "hundred")]
        assert legal_json(fresh) == [play_option(p) for p in fresh]


def test_a_line_play_is_named_as_str_names_it_interned_or_not():
    state = None  # the line games' play_text looks at the play alone
    interned = [play(t, e) for t in range(N_TILES) for e in (None, 0, 1)]
    fresh = [Play(9, 1), Play(9, 1, True), Play(27, None, False, "hundred"), Play(-1, None)]
    for _ in range(2):
        for p in [*interned, STOP, HUNDRED, WRITE_OFF, *fresh]:
            assert LINE_SIDE.play_text(state, p) == str(p)
