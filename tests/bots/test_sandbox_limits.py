"""What a sandboxed bot may write and hold (issue 21): nothing but its private /tmp is writable,
its memory cap holds with /tmp and shared memory counted in it, as root and as an ordinary user
(where no cgroup holds the cap), and the two processes of one bot in a pair game cannot pass
each other a note.

The referee runs here as a command (`python -m referee match ... --sandbox`): as root when the
tests run as root, and as an ordinary user (uid 65534, through setpriv) then too, or as the
tests' own user otherwise.  The attacks are tests/hostile_bots/attacker.py's, read back from
its stderr logs.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from pathlib import Path

import pytest
import trio
from support import needs_bwrap
from support.commands import cli

from referee.base.clock import TimeControl
from referee.bots import sandbox as S
from referee.bots.bot import Bot
from referee.bots.spawn import Confinement
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

ROOT = Path(__file__).resolve().parents[2]
ATTACKER = Path(__file__).resolve().parents[1] / "hostile_bots" / "attacker.py"
SAMPLES = ROOT / "sample_bots"
NOBODY = 65534
HANG = 180

pytestmark = [needs_bwrap, pytest.mark.slow]  # real bot processes


@functools.cache
def as_nobody() -> tuple[list[str], dict[str, str]] | str:
    """How to run this referee as an ordinary user from root: the command prefix and the
    environment, or why it cannot be done here."""
    if shutil.which("setpriv") is None:
        return "no setpriv (util-linux) to run the referee as an ordinary user"
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    paths = [str(ROOT), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), "HOME": "/tmp"}
    probe = subprocess.run([*drop, S.find_bwrap(), "--unshare-user", "--ro-bind", "/", "/", "true"], capture_output=True, env=env)
    if probe.returncode != 0:
        return f"bubblewrap does not run as an ordinary user here: {probe.stderr.decode(errors='replace').strip()}"
    # This Python may live where an ordinary user cannot go (under /root): then the system's,
    # with this one's packages, if it is the same version.
    for python in dict.fromkeys((sys.executable, "/usr/bin/python3")):
        # the referee runs its .py bots with its own Python: that must run from inside too
        check = subprocess.run([*drop, python, "-c", "import subprocess, sys; subprocess.run([sys.executable, '-c', "
                                "'import referee.commands, trio, msgspec, typer'], check=True)"], capture_output=True, env=env)
        if check.returncode == 0:
            return [*drop, python], env
    return "no Python an ordinary user may run with this referee's packages"


@pytest.fixture(params=["root", "ordinary user"])
def referee(request):
    """Runs ``referee ARGS`` as that user in a folder of its own (``.work``), returns the
    completed process; bots are copied into ``work/bots``."""
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("the tests do not run as root")
        prefix, env = [sys.executable], dict(os.environ)
    elif os.geteuid() != 0:
        prefix, env = [sys.executable], dict(os.environ)
    else:
        how = as_nobody()
        if isinstance(how, str):
            pytest.skip(how)
        prefix, env = how
    work = Path(tempfile.mkdtemp(prefix="referee-sandbox-test-"))
    work.chmod(0o755)
    (work / "bots").mkdir()
    for bot in (ATTACKER, SAMPLES / "first_bot.py", SAMPLES / "random_bot.py", SAMPLES / "random_bot.js"):
        shutil.copy(bot, work / "bots")
    if prefix[0] == "setpriv":
        for p in (work, *work.rglob("*")):
            os.chown(p, NOBODY, NOBODY)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*prefix, "-m", "referee", *args], cwd=work, env=env, capture_output=True, text=True, timeout=HANG)

    run.work = work
    run.user = request.param
    yield run
    shutil.rmtree(work, ignore_errors=True)


def match(referee, attack: list[str], *options: str) -> list[str]:
    """A sport match of the attacker against first_bot in the sandbox; the attacker's lines."""
    work = referee.work
    r = referee("match", f"bots/attacker.py {' '.join(attack)}", "bots/first_bot.py", "--sandbox", "--deals", "4",
                "--move-time", "30", "--startup-time", "30", "--log", "logs/m.jsonl", "-q", *options)
    assert r.returncode in (0, 5), r.stdout + r.stderr  # 5: a bot lost on faults (the attack cost it)
    return [line for p in sorted((work / "logs" / "m.stderr").glob("attacker*.stderr.log"))
            for line in p.read_text(errors="replace").splitlines() if line.startswith("attack ")]


def test_nothing_but_tmp_is_writable(referee):
    """Not the root bwrap builds, not the folders it makes for the parents of what it shows,
    not /dev nor /dev/shm, not the bot's own folder.  (The folders made inside the private /tmp
    for a bot that lives in the machine's /tmp are the user's own as an ordinary user, and
    writable: they are in its /tmp, counted in its size and seen by no other process.)"""
    lines = match(referee, ["write"])
    written = [line for line in lines if "SUCCEEDED" in line]
    assert written and all(re.search(r"\(/tmp(/[^/:]+)?: wrote", line) for line in written), lines
    assert any("(/tmp: wrote" in line for line in written), lines
    refused = {line.split("(", 1)[1].split(":")[0] for line in lines if "refused" in line}
    assert {"/", "/dev", "/dev/shm", str(referee.work / "bots")} <= refused, lines
    # the folders the sandbox made above the referee's packages (which it shows) were tried
    assert {str(p) for p in ROOT.parents if p != Path("/") and not p.is_relative_to("/tmp")} <= refused, lines


