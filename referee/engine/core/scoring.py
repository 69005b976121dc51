"""Score-keeping rules shared by several games: the rule of 13 and carried eggs or pots.

Kozel and its relatives (osel, blitz) plug these into their ``score`` hooks; RULES.md §3
(kozel) and §5 ("Rule of 13", "Eggs and pots") define them.
"""

from __future__ import annotations

DROP, HANG, REMEMBER, FORGET = "drop", "hang", "remember", "forget"


class Rule13:
    """While a side has nothing written (a total of 0), small writes do not open its account.

    * ``drop``: a write under 13 is dropped (000).
    * ``hang``: a write under 13 waits and is added to that side's next write; the sum is
      tested again and keeps hanging while still under 13 (001).
    * ``remember``: a deal's own sum of 12 or less is remembered ("+7"); a later sum over 12
      opens the account and brings the remembered points with it (002).  :meth:`clear` wipes
      them (going out, or another side taking a whole fish).
    * ``forget`` (osel, RULES.md §6 OS-3): as ``hang``, but a deal that gives the side nothing
      forgets what hangs (001, 003: "sums under 13 hang and are forgotten if in the next deal
      nothing is written on that side").

    Hanging and remembered points are not part of the total: they neither count towards the
    goat nor spoil a dry win (RULES.md §5).
    """

    def __init__(self, mode: str, sides: int) -> None:
        self.mode = mode
        self.pending = [0] * sides

    def apply(self, side: int, amount: int, total: int, name: str, notes: list[str]) -> int:
        """What ``side`` (with ``total`` written so far) actually writes of ``amount``."""
        pending = self.pending[side]
        if amount <= 0 or total > 0:
            if self.mode == FORGET and pending and amount <= 0:
                notes.append(f"rule of 13: {name} was given nothing, so the {pending} that hung is forgotten")
                self.pending[side] = 0
            return max(amount, 0)
        if self.mode == DROP:
            if amount < 13:
                notes.append(f"rule of 13: {name} has nothing written, so {amount} is dropped")
                return 0
            return amount
        if self.mode == HANG or self.mode == FORGET:
            amount += pending
            if amount < 13:
                self.pending[side] = amount
                notes.append(f"rule of 13: {amount} hangs for {name}")
                return 0
            if pending:
                notes.append(f"rule of 13: {name} adds the {pending} that was hanging")
            self.pending[side] = 0
            return amount
        # REMEMBER
        if amount <= 12:
            self.pending[side] = pending + amount
            notes.append(f"rule of 13: {name} remembers +{amount} (now +{pending + amount})")
            return 0
        if pending:
            notes.append(f"rule of 13: {name} opens with {amount} and adds its remembered +{pending}")
        self.pending[side] = 0
        return amount + pending

    def clear(self, side: int, name: str, notes: list[str]) -> None:
        if self.mode == REMEMBER and self.pending[side]:
            notes.append(f"rule of 13: {name}'s remembered +{self.pending[side]} is cleared")
            self.pending[side] = 0


class Carry:
    """Points from eggs (or a tied "fish for one") waiting for the next deal's largest write.

    They go to the one side with the largest write of the next played deal; if that is tied or
    nobody writes, they wait and add up (RULES.md §5).  They are added before the rule of 13.
    """

    def __init__(self) -> None:
        self.amount = 0

    def add(self, amount: int) -> None:
        self.amount += amount

    def award(self, raw: list[int], names: list[str], notes: list[str]) -> None:
        """Add the carried points to the unique largest entry of ``raw`` (in place)."""
        if not self.amount:
            return
        top = max(raw)
        leaders = [s for s, v in enumerate(raw) if v == top]
        if top <= 0 or len(leaders) > 1:
            notes.append(f"the {self.amount} carried points wait for another deal")
            return
        side = leaders[0]
        raw[side] += self.amount
        notes.append(f"{names[side]} also takes the {self.amount} carried points")
        self.amount = 0
