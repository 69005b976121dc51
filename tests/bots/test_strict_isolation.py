"""Strict isolation (issue 32 item 1, PROTOCOL.md "Fair play"): only the process whose turn it
is runs.  tests/fair_bots/spinner.py spins on a thread and counts the processor time it gets
between answering a turn and being sent the next one, against a bot that thinks 50 ms a move;
concurrent (the control) it gets about all of that time, strict nearly none.  Both freezers are
tried: the cgroup's (as root) and SIGSTOP of the bot's process tree (as an ordinary user, who
has no cgroup).  Every match passes ``--seed``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import time
import uuid
from pathlib import Path

import pytest

from referee.bots.sandbox import SETPRIV
from tests.bots.test_sandbox_channels import USER, place, play_as, user, user_python  # noqa: F401 - fixtures

FAIR = Path(__file__).resolve().parents[1] / "fair_bots"
SLOW = """\
import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "slow", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.05)
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
"""

pytestmark = pytest.mark.slow  # real bot processes


#: How long the slow bot thinks a move while the spinner should be frozen.  The spinner still gets
#: the moments between its answer and its freezing, which a loaded machine stretches (tens of ms
#: at a load of 25): the longer the think, the smaller their share.
THINK = 0.1


def spin_share(where: Path, isolation: str, sandbox: bool, as_user=None) -> float:
    """The processor time the spinner got between its turns, as a share of the time they took."""
    shutil.copy(FAIR / "spinner.py", where / "spinner.py")
    (where / "slow.py").write_text(SLOW)
    for p in where.iterdir():
        p.chmod(0o644)
    stderr_dir = play_as(where, ["spinner.py", f"slow.py {THINK}"], ["--variant", "block", "--games", "1", "--isolation", isolation],
                         sandbox=sandbox, as_user=as_user)
    cpu = wall = 0.0
    for log in stderr_dir.glob("spinner*.stderr.log"):
        last = re.findall(r"between_cpu_ms=([\d.]+) between_wall_ms=([\d.]+)", log.read_text())[-1]
        cpu, wall = cpu + float(last[0]), wall + float(last[1])
    assert wall > 1000, wall  # the slow bot thought for seconds in all
    return cpu / wall


@pytest.mark.parametrize("sandbox", [False, True])
def test_a_process_not_on_turn_gets_no_processor_time(place, sandbox):  # noqa: F811
    # The control: concurrent, it thinks on the opponent's time.  Its share is what the machine
    # gives it (about 1 when idle, 0.23 seen at a load of 15 on 2 cores), so strict is compared
    # with it, measured in the same run.
    control = spin_share(place, "concurrent", sandbox)
    (place / "strict").mkdir(mode=0o777)
    strict = spin_share(place / "strict", "strict", sandbox)
    # Strict gets only the moments between its answer and its freezing, which a loaded machine
    # stretches (0.09 against a control of 0.30 at a load of 10 with a 50 ms think; 0.20 against
    # 0.68 in CI at a load of about 25).  No fixed bound holds at every load: the control, measured
    # in the same run, is the yardstick, and a strict that freezes nothing gets what it gets.
    assert strict < control / 2, (strict, control)


def test_strict_isolation_without_a_cgroup_freezer_is_refused_in_one_line(place, user):  # noqa: F811
    """As an ordinary user (no cgroup of its own) strict would be a SIGSTOP of the process tree,
    which a setsid daemon with its descriptors closed escapes: it is refused, saying what it needs."""
    if user is None:
        pytest.skip("the tests run as an ordinary user: see the test below")
    (place / "slow.py").write_text(SLOW)
    (place / "slow.py").chmod(0o644)
    for sandbox in (True, False):
        with pytest.raises(AssertionError, match=r"--isolation strict freezes each bot's processes in a cgroup") as refused:
            play_as(place, ["slow.py", "slow.py"], ["--variant", "block", "--games", "1", "--isolation", "strict"],
                    sandbox=sandbox, as_user=user)
        assert "delegated cgroup v2" in str(refused.value)
        assert "Traceback" not in str(refused.value)
        shutil.rmtree(place / "logs")


# -- what a bot leaves behind (issue 42 item 3) --------------------------------------------------

DAEMON = """\
import json, os, sys
token = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if os.fork() == 0:  # a daemon: its own session, every descriptor closed, orphaned
            os.setsid()
            if os.fork() == 0:
                os.closerange(0, 1024)
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", token])
            os._exit(0)
        os.wait()
        print(json.dumps({"type": "hello", "name": "daemon", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
"""


def daemons(token: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    words = f.read().split(b"\0")
            except OSError:
                continue
            if len(words) >= 2 and words[-2] == token.encode() and any(b"time.sleep(600)" in w for w in words):
                found.append(int(entry.name))
    return found


def gone(token: str) -> list[int]:
    """The daemons still alive once the kernel has had a moment to finish killing them."""
    for _ in range(100):
        left = [p for p in daemons(token) if _state(p) not in ("Z", None)]
        if not left:
            return []
        time.sleep(0.05)
    return left


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0].decode()
    except OSError:
        return None


@pytest.mark.parametrize(("sandbox", "isolation", "as_a_user"), [
    (False, "concurrent", False), (False, "strict", False), (True, "concurrent", False), (True, "strict", False),
    (False, "concurrent", True), (True, "concurrent", True)])
def test_a_setsid_daemon_with_its_descriptors_closed_dies_with_its_match(place, user, sandbox, isolation, as_a_user):  # noqa: F811
    """Every process of the daemon bot leaves one behind (every seating, every restart); none is
    left once the match is over: as root (a cgroup holds it) and as a user (no cgroup: the PID
    namespace of the sandbox, or the referee's subreaping without it)."""
    if as_a_user and user is None:
        pytest.skip("the tests run as an ordinary user already")
    token = f"referee-daemon-{uuid.uuid4().hex}"
    (place / "daemon.py").write_text(DAEMON)
    (place / "first.py").write_text((FAIR.parent.parent / "sample_bots" / "first_bot.py").read_text())
    for p in place.iterdir():
        p.chmod(0o644)
    play_as(place, [f"daemon.py {token}", "first.py"], ["--variant", "block", "--games", "1", "--isolation", isolation],
            sandbox=sandbox, as_user=user if as_a_user else None)
    assert not gone(token), daemons(token)


def test_a_strict_league_without_a_cgroup_freezer_is_refused_in_one_line(place, user):  # noqa: F811
    """A league is strict unless its file says otherwise: as an ordinary user it is refused before
    any match, in one line naming the league file and the way out."""
    if user is None:
        pytest.skip("the tests run as an ordinary user: see the test above")
    (place / "slow.py").write_text(SLOW)
    (place / "slow.py").chmod(0o644)
    league = place / "l.toml"
    league.write_text('name = "l"\nseed = 1234567890123456789012\nsandbox = false\n\n[game]\nvariant = "block"\ngames = 1\n\n'
                      f'[[bot]]\nname = "a"\ncommand = "{place / "slow.py"}"\n\n[[bot]]\nname = "b"\ncommand = "{place / "slow.py"}"\n')
    league.chmod(0o644)
    python, path = user_python(), [str(FAIR.parent.parent), sysconfig.get_paths()["purelib"]]
    uid, gid = user
    done = subprocess.run([SETPRIV, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", python, "-m", "referee", "league", "run",
                           str(league), "-q"], capture_output=True, text=True, cwd=place, timeout=300,
                          env={"PATH": os.environ["PATH"], "HOME": str(place), "PYTHONPATH": os.pathsep.join(path)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "delegated cgroup v2" in done.stderr and 'isolation = "concurrent"' in done.stderr
    assert not list(place.glob("l-logs/*.jsonl"))  # no match was played


async def test_a_cluster_worker_without_a_cgroup_freezer_refuses_a_strict_league(tmp_path, monkeypatch):
    """A cluster checks every worker before a league (the probe): one that cannot freeze says so,
    rather than play a weaker strict."""
    import dataclasses

    from referee.bots import cgroups
    from tournaments.config import load_league
    from tournaments.runner import make_job
    from tournaments.worker import probe

    first = FAIR.parent.parent / "sample_bots" / "first_bot.py"
    (tmp_path / "l.toml").write_text('name = "l"\nsandbox = false\n\n[game]\nvariant = "block"\ngames = 1\n\n'
                                     f'[[bot]]\nname = "a"\ncommand = "{first}"\n\n[[bot]]\nname = "b"\ncommand = "{first}"\n')
    league = load_league(tmp_path / "l.toml")
    job = make_job(dataclasses.replace(league, seed=1), ["a", "b"], tmp_path / "probe.jsonl", tmp_path / "stderr")
    assert await probe(job) == []
    monkeypatch.setattr(cgroups, "freezer_missing", lambda: cgroups.STRICT_NEEDS.format("may make no cgroup"))
    refused = await probe(job)
    assert len(refused) == 1 and "cannot play strict" in refused[0] and "delegated cgroup v2" in refused[0], refused
