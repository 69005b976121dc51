"""What the sandbox costs: a bot process's start-up, a move, and a whole match, with and without.

``python -m bench.sandbox [--repeat R] [--round-trips K] [--deals N]`` measures, in one run,
alternating plain and sandboxed so that a slow spell of the machine falls on both alike:

* **start-up** — from :meth:`BotProcess.start` to the first line read back, for two bots: ``cat``
  (the cost of the process and of the sandbox alone) and a Python echo loop (an interpreter
  starting, as a Python bot does); and the **teardown**, :meth:`BotProcess.kill` until the
  process is reaped and its cgroup removed.
* **per move** — ``K`` round trips through the running Python echo bot: one realistic ``turn``
  line written, the line read back; µs per round trip.  The pipes are the same inside the
  sandbox, so this says whether anything else is in the way.
* **match** — a sport match, greedy_bot against first_bot (4 processes), ``N`` deals per
  orientation, through :func:`referee.matches.match.run_match` as the CLI plays it; wall seconds and
  µs per move, start-ups included.

* **private copies** — what giving a process its own copy of its folder costs
  (:class:`referee.bots.sandbox._Copies`): ms to copy sample_bots/ (a typical bot's folder) and a
  folder holding a 16 MiB file.

Figures are medians over ``R`` repeats; the last column is sandboxed ÷ plain.  Nothing here
asserts anything.  Needs bubblewrap (``apt-get install bubblewrap``).

``python -m bench.sandbox --pagecache [--seeds S]`` measures instead what is left of the page
cache as a channel (issue 42 item 4): tests/hostile_bots/pagecache.py in its ``time`` mode (read
times only: a cached page comes fast, one from the disk slow) publishes each hand by reading pages
of a file and judges the other seats' hands by timing reads, against first_bot, sandboxed, with
``-j 2``, in block and sport, concurrent and strict, through a system file every bot can read (a
JDK's ``java.base.jmod`` or another large library; its cached pages dropped first) and through a
sparse file of its own folder (which each process now sees as a copy of its own).  It prints the
bits learned per deal: the mutual information between what the timing said and the hand that was
published there, over the tiles the judging process does not hold, summed over the seats it
judged and averaged over deals (a whole 2-player hand is 16.6 bits).

``python -m bench.sandbox --counters [--seeds S] [--user NAME] [--slot-ms MS] [--channels ...]``
measures the counters of the whole machine a bot could signal through (issue 42 item 2):
tests/hostile_bots/machine_counters.py against first_bot in block, ``-j 2`` (its two seatings at
once: the process at seat 0 sends, the one at seat 1, in the other seating, receives), one channel
at a time (``sysinfo()``'s count of threads and its free memory, the inode numbers of new pipes,
the user's pipe-buffer allowance read with ``F_GETPIPE_SZ`` and by filling a pipe), without the
sandbox and in it, as root and (``--user``: the referee run through setpriv) as that ordinary
user.  It prints the bits per reading (the mutual information between the bit sent in a slot of
``--slot-ms``, 100 by default, and the bit read there), the readings, and bits per second.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.process import BotProcess
from referee.bots.sandbox import SandboxUnavailable, find_bwrap
from referee.bots.spawn import Confinement
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

ROOT = Path(__file__).resolve().parent.parent
ECHO = "import sys\nfor line in sys.stdin: sys.stdout.write(line); sys.stdout.flush()\n"
TURN = (b'{"type":"turn","game_number":0,"deal_number":3,"seat":1,"hand":[[0,3],[1,4],[2,2],[3,6],[5,5]],'
        b'"ends":{"left":4,"right":6},"legal":[{"tile":[1,4],"end":"left"},{"tile":[3,6],"end":"right"}],'
        b'"bazaar":0,"time_ms":5000,"bank_ms":null}\n')
MODES = ("plain", "sandbox")


async def start_and_echo(argv: list[str], sandbox: bool, scratch: Path, round_trips: int) -> tuple[float, float, float]:
    """Seconds to the first echo, µs per round trip afterwards, seconds to kill."""
    async with trio.open_nursery() as nursery:
        t0 = time.perf_counter()
        bot = await BotProcess.start(nursery, argv, name="echo", stderr_path=scratch / "echo.stderr.log",
                                     confinement=Confinement(sandbox=sandbox))
        await bot.send(b"hello\n")
        await bot.read_line()
        started = time.perf_counter() - t0
        per_move = 0.0
        if round_trips:
            t1 = time.perf_counter()
            for _ in range(round_trips):
                await bot.send(TURN)
                await bot.read_line()
            per_move = (time.perf_counter() - t1) / round_trips * 1e6
        t2 = time.perf_counter()
        await bot.kill()
        return started, per_move, time.perf_counter() - t2


async def match(sandbox: bool, scratch: Path, deals: int) -> tuple[float, float]:
    """Wall seconds of a sport match and µs per move."""
    bots = [Bot(name, [sys.executable, str(ROOT / "sample_bots" / script)], Confinement(sandbox=sandbox))
            for name, script in (("greedy", "greedy_bot.py"), ("first", "first_bot.py"))]
    v = variant("sport")
    log = scratch / f"match-{sandbox}.jsonl"
    spec = MatchSpec(v, bots, 4, v.resolve_options(4), deals=deals, seed=1, tc=TimeControl(startup=30, move=10),
                     log_path=log, stderr_dir=scratch / f"match-{sandbox}.stderr")
    t0 = time.perf_counter()
    await run_match(spec)
    wall = time.perf_counter() - t0
    moves = sum(1 for line in log.read_text().splitlines() if '"k":"play"' in line.replace(" ", ""))
    return wall, wall / max(moves, 1) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sandbox", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="measurements of each figure, interleaved (default 7)")
    ap.add_argument("--round-trips", type=int, default=5000, help="round trips per per-move measurement (default 5000)")
    ap.add_argument("--deals", type=int, default=8, help="sport deals per orientation in the match (default 8)")
    ap.add_argument("--pagecache", action="store_true", help="measure the page cache as a timing channel instead")
    ap.add_argument("--seeds", type=int, default=2, help="--pagecache, --counters: matches per row, each its own seed (default 2)")
    ap.add_argument("--counters", action="store_true", help="measure the machine's counters as channels instead")
    ap.add_argument("--user", help="--counters: also run the referee as this ordinary user (when run as root)")
    ap.add_argument("--slot-ms", type=int, default=100, help="--counters: the length of a slot, a bit sent and read (default 100)")
    ap.add_argument("--channels", default=",".join(CHANNELS), help=f"--counters: which (default {','.join(CHANNELS)})")
    args = ap.parse_args(argv)
    try:
        find_bwrap()
    except SandboxUnavailable as exc:
        raise SystemExit(f"bench.sandbox: {exc}") from None
    if args.pagecache:
        return pagecache(args.seeds)
    if args.counters:
        return counters(args.seeds, args.user, args.channels.split(","), args.slot_ms)

    figures: dict[tuple[str, str], list[float]] = {}

    def add(row: str, mode: str, value: float) -> None:
        figures.setdefault((row, mode), []).append(value)

    cat = ["/bin/cat"]
    python = [sys.executable, "-S", "-c", ECHO]

    async def run_all(scratch: Path) -> None:
        for _ in range(args.repeat):
            for mode in MODES:
                sandbox = mode == "sandbox"
                started, _, killed = await start_and_echo(cat, sandbox, scratch, 0)
                add("start-up, cat (ms)", mode, started * 1e3)
                add("teardown, cat (ms)", mode, killed * 1e3)
                started, per_move, _ = await start_and_echo(python, sandbox, scratch, args.round_trips)
                add("start-up, python (ms)", mode, started * 1e3)
                add("round trip, python echo (µs)", mode, per_move)
                wall, per = await match(sandbox, scratch, args.deals)
                add(f"match, {args.deals * 2} deals (s)", mode, wall)
                add("match, per move incl. start-ups (µs)", mode, per)
                if sandbox:
                    for label, folder in copy_folders(scratch):
                        add(f"private copy, {label} (ms)", "plain", float("nan"))
                        add(f"private copy, {label} (ms)", "sandbox", copy_ms(folder))

    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        trio.run(run_all, Path(tmp))

    who = "root: a uid per bot" if os.geteuid() == 0 else "an ordinary user: a user namespace per bot"
    print(f"bench.sandbox — {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, as {who}; "
          f"median of {args.repeat}, interleaved")
    rows = list(dict.fromkeys(row for row, _ in figures))
    width = max(len(r) for r in rows)
    print(f"{'':<{width}}  {'plain':>10}  {'sandbox':>10}  {'ratio':>6}")
    for row in rows:
        plain, boxed = (statistics.median(figures[(row, m)]) for m in MODES)
        print(f"{row:<{width}}  {plain:>10.2f}  {boxed:>10.2f}  {boxed / plain if plain else float('nan'):>6.2f}")
    return 0


# -- private copies ---------------------------------------------------------------------------------


def copy_folders(scratch: Path) -> list[tuple[str, Path]]:
    """sample_bots/ as it is, and a bot's folder with a 16 MiB book of random bytes."""
    book = scratch / "book-bot"
    if not book.exists():
        book.mkdir()
        (book / "bot.py").write_text(ECHO)
        (book / "book.bin").write_bytes(os.urandom(16 << 20))
    return [(f"sample_bots/ ({_size_kb(ROOT / 'sample_bots')} KiB)", ROOT / "sample_bots"), ("a folder with a 16 MiB book", book)]


