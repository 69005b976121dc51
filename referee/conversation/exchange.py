"""The referee's exchanges with one bot (PROTOCOL.md), each a unit given everything it works on:

* :func:`handshake`: ``hello`` out, the bot's ``hello`` back, within the start-up limit;
* :func:`turn`: ask the seat to move for a play (with the events waiting for it), read the
  answer by the referee's clock, check it with the engine and make it;
* :func:`queue_events`: put what happened in a deal into every seat's outbox, to ride on that
  seat's next write;
* :func:`deliver`: write what waits in a seat's outbox (the deal's end) without a question.

The bytes go through the seat's channel (:class:`~referee.conversation.channel.Channel`, which every
:class:`~referee.conversation.players.Player` has): it owns the outbox, the writes and reads and their
``out`` and ``in`` records; an exchange says what a line means and what follows from it.

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

from functools import partial
from typing import TYPE_CHECKING, Literal, NamedTuple, assert_never

import trio

from protocol import messages as m
from referee.base.errors import BotExited, LineTooLong
from referee.conversation import faults as F
from referee.conversation.channel import STUCK, Answered, Gone, Late, Refused, Silent, Terms, Verdict, deadline, stamp
from referee.conversation.lines import BAD, MESSAGE, Line
from referee.conversation.log import play_record
from referee.engine import IllegalPlay
from referee.engine.core.state import DealState
from referee.records import records as R
from referee.sides.base import GameSide

if TYPE_CHECKING:
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


def new_fault(kind: str, p: Player, at: At, detail: str, line: Line | str | None = None, hint: str | None = None,
              *, exit: R.Exit | None = None, overlong: R.Overlong | None = None) -> F.Fault:
    evidence = line.evidence if isinstance(line, Line) else line
    return F.Fault(kind, p.entry.name, at.seat, at.game, at.deal, detail, evidence, hint, exit=exit, overlong=overlong)


def exited(kind: str, p: Player, at: At, exc: BotExited, op: Literal["read", "write"]) -> F.Fault:
    """The fault of a process found gone while the referee read or wrote (``op``)."""
    return new_fault(kind, p, at, str(exc), exit=R.Exit(op, str(exc), exc.returncode))


def too_long(kind: str, p: Player, at: At, exc: LineTooLong, op: Literal["read", "ready"]) -> F.Fault:
    """The fault of a line over ``max_line``, read (``op`` ``"read"``) or found unasked."""
    return new_fault(kind, p, at, str(exc), exc.evidence, overlong=R.Overlong(op, str(exc), exc.evidence))


# -- the handshake ---------------------------------------------------------------------------


async def handshake(terms: Terms, p: Player, at: At, hello: bytes, record: R.Hello) -> F.Fault | None:
    """Send ``hello`` to ``p``'s freshly started bot and read its own within the start-up limit
    (lines of unknown types before it are skipped, within the caps); a fault if that fails.
    ``record`` is the log's ``hello`` record: what the handshake saw is filled in."""
    proc = p.channel.proc
    assert proc is not None
    tc = terms.tc if p.bot.tc is None else p.bot.tc  # a bot with a clock of its own (--tc) starts by it
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
    assert p.channel.proc is not None
    detail = f"no hello within the start-up limit of {(terms.tc if p.bot.tc is None else p.bot.tc).startup:g} s"
    unfinished = p.channel.proc.unfinished_line()
    if unfinished:
        # a replayed bot gives back the text the log keeps, already cut
        record.unfinished = unfinished if isinstance(unfinished, str) else F.cut(unfinished)
        return new_fault(F.STARTUP, p, at, f"{detail}: it wrote a line but never ended it", record.unfinished, F.NEWLINE)
    unread = p.channel.proc.unread_input()
    record.unread = unread
    if unread == 0:
        return new_fault(F.STARTUP, p, at, f"{detail}, although it read the referee's hello", None, F.FLUSH)
    return new_fault(F.STARTUP, p, at, f"{detail}; it did not read the referee's hello", None, F.ANSWER_HELLO)


# -- what a bot says unasked -----------------------------------------------------------------


def unasked(terms: Terms, p: Player, at: At) -> F.Fault | None:
    """Look at what the bot wrote while nobody asked: a play is a fault, unknown types are
    ignored (and remarked on for ``referee check``) within the caps."""
    try:
        lines = p.channel.unasked()
    except LineTooLong as exc:
        return too_long(F.BAD_OUTPUT, p, at, exc, "ready")
    return unasked_lines(terms, p, at, lines) if lines else None


def unasked_lines(terms: Terms, p: Player, at: At, lines: list[bytes]) -> F.Fault | None:
    """:func:`unasked` of ``lines``, taken from the bot."""
    for raw in lines:
        line = p.channel.hear(terms, at.seat, raw)
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


def answer(p: Player, at: At, line: Line) -> Verdict:
    """What a line read in time in answer to a turn is: a message, a fault, or ``None`` for a
    message of an unknown type (ignored: the channel reads on)."""
    judged = line.judged
    if judged.kind == MESSAGE:
        return judged.msg
    if judged.kind == BAD:
        if judged.reason == "deep":
            return new_fault(F.BAD_OUTPUT, p, at, f"the answer is {judged.why}", line)
        if judged.reason == "json":
            return new_fault(F.BAD_OUTPUT, p, at, f"not JSON: {judged.why}", line, F.STDOUT_ONLY)
        if judged.reason == "object":  # msgspec checks types as it parses: "[x]" fails as an array
            return new_fault(F.BAD_OUTPUT, p, at, "wrote a line that is not a JSON object", line, F.STDOUT_ONLY)
        return new_fault(F.BAD_OUTPUT, p, at, f"the play does not fit the protocol: {judged.why}", line)
    if not judged.type:  # an object that names no type is no message of a later protocol: a play that forgot it
        return new_fault(F.BAD_OUTPUT, p, at, 'the answer came in time but has no "type"', line, F.UNTYPED)
    too_much = unknown(p, judged.type, line)
    return None if too_much is None else new_fault(F.BAD_OUTPUT, p, at, too_much, line)


