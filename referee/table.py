"""The referee at the table: plays games of the engine with bots in the seats (processes, or
scripted in-process bots in tests, behind :mod:`referee.transport`).

This module owns the bots' processes, their clocks and their faults, and strings the exchanges
of :mod:`referee.exchange` (the handshake, the turns, the events, the deal's end) into deals and
games: it asks one seat at a time for a play and tells every seat what it may see.  Events for
seats that are not on the move wait in that seat's outbox and go out with its next ``turn`` (or
the ``deal_end``), so a move costs one write and one read.

Nothing a bot does stops a match: every failure becomes a :class:`~referee.faults.Fault`, the
deal is scored as that side's loss, the bot's process group is killed, and a fresh process takes
the seat at the next deal.  A bot with ``max_faults`` faults forfeits every deal left.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from protocol import messages as m
from referee import faults as F
from referee.clock import Clock, TimeControl
from referee.engine.deal import Deal
from referee.engine.game import DealRecord, Game, GameOutcome
from referee.engine.line import FAULT
from referee.engine.state import DealState
from referee.errors import BotError, BotStartError
from referee.exchange import OPENING, At, Terms, deliver, handshake, new_fault, play_record, queue_events, turn
from referee.log import MatchLog, deal_json, special_record
from referee.process import Confinement
from referee.sandbox import hidden_from
from referee.transport import BotTransport, Launch, launch_process
from referee.wire import deal_end, game_end, wire_for

REFEREE_NAME = "referee 0.1.0"

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
        #: what every exchange with a bot is given; the clock is trio.current_time() itself,
        #: without the two calls that lead to it (the turn's hot path); ``block`` is 0 when
        #: other work shares the loop (see Terms.block)
        self.terms = Terms(log, tc, trio.lowlevel.current_clock().current_time, block)

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
            return new_fault(F.STARTUP, p, at, f"could not start: {exc}")
        p.outbox = []
        p.unknown = 0
        return await handshake(self.terms, p, at, self._hello, record)

    def hidden_from(self, bot: Bot) -> list[Path]:
        """What a sandboxed bot must not see: :attr:`hidden`, and the other bots' files and
        folders that are not also its own (see :func:`referee.sandbox.hidden_from`)."""
        def place(b: Bot) -> tuple[list[str], Path | None]:
            return b.argv, b.confinement.cwd if b.confinement is not None else None
        others = {id(p.bot): p.bot for p in self.players if p.bot is not bot}.values()
        return hidden_from([place(bot)], [place(o) for o in others], self.hidden)

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
        self.end_game(outcome, seating, where or {"game": game_number})
        return outcome

    def end_game(self, outcome: GameOutcome, seating: list[Player], where: dict) -> None:
        """Log a game's outcome and queue its ``game_end`` for every seat; it goes out with the
        seat's next message (a deal of the next game, or ``match_end``)."""
        self.log.write({"k": "game_end", **where, "totals": list(outcome.totals), "winners": list(outcome.winners),
                        "losers": list(outcome.losers), "dry": list(outcome.dry), "reason": outcome.reason})
        line = m.encode_line(game_end(outcome))
        for p in seating:
            if p.proc is not None:
                p.outbox.append(line)

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
        if staged and state.end is not None and state.end.reason == FAULT:  # a fault or a forfeit ended it at once
            staged.clear()
        terms = self.terms
        while state.end is None:
            delivered = queue_events(state, delivered, seating, wire)
            seat = state.to_move()
            if staged:
                self._stage(state, seat, *staged.popleft())
                continue
            self.turn_id += 1
            fault = await turn(terms, seating[seat], ats[seat], state, wire, self.turn_id)
            if fault is not None:
                await self._fault(seating[seat], fault)
                state.forfeit(seat)
        queue_events(state, delivered, seating, wire)

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
            failure = await deliver(self.terms, p, ats[seat])
            if failure is not None and p.pending is None:
                p.pending = failure


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label)
