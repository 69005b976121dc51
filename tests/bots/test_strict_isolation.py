"""Strict isolation (issue 32 item 1, PROTOCOL.md "Fair play"): only the process whose turn it
is runs.  tests/fair_bots/spinner.py spins on a thread and counts the processor time it gets
between answering a turn and being sent the next one, against a bot that thinks 50 ms a move;
concurrent (the control) it gets about all of that time, strict nearly none.  Both freezers are
tried: the cgroup's (as root) and SIGSTOP of the bot's process tree (as an ordinary user, who
has no cgroup).  Every match passes ``--seed``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.bots.test_sandbox_channels import USER, place, play_as, user  # noqa: F401 - fixtures

FAIR = Path(__file__).resolve().parents[1] / "fair_bots"
SLOW = """\
import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "slow", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        time.sleep(0.05)
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
"""

pytestmark = pytest.mark.slow  # real bot processes


def spin_share(where: Path, isolation: str, sandbox: bool, as_user=None) -> float:
    """The processor time the spinner got between its turns, as a share of the time they took."""
    shutil.copy(FAIR / "spinner.py", where / "spinner.py")
    (where / "slow.py").write_text(SLOW)
    for p in where.iterdir():
        p.chmod(0o644)
    stderr_dir = play_as(where, ["spinner.py", "slow.py"], ["--variant", "block", "--games", "1", "--isolation", isolation],
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
    # with it, measured in the same run, as well as held under a fixed bound.
    control = spin_share(place, "concurrent", sandbox)
    (place / "strict").mkdir(mode=0o777)
    strict = spin_share(place / "strict", "strict", sandbox)
    # Strict gets only the moments between its answer and its freezing, which a loaded machine
    # stretches (0.09 against a control of 0.30 at a load of 10; ~0.01-0.05 at lighter loads;
    # 0.154 against 0.63 once in CI, beside the rest of the suite).  The bound that has teeth is
    # the control's half: a strict that freezes nothing gets what the control gets.
    assert strict < 0.2 and strict < control / 2, (strict, control)


def test_strict_isolation_without_a_cgroup_stops_the_process_tree(place, user):  # noqa: F811
    if user is None:
        pytest.skip("the tests run as an ordinary user: the test above tried this freezer")
    assert spin_share(place, "strict", True, as_user=user) < 0.15  # the moments between its answer and its freezing (measured ~0.01-0.05 under load)
