"""blitz — Blitz (Блиц), RULES.md §3 and §6 (TURN-8, BL), seed 003.

The whole four-player individual kozel (BL-1, kozel with ``teams=none`` and its defaults): 7
tiles each, no bazaar, the redeal, 1-1 forced in the first deal and later the player who ended
the last deal leading any tile, every loser writing their own hand (lone 0-0 = 25, 6-6 = 50), a
fish written by the single player holding the most (a tie for most: eggs, carried), the rule of
13 dropping, the goat at 101.  The turn is a compulsory chain (TURN-8): after each tile a player
who can place another must, on any end, one move per tile; the lead, a forced 1-1 included,
starts one; going out mid-chain ends the deal; the chain's player is the fisherman.  No options
(BL-2).

Each deal's :attr:`~referee.engine.core.game.DealRecord.rule` is ``domino``, ``fish``, ``eggs`` or
``fault``.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal
from ..core.game import Variant, register
from ..core.layout import Line, SeenTable
from ..core.line import FAULT, FISH
from ..core.state import DealState
from ..core.tiles import Tile
from ..core.turns import ChainDeal
from .kozel import HEAVIER_TAKES_ALL, Kozel

RULES = {"teams": "none", "rule13": "drop", "fish": HEAVIER_TAKES_ALL, "zero_zero": 25, "target": 100}


class Blitz(Kozel):
    @classmethod
    def rules(cls, options: dict[str, Any]) -> dict[str, Any]:
        return RULES

    def seen_table(self, lead: Tile | None) -> SeenTable:
        return SeenTable(Line(), chains=True)

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        return ChainDeal(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep)

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        wrote, winner = super().score(state, values, notes)
        assert state.end is not None
        eggs = state.end.reason == FISH and values.count(max(values)) > 1  # a tie for the most
        self.rule = "eggs" if eggs else state.end.reason
        return wrote, winner

    def score_fault(self, seat: int, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        self.rule = FAULT
        return super().score_fault(seat, values, notes)


VARIANT = register(
    Variant(
        id="blitz",
        title="Blitz (Блиц)",
        seeds="003",
        players=(4,),
        options=(),
        game=Blitz,
        sense=-1,
    )
)
