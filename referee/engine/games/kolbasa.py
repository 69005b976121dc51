"""kolbasa — the sausage (Колбаса), RULES.md §3 and §7 (KB-1…KB-15), seeds 001 and 003.

* 2 players; each gets a row of 14 face-down tiles, all 28 dealt (KB-8: a deal lists each row
  left to right, the last tile listed is turned up first).  The deal itself — turning up,
  tails, two lines, knives, inserted doubles, fish — is :class:`~referee.engine.core.kolbasa.KolbasaDeal`.
* Seat 0 starts the first deal; later deals, whoever ended the previous one (KB-10).
* Out of tiles: that seat wins and the other writes the pips of its row.  A fish: the row with
  fewer pips wins and the other writes its own row; equal rows are eggs — nobody writes, and
  one row's pips are added to the next write (KB-11, KB-12).  101 or more is the goat and ends
  the game.  No rule of 13, no lone-double values, no options.
* A fault **(our choice, as in kozel)**: the faulting seat writes its own row (and any eggs).
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape
from ..core.game import Game, GameOutcome, Variant, register
from ..core.kolbasa import KolbasaDeal
from ..core.line import DOMINO
from ..core.state import DealState
from ..core.tiles import Tile

GOAT = 101


class Kolbasa(Game):
    face_down_rows = True

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        super().__init__(variant, players, options, deals)
        self.eggs = 0  # pips waiting for the next write (KB-11)

    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 14, "sleeping")

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        return (0 if self.last is None else self.leader_after(self.last)), None

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        return KolbasaDeal(deal, leader=leader)

    def _write(self, loser: int, values: list[int], notes: list[str]) -> list[int]:
        wrote = [0, 0]
        wrote[loser] = values[loser] + self.eggs
        if self.eggs:
            notes.append(f"the {self.eggs} pips of the eggs go with it")
            self.eggs = 0
        return wrote

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None
        if state.end.reason == DOMINO:
            winner = state.end.seat
            loser = 1 - winner
            notes.append(f"seat {winner} is out of tiles: seat {loser} writes the {values[loser]} pips of its row")
        elif values[0] == values[1]:
            self.eggs += values[0]
            notes.append(f"fish with equal rows ({values[0]} each): eggs, nobody writes and {values[0]} waits for the next write")
            return [0, 0], None
        else:
            winner = 0 if values[0] < values[1] else 1
            loser = 1 - winner
            notes.append(f"fish: seat {winner}'s row is lighter ({values[winner]} against {values[loser]}); seat {loser} writes its {values[loser]}")
        return self._write(loser, values, notes), winner

    def score_fault(self, seat: int, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        notes.append(f"seat {seat} faulted: it loses the deal and writes its own row, {values[seat]}")
        return self._write(seat, values, notes), 1 - seat

    def game_over(self) -> GameOutcome | None:
        t = tuple(self.totals)
        goats = tuple(s for s in range(2) if t[s] >= GOAT)
        if not goats:
            return None
        winners = tuple(s for s in range(2) if s not in goats)
        return GameOutcome(t, winners, goats, " and ".join(f"seat {s}" for s in goats) + f" reached {GOAT}: the goat")


VARIANT = register(
    Variant(
        id="kolbasa",
        title="Kolbasa, the sausage (Колбаса)",
        seeds="001, 003",
        players=(2,),
        options=(),
        game=Kolbasa,
        sense=-1,
        default_players=2,
    )
)
