"""The person's seat: a :class:`~referee.bots.transport.BotTransport` whose bot is a person at a web
page, and :class:`Person`, what the page shows and what it answers.

The table treats the person as any bot: it starts a "process" for each of the person's slots
(:class:`PersonSeat`, one per seat and seating, as :class:`~referee.matches.match.Roster` has it), sends
it the protocol's lines and reads its answers by its clock, judges them with the engine and logs
them.  A seat answers the referee's ``hello`` at once (a person needs no start-up time) and
hands every ``turn`` to :class:`Person`, which shows it on the page; the person's choice, one of
the turn's own ``legal`` entries, comes back as the ``play`` line a bot would write
(:func:`~referee.bots.transport.play_line`).  Only one seat of the match is ever asked at a time, so
one page serves them all.  What the page draws comes not from these lines but from the log's
records (:mod:`referee.play.view`), as the web report's replays do.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from protocol import messages as m
from referee.base.errors import BotExited
from referee.bots.transport import BotTransport, InProcess, Launch, launch_process, play_line
from referee.matches.watch import Watch
from referee.play.view import LiveView, seen
from referee.records import records as R

if TYPE_CHECKING:
    from referee.bots.bot import Bot
    from referee.matches.results import MatchResult


@dataclass
class Ask:
    """A turn put to the person: the seat's transport that waits for the answer, the turn, and
    its legal entries as the page is sent them."""

    proc: PersonSeat
    turn: m.Turn
    legal: list[Any]


class Person:
    """The person at the table, bot ``me`` of the match: the seats' turns (:meth:`ask`), the
    match as they see it (:attr:`view`), what the page sends (:meth:`answer`, :meth:`go_on`) and
    whether a page is open (:meth:`arrive`, :meth:`leave`, :meth:`keep_company`).  ``clocked``:
    the person has a clock, so the page shows each turn's time."""

    def __init__(self, name: str, me: int, *, clocked: bool = False) -> None:
        self.name = name
        self.me = me
        self.clocked = clocked
        self.view = LiveView(me)
        self.asking: Ask | None = None
        #: every seat started for the person, in order (a fault starts a fresh one)
        self.seats: list[PersonSeat] = []
        #: the match's end as the page shows it: ``{"interrupted": bool, "lines": [...]}``
        self.over: dict[str, Any] | None = None
        self.version = 0  # counts changes of what the page shows
        self._changed = trio.Event()
        self._told = -1  # the newest version a page has been sent
        self._state: tuple[int, str] | None = None
        self.pages = 0  # websockets open
        self._presence = trio.Event()
        #: the grace period ran out with no page open
        self.abandoned = False

    # -- changes ---------------------------------------------------------------------------------

    def changed(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = trio.Event()

    async def wait_change(self, version: int) -> None:
        """Wait until what the page shows is newer than ``version``."""
        while self.version == version:
            await self._changed.wait()

    def told(self, version: int) -> None:
        """A page has been sent ``version``."""
        self._told = max(self._told, version)

    async def shown(self) -> None:
        """Wait until an open page has been sent the newest state (none open: return at once)."""
        while self.pages and self._told < self.version:
            await trio.sleep(0.01)

    # -- the referee's side ----------------------------------------------------------------------

    def record(self, rec: R.Record) -> None:
        """A record of the match's log, as the referee writes it."""
        self.view.feed(rec)
        self.changed()

    def ask(self, proc: PersonSeat, turn: m.Turn) -> None:
        self.asking = Ask(proc, turn, [json.loads(m.encoder.encode(entry)) for entry in turn.legal])  # as the page gets them
        self.changed()

    def withdraw(self, proc: PersonSeat) -> None:
        """``proc`` is ended (a fault, the match's end): its question, if any, is no longer open."""
        if self.asking is not None and self.asking.proc is proc:
            self.asking = None
            self.changed()

    def end(self, lines: Sequence[str], *, interrupted: bool) -> None:
        """The match is over (or interrupted): the page shows ``lines``."""
        self.over = {"interrupted": interrupted, "lines": list(lines)}
        self.changed()

    def launcher(self, mine: Bot, others: Launch = launch_process) -> Launch:
        """A launch that starts :class:`PersonSeat` for ``mine`` (the person's entry) and every
        other bot as ``others`` does (a process; tests script them)."""

        async def launch(nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int,
                         hidden: Sequence[Path]) -> BotTransport:
            if bot is mine:
                seat = PersonSeat(self, name)
                self.seats.append(seat)
                return seat
            return await others(nursery, bot, name=name, stderr_path=stderr_path, max_line=max_line, hidden=hidden)

        return launch

    def watch(self, progress: Callable[[str, int], None] | None = None, board: Callable[[MatchResult], None] | None = None) -> Watch:
        """What :func:`~referee.matches.match.run_match` is given to show the person the match (and
        the caller its progress, as :func:`~referee.matches.watch.watching`)."""
        person = self

        class Watching(Watch):
            def record(self, record: R.Record) -> None:
                person.record(record)

            def progress(self, description: str, advance: int) -> None:
                if progress is not None:
                    progress(description, advance)

            def board(self, result: MatchResult) -> None:
                if board is not None:
                    board(result)

        return Watching()

    # -- the page's side -------------------------------------------------------------------------

    def answer(self, turn: object, move: object) -> str | None:
        """The person plays ``move`` (a legal entry, as the page was sent it) in answer to turn
        ``turn``; why not, in words, when it is no answer to the open question."""
        if type(turn) is not int:  # not True, not 1.0: equal to 1 in Python, yet no turn's id
            return "a turn id is an integer, as the turn gave it"
        asking = self.asking
        if asking is None or turn != asking.turn.id:
            return "that turn is over"
        if self.view.on_show() is not self.view.live:
            return "the page shows a finished deal"
        try:
            i = asking.legal.index(move)
        except ValueError:
            return "not one of the legal moves"
        self.asking = None
        asking.proc.say(play_line(asking.turn.legal[i]))
        self.changed()
        return None

    def go_on(self) -> None:
        """The person goes on from the finished deal on show."""
        if self.view.go_on():
            self.changed()

    def state(self) -> str:
        """What the page shows now, as the JSON text it is sent (made once per change)."""
        if self._state is not None and self._state[0] == self.version:
            return self._state[1]
        view = self.view
        shown = view.on_show()
        asking = self.asking
        ask = None
        if asking is not None and shown is not None and shown is view.live:
            ask = {"turn": asking.turn.id, "seat": asking.proc.seat, "legal": asking.legal, "ends": asking.turn.ends,
                   "time_ms": asking.turn.time_ms if self.clocked else None}
        state = {
            "type": "state", "version": self.version,
            "deal": None if shown is None else seen(shown),
            "mine": [] if shown is None else shown.mine,
            "where": None if shown is None else dict(zip(("game", "orientation", "deal"), shown.where)),
            "finished": shown is not None and shown.over,
            "game_end": None if shown is None else shown.game_end,
            # the deal on show waits for the person to go on: to the next deal, or, once the match
            # is over, to another finished deal not yet seen (the last one stays, with the verdict)
            "next": len(view.finished) > (0 if self.over is None else 1),
            "waiting": len(view.finished) - 1 if view.finished else 0,
            "ask": ask,
            "over": self.over,
        }
        text = json.dumps(state, separators=(",", ":"))
        self._state = (self.version, text)
        return text

    # -- whether anyone is looking ---------------------------------------------------------------

    def _presence_changed(self) -> None:
        self._presence.set()
        self._presence = trio.Event()

    def arrive(self) -> None:
        self.pages += 1
        self._presence_changed()

    def leave(self) -> None:
        self.pages -= 1
        self._presence_changed()

    async def keep_company(self, grace: float, scope: trio.CancelScope) -> None:
        """Cancel ``scope`` (the match) once no page has been open for ``grace`` seconds (a closed
        tab, or a browser that never came); :attr:`abandoned` then says so."""
        while True:
            presence = self._presence
            if self.pages:
                await presence.wait()
                continue
            with trio.move_on_after(grace) as timer:
                await presence.wait()
            if timer.cancelled_caught and not self.pages:
                self.abandoned = True
                scope.cancel()
                return


class PersonSeat(InProcess):
    """One of the person's process slots, as a transport: what the table sends it is the
    protocol's lines, what it reads back the person's answers.  It thinks on trio's clock."""

    def __init__(self, person: Person, name: str) -> None:
        self.person = person
        self.name = name
        self.seat: int | None = None  # the seat of its deal in play, from the deal's ``deal`` line
        self._lines: deque[bytes] = deque()
        self._arrived = trio.Event()
        self.closed = False

    def now(self) -> float:
        return trio.current_time()

    def say(self, line: bytes) -> None:
        """The person answers (a line without its newline)."""
        self._lines.append(line)
        self._arrived.set()

    def write_nowait(self, data: bytes) -> int:
        if self.closed:
            return 0
        for line in data.splitlines():
            msg = m.to_bot_decoder.decode(line)
            if isinstance(msg, m.Hello):
                self.say(m.encode_line(m.BotHello(name=self.person.name, protocol=m.PROTOCOL_VERSION, version="",
                                                  author="a person at the table (referee play)"))[:-1])
            elif isinstance(msg, m.DealStart):
                self.seat = msg.seat
            elif isinstance(msg, m.Turn):
                self.person.ask(self, msg)
        return len(data)

    async def read_line(self) -> bytes:
        while not self._lines:
            if self.closed:
                raise BotExited(f"bot {self.name!r} has exited", bot=self.name, returncode=0, stderr_tail="")
            self._arrived = trio.Event()
            await self._arrived.wait()
        return self._lines.popleft()

    def line_within(self, seconds: float) -> bytes | None:
        return self._lines.popleft() if self._lines else None  # a person is never waited for outside trio

    def ready_lines(self) -> list[bytes]:
        lines = list(self._lines)
        self._lines.clear()
        return lines

    async def close(self, grace: float = 1.0) -> list[bytes]:
        lines = self.ready_lines()
        await self.kill()
        return lines

    async def kill(self) -> None:
        self.closed = True
        self._arrived.set()
        self.person.withdraw(self)
