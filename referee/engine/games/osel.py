"""osel — the donkey (Осёл), RULES.md §3 and §6 (LAY, TURN-4…TURN-7, OS), seeds 001 and 003.

Kozel with kozel's defaults fixed (OS-1, OS-2: 4 players in pairs with no bazaar, or 2–3 alone
with a bazaar whose last tile is never drawn; the redeal; kozel's leads; the heavier side takes
a fish; lone 0-0 = 25, lone 6-6 = 50; the goat at 101), played on a cross:

* the first double laid opens ``up`` and ``down`` at once (LAY-4, LAY-5);
* after the turn's one tile the player may add doubles, one per open end not used this turn,
  or stop (TURN-4); a double placed once the cross exists may be laid closed (TURN-5);
* while no double is on the table and the lead was not a double, closing both line ends with
  two doubles ends the deal as a kozel fish, the closer the fisherman (TURN-6, OS-4);
* the rule of 13 hangs small writes and forgets them after a deal that gives the side nothing
  (OS-3).

The game has no options.
"""

from __future__ import annotations

from typing import Any

from ..core.cross import CrossDeal
from ..core.deal import Deal
from ..core.game import Variant, register
from ..core.layout import Cross, SeenTable
from ..core.scoring import FORGET
from ..core.state import DealState
from ..core.tiles import Tile
from .kozel import HEAVIER_TAKES_ALL, Kozel

RULES = {"teams": "pairs", "rule13": FORGET, "fish": HEAVIER_TAKES_ALL, "zero_zero": 25, "target": 100}


class Osel(Kozel):
    @classmethod
    def rules(cls, options: dict[str, Any]) -> dict[str, Any]:
        return RULES

    #: the first double opens ``up`` and ``down`` at once (else once covered on both sides)
    at_once = True

    def seen_table(self, lead: Tile | None) -> SeenTable:
        return SeenTable(Cross(self.at_once))

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        return CrossDeal(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep, at_once=self.at_once, extras=True)


VARIANT = register(
    Variant(
        id="osel",
        title="Osel, the donkey (Осёл)",
        seeds="001, 003",
        players=(4, 2, 3),
        options=(),
        game=Osel,
        sense=-1,
    )
)
