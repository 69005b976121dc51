"""The documented shuffles: the same seed gives the same deals on every machine and Python.

Python's :mod:`random` may change between versions, so deals come from our own generators.
There are two shuffles of deal ``i`` from a seed, and three *derivations* (a shuffle and where a
game's deals sit in the stream); a match log's header names the one that made its deals
(``deals_from``; a log without it was made by ``splitmix64``).

``blake2b-games`` — game-keyed deals (every match and league since round 5)
---------------------------------------------------------------------------

The ``blake2b`` shuffle below, and in a match of games scored to a target, game ``g`` of the
match deals stream deals ``g * 2**32, g * 2**32 + 1, …`` (:data:`GAME_STRIDE`) in every
orientation, so a game's deals do not depend on how long the games before it lasted and the games
can be played at once (``referee match -j``).  Games of a fixed number of deals ``n`` take stream
deals ``g * n …`` under every derivation.  Under ``blake2b`` and ``splitmix64`` a game to a target
starts after the longest orientation of the game before it (and so does every match from a deal
file, whatever its derivation).

``blake2b`` — secret deals (every match since round 3)
------------------------------------------------------

A seed is an integer ``0 <= s < 2**256``; with no seed given the referee draws 128 bits from the
operating system (:func:`referee.base.seeds.fresh_seed`).  Deal ``i`` (``0 <= i < 2**64``) draws its shuffle from
the bytes of keyed BLAKE2b (RFC 7693, :func:`hashlib.blake2b`)::

    block(c) = BLAKE2b(key = s as 32 bytes big-endian, digest_size = 64,
                       person = b"referee-deals-v1",
                       message = i as 8 bytes big-endian + c as 4 bytes big-endian)

for ``c = 0, 1, 2 …``, each block read as eight 64-bit big-endian words in order: the word
stream.  The shuffle is the Fisher–Yates and Lemire draw described below, with ``next()``
taking the next word of that stream instead of SplitMix64.  Keyed BLAKE2b is a pseudorandom
function: without the key (the seed), the words of one deal say nothing of another deal's or
of the seed, so a bot that sees any number of hands learns nothing of the hands it was not
dealt.  With the seed, anyone can regenerate every deal (``tests/engine/test_shuffle.py`` does it
from this paragraph alone).

``splitmix64`` — the public shuffle (logs before round 3; the engine's tests and benchmarks)
---------------------------------------------------------------------------------------------

Fast and fully specified, but anyone who sees one hand can search small seeds and then knows
every hand: never for matches between bots that might cheat.

* **SplitMix64** (Steele, Lea, Flood 2014).  ``next()`` adds the golden gamma
  ``0x9E3779B97F4A7C15`` to a 64-bit state and returns the state passed through the mixer
  ``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31``
  (all arithmetic modulo 2**64).
* **Deal ``i`` of seed ``s``** starts the generator at ``mix(mix(s mod 2**64) XOR i)``, where
  ``mix`` is the mixer above applied to ``x + gamma``.  Each deal therefore has its own stream
  and can be produced without producing the deals before it.
* **Shuffle.** The 28 tiles in id order (``0-0, 0-1, … 6-6``) are shuffled by Fisher–Yates from
  the last position down: for ``i = 27 … 1`` swap position ``i`` with a uniform ``j`` in
  ``0..i``.  ``j`` comes from Lemire's multiply-shift with rejection, so it is exactly uniform:
  ``m = next() * (i+1)``; reject while ``m mod 2**64 < 2**64 mod (i+1)``; ``j = m >> 64``.
* **Dealing** (see :mod:`referee.engine.core.deal`): seat 0 takes the first ``hand_size`` tiles of
  the shuffled order, seat 1 the next, and so on; the rest, in order, is the bazaar (or the
  sleeping tiles).

``tests/engine/test_shuffle.py`` pins a few seeds to their exact deals.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any, Final, Literal

_M = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15

#: The derivations a log's header may name (``deals_from``).
Derivation = Literal["blake2b-games", "blake2b", "splitmix64"]
SPLITMIX64: Final = "splitmix64"
BLAKE2B: Final = "blake2b"
BLAKE2B_GAMES: Final = "blake2b-games"
DERIVATIONS: tuple[Derivation, ...] = (BLAKE2B_GAMES, BLAKE2B, SPLITMIX64)
#: Under :data:`BLAKE2B_GAMES`, game ``g`` of a match to a target deals from stream deal ``g * GAME_STRIDE``.
GAME_STRIDE: Final = 1 << 32
#: Seeds of the keyed derivation are below this (its key is 32 bytes).
SEED_LIMIT = 1 << 256
#: Bits of a seed the referee draws itself (:func:`referee.base.seeds.fresh_seed`).
FRESH_BITS = 128
_PERSON = b"referee-deals-v1"


def _mixer(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return z ^ (z >> 31)


def mix(x: int) -> int:
    """One SplitMix64 step from state ``x`` (the value ``next()`` would return)."""
    return _mixer((x + GAMMA) & _M)


class SplitMix64:
    """A tiny, fully specified 64-bit generator (see the module docstring)."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & _M

    def next(self) -> int:
        self.state = (self.state + GAMMA) & _M
        return _mixer(self.state)

    def below(self, n: int) -> int:
        """A uniform integer in ``0..n-1`` (Lemire's method with rejection)."""
        if n <= 0:
            raise ValueError(f"below(n) needs n > 0, got {n}")
        threshold = (1 << 64) % n
        while True:
            m = self.next() * n
            if (m & _M) >= threshold:
                return m >> 64

    def shuffle(self, items: list[Any]) -> None:
        """Shuffle in place, Fisher–Yates from the last position down."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def deal_generator(seed: int, index: int) -> SplitMix64:
    """The generator for deal ``index`` of the stream of ``seed``."""
    return SplitMix64(mix(mix(seed & _M) ^ (index & _M)))


#: ``2**64 mod n`` for the bounds the shuffle of 28 tiles uses (Lemire's rejection threshold).
_THRESHOLD = [0] + [(1 << 64) % n for n in range(1, 29)]
#: The shuffle's steps in order: the place ``i`` filled, the bound ``n = i + 1``, its threshold.
_STEPS = tuple((i, i + 1, _THRESHOLD[i + 1]) for i in range(27, 0, -1))

# shuffled_tiles runs the generator's 27 steps at once: the 27 states side by side in one big
# integer, a 128-bit lane each (a 64-bit value times a 64-bit constant needs 128 bits, so no
# lane carries into the next), so every mixer operation is one operation on all the steps.
# ``_LOW`` keeps the low 64 bits of every lane (the "mod 2**64"), also clearing the bits a right
# shift brings down from the lane above.  Lane ``k`` starts as ``state + (k + 1) * gamma``.
_LANES = len(_STEPS)
_ONES = sum(1 << 128 * k for k in range(_LANES))
_LOW = _M * _ONES
_GAMMAS = sum(((k + 1) * GAMMA & _M) << 128 * k for k in range(_LANES))
#: The lanes' low 64 bits as 27 integers, lane 0 first (each lane's high 8 bytes skipped).
_UNPACK_LANES = struct.Struct("<" + "Q8x" * _LANES).unpack


def shuffled_tiles(seed: int, index: int) -> list[int]:
    """The 28 tile ids in the order deal ``index`` of ``seed`` hands them out.

    This is :meth:`SplitMix64.shuffle` of :func:`deal_generator`, with the generator's outputs
    computed all at once (every deal of every match goes through it; see the lanes above).  That
    assumes no draw is rejected, which happens with probability under 28 / 2**64 a step; if one
    is, the deal is shuffled again the step-by-step way.  ``tests/engine/test_shuffle.py`` holds
    the two to the same output, the rejected case included.
    """
    low = _LOW
    z = (mix(mix(seed & _M) ^ (index & _M)) * _ONES + _GAMMAS) & low  # the 27 states
    z = ((z ^ (z >> 30)) & low) * 0xBF58476D1CE4E5B9 & low
    z = ((z ^ (z >> 27)) & low) * 0x94D049BB133111EB & low
    z = (z ^ (z >> 31)) & low
    order = list(range(28))
    mask = _M
    for (i, n, threshold), r in zip(_STEPS, _UNPACK_LANES(z.to_bytes(16 * _LANES, "little"))):
        m = r * n
        if (m & mask) < threshold:  # a rejected draw shifts every later step's state
            return _shuffled_step_by_step(seed, index)
        j = m >> 64
        order[i], order[j] = order[j], order[i]
    return order


def _shuffled_step_by_step(seed: int, index: int) -> list[int]:
    order = list(range(28))
    deal_generator(seed, index).shuffle(order)
    return order


def keyed_tiles(seed: int, index: int) -> list[int]:
    """The 28 tile ids in the order deal ``index`` of ``seed`` hands them out, by the keyed
    ``blake2b`` derivation of the module docstring.

    Raises:
        ValueError: the seed is not in ``0 … 2**256 - 1`` or the index not in ``0 … 2**64 - 1``.
    """
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"a seed is a whole number from 0 to 2**256 - 1, not {seed}")
    if not 0 <= index <= _M:
        raise ValueError(f"a deal index is a whole number from 0 to 2**64 - 1, not {index}")
    key = seed.to_bytes(32, "big")
    prefix = index.to_bytes(8, "big")
    words: list[int] = []
    block = 0

    def word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.blake2b(prefix + block.to_bytes(4, "big"), key=key, digest_size=64, person=_PERSON).digest()
            block += 1
            words.extend(int.from_bytes(digest[k : k + 8], "big") for k in range(56, -8, -8))  # popped from the end: in order
        return words.pop()

    order = list(range(28))
    for i in range(27, 0, -1):
        n = i + 1
        threshold = _THRESHOLD[n]
        while True:
            m = word() * n
            if (m & _M) >= threshold:
                break
        j = m >> 64
        order[i], order[j] = order[j], order[i]
    return order


def game_keyed(derivation: str) -> bool:
    """Whether ``derivation`` places each game to a target at a fixed point of the stream
    (:data:`GAME_STRIDE`) rather than after the game before it."""
    return derivation == BLAKE2B_GAMES


def tiles_for(derivation: str, seed: int, index: int) -> list[int]:
    """The shuffled order of deal ``index`` of ``seed`` by the named derivation.

    Raises:
        ValueError: an unknown derivation, or a seed or index out of its range.
    """
    if derivation in (BLAKE2B, BLAKE2B_GAMES):
        return keyed_tiles(seed, index)
    if derivation == SPLITMIX64:
        return shuffled_tiles(seed, index)
    raise ValueError(f"unknown deal derivation {derivation!r} (known: {', '.join(DERIVATIONS)})")
