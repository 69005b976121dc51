"""Running a league: one loop over its schedule, and the executor that plays its tables here.

**One loop** (:meth:`Session.batches`).  A run asks the league's schedule what can be played
now (every table of a round robin or gauntlet, one round of a Swiss or knockout league, drawn
from the standings and stored before it is played), hands those tables to an *executor*, and
asks again once they are all over, until nothing is left to play now.  A table that failed is not
played again in the same run (the next run does), so a Swiss round with a failed table waits for
the next run.  Two executors drive the loop and share the worker protocol
(:mod:`tournaments.worker`, jobs made by :func:`make_job` only): :class:`LocalExecutor` (child
processes here, below; :func:`run_league`) and :class:`tournaments.cluster.ClusterExecutor`
(Dask; :func:`tournaments.cluster.run_league_on_cluster`).

**The local executor.**  Matches run in child processes (:mod:`tournaments.worker`), one per
lane, so matches use every core: the referee is single-threaded under trio, and a match spends a
large part of its CPU time in the referee.  Each child plays its lane's matches one after the
other (starting Python and importing the referee costs about as much as a short match).  A
match whose child crashes, or stops reporting progress for longer than any legal match could
(:func:`stall_limit`), becomes a *failed* table; the child is stopped and reaped, never waited
on for ever, and the lane starts a fresh one.  ``isolate=False`` plays the matches inside this
process instead (one trio loop; kept for the benchmark's comparison and for debugging).

**Resume.**  A table is stored only when it is complete, in one transaction
(:meth:`Store.record`); its log is written under a temporary name and renamed into place just
before that commit.  A run that is interrupted (Ctrl-C, SIGTERM, ``kill -9``) loses only the
tables in flight: the next run plays every table of the schedule that has no *done* row, from
scratch, and leaves finished ones alone; a drawn Swiss or knockout round is stored before its
first table is played, so the next run plays the same round.  Failed tables are tried again, up
to :data:`~tournaments.store.MAX_ATTEMPTS` matches cut short in a row (then given up until
``retry``).  A child silent for :data:`SILENCE` seconds (stopped, frozen) is ended by the
watchdog.  A disk or database that cannot be written stops the run (``report.stopped``).

**Same deals for everyone.**  Every table uses the league seed, so every table plays the same
deal stream (a further leg of the same bots plays a stream of its own:
:func:`tournaments.schedule.leg_seed`).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

from referee.base.errors import BotStartError, LogError
from referee.base.signals import STOP_SIGNALS, Stop, cancel_on_signals
from referee.bots.reader import StreamLines
from referee.bots.sandbox import hidden_from
from referee.bots.spawn import describe_exit
from referee.matches.job import BotJob, ClockJob, GameJob, LimitsJob, MatchJob
from tournaments import wire, worker
from tournaments.config import BotEntry, League, LeagueError
from tournaments.schedule import TableKey, leg_seed
from tournaments.standings import state_of
from tournaments.store import Finished, Store, StoreError, open_store, this_run
from tournaments.wire import NOT_ATTEMPTS, FailureKind, TableRecord

#: How long a child gets to stop its bots after SIGTERM before it is killed.
TERM_GRACE = 5.0
#: A match process writes a line at least this often (seconds) while it plays ...
HEARTBEAT = 1.0
#: ... and one silent for this long is stopped or frozen: the watchdog ends it.  Far above
#: HEARTBEAT, because a loaded machine may not schedule the child for a few seconds.
SILENCE = 30.0
_TAIL = 4096  # bytes of a child's stderr kept for the failure message

WORKER_ARGV = (sys.executable, "-m", "tournaments.worker")


class Display(Protocol):
    """What a run tells the person watching it (see :mod:`tournaments.cli` for the live one)."""

    def begin(self, pairings: int, done: int, pending: int) -> None: ...
    def started(self, key: TableKey) -> None: ...
    def progress(self, key: TableKey, done: int, total: int) -> None: ...
    def finished(self, key: TableKey, record: TableRecord | None, error: str | None) -> None: ...


class Quiet:
    def begin(self, pairings: int, done: int, pending: int) -> None:
        pass

    def started(self, key: TableKey) -> None:
        pass

    def progress(self, key: TableKey, done: int, total: int) -> None:
        pass

    def finished(self, key: TableKey, record: TableRecord | None, error: str | None) -> None:
        pass


@dataclass
class RunReport:
    pairings: int  # tables in the schedule (a Swiss or knockout league: as many as it will have)
    done_before: int  # already done when the run started
    played: int = 0  # tables finished with a result in this run
    failed: list[tuple[TableKey, str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    bot_start_failures: int = 0
    given_up: list[tuple[TableKey, str]] = field(default_factory=list)  # not played: cut short too often
    stopped: str | None = None  # why the run stopped early (the disk or the database), in one line
    cut_runs: int = 0  # runs before this one, in a row, cut short before they stored a table
    longest: float | None = None  # seconds of the longest stored table
    rounds: int = 0  # Swiss or knockout rounds drawn by this run

    @property
    def left(self) -> int:
        return max(0, self.pairings - self.done_before - self.played)


def make_job(league: League, table: TableKey | Sequence[str], log: Path, stderr_dir: Path) -> MatchJob:
    """The job of one table (:class:`referee.matches.job.MatchJob`, what ``tournaments.worker`` plays):
    the only place a league makes one, for both executors (and the cluster's check of the bots,
    with every bot of the league).  ``table`` is a :class:`TableKey` (its bots in seating order,
    its leg's deal stream) or the bots' names."""
    key = table if isinstance(table, TableKey) else TableKey(0, tuple(table))
    bots = []
    for name in key.bots:
        b = league.bot(name)
        cwd = _cwd(b)
        own = None if b.tc is None else ClockJob(startup=b.tc.startup, move=b.tc.move, bank=b.tc.bank, increment=b.tc.increment)
        bots.append(BotJob(name=b.name, argv=list(b.argv), cwd=None if cwd is None else str(cwd), env=dict(b.env), sandbox=b.sandbox, tc=own))
    tc = league.tc
    # a league without a seed of its own plays from the secret one a run draws (Session)
    assert league.seed is not None, "a job needs the league's seed: open the store first (Store.secret_seed)"
    return MatchJob(
        game=GameJob(variant=league.variant.id, players=league.players, options=dict(league.options), deals=league.deals, games=league.games),
        tc=ClockJob(startup=tc.startup, move=tc.move, bank=tc.bank, increment=tc.increment, margin=tc.margin),
        limits=LimitsJob(max_faults=league.max_faults, max_line=league.max_line, memory_mb=league.memory_mb,
                         cpu_seconds=league.cpu_seconds, max_processes=league.max_processes, isolation=league.isolation),
        seed=leg_seed(league.seed, key), deals_from=league.deals_from, bots=bots, log=str(log), stderr_dir=str(stderr_dir),
        hidden=[str(p) for p in hidden_from_bots(league, key.bots)],
        deals_file=book[0] if (book := _deals_file(league)) else None, deals_file_sha256=book[1] if book else None,
    )


def _deals_file(league: League) -> tuple[str, str] | None:
    """The job's deal file, for a league that plays one (``[game] deals_file``): the file's deals
    in the order the league plays them (:meth:`tournaments.config.DealsBook.played`), written once
    into the league's log folder (hidden from every bot, as the logs are) under a name of its
    content, so every table, its log's header and ``referee verify`` name the same bytes."""
    import hashlib

    from referee.engine.core.deal import format_deal_line

    book = league.book
    if book is None:
        return None
    assert league.seed is not None
    shape = league.variant.shape(league.players, league.options)
    text = "".join(format_deal_line(d, shape, i) + "\n" for i, d in enumerate(book.played(league.seed)))
    digest = hashlib.sha256(text.encode()).hexdigest()
    path = league.logs_dir / f"deals-{digest[:16]}.jsonl"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f".{path.name}.{os.getpid()}.part")
        part.write_text(text, encoding="utf-8")
        os.replace(part, path)
    return str(path.resolve()), digest


