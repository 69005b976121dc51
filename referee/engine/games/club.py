"""club — the club's Kozel page, RULES.md §3 and §5, seed 004.

2–4 players, each alone, 7 tiles each; the rest (14, 7 or 0) is the bazaar.  Every deal is led
by the holder of 6-6 with it, else by the highest double in any hand, else by the heaviest tile.
A player who cannot place draws one tile and places it if it fits; otherwise the turn passes.
Going out writes every opponent's pips; in a fish the fewest pips writes the others' total (a
tie: nobody).  Points are plain pips, and the first to reach 101 wins.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape
from ..core.game import HIGHEST_FIRST, Game, GameOutcome, Variant, fish_fewest, forced_lead, register
from ..core.line import DOMINO, DRAW_ONE
from ..core.state import DealState
from ..core.tiles import Tile

TARGET = 101


class Club(Game):
    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 7, "bazaar")

    def draw_rule(self) -> tuple[str, int]:
        return (DRAW_ONE, 0)  # with four players the bazaar is empty

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        return forced_lead(deal, HIGHEST_FIRST)

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None  # score is called on a finished deal
        wrote = [0] * self.players
        if state.end.reason == DOMINO:
            winner = state.end.seat
            notes.append(f"seat {winner} went out")
        else:
            fewest = fish_fewest(values)
            if fewest is None:
                notes.append(f"fish with a tie for fewest pips ({min(values)}): a drawn deal, nobody writes")
                return wrote, None
            winner = fewest
            notes.append(f"fish: seat {winner} holds the fewest pips ({values[winner]})")
        wrote[winner] = sum(values) - values[winner]
        notes[-1] += f" and writes the {wrote[winner]} in the other hands"
        return wrote, winner

    def game_over(self) -> GameOutcome | None:
        return self.to_target_outcome(TARGET)


VARIANT = register(
    Variant(
        id="club",
        title="The club's Kozel page",
        seeds="004",
        players=(2, 3, 4),
        options=(),
        game=Club,
        default_players=2,
    )
)
