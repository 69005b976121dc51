"""The documented shuffle: the same seed gives the same deals on every machine and Python.

Python's :mod:`random` may change between versions, so deals come from our own generator:

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
* **Dealing** (see :mod:`referee.engine.deal`): seat 0 takes the first ``hand_size`` tiles of
  the shuffled order, seat 1 the next, and so on; the rest, in order, is the bazaar (or the
  sleeping tiles).

``tests/test_shuffle.py`` pins a few seeds to their exact deals.
"""

from __future__ import annotations

from typing import Any

_M = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


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


def shuffled_tiles(seed: int, index: int) -> list[int]:
    """The 28 tile ids in the order deal ``index`` of ``seed`` hands them out.

    This is :meth:`SplitMix64.shuffle` unrolled into one loop (every deal of every match goes
    through it); ``tests/test_shuffle.py`` holds the two to the same output.
    """
    order = list(range(28))
    state = mix(mix(seed & _M) ^ (index & _M))
    for i in range(27, 0, -1):
        n = i + 1
        threshold = _THRESHOLD[n]
        while True:
            state = (state + GAMMA) & _M
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
            m = (z ^ (z >> 31)) * n
            if (m & _M) >= threshold:
                break
        j = m >> 64
        order[i], order[j] = order[j], order[i]
    return order
