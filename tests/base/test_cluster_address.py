"""The cluster address and client shared by the referee's commands (referee/base/cluster.py): a bad
address or a scheduler out of reach is one line, a league's error stays a league's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.base.cluster import Address, ClusterUnavailable, parse_address
from referee.base.errors import RefereeError

ROOT = Path(__file__).resolve().parents[2]


def test_addresses_parse() -> None:
    assert parse_address("local:2") == Address(local=2)
    assert parse_address(" tcp://10.0.0.5:8786 ") == Address(scheduler="tcp://10.0.0.5:8786")
    assert str(parse_address("local:3")) == "local:3"


@pytest.mark.parametrize("text", ["local:0", "local:x", "local", "local:257", "", "tcp://a b", "a\0b"])
def test_a_bad_address_is_one_line(text: str) -> None:
    with pytest.raises(ClusterUnavailable) as info:
        parse_address(text)
    assert "\n" not in str(info.value) and "--cluster" in str(info.value)
    assert isinstance(info.value, RefereeError)


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line() -> None:
    """In a process of its own (Dask's client keeps an event loop thread for the process's life)."""
    pytest.importorskip("distributed")
    code = ("import sys\n"
            "from referee.base.cluster import ClusterUnavailable, connect, parse_address\n"
            "try:\n"
            "    with connect(parse_address('tcp://127.0.0.1:1'), timeout=2.0):\n"
            "        pass\n"
            "except ClusterUnavailable as exc:\n"
            "    print(exc); sys.exit(2)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("--cluster tcp://127.0.0.1:1: cannot reach the scheduler")


def test_a_league_keeps_its_own_error() -> None:
    from tournaments.cluster import ClusterError
    from tournaments.cluster import parse_address as league_parse

    with pytest.raises(ClusterError):
        league_parse("local:0")


#: Runs the ``referee`` command with the local cluster's worker preload replaced by ``sys.argv[1]``
#: (a worker runs it as it starts): a worker that ends there fails the cluster's start, every time,
#: as a worker killed while ``--cluster local:2`` starts did by chance (issue 42).
INJECT = """\
import sys
import referee.base.cluster as C
C.IGNORE_SIGINT = sys.argv[1]
if __name__ == "__main__":
    from referee.commands import main
    sys.argv = ["referee", *sys.argv[2:]]
    main()
"""


def processes_with(marker: str) -> list[int]:
    """The processes whose environment holds ``marker``: the run's children, left behind or not."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def run_injected(tmp_path: Path, preload: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "inject.py"
    script.write_text(INJECT)
    marker = f"REFEREE_TEST_MARK={tmp_path.name}"
    env = {**os.environ, "REFEREE_TEST_MARK": tmp_path.name}
    done = subprocess.run([sys.executable, str(script), preload, *args], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert processes_with(marker) == [], "the cluster's processes were left behind"
    return done


@pytest.mark.slow  # two starts of a local cluster that fail, about ten seconds each
def test_a_local_cluster_that_fails_to_start_is_one_line_and_exit_2(tmp_path) -> None:
    """Every worker ends as it starts: the start is tried twice, then one line, exit 2, no
    traceback, and no process of the cluster left."""
    pytest.importorskip("distributed")
    greedy, rand = ROOT / "sample_bots" / "greedy_bot.py", ROOT / "sample_bots" / "random_bot.py"
    done = run_injected(tmp_path, "import os\nos._exit(1)\n", "match", str(greedy), str(rand), "--deals", "4", "--cluster", "local:2",
                        "-q", "--log", str(tmp_path / "m.jsonl"))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: --cluster local:2: the local cluster failed to start, 2 times out of 2 (Nanny failed to start")
    assert lines[0].endswith("a worker process ended as it started; see that the machine has the memory and processes for them")
    assert not (tmp_path / "m.jsonl").exists() or (tmp_path / "m.jsonl").stat().st_size == 0


@pytest.mark.slow
def test_a_league_is_told_the_same_in_its_own_error(tmp_path) -> None:
    """``league run --cluster local:2`` connects through the same start: a ClusterError of one line."""
    pytest.importorskip("distributed")
    code = ("import sys\n"
            "import referee.base.cluster as C\n"
            "C.IGNORE_SIGINT = 'import os\\nos._exit(1)\\n'\n"
            "from tournaments.cluster import ClusterError, connect, parse_address\n"
            "if __name__ == '__main__':\n"
            "    try:\n"
            "        with connect(parse_address('local:2')):\n"
            "            pass\n"
            "    except ClusterError as exc:\n"
            "        print(exc); sys.exit(2)\n")
    script = tmp_path / "league.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith("--cluster local:2: the local cluster failed to start, 2 times out of 2")


@pytest.mark.slow  # a failed start, then a match on the cluster
def test_a_start_that_fails_once_is_tried_again_and_the_match_plays(tmp_path) -> None:
    """The first worker to start ends (it claims a file no other may claim), so the first start
    fails and the second, whose workers find the file claimed, plays the match."""
    pytest.importorskip("distributed")
    claim = tmp_path / "claimed"
    preload = (f"import os\n"
               f"try:\n"
               f"    os.close(os.open({str(claim)!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY))\n"
               f"except FileExistsError:\n"
               f"    pass\n"
               f"else:\n"
               f"    os._exit(1)\n")
    greedy, rand = ROOT / "sample_bots" / "greedy_bot.py", ROOT / "sample_bots" / "random_bot.py"
    done = run_injected(tmp_path, preload, "match", str(greedy), str(rand), "--deals", "4", "--seed", "1", "--cluster", "local:2", "-q",
                        "--log", str(tmp_path / "m.jsonl"))
    assert done.returncode == 0, done.stderr
    assert claim.exists()
    assert done.stdout.startswith(("Winner: ", "No winner: ", "Result: a draw")), done.stdout
