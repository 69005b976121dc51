"""telephone — Telephone, "houses" (Телефон, Домики), RULES.md §3 and §6 (LAY, TEL), seeds 001, 003.

* 4 players in pairs, 7 each, no bazaar; or 2 players, 7 each, the 14 left a bazaar drawn until
  a tile fits, to the last tile (TEL-1).
* First deal: the 3-2 holder leads it automatically; 3-2 in the bazaar: the highest double in a
  hand, then the heaviest tile, also forced.  Later deals: whoever ended the previous one (went
  out, or the fisherman, i.e. the last placer), any tile (TEL-2).
* The first double is the house; once tiles cover both its sides, ``up`` and ``down`` open too.
* After every placement, the forced lead included, a count of the open ends that is a positive
  multiple of 5 is written by the mover's side (LAY-6, TEL-3).
* Deal end, ``endgame=loser_pays`` (TEL-5): every player still holding tiles takes their hand,
  rounded down to a multiple of 5, off their side's score, never below 0.
  ``endgame=winner_takes`` (TEL-7): the side that went out writes the other side's hands rounded
  to the nearest 5; in a fish the side with fewer pips writes the other's total, rounded alike.
* ``scale=5`` (TEL-6) divides every amount by 5 (a deduction is floor(hand / 5)) and plays to 72.
* 225 wins, checked after each deal; both sides at 225 or more after the same deal: drawn (TEL-4).
"""

from __future__ import annotations

from typing import Any

from ..core.cross import CrossDeal
from ..core.deal import Deal, DealShape
from ..core.game import HIGHEST_FIRST, Game, GameOutcome, Option, Variant, forced_lead, register
from ..core.layout import Cross, SeenTable
from ..core.line import DOMINO
from ..core.state import DealState
from ..core.tiles import Tile, tile

LOSER_PAYS = "loser_pays"
WINNER_TAKES = "winner_takes"
THREE_TWO = tile(2, 3)


def round5(x: int) -> int:
    """To the nearest multiple of 5: 1–2 down, 3–4 up (TEL-7, MUG-5)."""
    return (x + 2) // 5 * 5


class Telephone(Game):
    pairs = True
    scores_in_play = True

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        super().__init__(variant, players, options, deals)
        self.scale = options["scale"]
        self.target = 225 if self.scale == 1 else 72

    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 7, "sleeping" if players == 4 else "bazaar")

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        if self.last is not None:
            return self.leader_after(self.last), None
        seat = deal.holder(THREE_TWO)
        if seat is not None:
            return seat, THREE_TWO
        return forced_lead(deal, HIGHEST_FIRST)

    #: the first double opens ``up`` and ``down`` at once (else once covered on both sides)
    at_once = False

    def seen_table(self, lead: Tile | None) -> SeenTable:
        return SeenTable(Cross(self.at_once))

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        return CrossDeal(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep, at_once=self.at_once, writer=self.write)

    def write(self, count: int) -> int:
        """What the mover's side writes for a count of the open ends."""
        return count // self.scale if count > 0 and count % 5 == 0 else 0

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None  # score is called on a finished deal
        names = self.names
        sides = self.side_values(values)
        wrote = [0] * len(self.sides)
        domino = state.end.reason == DOMINO
        winner = self.side_of[state.end.seat] if domino else None
        if domino:
            notes.append(f"seat {state.end.seat} went out")
        if self.options["endgame"] == LOSER_PAYS:
            for side, seats in enumerate(self.sides):
                paid = sum((values[s] // 5 * 5) // self.scale for s in seats)
                if paid:
                    wrote[side] = -min(paid, self.totals[side])
                    notes.append(f"{names[side]} takes its {paid} off its score" + (" (never below 0)" if -wrote[side] < paid else ""))
            return wrote, winner
        if not domino:
            if sides[0] == sides[1]:
                notes.append(f"fish with equal hands ({sides[0]} each): nobody writes")
                return wrote, None
            winner = 0 if sides[0] < sides[1] else 1
            notes.append(f"fish: {names[winner]} holds fewer pips ({sides[winner]} against {sides[1 - winner]})")
        assert winner is not None
        loser_total = sum(v for s, v in enumerate(sides) if s != winner)
        wrote[winner] = round5(loser_total) // self.scale
        notes.append(f"{names[winner]} writes the {loser_total} of the other side, rounded: {wrote[winner]}")
        return wrote, winner

    def game_over(self) -> GameOutcome | None:
        reached = [s for s, t in enumerate(self.totals) if t >= self.target]
        if not reached:
            return None
        if len(reached) > 1:
            return GameOutcome(tuple(self.totals), (), (), f"both sides reached {self.target} in the same deal: drawn")
        win = reached[0]
        return GameOutcome(tuple(self.totals), (win,), (1 - win,), f"{self.side_name(win)} reached {self.target}")


VARIANT = register(
    Variant(
        id="telephone",
        title='Telephone, "houses" (Телефон, Домики)',
        seeds="001, 003",
        players=(4, 2),
        options=(
            Option("scale", (1, 5), "1: write the counts as they are, to 225; 5: write them divided by 5, to 72 (003)"),
            Option("endgame", (LOSER_PAYS, WINNER_TAKES),
                   "at a deal's end: everyone holding tiles takes them off their score (001), or the winner writes the losers' hands (003)"),
        ),
        game=Telephone,
    )
)
