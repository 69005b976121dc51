"""The documented shuffle (referee/engine/core/shuffle.py, RULES.md §4): re-implemented here from the
module's docstring alone, checked against SplitMix64's published vectors, and a few seeds pinned
to their exact deals so that a change of generator can never pass unnoticed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine import deal_from_seed, format_deal_line, parse_deal_line, variant
from referee.engine.core.shuffle import SplitMix64, deal_generator, shuffled_tiles

# -- an independent implementation of the docstring ----------------------------------------------

MASK64 = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15


def mixer(z: int) -> int:
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) % 2**64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) % 2**64
    return z ^ (z >> 31)


def stream(state: int):
    """SplitMix64: add the golden gamma, return the mixed state."""
    while True:
        state = (state + GOLDEN) % 2**64
        yield mixer(state)


def mix(x: int) -> int:
    return mixer((x + GOLDEN) % 2**64)


def uniform(gen, n: int) -> int:
    """Lemire's multiply-shift with rejection."""
    while True:
        m = next(gen) * n
        if m % 2**64 >= 2**64 % n:
            return m >> 64


def my_shuffled_tiles(seed: int, index: int) -> list[int]:
    gen = stream(mix(mix(seed % 2**64) ^ (index % 2**64)))
    order = list(range(28))
    for i in range(27, 0, -1):
        j = uniform(gen, i + 1)
        order[i], order[j] = order[j], order[i]
    return order


# -- the generator ------------------------------------------------------------------------------


def test_splitmix64_published_vectors():
    # Vigna's reference splitmix64.c seeded with 1234567, and the stream of state 0
    g = SplitMix64(1234567)
    assert [g.next() for _ in range(5)] == [
        6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821,
    ]
    g = SplitMix64(0)
    assert [g.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


@settings(max_examples=200, deadline=None)
@given(state=st.integers(0, MASK64))
def test_generator_matches_the_docstring(state):
    g = SplitMix64(state)
    mine = stream(state)
    assert [g.next() for _ in range(4)] == [next(mine) for _ in range(4)]


@settings(max_examples=200, deadline=None)
@given(state=st.integers(0, MASK64), n=st.integers(1, 2**40))
def test_below_is_lemire(state, n):
    assert SplitMix64(state).below(n) == uniform(stream(state), n)


def test_below_refuses_nonpositive():
    with pytest.raises(ValueError):
        SplitMix64(1).below(0)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(-(2**70), 2**70), index=st.integers(0, 2**20))
def test_shuffle_matches_the_docstring(seed, index):
    assert shuffled_tiles(seed, index) == my_shuffled_tiles(seed, index)
    assert sorted(shuffled_tiles(seed, index)) == list(range(28))


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, MASK64), index=st.integers(0, 2**32))
def test_shuffled_tiles_equals_the_generator_class(seed, index):
    order = list(range(28))
    deal_generator(seed, index).shuffle(order)
    assert shuffled_tiles(seed, index) == order


@pytest.mark.parametrize("step", [0, 13, 26])
def test_a_rejected_draw_shuffles_step_by_step(monkeypatch, step):
    """shuffled_tiles computes the 27 draws at once assuming none is rejected (probability under
    28 / 2**64 a step, so no real seed is known to reach it): a step made to reject sends the deal
    to the generator class, whose own thresholds shuffle it as documented."""
    import referee.engine.core.shuffle as shuffle

    expected = shuffled_tiles(5, 9)
    steps = list(shuffle._STEPS)
    i, n, _ = steps[step]
    steps[step] = (i, n, 1 << 64)  # every draw of this step looks rejected
    monkeypatch.setattr(shuffle, "_STEPS", tuple(steps))
    calls = []
    real = shuffle.SplitMix64.shuffle
    monkeypatch.setattr(shuffle.SplitMix64, "shuffle", lambda self, items: (calls.append(1), real(self, items))[1])
    assert shuffled_tiles(5, 9) == expected == my_shuffled_tiles(5, 9)
    assert calls == [1]

def test_seed_is_taken_mod_2_64_and_each_deal_has_its_own_stream():
    assert shuffled_tiles(-1, 0) == shuffled_tiles(2**64 - 1, 0)
    assert shuffled_tiles(2**64 + 5, 3) == shuffled_tiles(5, 3)
    assert deal_generator(7, 3).state == mix(mix(7) ^ 3)
    orders = {tuple(shuffled_tiles(42, i)) for i in range(50)}
    assert len(orders) == 50
    assert shuffled_tiles(42, 49) == my_shuffled_tiles(42, 49)  # without producing 0..48 first


def test_shuffle_is_roughly_uniform():
    # Every tile lands in every position about equally often (loose bounds, fixed seeds).
    counts = [[0] * 28 for _ in range(28)]
    rounds = 2800
    for i in range(rounds):
        for pos, t in enumerate(shuffled_tiles(i % 7, i)):
            counts[t][pos] += 1
    for t in range(28):
        assert all(50 <= c <= 160 for c in counts[t]), (t, counts[t])


# -- pinned deals ------------------------------------------------------------------------------

