"""sea_kozel — Sea Kozel (Морской козёл), RULES.md §3 and §6 (TURN-2, TURN-3, TURN-10, SK), seeds 001, 002, 003.

* 2 players (7 each, a bazaar of 14 drawn until a tile fits, the last tile never drawn) or 4 in
  pairs (7 each, no bazaar).  No redeal (SK-1).  Hands count lone doubles: only 0-0 is 25, only
  6-6 is 50, exactly 0-0 and 6-6 is 75 (SK-2).  A turn may lay two doubles, one on each end
  (TURN-2); the fisherman is the last player who laid a non-double (TURN-10).
* First deal: the lowest double (1-1 … 6-6, then 0-0), else the heaviest tile, forced (SK-18).
  Later: the previous winner leads any tile; after a fish the fisherman if his side won it or
  nobody did, else the seat after him (SK-17).
* **Scores go up and only one side ever has points.**  A deal is *worth* the losers' hands
  (SK-4); the winner writes it if it is 25 or more, or, when the other side has points, wipes
  them instead (SK-5).  125 wins (SK-19).

Special deals (only one pending at a time, a new one replacing it, SK-10) and the rule that
decides each deal (:attr:`~referee.engine.core.game.DealRecord.rule`), checked in this order (SK-9):

* ``bald`` — going out with 0-0 among the last turn's tiles wins the match (TURN-3).
* ``hundred`` / ``svoyak`` — the side playing for a hundred (declared by leading 6-6 *for a
  hundred*, SK-7, or granted, SK-8) wins the match by winning the deal, and loses it by losing
  the deal while its own hands hold 25 or more; losing with less, the deal scores normally and
  the hundred is spent; a deal without a winner lets it lapse.
* ``six_six`` — going out with 6-6 wins the match if the losers hold 25 or more;
  ``six_six_hundred`` — otherwise the winner's side is granted a hundred for the next deal.
* ``fish_hundred`` — a fish with F < 25 ≤ O (F the fisherman's side, O the other's): the
  fisherman's side wins worth O and is granted a hundred (SK-11).
* ``write_off`` / ``declined`` — a fish with F > O and F ≥ 25: the fisherman decides (SK-12).
  Declining, the other side wins worth F.  Writing off, nothing is scored; the fisherman leads
  the next three deals, each scored normally, and the first his side wins worth 25 or more ends
  it; after three without, the other side is granted a hundred.
* ``eggs`` — a fish with equal totals: the next deals are led with 1-1 by its holder (2 players,
  1-1 in the bazaar: the first-deal rule); ``eggs_taken`` — the first side to win one of them
  gains the eggs plus the deal's worth under the 25 rule; inside them a fish is won by fewer
  pips and equal totals are eggs again, adding their total; ``rotten_eggs`` — the third eggs
  deal without a winner draws the match (SK-14, SK-15).
* ``write`` / ``wipe`` / ``under_25`` — normal scoring (the deal's worth written, the other
  side's points wiped, or nothing); ``fault`` — a faulting side loses the deal, scored as a
  loss (the hundred rules included).

Readings taken where §6 is silent: eggs again inside eggs deals stay the same eggs (the total
grows) and count as one of the three deals without a winner; a failed write-off and a new
special state from the same deal: the deal's own new one wins (SK-10); going out with 6-6 in an
eggs deal takes the eggs as well as applying the 6-6 rule; a fish during a hundred or a
write-off offers the write-off as in any other deal, and a deal with no winner lets a hundred
lapse; if nobody laid a non-double, the fisherman is the last placer.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape
from ..core.game import LOWEST_FIRST, Game, GameOutcome, Special, Variant, forced_lead, register
from ..core.line import DOMINO, DRAW_UNTIL_FIT, FAULT, NO_DRAW
from ..core.state import DealState
from ..core.tiles import DOUBLE, Tile, lone_double_value
from ..core.turns import DoublesDeal

TARGET = 125
WORTH = 25  # the 25 rule (SK-5)
SPECIAL_DEALS = 3  # write-off and eggs last up to three deals
HUNDRED, WRITE_OFF, EGGS = "hundred", "write_off", "eggs"


class SeaKozel(Game):
    pairs = True
    special_kinds = (HUNDRED, WRITE_OFF, EGGS)

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        super().__init__(variant, players, options, deals)
        #: the pending special state: (kind, side, deals done, eggs total); kind None: none
        self.pending: tuple[str, int, int, int] | None = None
        self.writer_seat = -1  # the fisherman leading a write-off
        self.next_leader = -1  # who leads the next ordinary deal (SK-17)
        self.verdict: GameOutcome | None = None
        self.hundred_side = -1  # the side playing for a hundred in the current deal

    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 7, "sleeping" if players == 4 else "bazaar")

    def draw_rule(self) -> tuple[str, int]:
        return (NO_DRAW, 0) if self.players == 4 else (DRAW_UNTIL_FIT, 1)

    def hand_value(self, hand: int) -> int:
        return lone_double_value(hand)

    def special(self) -> Special | None:
        if self.pending is None:
            return None
        kind, side, done, total = self.pending
        if kind == HUNDRED:
            return Special(HUNDRED, side=side)
        if kind == WRITE_OFF:
            return Special(WRITE_OFF, side=side, deal=done + 1, of=SPECIAL_DEALS)
        return Special(EGGS, deal=done + 1, of=SPECIAL_DEALS, total=total)

    def tell(self, special: Special | None) -> None:
        sp = special
        self.pending = None if sp is None else (sp.kind, -1 if sp.side is None else sp.side, (sp.deal or 1) - 1, sp.total or 0)
        self.hundred_side = sp.side if sp is not None and sp.kind == HUNDRED and sp.side is not None else -1

    # -- leads ---------------------------------------------------------------------------

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        self.hundred_side = -1
        if self.last is None:
            return forced_lead(deal, LOWEST_FIRST)  # SK-18
        kind = self.pending[0] if self.pending else None
        if kind == EGGS:
            seat = deal.holder(DOUBLE[1])
            if seat is not None:
                return seat, DOUBLE[1]
            return forced_lead(deal, LOWEST_FIRST)  # SK-14: 1-1 in the bazaar
        if kind == WRITE_OFF:
            return self.writer_seat, None
        seat = self.next_leader
        if kind == HUNDRED:
            assert self.pending is not None
            side = self.pending[1]
            self.hundred_side = side
            if self.side_of[seat] != side:
                seat = (seat + 1) % self.players  # SK-8
        return seat, None

    def new_deal(self, deal: Deal, leader: int, lead_tile: Tile | None, draw: str, keep: int) -> DealState:
        # SK-7: an ordinary later deal, the leader's side has points, the leader holds 6-6
        hundred = (self.last is not None and self.pending is None and self.totals[self.side_of[leader]] > 0
                   and bool(deal.masks[leader] >> DOUBLE[6] & 1))
        return DoublesDeal(deal, leader=leader, lead_tile=lead_tile, draw=draw, keep=keep, hundred=hundred,
                           nondouble_fisherman=True, write_off=self._may_write_off)

    def _may_write_off(self, state: DoublesDeal) -> tuple[int, ...] | None:
        """SK-12: a fish with F > O and F ≥ 25 (never inside eggs deals, SK-14) is the
        fisherman's to decide: each side's total then (lone doubles counted, SK-2), else None."""
        if self.pending is not None and self.pending[0] == EGGS:
            return None
        f = self.side_of[state.last_placer]
        sides = self.side_values([self.hand_value(h) for h in state.hands])
        return tuple(sides) if sides[f] > sides[1 - f] and sides[f] >= WORTH else None

    # -- scoring -------------------------------------------------------------------------

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        assert state.end is not None and isinstance(state, DoublesDeal)
        return self._resolve(state.end.reason, state.end.seat, values, notes, state.last_turn, state.declared,
                             state.hundred_declared)

    def score_fault(self, seat: int, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        state = self._state  # the deal being scored: a hundred may have been declared in it
        hundred = isinstance(state, DoublesDeal) and state.hundred_declared
        return self._resolve(FAULT, seat, values, notes, (), None, hundred)

    def _resolve(self, reason: str, seat: int, values: list[int], notes: list[str],
                 last_turn: tuple[Tile, ...], declared: str | None,
                 hundred_declared: bool) -> tuple[list[int], int | None]:
        names = self.names
        sides = self.side_values(values)
        wrote = [0, 0]
        pending = self.pending
        kind = pending[0] if pending else None
        eggs = pending[3] if pending and kind == EGGS else 0
        if hundred_declared:  # also when the deal's fish decision came after it (SK-9, SK-12)
            self.hundred_side = self.side_of[self._lead[0]]
            notes.append(f"{names[self.hundred_side]} plays this deal for a hundred (declared with 6-6)")
        new: tuple[str, int, int, int] | None = None  # a special state this deal starts
        winner: int | None = None
        worth = 0
        rule = ""
        # -- who won the deal, and what it is worth
        if reason == DOMINO:
            winner = self.side_of[seat]
            worth = sides[1 - winner]
            notes.append(f"seat {seat} went out: {names[winner]} wins the deal, worth {worth}")
            self.next_leader = seat
        elif reason == FAULT:
            winner = 1 - self.side_of[seat]
            worth = sides[1 - winner]
            rule = "fault"
            notes.append(f"seat {seat} faulted: {names[winner]} wins the deal, worth {worth}")
            self.next_leader = (seat + 1) % self.players
        else:
            winner, worth, rule, new = self._fish(seat, sides, kind, declared, notes)
        # -- bald, then the hundred, then the 6-6 rule, then normal scoring (SK-9)
        if reason == DOMINO and DOUBLE[0] in last_turn:
            assert winner is not None
            return self._match(winner, "bald", f"{names[winner]} went out with 0-0: bald, the match is won", notes)
        h = self.hundred_side
        if h >= 0:
            if winner == h:
                return self._match(h, HUNDRED, f"{names[h]} won its deal for a hundred: the match is won", notes)
            if winner is not None and sides[h] >= WORTH:
                return self._match(1 - h, "svoyak", f"{names[h]} lost its deal for a hundred holding {sides[h]}: "
                                   "svoyak, the match is lost", notes)
            notes.append(f"the hundred of {names[h]} is spent" + ("" if winner is not None else " (no winner)"))
        if reason == DOMINO and DOUBLE[6] in last_turn:
            assert winner is not None
            if worth >= WORTH:
                return self._match(winner, "six_six", f"{names[winner]} went out with 6-6 and the losers hold {worth}: "
                                   "the match is won", notes)
            rule = "six_six_hundred"
            new = (HUNDRED, winner, 0, 0)
            notes.append(f"{names[winner]} went out with 6-6, the losers holding under 25: "
                         f"{names[winner]} plays the next deal for a hundred")
        if winner is not None:
            rule = self._write(winner, worth, eggs, rule, wrote, notes)
        # -- the special state for the next deal (SK-10)
        after = None
        if kind == EGGS and winner is None and new is None:
            assert pending is not None
            done = pending[2] + 1
            total = eggs + sum(sides)
            if done >= SPECIAL_DEALS:
                self.rule = "rotten_eggs"
                self.verdict = GameOutcome(tuple(self.totals), (), (), f"the eggs are rotten after {SPECIAL_DEALS} deals: drawn")
                notes.append("rotten eggs: the match is drawn")
                self.pending = None
                return wrote, None
            rule = EGGS
            notes.append(f"eggs again: {total} wait ({done} of {SPECIAL_DEALS} eggs deals played)")
            after = (EGGS, -1, done, total)
        elif kind == WRITE_OFF:
            assert pending is not None
            side = pending[1]
            if winner == side and worth >= WORTH:
                notes.append(f"{names[side]} wins worth {worth}: the fish is written off")
            elif pending[2] + 1 >= SPECIAL_DEALS:
                notes.append(f"the fish was not written off in {SPECIAL_DEALS} deals: {names[1 - side]} plays the next deal "
                             "for a hundred")
                after = (HUNDRED, 1 - side, 0, 0)
            else:
                after = (WRITE_OFF, side, pending[2] + 1, 0)
        self.pending = new if new is not None else after
        self.rule = rule
        return wrote, winner

    def _fish(self, seat: int, sides: list[int], kind: str | None, declared: str | None,
              notes: list[str]) -> tuple[int | None, int, str, tuple[str, int, int, int] | None]:
        """A fished deal, ``seat`` the fisherman (SK-11, SK-12, eggs): the side that wins it
        (``None``: none), what it is worth, the rule and the special state it starts."""
        names = self.names
        new: tuple[str, int, int, int] | None = None
        winner: int | None = None
        worth = 0
        rule = ""
        f = self.side_of[seat]
        big_f, big_o = sides[f], sides[1 - f]
        notes.append(f"fish, seat {seat} the fisherman: {names[f]} holds {big_f}, {names[1 - f]} {big_o}")
        if kind == EGGS:
            if big_f != big_o:
                winner = f if big_f < big_o else 1 - f
                worth = sides[1 - winner]
                notes.append(f"in an eggs deal the fewer pips win: {names[winner]}, worth {worth}")
        elif declared == "write_off":
            rule = WRITE_OFF
            new = (WRITE_OFF, f, 0, 0)
            self.writer_seat = seat
            notes.append(f"seat {seat} writes off the fish: nothing is scored, and leads the next deals (SK-12)")
        elif declared == "decline":
            rule = "declined"
            winner = 1 - f
            worth = big_f
            notes.append(f"seat {seat} declines to write off the fish: {names[winner]} wins, worth {worth}")
        elif big_f == big_o:
            rule = EGGS
            new = (EGGS, -1, 0, sum(sides))
            notes.append(f"eggs: equal totals; the {sum(sides)} wait for the next deals, led with 1-1")
        elif big_f < WORTH <= big_o:
            rule = "fish_hundred"
            winner, worth = f, big_o
            new = (HUNDRED, f, 0, 0)
            notes.append(f"{names[f]} holds under 25 and the other side 25 or more: {names[f]} wins, worth {worth}, "
                         "and plays the next deal for a hundred (SK-11)")
        else:
            winner = f if big_f < big_o else 1 - f
            worth = sides[1 - winner]
            notes.append(f"{names[winner]} holds fewer pips and wins, worth {worth}")
        won = winner == f or winner is None
        self.next_leader = seat if won else (seat + 1) % self.players  # SK-17
        return winner, worth, rule, new

    def _write(self, winner: int, worth: int, eggs: int, rule: str, wrote: list[int], notes: list[str]) -> str:
        """Normal scoring of a won deal worth ``worth`` (and the eggs waiting): 25 or more is
        written, or wipes the losers' total; the rule it was scored by."""
        names = self.names
        amount = worth + eggs
        if eggs:
            notes.append(f"{names[winner]} takes the eggs: {eggs} + {worth}")
        if amount >= WORTH:
            loser = 1 - winner
            if self.totals[loser] > 0:
                wrote[loser] = -self.totals[loser]
                notes.append(f"{names[winner]}'s {amount} wipes the {self.totals[loser]} of {names[loser]}")
                rule = rule or "wipe"
            else:
                wrote[winner] = amount
                rule = rule or "write"
        else:
            notes.append(f"worth {amount}, under 25: nothing is written")
            rule = rule or "under_25"
        if eggs:
            rule = "eggs_taken" if rule in ("write", "wipe", "under_25", "fault") else rule
        return rule

    def _match(self, side: int, rule: str, text: str, notes: list[str]) -> tuple[list[int], int | None]:
        notes.append(text)
        self.rule = rule
        self.pending = None
        score = [max(t, TARGET) if s == side else t for s, t in enumerate(self.totals)]
        self.verdict = GameOutcome(tuple(self.totals), (side,), (1 - side,), text, score=tuple(score))
        return [0, 0], side

    def game_over(self) -> GameOutcome | None:
        if self.verdict is not None:
            return self.verdict
        reached = [s for s, t in enumerate(self.totals) if t >= TARGET]
        if reached:
            s = reached[0]
            return GameOutcome(tuple(self.totals), (s,), (1 - s,), f"{self.side_name(s)} reached {TARGET}")
        return None


VARIANT = register(
    Variant(
        id="sea_kozel",
        title="Sea Kozel (Морской козёл)",
        seeds="001, 002, 003",
        players=(4, 2),
        options=(),
        game=SeaKozel,
    )
)
