"""Time controls: how long a bot has to start and to move, measured by the referee.

A :class:`TimeControl` is a value set on the command line (or in a league file).  Each bot gets
one :class:`Clock` per match; the referee asks it for the allowance of every move and charges it
the time the answer took, measured with ``trio.current_time()`` (a monotonic clock) from just
before the write of the request to the moment the answer's line is read, in whole microseconds
since the match began (the times the log keeps).  The engine never sees time.

A ``margin`` (cutechess-cli's and fastchess's ``timemargin``) is how late a line may be read
and still be accepted: :meth:`Clock.limit` is the one place that says so.  The overrun is
logged with the play and charged like any time used (to the bank, where there is one).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The longest time any limit may give (a day): longer ones are mistakes, and infinite or huge
#: ones cannot be sent to a bot in milliseconds.
MAX_SECONDS = 86400


@dataclass(frozen=True)
class TimeControl:
    """Limits in seconds.  ``bank`` is a per-match time bank (``None``: no bank) that gains
    ``increment`` after every move, like a chess clock; with a bank, each move may take at most
    ``min(move, bank left)``.  ``margin``: how late past that an answer is still accepted (not
    given to the bot, nor told it: a tolerance for the referee's own delays under load)."""

    startup: float = 10.0
    move: float = 5.0
    bank: float | None = None
    increment: float = 0.0
    margin: float = 0.0

    def __post_init__(self) -> None:
        for name in ("startup", "move", "bank", "increment", "margin"):
            value = getattr(self, name)
            if value is None and name == "bank":
                continue
            if not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
                raise ValueError(f"time control {name}={value!r}: expected a number of seconds from 0 to {MAX_SECONDS} (a day)")
        if self.move <= 0:
            raise ValueError("time control move=0: a bot needs some time to move")

    def __repr__(self) -> str:
        parts = [f"startup={self.startup:g}", f"move={self.move:g}"]
        if self.bank is not None:
            parts.append(f"bank={self.bank:g}")
        if self.increment:
            parts.append(f"increment={self.increment:g}")
        if self.margin:
            parts.append(f"margin={self.margin:g}")
        return f"TimeControl({', '.join(parts)})"


class Clock:
    """One bot's clock over a match, in whole microseconds (the log's unit, so that ``verify``
    charges exactly what the referee charged)."""

    __slots__ = ("move", "increment", "margin", "bank", "moves", "used", "longest")

    def __init__(self, tc: TimeControl) -> None:
        self.move = round(tc.move * 1e6)
        self.increment = round(tc.increment * 1e6)
        self.margin = round(tc.margin * 1e6)
        #: what is left of the bank, or ``None`` without one
        self.bank: int | None = None if tc.bank is None else round(tc.bank * 1e6)
        self.moves = 0
        self.used = 0
        self.longest = 0

    def allowance(self) -> int:
        """Microseconds the bot has for its next move."""
        if self.bank is None:
            return self.move
        return max(0, min(self.move, self.bank))

    def limit(self, allowance: int) -> int:
        """How long after the turn went out (microseconds) a line may be read and still answer
        a move of ``allowance``: the allowance and the margin; nothing once a bank is spent (an
        allowance of 0 has nothing to be late against)."""
        return allowance + self.margin if allowance > 0 else 0

    def terms(self) -> tuple[int, int, int | None]:
        """The next move's allowance, its :meth:`limit` and the bank left in whole milliseconds
        (``None`` without a bank): what a turn needs of the clock, in one call."""
        bank = self.bank
        if bank is None:
            allowance = self.move
            return allowance, allowance + self.margin if allowance > 0 else 0, None  # as limit() says
        allowance = max(0, min(self.move, bank))
        return allowance, self.limit(allowance), bank // 1000

    def charge(self, elapsed: int) -> None:
        """Record a move that took ``elapsed`` microseconds (past its allowance, by less than the
        margin: the overrun is taken from the bank too)."""
        self.moves += 1
        self.used += elapsed
        if elapsed > self.longest:
            self.longest = elapsed
        if self.bank is not None:
            self.bank = self.bank - elapsed + self.increment
