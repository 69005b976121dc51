"""``referee verify``: play a log's match again with the referee itself, and compare every line.

A log of format 2 (:mod:`referee.records.records`) holds everything the referee acted on: the header's
settings and seed (so every deal), and every line each bot process wrote, with the time it was
read, and what else the referee saw of the process (it ended, it wrote too long a line, it said
nothing).  :func:`verify` runs :func:`referee.matches.match.run_match` once more on those: each bot is a
:class:`ReplayBot` that says exactly what the log says its process said, when the log says it
said it (trio's mock clock stands still but for the deadlines nobody answered by), and the
referee writes its log line by line into :meth:`Tape.compare` instead of a file.  Every line
must come out byte for byte as the log has it: the header, every message to every bot, every
line read (so each once), every play, fault (and its kind, against the line, the times and the
limits), forfeit, deal and game result, every SPRT record and the stop, and the result.  Because
the referee that judges the log is the referee that wrote it, ``verify`` can neither call a
genuine log wrong nor take an edited one for genuine.

Logs of format 1 are verified as they were when written (:mod:`referee.audit.legacy`).
"""

from __future__ import annotations

import hashlib
import signal
import tempfile
from collections import deque
from collections.abc import Generator, Sequence
from contextlib import closing
from pathlib import Path

import msgspec
import trio
import trio.testing

from protocol import messages as m
from referee.audit.inconsistency import Counts, Incomplete, Inconsistent, older_ties, stop_text
from referee.base.clock import TimeControl
from referee.base.errors import BotError, BotExited, BotStartError, LineTooLong, LogError
from referee.bots.bot import Bot
from referee.bots.transport import BotTransport
from referee.conversation.house import BotSource
from referee.conversation.lines import Line, from_record, hear
from referee.engine import variant
from referee.engine.core.deal import Deal, parse_deal_lines
from referee.engine.core.errors import BadDeal, RulesError
from referee.matches.match import opening_moves, orientations, run_match
from referee.matches.spec import MatchSpec
from referee.matches.watch import Watch
from referee.records import records as R
from referee.stats.figures import alike


class LogInterrupted(BaseException):
    """The log says the match was stopped here (an ``interrupted`` record): the referee playing
    it again stops as the one that wrote it did (a BaseException, as a cancellation is)."""


