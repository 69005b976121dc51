"""A seat's channel to its bot: the one object a move's bytes go through.

A :class:`Channel` is one seat's line to the bot process that holds it now (its transport,
:mod:`referee.bots.transport`).  It owns what waits to go out (the outbox), every write and read,
and the log's ``out`` and ``in`` records of them, and offers what the exchanges of
:mod:`referee.conversation.exchange` need:

* :meth:`Channel.queue`: put a line in the outbox, for the seat's next write;
* :meth:`Channel.deliver`: write the outbox, asking nothing (a deal's end);
* :meth:`Channel.ask`: write a ``turn`` after the outbox, in one write, and read the answer by the
  referee's clock, a :data:`Reply` (:class:`Answered`, :class:`Refused`, :class:`Late` or
  :class:`Silent`, each with its times): the seat is asked there, and has answered (or has run
  out of time) when it returns, so a transport that pauses a bot between its turns is told so
  there and nowhere else (``resume`` and ``pause``, where the transport has them);
* :meth:`Channel.unasked` and :meth:`Channel.hear`: what the bot wrote while nobody asked, each line
  judged and logged as it is taken.

The channel judges nothing itself beyond what it is given: the exchange says which line ends a
turn (``settle``), and turns what the channel saw into faults.  Like python-chess's engine
``Protocol``, it routes lines and keeps the state of the one exchange in flight; what is made of
them is the exchange's.  What holds for the whole match (the log, the time control, the clock's
origin) comes as :class:`Terms`, the same for every channel of a table.

Times are whole microseconds since the match began, read from the transport (``proc.now``), in
the order the log's records are written (``verify`` gives each reading the time of the record it
is about to check).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

import trio

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.errors import BotExited
from referee.conversation.faults import Fault
from referee.conversation.handmade import TurnLines
from referee.conversation.lines import Line, hear
from referee.conversation.log import MatchLog
from referee.records import records as R

if TYPE_CHECKING:
    from referee.base.runqueue import Waits
    from referee.bots.transport import BotTransport
    from referee.engine.core.state import DealState


@dataclass(frozen=True, slots=True)
class Terms:
    """What holds for every exchange of a match."""

    log: MatchLog
    tc: TimeControl
    #: the referee's clock at the start of the match: times are microseconds since then
    origin: float
    #: seconds a turn may wait for the answer with the thread blocked in poll(2) before it waits
    #: through trio (see BotProcess.line_within); 0 when other work shares the loop
    block: float = 0.001
    #: how a line read is judged (``verify`` gives back the lines a log keeps only judged)
    hear: Callable[[bytes], Line] = hear
    #: the referee's run-queue clock (:mod:`referee.base.runqueue`): its wait for a CPU while a
    #: turn is out is not counted against the bot; ``None``: every microsecond counts
    waits: Waits | None = None
    #: told of every turn before it is asked, with the state and the turn as a value (a watch's
    #: :meth:`~referee.conversation.house.TableWatch.asked`; ``None``: nobody asks)
    asked: Callable[[int, DealState, m.Turn], None] | None = None
    #: the table's turn lines, built by hand with caches of the table's own
    turns: TurnLines = field(default_factory=TurnLines)


def stamp(terms: Terms, proc: BotTransport) -> int:
    """Now, in microseconds since the match began, by ``proc``'s clock."""
    return round((proc.now() - terms.origin) * 1e6)


def deadline(terms: Terms, us: int) -> float:
    """The referee's clock reading ``us`` microseconds after the match began."""
    return terms.origin + us / 1e6


@dataclass(frozen=True, slots=True)
class Answered:
    """A line read in time that ends the turn with a message: the message, and the microseconds
    from the turn's write to the line's read."""

    line: Line
    msg: m.FromBotMessage
    took: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A line read in time that ends the turn with a fault (what the exchange made of it)."""

    line: Line
    fault: Fault
    took: int


@dataclass(frozen=True, slots=True)
class Late:
    """A line read after the turn's limit, unjudged: ``took`` microseconds after the write, the
    referee's own wait for a CPU (``waited``, logged with the line) already taken off."""

    line: Line
    took: int
    waited: int


@dataclass(frozen=True, slots=True)
class Silent:
    """No line by the turn's limit."""


#: What a turn's answer is (:meth:`Channel.ask`): one of four, told apart by type.
Reply = Answered | Refused | Late | Silent

#: What a settle (the exchange's judgement of a line read in time) says: a message or a fault
#: ends the turn; ``None`` (a message of an unknown type, ignored) reads on.
Verdict: TypeAlias = "m.FromBotMessage | Fault | None"

SILENT: Final = Silent()


class Gone(Exception):
    """The bot was found gone during a turn: ``exited``, and what the channel was doing (``op``:
    writing the turn or reading the answer)."""

    def __init__(self, exited: BotExited, op: Literal["write", "read"]) -> None:
        super().__init__(str(exited))
        self.exited = exited
        self.op = op


#: What :meth:`Channel.deliver` says of a bot that did not take its lines within a move's time.
STUCK: Final = "stuck"


