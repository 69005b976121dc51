"""The seam between the table and a bot: how :class:`~referee.conversation.table.Table` starts a bot, sends
it lines, reads a line within a deadline and stops it, whatever runs the bot.

Two implementations: :class:`~referee.bots.process.BotProcess` (a real process behind pipes, started
by :func:`launch_process`) and :class:`ScriptedBot` (a bot inside the referee's own process whose
answers and thinking times a test or a benchmark writes).  A scripted bot thinks on trio's clock,
so under trio's ``MockClock`` a test of the time bank runs in no real time at all.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import trio

from protocol import messages as m
from referee.base.errors import BotExited, LineTooLong

if TYPE_CHECKING:
    from referee.bots.bot import Bot


class BotTransport(Protocol):
    """What the table needs of a started bot.  Lines are bytes without their newline."""

    def now(self) -> float:
        """The referee's clock (seconds) as the exchanges with this bot read it: trio's clock,
        or, when ``verify`` plays a log again, the times the log kept."""

    async def send(self, data: bytes) -> None:
        """Write ``data`` whole, waiting while the bot does not read.  Raises BotExited."""

    def write_nowait(self, data: bytes) -> int:
        """Write what fits without waiting; how many bytes were written."""

    async def read_line(self) -> bytes:
        """The next line, waiting for it (the caller's cancel scope is the deadline).
        Raises BotExited, LineTooLong."""

    def line_within(self, seconds: float) -> bytes | None:
        """A line if one is ready within ``seconds`` (waiting without trio), else ``None``."""

    def ready_lines(self) -> list[bytes]:
        """Every complete line already written and not read: what the bot said unasked."""

    def unfinished_line(self) -> bytes | str:
        """What the bot wrote after its last newline (a line it never ended; a replayed bot
        gives the text the log keeps)."""

    def unread_input(self) -> int | None:
        """Bytes sent to the bot that it has not read yet (``None``: cannot tell)."""

    def stderr_tail(self) -> str:
        """The last lines the bot wrote to stderr."""

    @property
    def returncode(self) -> int | None:
        """How the bot ended (negative: a signal), ``None`` while it runs."""

    def pause(self) -> None:
        """Strict isolation: stop the bot from running at all until :meth:`resume`."""

    def resume(self) -> None:
        """Let a paused bot run again (a no-op when it is not paused)."""

    async def close(self, grace: float = 1.0) -> list[bytes]:
        """End the bot, politely for ``grace`` seconds, then by force; the lines it wrote that
        were never read (what it said unasked at the end, for ``referee check``)."""

    async def kill(self) -> None:
        """End the bot now."""


class Launch(Protocol):
    """Starts the bot of a seat: ``name`` is its label in messages, ``stderr_path`` where its
    stderr goes, ``hidden`` what a sandbox must keep from it."""

    async def __call__(self, nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int,
                       hidden: Sequence[Path]) -> BotTransport: ...


async def launch_process(nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int,
                         hidden: Sequence[Path]) -> BotTransport:
    """The real thing: the bot's command line as a process (confined as the bot asks)."""
    from referee.bots.process import BotProcess

    return await BotProcess.start(nursery, bot.argv, name=name, stderr_path=stderr_path, max_line=max_line,
                                  confinement=bot.confinement, hidden=hidden)


#: What a scripted bot does with a message: ``(seconds it thinks, line it answers)`` pairs, in
#: order (an empty list: it stays silent).  A line of ``None`` is the bot exiting.
Script = Callable[[m.ToBotMessage], Sequence[tuple[float, bytes | None]]]

HELLO = m.encode_line(m.BotHello(name="scripted", version="1", author="tests", protocol=m.PROTOCOL_VERSION))[:-1]


def first_legal(msg: m.ToBotMessage) -> Sequence[tuple[float, bytes | None]]:
    """The plainest script: greet at once, answer every turn at once with its first legal play."""
    if type(msg) is m.Hello:
        return [(0.0, HELLO)]
    if type(msg) is m.Turn:
        return [(0.0, play_line(msg.legal[0]))]
    return []


def silent(msg: m.ToBotMessage) -> Sequence[tuple[float, bytes | None]]:
    """The script of a bot that answers nothing (but what :meth:`ScriptedBot.expect` tells it)."""
    return []


def play_line(legal: m.PlayOption) -> bytes:
    """The ``play`` line that makes the legal move ``legal``: the entry as it is (PROTOCOL.md:
    answering with exactly its fields is always legal)."""
    return b'{"type":"play",' + m.encoder.encode(legal)[1:]


class InProcess(ABC):
    """What a bot in the referee's process has of a process: never a line half written, input
    left unread or a stderr, and a return code of 0 once it is closed (:class:`ScriptedBot`;
    the person's seat of ``referee play``): what it is sent goes to :meth:`write_nowait`, at
    once, and :meth:`send` is that with a checkpoint, or the exit once it is closed."""

    closed = False
    name: str

    @abstractmethod
    def write_nowait(self, data: bytes) -> int:
        """Hear ``data`` (whole lines) at once; its length, or 0 once closed."""

    async def send(self, data: bytes) -> None:
        if self.closed:
            raise BotExited(f"bot {self.name!r} has exited", bot=self.name, returncode=0, stderr_tail="")
        self.write_nowait(data)
        await trio.lowlevel.checkpoint()

    def unfinished_line(self) -> bytes:
        return b""

    def pause(self) -> None:  # noqa: B027 - the same for every bot in the referee's process
        """Nothing to freeze: it runs only when the referee hands it a message."""

    def resume(self) -> None:  # noqa: B027
        """Nothing to thaw."""

    def unread_input(self) -> int | None:
        return 0

    def stderr_tail(self) -> str:
        return ""

    @property
    def returncode(self) -> int | None:
        return 0 if self.closed else None


#: What :meth:`ScriptedBot.expect` waits for: a message type, a message (equal), or a test of one.
Expected = type | m.ToBotMessage | Callable[[m.ToBotMessage], bool]
#: An answer to an expected message: a line, ``None`` (the bot exits), a line made from the
#: message, or any of these with the seconds the bot thinks first.
Answer = bytes | None | Callable[[m.ToBotMessage], bytes | None] | tuple[float, "bytes | None | Callable[[m.ToBotMessage], bytes | None]"]


class ScriptedBot(InProcess):
    """A bot in the referee's process: each message it is sent goes to ``script``, whose answers
    become readable once their thinking time has passed on trio's clock (a bot thinks about one
    message at a time, so answers come in order).  ``received`` keeps every message.

    A test may also say what the bot must be sent, in order, and what it answers (python-chess's
    ``MockTransport``): ``bot.expect(m.Turn, (0.25, line))``.  Each message that matches the
    first expectation not yet seen is answered by it instead of by ``script``; any other
    message goes to ``script`` as before.  :meth:`assert_done` fails when an expectation was
    never seen.

    A line longer than ``max_line`` bytes (newline included) is refused as a process's is: reading
    it raises :class:`~referee.base.errors.LineTooLong`."""

    def __init__(self, script: Script = first_legal, name: str = "scripted", max_line: int | None = None) -> None:
        self.script = script
        self.name = name
        self.max_line = max_line
        self.received: list[m.ToBotMessage] = []
        self._replies: deque[tuple[float, bytes | None]] = deque()  # (ready at, line)
        self._busy_until = 0.0
        self.closed = False
        self._expected: deque[tuple[Expected, tuple[Answer, ...]]] = deque()

    def expect(self, what: Expected, *answers: Answer) -> ScriptedBot:
        """Wait for a message (after those expected before it): a type, an equal message, or a
        test; answer it with ``answers`` (lines, ``None`` to exit, a function of the message,
        each alone or as ``(seconds thinking, answer)``).  Returns the bot, to chain."""
        self._expected.append((what, answers))
        return self

    def assert_done(self) -> None:
        """Fail, naming what is missing, unless every expected message was seen."""
        if self._expected:
            missing = ", ".join(_expected_name(what) for what, _ in self._expected)
            heard = ", ".join(type(msg).__name__ for msg in self.received) or "nothing"
            raise AssertionError(f"bot {self.name!r} was never sent {missing} (it was sent: {heard})")

    def _answers(self, msg: m.ToBotMessage) -> Sequence[tuple[float, bytes | None]]:
        if self._expected and _matches(self._expected[0][0], msg):
            out = []
            for answer in self._expected.popleft()[1]:
                thinking, line = answer if isinstance(answer, tuple) else (0.0, answer)
                out.append((thinking, line(msg) if callable(line) else line))
            return out
        return self.script(msg)

    def now(self) -> float:
        return trio.current_time()

    def write_nowait(self, data: bytes) -> int:
        if self.closed:
            return 0  # as a process's closed pipe: send() reports the exit
        now = trio.current_time()
        for line in data.splitlines():
            msg = m.to_bot_decoder.decode(line)
            self.received.append(msg)
            for thinking, reply in self._answers(msg):
                self._busy_until = max(self._busy_until, now) + thinking
                self._replies.append((self._busy_until, reply))
        return len(data)

    def _take(self) -> bytes:
        line = self._replies.popleft()[1]
        if line is None:
            self.closed = True
            raise BotExited(f"bot {self.name!r} exited (as its script says)", bot=self.name, returncode=0, stderr_tail="")
        if self.max_line is not None and len(line) + 1 > self.max_line:
            prefix = line[:200]
            raise LineTooLong(f"bot {self.name!r} wrote a line longer than {self.max_line} bytes, starting {prefix[:60]!r}",
                              bot=self.name, prefix=prefix, limit=self.max_line)
        return line

    async def read_line(self) -> bytes:
        if not self._replies:
            await trio.sleep_forever()  # a silent bot: the caller's deadline ends the wait
        await trio.sleep_until(self._replies[0][0])
        return self._take()

    def line_within(self, seconds: float) -> bytes | None:
        # Nothing may wait outside trio here (a mock clock would not move): only what is ready.
        if self._ready(trio.current_time()):
            return self._take()
        return None

    def _ready(self, now: float) -> bool:
        """A line is ready by ``now`` (an exit is not a line: read_line reports it)."""
        return bool(self._replies) and self._replies[0][0] <= now and self._replies[0][1] is not None

    def ready_lines(self) -> list[bytes]:
        now = trio.current_time()
        lines = []
        while self._ready(now):
            lines.append(self._take())
        return lines

    async def close(self, grace: float = 1.0) -> list[bytes]:
        lines = self.ready_lines()
        self.closed = True
        return lines

    async def kill(self) -> None:
        self.closed = True


def _matches(what: Expected, msg: m.ToBotMessage) -> bool:
    if isinstance(what, type):
        return type(msg) is what
    if isinstance(what, m.ToBotMessage):
        return msg == what
    return bool(what(msg))


def _expected_name(what: Expected) -> str:
    if isinstance(what, type):
        return what.__name__
    if isinstance(what, m.ToBotMessage):
        return repr(what)
    return getattr(what, "__name__", repr(what))


def scripted(scripts: dict[str, Script], default: Script = first_legal) -> tuple[Launch, dict[str, list[ScriptedBot]]]:
    """A launcher of scripted bots, by the label of the player (``"A"``, ``"A#1"``), and the bots
    it started, by label (a bot started again after a fault is appended)."""
    started: dict[str, list[ScriptedBot]] = {}

    async def launch(nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int,
                     hidden: Sequence[Path]) -> BotTransport:
        sb = ScriptedBot(scripts.get(name, scripts.get(bot.name, default)), name, max_line)
        started.setdefault(name, []).append(sb)
        return sb

    return launch, started