def holdings(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for line in lines if (m := re.search(r"holds (\d+) MiB", line))]


def test_the_memory_cap_counts_tmp_and_shared_memory(referee):
    """A bot filling /tmp, then memfd files and System V shared memory, then its heap, holds no
    more than its cap in all."""
    lines = match(referee, ["fill", "1024"], "--memory-mb", "192")
    held = holdings(lines)
    assert held and max(held) <= 192, lines
    assert any("/tmp: No space left on device" in line for line in lines), lines  # it did fill /tmp...
    assert max(held) >= 100, lines  # ...and then held real memory
    if referee.user == "ordinary user" and os.geteuid() == 0:  # uid 65534: no cgroup, so an address-space limit
        assert any("memfd: Function not implemented" in line for line in lines), lines
        assert any("shmget: Function not implemented" in line for line in lines), lines
        assert any("MemoryError" in line for line in lines), lines


@pytest.mark.slow
def test_the_default_memory_cap_holds(referee):
    lines = match(referee, ["fill", "2048"])
    held = holdings(lines)
    assert held and max(held) <= S.DEFAULT_MEMORY_MB, lines
    assert max(held) >= S.DEFAULT_MEMORY_MB // 2, lines


def play_clean(referee, *bots: str) -> None:
    """A sandboxed match of ``bots`` under the default cap, without a fault."""
    log = f"logs/{uuid.uuid4().hex}"
    r = referee("match", *bots, "--sandbox", "--deals", "8", "--log", f"{log}.jsonl", "--json", f"{log}.json")
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads((referee.work / f"{log}.json").read_text())
    assert result["faults"] == [], result["faults"]


@pytest.mark.slow
def test_the_sample_bots_play_in_the_sandbox_under_the_default_cap(referee):
    """Python, node (whose runtime reserves the most address space) and C sample bots."""
    if shutil.which("node") is None:
        pytest.skip("no node here")
    play_clean(referee, "bots/random_bot.js", "bots/random_bot.py")
    if shutil.which("cc") is not None and shutil.which("make") is not None:
        subprocess.run(["make", "-s", "-C", str(SAMPLES / "c"), f"OUT={referee.work / 'bots'}"], check=True, timeout=HANG)
        (referee.work / "bots" / "random_bot").chmod(0o755)
        play_clean(referee, "bots/random_bot", "bots/first_bot.py")


@pytest.mark.slow
def test_a_jvm_given_its_flags_plays_under_the_default_cap(referee):
    """PROTOCOL.md's flags for a JVM where the cap is an address-space limit (and a memory
    cgroup, where there is one, needs none)."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no javac and java here (apt-get install default-jdk-headless)")
    from tests.bots.test_sandbox_fairplay import JAVA_BOT

    classes = referee.work / "bots"
    (classes / "Main.java").write_text(JAVA_BOT)
    subprocess.run(["javac", "Main.java"], cwd=classes, check=True, timeout=HANG)
    for p in classes.iterdir():
        p.chmod(0o755 if p.is_dir() else 0o644)
    play_clean(referee, f"java -XX:+UseSerialGC -Xmx256m -XX:CompressedClassSpaceSize=64m -cp {classes} Main", "bots/first_bot.py")


@pytest.mark.slow
def test_check_says_when_the_memory_cap_is_why(tmp_path):


    (tmp_path / "code").mkdir()
    for p in (tmp_path, tmp_path / "code"):
        p.chmod(0o755)
    bot = tmp_path / "code" / "big.py"
    big = S.DEFAULT_MEMORY_MB + 128
    bot.write_text(f"ballast = b'x' * ({big} << 20)\n" + (SAMPLES / "first_bot.py").read_text())
    r = cli("check", str(bot), "--sandbox", "--variant", "sport", "--deals", "1", "--log-dir", str(tmp_path / "check"))
    assert r.exit_code == 3, r.stdout
    assert "it fails only because of the sandbox" in r.stdout
    assert "it needs more memory than the sandbox's cap" in r.stdout, r.stdout


async def test_a_partner_cannot_pass_a_note(tmp_path):
    """The two processes of one bot in a sport match: what one writes in $TMPDIR, /tmp, $HOME,
    /dev/shm or its folder, the other never finds."""
    bots = tmp_path / "bots"
    bots.mkdir()
    for p in (tmp_path, bots):
        p.chmod(0o755)
    shutil.copy(ATTACKER, bots / "attacker.py")
    spec = MatchSpec(variant("sport"), [Bot("attacker", [sys.executable, str(bots / "attacker.py"), "note"], Confinement(sandbox=True)),
                                        Bot("honest", [sys.executable, str(SAMPLES / "first_bot.py")], Confinement(sandbox=True))],
                     4, variant("sport").resolve_options(4), deals=4, seed=3, tc=TimeControl(startup=30, move=10),
                     log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "stderr")
    with trio.fail_after(HANG):
        await run_match(spec)
    logs = {p.name: p.read_text() for p in (tmp_path / "stderr").glob("attacker*.stderr.log")}
    assert len(logs) == 4, logs  # both partners, in each of the two seatings
    for name, text in logs.items():
        assert "attack note: wrote in /tmp" in text, (name, text)  # a note was left...
        assert "attack note: refused" in text and "SUCCEEDED" not in text, (name, text)  # ...and never found
