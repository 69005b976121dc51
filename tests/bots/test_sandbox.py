"""Untrusted bots: the attacks of tests/hostile_bots/attacker.py, with the sandbox on and off.

With the sandbox every attack is refused or contained, the match goes on to its end, the
honest bot is never charged, and nothing the attacker started is left running.  Without it the
bot still gets a clean environment and its daemons still end with its seat.

These tests need bubblewrap; `.ci/run` installs it, so in CI they run rather than skip.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import trio
from support import alive, needs_bwrap
from support.commands import cli

from referee.base.clock import TimeControl
from referee.base.errors import BotExited, BotNotFound
from referee.bots import sandbox as S
from referee.bots.bot import Bot
from referee.bots.cgroups import BotCgroup
from referee.bots.process import BotProcess
from referee.bots.spawn import Confinement
from referee.conversation import faults as F
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

ROOT = Path(__file__).resolve().parents[2]
ATTACKER = Path(__file__).resolve().parents[1] / "hostile_bots" / "attacker.py"
FIRST = ROOT / "sample_bots" / "first_bot.py"
HANG = 60

pytestmark = [needs_bwrap, pytest.mark.slow]  # real bot processes


def attacker(*args: str, sandbox: bool = True, **conf) -> Bot:
    return Bot("attacker", [sys.executable, str(ATTACKER), *args], Confinement(sandbox=sandbox, **conf))


def honest(sandbox: bool = True) -> Bot:
    return Bot("honest", [sys.executable, str(FIRST)], Confinement(sandbox=sandbox))


async def play(tmp_path: Path, bots: list[Bot], deals: int = 4) -> tuple[object, dict[str, str]]:
    """A sport match (2 bots in pairs, both orientations); the result and each stderr log."""
    spec = MatchSpec(variant("sport"), bots, 4, variant("sport").resolve_options(4), deals=deals, seed=3,
                     tc=TimeControl(startup=20, move=10), log_path=tmp_path / "match.jsonl", stderr_dir=tmp_path / "stderr")
    with trio.fail_after(HANG):
        result = await run_match(spec)
    logs = {p.name: p.read_text(errors="replace") for p in sorted((tmp_path / "stderr").iterdir())}
    return result, logs


def attack_lines(logs: dict[str, str]) -> list[str]:
    return [line for text in logs.values() for line in text.splitlines() if line.startswith("attack ")]


def assert_contained(result, logs: dict[str, str], attack: str) -> None:
    lines = attack_lines(logs)
    assert any(line.startswith(f"attack {attack}: refused") for line in lines), logs
    assert not any("SUCCEEDED" in line for line in lines), lines
    assert not result.interrupted
    honest = result.entries[1]
    assert honest.faults == [] and not honest.forfeited, [f.detail for f in honest.faults]
    assert len(result.deals) == 4 * 2  # every deal, both orientations


def processes_with(token: str) -> list[int]:
    """The attacker's daemons (the referee's and the bot's own command lines hold the token
    too, but not as the last word after the daemon's sleep)."""
    end = b"\x00" + token.encode() + b"\x00"
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    cmdline = f.read()
                    if cmdline.endswith(end) and b"time.sleep(600)" in cmdline:
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


# -- every attack of the issue, sandbox on -----------------------------------------------------


async def test_cannot_read_the_open_match_log(tmp_path):
    result, logs = await play(tmp_path, [attacker("read_log", str(tmp_path / "match.jsonl")), honest()])
    assert_contained(result, logs, "read_log")


async def test_cannot_kill_the_opponent(tmp_path):
    result, logs = await play(tmp_path, [attacker("kill_others"), honest()])
    assert_contained(result, logs, "kill_others")


async def test_cannot_write_into_the_opponents_stdout(tmp_path):
    result, logs = await play(tmp_path, [attacker("write_others"), honest()])
    assert_contained(result, logs, "write_others")


