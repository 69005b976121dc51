"""League matches in a child process: ``python -m tournaments.worker`` (an internal entry point).

The league runs its matches in child processes so that they use every core (the referee is
single-threaded under trio).  Each child serves one lane of the league: it reads *jobs* on
stdin, one JSON object per line, plays each with :func:`referee.matches.match.run_match`, and writes
JSON lines on stdout, each a message of :mod:`tournaments.wire` (progress, a heartbeat, the
result, or why the match failed: ``bot_start`` when a bot could not be started and nothing was
played, ``log`` when the log or the bots' stderr could not be written and the match was stopped).

A job is a :class:`referee.matches.job.MatchJob` as JSON, which :func:`tournaments.runner.make_job`
builds (one function, the only place a league makes jobs): the game, the clocks and limits,
the seed, and the table's ``bots`` (two or more, in seating order: the first takes the first
orientation).  It is decoded as that type: a key it does not know, a value out of its bounds or
a setting left out (a bot's ``sandbox`` has no default) refuses the job (exit 2), and nothing
is played.  Every job ends with exactly
one ``result`` or ``error`` line; then the child reads the next job.
It exits with 0 at the end of its input.  A child lives for many matches, because starting
Python and importing the referee costs about as much CPU as a short match.

``--cpus 0,1`` (first, before ``--probe``) keeps the child, and so every bot it starts, to
those CPUs: a lane's own (:func:`tournaments.runner.lane_cpus`, the league's ``--affinity``).

Exit codes: 0 end of input, 2 a line that is not a job, 4 the input ended (or stdout broke)
during a match, 143 stopped by SIGTERM, 1 a bug (traceback on stderr).  The match in play is
stopped, its bots killed and reaped, before every exit.

Signals and orphans: the child ignores SIGINT and SIGHUP (a Ctrl-C in the terminal, or the
terminal closing, reaches the whole process group; the league decides, and sends SIGTERM).  SIGTERM cancels the match in play.  The
league writes a job only after the previous result, so the child also watches its input during
a match: if it ends, the league is gone (even killed with SIGKILL), and the child stops the
match and exits rather than play on for nobody.  (``PR_SET_PDEATHSIG`` would not do: it fires
when the parent *thread* that spawned the child ends, and trio spawns from a thread pool.)
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import trio

from referee.base.errors import BotStartError, LogError
from referee.bots.reader import StreamLines
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table
from referee.matches.job import MatchJob
from referee.matches.match import house_for, orientations, run_match
from referee.matches.results import MatchResult, encode_record
from referee.matches.spec import MatchSpec
from referee.matches.watch import watching
from referee.stats.figures import board_margin
from tournaments import wire
from tournaments.wire import TableRecord

EXIT_OK = 0
EXIT_BUG = 1
EXIT_REFUSED = 2
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_PARENT_GONE = 4

#: How the last line on stderr of a child that failed starts (the league shows the rest).
LAST_WORDS = "tournaments.worker: bug: "

#: A disk that cannot take more: the league stops (and says how to resume) rather than fail
#: every match after this one.
DISK_ERRNOS = frozenset((errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EIO))

#: Seconds between progress lines.
PROGRESS_EVERY = 0.2


_encoder = msgspec.json.Encoder()


def margins_of(result: MatchResult) -> list[list[float]]:
    """Every bot's paired margin on every finished board of ``result``."""
    k = len(result.spec.bots)
    out = []
    for board in result.boards():
        out.append([board_margin(board, i) for i in range(k)])
    return out


def encode_table(result: MatchResult, first: bytes = b"") -> Iterator[bytes]:
    """The result line's object (:class:`TableRecord`, no newline) in pieces, ``first`` its first
    members."""
    yield from encode_record(result, first + b'"margins":' + _encoder.encode(margins_of(result)) + b",")


def total_units(spec: MatchSpec) -> int:
    n = len(orientations(spec.variant, spec.players, spec.options, len(spec.bots)))
    per_orientation = (spec.games or 1) if spec.variant.to_target else (spec.deals or 0) * (spec.games or 1)
    return n * per_orientation


