"""The referee's exchanges with one bot (PROTOCOL.md), each a unit given everything it works on:

* :func:`handshake`: ``hello`` out, the bot's ``hello`` back, within the start-up limit;
* :func:`turn`: ask the seat to move for a play (with the events waiting for it), read the
  answer by the referee's clock, check it with the engine and make it;
* :func:`queue_events`: put what happened in a deal into every seat's outbox, to ride on that
  seat's next write;
* :func:`deliver`: write what waits in a seat's outbox (the deal's end) without a question.

Where in the match an exchange happens comes as an :class:`At` (seat, game, deal), and what holds
for the whole match (the log, the time control, the clock, how long a turn may block) as
:class:`Terms`; no exchange reads or keeps a table's state, so each can be run on its own with a
scripted bot (:mod:`referee.transport`) and trio's mock clock.  :class:`~referee.table.Table`
strings them into deals and games and owns the processes and the faults' consequences.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import msgspec
import trio

from protocol import messages as m
from referee import faults as F
from referee.clock import TimeControl
from referee.engine import IllegalPlay
from referee.engine.state import DealState
from referee.errors import BotExited, LineTooLong
from referee.log import MatchLog
from referee.wire import GameWire

if TYPE_CHECKING:
    from referee.table import Player

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
    #: the referee's clock: trio's time (deadlines are by it, and a mock clock moves it in tests)
    now: Callable[[], float]
    #: seconds a turn may wait for the answer with the thread blocked in poll(2) before it waits
    #: through trio (see BotProcess.line_within); 0 when other work shares the loop
    block: float = 0.001


def new_fault(kind: str, p: Player, at: At, detail: str, line: bytes | None = None, hint: str | None = None) -> F.Fault:
    return F.Fault(kind, p.bot.name, at.seat, at.game, at.deal, detail, F.cut(line), hint)


# -- the handshake ---------------------------------------------------------------------------


async def handshake(terms: Terms, p: Player, at: At, hello: bytes, record: dict) -> F.Fault | None:
    """Send ``hello`` to ``p``'s freshly started bot and read its own within the start-up limit
    (lines of unknown types before it are skipped, within the caps); a fault if that fails.
    ``record`` is the log's ``hello`` record: its ``line`` and ``ms`` are filled in."""
    proc = p.proc
    assert proc is not None
    tc = terms.tc
    line = None
    begun = terms.now()
    with trio.move_on_at(begun + tc.startup) as scope:
        try:
            await proc.send(hello)
            while True:
                line = await proc.read_line()
                took = terms.now() - begun
                # Only a line that decodes is logged whole (the log's size per start is bounded).
                record["line"] = F.cut(line)
                record["ms"] = round(took * 1000, 3)
                if took > tc.startup:  # read after the deadline: late, as in turn()
                    return new_fault(F.STARTUP, p, at, f"no hello within the start-up limit of {tc.startup:g} s: its line was read "
                                     f"{took * 1000:.1f} ms after the process started", line)
                try:
                    msg = m.decode_from_bot(line)
                except m.TooDeep as exc:
                    return new_fault(F.STARTUP, p, at, f"expected a hello, but the line is {exc}", line)
                except msgspec.DecodeError as exc:
                    kind = m.message_type(line)
                    if kind is not None and kind not in m.FROM_BOT_TYPES:
                        too_much = unknown(p, kind, line, " before hello")
                        if too_much is None:
                            continue
                        return new_fault(F.STARTUP, p, at, too_much, line)
                    return new_fault(F.STARTUP, p, at, f"expected a hello, but the line is not valid: {exc}", line,
                                     F.STDOUT_ONLY if kind is None else F.ANSWER_HELLO)
                record["line"] = line.decode("utf-8", "replace")
                if not isinstance(msg, m.BotHello):
                    return new_fault(F.STARTUP, p, at, f"expected a hello, got a {msg.__struct_config__.tag!r} message", line,
                                     F.ANSWER_HELLO)
                break
        except BotExited as exc:
            return new_fault(F.STARTUP, p, at, f"{exc}")
        except LineTooLong as exc:
            return new_fault(F.STARTUP, p, at, f"{exc}", exc.prefix)
    if scope.cancelled_caught:
        return silent_start(terms, p, at)
    assert isinstance(msg, m.BotHello)  # the loop ends on a hello or returns
    if msg.protocol != m.PROTOCOL_VERSION:
        return new_fault(F.STARTUP, p, at, f"speaks protocol {msg.protocol}; this referee speaks {m.PROTOCOL_VERSION}", line)
    p.bot.hello = msg
    return None


def silent_start(terms: Terms, p: Player, at: At) -> F.Fault:
    """The fault of a bot that gave no hello in time, with what it did do: a bot whose answer
    sits in its output buffer has read the referee's hello; one that never read it is still
    loading (or reads nothing)."""
    assert p.proc is not None
    detail = f"no hello within the start-up limit of {terms.tc.startup:g} s"
    unfinished = p.proc.unfinished_line()
    if unfinished:
        return new_fault(F.STARTUP, p, at, f"{detail}: it wrote a line but never ended it", unfinished, F.NEWLINE)
    if p.proc.unread_input() == 0:
        return new_fault(F.STARTUP, p, at, f"{detail}, although it read the referee's hello", None, F.FLUSH)
    return new_fault(F.STARTUP, p, at, f"{detail}; it did not read the referee's hello", None, F.ANSWER_HELLO)