PINNED = [
    ("sport", 4, 0, 0,
     '{"deal": 0, "hands": [["1-2", "2-2", "0-5", "2-5", "2-3", "1-3", "0-4"], ["1-4", "2-6", "0-6", "4-5", "0-0", '
     '"1-5", "4-6"], ["0-1", "0-2", "3-6", "3-3", "1-6", "3-5", "6-6"], ["3-4", "5-5", "2-4", "4-4", "1-1", "5-6", '
     '"0-3"]], "sleeping": []}'),
    ("kozel", 2, 1, 0,
     '{"deal": 0, "hands": [["0-1", "2-6", "5-5", "1-4", "0-3", "1-1", "2-3"], ["0-4", "1-3", "2-4", "4-4", "2-2", '
     '"3-6", "1-6"]], "bazaar": ["2-5", "4-5", "0-5", "4-6", "0-0", "0-2", "0-6", "3-3", "6-6", "1-2", "3-5", "1-5", '
     '"5-6", "3-4"]}'),
    ("draw", 3, 2026, 3,
     '{"deal": 3, "hands": [["1-5", "2-4", "0-1", "1-6", "5-5"], ["0-2", "2-5", "1-4", "0-6", "0-0"], ["4-5", "3-4", '
     '"6-6", "2-6", "4-6"]], "bazaar": ["2-2", "4-4", "0-5", "1-2", "3-6", "1-3", "3-3", "1-1", "2-3", "0-4", "5-6", '
     '"3-5", "0-3"]}'),
    ("club", 4, 12345678901234567890, 7,
     '{"deal": 7, "hands": [["0-5", "1-1", "3-3", "2-4", "1-2", "5-5", "1-4"], ["3-5", "3-6", "0-0", "0-4", "2-6", '
     '"4-4", "4-5"], ["2-3", "0-2", "0-3", "5-6", "6-6", "4-6", "1-6"], ["1-5", "3-4", "0-6", "0-1", "1-3", "2-5", '
     '"2-2"]], "bazaar": []}'),
]


@pytest.mark.parametrize("vid, players, seed, index, line", PINNED, ids=[p[0] for p in PINNED])
def test_pinned_deals(vid, players, seed, index, line):
    shape = variant(vid).shape(players)
    deal = deal_from_seed(seed, index, shape)
    assert format_deal_line(deal, shape, index) == line
    # and the same deal from our own implementation: seat s takes the next hand_size tiles
    order = my_shuffled_tiles(seed, index)
    k = shape.hand_size
    assert [list(h) for h in deal.hands] == [order[s * k : (s + 1) * k] for s in range(players)]
    assert list(deal.undealt) == order[players * k :]
    assert parse_deal_line(line, shape) == deal
    assert json.loads(line)["deal"] == index


# -- the keyed derivation (blake2b), written again from the module docstring ------------------------


def my_keyed_tiles(seed: int, index: int) -> list[int]:
    import hashlib

    def words():
        block = 0
        while True:
            digest = hashlib.blake2b(index.to_bytes(8, "big") + block.to_bytes(4, "big"), key=seed.to_bytes(32, "big"),
                                     digest_size=64, person=b"referee-deals-v1").digest()
            for k in range(0, 64, 8):
                yield int.from_bytes(digest[k:k + 8], "big")
            block += 1

    gen = words()
    order = list(range(28))
    for i in range(27, 0, -1):
        j = uniform(gen, i + 1)
        order[i], order[j] = order[j], order[i]
    return order


@given(st.integers(0, 2**256 - 1), st.integers(0, 2**64 - 1))
@settings(max_examples=200)
def test_the_keyed_shuffle_is_the_one_documented(seed, index):
    from referee.engine.core.shuffle import keyed_tiles

    assert keyed_tiles(seed, index) == my_keyed_tiles(seed, index)


def test_the_keyed_shuffle_is_pinned():
    """A change of the keyed derivation can never pass unnoticed: these orders are the ones logs
    written with ``deals_from: blake2b`` were dealt from."""
    from referee.engine.core.shuffle import BLAKE2B, keyed_tiles, tiles_for

    assert keyed_tiles(1, 0) == [12, 2, 11, 9, 8, 7, 20, 27, 1, 4, 23, 16, 15, 3, 13, 26, 0, 14, 19, 5, 25, 17, 18, 6, 24, 21, 22, 10]
    assert tiles_for(BLAKE2B, 1, 0) == keyed_tiles(1, 0)
    assert keyed_tiles(1, 0) != shuffled_tiles(1, 0)
    for bad in ((-1, 0), (2**256, 0), (0, 2**64)):
        with pytest.raises(ValueError):
            keyed_tiles(*bad)
    with pytest.raises(ValueError, match="unknown deal derivation"):
        tiles_for("md5", 1, 0)


@pytest.mark.parametrize("name", ["blake2b", "splitmix64"])
def test_every_header_names_its_derivation_whatever_object_the_name_is(tmp_path, name):
    """A log's header says how its deals came from the seed, always: the bytes cannot depend on
    whether the name given is the module's constant or an equal string read from a league's
    database or a job (the struct once left out the default by identity, so some splitmix64
    headers named it and some did not).  A header without it (format 1) reads as splitmix64."""
    import msgspec

    from referee.bots.bot import Bot
    from referee.matches.match import header
    from referee.matches.spec import MatchSpec
    from referee.records.records import Header, encode

    v = variant("sport")
    written = set()
    for named in (name, msgspec.json.decode(json.dumps(name).encode()), "".join(name)):
        spec = MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], 4, v.resolve_options(4, {}), deals=4, seed=1,
                         deals_from=named, log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path)
        written.add(encode(header(spec, [(0, 1, 0, 1), (1, 0, 1, 0)])))
    assert len(written) == 1
    line = written.pop()
    assert f'"deals_from":"{name}"'.encode() in line
    assert msgspec.json.decode(line, type=Header).derivation == name
    old = msgspec.json.decode(line.replace(f',"deals_from":"{name}"'.encode(), b""), type=Header)
    assert old.deals_from is None and old.derivation == "splitmix64"
