"""mexican_train — Mexican Train (Мексиканский поезд), RULES.md §3 and §7 (MT-1…MT-15), seed 001.

* 2–4 players, each alone (MT-2).  Exactly seven rounds (MT-14): round k (k = 0..6) puts
  (6−k)-(6−k) on the station and is started by seat k mod n (MT-1).  The other 27 tiles are
  dealt 8 each to 2 players, 7 to 3, 6 to 4; the rest is the bazaar (the deal's shape has
  ``station=True``: deal ``i`` of a stream sets aside round ``i mod 7``'s double).
* The round itself — trains, markers, open and hanging doubles, one draw then pass, the blocked
  round — is :class:`~referee.engine.core.trains.TrainDeal`.
* After every round each player writes the plain pips left in their own hand (MT-13); after
  seven rounds the lowest total wins, and players tied for lowest share the win (MT-14).
* A fault **(our choice)**: the faulting seat writes every pip still held at the table, the
  others write nothing, so a fault never pays.

No options.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape, station_of
from ..core.errors import BadDeal, BadOption
from ..core.game import Game, GameOutcome, Variant, register
from ..core.line import DOMINO
from ..core.state import DealState
from ..core.tiles import DOUBLE, Tile, tile_name
from ..core.trains import TrainDeal, TrainsSeen

ROUNDS = 7
HAND_SIZE = {2: 8, 3: 7, 4: 6}


def station(round_: int) -> Tile:
    """The double round ``round_`` (from 0) puts on the station (MT-1)."""
    return DOUBLE[6 - round_ % ROUNDS]


class MexicanTrain(Game):
    default_deals = ROUNDS

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        if deals not in (None, ROUNDS):
            raise BadOption(f"mexican_train is always {ROUNDS} rounds (6-6 down to 0-0), not {deals}")
        super().__init__(variant, players, options, ROUNDS)

    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, HAND_SIZE[players], "bazaar", station=True)

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        k = self.played
        want = station(k)
        got = station_of(deal)
        if got != want:
            what = f"sets aside {tile_name(got)}" if got is not None else "sets aside no double"
            raise BadDeal(f"round {k} puts {tile_name(want)} on the station, but this deal {what}")
        return k % self.players, want

    def seen_table(self, lead: Tile | None) -> TrainsSeen:
        assert lead is not None  # the station
        return TrainsSeen(self.players, lead)

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        assert lead_tile is not None
        return TrainDeal(deal, leader=leader, station=lead_tile)

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None
        if state.end.reason == DOMINO:
            winner: int | None = state.end.seat
            notes.append(f"seat {winner} went out; every player writes the pips left in their own hand")
        else:
            winner = None
            notes.append(f"the round is blocked (seat {state.end.seat} placed last); every player writes the pips left in their own hand")
        return list(values), winner

    def score_fault(self, seat: int, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        held = sum(values)
        notes.append(f"seat {seat} faulted: it writes the {held} pips still held at the table, the others nothing")
        return [held if s == seat else 0 for s in range(self.players)], None

    def game_over(self) -> GameOutcome | None:
        if self.played < ROUNDS:
            return None
        t = tuple(self.totals)
        low = min(t)
        winners = tuple(s for s in range(self.players) if t[s] == low)
        losers = tuple(s for s in range(self.players) if t[s] != low)
        who = " and ".join(self.side_name(s) for s in winners)
        return GameOutcome(t, winners, losers, f"{ROUNDS} rounds played: {who} {'has' if len(winners) == 1 else 'share'} the lowest total, {low}")


VARIANT = register(
    Variant(
        id="mexican_train",
        title="Mexican Train (Мексиканский поезд)",
        seeds="001",
        players=(4, 2, 3),
        options=(),
        game=MexicanTrain,
        sense=-1,
        to_target=False,
    )
)