async def turn(terms: Terms, p: Player, at: At, state: DealState, side: GameSide, turn_id: int) -> F.Fault | None:
    """Ask ``at.seat`` (player ``p``) for a play in ``state``, turn ``turn_id`` of its game, and
    make it; a fault if anything goes wrong.  The seat's channel writes the turn with what waits
    in its outbox and reads the answer (:meth:`~referee.conversation.channel.Channel.ask`); this
    judges it and applies it."""
    channel = p.channel
    try:  # unasked(), with its usual answer (nothing) one call shorter: it comes before every turn
        lines = channel.unasked()
    except LineTooLong as exc:
        return too_long(F.BAD_OUTPUT, p, at, exc, "ready")
    if lines and (fault := unasked_lines(terms, p, at, lines)) is not None:
        return fault
    clock = p.entry.clock
    allowance, limit, bank = clock.terms()  # limit: the allowance and the margin
    request = terms.turns.line(side, state, allowance // 1000, bank, turn_id)
    if terms.asked is not None:
        terms.asked(at.seat, state, side.turn_message(state, allowance // 1000, bank, turn_id))
    try:
        reply = await channel.ask(terms, at.seat, request, allowance, partial(answer, p, at), limit)
    except Gone as gone:
        return exited(F.CRASH, p, at, gone.exited, gone.op)
    except LineTooLong as exc:
        return too_long(F.BAD_OUTPUT, p, at, exc, "read")
    match reply:
        case Answered(line, msg, elapsed):
            p.unknown = 0
            clock.charge(elapsed)
            return play(terms, p, at, state, side, turn_id, line, msg, elapsed, allowance)
        case Refused(_, fault):
            return fault
        case Late(line, elapsed, waited):
            p.unknown = 0
            clock.charge(allowance)
            within_cpu = f" ({waited / 1000:.1f} ms of it the referee's own wait for a CPU, not counted)" if waited else ""
            return new_fault(F.TIMEOUT, p, at, f"no play within {within(allowance, limit)}: its line was read "
                             f"{(elapsed + waited) / 1000:.1f} ms after the turn was sent{within_cpu}", line, F.LATE)
        case Silent():
            p.unknown = 0
            clock.charge(allowance)
            return new_fault(F.TIMEOUT, p, at, f"no play within {within(allowance, limit)}", hint=F.LATE)
    assert_never(reply)


def play(terms: Terms, p: Player, at: At, state: DealState, side: GameSide, turn_id: int, line: Line,
         msg: m.FromBotMessage, elapsed: int, allowance: int) -> F.Fault | None:
    """Make the play ``msg`` (read in ``line``, ``elapsed`` microseconds after the turn was
    written) in ``state``; a fault if it is no play for this turn or an illegal one."""
    if type(msg) is not m.Play:
        return new_fault(F.OUT_OF_TURN, p, at, "answered a turn with a hello", line)
    if msg.turn is not None and msg.turn is not m.UNSET and msg.turn != turn_id:
        return new_fault(F.OUT_OF_TURN, p, at, f"the play answers turn {msg.turn}, but this is turn {turn_id}", line)
    try:
        played = state.push(side.engine_play(state, msg), seat := at.seat)
    except IllegalPlay as exc:
        legal = ", ".join(side.play_text(state, x) for x in state.legal_plays()[:12])
        return new_fault(F.ILLEGAL, p, at, f"{exc} (legal: {legal})", line)
    if elapsed > allowance:  # late by less than the margin: accepted, and the overrun said
        rec = play_record(seat, msg, elapsed, side.play_text(state, played))
        rec.over = (elapsed - allowance) / 1000
        terms.log.write(rec)
    else:
        terms.log.play(seat, msg, elapsed, side.play_text(state, played))
    return None


def within(allowance: int, limit: int) -> str:
    """A timeout's limit in words: the allowance, and the margin when there is one."""
    if limit > allowance:
        return f"{allowance / 1000:.0f} ms (and the margin of {(limit - allowance) / 1000:g} ms)"
    return f"{allowance / 1000:.0f} ms"


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
            p.channel.outbox.append(line)
    return len(history)


async def deliver(terms: Terms, p: Player, at: At) -> F.Fault | None:
    """Write what waits in ``p``'s outbox (a deal's end), asking nothing; then look at what the
    bot said unasked.  A fault if it cannot take the lines within a move's time, has exited, or
    said something it must not."""
    if p.channel.proc is None or not p.channel.outbox:
        p.channel.outbox = []
        return None
    failure = await p.channel.deliver(terms, at.seat)
    if failure is STUCK:
        return new_fault(F.TIMEOUT, p, at, "did not read its input (the pipe stayed full)", hint=F.UNREAD)
    if isinstance(failure, BotExited):
        return exited(F.CRASH, p, at, failure, "write")
    return unasked(terms, p, at)