def _cwd(b: BotEntry) -> Path | None:
    """The working directory a league bot is given: in the sandbox a bot runs in its own
    directory unless its cwd is given (the league's directory, the default otherwise, holds
    the database and the logs)."""
    return b.workdir if not b.sandbox or b.cwd is not None else None


def hidden_from_bots(league: League, pair: Sequence[str] = ()) -> list[Path]:
    """What no sandboxed bot of a match between the bots ``pair`` may see, even inside a
    directory it is shown: the league file (it holds every bot's command and environment),
    the database and its journal files, the match logs, and the files and folders of every
    other bot of the league (:func:`referee.bots.sandbox.hidden_from`: those the pair's bots share
    with it stay theirs; the match hides each of the pair from the other)."""
    db = league.db_path
    referee_files = [league.path.resolve(), db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal")), league.logs_dir,
                     *([] if league.book is None else [league.book.path])]  # the deals every table plays
    playing = [league.bot(name) for name in pair]
    if pair and not any(b.sandbox for b in playing):
        return referee_files  # no bot of the match is sandboxed: the other bots' places are not worked out
    others = [b for b in league.bots if b.name not in pair]
    return hidden_from([(b.argv, _cwd(b)) for b in playing], [(b.argv, _cwd(b)) for b in others], referee_files)


