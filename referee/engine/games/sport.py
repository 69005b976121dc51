"""sport — competition dominoes (Спортивное), RULES.md §3, seeds 001 and 003.

Four players in pairs, all 28 tiles dealt, no bazaar.  Deal ``k`` is led by seat ``k mod 4``
with any tile.  The pair of the player who goes out writes the opponents' pips; in a fish the
pair holding fewer pips writes the opponents' total (equal: nobody).  A match is a fixed number
of deals, a multiple of 4; the pair that wrote more wins.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape
from ..core.errors import BadOption
from ..core.game import Game, GameOutcome, Option, Variant, register
from ..core.line import DOMINO
from ..core.state import DealState
from ..core.tiles import Tile, lone_double_value, pips_of

DEFAULT_DEALS = 12


class Sport(Game):
    pairs = True
    default_deals = DEFAULT_DEALS

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        deals = DEFAULT_DEALS if deals is None else deals
        if deals <= 0 or deals % 4:
            raise BadOption(f"sport plays a multiple of 4 deals (4, 8, 12 …) so every seat leads equally often, not {deals}")
        super().__init__(variant, players, options, deals)
        self.lone_doubles = bool(options["lone_doubles"])

    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 7, "sleeping")

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        return self.played % 4, None

    def hand_value(self, hand: int) -> int:
        return lone_double_value(hand) if self.lone_doubles else pips_of(hand)

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None  # score is called on a finished deal
        pair = self.side_values(values)
        if state.end.reason == DOMINO:
            side = self.side_of[state.end.seat]
            other = 1 - side
            notes.append(f"seat {state.end.seat} went out: {self.side_name(side)} writes the {pair[other]} left with {self.side_name(other)}")
        elif pair[0] == pair[1]:
            notes.append(f"fish with equal hands ({pair[0]} each): nobody writes")
            return [0, 0], None
        else:
            side = 0 if pair[0] < pair[1] else 1
            other = 1 - side
            notes.append(f"fish: {self.side_name(side)} holds fewer pips ({pair[side]} against {pair[other]}) and writes {pair[other]}")
        wrote = [0, 0]
        wrote[side] = pair[other]
        return wrote, side

    def game_over(self) -> GameOutcome | None:
        assert self.deals is not None  # set in __init__
        if self.played < self.deals:
            return None
        a, b = self.totals
        if a == b:
            return GameOutcome((a, b), (), (), f"{self.deals} deals played, {a} all")
        win = 0 if a > b else 1
        return GameOutcome((a, b), (win,), (1 - win,), f"{self.deals} deals played, {max(a, b)} to {min(a, b)}")


VARIANT = register(
    Variant(
        id="sport",
        title="Sport dominoes (Спортивное)",
        seeds="001, 003",
        players=(4,),
        options=(Option("lone_doubles", (False, True), "a hand of only 0-0 counts 25, only 6-6 50, both 75 (§2.7)"),),
        game=Sport,
        to_target=False,
    )
)
