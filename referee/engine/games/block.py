"""block — dominoes without a bazaar (Без базара), RULES.md §3 and §5, seed 000.

As :mod:`draw`, except for the deal: two players take 7 each (14 sleep), three take 6 each
(10 sleep), four take 7 each; a player who cannot place passes.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import DealShape
from ..core.game import Variant, register
from .draw import VARIANT as DRAW
from .draw import Draw


class Block(Draw):
    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 6 if players == 3 else 7, "sleeping")


VARIANT = register(
    Variant(
        id="block",
        title="Dominoes without a bazaar (Без базара)",
        seeds="000",
        players=(2, 3, 4),
        options=DRAW.options,
        game=Block,
        default_players=2,
    )
)