def _size_kb(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) >> 10


def copy_ms(folder: Path) -> float:
    """Milliseconds to make a process's private copy of ``folder`` (and remove it)."""
    from referee.bots.sandbox import _Copies, remove_copies

    copies = _Copies(())
    t0 = time.perf_counter()
    copies.of(folder.resolve())
    took = time.perf_counter() - t0
    remove_copies(copies.folder)
    return took * 1e3


# -- the page cache as a timing channel ---------------------------------------------------------------

PAGECACHE = ROOT / "tests" / "hostile_bots" / "pagecache.py"
GAMES = {"block": ["--variant", "block", "--games", "1"], "sport": ["--variant", "sport", "--deals", "8"]}
_LINE = re.compile(r"pagecache (published|judged) (g\d+d\d+) seat (\d) \[([\d, ]*)\]")


def system_file() -> Path | None:
    """A large file of the system every sandboxed bot can read."""
    for path in [*Path("/usr/lib/jvm").glob("*/jmods/java.base.jmod"), *Path("/usr/lib/x86_64-linux-gnu").glob("libLLVM*.so*"),
                 *Path("/usr/lib/aarch64-linux-gnu").glob("libLLVM*.so*")]:
        if path.is_file() and not path.is_symlink() and path.stat().st_size >= 16 << 20:
            return path
    return None


def drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def bits_per_deal(stderr_dir: Path) -> tuple[float, float, int]:
    """The bits the judgements learned per deal; the same scored against another deal's hands
    (what an estimate of so few tiles finds by chance); how many deals were judged."""
    published: dict[tuple[str, int], set[int]] = {}
    judged: list[tuple[Path, str, int, set[int]]] = []
    own: dict[tuple[Path, str], set[int]] = {}
    for log in stderr_dir.glob("attacker*.stderr.log"):
        for kind, label, seat, tiles in _LINE.findall(log.read_text(errors="replace")):
            found = {int(t) for t in tiles.replace(",", " ").split()}
            if kind == "published":
                published[(label, int(seat))] = found
                own[(log, label)] = found
            else:
                judged.append((log, label, int(seat), found))
    labels = sorted({label for label, _ in published})
    total = chance = 0.0
    deals = set()
    for log, label, seat, guess in judged:
        truth = published.get((label, seat))
        if truth is None:
            continue
        # chance: the same judgement scored against the hand published at another deal
        other = next((published[(x, seat)] for x in labels[labels.index(label) + 1:] + labels if x != label and (x, seat) in published),
                     None)
        universe = [t for t in range(28) if t not in own.get((log, label), set())]
        total += mutual_information(truth, guess, universe)
        chance += mutual_information(other, guess, universe) if other is not None else 0.0
        deals.add((log, label))
    n = max(len(deals), 1)
    return total / n, chance / n, len(deals)


