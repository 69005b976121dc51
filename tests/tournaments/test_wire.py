"""The wire from a league's match processes (tournaments/wire.py): one tagged union, one decoder;
every line a match process writes is one of its messages, and anything else is a clear failure
of the table, not a line skipped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from test_league import FOUR, HANG, league_toml, write_league

from tournaments import wire
from tournaments.config import load_league
from tournaments.runner import run_league


@pytest.mark.parametrize(("msg", "line"), [
    (wire.Progress(3, 8), b'{"k":"progress","done":3,"total":8}\n'),
    (wire.Alive(), b'{"k":"alive"}\n'),
    (wire.Failed("bot_start", "a bot could not be started: x"), b'{"k":"error","kind":"bot_start","message":"a bot could not be started: x"}\n'),
    (wire.Probed(["b: no hello"]), b'{"k":"probed","failures":["b: no hello"]}\n'),
])
def test_each_message_is_the_line_it_always_was(msg, line):
    assert wire.encode(msg) == line
    assert wire.decode(line) == msg


@pytest.mark.parametrize(("line", "why"), [
    (b'{"k":"progres","done":1,"total":2}', "Invalid value 'progres'"),
    (b'{"k":"error","kind":"disk","message":"x"}', "Invalid enum value 'disk'"),
    (b'{"k":"progress","done":1}', "missing required field `total`"),
    (b'{"k":"alive","extra":1}', "unknown field `extra`"),
    (b'{"done":1,"total":2}', "missing required field `k`"),
    (b"Traceback (most recent call last):", "malformed"),
])
def test_a_line_not_of_the_wire_is_refused_with_its_reason(line, why):
    with pytest.raises(wire.BadLine, match="not of the league's wire") as refused:
        wire.decode(line)
    assert why in str(refused.value) and repr(line[:20].decode())[1:-1] in str(refused.value)


async def test_a_match_process_writing_a_line_not_of_the_wire_fails_its_table_at_once(tmp_path: Path):
    """Before, an unknown line was skipped and the league waited on, until the watchdog (or for
    ever); now the table fails with the line's reason, and the process is not used again."""
    path = write_league(tmp_path, league_toml(FOUR[:2]))
    chatty = [sys.executable, "-c", "import sys, time; sys.stdin.readline(); print('{\"k\":\"note\"}', flush=True); time.sleep(600)"]
    with trio.fail_after(HANG):
        report = await run_league(load_league(path), worker_argv=chatty, stall=300)
    assert report.played == 0 and len(report.failed) == 1
    assert "the match process wrote a line that is not of the league's wire" in report.failed[0][1]
    assert "'note'" in report.failed[0][1]
