"""draw — dominoes with a bazaar (С базаром), RULES.md §3 and §5, seed 000.

2–4 players, each alone: 7 tiles each for two, 5 each for three or four; the rest is the
bazaar, drawn until a tile fits.  The first deal (and every deal after a drawn one) is led by
the holder of the highest double with it, or, with no double in any hand, by the heaviest tile;
otherwise the previous deal's winner leads any tile.  Going out writes every opponent's pips; in
a fish the player with the fewest pips writes the others' total less their own (a tie for
fewest: nobody writes, the deal is drawn).  The first to reach the target (100) wins.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape
from ..core.game import HIGHEST_FIRST, Game, GameOutcome, Option, Variant, fish_fewest, forced_lead, register
from ..core.line import DOMINO
from ..core.state import DealState
from ..core.tiles import Tile, lone_double_value


class Draw(Game):
    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 7 if players == 2 else 5, "bazaar")

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        if self.last is not None and self.last.winner is not None:
            return self.last.winner, None
        return forced_lead(deal, HIGHEST_FIRST)

    def hand_value(self, hand: int) -> int:
        if self.options["lone_doubles"]:
            return lone_double_value(hand)
        return super().hand_value(hand)

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None  # score is called on a finished deal
        wrote = [0] * self.players
        if state.end.reason == DOMINO:
            winner = state.end.seat
            wrote[winner] = sum(values) - values[winner]
            notes.append(f"seat {winner} went out and writes the {wrote[winner]} left in the other hands")
            return wrote, winner
        fewest = fish_fewest(values)
        if fewest is None:
            notes.append(f"fish with a tie for fewest pips ({min(values)}): nobody writes, the deal is drawn")
            return wrote, None
        winner = fewest
        others = sum(values) - values[winner]
        wrote[winner] = others - values[winner]
        notes.append(f"fish: seat {winner} holds the fewest pips ({values[winner]}) and writes {others} less {values[winner]}")
        return wrote, winner

    def game_over(self) -> GameOutcome | None:
        return self.to_target_outcome(self.options["target"])


VARIANT = register(
    Variant(
        id="draw",
        title="Dominoes with a bazaar (С базаром)",
        seeds="000",
        players=(2, 3, 4),
        options=(
            Option("target", (100, 50, 150), "the first to reach this total wins"),
            Option("lone_doubles", (False, True), "a hand of only 0-0 counts 25, only 6-6 50, both 75 (§2.7)"),
        ),
        game=Draw,
        default_players=2,
    )
)
