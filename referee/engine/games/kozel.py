"""kozel — the goat (Козёл), RULES.md §3 and §5, seeds 000 (default), 001, 002, 003.

Penalty points: the side that loses a deal writes on itself, and the side whose total first
passes the target (101 by default) is the goat.

* 4 players in pairs (default): 7 tiles each, no bazaar; the 1-1 holder leads the first deal
  with it; later deals are led, with any tile, by whoever ended the previous deal.
* ``teams=none`` with 4 players, or 2–3 players: everyone alone.  2–3 players have a bazaar
  whose last tile is never drawn; their first lead is the lowest double (1-1 … 6-6, then 0-0)
  or, with no double in any hand, the heaviest tile.
* Every deal with 5+ doubles or 6+ tiles of a suit in one hand is void and redealt.
* Hands are valued with lone doubles: only 0-0 is 25 (``zero_zero=10``: 10), only 6-6 is 50,
  0-0 with 6-6 is 12.
* ``rule13`` (drop | hang | remember) and ``fish`` (heavier_pair_takes_all | each_writes_own |
  max_takes_all) are the house rules of 000, 001 and 002; eggs and pots wait for the next
  deal's largest write.
"""

from __future__ import annotations

from typing import Any

from ..core.deal import Deal, DealShape
from ..core.game import LOWEST_FIRST, Game, GameOutcome, Option, Variant, forced_lead, redeal_reason, register
from ..core.line import DOMINO, DRAW_UNTIL_FIT, NO_DRAW
from ..core.scoring import REMEMBER, Carry, Rule13
from ..core.state import DealState
from ..core.tiles import DOUBLE, NOT_LONE, Tile, lone_double_value, pips_of

HEAVIER_TAKES_ALL = "heavier_pair_takes_all"
EACH_WRITES_OWN = "each_writes_own"
MAX_TAKES_ALL = "max_takes_all"


