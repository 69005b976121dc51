"""The referee's exchanges with one bot (PROTOCOL.md), each a unit given everything it works on:

* :func:`handshake`: ``hello`` out, the bot's ``hello`` back, within the start-up limit;
* :func:`turn`: ask the seat to move for a play (with the events waiting for it), read the
  answer by the referee's clock, check it with the engine and make it;
* :func:`queue_events`: put what happened in a deal into every seat's outbox, to ride on that
  seat's next write;
* :func:`deliver`: write what waits in a seat's outbox (the deal's end) without a question.

Where in the match an exchange happens comes as an :class:`At` (seat, game, deal), and what holds
for the whole match (the log, the time control, how lines are heard, how long a turn may block)
as :class:`Terms`; no exchange reads or keeps a table's state, so each can be run on its own with
a scripted bot (:mod:`referee.bots.transport`) and trio's mock clock.  :class:`~referee.conversation.table.Table`
strings them into deals and games and owns the processes and the faults' consequences.

Every line a bot writes is judged once (:func:`referee.conversation.lines.judge`) and every decision below
follows from that judgement, the times and the state: nothing else.  Times are whole
microseconds since the match began, read from the bot's transport (``proc.now``: the referee's
clock, or the log's when ``verify`` plays a log again), so the log's times are exactly the ones
the decisions used.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import trio

from protocol import messages as m
from referee.conversation import faults as F
from referee.conversation.clock import TimeControl
from referee.conversation.lines import BAD, MESSAGE, Line, hear
from referee.engine import IllegalPlay
from referee.engine.state import DealState
from referee.errors import BotExited, LineTooLong
from referee.logs import records as R
from referee.logs.log import MatchLog
from referee.sides.base import GameSide

if TYPE_CHECKING:
    from referee.bots.transport import BotTransport
    from referee.conversation.players import Player

#: Lines of an unknown message type a bot process may write in one move (from its previous
#: answer to its next one, or before its hello); one more is a bad_output fault.
UNKNOWN_PER_MOVE = 16
#: Bytes of lines of unknown types a bot may write in one match; more is a bad_output fault.
UNKNOWN_PER_MATCH = 1 << 20


class At(NamedTuple):
    """Where in the match an exchange with a bot happens: what its fault records say.  Each
    exchange (the handshake, a turn, the events and the deal's end) is given one."""

    seat: int
    game: int
    deal: int


#: The handshakes at the start of a match: no seat yet.
OPENING = At(-1, 0, 0)


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


def stamp(terms: Terms, proc: BotTransport) -> int:
    """Now, in microseconds since the match began, by ``proc``'s clock."""
    return round((proc.now() - terms.origin) * 1e6)


def deadline(terms: Terms, us: int) -> float:
    """The referee's clock reading ``us`` microseconds after the match began."""
    return terms.origin + us / 1e6


def new_fault(kind: str, p: Player, at: At, detail: str, line: Line | str | None = None, hint: str | None = None,
              *, exit: R.Exit | None = None, overlong: R.Overlong | None = None) -> F.Fault:
    evidence = line.evidence if isinstance(line, Line) else line
    return F.Fault(kind, p.entry.name, at.seat, at.game, at.deal, detail, evidence, hint, exit=exit, overlong=overlong)


def exited(kind: str, p: Player, at: At, exc: BotExited, op: str) -> F.Fault:
    """The fault of a process found gone while the referee read or wrote (``op``)."""
    return new_fault(kind, p, at, str(exc), exit=R.Exit(op, str(exc), exc.returncode))  # type: ignore[arg-type]


def too_long(kind: str, p: Player, at: At, exc: LineTooLong, op: str) -> F.Fault:
    """The fault of a line over ``max_line``, read (``op`` ``"read"``) or found unasked."""
    return new_fault(kind, p, at, str(exc), exc.evidence, overlong=R.Overlong(op, str(exc), exc.evidence))  # type: ignore[arg-type]


# -- the handshake ---------------------------------------------------------------------------


async def handshake(terms: Terms, p: Player, at: At, hello: bytes, record: R.Hello) -> F.Fault | None:
    """Send ``hello`` to ``p``'s freshly started bot and read its own within the start-up limit
    (lines of unknown types before it are skipped, within the caps); a fault if that fails.
    ``record`` is the log's ``hello`` record: what the handshake saw is filled in."""
    proc = p.proc
    assert proc is not None
    tc = terms.tc
    startup = round(tc.startup * 1e6)
    begun = stamp(terms, proc)
    record.t = begun / 1e6
    read: list[R.Heard] = []
    record.read = read
    line: Line | None = None
    with trio.move_on_at(deadline(terms, begun + startup)) as scope:
        try:
            await proc.send(hello)
            while True:
                raw = await proc.read_line()
                got = stamp(terms, proc)
                line = terms.hear(raw)
                read.append(heard_at(line, got))
                took = got - begun
                record.ms = took / 1000
                if took > startup:  # read after the deadline: late, as in turn()
                    return new_fault(F.STARTUP, p, at, f"no hello within the start-up limit of {tc.startup:g} s: its line was read "
                                     f"{took / 1000:.1f} ms after the process started", line)
                judged = line.judged
                if judged.kind == BAD:
                    if judged.reason == "deep":
                        return new_fault(F.STARTUP, p, at, f"expected a hello, but the line is {judged.why}", line)
                    return new_fault(F.STARTUP, p, at, f"expected a hello, but the line is not valid: {judged.why}", line,
                                     None if m.NUMBER_HINT in (judged.why or "") else
                                     F.HELLO_FIELDS if judged.reason == "schema" else F.STDOUT_ONLY)
                if judged.kind != MESSAGE:
                    too_much = unknown(p, judged.type or "", line, " before hello")
                    if too_much is None:
                        continue
                    return new_fault(F.STARTUP, p, at, too_much, line)
                if not isinstance(judged.msg, m.BotHello):
                    return new_fault(F.STARTUP, p, at, f"expected a hello, got a {judged.type!r} message", line, F.ANSWER_HELLO)
                break
        except BotExited as exc:
            record.exit = R.Exit("read", str(exc), exc.returncode)
            return new_fault(F.STARTUP, p, at, f"{exc}")
        except LineTooLong as exc:
            record.overlong = R.Overlong("read", str(exc), exc.evidence)
            return new_fault(F.STARTUP, p, at, f"{exc}", exc.evidence)
    if scope.cancelled_caught:
        return silent_start(terms, p, at, record)
    assert line is not None and isinstance(line.judged.msg, m.BotHello)  # the loop ends on a hello or returns
    msg = line.judged.msg
    if msg.protocol != m.PROTOCOL_VERSION:
        return new_fault(F.STARTUP, p, at, f"speaks protocol {msg.protocol}; this referee speaks {m.PROTOCOL_VERSION}", line)
    p.entry.hello = msg
    return None


def heard_at(line: Line, us: int) -> R.Heard:
    from referee.conversation.lines import heard

    return heard(line, us / 1e6)


def silent_start(terms: Terms, p: Player, at: At, record: R.Hello) -> F.Fault:
    """The fault of a bot that gave no hello in time, with what it did do: a bot whose answer
    sits in its output buffer has read the referee's hello; one that never read it is still
    loading (or reads nothing)."""
    assert p.proc is not None
    detail = f"no hello within the start-up limit of {terms.tc.startup:g} s"
    unfinished = p.proc.unfinished_line()
    if unfinished:
        # a replayed bot gives back the text the log keeps, already cut
        record.unfinished = unfinished if isinstance(unfinished, str) else F.cut(unfinished)
        return new_fault(F.STARTUP, p, at, f"{detail}: it wrote a line but never ended it", record.unfinished, F.NEWLINE)
    unread = p.proc.unread_input()
    record.unread = unread
    if unread == 0:
        return new_fault(F.STARTUP, p, at, f"{detail}, although it read the referee's hello", None, F.FLUSH)
    return new_fault(F.STARTUP, p, at, f"{detail}; it did not read the referee's hello", None, F.ANSWER_HELLO)


# -- what a bot says unasked -----------------------------------------------------------------


def unasked(terms: Terms, p: Player, at: At) -> F.Fault | None:
    """Look at what the bot wrote while nobody asked: a play is a fault, unknown types are
    ignored (and remarked on for ``referee check``) within the caps."""
    proc = p.proc
    assert proc is not None
    try:
        lines = proc.ready_lines()
    except LineTooLong as exc:
        return too_long(F.BAD_OUTPUT, p, at, exc, "ready")
    for raw in lines:
        line = terms.hear(raw)
        terms.log.inp(at.seat, line, stamp(terms, proc))
        judged = line.judged
        if judged.reason == "deep":
            return new_fault(F.BAD_OUTPUT, p, at, f"wrote a line of {judged.why}", line)
        if judged.type in m.FROM_BOT_TYPES:
            return new_fault(F.OUT_OF_TURN, p, at, f"sent a {judged.type!r} message when it was not its turn", line)
        if judged.kind == BAD:
            return new_fault(F.BAD_OUTPUT, p, at, "wrote a line that is not a JSON object", line, F.STDOUT_ONLY)
        if (too_much := unknown(p, judged.type or "", line)) is not None:
            return new_fault(F.BAD_OUTPUT, p, at, too_much, line)
    return None


def unknown(p: Player, kind: str, line: Line, when: str = "") -> str | None:
    """Count a line of an unknown type, which is ignored; what is wrong when it is one too
    many (UNKNOWN_PER_MOVE, UNKNOWN_PER_MATCH), else ``None``."""
    p.unknown += 1
    p.entry.unknown_bytes += line.size + 1
    if p.unknown > UNKNOWN_PER_MOVE:
        return (f"wrote more than {UNKNOWN_PER_MOVE} lines of unknown types in one move "
                "(ignored messages are for new protocol versions; write notes to stderr)")
    if p.entry.unknown_bytes > UNKNOWN_PER_MATCH:
        return (f"wrote more than {UNKNOWN_PER_MATCH >> 20} MiB of lines of unknown types in this match "
                "(ignored messages are for new protocol versions; write notes to stderr)")
    p.entry.remark(f"sent a message of unknown type {F.cut(kind, 40)!r}{when} (ignored)")
    return None


# -- a turn ----------------------------------------------------------------------------------


def answer(p: Player, at: At, line: Line) -> tuple[m.FromBotMessage | None, F.Fault | None]:
    """What a line read in answer to a turn is: ``(message, None)``, ``(None, fault)``, or
    ``(None, None)`` for a message of an unknown type, which is ignored."""
    judged = line.judged
    if judged.kind == MESSAGE:
        return judged.msg, None
    if judged.kind == BAD:
        if judged.reason == "deep":
            return None, new_fault(F.BAD_OUTPUT, p, at, f"the answer is {judged.why}", line)
        if judged.reason == "json":
            return None, new_fault(F.BAD_OUTPUT, p, at, f"not JSON: {judged.why}", line, F.STDOUT_ONLY)
        if judged.reason == "object":  # msgspec checks types as it parses: "[x]" fails as an array
            return None, new_fault(F.BAD_OUTPUT, p, at, "wrote a line that is not a JSON object", line, F.STDOUT_ONLY)
        return None, new_fault(F.BAD_OUTPUT, p, at, f"the play does not fit the protocol: {judged.why}", line)
    too_much = unknown(p, judged.type or "", line)
    return None, None if too_much is None else new_fault(F.BAD_OUTPUT, p, at, too_much, line)


async def turn(terms: Terms, p: Player, at: At, state: DealState, side: GameSide, turn_id: int) -> F.Fault | None:
    """Ask ``at.seat`` (player ``p``) for a play in ``state``, turn ``turn_id`` of its game, and
    make it; a fault if anything goes wrong.  The turn goes out with what waits in the player's
    outbox, in one write."""
    seat = at.seat
    proc = p.proc
    assert proc is not None
    fault = unasked(terms, p, at)
    if fault is not None:
        return fault
    clock = p.entry.clock
    allowance = clock.allowance()
    bank = None if clock.bank is None else clock.bank // 1000
    data = p.outbox
    data.append(m.encode_line(side.turn_message(state, allowance // 1000, bank, turn_id)))
    p.outbox = []
    request = b"".join(data)
    log = terms.log
    now = proc.now
    origin = terms.origin
    start = round((now() - origin) * 1e6)
    log.out(seat, data, request, start)
    msg = None
    line: Line | None = None
    # A bot on our CPU has usually answered by the time the write returns (the kernel runs
    # it at once), so try without waiting first: that needs no cancel scope, which costs
    # more than the rest of the turn's trio work.  A scope is made only to wait.
    await trio.lowlevel.checkpoint_if_cancelled()
    sent = proc.write_nowait(request) if allowance > 0 else 0
    # The deadline is hard: a line counts when the referee reads it, by its own clock (a
    # line can be read after the deadline without the cancel scope firing, e.g. one that
    # was already buffered, or when the loop was busy).  Each read is timed at once.
    elapsed = 0
    if sent == len(request) and (ready := proc.line_within(min(terms.block, allowance / 1e6))) is not None:
        got = round((now() - origin) * 1e6)
        line = terms.hear(ready)
        log.inp(seat, line, got)
        elapsed = got - start
        if elapsed <= allowance:
            msg, fault = answer(p, at, line)
            if fault is not None:
                return fault
    timed_out = False
    if msg is None and elapsed <= allowance:
        op = "write"
        with trio.move_on_at(origin + (start + allowance) / 1e6) as scope:
            try:
                if sent < len(request):
                    await proc.send(request[sent:])
                op = "read"
                while msg is None:  # a message of an unknown type is skipped
                    raw = await proc.read_line()
                    got = round((now() - origin) * 1e6)
                    line = terms.hear(raw)
                    log.inp(seat, line, got)
                    elapsed = got - start
                    if elapsed > allowance:
                        break
                    msg, fault = answer(p, at, line)
                    if fault is not None:
                        return fault
            except BotExited as exc:
                return exited(F.CRASH, p, at, exc, op)
            except LineTooLong as exc:
                return too_long(F.BAD_OUTPUT, p, at, exc, "read")
        timed_out = scope.cancelled_caught
    p.unknown = 0
    if timed_out:
        clock.charge(allowance)
        return new_fault(F.TIMEOUT, p, at, f"no play within {allowance / 1000:.0f} ms", hint=F.LATE)
    if elapsed > allowance:
        clock.charge(allowance)
        return new_fault(F.TIMEOUT, p, at, f"no play within {allowance / 1000:.0f} ms: its line was read "
                         f"{elapsed / 1000:.1f} ms after the turn was sent", line, F.LATE)
    clock.charge(elapsed)
    if type(msg) is not m.Play:
        return new_fault(F.OUT_OF_TURN, p, at, "answered a turn with a hello", line)
    if msg.turn is not None and msg.turn is not m.UNSET and msg.turn != turn_id:
        return new_fault(F.OUT_OF_TURN, p, at, f"the play answers turn {msg.turn}, but this is turn {turn_id}", line)
    try:
        played = state.push(side.engine_play(state, msg), seat)
    except IllegalPlay as exc:
        legal = ", ".join(side.play_text(state, x) for x in state.legal_plays()[:12])
        return new_fault(F.ILLEGAL, p, at, f"{exc} (legal: {legal})", line)
    log.write(play_record(seat, msg, elapsed, side.play_text(state, played)))
    return None


def play_record(seat: int, msg: m.Play, elapsed: int | None, played: str) -> R.Play:
    """The log's record of an accepted play (``elapsed`` in microseconds; ``None`` for a move of
    a staged opening, made by the referee); the fields only some games use only where they are
    set and true, so a line game's record is what it always was."""
    rec = R.Play(seat, None if msg.tile is None else msg.tile, msg.end, played, None if elapsed is None else elapsed / 1000,
                 staged=elapsed is None)
    if _extras(msg) != _NO_EXTRAS:  # the usual play has none: one look instead of one per field
        for name in m.PLAY_EXTRAS:
            value = getattr(msg, name)
            if value is not m.UNSET and value is not False:
                setattr(rec, name, value)
    return rec


_extras = operator.attrgetter(*m.PLAY_EXTRAS)
_NO_EXTRAS = (m.UNSET,) * len(m.PLAY_EXTRAS) if len(m.PLAY_EXTRAS) > 1 else m.UNSET


# -- events and deliveries -------------------------------------------------------------------


def queue_events(state: DealState, delivered: int, seating: list[Player], side: GameSide) -> int:
    """Put ``state``'s events from ``delivered`` on into every seat's outbox; the new count
    delivered."""
    history = state.history
    if delivered == len(history):
        return delivered
    n = len(seating)
    for event in history[delivered:]:
        for p, line in zip(seating, side.event_lines(state, event, n)):
            p.outbox.append(line)
    return len(history)


async def deliver(terms: Terms, p: Player, at: At) -> F.Fault | None:
    """Write what waits in ``p``'s outbox (a deal's end), asking nothing; then look at what the
    bot said unasked.  A fault if it cannot take the lines within a move's time, has exited, or
    said something it must not."""
    proc = p.proc
    data = p.outbox
    p.outbox = []
    if proc is None or not data:
        return None
    request = b"".join(data)
    begun = stamp(terms, proc)
    # As in turn(): a cancel scope only when the pipe cannot take it all at once.
    await trio.lowlevel.checkpoint_if_cancelled()
    sent = proc.write_nowait(request)
    failure = None
    if sent < len(request):
        with trio.move_on_after(terms.tc.move) as scope:
            try:
                await proc.send(request[sent:])
            except BotExited as exc:
                failure = exited(F.CRASH, p, at, exc, "write")
        if scope.cancelled_caught:
            failure = new_fault(F.TIMEOUT, p, at, "did not read its input (the pipe stayed full)", hint=F.UNREAD)
    # logged once done, with what became of it: the fault it makes is charged only at the
    # bot's next deal, and verify must know now
    terms.log.out(at.seat, data, request, begun, stuck=failure is not None and failure.kind == F.TIMEOUT,
                  exit=None if failure is None else failure.exit)
    if failure is not None:
        return failure
    return unasked(terms, p, at)
