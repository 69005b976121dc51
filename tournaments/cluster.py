"""Leagues on a Dask cluster: ``referee league run FILE --cluster ADDRESS``.

The coordinator (this module, in the ``referee`` process) keeps everything that makes a local
league safe: it alone holds the league's lock and writes its SQLite database, one transaction
per finished match, and a match's log is renamed into the league's log folder just before its
row is committed.  The cluster only plays matches.

**One match, one task.**  Each pending pairing is one task (:func:`play_match`).  On a Dask
worker the task runs the same match process a local lane runs (``python -m tournaments.worker``)
with the log and the bots' stderr in a private temporary folder, and returns the result together
with the log's bytes and the stderr files; the coordinator writes them beside its database.  A
match therefore needs no shared filesystem for its output, only for the bots' commands.

**Exactly once.**  A task's result reaches the coordinator through its future, which resolves
once; the coordinator records a pairing only from that result.  When a worker dies in the middle
of a match, the scheduler runs the task again on another worker (the dead worker's match process
sees its input close and stops its bots); the first run left nothing behind, so the pairing is
still recorded once.  A task that kills :data:`ALLOWED_FAILURES` workers is recorded as failed.
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

import json
import os
import selectors
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from referee.results import MatchRecord
from tournaments.config import League, LeagueError
from tournaments.runner import (
    TERM_GRACE,
    WORKER_ARGV,
    Display,
    Quiet,
    RunReport,
    _exclusive,
    _open,
    _remove,
    _stem,
    make_job,
    prepare,
    settle,
    stall_limit,
)
from tournaments.store import StoreError

INSTALL = "pip install 'referee[cluster]'"

#: How often the coordinator wakes to drain progress and check for signals (seconds).
TICK = 0.2

#: Workers a task may take down with it before its pairing is recorded as failed (Dask's
#: ``distributed.scheduler.allowed-failures``, set for the local cluster; a remote scheduler
#: keeps its own setting).
ALLOWED_FAILURES = 3


class ClusterError(LeagueError):
    """The cluster cannot be used: Dask missing, a bad address, no workers, a bot that cannot
    start on a worker.  One line, like every :class:`LeagueError`."""


class BotUnavailable(ClusterError):
    """A bot of the league cannot be started on some worker (exit code 3, like a local run)."""


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"--cluster needs Dask's distributed scheduler, which is not installed: {INSTALL}") from None
    return distributed


@dataclass(frozen=True)
class Address:
    """Where the matches run: ``local`` workers started here, or a scheduler to connect to."""

    local: int | None = None
    scheduler: str | None = None

    def __str__(self) -> str:
        return f"local:{self.local}" if self.local is not None else str(self.scheduler)


def parse_address(text: str) -> Address:
    """``local:N`` or a scheduler address (``tcp://host:port``, ``host:port``…).

    Raises:
        ClusterError: an address that is neither.
    """
    text = text.strip()
    if text.startswith("local:") or text == "local":
        n = text.partition(":")[2]
        if not n.isdigit() or not 1 <= int(n) <= 256:
            raise ClusterError(f"--cluster {text!r}: local needs a number of workers from 1 to 256, e.g. local:2")
        return Address(local=int(n))
    if not text or any(c.isspace() for c in text) or "\0" in text:
        raise ClusterError(f"--cluster {text!r}: expected local:N or a scheduler address such as tcp://host:8786")
    return Address(scheduler=text)


@contextmanager
def connect(address: Address, *, timeout: float = 30.0) -> Iterator[Any]:
    """A ``distributed.Client`` for ``address``; a local cluster lives as long as the block.

    Raises:
        ClusterError: Dask is missing, or the scheduler cannot be reached within ``timeout``.
    """
    distributed = _distributed()
    import logging

    import dask

    for name in ("distributed", "distributed.nanny", "distributed.scheduler", "distributed.worker", "distributed.core"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES - 1,
                          "distributed.worker.daemon": False,
                          "distributed.worker.profile.enabled": False}):
        if address.local is not None:
            cluster = distributed.LocalCluster(
                n_workers=address.local, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL,
            )
            try:
                with distributed.Client(cluster, timeout=timeout) as client:
                    yield client
            finally:
                cluster.close(timeout=TERM_GRACE)
        else:
            try:
                client = distributed.Client(address.scheduler, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(f"--cluster {address}: cannot reach the scheduler: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
            with client:
                yield client


def workers(client: Any) -> list[str]:
    """The addresses of the workers connected now."""
    return sorted(client.scheduler_info(n_workers=-1)["workers"])


# -- on a worker ----------------------------------------------------------------------------------


class _MatchProcess:
    """A ``tournaments.worker`` child, read line by line with a stall limit.  Its stderr goes to
    an unnamed temporary file, so a long-lived child can never block on a full pipe."""

    def __init__(self, argv: list[str]) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=_match_env())
        self.sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = bytearray()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, job: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job).encode() + b"\n")
        self.proc.stdin.flush()

    def line(self, stall: float) -> bytes | None:
        """The next line; ``None`` at the end of output.  Raises TimeoutError after ``stall``
        seconds without one."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + stall
        while (i := self.buf.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                raise TimeoutError
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buf.extend(chunk)
        line = bytes(self.buf[:i])
        del self.buf[: i + 1]
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
        self.sel.close()
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


def play_match(job: dict[str, Any], stall: float, progress_queue: str | None = None) -> dict[str, Any]:
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
    pair = [b["name"] for b in job["bots"]]
    with tempfile.TemporaryDirectory(prefix="referee-match-") as tmp:
        log = Path(tmp) / "match.jsonl"
        stderr_dir = Path(tmp) / "stderr"
        job = dict(job, log=str(log), stderr_dir=str(stderr_dir))
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
                    msg = json.loads(line)
                    k = msg.get("k")
                except (ValueError, AttributeError):
                    continue
                if k == "progress" and queue is not None:
                    queue.put([pair, msg["done"], msg["total"]])
                elif k == "result":
                    try:
                        record = msgspec.json.decode(line, type=MatchRecord)
                    except msgspec.ValidationError as exc:
                        error = f"the match process sent a result that does not fit: {exc}"
                    break
                elif k == "error":
                    error, kind = str(msg.get("message")), msg.get("kind")
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
    from referee.process import describe_exit

    try:
        code = child.proc.wait(TERM_GRACE)
    except subprocess.TimeoutExpired:
        return "stopped writing"
    return describe_exit(code)


def probe_bots(job: dict[str, Any]) -> list[str]:
    """Run on every worker: start each bot of ``job`` and shake hands with it.  Returns one
    line per bot that could not be started here (empty when all answered ``hello``)."""
    with tempfile.TemporaryDirectory(prefix="referee-probe-") as tmp:
        job = dict(job, log=str(Path(tmp) / "probe.jsonl"), stderr_dir=str(Path(tmp) / "stderr"))
        child = _MatchProcess([*WORKER_ARGV, "--probe"])
        problems: list[str] = []
        try:
            child.send(job)
            limit = 30.0 + 2 * job["tc"]["startup"]
            try:
                while (line := child.line(limit)) is not None:
                    msg = json.loads(line)
                    if msg.get("k") == "probed":
                        problems = list(msg.get("failures", []))
                        break
                else:
                    problems = [f"the probe process {_exit_words(child)}"]
            except TimeoutError:
                child.proc.kill()
                problems = ["the bots did not all answer hello in time"]
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
    job = make_job(league, [b.name for b in league.bots], Path("probe.jsonl"), Path("stderr"))
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
    """Play every pending pairing of ``league`` on a Dask cluster; store each result as it
    comes back (see the module docstring).

    Args:
      display: told about every start, deal and finish, as in a local run.
      handle_signals: SIGINT, SIGTERM and SIGHUP stop the run cleanly (matches in flight are
        cancelled and lost; the report says ``interrupted``).
      stall: seconds without progress after which a match is stopped (default :func:`stall_limit`).
      on_workers: called with the number of connected workers whenever it changes.
      retry: play again the pairings given up after too many failed attempts.

    As in a local run, a log or database that cannot be written (a full disk) stops the run
    (``report.stopped`` says why) and every match stored before is kept.

    Raises:
      LeagueError: as :func:`tournaments.runner.run_league`; ClusterError for the cluster.
    """
    distributed = _distributed()
    display = display or Quiet()
    stall = stall_limit(league) if stall is None else stall
    t0 = time.monotonic()
    stop = {"signal": False}
    old_handlers: dict[signal.Signals, Any] = {}
    if handle_signals:
        def on_signal(_signum, _frame) -> None:
            stop["signal"] = True

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            old_handlers[sig] = signal.signal(sig, on_signal)
    try:
        with _exclusive(league), _open(league) as store:
            report, pending = prepare(league, store, retry=retry)
            with connect(address, timeout=connect_timeout) as client:
                if address.local is None:
                    try:
                        client.wait_for_workers(1, timeout=connect_timeout)
                    except (TimeoutError, OSError):
                        raise ClusterError(f"--cluster {address}: the scheduler has no workers") from None
                seen = len(workers(client))
                if on_workers is not None:
                    on_workers(seen)
                if pending:
                    check_bots_everywhere(client, league)
                display.begin(report.pairings, report.done_before, len(pending))
                queue_name = f"referee-progress-{uuid.uuid4().hex}"
                queue = distributed.Queue(queue_name, client=client)
                futures = {}
                for pair in pending:
                    job = make_job(league, pair, Path("match.jsonl"), Path("stderr"))
                    fut = client.submit(play_match, job, stall, queue_name, key=f"match-{_stem(pair)}-{uuid.uuid4().hex[:8]}",
                                        pure=False)
                    futures[fut] = (pair, time.time())
                started: set[tuple[str, str]] = set()
                waiting = set(futures)
                while waiting and not stop["signal"] and report.stopped is None:
                    try:
                        finished_now, waiting = distributed.wait(waiting, timeout=TICK, return_when="FIRST_COMPLETED")
                    except TimeoutError:
                        finished_now = set()
                    _drain(queue, display, started)
                    n = len(workers(client))
                    if n != seen and on_workers is not None:
                        on_workers(n)
                    seen = n
                    for fut in finished_now:
                        pair, submitted = futures[fut]
                        if pair not in started:
                            display.started(pair)
                            started.add(pair)
                        _store(league, store, report, display, pair, fut, submitted)
                if stop["signal"]:
                    report.interrupted = True
                if waiting:
                    client.cancel(list(waiting))
                elif pending and report.stopped is None:
                    try:
                        store.end_run()
                    except StoreError as exc:
                        report.stopped = str(exc)
                try:
                    queue.close()
                except Exception:  # noqa: BLE001 — the queue's scheduler may already be gone
                    pass
    finally:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
    report.seconds = time.monotonic() - t0
    return report


def _drain(queue: Any, display: Display, started: set[tuple[str, str]]) -> None:
    try:
        items = queue.get(batch=True)
    except Exception:  # noqa: BLE001 — progress is best effort; results never depend on it
        return
    for pair_list, done, total in items:
        pair = (pair_list[0], pair_list[1])
        if pair not in started:
            display.started(pair)
            started.add(pair)
        display.progress(pair, done, total)


def _store(league: League, store: Any, report: RunReport, display: Display, pair: tuple[str, str], fut: Any,
           submitted: float) -> None:
    """Write a finished task's log and stderr beside the database, then record the match; a
    disk or database that cannot take it stops the run (``report.stopped``)."""
    logs = league.logs_dir
    try:
        out = fut.result()
    except Exception as exc:  # noqa: BLE001 — KilledWorker, a task that raised: the pairing failed
        out = {"record": None, "kind": None, "log": None, "stderr": {},
               "error": f"the cluster could not play the match: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
    if out.get("kind") == "log":  # the worker's disk is full: every match after this one would fail too
        report.stopped = report.stopped or f"{out['error']} (on worker {out.get('worker', '?')})"
        return
    parts: list[Path] = []
    try:
        log = None
        if out["log"] is not None:
            log = logs / f"{_stem(pair)}.jsonl"
            part = logs / f".{_stem(pair)}.{os.getpid()}.part.jsonl"
            parts.append(part)
            part.write_bytes(out["log"])
            os.replace(part, log)
        if out["stderr"]:
            final_err = logs / f"{_stem(pair)}.stderr"
            part_err = logs / f".{_stem(pair)}.{os.getpid()}.part.stderr"
            parts.append(part_err)
            part_err.mkdir()
            for name, data in out["stderr"].items():
                (part_err / Path(name).name).write_bytes(data)
            _remove(final_err)
            os.replace(part_err, final_err)
        parts.clear()
        settle(league, store, report, display, pair, out.get("started", submitted), out.get("finished", time.time()),
               out["record"], out["error"], out.get("kind"), log)
    except OSError as exc:
        report.stopped = report.stopped or f"cannot write in {logs}: {exc.strerror or exc}"
    except StoreError as exc:
        report.stopped = report.stopped or str(exc)
    finally:
        for path in parts:
            _remove(path)
