"""Running a league: every pending pairing as a duplicate match, ``concurrency`` at a time.

Matches run in child processes (:mod:`tournaments.worker`), one per lane, so matches use every
core: the referee is single-threaded under trio, and a match spends a large part of its CPU time
in the referee.  Each child plays its lane's matches one after the other (starting Python and
importing the referee costs about as much as a short match).  A match whose child crashes, or
stops reporting progress for longer than any legal match could (:func:`stall_limit`), becomes
a *failed* pairing; the child is stopped and reaped, never waited on for ever, and the lane
starts a fresh one.  ``isolate=False`` plays the matches inside this process instead (one trio
loop; kept for the benchmark's comparison and for debugging).

**Resume.**  A match is stored only when it is complete, in one transaction
(:meth:`Store.record`); its log is written under a temporary name and renamed into place just
before that commit.  A run that is interrupted (Ctrl-C, SIGTERM, ``kill -9``) loses only the
matches in flight: the next run plays every pairing of the schedule that has no *done* row,
from scratch, and leaves finished ones alone.  Failed pairings are tried again.

**Same deals for everyone.**  Every match uses the league seed, so every pairing plays the same
deal stream.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import trio

from referee.process import describe_exit
from tournaments import worker
from tournaments.config import League, LeagueError
from tournaments.store import Finished, Store, open_store

#: How long a child gets to stop its bots after SIGTERM before it is killed.
TERM_GRACE = 5.0
_TAIL = 4096  # bytes of a child's stderr kept for the failure message

WORKER_ARGV = (sys.executable, "-m", "tournaments.worker")


class Display(Protocol):
    """What a run tells the person watching it (see :mod:`tournaments.cli` for the live one)."""

    def begin(self, pairings: int, done: int, pending: int) -> None: ...
    def started(self, pair: tuple[str, str]) -> None: ...
    def progress(self, pair: tuple[str, str], done: int, total: int) -> None: ...
    def finished(self, pair: tuple[str, str], record: dict[str, Any] | None, error: str | None) -> None: ...


class Quiet:
    def begin(self, pairings: int, done: int, pending: int) -> None:
        pass

    def started(self, pair: tuple[str, str]) -> None:
        pass

    def progress(self, pair: tuple[str, str], done: int, total: int) -> None:
        pass

    def finished(self, pair: tuple[str, str], record: dict[str, Any] | None, error: str | None) -> None:
        pass


@dataclass
class RunReport:
    pairings: int  # in the schedule
    done_before: int  # already done when the run started
    played: int = 0  # matches finished with a result in this run
    failed: list[tuple[tuple[str, str], str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    bot_start_failures: int = 0

    @property
    def left(self) -> int:
        return self.pairings - self.done_before - self.played


def make_job(league: League, pair: Sequence[str], log: Path, stderr_dir: Path) -> dict[str, Any]:
    """The JSON job of one match between the bots named in ``pair`` (what
    :func:`tournaments.worker.build_spec` reads)."""
    bots = []
    for name in pair:
        b = league.bot(name)
        bots.append({"name": b.name, "argv": b.argv, "cwd": str(b.workdir), "env": b.env})
    tc = league.tc
    return {
        "variant": league.variant.id, "players": league.players, "options": league.options,
        "deals": league.deals, "games": league.games, "seed": league.seed,
        "tc": {"startup": tc.startup, "move": tc.move, "bank": tc.bank, "increment": tc.increment},
        "max_faults": league.max_faults, "max_line": league.max_line,
        "memory_mb": league.memory_mb, "cpu_seconds": league.cpu_seconds,
        "bots": bots, "log": str(log), "stderr_dir": str(stderr_dir),
    }


def stall_limit(league: League) -> float:
    """Seconds a match may go without finishing a deal before it counts as hung: every process
    restarting (up to ``max_faults`` times) plus more turns than any deal has, each taking the
    whole move time, with a wide margin."""
    tc = league.tc
    return 30.0 + 2.0 * (4 * (league.max_faults + 1) * tc.startup + 120 * tc.move)


# -- one match ------------------------------------------------------------------------------------


async def _terminate(proc: trio.Process) -> None:
    """Cancel delivery for a match process: SIGTERM (it stops its bots), then SIGKILL."""
    try:
        proc.send_signal(signal.SIGTERM)
    except ProcessLookupError:
        return
    with trio.move_on_after(TERM_GRACE):
        await proc.wait()
        return
    try:
        proc.kill()
    except ProcessLookupError:
        pass


class Child:
    """One match process (a lane's worker): jobs go in as lines, progress and results come out.

    Start it with :meth:`start` in a nursery that outlives it; :meth:`close` ends it at the end
    of its input.  If the nursery is cancelled first, the process gets SIGTERM (it stops its
    bots and exits), then SIGKILL after :data:`TERM_GRACE`, and is always reaped.
    """

    def __init__(self, proc: trio.Process) -> None:
        self.proc = proc
        self.dead = False
        self._buf = bytearray()
        self._tail = bytearray()

    @classmethod
    async def start(cls, nursery: trio.Nursery, argv: Sequence[str]) -> Child:
        proc: trio.Process = await nursery.start(partial(
            trio.run_process, list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            check=False, deliver_cancel=_terminate,
        ))
        child = cls(proc)
        nursery.start_soon(child._read_stderr)
        return child

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        async for chunk in self.proc.stderr:
            self._tail.extend(chunk)
            del self._tail[:-_TAIL]

    async def _line(self, stall: float) -> bytes | None:
        """The next stdout line; ``None`` at the end of the stream.

        Raises:
            trio.TooSlowError: nothing arrived for ``stall`` seconds.
        """
        assert self.proc.stdout is not None
        while (i := self._buf.find(b"\n")) < 0:
            with trio.fail_after(stall):
                chunk = await self.proc.stdout.receive_some()
            if not chunk:
                return None
            self._buf.extend(chunk)
        line = bytes(self._buf[:i])
        del self._buf[: i + 1]
        return line

    async def play(self, job: dict[str, Any], report, stall: float) -> tuple[dict | None, str | None, str | None]:
        """Play ``job``.  Returns ``(record, error, kind)``: the worker's record, or ``None`` and
        why (``kind`` is ``"bot_start"`` when a bot could not be started).  After a crash or a
        stall the child is :attr:`dead` (stopped and reaped)."""
        assert self.proc.stdin is not None
        self._tail.clear()
        try:
            await self.proc.stdin.send_all(json.dumps(job).encode() + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return await self._crashed()
        while True:
            try:
                line = await self._line(stall)
            except trio.TooSlowError:
                self.dead = True
                with trio.CancelScope(shield=True):
                    await _terminate(self.proc)
                    await self.proc.wait()
                return None, f"the match made no progress for {stall:g} s and was stopped", None
            if line is None:
                return await self._crashed()
            try:
                msg = json.loads(line)
                k = msg.get("k")
            except (ValueError, AttributeError):
                continue
            if k == "progress":
                report(msg["done"], msg["total"])
            elif k == "result":
                return {"result": msg["result"], "boards": msg["boards"]}, None, None
            elif k == "error":
                return None, str(msg.get("message")), msg.get("kind")

    async def _crashed(self) -> tuple[None, str, None]:
        self.dead = True
        with trio.move_on_after(TERM_GRACE) as scope:
            await self.proc.wait()
        if scope.cancelled_caught:
            with trio.CancelScope(shield=True):
                await _terminate(self.proc)
                await self.proc.wait()
        await trio.lowlevel.checkpoint()  # let the stderr reader take the last bytes
        why = f"the match process {describe_exit(self.proc.returncode)}"
        last = last_words(self._tail.decode("utf-8", "replace"))
        return None, why + (f": {last}" if last else ""), None

    async def close(self) -> None:
        """End the child at the end of its input (it is between matches); kill it if it lingers."""
        assert self.proc.stdin is not None
        await self.proc.stdin.aclose()
        with trio.move_on_after(TERM_GRACE) as scope:
            await self.proc.wait()
        if scope.cancelled_caught:
            await _terminate(self.proc)
            await self.proc.wait()


def last_words(stderr: str) -> str:
    """The line of a failed child's stderr that says why: its own summary line if it wrote one,
    else the last line with words in it (never a border of a traceback's exception-group box)."""
    lines = [ln.strip().lstrip("|").strip() for ln in stderr.splitlines()]
    for line in reversed(lines):
        if line.startswith(worker.LAST_WORDS):
            return line.removeprefix(worker.LAST_WORDS)
    for line in reversed(lines):
        if line and not set(line) <= _BORDER:
            return line
    return ""


_BORDER = set("+-|0123456789 .")


async def play_here(job: dict[str, Any], report) -> tuple[dict | None, str | None, str | None]:
    """Play ``job`` in this process (no isolation: a referee bug ends the league)."""
    from referee.table import BotStartError

    try:
        return await worker.play(job, report), None, None
    except BotStartError as exc:
        return None, f"a bot could not be started: {exc}", "bot_start"


# -- the league -----------------------------------------------------------------------------------


def _stem(pair: tuple[str, str]) -> str:
    return f"{pair[0]}-vs-{pair[1]}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


@contextmanager
def _exclusive(league: League) -> Iterator[None]:
    """Hold ``<database>.lock`` for the run, so two runs never play the same pairings at once
    (the kernel drops the lock when the process dies, even by SIGKILL)."""
    league.db_path.parent.mkdir(parents=True, exist_ok=True)
    lock = league.db_path.with_name(league.db_path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LeagueError(f"{league.path}: another run of this league is using {league.db_path.name}; wait for it to end") from None
        yield
    finally:
        os.close(fd)


@contextmanager
def _open(league: League) -> Iterator[Store]:
    store = open_store(league.db_path, create=True)
    assert store is not None
    with store:
        yield store


async def run_league(
    league: League,
    concurrency: int = 1,
    *,
    isolate: bool = True,
    display: Display | None = None,
    handle_signals: bool = False,
    worker_argv: Sequence[str] = WORKER_ARGV,
    stall: float | None = None,
) -> RunReport:
    """Play every pending pairing of ``league`` and store each result as it finishes.

    Args:
      concurrency: matches at once.
      isolate: each match in a child process (default); ``False``: all in this trio loop.
      display: told about every start, deal and finish (default: nothing is shown).
      handle_signals: stop cleanly on SIGINT/SIGTERM/SIGHUP (the matches in flight are stopped and
        lost, and the report says ``interrupted``) instead of raising ``KeyboardInterrupt``.
      worker_argv: the command of the match process (tests pass a crashing one).
      stall: seconds without progress after which a match process is stopped
        (default :func:`stall_limit`).

    Raises:
      LeagueError: the league's settings or a bot's command differ from the stored results, or
        another run of the league holds its database.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    display = display or Quiet()
    stall = stall_limit(league) if stall is None else stall
    t0 = time.monotonic()
    with _exclusive(league), _open(league) as store:
        store.check(league, adopt=True)
        pairings = league.pairings()
        done = store.done()
        pending = [p for p in pairings if p not in done]
        report = RunReport(len(pairings), len(pairings) - len(pending))
        logs = league.logs_dir
        logs.mkdir(parents=True, exist_ok=True)
        for leftover in logs.glob(".*.part.*"):  # matches a killed run left half-played
            _remove(leftover)
        display.begin(len(pairings), report.done_before, len(pending))
        todo = iter(pending)

        async def play_one(pair: tuple[str, str], child: Child | None, parts: list[Path]) -> None:
            """Play and store one match.  Its half-written files are listed in ``parts`` until
            they are renamed; whoever stops the match's process removes what is left."""
            token = f"{os.getpid()}-{secrets.token_hex(3)}"
            part_log = logs / f".{_stem(pair)}.{token}.part.jsonl"
            part_err = logs / f".{_stem(pair)}.{token}.part.stderr"
            parts[:] = [part_log, part_err]
            final_log = logs / f"{_stem(pair)}.jsonl"
            final_err = logs / f"{_stem(pair)}.stderr"
            job = make_job(league, pair, part_log, part_err)
            started = time.time()
            display.started(pair)
            reporter = partial(display.progress, pair)
            if child is not None:
                record, error, kind = await child.play(job, reporter, stall)
            else:
                record, error, kind = await play_here(job, reporter)
            finished = time.time()
            log_rel = None
            if part_log.exists():
                os.replace(part_log, final_log)
                log_rel = os.path.relpath(final_log, league.db_path.parent)
            if part_err.exists():
                _remove(final_err)
                os.replace(part_err, final_err)
            parts.clear()
            store.record(Finished(pair[0], pair[1], started, finished, log_rel, record, error))
            if record is not None:
                report.played += 1
            else:
                report.failed.append((pair, error or "unknown failure"))
                if kind == "bot_start":
                    report.bot_start_failures += 1
            display.finished(pair, record, error)

        async def lane() -> None:
            # One iterator shared by every lane; each lane keeps one child for all its matches
            # and starts a new one after a crash.  The files of a match cut short are removed
            # once its process has stopped (the next run would remove them too).
            parts: list[Path] = []
            pair = next(todo, None)
            try:
                while pair is not None:
                    if not isolate:
                        await play_one(pair, None, parts)
                        pair = next(todo, None)
                        continue
                    async with trio.open_nursery() as nursery:
                        child = await Child.start(nursery, worker_argv)
                        while pair is not None and not child.dead:
                            await play_one(pair, child, parts)
                            pair = next(todo, None)
                        if not child.dead:
                            await child.close()
            finally:
                for path in parts:
                    _remove(path)

        lanes_scope = trio.CancelScope()
        async with trio.open_nursery() as outer:
            if handle_signals:

                async def watch(task_status=trio.TASK_STATUS_IGNORED) -> None:
                    # Open until the lanes have stopped, so a second Ctrl-C cannot cut the cleanup short.
                    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
                        task_status.started()
                        async for _ in signals:
                            report.interrupted = True
                            lanes_scope.cancel()

                await outer.start(watch)
            with lanes_scope:
                async with trio.open_nursery() as lanes:
                    for _ in range(min(concurrency, len(pending))):
                        lanes.start_soon(lane)
            outer.cancel_scope.cancel()  # stop the signal watcher
    report.seconds = time.monotonic() - t0
    return report
