"""Tiles of the double-six set as small integers, and sets of tiles as bitmasks.

A :data:`Tile` is an ``int`` in ``0..27``; a :data:`TileSet` is a 28-bit ``int`` with bit ``t``
set when tile ``t`` is in the set.  Tiles are numbered in the order ``0-0, 0-1, … 0-6, 1-1, …
6-6``, so ``tile(a, b)`` for ``a <= b`` is arithmetic and every table below is a plain list.

The hot path of every game is mask arithmetic: the tiles of a hand that fit an end showing ``n``
are ``hand & SUIT[n]``, a hand's size is ``hand.bit_count()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Tile = int
TileSet = int

N_TILES = 28
ALL_TILES: TileSet = (1 << N_TILES) - 1

#: ``LOW[t]``/``HIGH[t]``: the smaller and larger half of tile ``t``.
LOW: list[int] = []
HIGH: list[int] = []
for _a in range(7):
    for _b in range(_a, 7):
        LOW.append(_a)
        HIGH.append(_b)
del _a, _b

#: ``PIPS[t]``: the value of tile ``t`` (the sum of its halves).
PIPS: list[int] = [LOW[t] + HIGH[t] for t in range(N_TILES)]

_INDEX = {(LOW[t], HIGH[t]): t for t in range(N_TILES)}


def tile(a: int, b: int) -> Tile:
    """The tile showing ``a`` and ``b`` (in either order)."""
    if a > b:
        a, b = b, a
    return _INDEX[(a, b)]


#: ``SUIT[n]``: every tile showing ``n`` (seven tiles; the double counts once).
SUIT: list[TileSet] = [sum(1 << t for t in range(N_TILES) if n in (LOW[t], HIGH[t])) for n in range(7)]
#: ``DOUBLE[n]``: the tile ``n-n``.
DOUBLE: list[Tile] = [tile(n, n) for n in range(7)]
DOUBLES: TileSet = sum(1 << t for t in DOUBLE)
IS_DOUBLE: list[bool] = [LOW[t] == HIGH[t] for t in range(N_TILES)]

#: ``OTHER[t][n]``: the half of ``t`` left showing when ``t`` is joined to an end showing ``n``
#: (``-1`` when ``t`` does not show ``n``).
OTHER: list[list[int]] = [
    [HIGH[t] if n == LOW[t] else LOW[t] if n == HIGH[t] else -1 for n in range(7)] for t in range(N_TILES)
]

#: Tile ids ordered from heaviest to lightest (RULES.md §2.8): highest pip sum first, and
#: between equal sums the tile with the higher larger half (6-3 before 5-4).
BY_WEIGHT: list[Tile] = sorted(range(N_TILES), key=lambda t: (PIPS[t], HIGH[t]), reverse=True)


#: ``"3-5"`` by tile id (see :func:`tile_name`).
TILE_NAMES: list[str] = [f"{LOW[t]}-{HIGH[t]}" for t in range(N_TILES)]


def tile_name(t: Tile) -> str:
    """``"3-5"``: the name used in deal files, logs and error messages."""
    return TILE_NAMES[t]


def tile_text(t: Tile) -> str:
    """``"[3|5]"``: the form used when printing a layout or a hand for people."""
    return f"[{LOW[t]}|{HIGH[t]}]"


def parse_tile(text: str) -> Tile:
    """Parse ``"3-5"`` (also ``"5-3"``, ``"3|5"``, ``"[3|5]"``) into a tile.

    Raises:
        ValueError: the text does not name a tile of the double-six set; the message quotes it.
    """
    if not isinstance(text, str):  # a damaged log or deal file can hold anything here
        raise ValueError(f"{text!r} is not a tile of the double-six set (expected like '3-5')")
    s = text.strip().strip("[]")
    for sep in ("-", "|", ":"):
        if sep in s:
            left, _, right = s.partition(sep)
            if left.strip().isdigit() and right.strip().isdigit():
                a, b = int(left), int(right)
                if 0 <= a <= 6 and 0 <= b <= 6:
                    return tile(a, b)
            break
    raise ValueError(f"{text!r} is not a tile of the double-six set (expected like '3-5')")


def bits(mask: TileSet) -> Iterator[Tile]:
    """The tiles of a set in increasing order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


# The tiles of every subset of 8 consecutive tile ids, in increasing order: a set's tiles are
# four lookups (a finished deal lists every hand).
_TILES_BYTE = [[tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)] for k in range(4)]


def tiles_of(mask: TileSet) -> list[Tile]:
    """The tiles of a set in increasing order, as a list."""
    t0, t1, t2, t3 = _TILES_BYTE
    return [*t0[mask & 255], *t1[mask >> 8 & 255], *t2[mask >> 16 & 255], *t3[mask >> 24 & 255]]


def tiles_tuple(mask: TileSet) -> tuple[Tile, ...]:
    """The tiles of a set in increasing order, as a tuple."""
    t0, t1, t2, t3 = _TILES_BYTE
    return t0[mask & 255] + t1[mask >> 8 & 255] + t2[mask >> 16 & 255] + t3[mask >> 24 & 255]


def mask_of(tiles: Iterable[Tile]) -> TileSet:
    m = 0
    for t in tiles:
        m |= 1 << t
    return m


# Pip totals of every subset of 8 consecutive tile ids: a set's pips are four lookups.
_PIPS_BYTE = [[sum(PIPS[8 * k + i] for i in range(8) if b >> i & 1 and 8 * k + i < N_TILES) for b in range(256)] for k in range(4)]


def pips_of(mask: TileSet) -> int:
    """The plain pip total of a set of tiles."""
    p0, p1, p2, p3 = _PIPS_BYTE
    return p0[mask & 255] + p1[mask >> 8 & 255] + p2[mask >> 16 & 255] + p3[mask >> 24 & 255]


_ZERO_ZERO = 1 << DOUBLE[0]
_SIX_SIX = 1 << DOUBLE[6]
#: Every tile but 0-0 and 6-6: a hand holding one of them counts its plain pips (§2.7).
NOT_LONE = ALL_TILES & ~(_ZERO_ZERO | _SIX_SIX)


def lone_double_value(mask: TileSet, *, zero_zero: int = 25, six_six: int = 50, both: int | None = 75) -> int:
    """Hand value with lone-double values (RULES.md §2.7).

    A hand that is only 0-0 counts ``zero_zero``, only 6-6 counts ``six_six``, and exactly
    0-0 plus 6-6 counts ``both`` (``None``: its plain 12 pips, as Kozel counts it).  Any other
    hand counts its pips.
    """
    if mask & NOT_LONE:
        return pips_of(mask)  # the common case: a tile other than 0-0 and 6-6
    if mask == _ZERO_ZERO:
        return zero_zero
    if mask == _SIX_SIX:
        return six_six
    if mask == _ZERO_ZERO | _SIX_SIX and both is not None:
        return both
    return pips_of(mask)


def heaviest(mask: TileSet) -> Tile | None:
    """The heaviest tile of a set (RULES.md §2.8), or ``None`` for an empty set."""
    for t in BY_WEIGHT:
        if mask >> t & 1:
            return t
    return None
