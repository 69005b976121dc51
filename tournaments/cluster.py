"""Leagues on a Dask cluster: ``referee league run FILE --cluster ADDRESS``.

The coordinator (this module, in the ``referee`` process) keeps everything that makes a local
league safe: it alone holds the league's lock and writes its SQLite database, one transaction
per finished match, and a match's log is renamed into the league's log folder just before its
row is committed.  The cluster only plays matches.

**One table, one task.**  The league's one loop (:meth:`tournaments.runner.Session.batches`)
hands the cluster's executor (:class:`ClusterExecutor`) the tables that can be played now (every table
of a round robin, one round of a Swiss or knockout league); each is one task (:func:`play_match`).  On a Dask
worker the task runs the same match process a local lane runs (``python -m tournaments.worker``)
with the log and the bots' stderr in a private temporary folder, and returns the result together
with the log's bytes and the stderr files; the coordinator writes them beside its database.  A
match therefore needs no shared filesystem for its output, only for the bots' commands.

**Exactly once.**  A task's result reaches the coordinator through its future, which resolves
once; the coordinator records a table only from that result.  When a worker dies in the middle
of a match, the scheduler runs the task again on another worker (the dead worker's match process
sees its input close and stops its bots); the first run left nothing behind, so the table is
still recorded once.  A task whose workers died :data:`ALLOWED_FAILURES` times is recorded as
failed, but not as an attempt of the table: a worker's death is the machine's doing (a bot runs
in the sandbox and cannot reach its worker), so the table is played again by the next run and
never given up for it.
If the coordinator itself dies, its futures die with its client: nothing was recorded for the
matches in flight, and the next ``run`` submits them again (a task still running on a remote
worker finishes for nobody; its result is dropped).

**Bots on every worker.**  Bot commands and working directories are resolved on the workers, so
they must exist at the same paths there (a shared filesystem, or the same checkout).  Before any
match is scheduled, every worker starts every bot and shakes hands with it (:func:`probe_bots`);
a bot that cannot start on some worker stops the run with one line naming both.

**Addresses.**  ``tcp://host:8786`` (any address ``distributed.Client`` takes) connects to a
running scheduler; ``local:N`` starts a cluster of N worker processes on this machine, bound to
loopback, for the length of the run.

Dask is optional (``pip install 'referee[cluster]'``); without it ``--cluster`` is a one-line
error naming that command.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import msgspec

from referee.base.cluster import ALLOWED_FAILURES, Address, ClusterUnavailable, distributed_module, workers
from referee.base.cluster import connect as _connect
from referee.base.cluster import parse_address as _parse_address
from referee.base.signals import Stop
from referee.bots.reader import LineReader
from referee.matches.job import MatchJob
from referee.records.records import is_gzip_name
from tournaments import wire
from tournaments.config import League, LeagueError
from tournaments.runner import (
    TERM_GRACE,
    WORKER_ARGV,
    Display,
    RunReport,
    Session,
    _remove,
    ended,
    league_session,
    make_job,
    noting_signals,
    stall_limit,
)
from tournaments.schedule import TableKey
from tournaments.store import StoreError
from tournaments.wire import FailureKind

#: How often the coordinator wakes to drain progress and check for signals (seconds).
TICK = 0.2


class ClusterError(LeagueError):
    """The cluster cannot be used: Dask missing, a bad address, no workers, a bot that cannot
    start on a worker.  One line, like every :class:`LeagueError`."""


class BotUnavailable(ClusterError):
    """A bot of the league cannot be started on some worker (exit code 3, like a local run)."""


def _distributed():
    try:
        return distributed_module()
    except ClusterUnavailable as exc:
        raise ClusterError(str(exc)) from None


def parse_address(text: str) -> Address:
    """:func:`referee.base.cluster.parse_address`, its error a league's.

    Raises:
        ClusterError: an address that is neither ``local:N`` nor a scheduler's.
    """
    try:
        return _parse_address(text)
    except ClusterUnavailable as exc:
        raise ClusterError(str(exc)) from None


@contextmanager
def connect(address: Address, *, timeout: float = 30.0) -> Iterator[Any]:
    """:func:`referee.base.cluster.connect` for a league (its local cluster given the league's grace
    to close), its error a league's.

    Raises:
        ClusterError: Dask is missing, or the scheduler cannot be reached within ``timeout``.
    """
    with ExitStack() as stack:
        try:
            client = stack.enter_context(_connect(address, timeout=timeout, close_timeout=TERM_GRACE))
        except ClusterUnavailable as exc:
            raise ClusterError(str(exc)) from None
        yield client


# -- on a worker ----------------------------------------------------------------------------------


class _MatchProcess:
    """A ``tournaments.worker`` child, read line by line with a stall limit.  Its stderr goes to
    an unnamed temporary file, so a long-lived child can never block on a full pipe."""

    def __init__(self, argv: list[str]) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=_match_env())
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.lines = LineReader(self.proc.stdout.fileno())  # the file object closes it, in stop()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, job: MatchJob) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(msgspec.json.encode(job) + b"\n")
        self.proc.stdin.flush()

    def line(self, stall: float) -> bytes | None:
        """The next line; ``None`` at the end of output.  Raises TimeoutError after ``stall``
        seconds without one."""
        line = self.lines.line_within(stall)
        if line is None and not self.lines.eof:
            raise TimeoutError
        return line

    def stop(self) -> str:
        """End the process (end of input, then SIGTERM, then SIGKILL) and return the last line of
        its stderr."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(TERM_GRACE)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(TERM_GRACE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.lines.fd = -1  # closed with the file object, next
        self.proc.stdout.close()
        self.stderr.seek(max(0, self.stderr.seek(0, os.SEEK_END) - 4096))
        tail = self.stderr.read().decode("utf-8", "replace")
        self.stderr.close()
        last = [ln.strip() for ln in tail.splitlines() if ln.strip()]
        return last[-1] if last else ""


