"""A bot's pipes, one small holder per file descriptor: :class:`Fd` closes its descriptor once
(telling trio first, so a task waiting on it wakes), :class:`PipeWriter` writes the bot's stdin,
:class:`StderrCopy` copies its stderr to a capped file; its stdout is a
:class:`~referee.bots.reader.LineReader`.  Also how the referee finds whoever still holds a bot's
pipes once the bot is gone (:func:`pipes_held`, :func:`pipe_holders`).
"""

from __future__ import annotations

import array
import fcntl
import os
import select
import signal
import termios
from collections.abc import Callable, Sequence
from typing import IO

import trio

CHUNK = 1 << 16  # bytes per read syscall
TAIL_BYTES = 8192  # stderr bytes kept to build tail()
TAIL_LINES = 20
BUDGET = 1 << 20  # bytes read without yielding, so a flooding bot cannot starve other tasks


class Fd:
    """One of our file descriptors, ``fd`` (``-1`` once closed)."""

    __slots__ = ("fd",)
    #: what :func:`pipes_held` polls it for, and what says nobody holds the other end
    events = select.POLLIN
    hangup = select.POLLHUP

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        """Close the descriptor (once; later calls do nothing)."""
        fd = self.fd
        if fd >= 0:
            self.fd = -1
            try:
                trio.lowlevel.notify_closing(fd)
            except RuntimeError:  # outside trio: nobody can be waiting on it
                pass
            os.close(fd)


class Closed(Exception):
    """The pipe is gone: the other end closed it, or we did."""


