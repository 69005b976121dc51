"""No channel between two processes of a match (issue 32 items 1 and 2), attacked by
tests/hostile_bots/spy.py: each process of the spy publishes its hand through the kernel (locks
on the files of its folder, inotify, System V and POSIX IPC) and looks for what the others
published; in a duplicate match the process of a later seating would learn the opponent's hand
from the process of an earlier one, and in sport each would learn its partner's.

The spy plays sandboxed in block (2 players), a 3-bot draw, mexican_train with 4 seats and
sport (partners), through every kind of lock and inotify, as root and as an ordinary user;
without the sandbox (the control, as either) the same spy learns hands, so the tests can fail.  Every match passes ``--seed``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import needs_bwrap

from referee.bots import sandbox as S

ROOT = Path(__file__).resolve().parents[2]
SPY = Path(__file__).resolve().parents[1] / "hostile_bots" / "spy.py"
FIRST = ROOT / "sample_bots" / "first_bot.py"
USER = "referee-fairplay"
HANG = 300

pytestmark = [needs_bwrap, pytest.mark.slow]  # real bot processes

#: (variant, its options on the command line, how many first_bot opponents)
GAMES = {
    "block": (["--variant", "block", "--games", "1"], 1),
    "draw, 3 bots": (["--variant", "draw", "--games", "1"], 2),
    "mexican_train, 4 seats": (["--variant", "mexican_train", "--games", "1"], 3),
    "sport": (["--variant", "sport", "--deals", "4"], 1),
}
LOCKS = ["flock", "posix", "ofd"]


@pytest.fixture(scope="module")
def user() -> tuple[int, int] | None:
    """An ordinary user to run the referee as (made with useradd when the tests run as root),
    or None when the tests already run as one."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("no useradd here to make an ordinary user to run the referee as")
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True,
                       capture_output=True)
        entry = pwd.getpwnam(USER)
    return entry.pw_uid, entry.pw_gid


