"""Deals as data: who holds which tiles, and the undealt tiles in order.

A :class:`Deal` is a value.  It comes from a seed (:func:`deal_from_seed`, through the
documented shuffle of :mod:`referee.engine.core.shuffle`) or from a line of a deal file
(:func:`parse_deal_line`), and duplicate play replays the same value with the seats rotated.

Deal-file lines are JSON objects, one per line::

    {"deal": 0, "hands": [["0-1", "2-3", ...], ...], "bazaar": ["4-4", ...]}

``hands`` lists every hand in seat order.  Games with a bazaar write the undealt tiles under
``"bazaar"`` (drawn from the front); games without one write them under ``"sleeping"``.
In kolbasa a hand is the seat's face-down row, left to right, so its order matters: the last
tile listed is turned up first (RULES.md §7 KB-8); all 28 tiles are dealt and nothing sleeps.
Reading accepts either key.  ``"deal"`` (the index in the stream) is informational.

A game that sets a double aside before dealing (mexican_train's station, RULES.md §7 MT-3) has a
shape with ``station=True``: its deals list the other 27 tiles, and the one double missing is the
station (:func:`station_of`).  Deal ``i`` of a seed's stream sets aside ``d-d`` with
``d = 6 - i mod 7`` (round ``i mod 7`` of MT-1) and deals the other tiles in the shuffle's order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import BadDeal
from .shuffle import SPLITMIX64, tiles_for
from .tiles import DOUBLE, IS_DOUBLE, N_TILES, Tile, mask_of, parse_tile, tile_name


@dataclass(frozen=True, slots=True)
class DealShape:
    """How a game deals: the number of seats, tiles per hand, and what the rest is called."""

    players: int
    hand_size: int
    undealt: str = "bazaar"  # "bazaar" (drawn from) or "sleeping" (out of play)
    #: one double is set aside before dealing (mexican_train's station): deals hold 27 tiles
    station: bool = False

    @property
    def undealt_count(self) -> int:
        return N_TILES - self.station - self.players * self.hand_size


@dataclass(frozen=True, slots=True)
class Deal:
    """Every hand in seat order, and the undealt tiles (bazaar or sleeping) in order."""

    hands: tuple[tuple[Tile, ...], ...]
    undealt: tuple[Tile, ...]
    #: each hand as a tile set, computed once (lead searches and every deal state need them)
    masks: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "masks", tuple([mask_of(h) for h in self.hands]))

    @property
    def players(self) -> int:
        return len(self.hands)

    def holder(self, t: Tile) -> int | None:
        """The seat holding tile ``t``, or ``None`` if it is undealt."""
        bit = 1 << t
        for seat, m in enumerate(self.masks):
            if m & bit:
                return seat
        return None


def deal_from_seed(seed: int, index: int, shape: DealShape, derivation: str = SPLITMIX64) -> Deal:
    """Deal ``index`` of the stream of ``seed`` for a game dealt as ``shape``, by ``derivation``
    (:mod:`.shuffle`: matches use the keyed ``blake2b``; the public ``splitmix64`` is the default
    here for the engine's own tests and benchmarks).

    Raises:
        ValueError: an unknown derivation, or a seed or index out of its range.
    """
    order = tiles_for(derivation, seed, index)
    if shape.station:
        station = DOUBLE[6 - index % 7]
        order = [t for t in order if t != station]
    k = shape.hand_size
    hands = tuple([tuple(order[s * k : s * k + k]) for s in range(shape.players)])
    return Deal(hands, tuple(order[shape.players * k :]))


def check_deal(deal: Deal, shape: DealShape, line: int | None = None) -> None:
    """Raise :class:`BadDeal` unless ``deal`` is a partition of the 28 tiles dealt as ``shape``."""
    if len(deal.hands) != shape.players:
        raise BadDeal(f"{len(deal.hands)} hands, but this game deals {shape.players}", line)
    for seat, hand in enumerate(deal.hands):
        if len(hand) != shape.hand_size:
            raise BadDeal(f"seat {seat} holds {len(hand)} tiles, this game deals {shape.hand_size}", line)
    if len(deal.undealt) != shape.undealt_count:
        raise BadDeal(
            f"{len(deal.undealt)} tiles {'in the bazaar' if shape.undealt == 'bazaar' else 'sleeping'}, "
            f"this game with {shape.players} players leaves {shape.undealt_count}",
            line,
        )
    seen = 0
    for t in [t for hand in deal.hands for t in hand] + list(deal.undealt):
        if not 0 <= t < N_TILES:
            raise BadDeal(f"{t!r} is not a tile id", line)
        if seen >> t & 1:
            raise BadDeal(f"tile {tile_name(t)} appears twice", line)
        seen |= 1 << t
    missing = [tile_name(t) for t in range(N_TILES) if not seen >> t & 1]
    if shape.station:
        if len(missing) == 1 and IS_DOUBLE[parse_tile(missing[0])]:
            return
        raise BadDeal(f"the deal must list every tile but one double, the station; missing: {', '.join(missing) or 'none'}", line)
    if missing:
        raise BadDeal(f"tile {missing[0]} is missing" if len(missing) == 1 else f"tiles {', '.join(missing)} are missing", line)


def station_of(deal: Deal) -> Tile | None:
    """The double a deal leaves out (its station), or ``None`` when it lists all 28 tiles."""
    seen = mask_of(deal.undealt)
    for m in deal.masks:
        seen |= m
    missing = [t for t in range(N_TILES) if not seen >> t & 1]
    return missing[0] if len(missing) == 1 and IS_DOUBLE[missing[0]] else None


def format_deal_line(deal: Deal, shape: DealShape, index: int | None = None) -> str:
    """One deal-file line (no trailing newline); keys in a fixed order so files diff cleanly."""
    obj: dict[str, Any] = {}
    if index is not None:
        obj["deal"] = index
    obj["hands"] = [[tile_name(t) for t in hand] for hand in deal.hands]
    obj[shape.undealt] = [tile_name(t) for t in deal.undealt]
    return json.dumps(obj, separators=(", ", ": "))


def parse_deal_line(text: str, shape: DealShape, line: int | None = None) -> Deal:
    """Parse and check one deal-file line for a game dealt as ``shape``.

    Raises:
        BadDeal: malformed JSON, a missing or mistyped key, a bad tile name, a tile twice or
            missing, or hands and undealt tiles of the wrong sizes; the message names the line.
    """
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise BadDeal(f"not valid JSON ({exc.args[0].split(':')[0]})", line) from None
    if not isinstance(obj, dict):
        raise BadDeal("expected a JSON object with 'hands'", line)
    hands = obj.get("hands")
    if not isinstance(hands, list) or not all(isinstance(h, list) for h in hands):
        raise BadDeal("'hands' must be a list of hands, each a list of tiles like \"3-5\"", line)
    keys = [k for k in ("bazaar", "sleeping") if k in obj]
    if len(keys) > 1:
        raise BadDeal("give the undealt tiles once, under 'bazaar' or 'sleeping'", line)
    undealt = obj[keys[0]] if keys else []
    if not isinstance(undealt, list):
        raise BadDeal(f"'{keys[0]}' must be a list of tiles", line)

    def tiles(items: list[Any], where: str) -> tuple[Tile, ...]:
        out = []
        for item in items:
            if not isinstance(item, str):
                raise BadDeal(f"{where}: {json.dumps(item)} is not a tile name like \"3-5\"", line)
            try:
                out.append(parse_tile(item))
            except ValueError as exc:
                raise BadDeal(f"{where}: {exc}", line) from None
        return tuple(out)

    deal = Deal(
        tuple(tiles(h, f"seat {s}") for s, h in enumerate(hands)),
        tiles(undealt, keys[0] if keys else "bazaar"),
    )
    check_deal(deal, shape, line)
    return deal


def parse_deal_lines(lines: Iterable[str], shape: DealShape) -> list[Deal]:
    """Parse a whole deal file given as an iterable of lines; blank lines are skipped.

    With a station (mexican_train), deal ``i`` of the file is round ``i mod 7`` and must set aside
    that round's double, as a seed's stream does."""
    deals: list[Deal] = []
    for number, text in enumerate(lines, start=1):
        if text.strip():
            deal = parse_deal_line(text, shape, number)
            if shape.station:
                want, got = DOUBLE[6 - len(deals) % 7], station_of(deal)
                if got != want:
                    raise BadDeal(f"deal {len(deals)} of the file is round {len(deals) % 7}, which puts {tile_name(want)} on the station, "
                                  f"but it sets aside {tile_name(got) if got is not None else 'no double'}", number)
            deals.append(deal)
    if not deals:
        raise BadDeal("the deal file holds no deals")
    return deals