class PipeWriter(Fd):
    """The write end (non-blocking) of a pipe to a process's stdin."""

    __slots__ = ()
    events = select.POLLOUT
    hangup = select.POLLERR

    async def send(self, data: bytes) -> None:
        """Write all of ``data``, waiting while the pipe is full.

        A reader that does not read makes this wait forever: put a deadline around it.  If
        cancelled, part of ``data`` may have been written.

        Raises:
          Closed: the reader closed its end (usually by exiting), or this end was closed.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        view = memoryview(data)
        while view:
            if self.fd < 0:
                raise Closed
            try:
                view = view[os.write(self.fd, view) :]
            except BlockingIOError:
                try:
                    await trio.lowlevel.wait_writable(self.fd)
                except trio.ClosedResourceError:
                    raise Closed from None
            except BrokenPipeError:
                raise Closed from None

    def write_nowait(self, data: bytes) -> int:
        """Write what of ``data`` the pipe takes now (one write at most); the bytes written.

        Never waits and never raises: a full pipe, or a reader that closed its end, takes 0
        bytes, and :meth:`send` of the rest reports it.
        """
        fd = self.fd
        if fd < 0:
            return 0
        try:
            return os.write(fd, data)
        except (BlockingIOError, BrokenPipeError):
            return 0

    def unread(self) -> int | None:
        """Bytes written that the reader has not read yet (``None`` once closed)."""
        if self.fd < 0:
            return None
        count = array.array("i", [0])
        try:
            fcntl.ioctl(self.fd, termios.FIONREAD, count)
        except OSError:
            return None
        return count[0]


class StderrCopy(Fd):
    """The read end (non-blocking) of a process's stderr, copied to ``log`` up to ``cap``
    bytes (the rest is read and dropped, with one note in the file), its last 8 KiB kept for
    :meth:`tail`.  :meth:`run` copies until the end of the stream or :meth:`stop`."""

    __slots__ = ("log", "cap", "written", "last", "started", "done", "scope")

    def __init__(self, fd: int, log: IO[bytes], cap: int) -> None:
        super().__init__(fd)
        self.log = log
        self.cap = cap
        self.written = 0
        self.last = b""
        self.started = False
        self.done = trio.Event()
        self.scope = trio.CancelScope()

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self.started = True
        task_status.started()
        try:
            with self.scope:
                while self.fd >= 0 and not self.pump():
                    await trio.lowlevel.wait_readable(self.fd)
        except trio.ClosedResourceError:
            pass
        finally:
            self.done.set()

    def pump(self) -> bool:
        """Move what the pipe holds now (up to a budget) to the log; True at the end of it."""
        budget = BUDGET
        while budget > 0 and self.fd >= 0:
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                return False
            if not chunk:
                return True
            budget -= len(chunk)
            self._record(chunk)
        return False

    async def stop(self) -> None:
        """Stop copying (after a last :meth:`pump`), close the pipe, wait for :meth:`run` to
        end, and close the log."""
        if self.fd >= 0:
            self.pump()
        self.scope.cancel()
        self.close()
        if self.started:
            await self.done.wait()
        self.log.close()

    def _record(self, chunk: bytes) -> None:
        written, cap = self.written, self.cap
        if written <= cap:  # cap + 1 means the note is written and the rest is dropped
            room = cap - written
            try:
                if room > 0:
                    self.log.write(chunk[:room])
                if len(chunk) > room:
                    self.log.write(f"\n[referee: stderr cut after {cap} bytes; the rest was discarded]\n".encode())
            except (OSError, ValueError):  # disk full, or closed: a bot must not crash the referee
                pass
            self.written = min(written + len(chunk), cap + 1)
        if len(chunk) >= TAIL_BYTES:
            self.last = chunk[-TAIL_BYTES:]
        else:
            self.last = (self.last + chunk)[-TAIL_BYTES:]

    def tail(self) -> str:
        """The last lines (about 20) written to stderr."""
        lines = self.last.decode("utf-8", "replace").splitlines()
        if len(self.last) == TAIL_BYTES and lines:
            lines = lines[1:]  # the first one is probably cut
        return "\n".join(lines[-TAIL_LINES:])


def pipes_held(pipes: Sequence[Fd]) -> bool:
    """Whether any other process still holds the other ends of these open pipes (POLLHUP on a
    read end means no writer is left; POLLERR on a write end, no reader)."""
    poller = select.poll()
    gone = {}
    for p in pipes:
        if p.fd >= 0:
            poller.register(p.fd, p.events)
            gone[p.fd] = p.hangup
    revents = dict(poller.poll(0))
    return any(not revents.get(fd, 0) & hangup for fd, hangup in gone.items())


async def end_holders(pipes: Sequence[Fd], inodes: frozenset[str], also: Callable[[], None], wait: float,
                      since: int = 0) -> bool:
    """Kill the processes that still hold these pipes (``inodes``: their names in /proc), e.g. a
    grandchild of a bot that called setsid(), calling ``also`` each round (the bot's group is
    killed again), for at most ``wait`` seconds.  The /proc scan runs only when polling shows a
    holder is left, or at once when our end of a write pipe is closed already (polling cannot
    see its holders then).  Returns whether none was left in time."""
    with trio.move_on_after(wait):
        delay = 0.001
        scan = any(isinstance(p, PipeWriter) and p.fd < 0 for p in pipes)
        while (held := pipes_held(pipes)) or scan:
            holders = pipe_holders(inodes, since)
            if not holders and not held:
                return True  # the look at once found nothing: no round to wait for
            scan = False
            for pid in holders:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            also()
            await trio.sleep(delay)
            delay = min(delay * 2, 0.05)
        return True
    return False


def pipe_holders(inodes: frozenset[str], since: int = 0) -> list[int]:
    """Processes holding any of the pipes named like ``pipe:[1234]``, except this process and
    its own children (the bot itself is reaped separately; another bot being spawned right now
    may briefly hold copies of our descriptors between fork and exec).

    ``since`` is the bot's start time (:func:`started`): a process that holds a bot's pipe
    inherited it from the bot, so it started no earlier, and the descriptors of older processes
    are not read (most of the machine's, and most of a scan's cost)."""
    me = os.getpid()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        stat = _stat(entry.name)
        if stat is None or int(stat[19]) < since:
            continue
        fd_dir = f"/proc/{entry.name}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if link in inodes:
                if int(stat[1]) != me:
                    found.append(int(entry.name))
                break
    return found


def started(pid: int) -> int:
    """When process ``pid`` started, in clock ticks after boot (0 if it cannot be read: then a
    scan reads every process)."""
    stat = _stat(str(pid))
    return int(stat[19]) if stat is not None else 0


def _stat(pid: str) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, …, starttime at 19)."""
    try:  # os.open, not open(): a scan reads every process's, and a file object costs more
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    # the command name, in parentheses, may itself contain spaces and ')'
    return stat[stat.rindex(b")") + 2 :].split()