#: Each worker thread keeps its match process for the next task, as a local lane does: starting
#: Python and importing the referee costs about as much as a short match.
_lane = threading.local()


def _lane_process() -> _MatchProcess:
    child = getattr(_lane, "child", None)
    if child is None or not child.alive():
        child = _lane.child = _MatchProcess(list(WORKER_ARGV))
    return child


#: What a Dask nanny adds to its worker's environment for numeric libraries
#: (``distributed.nanny.pre-spawn-environ``) and its own bookkeeping.  They are settings for the
#: worker, not for the referee or the bots, which get the environment the worker was started with.
_NANNY_ENV = ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED",
              "__DASK_PARENT_PID")


def _match_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _NANNY_ENV}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()} if folder.is_dir() else {}


def play_match(job: MatchJob, stall: float, progress_queue: str | None = None, table: list[Any] | None = None) -> dict[str, Any]:
    """The task: play ``job`` on this worker and return what the coordinator stores.

    Returns ``{"record", "error", "kind", "log", "stderr", "worker", "started", "finished"}``:
    the worker's record (or ``None`` and why), the log's bytes (``None`` if none was written),
    the bots' stderr files by name, this worker's address, and when the match started and
    finished on the worker (Unix time).
    """
    queue = None
    worker_address = "?"
    try:
        import distributed

        worker_address = distributed.get_worker().address
        if progress_queue is not None:
            queue = distributed.Queue(progress_queue)
    except (ImportError, ValueError):
        pass
    with tempfile.TemporaryDirectory(prefix="referee-match-") as tmp:
        log = Path(tmp) / ("match.jsonl.gz" if is_gzip_name(job.log) else "match.jsonl")  # compressed if the league's are
        stderr_dir = Path(tmp) / "stderr"
        job = msgspec.structs.replace(job, log=str(log), stderr_dir=str(stderr_dir))
        started = time.time()
        child = _lane_process()
        record = error = kind = None
        last = ""
        keep = False
        try:
            try:
                child.send(job)
            except OSError:
                line_source_gone = True
            else:
                line_source_gone = False
            while not line_source_gone:
                try:
                    line = child.line(stall)
                except TimeoutError:
                    error = f"the match made no progress for {stall:g} s and was stopped (on worker {worker_address})"
                    child.proc.kill()
                    break
                if line is None:
                    error = f"the match process {_exit_words(child)}"
                    break
                try:
                    msg = wire.decode(line)
                except wire.BadLine as exc:
                    error = f"{exc} (on worker {worker_address})"
                    break
                if isinstance(msg, wire.Progress):
                    if queue is not None:
                        queue.put([table, msg.done, msg.total])
                elif isinstance(msg, wire.Result):
                    record = msg.record()
                    break
                elif isinstance(msg, wire.Failed):
                    error, kind = msg.message, msg.kind
                    break
            if line_source_gone:
                error = f"the match process {_exit_words(child)}"
            # A result or an error the child reported: it is between jobs and serves the next.
            keep = record is not None or kind is not None
        finally:
            if not keep:  # crashed, stalled, or interrupted: never reused
                _lane.child = None
                last = child.stop()
        if record is None and error is not None and error.startswith("the match process") and last:
            error += f": {last}"
        return {
            "record": record, "error": error, "kind": kind, "worker": worker_address,
            "started": started, "finished": time.time(),
            "log": log.read_bytes() if log.exists() else None, "stderr": _files(stderr_dir),
        }


def _exit_words(child: _MatchProcess) -> str:
    try:
        code = child.proc.wait(TERM_GRACE)
    except subprocess.TimeoutExpired:
        return "stopped writing"
    return ended(code)


