"""A bot that plays correctly (always ``legal[0]``) and signals to the other processes of its
match through counters the whole machine shares, the way issue 42 found it could: it moves them
(``io_setup`` reserves AIO events, ``mlock`` locks pages, opening ``/dev/ptmx`` takes a pty) and
reads them (``/proc/sys/fs/aio-nr``, ``/proc/sys/kernel/pty/nr``, ``Mlocked`` in ``/proc/meminfo``).
Used by tests/bots/test_sandbox_pagecache.py.

    counters.py

At ``hello`` it reads every counter, then moves each and keeps what it took until it exits; at
each ``turn`` it reads them again.  A counter that moved by more than its own doing moved by
another process's.  Lines on stderr: ``attack counters: SUCCEEDED (NAME: ...)`` when a counter
shows another process's doing, ``attack counters: refused (NAME: why)`` when it cannot be read or
moved, or shows nothing of anyone else.
"""

import ctypes
import json
import mmap
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
AIO_EVENTS = 4000
LOCKED_PAGES = 16
PTYS = 3
said = set()


def report(ok, detail):
    if (ok, detail.split(":")[0]) in said:
        return
    said.add((ok, detail.split(":")[0]))
    print(f"attack counters: {'SUCCEEDED' if ok else 'refused'} ({detail})", file=sys.stderr, flush=True)


def read_all():
    """Each counter's value, or the reason it cannot be read."""
    values = {}
    for name, path in (("aio-nr", "/proc/sys/fs/aio-nr"), ("pty-nr", "/proc/sys/kernel/pty/nr")):
        try:
            with open(path) as f:
                values[name] = int(f.read())
        except (OSError, ValueError) as exc:
            values[name] = f"{exc}"
    try:
        with open("/proc/meminfo") as f:
            values["Mlocked"] = next(int(line.split()[1]) for line in f if line.startswith("Mlocked:"))
    except (OSError, ValueError, StopIteration) as exc:
        values["Mlocked"] = f"{exc!r}"
    return values


def move():
    """Move every counter; what each moved it by (in its own units), or the reason it could not."""
    moved = {}
    ctx = ctypes.c_ulong(0)
    if libc.syscall(206 if os.uname().machine == "x86_64" else 0, AIO_EVENTS, ctypes.byref(ctx)) == 0:
        moved["aio-nr"] = None  # the kernel rounds it up: any change at least this big is ours
    else:
        moved["aio-nr"] = f"io_setup: {os.strerror(ctypes.get_errno())}"
    buf = mmap.mmap(-1, LOCKED_PAGES * mmap.PAGESIZE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    moved["Mlocked"] = None if libc.mlock(ctypes.c_void_p(address), LOCKED_PAGES * mmap.PAGESIZE) == 0 else (
        f"mlock: {os.strerror(ctypes.get_errno())}")
    held.append(buf)
    ptys = 0
    for _ in range(PTYS):
        try:
            held.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
            ptys += 1
        except OSError as exc:
            moved["pty-nr"] = f"/dev/ptmx: {exc.strerror}"
            break
    else:
        moved["pty-nr"] = None
    return moved


def judge(before, mine, now):
    for name, value in now.items():
        if isinstance(value, str):
            report(False, f"{name}: cannot read it ({value})")
            continue
        start = before[name]
        if isinstance(start, str):
            continue
        if start:
            report(True, f"{name}: {start} before this process moved it")
        elif isinstance(mine.get(name), str) and value != start:
            report(True, f"{name}: moved {start} -> {value}, and this process could not move it ({mine[name]})")
        else:
            report(False, f"{name}: nothing of anyone else ({start} -> {value})")


held = []
before = mine = None
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        before = read_all()
        mine = move()
        for name, why in mine.items():
            if isinstance(why, str):
                report(False, f"{name}: cannot move it ({why})")
        print(json.dumps({"type": "hello", "name": "counters", "protocol": 1}), flush=True)
    elif kind == "turn":
        judge(before, mine, read_all())
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif kind == "match_end":
        break
