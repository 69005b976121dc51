"""general — the General (Генерал), RULES.md §3 and §6 (TURN-2, TURN-3, GEN), seeds 001 and 003.

* 4 players in pairs, 7 each, no bazaar, no redeal.  Every deal is led with 1-1 by its holder,
  placed automatically (GEN-1).  A turn may lay two doubles, one on each end (TURN-2).
* No points are counted.  Going out with 0-0 or 6-6 among the last turn's tiles gives a
  *general* to the next seat clockwise, an opponent, counted for that pair; both at once give two
  (TURN-3, GEN-3).  The pair that reaches ``generals`` (3) loses at once (GEN-5).
* A fish is played out and void: no generals, and the next deal of the stream is dealt (GEN-2).
* ``max_deals`` (50) counts every deal played, void fish included; at the cap the pair with
  fewer generals wins, equal counts draw (GEN-6).
* A fault gives the faulting pair one general **(our choice: losing a deal otherwise costs
  nothing in this game, so a fault must)**.

Each deal's :attr:`~referee.engine.core.game.DealRecord.rule` is ``general`` (one general given),
``two_generals``, ``domino`` (out on another tile: nothing), ``void_fish`` or ``fault``.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape
from ..core.game import Game, GameOutcome, Option, Variant, register
from ..core.line import DOMINO
from ..core.state import DealState
from ..core.tiles import DOUBLE, Tile
from ..core.turns import DoublesDeal


class General(Game):
    pairs = True

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        super().__init__(variant, players, options, deals)
        self.limit = options["generals"]
        self.max_deals = options["max_deals"]

    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 7, "sleeping")

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        seat = deal.holder(DOUBLE[1])
        assert seat is not None  # all 28 tiles are dealt
        return seat, DOUBLE[1]

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        return DoublesDeal(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep)

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None and isinstance(state, DoublesDeal)
        wrote = [0, 0]
        if state.end.reason != DOMINO:
            self.rule = "void_fish"
            notes.append("fish: the deal is void, no generals (GEN-2)")
            return wrote, None
        seat = state.end.seat
        winner = self.side_of[seat]
        given = sum(DOUBLE[n] in state.last_turn for n in (0, 6))
        if not given:
            self.rule = DOMINO
            notes.append(f"seat {seat} went out: no general")
            return wrote, winner
        to = (seat + 1) % self.players
        side = self.side_of[to]
        wrote[side] = given
        self.rule = "two_generals" if given == 2 else "general"
        went = " and ".join(f"{n}-{n}" for n in (0, 6) if DOUBLE[n] in state.last_turn)
        notes.append(f"seat {seat} went out with {went}: {'two generals' if given == 2 else 'a general'} to seat {to} "
                     f"({self.names[side]})")
        return wrote, winner

    def score_fault(self, seat: int, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        side = self.side_of[seat]
        self.rule = "fault"
        notes.append(f"seat {seat} faulted: {self.names[side]} takes a general")
        return [1 if s == side else 0 for s in range(2)], 1 - side

    def game_over(self) -> GameOutcome | None:
        t = tuple(self.totals)
        lost = [s for s in range(2) if t[s] >= self.limit]
        if lost:
            s = lost[0]
            return GameOutcome(t, (1 - s,), (s,), f"{self.side_name(s)} reached {self.limit} generals")
        if self.played >= self.max_deals:
            if t[0] == t[1]:
                return GameOutcome(t, (), (), f"{self.max_deals} deals played with equal generals: drawn")
            w = 0 if t[0] < t[1] else 1
            return GameOutcome(t, (w,), (1 - w,), f"{self.max_deals} deals played: {self.side_name(w)} has fewer generals")
        return None


VARIANT = register(
    Variant(
        id="general",
        title="General (Генерал)",
        seeds="001, 003",
        players=(4,),
        options=(
            Option("generals", (3, 1, 2, 4, 5, 6, 7, 10), "the pair that reaches this many generals loses"),
            Option("max_deals", (50, 10, 20, 30, 40, 100, 200, 500), "the most deals a game lasts (void fish count); then fewer generals wins"),
        ),
        game=General,
        sense=-1,
    )
)