async def test_cannot_signal_the_referee(tmp_path):
    # The referee is this process; the stand-in shares its user and is the one SIGKILL is tried on.
    stand_in = subprocess.Popen(["sleep", "600"])
    try:
        result, logs = await play(tmp_path, [attacker("signal", str(os.getpid()), str(stand_in.pid)), honest()])
        assert_contained(result, logs, "signal")
        assert alive(stand_in.pid)
    finally:
        stand_in.kill()
        stand_in.wait()


async def test_cannot_read_the_referees_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_API_KEY", "s3cret")
    result, logs = await play(tmp_path, [attacker("read_env", "REFEREE_API_KEY"), honest()])
    assert_contained(result, logs, "read_env")


async def test_a_double_forked_daemon_dies_with_the_seat(tmp_path):
    token = f"daemon-{uuid.uuid4().hex}"
    result, logs = await play(tmp_path, [attacker("daemon", token), honest()])
    assert any("attack daemon" in line for line in attack_lines(logs))
    assert processes_with(token) == []
    assert all(e.faults == [] for e in result.entries)


# -- without the sandbox -----------------------------------------------------------------------


async def test_without_the_sandbox_the_environment_is_still_clean(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_API_KEY", "s3cret")
    result, logs = await play(tmp_path, [attacker("read_env", "REFEREE_API_KEY", sandbox=False), honest(False)])
    assert_contained(result, logs, "read_env")
    line = next(x for x in attack_lines(logs) if "read_env" in x)
    assert "'PATH'" in line  # the safe list still comes through


def cgroups_here(memory_mb: int | None = None) -> bool:
    """Whether the referee may make bot cgroups here (with a memory limit, if given)."""
    group = BotCgroup.create(memory_mb)
    if group is None:
        return False
    group.remove()
    return memory_mb is None or group.memory is not None


@pytest.mark.skipif(not cgroups_here(), reason="no cgroup the referee may write to")
async def test_without_the_sandbox_a_daemon_still_dies_with_the_seat(tmp_path):
    token = f"daemon-{uuid.uuid4().hex}"
    _, logs = await play(tmp_path, [attacker("daemon", token, sandbox=False), honest(False)])
    assert any("attack daemon" in line for line in attack_lines(logs))
    assert processes_with(token) == []


# -- what the sandbox is made of ---------------------------------------------------------------


async def run_snippet(tmp_path: Path, code: str, **conf) -> tuple[BotExited, str]:
    """Run a ``python -c`` bot in the sandbox to its end; the error its exit raised, its stderr."""
    async with trio.open_nursery() as nursery:
        bot = await BotProcess.start(nursery, [sys.executable, "-c", code], name="snippet", stderr_path=tmp_path / "err.log",
                                     confinement=Confinement(sandbox=True, **conf))
        async with bot:
            with trio.fail_after(HANG), pytest.raises(BotExited) as info:
                while True:
                    print(await bot.read_line())
    return info.value, (tmp_path / "err.log").read_text()


async def test_a_death_by_signal_reads_as_the_signal(tmp_path):
    exc, _ = await run_snippet(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert exc.returncode == -signal.SIGSEGV
    assert "SIGSEGV" in str(exc)


async def test_processes_are_capped(tmp_path):
    code = """
import os, sys, time
n = 0
try:
    for n in range(100):
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
except OSError as e:
    sys.exit(f"forked {n}, then: {e.strerror}")
sys.exit("forked all 100")
"""
    exc, err = await run_snippet(tmp_path, code, processes=8)
    assert "Resource temporarily unavailable" in err, err
    assert exc.returncode == 1


@pytest.mark.skipif(not cgroups_here(64), reason="no memory cgroup here")
async def test_running_out_of_memory_says_so(tmp_path):
    exc, _ = await run_snippet(tmp_path, "import time\nblocks = []\nwhile True: blocks.append(bytearray(1 << 24))", memory_mb=64)
    assert "out of memory" in str(exc), str(exc)


async def test_the_environment_inside(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_API_KEY", "s3cret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    _, err = await run_snippet(tmp_path, "import os, sys; sys.exit(repr(sorted(os.environ.items())))", env={"BOT_SEED": "7"})
    env = dict(eval(err.strip()))
    env.pop("PWD", None)
    env.pop("LC_CTYPE", None)  # Python's own, from its UTF-8 mode
    assert env == {"PATH": S.SANDBOX_PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "BOT_SEED": "7"}


# -- killing the referee -----------------------------------------------------------------------


def start_referee(tmp_path: Path, token: str, sandbox: bool) -> subprocess.Popen:
    argv = [sys.executable, "-m", "referee", "match", f"{sys.executable} {ATTACKER} daemon {token}", str(FIRST),
            "--deals", "400", "--move-time", "10", "--log", str(tmp_path / "m.jsonl"), "-q"]
    if sandbox:
        argv.append("--sandbox")
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + HANG
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize(("sig", "sandbox"), [(signal.SIGKILL, True), (signal.SIGHUP, True), (signal.SIGHUP, False)])
def test_nothing_outlives_a_killed_referee(tmp_path, sig, sandbox):
    token = f"daemon-{uuid.uuid4().hex}"
    referee = start_referee(tmp_path, token, sandbox)
    try:
        wait_for(lambda: processes_with(token), "the daemon never started")
        referee.send_signal(sig)
        referee.wait(HANG)
        wait_for(lambda: not processes_with(token), "the daemon outlived the referee")
    finally:
        referee.kill()
        referee.wait()


def test_match_without_bwrap_refuses_in_one_line(monkeypatch):

    monkeypatch.setattr(S, "BWRAP", "/nonexistent/bwrap")
    monkeypatch.setattr(S.shutil, "which", lambda name: None)
    result = cli("match", str(FIRST), str(FIRST), "--sandbox")
    assert result.exit_code == 2
    assert "apt-get install bubblewrap" in result.output
    assert len(result.output.strip().splitlines()) == 1


# -- referee check --sandbox -------------------------------------------------------------------


def check(tmp_path: Path, command: str) -> tuple[int, str]:

    result = cli("check", command, "--sandbox", "--variant", "sport", "--deals", "1",
                                      "--log-dir", str(tmp_path / "check"))
    return result.exit_code, result.stdout


def test_check_says_when_only_the_sandbox_is_in_the_way_of_a_writing_bot(tmp_path):
    code, out = check(tmp_path, f"{sys.executable} {ATTACKER} write_own")
    assert code == 3  # it cannot start in the sandbox
    assert "it fails only because of the sandbox" in out
    assert "writes a file outside /tmp" in out


def test_check_says_when_only_the_sandbox_is_in_the_way_of_a_networked_bot(tmp_path):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0)
        code, out = check(tmp_path, f"{sys.executable} {ATTACKER} network {server.getsockname()[1]}")
    assert code == 3
    assert "it fails only because of the sandbox" in out
    assert "it needs the network" in out


def test_check_in_the_sandbox_passes_a_sample_bot(tmp_path):
    code, out = check(tmp_path, str(FIRST))
    assert code == 0, out
    assert "PASS" in out and "sandbox" not in out.split("PASS")[1]


# -- leagues -----------------------------------------------------------------------------------


def league_file(tmp_path: Path, head: str, attack: list[str], bot_extra: str = "") -> Path:
    text = "\n".join([
        head, "[game]", 'variant = "sport"', "deals = 4", "[clock]", "startup = 30.0", "move = 10.0",
        "[[bot]]", 'name = "attacker"', f"command = {[sys.executable, str(ATTACKER), *attack]!r}".replace("'", '"'), bot_extra,
        "[[bot]]", 'name = "honest"', f'command = "{FIRST}"',
    ]) + "\n"
    path = tmp_path / "league.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_league_is_sandboxed_by_default_and_its_database_is_out_of_reach(tmp_path):

    db = tmp_path / "league.db"
    path = league_file(tmp_path, "", ["edit_db", str(db)])
    r = cli("league", "run", str(path), "-q")
    assert r.exit_code == 0, r.output
    logs = {p.name: p.read_text() for p in (tmp_path / "league-logs").rglob("attacker*.stderr.log")}
    lines = attack_lines(logs)
    assert lines and all("refused" in line for line in lines), lines
    table = cli("league", "table", str(path), "--format", "json")
    data = json.loads(table.stdout)
    assert "SANDBOX" not in data["game"]
    honest = next(row for row in data["standings"] if row["bot"] == "honest")
    assert honest["matches"] == 1
    assert not any(honest[kind] for kind in F.KINDS), honest


def test_a_league_without_the_sandbox_says_so_in_its_table_header(tmp_path):
    from tournaments.config import load_league

    path = league_file(tmp_path, "sandbox = false", ["read_env", "X"])
    assert "NO SANDBOX (sandbox = false)" in load_league(path).describe()
    path = league_file(tmp_path, "", ["read_env", "X"], "sandbox = false")
    league = load_league(path)
    assert [b.sandbox for b in league.bots] == [False, True]
    assert "NO SANDBOX for attacker" in league.describe()
    path = league_file(tmp_path, 'sandbox = "yes"', ["read_env", "X"])
    with pytest.raises(Exception, match="sandbox: expected true or false"):
        load_league(path)


@pytest.mark.skipif(os.geteuid() != 0, reason="as an ordinary user the bot keeps the referee's uid")
async def test_files_only_root_may_read_are_refused_in_plain_words(tmp_path):
    bot_dir = tmp_path / "private"
    bot_dir.mkdir(mode=0o700)
    (bot_dir / "bot.py").write_text("print('hi')\n")
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotNotFound, match=r"not readable by other users: chmod a\+rX .*private"):
            await BotProcess.start(nursery, [sys.executable, str(bot_dir / "bot.py")], name="private",
                                   stderr_path=tmp_path / "err.log", confinement=Confinement(sandbox=True))


async def test_in_a_shared_directory_the_log_and_the_other_bots_files_cannot_be_opened(tmp_path):
    import shutil

    shared = tmp_path / "bots"
    shared.mkdir(mode=0o755)
    tmp_path.chmod(0o755)
    shutil.copy(ATTACKER, shared / "attacker.py")
    shutil.copy(FIRST, shared / "first_bot.py")
    log = shared / "match.jsonl"
    for target, name in ((shared / "first_bot.py", "other"), (log, "log")):
        bots = [Bot("attacker", [sys.executable, str(shared / "attacker.py"), "read_log", str(target)], Confinement(sandbox=True)),
                Bot("honest", [sys.executable, str(shared / "first_bot.py")], Confinement(sandbox=True))]
        spec = MatchSpec(variant("sport"), bots, 4, variant("sport").resolve_options(4), deals=4, seed=3,
                         tc=TimeControl(startup=20, move=10), log_path=log, stderr_dir=tmp_path / f"stderr-{name}")
        with trio.fail_after(HANG):
            result = await run_match(spec)
        assert target.stat().st_size > 0  # there is something to read...
        lines = [line for p in (tmp_path / f"stderr-{name}").iterdir() for line in p.read_text().splitlines() if "attack" in line]
        assert lines and all("refused" in line for line in lines), lines  # ...and the bot cannot
        assert result.entries[1].faults == []


@pytest.mark.skipif(os.geteuid() != 0, reason="as an ordinary user the bot keeps the referee's uid")
def test_check_says_when_root_only_files_keep_a_bot_from_the_sandbox(tmp_path):
    import shutil

    shutil.copy(FIRST, tmp_path / "mybot.py")  # pytest's tmp_path is private to root
    code, out = check(tmp_path, str(tmp_path / "mybot.py"))
    assert code == 3
    assert "it fails only because of the sandbox" in out
    assert "chmod -R a+rX" in out