class Tape:
    """The log under verification, line by line, in step with the referee playing it again:
    :meth:`compare` takes each line the referee writes and checks it against the log's next one;
    a :class:`ReplayBot` looks ahead to say what its process did."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines: Generator[tuple[int, R.Record, bytes], None, None] = R.read_records(path, cut_ok=True)
        self._ahead: deque[tuple[int, R.Record, bytes]] = deque()
        self._ended = False
        self.cut: R.CutShort | None = None
        #: a line that is not a record: whatever the referee does next, this is the answer
        self.damaged: R.Damaged | None = None
        #: the first disagreement found: what the referee does after it (closing the match) is
        #: not compared, and this is the answer
        self.failure: Inconsistent | None = None
        self.number = 0  # the last line compared
        self.counts = Counts()
        self._claimed: set[int] = set()  # line numbers of hello records a process has taken
        self._long: dict[int, tuple[bytes, Line]] = {}

    # -- reading ahead --

    def close(self) -> None:
        self._lines.close()

    def peek(self, k: int = 0) -> R.Record | None:
        """The ``k``-th record after the last one compared, or ``None`` past the end."""
        while len(self._ahead) <= k and not self._ended:
            try:
                self._ahead.append(next(self._lines))
            except StopIteration:
                self._ended = True
            except R.CutShort as exc:
                self.cut = exc
                self._ended = True
            except R.Damaged as exc:
                self.damaged = exc
                self._ended = True
                raise
        return self._ahead[k][1] if k < len(self._ahead) else None

    def peek_number(self, k: int = 0) -> int:
        self.peek(k)
        return self._ahead[k][0] if k < len(self._ahead) else self.number + 1

    def claim_hello(self, label: str) -> R.Hello | None:
        """The ``hello`` record of the process the referee starts now as ``label``: the next
        unclaimed one of that label among the hellos next in the log."""
        k = 0
        while isinstance(rec := self.peek(k), R.Hello):
            number = self.peek_number(k)
            if rec.bot == label and number not in self._claimed:
                self._claimed.add(number)
                return rec
            k += 1
        return None

    def hear(self, raw: bytes) -> Line:
        """How the referee, playing the log again, judges a line a :class:`ReplayBot` gave it."""
        kept = self._long.pop(id(raw), None)
        if kept is not None and kept[0] is raw:
            return kept[1]
        return hear(raw)

    def line_bytes(self, h: R.Heard | R.In) -> bytes:
        """The bytes a :class:`ReplayBot` gives for a line the log keeps: the line itself, or, for a
        line the log keeps only judged, a token that :meth:`hear` turns back into that judgement.

        Raises:
            Inconsistent: the record keeps neither.
        """
        try:
            line = from_record(h)
        except ValueError as exc:
            raise self.fail(self.peek_number(), f"a line read from a bot that the log cannot give back: {exc}") from None
        if line.raw is not None:
            return line.raw
        token = b"kept-judged-%d" % len(self._long)
        self._long[id(token)] = (token, line)
        return token

    # -- comparing --

    def compare(self, data: bytes) -> None:
        """The referee, playing the log again, writes ``data``: it must be the log's next line."""
        if self.failure is not None:
            return
        rec = self.peek()
        if rec is None:
            raise self.ended()
        if isinstance(rec, R.Interrupted) and not data.startswith(b'{"k":"interrupted"'):
            raise LogInterrupted  # the match was stopped before it wrote this
        number, _, raw = self._ahead.popleft()
        self.number = number
        if raw != data and not _same(rec, data):
            raise self.fail(number, _difference(rec, data), _kind(rec))
        self._count(rec)

    def _count(self, rec: R.Record) -> None:
        c = self.counts
        if isinstance(rec, R.Game):
            c.games += 1
        elif isinstance(rec, R.Deal) and rec.void is None:
            c.deals += 1
        elif isinstance(rec, R.Play):
            c.plays += 1
        elif isinstance(rec, R.Fault):
            c.faults += 1
        elif isinstance(rec, R.Out):
            c.turns_checked += sum(1 for msg in rec.msgs if isinstance(msg, m.Turn))
        elif isinstance(rec, R.Stop):
            c.stopped = stop_text(rec.pairs, rec.decision, rec.llr)
        c.lines += 1

    def ended(self) -> Incomplete:
        """The log ends where the referee goes on."""
        if self.cut is not None:
            return Incomplete(f"{self.path}: line {self.cut.number} is cut short (a cut log); consistent up to line {self.number}",
                              self.number)
        return Incomplete(f"{self.path}: the log stops before the match's result (a cut log, or an interrupted match); "
                          f"consistent up to line {self.number}", self.number)

    def fail(self, number: int, message: str, kind: str | None = None) -> Inconsistent:
        """The disagreement at line ``number`` (the first one found is kept: :attr:`failure`)."""
        kind = kind or self._kind_at(number)
        exc = Inconsistent(f"{self.path}: line {number}{f' ({kind})' if kind else ''}: {message}")
        if self.failure is None:
            self.failure = exc
        return exc

    def _kind_at(self, number: int) -> str | None:
        for n, rec, _ in self._ahead:
            if n == number:
                return _kind(rec)
        return None


def _kind(rec: R.Record) -> str:
    return str(rec.__struct_config__.tag)


def _same(logged: R.Record, data: bytes) -> bool:
    """Whether the referee's line says what the log's says, written otherwise (spaces, the order
    of fields, ``0.5`` for ``0.500000``): the log is verified as data, not as text."""
    try:
        mine = R.decode(data)
    except R.Damaged:
        return False
    if isinstance(mine, R.Stop) and isinstance(logged, R.Stop):
        # How many boards were begun past the stop depends on the lanes that played, not on the
        # match (the referee playing it again in lockstep begins none): taken as the log has it.
        mine = msgspec.structs.replace(mine, unfinished=logged.unfinished)
    if isinstance(mine, R.Result) and isinstance(logged, R.Result):
        _unbounded(mine, logged)
        if mine != logged:
            ours, theirs = msgspec.to_builtins(mine), msgspec.to_builtins(logged)
            older_ties(ours, theirs)
            return bool(ours == theirs)
    return mine == logged