# -- what a bot says unasked -----------------------------------------------------------------


def unasked(terms: Terms, p: Player, at: At) -> F.Fault | None:
    """Look at what the bot wrote while nobody asked: a play is a fault, unknown types are
    ignored (and remarked on for ``referee check``) within the caps."""
    assert p.proc is not None
    try:
        lines = p.proc.ready_lines()
    except LineTooLong as exc:
        return new_fault(F.BAD_OUTPUT, p, at, str(exc), exc.prefix)
    for line in lines:
        # Lines are logged cut short: none of them is an answer (see answer()).
        terms.log.inp(at.seat, F.cut(line))
        if m.too_deep(line):
            return new_fault(F.BAD_OUTPUT, p, at, f"wrote a line of JSON nested deeper than {m.MAX_DEPTH} levels", line)
        kind = m.message_type(line)
        if kind in m.FROM_BOT_TYPES:
            return new_fault(F.OUT_OF_TURN, p, at, f"sent a {kind!r} message when it was not its turn", line)
        if kind is None:
            return new_fault(F.BAD_OUTPUT, p, at, "wrote a line that is not a JSON object", line, F.STDOUT_ONLY)
        if (too_much := unknown(p, kind, line)) is not None:
            return new_fault(F.BAD_OUTPUT, p, at, too_much, line)
    return None


def unknown(p: Player, kind: str, line: bytes, when: str = "") -> str | None:
    """Count a line of an unknown type, which is ignored; what is wrong when it is one too
    many (UNKNOWN_PER_MOVE, UNKNOWN_PER_MATCH), else ``None``."""
    p.unknown += 1
    p.bot.unknown_bytes += len(line) + 1
    if p.unknown > UNKNOWN_PER_MOVE:
        return (f"wrote more than {UNKNOWN_PER_MOVE} lines of unknown types in one move "
                "(ignored messages are for new protocol versions; write notes to stderr)")
    if p.bot.unknown_bytes > UNKNOWN_PER_MATCH:
        return (f"wrote more than {UNKNOWN_PER_MATCH >> 20} MiB of lines of unknown types in this match "
                "(ignored messages are for new protocol versions; write notes to stderr)")
    p.bot.remark(f"sent a message of unknown type {F.cut(kind, 40)!r}{when} (ignored)")
    return None


# -- a turn ----------------------------------------------------------------------------------


def answer(terms: Terms, p: Player, at: At, line: bytes, read_at: float | None = None) -> tuple[m.FromBotMessage | None, F.Fault | None]:
    """Log and decode a line read in answer to a turn (at ``read_at`` by the referee's clock):
    ``(message, None)``, ``(None, fault)``, or ``(None, None)`` for a message of an unknown
    type, which is ignored.

    Only a line that decodes as a message is logged whole; any other is logged cut short
    (the fault keeps the same evidence), so that the log's size per move is bounded.
    """
    seat = at.seat
    try:
        msg = m.decode_from_bot(line)
    except m.TooDeep as exc:
        terms.log.inp(seat, F.cut(line))
        return None, new_fault(F.BAD_OUTPUT, p, at, f"the answer is {exc}", line)
    except msgspec.ValidationError as exc:
        terms.log.inp(seat, F.cut(line))
        kind = m.message_type(line)
        if kind is not None and kind not in m.FROM_BOT_TYPES:
            too_much = unknown(p, kind, line)
            return None, None if too_much is None else new_fault(F.BAD_OUTPUT, p, at, too_much, line)
        if kind is None:  # msgspec checks types as it parses: "[x]" fails as an array
            return None, new_fault(F.BAD_OUTPUT, p, at, "wrote a line that is not a JSON object", line, F.STDOUT_ONLY)
        return None, new_fault(F.BAD_OUTPUT, p, at, f"the play does not fit the protocol: {exc}", line)
    except msgspec.DecodeError as exc:
        terms.log.inp(seat, F.cut(line))
        return None, new_fault(F.BAD_OUTPUT, p, at, f"not JSON: {exc}", line, F.STDOUT_ONLY)
    terms.log.inp(seat, line, read_at)
    return msg, None


