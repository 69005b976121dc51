"""One signal policy for every long run (``referee match``, ``check``, ``league run``).

Ctrl-C (SIGINT), a league or a service manager stopping the process (SIGTERM) and the terminal
closing (SIGHUP) all become the same thing: the run's work is cancelled, its bots are ended and
its files closed, and the process says "interrupted" and exits 130.  The signal receiver stays
open until that cleanup is over, so a second signal (an impatient second Ctrl-C) is noted and
ignored instead of breaking into the cleanup and leaving bots or a half-written log behind.  After
a stop the stop signals stay ignored (the process is on its way out: it prints what it has and
exits 130); a caller that lives on after a stop sets its own handlers again.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

#: The signals that stop a run.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(Exception):
    """The run was stopped by one of :data:`STOP_SIGNALS` and cleaned up after itself.
    ``result`` is what the run had done by then, when it hands that on (a match: its result
    so far, which the caller reports and closes)."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class Stop:
    """What :func:`cancel_on_signals` saw: the first signal (``None``: none came) and how many."""

    __slots__ = ("signal", "count")

    def __init__(self) -> None:
        self.signal: int | None = None
        self.count = 0

    @property
    def name(self) -> str:
        return "" if self.signal is None else signal.Signals(self.signal).name


@asynccontextmanager
async def cancel_on_signals(on_signal: Callable[[Stop], None] | None = None, *, enabled: bool = True,
                            raise_after: bool = False, carry: Any = None) -> AsyncIterator[Stop]:
    """Run the body; the first of :data:`STOP_SIGNALS` cancels it (``on_signal`` is told at
    once), later ones are only counted until the body has finished cleaning up.

    With ``raise_after``, leaving after a signal raises :class:`Terminated` (its ``result``:
    ``carry``).  Signals can be
    received only in the main thread; elsewhere (or with ``enabled`` false) the body just runs.
    """
    stop = Stop()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield stop
        return
    body = trio.CancelScope()
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}

    def relay(signum: int, frame: Any) -> None:
        # Under trio's receiver, and what that receiver puts back when it closes: a signal in the
        # moments around the receiver still finds a handler that knows whether the run was stopped
        # (otherwise a SIGTERM there, its handler the default again, would kill the process).
        if stop.signal is not None:
            stop.count += 1
            return
        handler = before[signal.Signals(signum)]
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    for s in STOP_SIGNALS:
        signal.signal(s, relay)

    async def watch(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
            task_status.started()
            async for signum in signals:
                stop.count += 1
                if stop.signal is None:
                    stop.signal = signum
                    body.cancel()
                    if on_signal is not None:
                        on_signal(stop)

    try:
        async with trio.open_nursery() as watcher:
            await watcher.start(watch)
            try:
                with body:
                    yield stop
            finally:
                watcher.cancel_scope.cancel()
    finally:
        for s, handler in before.items():
            signal.signal(s, signal.SIG_IGN if stop.signal is not None else handler)
    if raise_after and stop.signal is not None:
        raise Terminated(f"terminated by {stop.name}", carry)