async def play_match(job: MatchJob, report: Callable[[int, int], None] | None = None) -> MatchResult:
    """Play a job's match and return its result (close it when done with it).

    ``report(done, total)`` is called after every deal (or game, in games to a target).

    Raises:
        BotStartError: a bot could not be started (nothing was played).
    """
    spec = job.spec(job.deal_list())  # a league's deal file, if it plays one
    total = total_units(spec)
    done = 0

    def progress(_desc: str, advance: int) -> None:
        nonlocal done
        done += advance
        if report is not None:
            report(done, total)

    # The match process's signals are its own (_main): SIGTERM cancels, Ctrl-C is the parent's.
    return await run_match(spec, watch=watching(progress), handle_signals=False)


async def play(job: MatchJob, report: Callable[[int, int], None] | None = None) -> TableRecord:
    """Play a job's match and return the record the league stores (as :func:`play_match`)."""
    with await play_match(job, report) as result:
        return msgspec.json.decode(b"".join(encode_table(result)), type=TableRecord)


async def probe(job: MatchJob) -> list[str]:
    """Start every bot of ``job`` and shake hands with it, then stop them; one line per bot that
    could not be started (what a cluster checks on every worker before a league)."""
    spec = job.spec()
    spec.stderr_dir.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    if spec.isolation == "strict":
        from referee.bots.cgroups import freezer_missing

        if (why := freezer_missing()) is not None:
            failures.append(f"this worker cannot play strict: {why}")  # never a weaker strict in silence
    log = MatchLog(spec.log_path)
    try:
        for i, bot in enumerate(spec.bots):
            async with trio.open_nursery() as nursery:
                table = Table(nursery, [Player(Entry(bot, i, spec.tc), 0)], log, house_for(spec))
                try:
                    await table.open()
                except BotStartError as exc:
                    failures.append(f"bot {bot.name!r} could not be started: {exc}")
                else:
                    await table.close()
    finally:
        log.close()
    return failures


class ParentGone(Exception):
    """The league closed this child's input (or died) in the middle of a match."""


def _emit(msg: wire.Message) -> None:
    try:
        sys.stdout.buffer.write(wire.encode(msg))
        sys.stdout.flush()
    except BrokenPipeError:
        raise ParentGone from None


def _emit_result(result: MatchResult) -> None:
    """The result line, written piece by piece as the match's spools are read."""
    try:
        out = sys.stdout.buffer
        for chunk in encode_table(result, wire.RESULT_TAG):
            out.write(chunk)
        out.write(b"\n")
        out.flush()
    except BrokenPipeError:
        raise ParentGone from None


class BadJob(Exception):
    pass


def decode_job(line: bytes) -> MatchJob:
    """A job line as the :class:`MatchJob` it must be (every key known, every bound kept, no
    safety setting left out).

    Raises:
        BadJob: it is not one, with msgspec's reason (the key and what is wrong with it).
    """
    try:
        return msgspec.json.decode(line, type=MatchJob)
    except msgspec.DecodeError as exc:
        raise BadJob(str(exc)) from None


class _Progress:
    """Writes a progress line at most every :data:`PROGRESS_EVERY` seconds: with fast bots a
    line per deal would cost the league a tenth of a core just to read them."""

    def __init__(self) -> None:
        self.last = -PROGRESS_EVERY

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY:
            self.last = now
            _emit(wire.Progress(done, total))