def probe_bots(job: MatchJob) -> list[str]:
    """Run on every worker: start each bot of ``job`` and shake hands with it.  Returns one
    line per bot that could not be started here (empty when all answered ``hello``)."""
    with tempfile.TemporaryDirectory(prefix="referee-probe-") as tmp:
        job = msgspec.structs.replace(job, log=str(Path(tmp) / "probe.jsonl"), stderr_dir=str(Path(tmp) / "stderr"))
        child = _MatchProcess([*WORKER_ARGV, "--probe"])
        problems: list[str] = []
        try:
            child.send(job)
            limit = 30.0 + 2 * job.tc.startup
            try:
                while (line := child.line(limit)) is not None:
                    msg = wire.decode(line)
                    if isinstance(msg, wire.Probed):
                        problems = msg.failures
                        break
                else:
                    problems = [f"the probe process {_exit_words(child)}"]
            except TimeoutError:
                child.proc.kill()
                problems = ["the bots did not all answer hello in time"]
            except wire.BadLine as exc:
                child.proc.kill()
                problems = [str(exc)]
        finally:
            last = child.stop()
        if problems and problems[0].startswith("the probe process") and last:
            problems[0] += f": {last}"
        return problems


# -- the coordinator ------------------------------------------------------------------------------


def check_bots_everywhere(client: Any, league: League) -> None:
    """Every bot of the league starts and answers ``hello`` on every connected worker.

    Raises:
        BotUnavailable: naming the first worker and bot that failed.
    """
    # the probe deals nothing: any seed does (a league whose secret seed is not drawn yet has none)
    job = make_job(dataclasses.replace(league, seed=league.seed or 0), [b.name for b in league.bots], Path("probe.jsonl"), Path("stderr"))
    for attempt in (1, 2):
        try:
            answers = client.run(probe_bots, job)
            break
        except Exception as exc:  # noqa: BLE001 — a worker lost during the check: once more with those left
            if attempt == 2:
                raise ClusterError(f"could not check the bots on every worker: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    for address in sorted(answers):
        problems = answers[address]
        if problems:
            raise BotUnavailable(f"on worker {address}: {problems[0].splitlines()[0]}")


class ClusterExecutor:
    """Plays a league's tables on a Dask cluster: each table one task (:func:`play_match`); the
    results are stored here as they come back."""

    def __init__(self, address: Address, *, stall: float | None = None, on_workers=None, connect_timeout: float = 30.0) -> None:
        self.address = address
        self.stall = stall
        self.on_workers = on_workers
        self.connect_timeout = connect_timeout
        self.client: Any = None
        self.queue: Any = None
        self.queue_name = ""
        self.seen = 0

    @contextmanager
    def running(self, session: Session) -> Iterator[None]:
        """Connect (or start a local cluster), check every bot on every worker when there is
        anything to play, and open the progress queue for the run."""
        distributed = _distributed()
        address = self.address
        with connect(address, timeout=self.connect_timeout) as client:
            if address.local is None:
                try:
                    client.wait_for_workers(1, timeout=self.connect_timeout)
                except (TimeoutError, OSError):
                    raise ClusterError(f"--cluster {address}: the scheduler has no workers") from None
            self.client = client
            self.seen = len(workers(client))
            if self.on_workers is not None:
                self.on_workers(self.seen)
            if session.pending:
                check_bots_everywhere(client, session.league)
            self.queue_name = f"referee-progress-{uuid.uuid4().hex}"
            self.queue = distributed.Queue(self.queue_name, client=client)
            try:
                yield
            finally:
                try:
                    self.queue.close()
                except Exception:  # noqa: BLE001 — the queue's scheduler may already be gone
                    pass

    def play(self, session: Session, batch: list[TableKey], stop: Stop) -> None:
        """Play ``batch``, settling each table as it comes back; return when all are over, the
        run is stopped (``session.report.stopped``) or a signal came (``stop.signal``: the tasks
        still out are cancelled)."""
        distributed = _distributed()
        client, league, report = self.client, session.league, session.report
        stall = stall_limit(league) if self.stall is None else self.stall
        futures = {}
        for key in batch:
            job = make_job(league, key, Path(f"match{league.log_suffix}"), Path("stderr"))
            fut = client.submit(play_match, job, stall, self.queue_name, [key.round, list(key.bots), key.leg],
                                key=f"match-{key.stem}-{uuid.uuid4().hex[:8]}", pure=False)
            futures[fut] = (key, time.time())
        started: set[TableKey] = set()
        waiting = set(futures)
        while waiting and stop.signal is None and report.stopped is None:
            try:
                finished_now, waiting = distributed.wait(waiting, timeout=TICK, return_when="FIRST_COMPLETED")
            except TimeoutError:
                finished_now = set()
            _drain(self.queue, session.display, started)
            n = len(workers(client))
            if n != self.seen and self.on_workers is not None:
                self.on_workers(n)
            self.seen = n
            for fut in finished_now:
                key, submitted = futures[fut]
                if key not in started:
                    session.display.started(key)
                    started.add(key)
                _store(session, key, fut, submitted)
        if waiting:
            client.cancel(list(waiting))


def run_league_on_cluster(
    league: League,
    address: Address,
    *,
    display: Display | None = None,
    handle_signals: bool = False,
    stall: float | None = None,
    on_workers=None,
    connect_timeout: float = 30.0,
    retry: bool = False,
) -> RunReport:
    """Play every table of ``league`` that can be played, round after round, on a Dask cluster;
    store each result as it comes back (see the module docstring): the one loop
    (:meth:`tournaments.runner.Session.batches`) driven by a :class:`ClusterExecutor`.

    Args:
      display: told about every start, deal and finish, as in a local run.
      handle_signals: SIGINT, SIGTERM and SIGHUP stop the run cleanly (tables in flight are
        cancelled and lost; the report says ``interrupted``).
      stall: seconds without progress after which a match is stopped (default :func:`stall_limit`).
      on_workers: called with the number of connected workers whenever it changes.
      retry: play again the tables given up after too many failed attempts.

    As in a local run, a log or database that cannot be written (a full disk) stops the run
    (``report.stopped`` says why) and every table stored before is kept.

    Raises:
      LeagueError: as :func:`tournaments.runner.run_league`; ClusterError for the cluster.
    """
    _distributed()
    executor = ClusterExecutor(address, stall=stall, on_workers=on_workers, connect_timeout=connect_timeout)
    stop = Stop()
    with noting_signals(stop, handle_signals), league_session(league, display, retry=retry) as session:
        with executor.running(session):
            for batch in session.batches():
                executor.play(session, batch, stop)
                if stop.signal is not None:
                    session.report.interrupted = True
    return session.report


def _drain(queue: Any, display: Display, started: set[TableKey]) -> None:
    try:
        items = queue.get(batch=True)
    except Exception:  # noqa: BLE001 — progress is best effort; results never depend on it
        return
    for table, done, total in items:
        key = TableKey(table[0], tuple(table[1]), table[2])
        if key not in started:
            display.started(key)
            started.add(key)
        display.progress(key, done, total)


def _store(session: Session, key: TableKey, fut: Any, submitted: float) -> None:
    """Write a finished task's log and stderr beside the database, then record the table; a
    disk or database that cannot take it stops the run (``report.stopped``)."""
    try:
        out = fut.result()
    except Exception as exc:  # noqa: BLE001 — KilledWorker, a task that raised: the table failed
        out = task_failure(exc)
    if out.get("kind") == "log":  # the worker's disk is full: every table after this one would fail too
        session.stop(f"{out['error']} (on worker {out.get('worker', '?')})")
        return
    final_log, final_err = session.paths(key)
    parts: list[Path] = []
    try:
        log = None
        if out["log"] is not None:
            log = final_log
            part = final_log.with_name(f".{key.stem}.{os.getpid()}.part{session.league.log_suffix}")
            parts.append(part)
            part.write_bytes(out["log"])
            os.replace(part, log)
        if out["stderr"]:
            part_err = final_log.with_name(f".{key.stem}.{os.getpid()}.part.stderr")
            parts.append(part_err)
            part_err.mkdir()
            for name, data in out["stderr"].items():
                (part_err / Path(name).name).write_bytes(data)
            _remove(final_err)
            os.replace(part_err, final_err)
        parts.clear()
        session.settle(key, out.get("started", submitted), out.get("finished", time.time()), out["record"], out["error"],
                       out.get("kind"), log)
    except OSError as exc:
        session.stop(f"cannot write in {session.league.logs_dir}: {exc.strerror or exc}")
    except StoreError as exc:
        session.stop(str(exc))
    finally:
        for path in parts:
            _remove(path)


def task_failure(exc: BaseException) -> dict[str, Any]:
    """What a task that raised instead of returning a result stores: a failure; one whose
    workers died (``KilledWorker``) is not counted as an attempt of its table (kind
    ``worker_lost``)."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    try:
        from distributed import KilledWorker
    except ImportError:  # pragma: no cover - the cluster needs distributed
        KilledWorker = ()  # type: ignore[assignment,misc]  # noqa: N806
    if isinstance(exc, KilledWorker):
        lost: FailureKind = "worker_lost"
        return {"record": None, "kind": lost, "log": None, "stderr": {},
                "error": (f"the Dask workers playing it died {ALLOWED_FAILURES} times ({type(exc).__name__}); a worker's death "
                          f"is not counted as an attempt of the table, which the next run plays again")}
    return {"record": None, "kind": None, "log": None, "stderr": {},
            "error": f"the cluster could not play the match: {type(exc).__name__}: {text}"}