def stall_limit(league: League) -> float:
    """Seconds a match may go without finishing a deal before it counts as hung: every process
    restarting (up to ``max_faults`` times) plus more turns than any deal has, each taking the
    whole move time, with a wide margin (the slowest clock of the league's and its bots' own)."""
    clocks = [league.tc, *(b.tc for b in league.bots if b.tc is not None)]
    startup, move = max(tc.startup for tc in clocks), max(tc.move for tc in clocks)
    return 30.0 + 2.0 * (4 * (league.max_faults + 1) * startup + 120 * move)


# -- one match ------------------------------------------------------------------------------------


async def _terminate(proc: trio.Process) -> None:
    """Cancel delivery for a match process: SIGTERM (it stops its bots), with SIGCONT in case it
    was stopped, then SIGKILL (its bots die with it: they are spawned with PR_SET_PDEATHSIG)."""
    try:
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGCONT)
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
        assert proc.stdout is not None
        self._lines = StreamLines(proc.stdout)
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
        return await self._lines.read_line(stall)

    async def play(self, job: MatchJob, report, stall: float,
                   silence: float = SILENCE) -> tuple[TableRecord | None, str | None, FailureKind | None]:
        """Play ``job``, watched: the match must finish a deal (or a game) every ``stall``
        seconds, and the child must write a line (at least its heartbeat, every
        :data:`HEARTBEAT` s) every ``silence`` seconds.  Returns ``(record, error, kind)``:
        the worker's record, or ``None`` and why (``kind`` is ``"bot_start"`` when a bot could
        not be started, ``"log"`` when the log could not be written).  After a crash or a stop
        by the watchdog the child is :attr:`dead` (stopped and reaped)."""
        assert self.proc.stdin is not None
        self._tail.clear()
        try:
            await self.proc.stdin.send_all(msgspec.json.encode(msgspec.structs.replace(job, heartbeat=HEARTBEAT)) + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return await self._crashed()
        progressed = trio.current_time()
        while True:
            wait = min(silence, progressed + stall - trio.current_time())
            try:
                line = await self._line(max(wait, 0.0))
            except trio.TooSlowError:
                self.dead = True
                with trio.CancelScope(shield=True):
                    await _terminate(self.proc)
                    await self.proc.wait()
                if wait < silence:
                    return None, f"the match made no progress for {stall:g} s, longer than its clocks allow, and was stopped", None
                return None, (f"the match process gave no sign of life for {silence:g} s (stopped, e.g. by SIGSTOP, or frozen) "
                              f"and was ended"), None
            if line is None:
                return await self._crashed()
            try:
                msg = wire.decode(line)
            except wire.BadLine as exc:
                self.dead = True  # a process that writes what it must not is not trusted with the next match
                with trio.CancelScope(shield=True):
                    await _terminate(self.proc)
                    await self.proc.wait()
                return None, str(exc), None
            match msg:
                case wire.Progress(done, total):
                    progressed = trio.current_time()
                    report(done, total)
                case wire.Result():
                    return msg.record(), None, None
                case wire.Failed(kind, message):
                    return None, message, kind
                case wire.Alive() | wire.Probed():
                    pass

    async def _crashed(self) -> tuple[None, str, None]:
        self.dead = True
        with trio.move_on_after(TERM_GRACE) as scope:
            await self.proc.wait()
        if scope.cancelled_caught:
            with trio.CancelScope(shield=True):
                await _terminate(self.proc)
                await self.proc.wait()
        await trio.lowlevel.checkpoint()  # let the stderr reader take the last bytes
        why = f"the match process {ended(self.proc.returncode)}"
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


def ended(returncode: int | None) -> str:
    """How a match process ended, to follow "the match process": ``exited with code 1``,
    ``was killed by SIGKILL``."""
    words = describe_exit(returncode)
    return f"was {words}" if words.startswith("killed") else words


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


async def play_here(job: MatchJob, report) -> tuple[TableRecord | None, str | None, FailureKind | None]:
    """Play ``job`` in this process (no isolation: a referee bug ends the league)."""
    try:
        return await worker.play(job, report), None, None
    except BotStartError as exc:
        return None, worker.start_failure(job, exc), "bot_start"
    except LogError as exc:
        return None, str(exc), "log"


# -- the league -----------------------------------------------------------------------------------


def place_outputs(part_log: Path, final_log: Path, part_err: Path, final_err: Path) -> bool:
    """Move a finished table's log and stderr folder from their working names to their own;
    whether the log was there to move (a table whose log vanished is not a result)."""
    placed = part_log.exists()
    if placed:
        os.replace(part_log, final_log)
    if part_err.exists():
        _remove(final_err)
        os.replace(part_err, final_err)
    return placed


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
    lock = league.db_path.with_name(league.db_path.name + ".lock")
    try:
        league.db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LeagueError(f"{league.db_path}: cannot make its folder: {exc.strerror or exc}") from None
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        try:  # a read-only folder: lock the file if it is there (the database will say it cannot be written)
            fd = os.open(lock, os.O_RDONLY)
        except OSError as exc:
            raise LeagueError(f"{league.db_path}: cannot lock the database for this run: {exc.strerror or exc}") from None
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


class Session:
    """One run of a league, whatever plays its tables: the open store, the report, the display,
    what the schedule has to play now (:meth:`batches`, the one loop), and how a finished table
    is stored.  Made by :func:`league_session`; an executor plays each batch and calls
    :meth:`settle` (or :meth:`stop`) for every table of it."""

    def __init__(self, league: League, store: Store, display: Display, *, retry: bool = False) -> None:
        """Everything a run does before its first table: check and adopt the league's settings,
        forget failed attempts (``retry``), claim the log folder and clear what a killed run
        left in it, draw what must be drawn, and count the run as cut short until it stores a
        table.

        Raises:
          LeagueError: settings that differ from the stored results, a log folder of another
            league, a database or a folder that cannot be written.
        """
        league = store.secret_seed(league, create=True)
        self.league = league
        self.store = store
        self.schedule = league.plan()
        store.check(league, adopt=True)
        run = this_run()
        store.begin_runs(run)  # a run refused above changes nothing of this
        self.display = NotingPlay(display, store, run["id"])
        if retry:
            store.retry()
        _claim_logs(league)
        for leftover in league.logs_dir.glob(".*.part.*"):  # matches a killed run left half-played
            _remove(leftover)
        self.tried: set[TableKey] = set()  # tables this run played (a failed one waits for the next run)
        self.drawn = 0  # rounds this run drew
        self.pending = self._plan()
        self.report = RunReport(self.total, len(self.done & set(self.tables)))
        self.report.cut_runs = store.cut_runs()
        self.report.longest = store.longest_match()
        self.began = bool(self.pending)
        if self.pending:
            store.begin_run()

    def _plan(self) -> list[TableKey]:
        """Draw what the schedule can draw now (storing it first), and return the tables that
        can be played now: not done, not given up, not tried by this run."""
        state = state_of(self.league, self.store)
        plan = self.schedule.plan(state, draw=True)
        if plan.design is not None:
            self.store.save_design(plan.design)
        if plan.draw is not None:
            self.store.save_draw(self.schedule.kind, *plan.draw)
            self.drawn += 1
            state = state_of(self.league, self.store)
        self.tables = plan.tables
        self.total = max(len(plan.tables), self.schedule.expected(state))
        self.done = set(state.places)
        given_up = self.store.given_up()
        return [k for k in plan.tables if k not in self.done and k not in given_up and k not in self.tried]

    def next_batch(self) -> list[TableKey]:
        """The tables to play now (the first call's were found when the session began)."""
        if self.pending:
            batch, self.pending = self.pending, []
        else:
            batch = self._plan()
            self.report.pairings = self.total
        if batch and not self.began:
            self.store.begin_run()
            self.began = True
        self.tried.update(batch)
        return batch

    def batches(self) -> Iterator[list[TableKey]]:
        """The league's one loop: the tables that can be played now, batch after batch, until
        none is left, or the run is interrupted or stopped.  The executor plays each batch (and
        settles every table of it) before it asks for the next; the display is told the
        league's size before the first."""
        report = self.report
        self.display.begin(report.pairings, report.done_before, len(self.pending))
        while not report.interrupted and report.stopped is None:
            batch = self.next_batch()
            if not batch:
                return
            yield batch

    def paths(self, key: TableKey) -> tuple[Path, Path]:
        """Where a table's log and its bots' stderr folder go."""
        logs = self.league.logs_dir
        return logs / f"{key.stem}{self.league.log_suffix}", logs / f"{key.stem}.stderr"

    def stop(self, why: str) -> None:
        """The disk or the database cannot take more: the run stops (what is stored stays)."""
        if self.report.stopped is None:
            self.report.stopped = why

    def settle(self, key: TableKey, started: float, finished: float, record: TableRecord | None, error: str | None,
               kind: FailureKind | None, log: Path | None, *, lost: Path | None = None) -> None:
        """Record one finished table whose log (if any) is already in place at ``log``, and tell
        the report and the display.  A result without a log is not stored as done: nobody
        could replay or verify it (``lost`` names where the log was being written).

        Raises:
          OSError, StoreError: the disk or the database cannot take it (the caller stops the run).
        """
        league, report = self.league, self.report
        if log is None and record is not None:
            record, kind = None, "log_lost"
            error = f"its log {lost or 'file'} disappeared while the match was played (was {league.logs_dir} removed?)"
        log_rel = os.path.relpath(log, league.db_path.parent) if log is not None else None
        self.store.record(Finished(key, started, finished, log_rel, record, error,
                                   counts=kind not in NOT_ATTEMPTS))
        if record is not None:
            report.played += 1
        else:
            report.failed.append((key, error or "unknown failure"))
            if kind == "bot_start":
                report.bot_start_failures += 1
        self.display.finished(key, record, error)

    def finish(self) -> None:
        """A run that played what it could and was neither interrupted nor stopped is no longer
        cut short; no table is in play any more."""
        report = self.report
        try:
            self.store.not_playing([p.key for p in self.store.in_play()])
        except StoreError:
            pass
        report.rounds = self.drawn
        if report.interrupted and report.left == 0 and not report.failed:
            report.interrupted = False  # the signal came after the last table: it cut nothing short, the league is complete
        if self.began and not report.interrupted and report.stopped is None:
            try:
                self.store.end_run()
            except StoreError as exc:
                report.stopped = str(exc)
        try:
            given_up = self.store.given_up()
        except StoreError:
            given_up = {}
        report.given_up = [(k, given_up[k]) for k in self.tables if k in given_up]


class NotingPlay:
    """A run's display that first notes each table it is told of as in play, in the database
    (:meth:`Store.playing`: ``league status`` shows it from another shell), whichever executor
    plays it; storing the table takes the note away."""

    def __init__(self, inner: Display, store: Store, run: str) -> None:
        self.inner = inner
        self.store = store
        self.run = run

    def begin(self, pairings: int, done: int, pending: int) -> None:
        self.inner.begin(pairings, done, pending)

    def started(self, key: TableKey) -> None:
        try:
            self.store.playing(key, self.run)
        except StoreError:
            pass  # only what status shows: a database that cannot take it stops the run at the table's end
        self.inner.started(key)

    def progress(self, key: TableKey, done: int, total: int) -> None:
        self.inner.progress(key, done, total)

    def finished(self, key: TableKey, record: TableRecord | None, error: str | None) -> None:
        self.inner.finished(key, record, error)


@contextmanager
def league_session(league: League, display: Display | None = None, *, retry: bool = False) -> Iterator[Session]:
    """A run of ``league``: its lock and database held, its :class:`Session` begun, and finished
    at the end of the block (``report.seconds`` set).  A database that cannot be written inside
    the block stops the run (``report.stopped``) rather than raising.

    Raises:
      LeagueError: the league's settings or a bot's command differ from the stored results, or
        another run of the league holds its database.
    """
    t0 = time.monotonic()
    with _exclusive(league), _open(league) as store:
        session = Session(league, store, display or Quiet(), retry=retry)
        try:
            yield session
        except StoreError as exc:
            session.stop(str(exc))
        session.finish()
    session.report.seconds = time.monotonic() - t0


@contextmanager
def noting_signals(stop: Stop, enabled: bool) -> Iterator[None]:
    """Outside trio (a cluster run): a stop signal is noted in ``stop`` for the loop to see."""
    if not enabled:
        yield
        return

    def note(signum: int, _frame: Any) -> None:
        stop.count += 1
        if stop.signal is None:
            stop.signal = signum

    old = {sig: signal.signal(sig, note) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def lane_cpus(lanes: int, cpus: Iterable[int] | None = None) -> list[list[int]] | None:
    """The CPUs each of ``lanes`` lanes keeps to: the CPUs this process may use (``cpus``),
    split into equal runs, one per lane, the remainder unused; ``None`` (no pinning) for one
    lane, or for more lanes than CPUs.

    A lane's match is a ping-pong between its referee and one bot at a time: kept on its own
    CPUs it is not moved between cores at every turn, and whatever a lane's bots start (threads,
    helpers) cannot take time from another lane's bots, whose clocks are running."""
    if cpus is None and not hasattr(os, "sched_getaffinity"):  # not Linux: nothing to pin with
        return None
    allowed = sorted(os.sched_getaffinity(0) if cpus is None else cpus)
    if lanes < 2 or lanes > len(allowed):
        return None
    each = len(allowed) // lanes
    return [allowed[i * each:(i + 1) * each] for i in range(lanes)]


class LocalExecutor:
    """Plays a batch of tables in child processes here (:class:`Child`), ``concurrency`` at a
    time, each lane's process kept to CPUs of its own (:func:`lane_cpus`) unless
    ``affinity=False``; with ``isolate=False``, all in this process's trio loop."""

    def __init__(self, concurrency: int = 1, *, isolate: bool = True, worker_argv: Sequence[str] = WORKER_ARGV,
                 stall: float | None = None, silence: float = SILENCE, affinity: bool = True) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.isolate = isolate
        self.worker_argv = worker_argv
        self.stall = stall
        self.silence = silence
        self.cpus = lane_cpus(concurrency) if affinity and isolate else None

    def lane_argv(self, lane: int) -> list[str]:
        """The command of lane ``lane``'s match process."""
        if self.cpus is None:
            return list(self.worker_argv)
        return [*self.worker_argv, "--cpus", ",".join(map(str, self.cpus[lane]))]

    async def play(self, session: Session, batch: list[TableKey]) -> None:
        """Play ``batch``, settling each table as it ends; a disk or database that cannot take
        more stops every lane (``session.report.stopped``)."""
        league, display = session.league, session.display
        stall = stall_limit(league) if self.stall is None else self.stall
        todo = iter(batch)
        lanes_scope = trio.CancelScope()  # cancelled when the disk or the database is full

        def halt(why: str, parts: list[Path]) -> None:
            """The disk or the database cannot take more: remove this table's files and stop
            every lane (what is stored stays)."""
            for path in parts:
                _remove(path)
            parts.clear()
            session.stop(why)
            lanes_scope.cancel()

        async def play_one(key: TableKey, child: Child | None, parts: list[Path]) -> None:
            """Play and store one table.  Its half-written files are listed in ``parts`` until
            they are renamed; whoever stops the table's process removes what is left."""
            token = f"{os.getpid()}-{secrets.token_hex(3)}"
            final_log, final_err = session.paths(key)
            part_log = final_log.with_name(f".{key.stem}.{token}.part{league.log_suffix}")
            part_err = final_log.with_name(f".{key.stem}.{token}.part.stderr")
            parts[:] = [part_log, part_err]
            job = make_job(league, key, part_log, part_err)
            started = time.time()
            display.started(key)
            reporter = partial(display.progress, key)
            if child is not None:
                record, error, kind = await child.play(job, reporter, stall, self.silence)
            else:
                record, error, kind = await play_here(job, reporter)
            finished = time.time()
            if kind == "log":
                halt(error or "the log could not be written", parts)
                return
            try:
                placed = place_outputs(part_log, final_log, part_err, final_err)
                parts.clear()
                session.settle(key, started, finished, record, error, kind, final_log if placed else None, lost=part_log)
            except OSError as exc:
                halt(f"cannot write in {league.logs_dir}: {exc.strerror or exc}", parts)
            except StoreError as exc:
                halt(str(exc), parts)

        async def lane(number: int) -> None:
            # One iterator shared by every lane; each lane keeps one child for all its tables
            # and starts a new one after a crash.  The files of a table cut short are removed
            # once its process has stopped (the next run would remove them too).
            parts: list[Path] = []
            key = next(todo, None)
            try:
                while key is not None:
                    if not self.isolate:
                        await play_one(key, None, parts)
                        key = next(todo, None)
                        continue
                    async with trio.open_nursery() as nursery:
                        child = await Child.start(nursery, self.lane_argv(number))
                        while key is not None and not child.dead:
                            await play_one(key, child, parts)
                            key = next(todo, None)
                        if not child.dead:
                            await child.close()
            finally:
                for path in parts:
                    _remove(path)

        with lanes_scope:
            async with trio.open_nursery() as lanes:
                for number in range(min(self.concurrency, len(batch))):
                    lanes.start_soon(lane, number)


async def run_league(
    league: League,
    concurrency: int = 1,
    *,
    isolate: bool = True,
    display: Display | None = None,
    handle_signals: bool = False,
    worker_argv: Sequence[str] = WORKER_ARGV,
    stall: float | None = None,
    silence: float = SILENCE,
    retry: bool = False,
    affinity: bool = True,
) -> RunReport:
    """Play every table of ``league`` that can be played, round after round, here, and store
    each result as it finishes: the one loop (:meth:`Session.batches`) driven by a
    :class:`LocalExecutor`.

    Args:
      concurrency: tables at once.
      isolate: each table in a child process (default); ``False``: all in this trio loop.
      display: told about every start, deal and finish (default: nothing is shown).
      handle_signals: stop cleanly on SIGINT/SIGTERM/SIGHUP (the tables in flight are stopped and
        lost, and the report says ``interrupted``) instead of raising ``KeyboardInterrupt``.
      worker_argv: the command of the match process (tests pass a crashing one).
      stall: seconds without a deal (or game) finished after which a match process is stopped
        (default :func:`stall_limit`).
      silence: seconds without a line (its heartbeat) after which a match process is ended.
      retry: play again the tables given up after :data:`MAX_ATTEMPTS` cut-short matches.
      affinity: keep each lane's match process, and so its bots, to CPUs of its own
        (:func:`lane_cpus`: with two lanes or more, as many as there are CPUs at most).

    A match process stopped by the watchdog, or that crashed, is a failed table; one cut short
    :data:`~tournaments.store.MAX_ATTEMPTS` times in a row is given up (``report.given_up``), and
    left alone by later runs unless ``retry``.  A log or database that cannot be written (a full
    disk) stops the run (``report.stopped`` says why); every table stored before is kept.

    Raises:
      LeagueError: the league's settings or a bot's command differ from the stored results, or
        another run of the league holds its database.
    """
    executor = LocalExecutor(concurrency, isolate=isolate, worker_argv=worker_argv, stall=stall, silence=silence, affinity=affinity)
    with league_session(league, display, retry=retry) as session:

        def interrupted(_stop: Stop) -> None:
            session.report.interrupted = True

        # The referee's one signal policy: the first signal cancels the lanes, and later ones
        # cannot cut their cleanup short.
        async with cancel_on_signals(interrupted, enabled=handle_signals):
            for batch in session.batches():
                await executor.play(session, batch)
    return session.report


#: In a log folder: the database of the league it belongs to, relative to the folder.
OWNER = ".league"


def _claim_logs(league: League) -> None:
    """Make the log folder this league's, or refuse one that belongs to another league: two
    leagues in one folder would overwrite each other's logs and delete each other's matches in
    play.  (A folder whose league database is gone is taken over.)"""
    logs = league.logs_dir
    mine = league.db_path.resolve()
    marker = logs / OWNER
    try:
        logs.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            owner = (logs / marker.read_text(encoding="utf-8", errors="replace").strip()).resolve()
            if owner == mine or not owner.exists():
                if owner != mine:
                    marker.write_text(os.path.relpath(mine, logs.resolve()) + "\n", encoding="utf-8")
                return
            raise LeagueError(f"{league.path}: the log folder {logs} belongs to the league of {owner}; give this league "
                              f"its own folder (`logs` in the league file, or another --db)") from None
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(os.path.relpath(mine, logs.resolve()) + "\n")
    except OSError as exc:
        raise LeagueError(f"{league.path}: cannot use the log folder {logs}: {exc.strerror or exc}") from None