def user_python() -> str:
    """A Python of this version the ordinary user may run (this one may live in root's home),
    with this environment's packages put on its path."""
    if os.access(sys.executable, os.R_OK) and all(os.stat(p).st_mode & 0o005 == 0o005 for p in Path(sys.executable).resolve().parents):
        return sys.executable
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.access(system, os.X_OK):
        pytest.skip(f"this Python lies where an ordinary user cannot run it, and there is no {system}")
    return system


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder every user may enter, and the ordinary user write (pytest's own are root's)."""
    where = Path(tempfile.mkdtemp(prefix="referee-channels-"))
    where.chmod(0o777)
    yield where
    shutil.rmtree(where, ignore_errors=True)


def spy_folder(where: Path) -> Path:
    """The spy's program and its files, one per deal and tile (up to double-twelve)."""
    home = where / "spy"
    files = home / "tiles"
    files.mkdir(parents=True)
    shutil.copy(SPY, home / "spy.py")
    for g in range(2):
        for d in range(24):
            for a in range(13):
                for b in range(a, 13):
                    (files / f"g{g}d{d}_{a}_{b}").touch()
    for p in (home, files, *files.iterdir(), home / "spy.py"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return home


def play(where: Path, channel: str, game: str, *, sandbox: bool, as_user: tuple[int, int] | None = None) -> list[str]:
    """Play the spy against first_bot (copies of it, one per seat the game needs) and return
    every ``attack`` line of the spy's processes."""
    home = spy_folder(where)
    options, opponents = GAMES[game]
    others = []
    for i in range(opponents):
        others.append(str(where / f"first{i}.py"))
        shutil.copy(FIRST, others[-1])
        os.chmod(others[-1], 0o644)
    spy = f"{home / 'spy.py'} {channel} {home / 'tiles'}"
    stderr_dir = play_as(where, [spy, *others], options, sandbox=sandbox, as_user=as_user)
    lines = [line for p in sorted(stderr_dir.glob("spy*.stderr.log")) for line in p.read_text(errors="replace").splitlines()
             if line.startswith("attack ")]
    assert lines, f"the spy never tried: {sorted(p.name for p in stderr_dir.iterdir())}"
    return lines


def play_as(where: Path, bots: list[str], options: list[str], *, sandbox: bool, as_user: tuple[int, int] | None = None) -> Path:
    """Run ``referee match`` on ``bots`` (each a Python script and its arguments, in ``where``
    when relative) as root or as the ordinary user ``as_user``, every seating at once (``-j 4``:
    a later seating's process and an earlier one's are alive together, as the attack needs);
    the folder of its stderr logs."""
    log = where / "logs" / "m.jsonl"
    log.parent.mkdir()
    log.parent.chmod(0o777)
    python, path = sys.executable, [str(ROOT)]
    if as_user is not None:
        python, path = user_python(), [str(ROOT), sysconfig.get_paths()["purelib"]]
    command = [python, "-m", "referee", "match", *(f"{python} {b}" for b in bots),
               *options, "--seed", "424242", "--log", str(log), "-q", "-j", "4", *(["--sandbox"] if sandbox else [])]
    env = {"PATH": os.environ["PATH"], "HOME": str(where), "PYTHONPATH": os.pathsep.join(path)}
    if as_user is not None:
        uid, gid = as_user
        command = [S.SETPRIV, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *command]
    r = subprocess.run(command, capture_output=True, text=True, env=env, cwd=where, timeout=HANG)
    assert r.returncode == 0, r.stdout + r.stderr
    return log.with_name("m.stderr")


def learned(lines: list[str]) -> list[str]:
    return [line for line in lines if "SUCCEEDED" in line]


# -- the control: without the sandbox the spy learns hands ---------------------------------------


@pytest.mark.parametrize("channel", [*LOCKS, "inotify"])
@pytest.mark.parametrize("game", ["block", "sport"])
def test_without_the_sandbox_the_spy_learns_hands(place, channel, game):
    assert learned(play(place, channel, game, sandbox=False))


# -- in the sandbox: nothing ---------------------------------------------------------------------


@pytest.mark.parametrize("channel", LOCKS)
@pytest.mark.parametrize("game", list(GAMES))
def test_locks_on_shared_files_pass_nothing_in_the_sandbox(place, channel, game):
    lines = play(place, channel, game, sandbox=True)
    assert not learned(lines), learned(lines)


@pytest.mark.parametrize("game", ["block", "sport"])
def test_inotify_watches_on_the_bots_own_files_pass_nothing_in_the_sandbox(place, game):
    lines = play(place, "inotify", game, sandbox=True)
    assert not learned(lines), learned(lines)


@pytest.mark.parametrize("channel", ["sysv", "mqueue"])
def test_system_v_and_posix_ipc_pass_nothing_in_the_sandbox(place, channel):
    lines = play(place, channel, "sport", sandbox=True)
    assert not learned(lines), learned(lines)


@pytest.mark.parametrize("channel", [*LOCKS, "inotify"])
@pytest.mark.parametrize("game", list(GAMES))
def test_as_an_ordinary_user_nothing_passes_either(place, user, channel, game):
    lines = play(place, channel, game, sandbox=True, as_user=user)
    assert not learned(lines), learned(lines)


@pytest.mark.parametrize(("channel", "game"), [("posix", "draw, 3 bots"), ("ofd", "mexican_train, 4 seats")])
def test_as_an_ordinary_user_without_the_sandbox_the_spy_learns_hands(place, user, channel, game):
    """The control of the test above, as the user: its spy can learn, so learning nothing is
    the sandbox's doing."""
    assert learned(play(place, channel, game, sandbox=False, as_user=user))


def test_a_sandboxed_bot_cannot_make_a_user_namespace(place, user):
    """As root (the bot runs as a uid of its own) and as an ordinary user (inside bwrap's own
    user namespace): unshare(CLONE_NEWUSER) fails.  Outside the sandbox it succeeds (the control)."""
    runs = [("sandboxed", None, True), ("plain", None, False)] + ([("as a user", user, True)] if user is not None else [])
    for label, who, sandbox in runs:
        where = place / label.replace(" ", "-")
        where.mkdir(mode=0o777)
        where.chmod(0o777)
        lines = play(where, "userns", "block", sandbox=sandbox, as_user=who)
        assert bool(learned(lines)) == (not sandbox), (label, lines)