class Kozel(Game):
    pairs = True

    def __init__(self, variant: Variant, players: int, options: dict[str, Any], deals: int | None) -> None:
        super().__init__(variant, players, options, deals)
        rules = self.rules(options)
        self.rule13 = Rule13(rules["rule13"], len(self.sides))
        self.fish_mode = rules["fish"]
        self.zero_zero = rules["zero_zero"]
        self.target = rules["target"]
        self.carry = Carry()

    @classmethod
    def rules(cls, options: dict[str, Any]) -> dict[str, Any]:
        """The kozel settings this game plays by: its options (osel fixes them instead)."""
        return options

    @classmethod
    def uses_pairs(cls, players: int, options: dict[str, Any]) -> bool:
        return players == 4 and cls.rules(options)["teams"] == "pairs"

    @classmethod
    def deal_shape(cls, players: int, options: dict[str, Any]) -> DealShape:
        return DealShape(players, 7, "sleeping" if players == 4 else "bazaar")

    def draw_rule(self) -> tuple[str, int]:
        # 2–3 players: draw until a tile fits; the last bazaar tile is never drawn (001, 003).
        return (NO_DRAW, 0) if self.players == 4 else (DRAW_UNTIL_FIT, 1)

    def void_reason(self, deal: Deal) -> str | None:
        return redeal_reason(deal)

    def choose_lead(self, deal: Deal) -> tuple[int, Tile | None]:
        if self.last is not None:
            return self.leader_after(self.last), None
        if self.players == 4:
            seat = deal.holder(DOUBLE[1])
            assert seat is not None  # all 28 tiles are dealt
            return seat, DOUBLE[1]
        return forced_lead(deal, LOWEST_FIRST)

    def hand_value(self, hand: int) -> int:
        if hand & NOT_LONE or not hand:
            return pips_of(hand)  # the common cases (and the empty hand of who went out), without lone_double_value's call
        return lone_double_value(hand, zero_zero=self.zero_zero, six_six=50, both=None)

    def score(self, state: DealState, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        end = state.end
        assert end is not None  # score is called on a finished deal
        names = self.names
        sides = self.side_values(values)
        if end.reason == DOMINO:  # the common case first: every other side writes what it holds
            out = self.side_of[end.seat]
            notes.append(f"seat {end.seat} went out: {names[out]} wins the deal")
            self.rule13.clear(out, names[out], notes)
            sides[out] = 0
            return self._settle(sides, names, notes), out
        total = sum(values)
        raw = [0] * len(self.sides)
        winner: int | None = None
        mode = self.fish_mode
        if mode == EACH_WRITES_OWN:
            notes.append("fish for all: every side writes its own hands")
            raw = list(sides)
        else:
            # heavier_pair_takes_all compares sides; max_takes_all compares single hands.
            compared = sides if mode == HEAVIER_TAKES_ALL else values
            top = max(compared)
            at_top = [i for i, v in enumerate(compared) if v == top]
            if len(at_top) > 1:
                what = "eggs" if mode == HEAVIER_TAKES_ALL else "a tie for most"
                notes.append(f"fish with {what} ({top} each): nobody writes, the {total} points wait for the next deal")
                self.carry.award(raw, names, notes)
                self.carry.add(total)
                # nobody writes; under osel's rule of 13 that forgets what hangs (OS-3)
                return [self.rule13.apply(s, 0, self.totals[s], names[s], notes) for s in range(len(raw))], None
            taker = at_top[0] if mode == HEAVIER_TAKES_ALL else self.side_of[at_top[0]]
            who = names[taker] if mode == HEAVIER_TAKES_ALL else f"seat {at_top[0]}"
            notes.append(f"fish: {who} holds the most ({top}); {names[taker]} takes all {total} points")
            raw[taker] = total
            winner = None
            for side in range(len(self.sides)):
                if side != taker:
                    self.rule13.clear(side, names[side], notes)
            if len(self.sides) == 2:
                winner = 1 - taker
        return self._settle(raw, names, notes), winner

    def score_fault(self, seat: int, values: list[int], notes: list[str]) -> tuple[list[int], int | None]:
        names = self.names
        loser = self.side_of[seat]
        held = self.side_values(values)[loser]
        notes.append(f"seat {seat} faulted: {names[loser]} loses the deal and writes its own {held}")
        raw = [held if s == loser else 0 for s in range(len(self.sides))]
        return self._settle(raw, names, notes), (1 - loser if len(self.sides) == 2 else None)

    def _settle(self, raw: list[int], names: list[str], notes: list[str]) -> list[int]:
        """Give carried eggs to the largest write, then apply the rule of 13 side by side."""
        if self.carry.amount:
            self.carry.award(raw, names, notes)
        apply = self.rule13.apply
        totals = self.totals
        # A side with points written already writes what it is given (Rule13.apply's first case).
        return [w if w > 0 and totals[s] > 0 else apply(s, w, totals[s], names[s], notes) for s, w in enumerate(raw)]

    def game_over(self) -> GameOutcome | None:
        limit = self.target + 1
        for t in self.totals:
            if t >= limit:
                break
        else:
            return None  # the common case, without building the goats
        goats = tuple(s for s, t in enumerate(self.totals) if t >= limit)
        if not goats:
            return None
        winners = tuple(s for s in range(len(self.sides)) if s not in goats)
        dry = tuple(s for s in winners if self.totals[s] == 0)
        who = " and ".join(self.side_name(s) for s in goats)
        reason = f"{who} reached {limit}: {'goats' if len(goats) > 1 or self.pair_play else 'the goat'}"
        if not winners:  # every side a goat in the same deal: drawn, and a drawn game names no losers
            return GameOutcome(tuple(self.totals), (), (), reason + ": drawn")
        if dry:
            reason += f"; {' and '.join(self.side_name(s) for s in dry)} won dry"
        return GameOutcome(tuple(self.totals), winners, goats, reason, dry)


VARIANT = register(
    Variant(
        id="kozel",
        title="Kozel, the goat (Козёл)",
        seeds="000, 001, 002, 003",
        players=(4, 2, 3),
        options=(
            Option("teams", ("pairs", "none"), "4 players: pairs (000) or everyone alone (002's tables)", players=(4,)),
            Option("rule13", ("drop", "hang", REMEMBER), "while a side has nothing written: drop (000), hang (001) or remember (002) writes under 13"),
            Option("fish", (HEAVIER_TAKES_ALL, EACH_WRITES_OWN, MAX_TAKES_ALL),
                   "who writes a fish: the heavier side takes all (000), everyone writes their own, or the heaviest hand takes all (002)"),
            Option("zero_zero", (25, 10), "what a hand of only 0-0 counts"),
            Option("target", (100, 50, 150), "the goat is the side that passes this total"),
        ),
        game=Kozel,
        sense=-1,
    )
)