class Channel:
    """One seat's line to its bot: the transport (``proc``, ``None`` while no process holds the
    seat) and the lines waiting for its next write (``outbox``)."""

    __slots__ = ("proc", "outbox", "strict")

    def __init__(self) -> None:
        self.proc: BotTransport | None = None
        self.outbox: list[bytes] = []
        #: strict isolation (PROTOCOL.md, "Fair play"): the process is paused between its turns,
        #: so :meth:`ask` resumes it for its turn and pauses it again once it has answered
        self.strict = False

    def queue(self, line: bytes) -> None:
        """Put ``line`` (one encoded message) in the outbox: it goes out with the next write."""
        self.outbox.append(line)

    # -- what the bot says unasked ---------------------------------------------------------------

    def unasked(self) -> list[bytes]:
        """The lines the bot has written that nobody asked for (each to go through :meth:`hear`,
        in order).  Raises LineTooLong."""
        proc = self.proc
        assert proc is not None
        return proc.ready_lines()

    def hear(self, terms: Terms, seat: int, raw: bytes) -> Line:
        """``raw``, a line taken from the bot, judged and logged as read now."""
        line = terms.hear(raw)
        proc = self.proc
        assert proc is not None
        terms.log.inp(seat, line, round((proc.now() - terms.origin) * 1e6))
        return line

    # -- a write that asks nothing ---------------------------------------------------------------

    async def deliver(self, terms: Terms, seat: int) -> BotExited | str | None:
        """Write what waits in the outbox, asking nothing: ``None`` when it went (or nothing was
        waiting, or no process holds the seat), :data:`STUCK` when the bot did not take it within
        a move's time (its pipe stayed full), or the :class:`~referee.base.errors.BotExited` of a bot
        found gone.  Logged once done, with what became of it."""
        proc = self.proc
        data = self.outbox
        self.outbox = []
        if proc is None or not data:
            return None
        request = b"".join(data)
        begun = round((proc.now() - terms.origin) * 1e6)
        # As in ask(): a cancel scope only when the pipe cannot take it all at once.
        await trio.lowlevel.checkpoint_if_cancelled()
        sent = proc.write_nowait(request)
        failure: BotExited | str | None = None
        if sent < len(request):
            if self.strict:
                proc.resume()  # a paused bot must run to read the rest (the table pauses it again)
            with trio.move_on_after(terms.tc.move) as scope:
                try:
                    await proc.send(request[sent:])
                except BotExited as exc:
                    failure = exc.with_traceback(None)  # kept past this frame: no cycle through it
            if scope.cancelled_caught:
                failure = STUCK
        # logged once done, with what became of it: the fault it makes is charged only at the
        # bot's next deal, and verify must know now
        terms.log.out(seat, data, request, begun, stuck=failure is STUCK,
                      exit=R.Exit("write", str(failure), failure.returncode) if isinstance(failure, BotExited) else None)
        return failure

    # -- a turn ----------------------------------------------------------------------------------

    async def ask(self, terms: Terms, seat: int, turn: bytes, allowance: int,
                  settle: Callable[[Line], Verdict], limit: int | None = None) -> Reply:
        """Write ``turn`` (an encoded ``turn`` line) after what waits in the outbox, in one write,
        and read the answer within ``allowance`` microseconds by the referee's clock (``limit``,
        when given, is the allowance and the clock's margin: a line read by then still counts).

        Each line read in time goes to ``settle``, which judges it: ``None`` reads on, a message
        ends the turn :class:`Answered`, a fault :class:`Refused`.  A line read too late is
        :class:`Late`, unjudged; no line in time is :class:`Silent`.

        Raises:
            Gone: the bot is gone (found while writing the turn or reading the answer).
            LineTooLong: it wrote a line over the limit.
        """
        proc = self.proc
        assert proc is not None
        data = self.outbox
        data.append(turn)
        self.outbox = []
        request = b"".join(data)
        origin = terms.origin
        if limit is None:
            limit = allowance  # the deadline is hard: a line counts when the referee reads it
        strict = self.strict
        if strict:
            proc.resume()
        op: Literal["write", "read"] = "write"
        try:
            start = round((proc.now() - origin) * 1e6)
            terms.log.out(seat, data, request, start)
            waits = terms.waits
            mark = waits.mark() if waits is not None else None
            # A bot on our CPU has usually answered by the time the write returns (the kernel
            # runs it at once), so try without waiting first: that needs no cancel scope, which
            # costs more than the rest of the turn's trio work.  A scope is made only to wait.
            # Nor is cancellation looked at here: a deal looks once as it starts
            # (Table.play_deal), every write that ends it looks, and a turn that waits does.
            sent = proc.write_nowait(request) if allowance > 0 else 0
            if sent == len(request) and (ready := proc.line_within(min(terms.block, allowance / 1e6))) is not None:
                reply = self._read(terms, seat, ready, start, limit, settle, mark)
                if reply is not None:
                    return reply
            with trio.move_on_at(origin + (start + limit) / 1e6):
                if sent < len(request):
                    await proc.send(request[sent:])
                op = "read"
                while True:  # a message of an unknown type is skipped
                    reply = self._read(terms, seat, await proc.read_line(), start, limit, settle, mark)
                    if reply is not None:
                        return reply
            return SILENT
        except BotExited as exc:
            raise Gone(exc.with_traceback(None), op) from None
        finally:
            if strict:
                proc.pause()

    def _read(self, terms: Terms, seat: int, raw: bytes, start: int, limit: int,
              settle: Callable[[Line], Verdict], mark: object = None) -> Reply | None:
        """A line just read in answer to the turn written at ``start``: timed at once, judged and
        logged; settled if it came by ``limit`` (``None``: read on), else :class:`Late`.  A line
        that would be late has the referee's own wait for a CPU since ``mark`` taken off its time
        (and logged)."""
        proc = self.proc
        assert proc is not None
        got = round((proc.now() - terms.origin) * 1e6)
        line = terms.hear(raw)
        took = got - start
        wait = 0
        if took > limit and terms.waits is not None:
            wait = min(took, terms.waits.since(mark))
            took -= wait
        terms.log.inp(seat, line, got, wait)
        if took > limit:
            return Late(line, took, wait)
        verdict = settle(line)
        if verdict is None:
            return None
        if isinstance(verdict, Fault):
            return Refused(line, verdict, took)
        return Answered(line, verdict, took)