def mutual_information(truth: set[int], guess: set[int], universe: list[int]) -> float:
    """I(truth; guess) over ``universe``, in bits in all (per element × elements)."""
    n = len(universe)
    counts = {(a, b): sum(1 for x in universe if (x in truth) == a and (x in guess) == b) for a in (True, False) for b in (True, False)}
    total = 0.0
    for (a, b), c in counts.items():
        if c:
            pa = sum(v for (x, _), v in counts.items() if x == a) / n
            pb = sum(v for (_, y), v in counts.items() if y == b) / n
            total += c / n * math.log2(c / n / (pa * pb))
    return total * n


def pagecache(seeds: int) -> int:
    shared = system_file()
    print(f"bench.sandbox --pagecache — {platform.node()}, {os.cpu_count()} CPUs, as {'root' if os.geteuid() == 0 else 'a user'}; "
          f"the timing attacker against first_bot, sandboxed, -j 2, {seeds} seeds a row")
    print(f"{'game':<6} {'isolation':<10} {'through':<34} {'bits/deal':>9} {'chance':>7} {'deals':>6}")
    with tempfile.TemporaryDirectory(prefix="bench-pagecache-") as tmp:
        where = Path(tmp)
        where.chmod(0o755)
        home = where / "attacker"
        home.mkdir(mode=0o755)
        shutil.copy(PAGECACHE, home / "attacker.py")
        with open(home / "sparse", "wb") as f:
            f.truncate(120 << 20)
        shutil.copy(ROOT / "sample_bots" / "first_bot.py", where / "first.py")
        for p in (*home.iterdir(), where / "first.py"):
            p.chmod(0o644)
        throughs = [("its own sparse file (a private copy)", home / "sparse")] + ([(str(shared), shared)] if shared else [])
        for game in GAMES:
            for isolation in ("concurrent", "strict"):
                for label, path in throughs:
                    bits = chance = 0.0
                    deals = 0
                    for seed in range(seeds):
                        if path == shared:
                            drop_cache(path)
                        run = where / f"{game}-{isolation}-{deals}-{seed}-{path.name}"
                        log = run / "m.jsonl"
                        done = subprocess.run(
                            [sys.executable, "-m", "referee", "match", f"{sys.executable} {home / 'attacker.py'} time {path}",
                             f"{sys.executable} {where / 'first.py'}", "--name", "attacker", "--name", "first", *GAMES[game],
                             "--sandbox", "--isolation", isolation, "-j", "2", "--seed", str(1000 + seed), "--log", str(log), "-q"],
                            capture_output=True, text=True, cwd=where)
                        if done.returncode != 0:
                            print(f"{game}: the match failed: {done.stderr.strip()[:300]}")
                            return 1
                        b, c, d = bits_per_deal(log.with_name("m.stderr"))
                        bits, chance, deals = bits + b * d, chance + c * d, deals + d
                    n = max(deals, 1)
                    print(f"{game:<6} {isolation:<10} {label[:34]:<34} {bits / n:>9.2f} {chance / n:>7.2f} {deals:>6}")
    return 0


# -- the machine's counters as channels ------------------------------------------------------------

COUNTERS = ROOT / "tests" / "hostile_bots" / "machine_counters.py"
CHANNELS = ("procs", "freeram", "ino", "pipes", "pipefill")
_CHANNEL_LINE = re.compile(r"^channel (sent|read) (\d+) ([01])", re.MULTILINE)
SECONDS = 6


def channel_bits(stderr_dir: Path) -> tuple[float, int, str]:
    """Bits per reading (the mutual information between the bits sent and the bits read in the
    same slots), how many readings, and why not when the attacker was refused."""
    sent: dict[int, int] = {}
    read: dict[int, int] = {}
    refused = ""
    for log in stderr_dir.glob("machine_counters*.stderr.log"):
        text = log.read_text(errors="replace")
        for kind, slot, bit in _CHANNEL_LINE.findall(text):
            (sent if kind == "sent" else read)[int(slot)] = int(bit)
        refused = refused or next((line[len("channel "):] for line in text.splitlines() if line.startswith("channel refused")), "")
    pairs = [(sent[s], read[s]) for s in read if s in sent]
    return binary_information(pairs), len(pairs), refused


