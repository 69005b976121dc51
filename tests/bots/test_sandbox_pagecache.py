"""Nothing shared between a match's processes (issue 42 items 1 and 2), attacked by
tests/hostile_bots/pagecache.py and tests/hostile_bots/counters.py.

The page-cache attacker publishes each hand by reading pages of a file and looks up the other
seats' hands by telling which pages are cached (fault-around read back through
``/proc/self/pagemap``, the RSS of ``/proc/self/statm``, or getrusage's fault counts): through a
sparse file of its own folder (in block, sport, default and strict, ``-j 2``) and, for two bots of
separate folders colluding at a 3-bot draw, through a large system file both can read.  In the
sandbox every process has its own copy of its own folder (the inodes differ) and no readout is to
be had; without the sandbox (the control) the same attacker learns hands, so the tests can fail.
Its self-test (a child reads a pattern, its parent reads it back) shows the readout itself: 0 bits
sandboxed, about 72 of a possible 72 without.  The counter attacker moves the machine's counters
(AIO events, locked memory, ptys) and reads them back: sandboxed it can neither.  And
tests/hostile_bots/machine_counters.py signals through ``sysinfo()``'s count of the machine's
threads: sandboxed, the referee answers it with constants.  Every match passes ``--seed``.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from referee.bots import sandbox as S
from tests.bots.test_sandbox_channels import place, user, user_python  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots"
FIRST = ROOT / "sample_bots" / "first_bot.py"
HANG = 300
SPARSE_MB = 120

pytestmark = [pytest.mark.skipif(not os.access(S.BWRAP, os.X_OK), reason="bubblewrap is not installed (apt-get install bubblewrap)"),
              pytest.mark.slow]  # real bot processes

GAMES = {
    "block": ["--variant", "block", "--games", "1"],
    "sport": ["--variant", "sport", "--deals", "4"],
    "draw": ["--variant", "draw", "--games", "1"],
}


def system_file() -> Path:
    """A large file of the system every bot can read (the attack of the issue used a JDK's
    ``java.base.jmod``), its cached pages dropped so the control has room to signal."""
    candidates = [*Path("/usr/lib/jvm").glob("*/jmods/java.base.jmod"), *Path("/usr/lib/jvm").glob("*/lib/modules"),
                  *Path("/usr/lib/x86_64-linux-gnu").glob("libLLVM*.so*"), *Path("/usr/lib/aarch64-linux-gnu").glob("libLLVM*.so*")]
    for path in candidates:
        if path.is_file() and not path.is_symlink() and path.stat().st_size >= 16 << 20:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
            return path
    pytest.skip("no system file of 16 MiB or more here to signal through")


def attacker_folder(where: Path, name: str = "pagecache") -> Path:
    """The attacker and a sparse file of its own, in a folder of their own."""
    home = where / name
    home.mkdir(mode=0o755)
    shutil.copy(HOSTILE / "pagecache.py", home / "pagecache.py")
    with open(home / "sparse", "wb") as f:
        f.truncate(SPARSE_MB << 20)
    for p in home.iterdir():
        p.chmod(0o644)
    return home


def match(where: Path, bots: list[str], game: str, *, sandbox: bool, isolation: str = "concurrent",
          as_user: tuple[int, int] | None = None) -> subprocess.CompletedProcess:
    """``referee match`` on ``bots`` (Python scripts with their arguments) with ``-j 2``, as root or
    as the ordinary user ``as_user``."""
    log = where / "logs" / "m.jsonl"
    log.parent.mkdir(exist_ok=True)
    log.parent.chmod(0o777)
    python, path = sys.executable, [str(ROOT)]
    if as_user is not None:
        python, path = user_python(), [str(ROOT), sysconfig.get_paths()["purelib"]]
    command = [python, "-m", "referee", "match", *(f"{python} {b}" for b in bots), *GAMES[game], "--seed", "424242",
               "--log", str(log), "-q", "-j", "2", "--isolation", isolation, *(["--sandbox"] if sandbox else [])]
    env = {"PATH": os.environ["PATH"], "HOME": str(where), "PYTHONPATH": os.pathsep.join(path)}
    if as_user is not None:
        uid, gid = as_user
        command = [S.SETPRIV, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *command]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=where, timeout=HANG)


def lines_of(where: Path, pattern: str, prefix: str) -> list[str]:
    stderr_dir = where / "logs" / "m.stderr"
    return [line for p in sorted(stderr_dir.glob(pattern)) for line in p.read_text(errors="replace").splitlines()
            if line.startswith(prefix)]


def play(where: Path, game: str, mode: str, *, sandbox: bool, isolation: str = "concurrent", as_user=None,
         through: Path | None = None) -> list[str]:
    """The attacker (signalling through its own sparse file, or ``through``) against first_bot;
    its attack lines, after checking every process of it saw a file of its own when sandboxed."""
    home = attacker_folder(where)
    shutil.copy(FIRST, where / "first.py")
    (where / "first.py").chmod(0o644)
    done = match(where, [f"{home / 'pagecache.py'} {mode} {through or home / 'sparse'}", "first.py"], game, sandbox=sandbox,
                 isolation=isolation, as_user=as_user)
    assert done.returncode == 0, done.stdout + done.stderr
    inodes = lines_of(where, "pagecache*.stderr.log", "pagecache inode")
    assert len(inodes) >= 2, inodes
    if sandbox and through is None:
        assert len(set(inodes)) == len(inodes), inodes  # no two processes share the file's pages
    attacks = lines_of(where, "pagecache*.stderr.log", "attack ")
    assert attacks, "the attacker never looked"
    return attacks


def learned(lines: list[str]) -> list[str]:
    return [line for line in lines if "SUCCEEDED" in line]


# -- the control: without the sandbox the attacker learns hands ------------------------------------


@pytest.mark.parametrize("mode", ["pagemap", "statm"])
def test_without_the_sandbox_the_page_cache_carries_hands(place, mode):  # noqa: F811
    assert learned(play(place, "block", mode, sandbox=False))


@pytest.mark.parametrize("landlock", [True, False], ids=["proc closed by Landlock", "proc of constant files"])
@pytest.mark.parametrize("mode", ["pagemap", "statm", "rusage"])
def test_the_self_test_reads_a_pattern_without_the_sandbox_and_nothing_in_it(place, monkeypatch, mode, landlock):  # noqa: F811
    """Both ways of closing /proc: Landlock where the kernel has it (for a bot behind a shell),
    else a /proc of a few constant files."""
    if landlock and not S._landlock():
        pytest.skip("this kernel has no Landlock")
    monkeypatch.setattr(S, "_landlock", lambda: landlock)
    home = attacker_folder(place)
    argv = [sys.executable, str(home / "pagecache.py"), "selftest", mode, str(home / "sparse")]
    # The control: the attack works without the sandbox.  A busy machine's page reclaim or
    # faults can spoil one reading (4.8 bits once, under load), so it has three tries; the
    # sandboxed half, the promise, has one.
    for _ in range(3):
        plain = subprocess.run(argv, capture_output=True, text=True, timeout=HANG, check=True).stdout
        if float(re.search(r"([\d.]+) bits", plain)[1]) > 40:
            break
    assert float(re.search(r"([\d.]+) bits", plain)[1]) > 40, plain
    if landlock:
        argv = ["/bin/sh", "-c", 'exec "$@"', "sh", *argv]
    plan = S.sandboxed(argv, cwd=None, env=None)
    assert ("confine.py" in " ".join(plan.argv)) == landlock
    try:
        boxed = subprocess.run(plan.argv, env=plan.env, pass_fds=plan.pass_fds, capture_output=True, text=True, timeout=HANG)
    finally:
        plan.close_fds()
        S.remove_copies(plan.copies)
    assert boxed.returncode == 0, boxed.stderr
    assert "refused" in boxed.stdout and " 0 bits" in boxed.stdout, boxed.stdout


# -- in the sandbox: nothing ---------------------------------------------------------------------


@pytest.mark.parametrize("isolation", ["concurrent", "strict"])
@pytest.mark.parametrize("game", ["block", "sport"])
def test_the_page_cache_of_its_own_file_carries_no_hand(place, game, isolation):  # noqa: F811
    lines = play(place, game, "pagemap", sandbox=True, isolation=isolation)
    assert not learned(lines), learned(lines)


@pytest.mark.parametrize("isolation", ["concurrent", "strict"])
@pytest.mark.parametrize("game", ["block", "sport"])
def test_the_page_cache_of_a_system_file_carries_no_hand(place, game, isolation):  # noqa: F811
    """A file every bot reads alike (the system's is shared, not copied): no readout of its cache."""
    lines = play(place, game, "pagemap", sandbox=True, isolation=isolation, through=system_file())
    assert not learned(lines), learned(lines)


def test_without_the_sandbox_a_system_file_carries_hands(place):  # noqa: F811
    assert learned(play(place, "block", "pagemap", sandbox=False, through=system_file()))


@pytest.mark.parametrize("mode", ["statm", "rusage"])
def test_no_count_of_pages_or_faults_tells_the_cache_either(place, mode):  # noqa: F811
    lines = play(place, "block", mode, sandbox=True)
    assert not learned(lines), learned(lines)


def test_as_an_ordinary_user_the_page_cache_carries_no_hand(place, user):  # noqa: F811
    lines = play(place, "sport", "pagemap", sandbox=True, as_user=user)
    assert not learned(lines), learned(lines)


@pytest.mark.parametrize(("sandbox", "isolation"), [(False, "concurrent"), (True, "concurrent"), (True, "strict")])
def test_two_bots_colluding_through_a_system_file_at_a_draw(place, sandbox, isolation):  # noqa: F811
    """Two attackers of separate folders and first_bot at a 3-bot draw: through a system file
    both read, each would know the other's live hand (the control learns; sandboxed, nothing)."""
    shared = system_file()
    bots = []
    for name in ("a", "b"):
        home = attacker_folder(place, name)
        bots.append(f"{home / 'pagecache.py'} pagemap {shared}")
    shutil.copy(FIRST, place / "first.py")
    (place / "first.py").chmod(0o644)
    done = match(place, [*bots, "first.py"], "draw", sandbox=sandbox, isolation=isolation)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = lines_of(place, "pagecache*.stderr.log", "attack ")
    assert lines, "the attackers never looked"
    assert bool(learned(lines)) == (not sandbox), learned(lines)


# -- the machine's counters ----------------------------------------------------------------------


def counter_lines(where: Path, attacker: str, args: str, game: str, prefix: str, *, sandbox: bool, as_user) -> list[str]:
    """The hostile bot ``attacker`` (as counters.py, with ``args``) against first_bot, as root or
    ``as_user``; the lines of its stderr that start with ``prefix``."""
    shutil.copy(HOSTILE / attacker, where / "counters.py")
    shutil.copy(FIRST, where / "first.py")
    for p in where.iterdir():
        p.chmod(0o644)
    done = match(where, [f"counters.py{args}", "first.py"], game, sandbox=sandbox, as_user=as_user)
    assert done.returncode == 0, done.stdout + done.stderr
    return lines_of(where, "counters*.stderr.log", prefix)


@pytest.mark.parametrize(("sandbox", "as_a_user"), [(False, False), (True, False), (True, True)])
def test_the_machines_counters_carry_nothing_in_the_sandbox(place, user, sandbox, as_a_user):  # noqa: F811
    """The counter attacker reads what another process of the match moved (the control), and in
    the sandbox can neither move nor read anything of the kind, as root or as a user."""
    if as_a_user and user is None:
        pytest.skip("the tests run as an ordinary user already")
    lines = counter_lines(place, "counters.py", "", "sport", "attack ", sandbox=sandbox, as_user=user if as_a_user else None)
    assert lines, "the attacker never looked"
    if sandbox:
        assert not learned(lines), learned(lines)
        for name in ("aio-nr", "pty-nr", "Mlocked"):
            assert any(f"({name}: cannot move it" in line for line in lines), (name, lines)
    else:
        assert learned(lines), lines


# -- the private copies' bound and cleanup -------------------------------------------------------


def test_a_bot_whose_folder_holds_more_than_the_bound_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "COPY_MB", 1)
    home = tmp_path / "big"
    home.mkdir()
    shutil.copy(FIRST, home / "bot.py")
    (home / "book.bin").write_bytes(os.urandom(2 << 20))
    before = set(os.listdir(S.copy_root()))
    with pytest.raises(S.SandboxUnavailable) as refused:
        S.sandboxed([sys.executable, str(home / "bot.py")], cwd=None, env=None)
    message = str(refused.value)
    assert "\n" not in message and "at most 1 MiB" in message and str(home) in message, message
    assert set(os.listdir(S.copy_root())) <= before  # nothing of the half-made copy is left


