"""Seeds of the deal stream: a secret one drawn from the operating system, one read from the
command line or a league file, and one written for people.

A match with no seed given deals from a fresh seed of :data:`~referee.engine.core.shuffle.FRESH_BITS`
bits (:func:`fresh_seed`): written in the log's header and printed with the result, so that
``--seed`` plays the same deals again, and never sent to a bot.  Its deals come through the
keyed derivation of :mod:`referee.engine.core.shuffle`, so no number of hands seen gives it away.
A seed a person chooses is usually small, and anyone who guesses it deals every hand:
:func:`guessable` says when (``league run``, ``match`` and ``check`` warn, in the words of
:func:`short_seed_warning`).
"""

from __future__ import annotations

import secrets

from referee.engine.core.shuffle import FRESH_BITS, SEED_LIMIT

#: Seeds with fewer bits than this can be found by trying them all.
GUESSABLE_BITS = 64


def fresh_seed() -> int:
    """A secret seed from the operating system's random source."""
    return secrets.randbits(FRESH_BITS)


def parse_seed(text: str) -> int:
    """A seed as written by a person: decimal, or hexadecimal with ``0x``.

    Raises:
        ValueError: not such a number, or outside ``0 … 2**256 - 1`` (one line, for the user).
    """
    raw = text.strip().replace("_", "")
    try:
        value = int(raw, 16) if raw.lower().startswith("0x") else int(raw, 10)
    except ValueError:
        raise ValueError(f"{text!r} is not a seed: give a whole number (decimal, or hexadecimal with 0x)") from None
    if not 0 <= value < SEED_LIMIT:
        raise ValueError(f"{text!r} is not a seed: a seed is from 0 to 2**256 - 1")
    return value


def seed_text(seed: int) -> str:
    """How a seed is shown: decimal below 2**64, else ``0x`` and 32 or 64 hex digits — either
    form is what ``--seed`` takes back."""
    if seed < 1 << 64:
        return str(seed)
    return f"0x{seed:032x}" if seed < 1 << 128 else f"0x{seed:064x}"


def guessable(seed: int) -> bool:
    """Whether trying every seed up to this one is within anyone's reach."""
    return seed.bit_length() < GUESSABLE_BITS


def short_seed_warning(seed: int, remedy: str) -> str:
    """The one-line warning for a typed seed that is :func:`guessable`; ``remedy`` says how to
    do without it where the seed was given."""
    return (f"warning: seed {seed_text(seed)} is short: anyone who tries every seed up to it can deal every hand "
            f"({remedy})")
