"""What every table of a match is given besides its players and its log: the house.

A :class:`~referee.conversation.table.Table` is made of four things: its nursery, its players,
the log it writes, and a :class:`House`, which holds what is the same at every table of one
match.  Two parts of the house are objects a caller chooses:

* a :class:`BotSource`: how a seat's bot is started and how the lines it writes are heard.  The
  default is real processes (:data:`PROCESSES`); tests and benchmarks script bots in-process,
  ``referee verify`` plays a log's own lines back, ``referee play`` seats a person;
* a :class:`TableWatch`: what the caller sees of the play as it happens, as typed values: each
  log record, each turn a seat is asked (the engine's state and the ``turn`` message), each
  fault, and each process as it ends.  :class:`referee.matches.watch.Watch` adds what the match
  runner tells (progress, boards, segments).

Nothing of the house changes while the match is played.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard, TypeVar

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.runqueue import Waits, run_queue
from referee.bots.transport import BotTransport, Launch, launch_process
from referee.conversation.lines import Line, hear

if TYPE_CHECKING:
    from referee.conversation import faults as F
    from referee.conversation.players import Player
    from referee.engine.core.deal import Deal
    from referee.engine.core.game import DealRecord
    from referee.engine.core.state import DealState
    from referee.records import records as R


def _no_waits() -> Waits | None:
    return None


@dataclass(frozen=True)
class BotSource:
    """How the bots of a match are started (``launch``: a process, a scripted bot, a log's tape,
    a person's seat) and how each line one writes is judged (``hear``: ``verify`` hears the lines
    a log keeps only judged)."""

    launch: Launch = launch_process
    hear: Callable[[bytes], Line] = hear
    #: the referee's run-queue clock for a table (:mod:`referee.base.runqueue`): real processes
    #: are timed by the referee's own clock, less its wait for a CPU; bots on a mock clock have
    #: none; ``verify`` gives the waits the log kept
    waits: Callable[[], Waits | None] = _no_waits


#: Real processes, their lines judged as they come, the referee's waits for a CPU not counted
#: against them: what a match plays with unless told otherwise.
PROCESSES = BotSource(waits=run_queue)


W = TypeVar("W")


class TableWatch:
    """What a table tells of its play, as it happens.  Each method does nothing here: a caller
    overrides the ones it needs, and a table calls only those (:func:`wants`), so a match nobody
    watches pays nothing for them."""

    def record(self, record: R.Record) -> None:
        """A log record, as the log is given it (before it is written).  A watch that takes them
        makes the log build every play's record (a match nobody watches so writes bytes made once
        per move)."""

    def deal_begins(self, game: int, orientation: int, deal: Deal) -> None:
        """A table begins to play ``deal`` in game ``game``, orientation ``orientation``."""

    def deal_ends(self, game: int, orientation: int, record: DealRecord | None) -> None:
        """The table has played the deal it last began, and written its end (``None``: the deal
        was void, to be dealt again)."""

    def asked(self, seat: int, state: DealState, turn: m.Turn) -> None:
        """``seat`` is about to be asked for a play in ``state`` with ``turn`` (the message the
        bot gets, as a value: the same as the bytes written)."""

    def fault(self, fault: F.Fault) -> None:
        """A fault, before the bot's process is ended."""

    def closed(self, player: Player, proc: BotTransport, unread: list[bytes]) -> None:
        """A process ended as its table closed, with the lines it wrote that nobody read."""


def wants(watch: W | None, method: str, base: type = TableWatch) -> TypeGuard[W]:
    """Whether ``watch`` does something on ``method``: its class overrides ``base``'s no-op."""
    return watch is not None and getattr(type(watch), method) is not getattr(base, method)


@dataclass(frozen=True)
class House:
    """What is the same at every table of a match."""

    tc: TimeControl
    #: where each process's stderr goes (one file per process start)
    stderr_dir: Path
    max_line: int = 65536
    max_faults: int = 3
    #: what no sandboxed bot may see: the log, the deal file, the league's database...
    hidden: Sequence[Path] = ()
    #: strict isolation: every process is paused but the one asked for a play (PROTOCOL.md "Fair play")
    strict: bool = False
    #: seconds a turn may block the thread for its answer (0 when other work shares the loop, see Terms.block)
    block: float = 0.001
    #: the referee's clock at the start of the match (``None``: when the table is made)
    origin: float | None = None
    bots: BotSource = PROCESSES
    watch: TableWatch | None = None
