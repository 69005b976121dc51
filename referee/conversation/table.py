"""The referee at the table: plays games of the engine with bots in the seats (processes, or
scripted in-process bots in tests, behind :mod:`referee.bots.transport`).

This module owns the bots' processes, their clocks and their faults, and strings the exchanges
of :mod:`referee.conversation.exchange` (the handshake, the turns, the events, the deal's end) into deals and
games: it asks one seat at a time for a play and tells every seat what it may see.  Events for
seats that are not on the move wait in that seat's outbox and go out with its next ``turn`` (or
the ``deal_end``), so a move costs one write and one read.

Nothing a bot does stops a match: every failure becomes a :class:`~referee.conversation.faults.Fault`, the
deal is scored as that side's loss, the bot's process group is killed, and a fresh process takes
the seat at the next deal.  A bot with ``max_faults`` faults forfeits every deal left.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import trio

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.errors import BotError, BotStartError, LogError
from referee.bots.bot import Bot
from referee.bots.sandbox import hidden_from
from referee.conversation import faults as F
from referee.conversation.exchange import OPENING, At, Terms, deliver, handshake, new_fault, queue_events, stamp, turn
from referee.conversation.house import House, wants
from referee.conversation.log import MatchLog, play_record, special_record, tile_names
from referee.conversation.players import Player
from referee.engine.core.deal import Deal
from referee.engine.core.game import DealRecord, Game, GameOutcome
from referee.engine.core.line import FAULT
from referee.engine.core.state import DealState
from referee.records import records as R
from referee.sides import every_side, side_for
from referee.sides.base import deal_end, game_end

REFEREE_NAME = "referee 0.1.0"

class Where(NamedTuple):
    """Which game of the match a deal belongs to: its number and its orientation."""

    game: int
    orientation: int = 0


class Table:
    """Plays games with a fixed set of players; seats are assigned per game (orientation).
    What is the same at every table of the match (the limits, the bot source, the watch) is its
    :class:`~referee.conversation.house.House`."""

    def __init__(self, nursery: trio.Nursery, players: list[Player], log: MatchLog, house: House) -> None:
        self.nursery = nursery
        self.house = house
        #: strict isolation: every process is paused but the one asked for a play (and those
        #: shaking hands), PROTOCOL.md "Fair play"
        self.strict = strict = house.strict
        for p in players:
            p.channel.strict = strict  # its channel resumes it for its turn and pauses it after (Channel.ask)
        self.players = players
        tc = house.tc
        self.log = log
        #: what no sandboxed bot may see: the log, the deal file, the league's database... and the
        #: bots' stderr files
        self.hidden = (*house.hidden, house.stderr_dir)
        watch = house.watch
        self.on_fault = watch.fault if wants(watch, "fault") else None
        #: sees each process ended by :meth:`close`, with the lines it wrote that nobody read
        self.on_closed = watch.closed if wants(watch, "closed") else None
        self.deal_begins = watch.deal_begins if wants(watch, "deal_begins") else None
        self.deal_ends = watch.deal_ends if wants(watch, "deal_ends") else None
        self.limits = self._limits(tc)
        self._hello = m.encode_line(m.Hello(m.PROTOCOL_VERSION, REFEREE_NAME, self.limits))
        #: every turn of an orientation gets the next id of that orientation (a play may echo
        #: it): a process learns nothing of another seating from the ids it sees
        self.turn_ids: Counter[int] = Counter()
        #: what every exchange with a bot is given; ``block`` is 0 when other work shares the
        #: loop (see Terms.block)
        origin = house.origin
        self.terms = Terms(log, tc, trio.current_time() if origin is None else origin, block=house.block, hear=house.bots.hear,
                           waits=house.bots.waits(), asked=watch.asked if wants(watch, "asked") else None)
        # Finding the games' sides imports their modules (milliseconds, more where bytecode is
        # not cached): done here, with the other setting up, not in the first deal's play.
        every_side()

    def _limits(self, tc: TimeControl) -> m.Limits:
        return m.Limits(
            startup_ms=round(tc.startup * 1000),
            move_ms=round(tc.move * 1000),
            bank_ms=None if tc.bank is None else round(tc.bank * 1000),
            increment_ms=round(tc.increment * 1000),
            max_line=self.house.max_line,
            max_faults=self.house.max_faults,
        )

    def _hello_for(self, bot: Bot) -> tuple[m.Limits, bytes]:
        """The limits in force for ``bot`` and the ``hello`` that tells them: the match's, or
        its own time control's."""
        if bot.tc is None:
            return self.limits, self._hello
        limits = self._limits(bot.tc)
        return limits, m.encode_line(m.Hello(m.PROTOCOL_VERSION, REFEREE_NAME, limits))

    # -- processes ---------------------------------------------------------------------------

    async def open(self) -> None:
        """Start every player's process and shake hands, all at once.

        Raises:
            BotStartError: a bot could not be started or did not answer ``hello``; the message
                includes the tail of its stderr.
        """
        failures: list[str] = []
        each: list[tuple[str, str, str]] = []  # label, what happened, stderr tail: for referee check
        shakes: dict[int, R.Hello] = {}

        async def start(i: int, p: Player) -> None:
            shakes[i] = self._hello_record(p, OPENING)
            fault = await self._shake(p, OPENING, shakes[i])
            if fault is not None:
                tail = p.channel.proc.stderr_tail() if p.channel.proc is not None else ""
                failures.append(f"{p.label}: {fault.explain()}" + (f"\n--- stderr of {p.label} ---\n{tail}" if tail.strip() else ""))
                each.append((p.label, fault.explain(), tail if tail.strip() else ""))

        async with trio.open_nursery() as n:
            for i, p in enumerate(self.players):
                n.start_soon(start, i, p)
        # The handshakes ran at once; their records go to the log in player order, so two runs
        # of the same match write the same log.
        for i in sorted(shakes):
            self.log.write(shakes[i])
        if failures:
            await self.close()
            error = BotStartError("\n".join(sorted(failures)))
            error.failures = sorted(each)
            raise error

    def _hello_record(self, p: Player, at: At) -> R.Hello:
        p.starts += 1
        return R.Hello(p.label, p.starts, at.seat, o=p.orientation, b=p.entry.index, slot=p.slot, limits=self._hello_for(p.bot)[0])

    async def _start(self, p: Player, at: At) -> F.Fault | None:
        """Start a fresh process for ``p`` and shake hands, logged as one ``hello`` record; a
        fault if that fails."""
        record = self._hello_record(p, at)
        try:
            return await self._shake(p, at, record)
        finally:
            self.log.write(record)

    async def _shake(self, p: Player, at: At, record: R.Hello) -> F.Fault | None:
        suffix = ("" if p.game == 0 else f".g{p.game}") + ("" if p.starts == 1 else f".{p.starts}")
        path = self.house.stderr_dir / f"{_safe(p.label)}{suffix}.stderr.log"
        try:
            p.channel.proc = await self.house.bots.launch(self.nursery, p.bot, name=p.label, stderr_path=path, max_line=self.house.max_line,
                                       hidden=self.hidden_from(p.bot) if _sandboxed(p.bot) else ())
        except (BotError, OSError) as exc:
            record.error = f"could not start: {exc}"
            return new_fault(F.STARTUP, p, at, record.error)
        p.channel.outbox = []
        p.unknown = 0
        fault = await handshake(self.terms, p, at, self._hello_for(p.bot)[1], record)
        if self.strict and fault is None and p.channel.proc is not None:
            p.channel.proc.pause()  # it runs again when it is asked for a play
        return fault

    def hidden_from(self, bot: Bot) -> list[Path]:
        """What a sandboxed bot must not see: :attr:`hidden`, and the other bots' files and
        folders that are not also its own (see :func:`referee.bots.sandbox.hidden_from`)."""
        def place(b: Bot) -> tuple[list[str], Path | None]:
            return b.argv, b.confinement.cwd if b.confinement is not None else None
        others = {id(p.bot): p.bot for p in self.players if p.bot is not bot}.values()
        return hidden_from([place(bot)], [place(o) for o in others], self.hidden)

    async def close(self) -> None:
        """Tell every live process the match is over and end it (politely, then by force).

        What goes out (the last ``game_end`` a process is owed, and ``match_end``) is logged
        first, process by process in order, so that the log holds every message a bot was sent
        and two runs of a match log it alike; the writes then go out to every process at once."""
        bye = m.encode_line(m.MatchEnd())
        last: dict[int, bytes] = {}
        for i, p in enumerate(self.players):
            if p.channel.proc is None:
                continue
            lines = [*p.channel.outbox, bye]
            last[i] = b"".join(lines)
            try:
                self.log.out(-1, lines, last[i], stamp(self.terms, p.channel.proc), p.label)
            except LogError:
                pass  # the log has failed already (and said so): the bots are ended all the same
        for p in self.players:
            p.channel.outbox = []

        async def end(i: int, p: Player) -> None:
            proc = p.channel.proc
            if proc is None:
                return
            proc.resume()  # to read match_end and exit
            with trio.move_on_after(1.0):
                try:
                    await proc.send(last[i])
                except BotError:
                    pass
            unread = await proc.close(grace=1.0)
            p.channel.proc = None
            if self.on_closed is not None:
                self.on_closed(p, proc, unread)

        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as n:
                for i, p in enumerate(self.players):
                    n.start_soon(end, i, p)

    async def abandon(self) -> None:
        """End every process at once, telling it nothing and logging nothing (a segment the match
        no longer needs: the SPRT decided, the match was stopped or failed)."""
        with trio.CancelScope(shield=True):
            for p in self.players:
                await self._retire(p)

    async def _retire(self, p: Player) -> None:
        if p.channel.proc is not None:
            await p.channel.proc.kill()
            p.channel.proc = None
        p.channel.outbox = []

    # -- faults ------------------------------------------------------------------------------

    async def _fault(self, p: Player, fault: F.Fault, charged: int | None = None) -> None:
        """Record ``fault``; ``charged`` is the seat whose deal it costs when that is not the
        seat it happened in (a fault found between deals costs the bot's next deal)."""
        entry = p.entry
        entry.faults.append(fault)
        self.log.write(R.Fault(fault.kind, fault.bot, fault.seat, fault.game, fault.deal, fault.detail, fault.line, charged,
                               fault.exit, fault.overlong))
        if self.on_fault is not None:
            self.on_fault(fault)
        await self._retire(p)
        if len(entry.faults) >= self.house.max_faults and not entry.forfeited:
            entry.forfeited = True
            self.log.write(R.Forfeit(entry.name, len(entry.faults)))
            for other in self.players:
                if other.entry is entry:
                    await self._retire(other)

    # -- games -------------------------------------------------------------------------------

    async def play_game(
        self,
        game: Game,
        seating: list[Player],
        next_deal: Callable[[], tuple[int, Deal]],
        where: Where,
        after_deal: Callable[[DealRecord], None] | None = None,
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
            await self.play_deal(game, seating, *next_deal(), where, after_deal, staged)
            outcome = game.outcome()
        self.end_game(outcome, seating, where)
        return outcome

    def end_game(self, outcome: GameOutcome, seating: list[Player], where: Where) -> None:
        """Log a game's outcome and queue its ``game_end`` for every seat; it goes out with the
        seat's next message (a deal of the next game, or ``match_end``)."""
        self.log.write(R.GameEnd(where.game, where.orientation, list(outcome.totals), list(outcome.winners), list(outcome.losers),
                                 list(outcome.dry), outcome.reason))
        line = m.encode_line(game_end(outcome))
        for p in seating:
            if p.channel.proc is not None:
                p.channel.queue(line)

    async def play_deal(
        self,
        game: Game,
        seating: list[Player],
        stream: int,
        deal: Deal,
        where: Where,
        after_deal: Callable[[DealRecord], None] | None = None,
        staged: deque[tuple[int, m.Play]] | None = None,
    ) -> DealRecord | None:
        """Play one deal (``None`` when it was void and must be redealt).

        While ``staged`` holds moves, each turn is its next move, made by the referee without
        asking the bot and logged as a ``play`` with ``"staged": true`` (``referee check`` stages a
        position this way).  A fault or a forfeit drops the moves left: the game has left the
        line they were chosen on.
        """
        if self.deal_begins is not None:
            self.deal_begins(where.game, where.orientation, deal)
        rec = await self._play_deal(game, seating, stream, deal, where, after_deal, staged)
        if self.deal_ends is not None:
            self.deal_ends(where.game, where.orientation, rec)
        return rec

    async def _play_deal(self, game: Game, seating: list[Player], stream: int, deal: Deal, where: Where,
                         after_deal: Callable[[DealRecord], None] | None, staged: deque[tuple[int, m.Play]] | None) -> DealRecord | None:
        deal_number = game.next_number
        game_number = where.game
        state = game.start(deal)
        void = game.records[-1].void if state is None else None
        hands, undealt = tile_names(deal)
        special = game.special() if state is not None else None
        self.log.write(R.Deal(game_number, where.orientation, deal_number, stream, hands, undealt, void,
                              None if special is None else special_record(special)))  # sea_kozel: the state this deal is played under
        if state is None:
            return None
        n = game.players
        ats = [At(seat, game_number, deal_number) for seat in range(n)]  # each seat's exchanges

        # A bot that faulted between deals, forfeited the match, or cannot be restarted loses
        # this deal before it starts.
        fault: F.Fault | None
        for seat, p in enumerate(seating):
            if p.entry.forfeited:
                state.forfeit(seat)
                self.log.write(R.ForfeitedDeal(seat, p.entry.name))
                break
            if p.pending is not None:
                fault, p.pending = p.pending, None
                await self._fault(p, fault, charged=seat)
                state.forfeit(seat)
                break
            if p.channel.proc is None:
                fault = await self._start(p, ats[seat])
                if fault is not None:
                    await self._fault(p, fault)
                    state.forfeit(seat)
                    break

        side = side_for(state)
        for seat, p in enumerate(seating):
            if p.channel.proc is not None:
                p.channel.queue(m.encode_line(side.deal_start(game, deal, state, seat, game_number)))
        delivered = 0
        if staged and state.end is not None and state.end.reason == FAULT:  # a fault or a forfeit ended it at once
            staged.clear()
        terms = self.terms
        turn_ids = self.turn_ids
        orientation = where.orientation
        # A turn answered at once does not yield to the loop, nor look whether the match was
        # cancelled (an SPRT decided, a failure elsewhere): the deal does both here, so that the
        # segment started ahead spawns and greets its processes while this one plays quick bots.
        await trio.lowlevel.checkpoint()
        while state.end is None:
            delivered = queue_events(state, delivered, seating, side)
            seat = state.to_move()
            if staged:
                self._stage(state, seat, *staged.popleft())
                continue
            turn_ids[orientation] += 1
            fault = await turn(terms, seating[seat], ats[seat], state, side, turn_ids[orientation])
            if fault is not None:
                await self._fault(seating[seat], fault)
                state.forfeit(seat)
        queue_events(state, delivered, seating, side)

        rec = game.finish(state)
        assert rec.end is not None
        self.log.write(R.DealEnd(game_number, orientation, rec.number, rec.end.reason, rec.end.seat, list(rec.values), list(rec.wrote),
                                 list(rec.totals), list(rec.notes), rec.rule))  # rule: sea_kozel, general, blitz
        end_line = m.encode_line(deal_end(rec))
        for p in seating:
            p.channel.queue(end_line)
        await self._flush_all(seating, ats)
        self.log.flush()
        if after_deal is not None:
            after_deal(rec)
        return rec

    def _stage(self, state: DealState, seat: int, staged_seat: int, move: m.Play) -> None:
        """Make a move of the staged opening for ``seat``, which is to move."""
        if staged_seat != seat:
            raise ValueError(f"the staged opening has seat {staged_seat} move where seat {seat} is to move")
        side = side_for(state)
        played = state.push(side.engine_play(state, move), seat)
        self.log.write(play_record(seat, move, None, side.play_text(state, played)))

    async def _flush_all(self, seating: list[Player], ats: list[At]) -> None:
        """Deliver every outbox (deal end); a bot that cannot take it faults at its next deal."""
        for seat, p in enumerate(seating):
            failure = await deliver(self.terms, p, ats[seat])
            if self.strict and p.channel.proc is not None:
                p.channel.proc.pause()  # deliver resumed it if it had to read to take the lines
            if failure is not None and p.pending is None:
                p.pending = failure


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label)


def _sandboxed(bot: Bot) -> bool:
    """Whether ``bot`` runs in the sandbox, the only place what it must not see is hidden (the
    paths take a few milliseconds of symlinks to work out)."""
    return bot.confinement is not None and bot.confinement.sandbox
