"""A bot that plays correctly (always ``legal[0]``) and, at its first turn, spends a while
signalling to the other processes of its match through one counter of the whole machine, so that
what gets through can be measured (issue 42 item 2, the channels PROTOCOL.md lists as not
closed).  Used by ``python -m bench.sandbox --counters`` and tests/bots/test_sandbox_pagecache.py.

    machine_counters.py CHANNEL [SECONDS [SLOT_MS]]

The process at seat 0 sends, any other receives.  Time is cut into slots of ``SLOT_MS`` (100 by
default) counted from the epoch, the same for every process of the machine; for ``SECONDS`` (6 by
default) the sender moves the counter in the slots where a random bit is 1 and leaves it alone
where it is 0, and the receiver reads the counter late in each slot and decides which it was.
``CHANNEL`` is one of:

* ``procs``: ``sysinfo()``'s count of the machine's threads; the sender holds 24 more processes.
* ``freeram``: ``sysinfo()``'s free memory; the sender holds 128 MiB more, touched.
* ``ino``: the inode numbers of new pipes, drawn from one counter of the machine in batches of
  1,024 per CPU; the sender makes (and closes) 4,096 pipes, the receiver makes pipes until its
  CPU draws a fresh batch, whose first number tells how many batches the machine drew since.
* ``pipes``: the user's pipe-buffer allowance (``fs.pipe-user-pages-soft``); the sender holds
  pipes until a new one gets less than the usual 16 pages, the receiver makes a pipe and asks its
  size (``F_GETPIPE_SZ``, or, refused, by filling it); ``pipefill``: the same, read by filling
  the pipe (what is left if ``F_GETPIPE_SZ`` is refused).

Lines on stderr: ``channel sent SLOT BIT``, ``channel read SLOT BIT VALUE``, and ``channel
refused (why)`` when the counter cannot be moved or read at all.
"""

import ctypes
import fcntl
import json
import mmap
import os
import resource
import sys
import time

CHANNEL = sys.argv[1] if len(sys.argv) > 1 else "procs"
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 6.0
SLOT = (float(sys.argv[3]) if len(sys.argv) > 3 else 100.0) / 1000
THREADS = 24
MEMORY = 128 << 20
PIPES_PER_BIT = 4096
F_GETPIPE_SZ = 1032
libc = ctypes.CDLL(None, use_errno=True)


class Sysinfo(ctypes.Structure):
    _fields_ = [
        ("uptime", ctypes.c_long),
        ("loads", ctypes.c_ulong * 3),
        ("totalram", ctypes.c_ulong),
        ("freeram", ctypes.c_ulong),
        ("sharedram", ctypes.c_ulong),
        ("bufferram", ctypes.c_ulong),
        ("totalswap", ctypes.c_ulong),
        ("freeswap", ctypes.c_ulong),
        ("procs", ctypes.c_ushort),
        ("pad", ctypes.c_ushort),
        ("totalhigh", ctypes.c_ulong),
        ("freehigh", ctypes.c_ulong),
        ("mem_unit", ctypes.c_uint),
        ("_f", ctypes.c_char * 8),
    ]


def say(text):
    print(f"channel {text}", file=sys.stderr, flush=True)


def sysinfo():
    info = Sysinfo()
    if libc.sysinfo(ctypes.byref(info)) != 0:
        raise OSError(ctypes.get_errno(), f"sysinfo: {os.strerror(ctypes.get_errno())}")
    return info


# -- moving a counter ------------------------------------------------------------------------------


class Sender:
    """Holds the counter moved (``up``) or not (``down``)."""

    def __init__(self):
        self.held = []

    def up(self):
        if self.held:
            return
        if CHANNEL == "procs":  # children that wait for the pipe to close
            r, w = os.pipe()
            for _ in range(THREADS):
                pid = os.fork()
                if pid == 0:
                    os.close(w)
                    os.read(r, 1)
                    os._exit(0)
                self.held.append(pid)
            os.close(r)
            self.held.append(-w)
        elif CHANNEL == "freeram":
            buf = mmap.mmap(-1, MEMORY)
            for i in range(0, MEMORY, mmap.PAGESIZE):
                buf[i] = 1
            self.held.append(buf)
        elif CHANNEL == "ino":
            for _ in range(PIPES_PER_BIT):
                r, w = os.pipe()
                os.close(r)
                os.close(w)
        elif CHANNEL in ("pipes", "pipefill"):
            # pipes until the user's allowance is spent (a new one is small), and some more
            for _ in range(16384):
                r, w = os.pipe()
                os.close(w)
                self.held.append(r)
                if fcntl.fcntl(r, F_GETPIPE_SZ) < 16 * mmap.PAGESIZE:
                    break
            else:
                self.down()
                raise OSError("16,384 pipes, and a new one is as large as ever (a privileged user's are never made small)")
            for _ in range(64):
                r, w = os.pipe()
                os.close(w)
                self.held.append(r)

    def down(self):
        if CHANNEL == "procs" and self.held:
            os.close(-self.held[-1])
            for pid in self.held[:-1]:
                os.waitpid(pid, 0)
        elif CHANNEL in ("pipes", "pipefill"):
            for fd in self.held:
                os.close(fd)
        self.held = []


