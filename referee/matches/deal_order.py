"""The order a deal file is played in: from a start on in the file's order, wrapping round to its
first deal (``sequential``), or that order shuffled by a seed (``random``), in whole blocks
(a station game's seven rounds stay together and in order).  One order for ``referee match
--deals-order/--deals-start`` and a league's ``[game] deals_order/deals_start``: the same file,
start and seed give a match and a league the same deals in the same order."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

#: The orders a deal file can be played in.
DEAL_ORDERS = ("sequential", "random")

D = TypeVar("D")


def played_order(deals: Sequence[D], order: str, start: int, seed: int, sha256: str, per_block: int = 1) -> list[D]:
    """Every deal of the file, in the order it is played: from ``start`` (from 1), wrapping round
    to the file's first (``sequential``), or that order shuffled by ``seed`` and the file's
    ``sha256`` (``random``, in whole blocks of ``per_block``)."""
    first = start - 1
    ordered = [*deals[first:], *deals[:first]]
    if order == "sequential":
        return ordered
    blocks = [ordered[i:i + per_block] for i in range(0, len(ordered), per_block)]
    # The key's words are a league's since it first shuffled: its tables keep their deals.
    random.Random(f"referee-league-deals:{seed}:{sha256}").shuffle(blocks)
    return [d for b in blocks for d in b]


def order_problem(count: int, start: int, per_block: int) -> str | None:
    """What is wrong with playing ``count`` deals from ``start`` in blocks of ``per_block``, in
    words after the start's option name, or ``None``."""
    if start < 1:
        return f"{start} is not a deal: the file's first is 1"
    if start > count:
        return f"{start} is past the file's last deal ({count})"
    if (start - 1) % per_block or count % per_block:
        return (f"the game plays its deals {per_block} at a time (a game's rounds): the file must hold whole games "
                f"and the start must begin one (1, {per_block + 1}, …)")
    return None
