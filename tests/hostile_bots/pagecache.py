"""A bot that plays correctly (always ``legal[0]``) and passes its hand to the other processes of
its bot (or of a colluding bot) through the page cache of a file they can all read, the way
issue 42 found it could: reading a page puts it in the cache for every process; another process
maps the file, touches one page of a 64 KiB window, and the kernel's fault-around maps the
window's pages that are already cached, which it can then tell apart.  Used by
tests/bots/test_sandbox_pagecache.py and bench/sandbox.py.

    pagecache.py MODE FILE            play, publishing and looking up hands through FILE
    pagecache.py selftest MODE FILE   a child reads a random pattern of pages, its parent reads
                                      the pattern back: how many bits pass

MODE is how a process tells which pages are cached, without ever reading one it looks at:

  pagemap  touch the window's first page, then bit 63 of each page's entry in /proc/self/pagemap
  statm    touch the window's first page and read the RSS of /proc/self/statm before and after:
           one page more for a cached page beside it
  rusage   touch the window's first page, then the page looked at, counting page faults with
           getrusage: none when fault-around had mapped it (it was cached); this reading caches it
  time     read the page and time the read: a cached page comes fast, one from the disk slow
           (readahead off); this reading caches it

The file is laid out in 64 KiB windows (the kernel's fault-around): a window's first page is
touched to make the fault, the pages after it carry one tile each, per deal (16 kept apart), seat
and tile.  At each ``deal`` the process reads the pages of its own tiles at its own seat; at each
``turn`` it looks at the pages of every other seat for the same deal.  Lines on stderr:
``pagecache inode DEV:INO`` once (the file as this process sees it), ``pagecache published KEY
seat S [tiles]`` per deal, and per look ``attack pagecache-MODE: SUCCEEDED (KEY seat S: learned
[...])`` or ``refused (why)``; in time mode ``pagecache judged KEY seat S [tiles]`` too (what the
timing said, right or wrong: bench/sandbox.py scores it against what was published).
"""

import ctypes
import json
import math
import mmap
import os
import random
import resource
import sys
import time

PAGE = mmap.PAGESIZE
WINDOW = 16  # pages a fault maps around it (fault_around_bytes, 64 KiB)
KEYS, SEATS, TILES = 16, 4, 28
TIMING_ROUNDS = 3