def _unbounded(mine: R.Result, logged: R.Result) -> None:
    """A two-bot result where one bot won every play, logged before its Elo had a one-sided
    bound: the log's interval is ``[null, null]`` (``null`` after one pair), today's ``[bound, null]`` (or
    ``[null, -bound]``); and one where every pair was alike, logged before that had an exact bound:
    the log's interval is the point ``[elo, elo]`` (``null`` after one pair).  Taken as the log has
    it, every other figure compared."""
    for row, old in zip(mine.ranking.standings, logged.ranking.standings):
        if row.elo is None and old.elo is None and old.elo_ci in (None, [None, None]) and row.elo_ci is not None and None in row.elo_ci:
            row.elo_ci = old.elo_ci
        elif len(mine.bots) == 2 and row.elo == old.elo and old.elo_ci in (None, [old.elo, old.elo]) and alike(row.classes):
            row.elo_ci = old.elo_ci


def _difference(logged: R.Record, data: bytes) -> str:
    """In words, how the referee's line differs from the log's."""
    try:
        mine = R.decode(data)
    except R.Damaged:
        return f"the referee writes {data[:200]!r} here"
    if _kind(mine) != _kind(logged):
        return f"the referee writes a {_kind(mine)!r} record here: {_show(mine)}"
    a, b = msgspec.to_builtins(logged), msgspec.to_builtins(mine)
    keys = [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    if not keys:  # equal as builtins, unequal as records: a field's type
        return f"the referee writes {_show(mine)}"
    return "; ".join(f"{k}: the log has {_short(a.get(k))}, the referee {_short(b.get(k))}" for k in keys[:3])


def _show(rec: R.Record) -> str:
    return _short(msgspec.to_builtins(rec))


def _short(value: object) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 160 else text[:160] + "…"


class LoggedWaits:
    """The referee's waits for a CPU as the log kept them: the ``wait`` of the ``in`` record the
    referee is about to write (only an answer that would be late asks)."""

    def __init__(self, tape: Tape) -> None:
        self.tape = tape

    def mark(self) -> None:
        return None

    def since(self, mark: object) -> int:
        rec = self.tape.peek()
        if isinstance(rec, R.In) and rec.wait is not None:
            return round(rec.wait * 1000)
        return 0


class ReplayBot:
    """A bot process as the log remembers it: each answer the log has, at the time it has it;
    each end, overlong line or silence the log records, where it records it."""

    def __init__(self, tape: Tape, hello: R.Hello, name: str) -> None:
        self.tape = tape
        self.name = name
        self.hello = hello
        self._times: deque[float] = deque([hello.t or 0.0, *(h.t or 0.0 for h in hello.read or [])])
        self._reads: deque[R.Heard] = deque(hello.read or [])
        self._shaking = True
        self._last = hello.t or 0.0

    # -- the clock --

    def now(self) -> float:
        """The handshake's times, then the time of the log's next ``out`` or ``in`` (the record
        the referee is about to write with this reading)."""
        if self._times:
            self._last = self._times.popleft()
        else:
            rec = self.tape.peek()
            if isinstance(rec, (R.Out, R.In)):
                self._last = rec.t
        return self._last

    # -- what the log says happened next --

    def _stopped_here(self) -> None:
        """The match was stopped while the referee waited on this bot."""
        if isinstance(self.tape.peek(), R.Interrupted):
            raise LogInterrupted

    def _exited(self, exit: R.Exit) -> BotExited:
        """The end the log records, once its words are found to say its status."""
        if not exit_agrees(self.name, exit):
            raise self.tape.fail(self.tape.peek_number(), f"the process's end is recorded as status {exit.status} but described as {_short(exit.what)}")
        return BotExited(exit.what, bot=self.name, returncode=exit.status, stderr_tail="")

    def _overlong(self, o: R.Overlong) -> LineTooLong:
        return LineTooLong(o.what, bot=self.name, prefix=o.prefix.encode(), limit=0, evidence=o.prefix)

    async def read_line(self) -> bytes:
        self._stopped_here()
        if self._shaking:
            if self._reads:
                h = self._reads.popleft()
                if not self._reads:
                    self._shaking = False
                return self.tape.line_bytes(h)
            if self.hello.exit is not None:
                raise self._exited(self.hello.exit)
            if self.hello.overlong is not None:
                raise self._overlong(self.hello.overlong)
            await trio.sleep_forever()
        rec = self.tape.peek()
        if isinstance(rec, R.In):
            return self.tape.line_bytes(rec)
        if isinstance(rec, R.Fault):
            if rec.exit is not None and rec.exit.op == "read":
                raise self._exited(rec.exit)
            if rec.overlong is not None and rec.overlong.op == "read":
                raise self._overlong(rec.overlong)
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    def line_within(self, seconds: float) -> bytes | None:
        self._stopped_here()
        rec = self.tape.peek()
        if not self._shaking and isinstance(rec, R.In):
            return self.tape.line_bytes(rec)
        return None

    def ready_lines(self) -> list[bytes]:
        self._stopped_here()
        rec = self.tape.peek()
        if isinstance(rec, R.Fault) and rec.overlong is not None and rec.overlong.op == "ready":
            raise self._overlong(rec.overlong)
        lines = []
        k = 0
        while isinstance(rec := self.tape.peek(k), R.In):
            lines.append(self.tape.line_bytes(rec))
            k += 1
        return lines

    def write_nowait(self, data: bytes) -> int:
        rec = self.tape.peek()
        if isinstance(rec, R.Fault) and ((rec.exit is not None and rec.exit.op == "write") or rec.kind == "timeout"):
            return 0  # a turn: its fault says the write went wrong
        if isinstance(rec, R.Out) and (rec.stuck or rec.exit is not None):
            return 0  # a write that asks nothing, logged once done: it went wrong
        return len(data)

    async def send(self, data: bytes) -> None:
        self._stopped_here()
        if self._shaking:
            await trio.lowlevel.checkpoint()
            return
        rec = self.tape.peek()
        exit = rec.exit if isinstance(rec, (R.Fault, R.Out)) else None
        if exit is not None and exit.op == "write":
            raise self._exited(exit)
        if (isinstance(rec, R.Fault) and rec.kind == "timeout") or (isinstance(rec, R.Out) and rec.stuck):
            await trio.sleep_forever()
        await trio.lowlevel.checkpoint()

    def unfinished_line(self) -> str:
        return self.hello.unfinished or ""

    def pause(self) -> None:
        """A replay runs nothing (strict isolation leaves no trace in the log)."""

    def resume(self) -> None:
        pass

    def unread_input(self) -> int | None:
        return self.hello.unread

    def stderr_tail(self) -> str:
        return ""

    @property
    def returncode(self) -> int | None:
        return None

    async def close(self, grace: float = 1.0) -> list[bytes]:
        return []

    async def kill(self) -> None:
        return None


def exit_agrees(name: str, exit: R.Exit) -> bool:
    """Whether a recorded end's words say what its status does (:meth:`BotProcess._exited`
    words every end from its status)."""
    words = exit.what.removeprefix(f"bot {name!r} ").split(";", 1)[0]
    status = exit.status
    if status is None:
        return words.startswith(("closed its stdout", "closed its stdin", "has exited", "exited (as its script says)"))
    if status >= 0:
        return words.startswith((f"exited with code {status}", "has exited", "exited (as its script says)"))
    try:
        signame = signal.Signals(-status).name
    except ValueError:
        return words.startswith(f"killed by signal {-status}")
    return words.startswith((f"killed by {signame}", "was killed"))


def spec_of(header: R.Header, path: Path, stderr_dir: Path) -> MatchSpec:
    """The match a format-2 header describes.

    Raises:
        Inconsistent: a setting no match can have, or a deal file that cannot be read or is not
            the one the match played.
    """
    def bad(what: str) -> Inconsistent:
        return Inconsistent(f"{path}: line 1 (match): {what}")

    try:
        v = variant(header.variant)
        options = header.options
        if v.resolve_options(header.players, options) != options:
            raise bad(f"the options {_short(options)} are not {v.id}'s options as the referee writes them")
        orientations(v, header.players, options, len(header.bots))  # players and bots that fit the game
    except (RulesError, ValueError) as exc:
        raise bad(str(exc)) from None
    deal_list: list[Deal] | None = None
    if header.deals_file is not None:
        name = header.deals_file
        try:
            data = Path(name).read_bytes()
            if header.deals_file_sha256 is not None and hashlib.sha256(data).hexdigest() != header.deals_file_sha256:
                raise bad(f"the deal file {name} is not the one the match played (its SHA-256 differs)")
            lines = data.decode().splitlines()
            if any(m.too_deep(line.encode()) for line in lines):
                raise BadDeal(f"nested deeper than {m.MAX_DEPTH} levels")
            deal_list = parse_deal_lines(lines, v.shape(header.players, options))
        except (OSError, UnicodeDecodeError, BadDeal) as exc:
            raise bad(f"cannot regenerate the deals: the deal file {name}: {getattr(exc, 'strerror', None) or exc}") from None
    elif header.seed is None:
        raise bad("the header names neither a seed nor a deal file")
    tc = header.time_control
    try:
        spec = MatchSpec(
            v, [Bot(b.name, list(b.command), tc=None if b.time_control is None else time_control(b.time_control)) for b in header.bots],
            header.players, options, deals=header.deals, games=header.games,
            seed=header.seed if header.seed is not None else 0, deals_from=header.derivation, deal_file=deal_list,
            deal_file_name=header.deals_file, deal_file_sha256=header.deals_file_sha256,
            tc=time_control(tc), max_faults=header.max_faults, max_line=header.max_line,
            stderr_dir=stderr_dir, confidence=header.confidence, sprt=header.sprt, deal_limit=header.deal_limit,
            opening=opening_moves(header.opening or []), event=header.event)
    except (ValueError, TypeError) as exc:
        raise bad(str(exc)) from None
    return spec


def time_control(tc: R.TimeControlRecord) -> TimeControl:
    return TimeControl(tc.startup, tc.move, tc.bank, tc.increment, tc.margin or 0.0)


def verify(path: Path) -> Counts:
    """Play the log's match again and compare every line; raise :class:`Inconsistent` at the first
    disagreement, :class:`Incomplete` when the log stops before the result.

    Raises:
        OSError: the log cannot be read.
        Damaged: a line that is not a record of a match log (one line naming it).
        Inconsistent: see above.
    """
    header = R.header_of(path)
    if header.format < 2:
        from referee.audit import legacy
        return legacy.verify(path)
    tape = Tape(path)
    with closing(tape), tempfile.TemporaryDirectory(prefix="referee-verify-") as scratch:
        spec = spec_of(header, path, Path(scratch))

        async def launch(nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int,
                         hidden: Sequence[Path]) -> BotTransport:
            if isinstance(tape.peek(), R.Interrupted):
                raise LogInterrupted
            hello = tape.claim_hello(name)
            if hello is None:
                raise tape.fail(tape.peek_number(), f"the referee starts a process for {name} here; the log has no hello for it")
            if hello.error is not None:
                raise BotError(hello.error.removeprefix("could not start: "), bot=name)
            return ReplayBot(tape, hello, name)

        class Compare(Watch):
            """The log written as the match is played again goes to the tape, line by line."""

            def logged(self, line: bytes) -> None:
                tape.compare(line)

        async def main() -> None:
            # Lockstep: every segment plays only when the log takes its lines, so the match is
            # played again in the log's own order, whatever lanes wrote it.
            result = await run_match(spec, BotSource(launch, tape.hear, lambda: LoggedWaits(tape)), Compare(), lockstep=True, block=0,
                                     handle_signals=False)
            result.close()  # only the log is compared: its spooled deals go

        try:
            trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
        except BaseException as exc:  # noqa: BLE001  (an exception group from the match's nurseries)
            if tape.damaged is not None:
                raise tape.damaged from None
            if tape.failure is not None:
                raise tape.failure from None
            if _find_interrupted(exc):
                raise Incomplete(f"{path}: the match was stopped before its end (a signal, or its caller); consistent up to "
                                 f"line {tape.number}", tape.number) from None
            found = _find(exc)
            if found is not None:
                raise found from None
            if isinstance(exc, (BotStartError, BadDeal)):
                if tape.peek() is None:
                    raise Incomplete(f"{path}: the match never got going ({exc}); consistent up to line {tape.number}", tape.number) from None
                raise tape.fail(tape.peek_number(), f"the referee stops the match here ({exc}), the log goes on") from None
            if isinstance(exc, LogError):
                raise Inconsistent(f"{path}: {exc}") from None
            raise
        following = tape.peek() if tape.damaged is None else None
        if tape.damaged is not None:
            raise tape.damaged
        if tape.failure is not None:
            raise tape.failure
        if following is not None:
            raise tape.fail(tape.peek_number(), "a record after the match's result")
        if tape.cut is not None:
            raise tape.ended()
    return tape.counts


def _find_interrupted(exc: BaseException) -> bool:
    if isinstance(exc, LogInterrupted):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(_find_interrupted(e) for e in exc.exceptions)


def _find(exc: BaseException) -> Inconsistent | R.Damaged | None:
    """The :class:`Inconsistent` (or damaged line) inside ``exc`` (an exception group), if any."""
    if isinstance(exc, (Inconsistent, R.Damaged)):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find(inner)
            if found is not None:
                return found
    return None
