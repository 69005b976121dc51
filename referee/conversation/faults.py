"""Faults: what a bot did wrong, recorded with the seat, the game, the deal and the evidence.

A fault ends the deal as the faulting side's loss (the game module scores it, see
:meth:`referee.engine.core.game.Game.score_fault`), the bot's process group is killed, and a fresh
process takes the seat at the next deal.  After ``max_faults`` in a match the bot forfeits the
rest.  PROTOCOL.md lists the kinds for bot authors.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    from referee.records.records import Exit, Overlong

TIMEOUT = "timeout"  # no answer within the time allowed
ILLEGAL = "illegal"  # a play the rules do not allow
BAD_OUTPUT = "bad_output"  # not JSON, not fitting the schema, or a line over the cap
OUT_OF_TURN = "out_of_turn"  # output when nothing was asked
CRASH = "crash"  # end of stream, exit or crash
STARTUP = "startup"  # no valid hello in time, or an unsupported protocol version

KINDS = (TIMEOUT, ILLEGAL, BAD_OUTPUT, OUT_OF_TURN, CRASH, STARTUP)

#: How much of an offending line is kept in the record.
EVIDENCE = 200

# Hints for the causes bot authors hit most, shown with the fault wherever it is explained
# (a start-up failure in ``match``, ``check`` and leagues; every fault in ``referee check``).
FLUSH = "does it flush its standard output after every line?  A line left in a buffer never arrives"
LATE = FLUSH + ".  Otherwise it thinks too long: answer within turn.time_ms"
UNTYPED = 'every message names its type: a play is {"type":"play","tile":[a,b],...}'
UNREAD = "read every line the referee sends, also the ones you ignore"
STDOUT_ONLY = "standard output is for protocol lines only: write debugging output to standard error"
NEWLINE = "end every line with a newline (\\n), and flush standard output after it"
HELLO_FIELDS = 'a hello is {"type":"hello","name":...,"protocol":1}: every field PROTOCOL.md lists for it, of its type'
ANSWER_HELLO = 'answer the referee\'s hello at once with {"type":"hello","name":...,"protocol":1}, and load slow things after'


@overload
def cut(line: bytes | str, limit: int = ...) -> str: ...
@overload
def cut(line: None, limit: int = ...) -> None: ...
def cut(line: bytes | str | None, limit: int = EVIDENCE) -> str | None:
    """The start of an offending line, decoded leniently, marked when cut short."""
    if line is None:
        return None
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


@dataclass(frozen=True)
class Fault:
    kind: str
    bot: str
    seat: int
    game: int
    deal: int
    detail: str
    line: str | None = None
    #: what probably went wrong and what to do, for people; not part of the record
    hint: str | None = field(default=None, compare=False)
    #: what the referee saw of the process: it was gone (``exit``), or wrote too long a line
    exit: Exit | None = None
    overlong: Overlong | None = None

    def __str__(self) -> str:
        where = f"game {self.game}, deal {self.deal}, seat {self.seat}"
        text = f"{self.bot} ({where}): {self.kind}: {self.detail}"
        if self.line is not None:
            text += f" — got {self.line!r}"
        return text

    def explain(self) -> str:
        """The detail, the offending line and the hint, in one line."""
        text = self.detail
        if self.line is not None:
            text += f"; the line: {self.line!r}"
        if self.hint is not None:
            text += f" (hint: {self.hint})"
        return text

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("hint", "exit", "overlong")}