# -- reading it --------------------------------------------------------------------------------------


class Receiver:
    def __init__(self):
        self.history = []
        self.last_base = None
        self.state = 0

    def read(self):
        """(bit, value): the value read and what it says the sender did."""
        if CHANNEL in ("procs", "freeram"):
            info = sysinfo()
            value = info.procs if CHANNEL == "procs" else info.freeram * info.mem_unit
            self.history = [*self.history[-7:], value]
            if CHANNEL == "procs":  # above the quiet level of late by more than half the signal
                return int(value - min(self.history) > THREADS // 2), value
            # a step of about the signal down or up says the sender took or gave back its memory
            step = value - self.history[-2] if len(self.history) > 1 else 0
            self.state = 1 if step < -MEMORY // 2 else 0 if step > MEMORY // 2 else self.state
            return self.state, value
        if CHANNEL == "ino":
            base = fresh_batch()
            moved = None if self.last_base is None else (base - self.last_base) // 1024 - 1
            self.last_base = base
            return int(moved is not None and moved >= 2), moved
        size = pipe_size(fill=CHANNEL == "pipefill")
        return int(size < 16 * mmap.PAGESIZE), size


def fresh_batch():
    """The first inode number of a batch this CPU draws now from the machine's counter."""
    for _ in range(2100):
        r, w = os.pipe()
        ino = os.fstat(r).st_ino
        os.close(r)
        os.close(w)
        if ino % 1024 == 1:
            return ino - 1
    raise LookupError("no fresh batch of inode numbers in 2,100 pipes (the process moved between CPUs)")


def pipe_size(fill=False):
    r, w = os.pipe()
    try:
        try:
            if fill:
                raise OSError("F_GETPIPE_SZ not asked")
            return fcntl.fcntl(r, F_GETPIPE_SZ)
        except OSError:  # refused: fill it and count
            os.set_blocking(w, False)
            n = 0
            chunk = b"x" * mmap.PAGESIZE
            try:
                while n < 1 << 20:
                    n += os.write(w, chunk)
            except BlockingIOError:
                pass
            return n
    finally:
        os.close(r)
        os.close(w)


def run(seat):
    sending = seat == 0
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (OSError, ValueError):
        pass
    sender, receiver = Sender(), Receiver()
    try:  # one try of each: a counter that cannot be moved or read is said once and left
        if sending:
            sender.up()
            sender.down()
        else:
            receiver.read()
    except OSError as exc:
        say(f"refused ({'moving' if sending else 'reading'} {CHANNEL}: {exc})")
        return
    bits = os.urandom(int(SECONDS / SLOT) + 2)
    end = time.time() + SECONDS
    while time.time() < end:
        now = time.time()
        slot = int(now / SLOT)
        try:
            if sending:
                bit = bits[slot % len(bits)] & 1
                sender.up() if bit else sender.down()
                say(f"sent {slot} {bit}")
            else:
                time.sleep(max(0.0, (slot + 0.7) * SLOT - now))
                try:
                    bit, value = receiver.read()
                except LookupError:  # no reading this time: a 0, as a receiver must decide something
                    receiver.last_base = None
                    bit, value = 0, None
                say(f"read {slot} {bit} {value}")
        except OSError as exc:
            say(f"refused ({CHANNEL}: {exc})")
            break
        time.sleep(max(0.0, (slot + 1) * SLOT - time.time()))
    sender.down()


seat = None
ran = False
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        print(json.dumps({"type": "hello", "name": "counters", "protocol": 1}), flush=True)
    elif kind == "deal":
        seat = msg["seat"]
    elif kind == "turn":
        if not ran:
            ran = True
            run(msg.get("seat", seat))
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif kind == "match_end":
        break
