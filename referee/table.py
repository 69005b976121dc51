"""The referee at the table: plays games of the engine with bots in the seats (processes, or
scripted in-process bots in tests, behind :mod:`referee.transport`).

This module owns the conversation with bots (PROTOCOL.md), their clocks and their faults.  It
asks one seat at a time for a play, checks it with the engine, and tells every seat what it may
see.  Events for seats that are not on the move wait in that seat's outbox and go out with its
next ``turn`` (or the ``deal_end``), so a move costs one write and one read.

Nothing a bot does stops a match: every failure becomes a :class:`~referee.faults.Fault`, the
deal is scored as that side's loss, the bot's process group is killed, and a fresh process takes
the seat at the next deal.  A bot with ``max_faults`` faults forfeits every deal left.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import msgspec
import trio

from protocol import messages as m
from referee import faults as F
from referee.clock import Clock, TimeControl
from referee.engine import IllegalPlay
from referee.engine.deal import Deal
from referee.engine.game import DealRecord, Game, GameOutcome
from referee.engine.state import DealState
from referee.errors import BotError, BotExited, BotStartError, LineTooLong
from referee.log import MatchLog, deal_json, special_record
from referee.process import Confinement
from referee.sandbox import bot_files
from referee.transport import BotTransport, Launch, launch_process
from referee.wire import deal_end, game_end, wire_for

REFEREE_NAME = "referee 0.1.0"

#: Lines of an unknown message type a bot process may write in one move (from its previous
#: answer to its next one, or before its hello); one more is a bad_output fault.
UNKNOWN_PER_MOVE = 16
#: Bytes of lines of unknown types a bot may write in one match; more is a bad_output fault.
UNKNOWN_PER_MATCH = 1 << 20
#: Different remarks kept per bot; the rest are counted under one.
_REMARKS = 20


@dataclass
class Bot:
    """A bot entered in a match: a name, a command line, optional limits."""

    name: str
    argv: list[str]
    confinement: Confinement | None = None
    faults: list[F.Fault] = field(default_factory=list)
    forfeited: bool = False
    hello: m.BotHello | None = None
    clock: Clock | None = None
    #: plain-words remarks about harmless oddities (unknown message types…) and how many
    #: times each happened, for ``referee check``
    remarks: Counter[str] = field(default_factory=Counter)
    #: bytes of lines of unknown types so far in the match (see UNKNOWN_PER_MATCH)
    unknown_bytes: int = 0

    def remark(self, text: str) -> None:
        if text not in self.remarks and len(self.remarks) >= _REMARKS:
            text = "did other harmless things (ignored)"
        self.remarks[text] += 1


class Player:
    """One process slot of a bot (a bot in a pair game has two).  The process is replaced after
    a fault; the slot, and its place in the seating, stays."""

    __slots__ = ("bot", "slot", "proc", "outbox", "pending", "starts", "unknown")

    def __init__(self, bot: Bot, slot: int) -> None:
        self.bot = bot
        self.slot = slot
        self.proc: BotTransport | None = None
        self.outbox: list[bytes] = []
        self.pending: F.Fault | None = None  # a fault found between deals, charged to the next
        self.starts = 0
        self.unknown = 0  # lines of unknown types since the last answer (see UNKNOWN_PER_MOVE)

    @property
    def label(self) -> str:
        return self.bot.name if self.slot == 0 else f"{self.bot.name}#{self.slot}"


class At(NamedTuple):
    """Where in the match an exchange with a bot happens: what its fault records say.  Each
    exchange (the handshake, a turn, the events and the deal's end) is given one."""

    seat: int
    game: int
    deal: int


#: The handshakes at the start of a match: no seat yet.
OPENING = At(-1, 0, 0)


class Table:
    """Plays games with a fixed set of players; seats are assigned per game (orientation)."""

    def __init__(
        self,
        nursery: trio.Nursery,
        players: list[Player],
        *,
        tc: TimeControl,
        log: MatchLog,
        stderr_dir: Path,
        max_line: int = 65536,
        max_faults: int = 3,
        on_fault: Callable[[F.Fault], None] | None = None,
        on_closed: Callable[[Player, BotTransport, list[bytes]], None] | None = None,
        block: float = 0.001,
        hidden: Sequence[Path] = (),
        launch: Launch = launch_process,
    ) -> None:
        self.nursery = nursery
        #: how a bot is started: a process by default (see :mod:`referee.transport`)
        self.launch = launch
        self.players = players
        self.tc = tc
        self.log = log
        self.stderr_dir = stderr_dir
        #: what no sandboxed bot may see: the log, the deal file, the league's database...
        self.hidden = (*hidden, stderr_dir)
        self.max_line = max_line
        self.max_faults = max_faults
        self.on_fault = on_fault
        #: sees each process ended by :meth:`close`, with the lines it wrote that nobody read
        self.on_closed = on_closed
        #: Seconds a turn may wait for the answer with the thread blocked in poll(2) before it
        #: waits through trio (see BotProcess.line_within); 0 when other work shares the loop.
        self.block = block
        self.limits = m.Limits(
            startup_ms=round(tc.startup * 1000),
            move_ms=round(tc.move * 1000),
            bank_ms=None if tc.bank is None else round(tc.bank * 1000),
            increment_ms=round(tc.increment * 1000),
            max_line=max_line,
            max_faults=max_faults,
        )
        self._hello = m.encode_line(m.Hello(m.PROTOCOL_VERSION, REFEREE_NAME, self.limits))
        for p in players:
            if p.bot.clock is None:
                p.bot.clock = Clock(tc)
        self.turn_id = 0  # every turn of the match gets the next id; a play may echo it
        # trio.current_time() itself, without the two calls that lead to it (the turn's hot path)
        self._now = trio.lowlevel.current_clock().current_time

    # -- processes ---------------------------------------------------------------------------

    async def open(self) -> None:
        """Start every player's process and shake hands, all at once.

        Raises:
            BotStartError: a bot could not be started or did not answer ``hello``; the message
                includes the tail of its stderr.
        """
        failures: list[str] = []
        shakes: dict[int, dict] = {}

        async def start(i: int, p: Player) -> None:
            fault = await self._start(p, OPENING, shakes.setdefault(i, {}))
            if fault is not None:
                tail = p.proc.stderr_tail() if p.proc is not None else ""
                failures.append(f"{p.label}: {fault.explain()}" + (f"\n--- stderr of {p.label} ---\n{tail}" if tail.strip() else ""))

        async with trio.open_nursery() as n:
            for i, p in enumerate(self.players):
                n.start_soon(start, i, p)
        # The handshakes ran at once; their records go to the log in player order, so two runs
        # of the same match write the same log.
        for i in sorted(shakes):
            self.log.write(shakes[i])
        if failures:
            await self.close()
            raise BotStartError("\n".join(sorted(failures)))

    async def _start(self, p: Player, at: At, record: dict | None = None) -> F.Fault | None:
        """Start a fresh process for ``p`` and shake hands; a fault if that fails.

        The handshake is logged as one ``hello`` record, into ``record`` when given (the caller
        writes it later), else at once.
        """
        if record is None:
            record = {}
            try:
                return await self._shake(p, record, at)
            finally:
                self.log.write(record)
        return await self._shake(p, record, at)

    async def _shake(self, p: Player, record: dict, at: At) -> F.Fault | None:
        p.starts += 1
        record.update({"k": "hello", "bot": p.label, "start": p.starts, "seat": at.seat, "line": None})
        suffix = "" if p.starts == 1 else f".{p.starts}"
        path = self.stderr_dir / f"{_safe(p.label)}{suffix}.stderr.log"
        try:
            p.proc = await self.launch(self.nursery, p.bot, name=p.label, stderr_path=path, max_line=self.max_line, hidden=self.hidden_from(p.bot))
        except (BotError, OSError) as exc:
            return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal, f"could not start: {exc}")
        p.outbox = []
        p.unknown = 0
        line = None
        begun = self._now()
        with trio.move_on_at(begun + self.tc.startup) as scope:
            try:
                await p.proc.send(self._hello)
                while True:
                    line = await p.proc.read_line()
                    took = self._now() - begun
                    # Only a line that decodes is logged whole (the log's size per start is bounded).
                    record["line"] = F.cut(line)
                    record["ms"] = round(took * 1000, 3)
                    if took > self.tc.startup:  # read after the deadline: late, as in _turn
                        return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                                       f"no hello within the start-up limit of {self.tc.startup:g} s: its line was read "
                                       f"{took * 1000:.1f} ms after the process started", F.cut(line))
                    try:
                        msg = m.decode_from_bot(line)
                    except m.TooDeep as exc:
                        return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                                       f"expected a hello, but the line is {exc}", F.cut(line))
                    except msgspec.DecodeError as exc:
                        kind = m.message_type(line)
                        if kind is not None and kind not in m.FROM_BOT_TYPES:
                            too_much = self._unknown(p, kind, line, " before hello")
                            if too_much is None:
                                continue
                            return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal, too_much, F.cut(line))
                        return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                                       f"expected a hello, but the line is not valid: {exc}", F.cut(line),
                                       F.STDOUT_ONLY if kind is None else F.ANSWER_HELLO)
                    record["line"] = line.decode("utf-8", "replace")
                    if not isinstance(msg, m.BotHello):
                        return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                                       f"expected a hello, got a {msg.__struct_config__.tag!r} message", F.cut(line), F.ANSWER_HELLO)
                    break
            except BotExited as exc:
                return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal, f"{exc}")
            except LineTooLong as exc:
                return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal, f"{exc}", F.cut(exc.prefix))
        if scope.cancelled_caught:
            return self._silent_start(p, at)
        assert isinstance(msg, m.BotHello)  # the loop ends on a hello or returns
        if msg.protocol != m.PROTOCOL_VERSION:
            return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                           f"speaks protocol {msg.protocol}; this referee speaks {m.PROTOCOL_VERSION}", F.cut(line))
        p.bot.hello = msg
        return None

    def _silent_start(self, p: Player, at: At) -> F.Fault:
        """The fault of a bot that gave no hello in time, with what it did do: a bot whose
        answer sits in its output buffer has read the referee's hello; one that never read it
        is still loading (or reads nothing)."""
        assert p.proc is not None
        detail = f"no hello within the start-up limit of {self.tc.startup:g} s"
        unfinished = p.proc.unfinished_line()
        if unfinished:
            return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                           f"{detail}: it wrote a line but never ended it", F.cut(unfinished), F.NEWLINE)
        if p.proc.unread_input() == 0:
            return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                           f"{detail}, although it read the referee's hello", None, F.FLUSH)
        return F.Fault(F.STARTUP, p.bot.name, at.seat, at.game, at.deal,
                       f"{detail}; it did not read the referee's hello", None, F.ANSWER_HELLO)

    def hidden_from(self, bot: Bot) -> list[Path]:
        """What a sandboxed bot must not see: :attr:`hidden`, and the other bots' files and
        working directories (two bots may live in one directory)."""
        own = set(bot_files(bot.argv))
        own_cwd = bot.confinement.cwd if bot.confinement is not None else None
        out = list(self.hidden)
        for other in {id(p.bot): p.bot for p in self.players}.values():
            if other is bot:
                continue
            out += [f for f in bot_files(other.argv) if f not in own]
            cwd = other.confinement.cwd if other.confinement is not None else None
            if cwd is not None and cwd != own_cwd:
                out.append(cwd)
        return out

    async def close(self) -> None:
        """Tell every live process the match is over and end it (politely, then by force)."""
        bye = m.encode_line(m.MatchEnd())

        async def end(p: Player) -> None:
            proc = p.proc
            if proc is None:
                return
            with trio.move_on_after(1.0):
                try:
                    await proc.send(b"".join(p.outbox) + bye)
                except BotError:
                    pass
            p.outbox = []
            unread = await proc.close(grace=1.0)
            p.proc = None
            if self.on_closed is not None:
                self.on_closed(p, proc, unread)

        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as n:
                for p in self.players:
                    n.start_soon(end, p)

    async def _retire(self, p: Player) -> None:
        if p.proc is not None:
            await p.proc.kill()
            p.proc = None
        p.outbox = []

    # -- faults ------------------------------------------------------------------------------

    async def _fault(self, p: Player, fault: F.Fault, charged: int | None = None) -> None:
        """Record ``fault``; ``charged`` is the seat whose deal it costs when that is not the
        seat it happened in (a fault found between deals costs the bot's next deal)."""
        p.bot.faults.append(fault)
        self.log.write({"k": "fault", **fault.to_json(), **({} if charged is None else {"charged": charged})})
        if self.on_fault is not None:
            self.on_fault(fault)
        await self._retire(p)
        if len(p.bot.faults) >= self.max_faults and not p.bot.forfeited:
            p.bot.forfeited = True
            self.log.write({"k": "forfeit", "bot": p.bot.name, "faults": len(p.bot.faults)})
            for other in self.players:
                if other.bot is p.bot:
                    await self._retire(other)

    def _new_fault(self, kind: str, p: Player, at: At, detail: str, line: bytes | None = None, hint: str | None = None) -> F.Fault:
        return F.Fault(kind, p.bot.name, at.seat, at.game, at.deal, detail, F.cut(line), hint)

    # -- games -------------------------------------------------------------------------------

    async def play_game(
        self,
        game: Game,
        seating: list[Player],
        next_deal: Callable[[], tuple[int, Deal]],
        game_number: int,
        after_deal: Callable[[DealRecord], None] | None = None,
        where: dict | None = None,
        opening: Sequence[tuple[int, m.Play]] = (),
    ) -> GameOutcome:
        """Play ``game`` to its end with ``seating[s]`` in seat ``s``.

        ``next_deal()`` returns the next ``(stream index, deal)``; void deals take another.
        ``opening`` is the game's staged opening: ``(seat, play)`` moves the referee makes itself,
        in order, before any bot is asked (see :meth:`play_deal`).
        """
        staged = deque(opening)
        outcome = game.outcome()
        while outcome is None:
            await self.play_deal(game, seating, *next_deal(), game_number, after_deal, where, staged)
            outcome = game.outcome()
        self.log.write({"k": "game_end", **(where or {"game": game_number}), "totals": list(outcome.totals), "winners": list(outcome.winners),
                        "losers": list(outcome.losers), "dry": list(outcome.dry), "reason": outcome.reason})
        line = m.encode_line(game_end(outcome))
        for p in seating:
            if p.proc is not None:
                p.outbox.append(line)
        return outcome

    async def play_deal(
        self,
        game: Game,
        seating: list[Player],
        stream: int,
        deal: Deal,
        game_number: int,
        after_deal: Callable[[DealRecord], None] | None = None,
        where: dict | None = None,
        staged: deque[tuple[int, m.Play]] | None = None,
    ) -> DealRecord | None:
        """Play one deal (``None`` when it was void and must be redealt).

        While ``staged`` holds moves, each turn is its next move, made by the referee without
        asking the bot and logged as a ``play`` with ``"staged": true`` (``referee check`` stages a
        position this way).  A fault or a forfeit drops the moves left: the game has left the
        line they were chosen on.
        """
        deal_number = game.next_number
        state = game.start(deal)
        void = game.records[-1].void if state is None else None
        where = where or {"game": game_number}
        deal_rec = {"k": "deal", **where, "deal": deal_number, "stream": stream, **deal_json(deal), "void": void}
        special = game.special() if state is not None else None
        if special is not None:
            deal_rec["special"] = special_record(special)  # sea_kozel: the state this deal is played under
        self.log.write(deal_rec)
        if state is None:
            return None
        n = game.players
        ats = [At(seat, game_number, deal_number) for seat in range(n)]  # each seat's exchanges

        # A bot that faulted between deals, forfeited the match, or cannot be restarted loses
        # this deal before it starts.
        fault: F.Fault | None
        for seat, p in enumerate(seating):
            if p.bot.forfeited:
                state.forfeit(seat)
                self.log.write({"k": "forfeited_deal", "seat": seat, "bot": p.bot.name})
                break
            if p.pending is not None:
                fault, p.pending = p.pending, None
                await self._fault(p, fault, charged=seat)
                state.forfeit(seat)
                break
            if p.proc is None:
                fault = await self._start(p, ats[seat])
                if fault is not None:
                    await self._fault(p, fault)
                    state.forfeit(seat)
                    break

        wire = wire_for(state)
        for seat, p in enumerate(seating):
            if p.proc is not None:
                p.outbox.append(m.encode_line(wire.deal_start(game, deal, state, seat, game_number)))
        delivered = 0
        if staged and state.end is not None:  # a fault or a forfeit ended the deal at its start
            staged.clear()
        while state.end is None:
            delivered = _queue_events(state, delivered, seating, n)
            seat = state.to_move()
            if staged:
                self._stage(state, seat, *staged.popleft())
                continue
            fault = await self._turn(seating[seat], ats[seat], state)
            if fault is not None:
                await self._fault(seating[seat], fault)
                state.forfeit(seat)
        _queue_events(state, delivered, seating, n)

        rec = game.finish(state)
        assert rec.end is not None
        end_rec = {"k": "deal_end", **where, "deal": rec.number, "reason": rec.end.reason, "seat": rec.end.seat,
                   "values": list(rec.values), "wrote": list(rec.wrote), "totals": list(rec.totals), "notes": list(rec.notes)}
        if rec.rule is not None:
            end_rec["rule"] = rec.rule  # sea_kozel, general, blitz: the rule that decided it
        self.log.write(end_rec)
        end_line = m.encode_line(deal_end(rec))
        for p in seating:
            p.outbox.append(end_line)
        await self._flush_all(seating, ats)
        self.log.flush()
        if after_deal is not None:
            after_deal(rec)
        return rec

    def _stage(self, state: DealState, seat: int, staged_seat: int, move: m.Play) -> None:
        """Make a move of the staged opening for ``seat``, which is to move."""
        if staged_seat != seat:
            raise ValueError(f"the staged opening has seat {staged_seat} move where seat {seat} is to move")
        wire = wire_for(state)
        played = state.push(wire.engine_play(state, move), seat)
        rec = play_record(seat, move, 0.0, wire.play_text(state, played))
        del rec["ms"]  # no bot was asked
        rec["staged"] = True
        self.log.write(rec)

    async def _flush_all(self, seating: list[Player], ats: list[At]) -> None:
        """Deliver every outbox (deal end); a bot that cannot take it faults at its next deal."""
        for seat, p in enumerate(seating):
            at = ats[seat]
            if p.proc is None or not p.outbox:
                p.outbox = []
                continue
            data = p.outbox
            p.outbox = []
            self.log.out(seat, data)
            request = b"".join(data)
            failure = None
            # As in _turn: a cancel scope only when the pipe cannot take it all at once.
            await trio.lowlevel.checkpoint_if_cancelled()
            sent = p.proc.write_nowait(request)
            if sent < len(request):
                with trio.move_on_after(self.tc.move) as scope:
                    try:
                        await p.proc.send(request[sent:])
                    except BotExited as exc:
                        failure = self._new_fault(F.CRASH, p, at, str(exc))
                if scope.cancelled_caught:
                    failure = self._new_fault(F.TIMEOUT, p, at, "did not read its input (the pipe stayed full)", hint=F.UNREAD)
            if failure is None:
                failure = self._unasked(p, at)
            if failure is not None and p.pending is None:
                p.pending = failure

    def _unasked(self, p: Player, at: At) -> F.Fault | None:
        """Look at what the bot wrote while nobody asked: a play is a fault, unknown types are
        ignored (and remarked on for ``referee check``)."""
        seat = at.seat
        assert p.proc is not None
        try:
            lines = p.proc.ready_lines()
        except LineTooLong as exc:
            return self._new_fault(F.BAD_OUTPUT, p, at, str(exc), exc.prefix)
        for line in lines:
            # Lines are logged cut short: none of them is an answer (see _answer).
            self.log.inp(seat, F.cut(line))
            if m.too_deep(line):
                return self._new_fault(F.BAD_OUTPUT, p, at, f"wrote a line of JSON nested deeper than {m.MAX_DEPTH} levels", line)
            kind = m.message_type(line)
            if kind in m.FROM_BOT_TYPES:
                return self._new_fault(F.OUT_OF_TURN, p, at, f"sent a {kind!r} message when it was not its turn", line)
            if kind is None:
                return self._new_fault(F.BAD_OUTPUT, p, at, "wrote a line that is not a JSON object", line, F.STDOUT_ONLY)
            if (too_much := self._unknown(p, kind, line)) is not None:
                return self._new_fault(F.BAD_OUTPUT, p, at, too_much, line)
        return None

    def _unknown(self, p: Player, kind: str, line: bytes, when: str = "") -> str | None:
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

    def _answer(self, p: Player, at: At, line: bytes) -> tuple[m.FromBotMessage | None, F.Fault | None]:
        """Log and decode a line read in answer to a turn: ``(message, None)``, ``(None, fault)``,
        or ``(None, None)`` for a message of an unknown type, which is ignored.

        Only a line that decodes as a message is logged whole; any other is logged cut short
        (the fault keeps the same evidence), so that the log's size per move is bounded.
        """
        seat = at.seat
        try:
            msg = m.decode_from_bot(line)
        except m.TooDeep as exc:
            self.log.inp(seat, F.cut(line))
            return None, self._new_fault(F.BAD_OUTPUT, p, at, f"the answer is {exc}", line)
        except msgspec.ValidationError as exc:
            self.log.inp(seat, F.cut(line))
            kind = m.message_type(line)
            if kind is not None and kind not in m.FROM_BOT_TYPES:
                too_much = self._unknown(p, kind, line)
                return None, None if too_much is None else self._new_fault(F.BAD_OUTPUT, p, at, too_much, line)
            if kind is None:  # msgspec checks types as it parses: "[x]" fails as an array
                return None, self._new_fault(F.BAD_OUTPUT, p, at, "wrote a line that is not a JSON object", line, F.STDOUT_ONLY)
            return None, self._new_fault(F.BAD_OUTPUT, p, at, f"the play does not fit the protocol: {exc}", line)
        except msgspec.DecodeError as exc:
            self.log.inp(seat, F.cut(line))
            return None, self._new_fault(F.BAD_OUTPUT, p, at, f"not JSON: {exc}", line, F.STDOUT_ONLY)
        self.log.inp(seat, line)
        return msg, None

    async def _turn(self, p: Player, at: At, state: DealState) -> F.Fault | None:
        """Ask ``at.seat`` for a play and make it; a fault if anything goes wrong."""
        seat = at.seat
        proc = p.proc
        assert proc is not None
        fault = self._unasked(p, at)
        if fault is not None:
            return fault
        clock = p.bot.clock
        assert clock is not None  # set when the match starts
        allowance = clock.allowance()
        bank = None if clock.bank is None else int(clock.bank * 1000)
        self.turn_id += 1
        wire = wire_for(state)
        p.outbox.append(m.encode_line(wire.turn_message(state, int(allowance * 1000), bank, self.turn_id)))
        data = p.outbox
        p.outbox = []
        self.log.out(seat, data)
        request = b"".join(data)
        msg = None
        line = b""
        start = self._now()
        # A bot on our CPU has usually answered by the time the write returns (the kernel runs
        # it at once), so try without waiting first: that needs no cancel scope, which costs
        # more than the rest of the turn's trio work.  A scope is made only to wait.
        await trio.lowlevel.checkpoint_if_cancelled()
        sent = proc.write_nowait(request) if allowance > 0 else 0
        # The deadline is hard: a line counts when the referee reads it, by its own clock (a
        # line can be read after the deadline without the cancel scope firing, e.g. one that
        # was already buffered, or when the loop was busy).  Each read is timed at once.
        elapsed = 0.0
        if sent == len(request) and (ready := proc.line_within(min(self.block, allowance))) is not None:
            line = ready
            elapsed = self._now() - start
            if elapsed <= allowance:
                msg, fault = self._answer(p, at, line)
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
                        elapsed = self._now() - start
                        if elapsed > allowance:
                            break
                        msg, fault = self._answer(p, at, line)
                        if fault is not None:
                            return fault
                except BotExited as exc:
                    return self._new_fault(F.CRASH, p, at, str(exc))
                except LineTooLong as exc:
                    return self._new_fault(F.BAD_OUTPUT, p, at, str(exc), exc.prefix)
            timed_out = scope.cancelled_caught
        p.unknown = 0
        if timed_out:
            clock.charge(allowance)
            return self._new_fault(F.TIMEOUT, p, at, f"no play within {allowance * 1000:.0f} ms", hint=F.LATE)
        if elapsed > allowance:
            clock.charge(allowance)
            self.log.inp(seat, F.cut(line))
            return self._new_fault(F.TIMEOUT, p, at, f"no play within {allowance * 1000:.0f} ms: its line was read "
                                   f"{elapsed * 1000:.1f} ms after the turn was sent", line, F.LATE)
        clock.charge(elapsed)
        if type(msg) is not m.Play:
            return self._new_fault(F.OUT_OF_TURN, p, at, "answered a turn with a hello", line)
        if msg.turn is not None and msg.turn is not m.UNSET and msg.turn != self.turn_id:
            return self._new_fault(F.OUT_OF_TURN, p, at, f"the play answers turn {msg.turn}, but this is turn {self.turn_id}", line)
        try:
            played = state.push(wire.engine_play(state, msg), seat)
        except IllegalPlay as exc:
            legal = ", ".join(wire.play_text(state, x) for x in state.legal_plays()[:12])
            return self._new_fault(F.ILLEGAL, p, at, f"{exc} (legal: {legal})", line)
        self.log.write(play_record(seat, msg, elapsed, wire.play_text(state, played)))
        return None


def play_record(seat: int, msg: m.Play, elapsed: float, played: str) -> dict:
    """The log's record of an accepted play; ``closed`` and ``stop`` only where they are true, so a
    line game's record is what it always was."""
    rec = {"k": "play", "seat": seat, "tile": None if msg.tile is None else list(msg.tile), "end": msg.end,
           "ms": round(elapsed * 1000, 3), "as": played}
    for name in m.PLAY_EXTRAS:
        value = getattr(msg, name)
        if value is not m.UNSET and value is not False:
            rec[name] = value
    return rec


def _queue_events(state: DealState, delivered: int, seating: list[Player], n: int) -> int:
    """Put the events from ``delivered`` on into every seat's outbox; the new count delivered."""
    history = state.history
    if delivered == len(history):
        return delivered
    wire = wire_for(state)
    for event in history[delivered:]:
        for seat, line in enumerate(wire.event_lines(state, event, n)):
            seating[seat].outbox.append(line)
    return len(history)


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label)
