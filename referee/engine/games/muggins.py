"""muggins — Muggins, "All Fives" (Маггинс), RULES.md §3 and §6 (LAY, MUG), seeds 001 and 003.

* 2–4 players, each alone (MUG-1): 7 tiles each for two, 5 each for three or four; the rest is a
  bazaar drawn until a tile fits, to the last tile (MUG-2).
* First deal, and the deal after a fish with a tie for fewest: the highest double in a hand
  leads, forced; with none, the heaviest tile, forced.  Otherwise the previous deal's winner
  leads any tile (MUG-3).
* The first double is the spinner: ``up`` and ``down`` open once it is covered on both sides.
* After every placement, the forced lead included, a count of the open ends that is a positive
  multiple of 5 is written by the mover (LAY-6).
* Going out writes 10 more (MUG-4).  A fish: the fewest pips writes the others' total less their
  own, rounded to the nearest 5; a tie for fewest writes nothing (MUG-5).
* 200 wins, checked after each deal; several at 200 or more: the highest wins, equal highest
  draw, and a drawn game names no losers (MUG-6, X-0).  No options.
"""

from __future__ import annotations

from ..core.cross import CrossDeal
from ..core.deal import Deal
from ..core.game import GameOutcome, Variant, fish_fewest, register
from ..core.layout import Cross, SeenTable
from ..core.line import DOMINO
from ..core.state import DealState
from ..core.tiles import Tile, pips_of
from .draw import Draw
from .telephone import round5

TARGET = 200
DOMINO_BONUS = 10


class Muggins(Draw):
    """draw's deal and leads (MUG-2, MUG-3), a spinner, and All Fives scoring."""

    scores_in_play = True

    def hand_value(self, hand: int) -> int:
        return pips_of(hand)

    #: the first double opens ``up`` and ``down`` at once (else once covered on both sides)
    at_once = False

    def seen_table(self, lead: Tile | None) -> SeenTable:
        return SeenTable(Cross(self.at_once))

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        return CrossDeal(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep, at_once=self.at_once, writer=self.write)

    @staticmethod
    def write(count: int) -> int:
        return count if count > 0 and count % 5 == 0 else 0

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None  # score is called on a finished deal
        wrote = [0] * self.players
        if state.end.reason == DOMINO:
            winner = state.end.seat
            wrote[winner] = DOMINO_BONUS
            notes.append(f"seat {winner} went out and writes {DOMINO_BONUS}")
            return wrote, winner
        fewest = fish_fewest(values)
        if fewest is None:
            notes.append(f"fish with a tie for fewest pips ({min(values)}): nobody writes")
            return wrote, None
        winner = fewest
        others = sum(values) - values[winner]
        wrote[winner] = round5(others - values[winner])
        notes.append(f"fish: seat {winner} holds the fewest pips ({values[winner]}) and writes {others} less "
                     f"{values[winner]}, rounded: {wrote[winner]}")
        return wrote, winner

    def game_over(self) -> GameOutcome | None:
        top = max(self.totals)
        if top < TARGET:
            return None
        best = tuple(s for s, t in enumerate(self.totals) if t == top)
        if len(best) > 1:  # a drawn game names no losers
            return GameOutcome(tuple(self.totals), (), (), f"{' and '.join(self.side_name(s) for s in best)} reached {top}: drawn")
        losers = tuple(s for s in range(self.players) if s not in best)
        return GameOutcome(tuple(self.totals), best, losers, f"{self.side_name(best[0])} reached {TARGET} with {top}")


VARIANT = register(
    Variant(
        id="muggins",
        title='Muggins, "All Fives" (Маггинс)',
        seeds="001, 003",
        players=(2, 3, 4),
        options=(),
        game=Muggins,
        default_players=2,
    )
)
