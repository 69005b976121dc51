"""Reaching a Dask cluster: the address a user gives (``local:N`` or a scheduler's) and the
client for it, shared by every command that plays on a cluster (a league's ``--cluster``, a
match's: :mod:`referee.matches.cluster`).

``tcp://host:8786`` (any address ``distributed.Client`` takes) connects to a running scheduler;
``local:N`` starts a cluster of N worker processes on this machine, bound to loopback, for as
long as the client is held.  Dask is optional (``pip install 'referee[cluster]'``); without it
:func:`connect` is a one-line :class:`ClusterUnavailable` naming that command.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from referee.base.errors import RefereeError

INSTALL = "pip install 'referee[cluster]'"

#: Workers a task may take down with it before the scheduler gives it up (Dask's
#: ``distributed.scheduler.allowed-failures``, set for the local cluster; a remote scheduler
#: keeps its own setting).
ALLOWED_FAILURES = 3


#: Starts of a local cluster tried before giving up (:func:`_start_local`).
LOCAL_STARTS = 2

#: A local cluster's workers run this first (a Dask preload given as its text).
IGNORE_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"


class ClusterUnavailable(RefereeError):
    """The cluster cannot be used: Dask missing, a bad address, a scheduler out of reach.  One line."""


def distributed_module() -> Any:
    """Dask's ``distributed``, or a one-line :class:`ClusterUnavailable` naming how to install it."""
    try:
        import distributed
    except ImportError:
        raise ClusterUnavailable(f"--cluster needs Dask's distributed scheduler, which is not installed: {INSTALL}") from None
    return distributed


@dataclass(frozen=True)
class Address:
    """Where the work runs: ``local`` workers started here, or a scheduler to connect to."""

    local: int | None = None
    scheduler: str | None = None

    def __str__(self) -> str:
        return f"local:{self.local}" if self.local is not None else str(self.scheduler)


def parse_address(text: str) -> Address:
    """``local:N`` or a scheduler address (``tcp://host:port``, ``host:port``…).

    Raises:
        ClusterUnavailable: an address that is neither.
    """
    text = text.strip()
    if text.startswith("local:") or text == "local":
        n = text.partition(":")[2]
        if not n.isdigit() or not 1 <= int(n) <= 256:
            raise ClusterUnavailable(f"--cluster {text!r}: local needs a number of workers from 1 to 256, e.g. local:2")
        return Address(local=int(n))
    if not text or any(c.isspace() for c in text) or "\0" in text:
        raise ClusterUnavailable(f"--cluster {text!r}: expected local:N or a scheduler address such as tcp://host:8786")
    return Address(scheduler=text)


@contextmanager
def connect(address: Address, *, timeout: float = 30.0, close_timeout: float = 5.0) -> Iterator[Any]:
    """A ``distributed.Client`` for ``address``; a local cluster lives as long as the block and
    is given ``close_timeout`` seconds to close.

    Raises:
        ClusterUnavailable: Dask is missing, or the scheduler cannot be reached within ``timeout``.
    """
    distributed = distributed_module()
    import logging

    import dask

    for name in ("distributed", "distributed.nanny", "distributed.scheduler", "distributed.worker", "distributed.core"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    settings: dict[str, Any] = {"distributed.scheduler.allowed-failures": ALLOWED_FAILURES - 1,
                                "distributed.worker.daemon": False,
                                "distributed.worker.profile.enabled": False}
    if address.local is not None:
        # Ctrl-C at the terminal reaches the whole process group: the coordinator stops the run
        # and closes the cluster; a worker must not die of it first (with a traceback).
        settings["distributed.worker.preload"] = [IGNORE_SIGINT]
    with dask.config.set(settings):
        if address.local is not None:
            _quiet_resource_tracker()
            cluster = _start_local(distributed, address)
            try:
                with distributed.Client(cluster, timeout=timeout) as client:
                    yield client
            finally:
                cluster.close(timeout=close_timeout)
        else:
            try:
                client = distributed.Client(address.scheduler, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ClusterUnavailable(f"--cluster {address}: cannot reach the scheduler: {why}") from None
            with client:
                yield client


def _start_local(distributed: Any, address: Address) -> Any:
    """A ``LocalCluster`` of ``address.local`` worker processes, started again once if a start
    fails (a worker killed while it starts: the OOM killer, a stray signal fails only that start).

    Raises:
        ClusterUnavailable: every start failed; one line, with Dask's reason.
    """
    import logging

    why = ""
    for _ in range(LOCAL_STARTS):
        try:
            return distributed.LocalCluster(
                n_workers=address.local, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL,
            )
        except Exception as exc:  # Dask's RuntimeError("Nanny failed to start."), a timeout, an OSError…
            why = _reason(exc)
    raise ClusterUnavailable(f"--cluster {address}: the local cluster failed to start, {LOCAL_STARTS} times out of "
                             f"{LOCAL_STARTS} ({why}): a worker process ended as it started; see that the machine has "
                             "the memory and processes for them")


def _reason(exc: BaseException) -> str:
    """Dask's reason in a few words: the exception's first line, and its cause's when it differs."""
    words: list[str] = []
    at: BaseException | None = exc
    while at is not None and len(words) < 2:
        text = (str(at).splitlines() or [type(at).__name__])[0].rstrip(".")
        if text not in words:
            words.append(text)
        at = at.__cause__ or at.__context__
    return ": ".join(words)


def _quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with its stderr on ``/dev/null``.

    The local cluster's worker processes register semaphores with it; when the coordinator is
    killed (even by SIGKILL) the tracker outlives it, removes them, and warns "There appear to
    be 12 leaked semaphore objects" on the stderr it inherited: the user's terminal, long
    after the run ended.  It cleans up all the same; only its words go nowhere."""
    from multiprocessing import resource_tracker

    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(2)
    try:
        os.dup2(devnull, 2)  # the tracker takes this process's stderr as its own
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def workers(client: Any) -> list[str]:
    """The addresses of the workers connected now."""
    return sorted(client.scheduler_info(n_workers=-1)["workers"])