def test_a_sparse_file_is_copied_as_what_it_holds(tmp_path):
    """The attacker's 120 MiB sparse file passes the 64 MiB bound: holes cost nothing."""
    home = attacker_folder(folder_for(tmp_path))
    with open(home / "sparse", "r+b") as f:
        f.seek(5 << 20)
        f.write(b"data")
    plan = S.sandboxed([sys.executable, str(home / "pagecache.py")], cwd=None, env=None)
    try:
        assert plan.copies is not None
        copy = next(plan.copies.rglob("sparse"))
        assert copy.stat().st_size == SPARSE_MB << 20 and copy.stat().st_blocks * 512 < 1 << 20
        with open(copy, "rb") as f:
            f.seek(5 << 20)
            assert f.read(4) == b"data"
        assert copy.stat().st_ino != (home / "sparse").stat().st_ino
    finally:
        plan.close_fds()
        S.remove_copies(plan.copies)
    assert not plan.copies.exists()


def folder_for(tmp_path: Path) -> Path:
    where = tmp_path / "w"
    where.mkdir(mode=0o755)
    return where


# -- what a sandboxed bot must not see, worked out once per bot (issue 41 item 7) ------------------


def test_a_bots_places_are_worked_out_once_not_once_per_match(tmp_path, monkeypatch):
    """A league of 12 bots: the places of each are looked up once, however many matches ask
    what each must not see; a match with no sandboxed bot asks nothing."""
    from tournaments import runner
    from tournaments.config import load_league

    bots = folder_for(tmp_path)
    text = 'name = "l"\nseed = 1234567890123456789012\n\n[game]\nvariant = "block"\ngames = 1\n\n'
    for i in range(12):
        shutil.copy(FIRST, bots / f"b{i}.py")
        text += f'[[bot]]\nname = "b{i}"\ncommand = "{bots / f"b{i}.py"}"\n' + ("sandbox = false\n" if i >= 10 else "") + "\n"
    (tmp_path / "l.toml").write_text(text)
    league = load_league(tmp_path / "l.toml")
    S.bot_places.cache_clear()
    looked: list[tuple] = []
    real = S.bot_home
    monkeypatch.setattr(S, "bot_home", lambda argv, cwd: looked.append((tuple(argv), cwd)) or real(argv, cwd))
    pairs = [(f"b{i}", f"b{j}") for i in range(10) for j in range(i + 1, 10)]
    hidden = {pair: runner.hidden_from_bots(league, pair) for pair in pairs}
    assert len(looked) == 12, len(looked)  # once per bot, not 45 matches × 12 bots
    assert bots / "b5.py" in hidden[("b0", "b1")] and bots / "b0.py" not in hidden[("b0", "b1")]
    looked.clear()
    S.bot_places.cache_clear()
    assert bots / "b0.py" not in runner.hidden_from_bots(league, ("b10", "b11"))  # neither is sandboxed:
    assert looked == []  # no bot's places are looked up


