"""The cluster address and client shared by the referee's commands (referee/base/cluster.py): a bad
address or a scheduler out of reach is one line, a league's error stays a league's."""

from __future__ import annotations

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