async def turn(terms: Terms, p: Player, at: At, state: DealState, wire: GameWire, turn_id: int) -> F.Fault | None:
    """Ask ``at.seat`` (player ``p``) for a play in ``state``, turn ``turn_id`` of the match,
    and make it; a fault if anything goes wrong.  The turn goes out with what waits in the
    player's outbox, in one write."""
    seat = at.seat
    proc = p.proc
    assert proc is not None
    fault = unasked(terms, p, at)
    if fault is not None:
        return fault
    clock = p.bot.clock
    assert clock is not None  # set when the match starts
    allowance = clock.allowance()
    bank = None if clock.bank is None else int(clock.bank * 1000)
    data = p.outbox
    data.append(m.encode_line(wire.turn_message(state, int(allowance * 1000), bank, turn_id)))
    p.outbox = []
    request = b"".join(data)
    now = terms.now
    start = now()
    terms.log.out(seat, data, request, start)
    msg = None
    line = b""
    # A bot on our CPU has usually answered by the time the write returns (the kernel runs
    # it at once), so try without waiting first: that needs no cancel scope, which costs
    # more than the rest of the turn's trio work.  A scope is made only to wait.
    await trio.lowlevel.checkpoint_if_cancelled()
    sent = proc.write_nowait(request) if allowance > 0 else 0
    # The deadline is hard: a line counts when the referee reads it, by its own clock (a
    # line can be read after the deadline without the cancel scope firing, e.g. one that
    # was already buffered, or when the loop was busy).  Each read is timed at once.
    elapsed = 0.0
    if sent == len(request) and (ready := proc.line_within(min(terms.block, allowance))) is not None:
        line = ready
        elapsed = now() - start
        if elapsed <= allowance:
            msg, fault = answer(terms, p, at, line, start + elapsed)
            if fault is not None:
                return fault
    timed_out = False
    if msg is None and elapsed <= allowance:
        with trio.move_on_at(start + allowance) as scope:
            try:
                if sent < len(request):
                    await proc.send(request[sent:])
                while msg is None:  # a message of an unknown type is skipped
                    line = await proc.read_line()
                    elapsed = now() - start
                    if elapsed > allowance:
                        break
                    msg, fault = answer(terms, p, at, line, start + elapsed)
                    if fault is not None:
                        return fault
            except BotExited as exc:
                return new_fault(F.CRASH, p, at, str(exc))
            except LineTooLong as exc:
                return new_fault(F.BAD_OUTPUT, p, at, str(exc), exc.prefix)
        timed_out = scope.cancelled_caught
    p.unknown = 0
    if timed_out:
        clock.charge(allowance)
        return new_fault(F.TIMEOUT, p, at, f"no play within {allowance * 1000:.0f} ms", hint=F.LATE)
    if elapsed > allowance:
        clock.charge(allowance)
        terms.log.inp(seat, F.cut(line))
        return new_fault(F.TIMEOUT, p, at, f"no play within {allowance * 1000:.0f} ms: its line was read "
                         f"{elapsed * 1000:.1f} ms after the turn was sent", line, F.LATE)
    clock.charge(elapsed)
    if type(msg) is not m.Play:
        return new_fault(F.OUT_OF_TURN, p, at, "answered a turn with a hello", line)
    if msg.turn is not None and msg.turn is not m.UNSET and msg.turn != turn_id:
        return new_fault(F.OUT_OF_TURN, p, at, f"the play answers turn {msg.turn}, but this is turn {turn_id}", line)
    try:
        played = state.push(wire.engine_play(state, msg), seat)
    except IllegalPlay as exc:
        legal = ", ".join(wire.play_text(state, x) for x in state.legal_plays()[:12])
        return new_fault(F.ILLEGAL, p, at, f"{exc} (legal: {legal})", line)
    terms.log.write(play_record(seat, msg, elapsed, wire.play_text(state, played)))
    return None


def play_record(seat: int, msg: m.Play, elapsed: float, played: str) -> dict:
    """The log's record of an accepted play; ``closed`` and ``stop`` only where they are true, so a
    line game's record is what it always was."""
    rec = {"k": "play", "seat": seat, "tile": None if msg.tile is None else list(msg.tile), "end": msg.end,
           "ms": round(elapsed * 1000, 3), "as": played}
    if _extras(msg) != _NO_EXTRAS:  # the usual play has none: one look instead of one per field
        for name in m.PLAY_EXTRAS:
            value = getattr(msg, name)
            if value is not m.UNSET and value is not False:
                rec[name] = value
    return rec


_extras = operator.attrgetter(*m.PLAY_EXTRAS)
_NO_EXTRAS = (m.UNSET,) * len(m.PLAY_EXTRAS) if len(m.PLAY_EXTRAS) > 1 else m.UNSET


# -- events and deliveries -------------------------------------------------------------------


def queue_events(state: DealState, delivered: int, seating: list[Player], wire: GameWire) -> int:
    """Put ``state``'s events from ``delivered`` on into every seat's outbox; the new count
    delivered."""
    history = state.history
    if delivered == len(history):
        return delivered
    n = len(seating)
    for event in history[delivered:]:
        for p, line in zip(seating, wire.event_lines(state, event, n)):
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
    terms.log.out(at.seat, data, request)
    # As in turn(): a cancel scope only when the pipe cannot take it all at once.
    await trio.lowlevel.checkpoint_if_cancelled()
    sent = proc.write_nowait(request)
    if sent < len(request):
        failure = None
        with trio.move_on_after(terms.tc.move) as scope:
            try:
                await proc.send(request[sent:])
            except BotExited as exc:
                failure = new_fault(F.CRASH, p, at, str(exc))
        if scope.cancelled_caught:
            failure = new_fault(F.TIMEOUT, p, at, "did not read its input (the pipe stayed full)", hint=F.UNREAD)
        if failure is not None:
            return failure
    return unasked(terms, p, at)
