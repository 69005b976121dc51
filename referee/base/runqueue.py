"""The referee's own wait for a CPU: how long its thread was ready to run but not running.

A move's time runs from the referee's write of the ``turn`` to its read of the answer, by its own
clock.  On a loaded machine the referee can be woken by the answer and then wait in the kernel's
run queue before it reads it: measured, from a fifth to nearly all of the lateness of an instant
bot's spurious timeouts, the rest the bot's own wait (bench/README.md, "Clock under load").  Linux counts that wait per thread
(``run_delay`` in ``/proc/thread-self/schedstat``, nanoseconds); :class:`RunQueue` reads it at the
turn's write and, only when the answer would be late, again at its read, and the referee does not
count the difference against the bot (PROTOCOL.md, "Limits").

A mark is the file's raw bytes (one ``pread``, parsed only when needed): a move that is on time
costs one read of a few hundred nanoseconds.
"""

from __future__ import annotations

import os
import threading
from typing import Protocol

SCHEDSTAT = "/proc/thread-self/schedstat"


class Waits(Protocol):
    """What the referee's exchanges need of a run-queue clock (``verify`` gives the log's)."""

    def mark(self) -> object:
        """A reading to measure from, taken as a turn is written."""

    def since(self, mark: object) -> int:
        """Microseconds the referee waited for a CPU since ``mark`` (0 when it cannot tell)."""


class RunQueue:
    """The calling thread's run-queue wait, read from its ``schedstat``."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def __del__(self) -> None:  # its thread has ended (the thread's local storage is gone)
        try:
            os.close(self._fd)
        except OSError:
            pass

    def mark(self) -> bytes:
        return os.pread(self._fd, 64, 0)

    def since(self, mark: object) -> int:
        try:
            assert isinstance(mark, bytes)
            then = int(mark.split()[1])
            now = int(os.pread(self._fd, 64, 0).split()[1])
        except (AttributeError, IndexError, ValueError, OSError):
            return 0
        return max(0, (now - then) // 1000)


_local = threading.local()


def run_queue() -> RunQueue | None:
    """The run-queue clock of the calling thread (one per thread, kept open), or ``None`` where
    the system does not count run-queue waits."""
    if not hasattr(_local, "rq"):
        rq: RunQueue | None
        try:
            fd = os.open(SCHEDSTAT, os.O_RDONLY | os.O_CLOEXEC)
            int(os.pread(fd, 64, 0).split()[1])
        except (OSError, IndexError, ValueError):
            rq = None
        else:
            rq = RunQueue(fd)
        _local.rq = rq
    return _local.rq