class _Input:
    """The job lines of stdin."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.lines = StreamLines(stream)

    @property
    def eof(self) -> bool:
        return self.lines.eof

    async def line(self) -> bytes | None:
        """The next line, or ``None`` at the end of the input."""
        line = await self.lines.read_line()
        if line is None and self.lines.buf.strip():
            raise BadJob("the input ended inside a job line")
        return line

    async def until_eof(self) -> None:
        """Return when the input ends (anything that arrives meanwhile is kept for :meth:`line`)."""
        await self.lines.until_eof()


async def _serve(stdin: trio.abc.ReceiveStream) -> None:
    """Play the jobs of ``stdin`` one after the other, until its end.

    The league writes the next job only after this one's result, so input that ends during a
    match means the league is gone: the match is stopped (its bots killed) and the child exits.

    Raises:
        ParentGone: the input ended, or stdout broke, during a match.
        BadJob: a line that is not a JSON object.
    """
    jobs = _Input(stdin)
    while (line := await jobs.line()) is not None:
        if not line.strip():
            continue
        await _play_job(jobs, decode_job(line))


def start_failure(job: MatchJob, exc: BotStartError) -> str:
    """The line that says a bot of ``job`` could not be started, naming the sandbox when the
    bots ran in it (a likely cause: a path the bot uses that its command line does not name)."""
    first, newline, rest = f"a bot could not be started: {exc}".partition("\n")
    if any(b.sandbox for b in job.bots):  # on the first line, the one the league prints
        first += ("; the bots ran in the sandbox, which may be why: a bot there sees only the system, its own folder, its cwd "
                  "and the paths its command line names (referee check --sandbox on its command says more; sandbox = false "
                  "in its [[bot]] turns it off)")
    return first + newline + rest


async def _play_job(jobs: _Input, job: MatchJob) -> None:
    """Play one job while watching the input for its end; write its result or error line."""
    outcome: dict[str, Any] = {}
    async with trio.open_nursery() as nursery:

        async def watch_parent() -> None:
            await jobs.until_eof()
            outcome["gone"] = True
            nursery.cancel_scope.cancel()

        async def match() -> None:
            try:
                outcome["result"] = await play_match(job, _Progress())
            except BotStartError as exc:
                outcome["error"] = wire.Failed("bot_start", start_failure(job, exc))
            except LogError as exc:
                outcome["error"] = wire.Failed("log", str(exc))
            except OSError as exc:
                if exc.errno not in DISK_ERRNOS:
                    raise
                outcome["error"] = wire.Failed("log", f"cannot write {exc.filename or 'a file'}: {exc.strerror}")
            nursery.cancel_scope.cancel()

        async def heartbeat(every: float) -> None:
            while True:
                _emit(wire.Alive())
                await trio.sleep(every)

        nursery.start_soon(watch_parent)
        nursery.start_soon(match)
        if job.heartbeat:
            nursery.start_soon(heartbeat, job.heartbeat)
    if "result" in outcome:
        with outcome["result"] as result:
            _emit_result(result)
    elif "error" in outcome:
        _emit(outcome["error"])
    else:
        raise ParentGone


async def _main() -> int:
    terminated = False
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal terminated
                async for _ in signals:
                    terminated = True
                    nursery.cancel_scope.cancel()
                    return

            async def serve() -> None:
                async with trio.lowlevel.FdStream(os.dup(sys.stdin.fileno())) as stdin:
                    await _serve(stdin)
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            nursery.start_soon(serve)
    return EXIT_TERMINATED if terminated else EXIT_OK


def _probe_main() -> int:
    """``--probe``: one job line on stdin, one ``{"k": "probed", "failures": [...]}`` line out."""
    try:
        job = decode_job(sys.stdin.readline().encode())
    except BadJob as exc:
        print(f"tournaments.worker: bad job: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    failures = trio.run(probe, job)
    _emit(wire.Probed(failures))
    return EXIT_OK


def pin(argv: list[str]) -> list[str]:
    """``--cpus 2,3`` (the lane's CPUs, :func:`tournaments.runner.lane_cpus`): keep this process
    and everything it starts (its bots, its threads) on those CPUs; the rest of ``argv``."""
    if argv[:1] != ["--cpus"] or len(argv) < 2:
        return argv
    try:
        cpus = {int(c) for c in argv[1].split(",")}
        os.sched_setaffinity(0, cpus)
    except (ValueError, OSError, AttributeError) as exc:  # AttributeError: no sched_setaffinity here
        print(f"tournaments.worker: --cpus {argv[1]}: {exc} (not pinned)", file=sys.stderr)
    return argv[2:]


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # Before trio starts a thread: a thread keeps the mask it was made with.
    args = pin(sys.argv[1:])
    if args == ["--probe"]:
        sys.exit(_probe_main())
    code = EXIT_REFUSED
    try:
        code = trio.run(_main)
    except* BadJob as group:
        print(f"tournaments.worker: bad job: {group.exceptions[0]}", file=sys.stderr)
    except* ParentGone:
        # Nobody is left to read: leave without flushing into the broken pipe.
        os._exit(EXIT_PARENT_GONE)
    except* Exception as group:  # noqa: BLE001 - a bug, reported in one line below its traceback
        # The traceback for whoever debugs it, then one line the league shows as the reason
        # (without it, the last line of stderr is the border of trio's exception group box).
        traceback.print_exception(group)
        print(f"{LAST_WORDS}{first_error(group)}", file=sys.stderr)
        code = EXIT_BUG
    sys.exit(code)


def first_error(exc: BaseException) -> str:
    """``Type: message`` of the first exception inside (nested) exception groups, in one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (f": {text[0]}" if text else "")


if __name__ == "__main__":
    main()
