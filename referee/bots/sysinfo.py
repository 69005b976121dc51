"""``sysinfo()`` answered by the referee: a sandboxed bot's call gets constant values, not the
machine's (issue 42 item 2; PROTOCOL.md, "Fair play").

``sysinfo()`` tells the machine's free memory, its number of threads and its loads: counters a
process of one seating can move and a process of another read (measured by ``python -m
bench.sandbox --counters``: 0.35–0.82 bit per reading of 100 ms through the count of threads,
sandboxed).  It cannot simply be refused: glibc's ``sysconf(_SC_PHYS_PAGES)`` calls it without looking at the
result, and a JVM sized its heap from what was on the stack.  So the spawn of a sandboxed bot
installs, before bwrap runs, a seccomp filter that hands every ``sysinfo`` call of the bot's
processes to the referee (``SECCOMP_RET_USER_NOTIF``, Linux 5.0); the listener comes back to the
referee over a socket pair, and a thread of the referee's (:class:`_Supervisor`) writes a
constant ``struct sysinfo`` into the caller (the bot's memory cap as its whole memory, all of it
free, one process, no load) through ``/proc/PID/mem``, and lets the call return 0.

The supervisor is outside the bot's reach (a thread of the referee, which the bot can neither see
nor signal); the referee never waits on the bot: a listener is polled, a notification read only
when one is there (a caller gone meanwhile makes the read fail at once), and the answer's write
and reply do not block.  If the referee is gone the bot's call fails (ENOSYS) rather than tell
anything.  Where a step cannot be had (a kernel without user notification, a bwrap installed
setuid, a machine whose filter :mod:`referee.bots.sandbox` does not know), :func:`supported` is
False and the call is left to the kernel, as PROTOCOL.md says; so is a call the referee may not
write the answer of (a host whose security module forbids it: ``SECCOMP_USER_NOTIF_FLAG_CONTINUE``),
rather than fail and leave glibc's callers with garbage.  A bot gets at most :data:`RATE` answers
a second.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import select
import socket
import stat
import struct
import threading
import time

__all__ = ["Channel", "constant", "filter_program", "forget", "install", "supported", "watch"]

#: Per machine: (audit arch, sysinfo's number, seccomp's number).
_MACHINES = {"x86_64": (0xC000003E, 99, 317), "aarch64": (0xC00000B7, 179, 277)}
_SET_MODE_FILTER, _FLAG_NEW_LISTENER = 1, 1 << 3
_RET_USER_NOTIF, _RET_ALLOW = 0x7FC00000, 0x7FFF0000
_NO_NEW_PRIVS = 38
# ioctls of the listener: _IOWR('!', 0, struct seccomp_notif), _IOWR('!', 1, struct
# seccomp_notif_resp), _IOW('!', 2, __u64)
_NOTIF_RECV, _NOTIF_SEND, _NOTIF_ID_VALID = 0xC0502100, 0xC0182101, 0x40082102
_FLAG_CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE (Linux 5.5): the call runs as if allowed
_BOOTTIME = 7


class _Notif(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint64),
        ("pid", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("nr", ctypes.c_int32),
        ("arch", ctypes.c_uint32),
        ("ip", ctypes.c_uint64),
        ("args", ctypes.c_uint64 * 6),
    ]


class _Resp(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("val", ctypes.c_int64), ("error", ctypes.c_int32), ("flags", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)


def _machine() -> tuple[int, int, int] | None:
    return _MACHINES.get(platform.machine())


def filter_program() -> bytes:
    """The classic BPF program that hands the native ABI's ``sysinfo`` to the listener and lets
    every other call through (the sandbox's own filter decides those)."""
    known = _machine()
    if known is None:
        return b""
    arch, nr, _ = known
    ld_w_abs, jeq, ret = 0x20, 0x15, 0x06
    program = [(ld_w_abs, 0, 0, 4), (jeq, 0, 3, arch), (ld_w_abs, 0, 0, 0), (jeq, 0, 1, nr), (ret, 0, 0, _RET_USER_NOTIF), (ret, 0, 0, _RET_ALLOW)]
    return b"".join(struct.pack("=HBBI", *insn) for insn in program)


def supported(bwrap: str) -> bool:
    """Whether a sandboxed bot's ``sysinfo`` can be answered here: a machine known, and a bwrap
    that is not setuid (the filter needs no_new_privs as an ordinary user, under which a setuid
    bwrap would lose its privileges).  A kernel without user notification (before 5.0) fails
    the filter's installation, and the call is then left to the kernel."""
    return _machine() is not None and not (os.getuid() != 0 and os.stat(bwrap).st_mode & stat.S_ISUID)


def install(sock: int) -> None:
    """In the child about to become bwrap (a ``preexec_fn``): install the filter and send its
    listener to the referee over ``sock``.  Raises OSError when it cannot."""
    program = filter_program()
    if not program:
        raise OSError(errno.ENOSYS, "no filter for this machine")
    if os.getuid() != 0 and _libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _Program(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    known = _machine()
    assert known is not None  # filter_program() is empty on a machine it does not know
    listener = _libc.syscall(known[2], _SET_MODE_FILTER, _FLAG_NEW_LISTENER, ctypes.byref(prog))
    if listener < 0:
        raise OSError(ctypes.get_errno(), "seccomp")
    try:
        with socket.socket(fileno=os.dup(sock)) as channel:
            socket.send_fds(channel, [b"L"], [listener])
    finally:
        os.close(listener)


class Channel:
    """How a spawn hands the listener back: a socket pair, the child's end used in the child
    (:meth:`install`, from its ``preexec_fn``), the referee's once it has run (:meth:`take`).
    With ``on`` false it does nothing, and the bot's calls are left to the kernel."""

    def __init__(self, *, on: bool, memory_mb: int) -> None:
        self._pair = socket.socketpair() if on else None
        self._memory_mb = memory_mb

    def install(self) -> None:
        """In the child: the filter, its listener sent back.  A kernel without user notification
        refuses it, and the call is left to the kernel (PROTOCOL.md)."""
        if self._pair is not None:
            try:
                install(self._pair[1].fileno())
            except OSError:
                pass

    def take(self) -> int | None:
        """In the referee, once the child has run: answer what comes through its listener; the
        token to :func:`forget` it by, or None."""
        if self._pair is None:
            return None
        ours = self._pair[0]
        ours.setblocking(False)
        try:
            _, fds, _, _ = socket.recv_fds(ours, 1, 1)
        except OSError:
            return None
        for extra in fds[1:]:
            os.close(extra)
        return watch(fds[0], self._memory_mb) if fds else None

    def close(self) -> None:
        if self._pair is not None:
            for end in self._pair:
                end.close()
            self._pair = None


# -- the answer ---------------------------------------------------------------------------------


def constant(memory_mb: int) -> bytes:
    """The ``struct sysinfo`` every sandboxed call gets: the machine's time since boot; the memory
    cap as the whole memory, all of it free; no swap, no load, one process (the same as the
    sandbox's /proc/meminfo)."""
    memory = memory_mb << 20
    uptime = int(time.clock_gettime(_BOOTTIME))
    # long uptime; unsigned long loads[3], totalram, freeram, sharedram, bufferram, totalswap,
    # freeswap; unsigned short procs, pad; unsigned long totalhigh, freehigh; unsigned int mem_unit
    return struct.pack("=q3Q6QHH4x2QI4x", uptime, 0, 0, 0, memory, memory, 0, 0, 0, 0, 1, 0, 0, 0, 1)


def _answer(listener: int, memory_mb: int) -> None:
    """Read one notification of ``listener`` and answer it.  Returns at once if there is none
    (the caller is gone): nothing here waits on the bot."""
    import fcntl

    notif = _Notif()
    try:
        fcntl.ioctl(listener, _NOTIF_RECV, notif)
    except OSError:
        return
    known = _machine()
    resp = _Resp(notif.id, 0, 0, 0)
    if known is None or notif.arch != known[0] or notif.nr != known[1]:
        resp.error = -errno.ENOSYS
    else:
        failed = _write(listener, notif, constant(memory_mb))
        if failed is None:  # the referee may not write there (a host that forbids it): the kernel's call
            resp.flags = _FLAG_CONTINUE
        else:
            resp.error = -failed
    try:
        fcntl.ioctl(listener, _NOTIF_SEND, resp)
    except OSError:
        pass  # the caller is gone


def _write(listener: int, notif: _Notif, data: bytes) -> int | None:
    """Write ``data`` at the caller's first argument; 0, the errno its call then fails with, or
    None when this referee may not write into its bots (a host whose security module forbids it):
    then the call is left to the kernel, as where the filter cannot be had, rather than fail and
    leave glibc's callers with garbage."""
    import fcntl

    address = notif.args[0]
    if address == 0 or address > (1 << 63) - len(data):
        return errno.EFAULT
    try:
        mem = os.open(f"/proc/{notif.pid}/mem", os.O_WRONLY | os.O_CLOEXEC)
    except OSError as exc:
        return errno.ENOSYS if exc.errno in (errno.ENOENT, errno.ESRCH) else None  # the caller is gone, or not ours to write
    try:
        # the pid still names the caller only while the notification is pending
        fcntl.ioctl(listener, _NOTIF_ID_VALID, ctypes.c_uint64(notif.id))
        os.pwrite(mem, data, address)
    except OSError as exc:
        if exc.errno in (errno.EPERM, errno.EACCES):
            return None
        return errno.EFAULT if exc.errno in (errno.EIO, errno.EFAULT) else exc.errno or errno.ENOSYS
    finally:
        os.close(mem)
    return 0


class _Supervisor:
    """The thread that answers every sandboxed bot's ``sysinfo``: it polls their listeners, closes
    each when its bot is done with (:meth:`forget`, or no process uses its filter any more), and
    ends when it has none left (so a referee with no sandboxed bot holds nothing of it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[int, tuple[int, int]] = {}  # token -> (listener, memory cap)
        self._forgotten: list[tuple[int, threading.Event]] = []
        self._thread: threading.Thread | None = None
        self._wake_r = self._wake_w = -1
        self._tokens = 0

    def watch(self, listener: int, memory_mb: int) -> int:
        with self._lock:
            if self._thread is None:
                self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
                self._thread = threading.Thread(target=self._run, args=(self._wake_r,), name="referee-sysinfo", daemon=True)
                self._thread.start()
            self._tokens += 1
            self._listeners[self._tokens] = (listener, memory_mb)
            self._wake()
            return self._tokens

    def forget(self, token: int) -> None:
        """Close the listener of ``token`` (if the thread has not already) and wait, a second at
        most, for the thread to have done it (and ended, with nothing left to watch)."""
        done = threading.Event()
        with self._lock:
            if self._thread is None:
                return
            self._forgotten.append((token, done))
            self._wake()
        done.wait(1.0)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b".")
        except BlockingIOError:
            pass  # it is awake already

    def _run(self, wake: int) -> None:
        loop = _Loop(wake)
        while True:
            with self._lock:
                finished = [done for _, done in self._forgotten]
                for token, _ in self._forgotten:
                    entry = self._listeners.pop(token, None)
                    if entry is not None:
                        loop.close(entry[0])
                self._forgotten.clear()
                for token, (fd, memory_mb) in self._listeners.items():
                    loop.add(fd, token, memory_mb)
                if not self._listeners:  # nothing left: the thread ends
                    os.close(self._wake_r)
                    os.close(self._wake_w)
                    self._thread = None
                    for done in finished:
                        done.set()
                    return
            for done in finished:
                done.set()
            for token in loop.turn():  # the listeners no process uses any more
                with self._lock:
                    entry = self._listeners.pop(token, None)
                    if entry is not None:
                        loop.close(entry[0])


#: Answers a second to one bot process (its processes and threads together), and how many may
#: come at once: a Python starts with 17 calls, a JVM with 4; a bot that calls it in a loop gets
#: no more, so that it cannot make the referee spend its time answering (one answer costs the
#: referee about 50 µs).
RATE, BURST = 1000.0, 100.0


class _Loop:
    """The supervisor's poll: the listeners it watches, each answered at most :data:`RATE` times
    a second (a listener over it rests, not polled, until it has its turn again)."""

    def __init__(self, wake: int) -> None:
        self.wake = wake
        self.poller = select.poll()
        self.poller.register(wake, select.POLLIN)
        self.watched: dict[int, tuple[int, int]] = {}  # listener -> (token, memory cap)
        self.budget: dict[int, tuple[float, float]] = {}  # listener -> (answers it may have now, when counted)
        self.resting: dict[int, float] = {}  # listener -> when it is polled again

    def add(self, fd: int, token: int, memory_mb: int) -> None:
        if fd not in self.watched:
            self.watched[fd] = (token, memory_mb)
            self.budget[fd] = (BURST, time.monotonic())
            self.poller.register(fd, select.POLLIN)

    def close(self, fd: int) -> None:
        if fd in self.watched:
            if fd not in self.resting:
                self.poller.unregister(fd)
            del self.watched[fd], self.budget[fd]
            self.resting.pop(fd, None)
        os.close(fd)

    def turn(self) -> list[int]:
        """Wait for something to do and do it; the tokens of the listeners that hung up."""
        timeout = None if not self.resting else max(0.0, min(self.resting.values()) - time.monotonic()) * 1000
        hung_up = []
        for fd, events in self.poller.poll(timeout):
            if fd == self.wake:
                try:
                    os.read(self.wake, 4096)
                except BlockingIOError:
                    pass
            elif events & select.POLLIN:
                self._answer(fd)
            elif events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                hung_up.append(self.watched[fd][0])
        now = time.monotonic()
        for fd, at in list(self.resting.items()):
            if at <= now:
                del self.resting[fd]
                self.poller.register(fd, select.POLLIN)
        return hung_up

    def _answer(self, fd: int) -> None:
        now = time.monotonic()
        tokens, then = self.budget[fd]
        tokens = min(BURST, tokens + (now - then) * RATE)
        if tokens < 1:  # over its rate: it waits, its caller blocked in the call meanwhile
            self.poller.unregister(fd)
            self.resting[fd] = now + (1 - tokens) / RATE
            self.budget[fd] = (tokens, now)
            return
        self.budget[fd] = (tokens - 1, now)
        try:
            _answer(fd, self.watched[fd][1])
        except Exception:  # noqa: BLE001 - never let one bot stop the answers to all
            pass


_SUPERVISOR = _Supervisor()


def watch(listener: int, memory_mb: int) -> int:
    """Answer the ``sysinfo`` calls that come through ``listener`` (taken over) with
    :func:`constant` of ``memory_mb``; the token to :func:`forget` it by."""
    return _SUPERVISOR.watch(listener, memory_mb)


def forget(token: int | None) -> None:
    """The bot of ``token`` is gone: close its listener (if no process using its filter closed
    it already)."""
    if token is not None:
        _SUPERVISOR.forget(token)