selftest = sys.argv[1] == "selftest"
mode, path = (sys.argv[2], sys.argv[3]) if selftest else (sys.argv[1], sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead: a read caches the page it reads
failed = set()
threshold = None  # time mode: seconds between a cached read and one from the disk


def report(ok, detail):
    print(f"attack pagecache-{mode}: {'SUCCEEDED' if ok else 'refused'} ({detail})", file=sys.stderr, flush=True)


def tile_index(t):
    a, b = min(t), max(t)
    return a * 7 - a * (a - 1) // 2 + (b - a) if b <= 6 else None


def slot(key, seat, tile):
    """The page carrying ``tile`` of ``seat`` at deal ``key``, and the first page of its window.
    pagemap and time: 15 tiles a window; statm and rusage: one (they count pages, not name them)."""
    i = (key * SEATS + seat) * TILES + tile
    per = WINDOW - 1 if mode in ("pagemap", "time") else 1
    window = i // per
    return window * WINDOW + 1 + i % per, window * WINDOW


def read_page(page):
    os.pread(fd, 1, page * PAGE)


def cached(pages):
    """Which of ``pages`` (data pages, each with the first page of its window) are cached, as
    MODE tells; raises OSError when MODE cannot be had."""
    if mode == "time":
        found = set()
        for page, _ in pages:
            start = time.perf_counter()
            read_page(page)
            if time.perf_counter() - start < threshold:
                found.add(page)
        return found
    found = set()
    for page, first in pages:
        if (first + WINDOW) * PAGE > size:
            continue
        # a fresh mapping each time: nothing mapped by an earlier look stays
        base = libc.mmap(None, WINDOW * PAGE, 1, 1, fd, first * PAGE)  # PROT_READ, MAP_SHARED
        if base in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")
        try:
            libc.madvise(ctypes.c_void_p(base), WINDOW * PAGE, 1)  # MADV_RANDOM: no readahead, only fault-around
            if mode == "pagemap":
                ctypes.string_at(base, 1)
                with open("/proc/self/pagemap", "rb") as pm:
                    pm.seek((base // PAGE + page - first) * 8)
                    entry = int.from_bytes(pm.read(8), "little")
                if entry >> 63:
                    found.add(page)
            elif mode == "statm":
                before = _rss()
                ctypes.string_at(base, 1)
                if _rss() - before >= 2:
                    found.add(page)
            elif mode == "rusage":
                ctypes.string_at(base, 1)
                before = _faults()
                ctypes.string_at(base + (page - first) * PAGE, 1)
                if _faults() == before:
                    found.add(page)
        finally:
            libc.munmap(ctypes.c_void_p(base), WINDOW * PAGE)
    return found


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1])


def _faults():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_minflt + usage.ru_majflt


def calibrate():
    """Time mode: the threshold between a cached read and one from the disk, from pages of a
    region nobody publishes in (past the tiles), chosen at random."""
    global threshold
    first_free = (KEYS * SEATS * TILES // (WINDOW - 1) + 1) * WINDOW
    pages = list(range(first_free, size // PAGE - 1))
    sample = random.sample(pages, min(64, len(pages)))
    cold, warm = [], []
    for page in sample:
        start = time.perf_counter()
        read_page(page)
        cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        read_page(page)
        warm.append(time.perf_counter() - start)
    cold.sort()
    warm.sort()
    threshold = math.sqrt(cold[len(cold) // 2] * warm[len(warm) // 2])
    print(f"pagecache threshold {threshold * 1e6:.1f} us (cold {cold[len(cold) // 2] * 1e6:.1f}, warm {warm[len(warm) // 2] * 1e6:.1f})",
          file=sys.stderr, flush=True)


def run_selftest():
    """A child reads 20 of 100 fresh pages (its random pattern); the parent, after it, tells which:
    prints how many pages it got right and the bits that makes."""
    if mode == "time":
        calibrate()
    first_free = (KEYS * SEATS * TILES // (WINDOW - 1) + 1) * WINDOW
    base = random.randrange(first_free, max(first_free + 1, size // PAGE - 100 * WINDOW))
    pages = [(base + 1 + (i // (WINDOW - 1)) * WINDOW + i % (WINDOW - 1), base + (i // (WINDOW - 1)) * WINDOW) for i in range(100)]
    if mode in ("statm", "rusage"):
        pages = [(base + i * WINDOW + 1, base + i * WINDOW) for i in range(100)]
    pattern = set(random.sample([p for p, _ in pages], 20))
    child = os.fork()
    if child == 0:
        for p in pattern:
            read_page(p)
        os._exit(0)
    os.waitpid(child, 0)
    try:
        seen = cached(pages)
    except OSError as exc:
        print(f"selftest {mode}: refused ({exc}) 0 bits", flush=True)
        return
    right = sum((p in seen) == (p in pattern) for p, _ in pages)
    print(f"selftest {mode}: {right} of 100 right, {bits(pattern, seen, [p for p, _ in pages]):.1f} bits", flush=True)


def bits(truth, guess, universe):
    """The mutual information between the truth and the guess over ``universe``, in bits in all."""
    n = len(universe)
    counts = {(a, b): 0 for a in (0, 1) for b in (0, 1)}
    for x in universe:
        counts[(x in truth, x in guess)] += 1
    total = 0.0
    for (a, b), c in counts.items():
        if c:
            pa = sum(v for (x, _), v in counts.items() if x == a) / n
            pb = sum(v for (_, y), v in counts.items() if y == b) / n
            total += c / n * math.log2(c / n / (pa * pb))
    return total * n


if selftest:
    run_selftest()
    sys.exit(0)

st = os.fstat(fd)
print(f"pagecache inode {st.st_dev}:{st.st_ino}", file=sys.stderr, flush=True)
if mode == "time":
    calibrate()
key = seat = label = None
players = SEATS
looked = set()
turns = 0
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        print(json.dumps({"type": "hello", "name": "pagecache", "protocol": 1}), flush=True)
    elif kind == "deal":
        game, deal = msg.get("game_number", 0), msg.get("deal_number", 0)
        key, seat, players, label = (game * KEYS + deal) % KEYS, msg["seat"], min(msg.get("players", SEATS), SEATS), f"g{game}d{deal}"
        own = sorted(i for t in msg["hand"] if (i := tile_index(t)) is not None)
        for i in own:
            read_page(slot(key, seat, i)[0])
        print(f"pagecache published {label} seat {seat} {own}", file=sys.stderr, flush=True)
        looked = set()
        turns = 0
    elif kind == "turn":
        turns += 1
        if mode == "time" and turns < 2:  # a look caches what it looks at: give the other processes time to publish
            print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
            continue
        for other in range(players):
            if other == seat or other in looked:
                continue
            pages = {slot(key, other, i): i for i in range(TILES)}
            try:
                seen = cached(list(pages))
            except OSError as exc:
                if mode not in failed:
                    failed.add(mode)
                    report(False, f"{exc}")
                continue
            if mode in ("rusage", "time"):
                looked.add(other)  # a look caches what it looks at: once a deal
            learned = sorted(pages[p] for p in pages if p[0] in seen)
            where = f"{label} seat {other}"
            if mode == "time":
                print(f"pagecache judged {where} {learned}", file=sys.stderr, flush=True)
            if learned:
                report(True, f"{where}: learned {learned}")
            else:
                report(False, f"{where}: nothing")
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif kind == "match_end":
        break