# -- sysinfo(), answered by the referee ------------------------------------------------------------


@pytest.mark.parametrize(("sandbox", "as_a_user"), [(False, False), (True, False), (True, True)])
def test_sysinfo_tells_a_sandboxed_bot_nothing_of_the_machine(place, user, sandbox, as_a_user):  # noqa: F811
    """machine_counters.py at seat 0 holds 24 more processes in the slots of its random bits and
    its opponent's process in the other seating reads sysinfo()'s count of the machine's
    threads: without the sandbox it reads the machine's (the control: more than one, and moving);
    sandboxed, as root or as a user, every reading is the referee's constant 1, whatever was sent."""
    if as_a_user and user is None:
        pytest.skip("the tests run as an ordinary user already")
    lines = counter_lines(place, "machine_counters.py", " procs 1.5", "block", "channel ", sandbox=sandbox,
                          as_user=user if as_a_user else None)
    values = [int(line.split()[4]) for line in lines if line.startswith("channel read ")]
    assert values and any(line.startswith("channel sent ") for line in lines), lines
    if sandbox:
        assert set(values) == {1}, values
    else:
        assert min(values) > 1, values


def sandboxed_c(folder: Path, name: str, source: str) -> Path:
    """``source`` compiled (with threads) into ``folder``, both readable by a sandboxed bot's uid."""
    if shutil.which("gcc") is None:
        pytest.skip("no gcc here")
    (folder / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-pthread", "-o", str(folder / name), str(folder / f"{name}.c")], check=True)
    folder.chmod(0o755)
    (folder / name).chmod(0o755)
    return folder / name


def test_sysinfo_gives_the_memory_cap_and_the_jvm_sizes_its_heap_from_it(tmp_path):
    """glibc's sysconf(_SC_PHYS_PAGES) reads sysinfo() without looking at the result: answered,
    a C program and a JVM see the bot's memory cap as the machine's memory (and the referee holds
    no descriptor of it once the bot is gone: the suite's leak check)."""
    import trio

    from referee.bots.process import BotProcess
    from referee.bots.spawn import Confinement

    si = sandboxed_c(tmp_path, "si", '#include <errno.h>\n#include <stdio.h>\n#include <unistd.h>\n#include <sys/sysinfo.h>\n'
                      'int main(void) { struct sysinfo s; int r = sysinfo(&s); int bad = sysinfo(NULL) == -1 ? errno : 0;\n'
                      '  printf("%d %lu %lu %u %ld %d\\n", r, s.totalram * s.mem_unit, s.freeram * s.mem_unit, s.procs, sysconf(_SC_PHYS_PAGES), bad);\n'
                      '  return 0; }\n')
    java = shutil.which("java")

    async def lines(argv: list[str]) -> list[bytes]:
        out = []
        async with trio.open_nursery() as nursery:
            bot = await BotProcess.start(nursery, argv, name="si", stderr_path=tmp_path / "si.stderr.log",
                                         confinement=Confinement(sandbox=True, memory_mb=2048))
            try:
                while True:
                    out.append(await bot.read_line())
            except Exception:  # noqa: BLE001 - its end
                pass
            await bot.kill()
        return out

    said = trio.run(lines, [str(si)])
    assert said and said[0].split() == [b"0", b"%d" % (2048 << 20), b"%d" % (2048 << 20), b"1", b"%d" % ((2048 << 20) // os.sysconf("SC_PAGE_SIZE")),
                                    b"%d" % errno.EFAULT], said  # a bad pointer fails as the kernel's own call would
    if java is not None:
        flags = trio.run(lines, [os.path.realpath(java), "-XX:+PrintFlagsFinal", "-version"])
        heap = next(line for line in flags if b" MaxHeapSize " in line)
        assert int(heap.split(b"=")[1].split()[0]) == 512 << 20, heap  # a quarter of 2 GiB


def test_a_bot_that_calls_sysinfo_in_a_loop_is_killed_as_any_other(tmp_path):
    """Eight threads calling sysinfo() without end, each call waiting for the referee's answer
    (and, over 1,000 a second, for its turn): the bot plays its line, is killed, and the referee
    keeps no descriptor of it (the suite's leak check)."""
    import trio

    from referee.bots.process import BotProcess
    from referee.bots.spawn import Confinement

    flood = sandboxed_c(tmp_path, "flood", '#include <pthread.h>\n#include <stdio.h>\n#include <sys/sysinfo.h>\n'
                      'static void *run(void *a) { struct sysinfo s; for (;;) sysinfo(&s); return a; }\n'
                      'int main(void) { pthread_t t[8]; for (int i = 0; i < 8; i++) pthread_create(&t[i], 0, run, 0);\n'
                      '  struct sysinfo s; sysinfo(&s); printf("%u\\n", s.procs); fflush(stdout); run(0); }\n')

    async def main() -> bytes:
        async with trio.open_nursery() as nursery:
            bot = await BotProcess.start(nursery, [str(flood)], name="flood", stderr_path=tmp_path / "flood.stderr.log",
                                         confinement=Confinement(sandbox=True))
            line = await bot.read_line()
            await bot.kill()
            return line

    assert trio.run(main).strip() == b"1"