def binary_information(pairs: list[tuple[int, int]]) -> float:
    """I(sent; read) in bits per pair, from the pairs' joint frequencies."""
    n = len(pairs)
    counts: dict[tuple[int, int], int] = {}
    for pair in pairs:
        counts[pair] = counts.get(pair, 0) + 1
    total = 0.0
    for (a, b), c in counts.items():
        pa = sum(v for (x, _), v in counts.items() if x == a) / n
        pb = sum(v for (_, y), v in counts.items() if y == b) / n
        total += c / n * math.log2(c / n / (pa * pb))
    return total


def _as_user(name: str) -> tuple[list[str], str, str]:
    """The setpriv prefix that runs a command as the ordinary user ``name``, a Python that user
    may run, and the PYTHONPATH it needs."""
    import pwd
    import sysconfig

    entry = pwd.getpwnam(name)
    python = sys.executable
    if not (os.access(python, os.R_OK) and all(os.stat(p).st_mode & 0o005 == 0o005 for p in Path(python).resolve().parents)):
        python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    prefix = ["/usr/bin/setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups", "--"]
    return prefix, python, os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])


def counters(seeds: int, user: str | None, channels: list[str], slot_ms: int) -> int:
    who = ["root" if os.geteuid() == 0 else "this user"] + ([user] if user and os.geteuid() == 0 else [])
    print(f"bench.sandbox --counters — {platform.node()}, {os.cpu_count()} CPUs; machine_counters.py against first_bot, block, -j 2, "
          f"slots of {slot_ms} ms for {SECONDS} s a match, {seeds} matches a row; pipe-user-pages-soft "
          f"{Path('/proc/sys/fs/pipe-user-pages-soft').read_text().strip()}")
    print(f"{'channel':<8} {'as':<18} {'sandbox':<8} {'bits/reading':>12} {'readings':>8} {'bits/s':>7}  refused")
    with tempfile.TemporaryDirectory(prefix="bench-counters-") as tmp:
        where = Path(tmp)
        where.chmod(0o755)
        shutil.copy(COUNTERS, where / "machine_counters.py")
        shutil.copy(ROOT / "sample_bots" / "first_bot.py", where / "first.py")
        for p in (where / "machine_counters.py", where / "first.py"):
            p.chmod(0o644)
        for channel in channels:
            for name in who:
                prefix: list[str] = []
                python, path = sys.executable, os.environ.get("PYTHONPATH", str(ROOT))
                if name == user and os.geteuid() == 0:
                    prefix, python, path = _as_user(user)
                for sandbox in (False, True):
                    bits = 0.0
                    readings = 0
                    refused = ""
                    for seed in range(seeds):
                        run = where / f"{channel}-{name}-{sandbox}-{seed}"
                        run.mkdir(mode=0o777)
                        run.chmod(0o777)
                        log = run / "m.jsonl"
                        done = subprocess.run(
                            [*prefix, python, "-m", "referee", "match",
                             f"{python} {where / 'machine_counters.py'} {channel} {SECONDS} {slot_ms}", f"{python} {where / 'first.py'}",
                             "--variant", "block", "--games", "1", "--move-time", str(SECONDS * 10), "-j", "2",
                             "--seed", str(4242424242 + seed), "--log", str(log), "-q", *(["--sandbox"] if sandbox else [])],
                            capture_output=True, text=True, cwd=where, env={**os.environ, "PYTHONPATH": path, "HOME": str(where)})
                        if done.returncode != 0:
                            print(f"{channel}: the match failed: {done.stderr.strip()[:300]}")
                            return 1
                        b, n, why = channel_bits(log.with_name("m.stderr"))
                        bits, readings, refused = bits + b * n, readings + n, refused or why
                    per = bits / max(readings, 1)
                    print(f"{channel:<8} {name:<18} {'yes' if sandbox else 'no':<8} {per:>12.2f} {readings:>8} "
                          f"{per * 1000 / slot_ms:>7.1f}  {refused}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
