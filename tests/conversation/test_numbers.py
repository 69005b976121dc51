"""Numbers from a bot (PROTOCOL.md, "Numbers"): JSON has only numbers, so wherever the protocol asks
an integer, a number whose value is an integer is that integer (``1.0``, ``[0.0, 4.0]``, ``7e0``);
a number with a fraction is refused with words that name the field.  The log keeps the line as
the bot wrote it, and verify reads it the same way.  The strict decoding stays the fast path:
only a refused line is read again (bench.referee measures it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import read_log
from support.commands import cli

from protocol import messages as m
from referee.base import exitcodes as X
from referee.conversation.lines import judge

ROOT = Path(__file__).resolve().parents[2]
FLOAT = Path(__file__).resolve().parents[1] / "doc_bots" / "float_bot.py"
FIRST = ROOT / "sample_bots" / "first_bot.py"


def float_bot(*args: str) -> str:
    return " ".join([sys.executable, str(FLOAT), *args])


@pytest.mark.parametrize("line, msg", [
    (b'{"type":"hello","name":"lua","protocol":1.0}', m.BotHello("lua", 1)),
    (b'{"type":"play","tile":[0.0,4.0],"end":"left"}', m.Play(tile=(0, 4), end="left")),
    (b'{"type":"play","tile":[6,6.0],"end":null,"turn":12.0}', m.Play(tile=(6, 6), end=None, turn=12)),
    (b'{"type":"play","tile":[1e0,40e-1],"end":"right","eval":0.31}', m.Play(tile=(1, 4), end="right")),
    (b'{"type":"play","tile":[-0.0,2],"end":"left","turn":-3.0}', m.Play(tile=(0, 2), end="left", turn=-3)),
])
def test_a_number_whose_value_is_an_integer_is_that_integer(line, msg):
    judged = judge(line)
    assert judged.kind == "message" and judged.msg == msg
    assert all(type(h) is int for h in (judged.msg.tile or ())) if isinstance(msg, m.Play) else type(judged.msg.protocol) is int


@pytest.mark.parametrize("line, field", [
    (b'{"type":"play","tile":[5.5,4],"end":"left"}', "tile"),
    (b'{"type":"play","tile":[5.0,4.25],"end":"left"}', "tile"),
    (b'{"type":"play","tile":[5,4],"end":"left","turn":2.5}', "turn"),
    (b'{"type":"hello","name":"lua","protocol":1.5}', "protocol"),
])
def test_a_number_with_a_fraction_is_refused_naming_the_field(line, field):
    judged = judge(line)
    assert judged.kind == "bad" and judged.reason == "schema"
    assert judged.why is not None and judged.why.endswith(f"`{field}` {m.NUMBER_HINT}"), judged.why
    # issue 40 §3: not msgspec's "Expected `int`, got `float`", which 4.0 being read as 4 belies
    assert judged.why.startswith(f"a number with a fraction at `$.{field}") and "Expected" not in judged.why, judged.why


@pytest.mark.parametrize("line, words", [
    (b'{"type":"play","tile":[7.0,4],"end":"left"}', "<= 6 - at `$.tile[0]`"),  # an integer, out of range
    (b'{"type":"play","tile":[true,4],"end":"left"}', "got `bool`"),  # not a number
    (b'{"type":"play","tile":["4",4],"end":"left"}', "got `str`"),
    (b'{"type":"play","tile":[4.0,4],"end":3.0}', "at `$.end`"),  # a number where a string is asked
])
def test_what_is_no_integer_once_read_is_still_refused(line, words):
    judged = judge(line)
    assert judged.kind == "bad" and judged.why is not None and words in judged.why, judged.why
    assert m.NUMBER_HINT not in judged.why


def test_a_bot_that_writes_every_number_with_a_point_plays_a_clean_match_and_verifies(tmp_path):
    log = tmp_path / "floats.jsonl"
    result = cli("match", float_bot(), FIRST, "--variant", "block", "--games", "1", "--seed", "3", "--log", log, "-q")
    assert result.exit_code == X.OK, result.output
    records = [r for _, r in read_log(log)]
    assert not [r for r in records if r["k"] == "fault"]
    hello = next(r for r in records if r["k"] == "hello" and r["bot"] == "float_bot")
    assert [h["line"] for h in hello["read"]] == ['{"type": "hello", "name": "float_bot", "protocol": 1.0}']  # as written
    played = [json.loads(r["line"]) for r in records if r["k"] == "in" and '"turn": ' in r["line"]]  # float_bot's (it echoes the turn)
    assert played and all(type(v) is float for p in played for v in [*(p["tile"] or []), p["turn"]])  # the log keeps 4.0, not 4
    assert any(r["k"] == "play" for r in records)
    assert cli("verify", log).exit_code == X.OK


def test_a_tile_with_a_fraction_is_a_fault_that_names_the_field(tmp_path):
    log = tmp_path / "fraction.jsonl"
    result = cli("match", float_bot("fraction"), FIRST, "--variant", "block", "--games", "1", "--seed", "3", "--log", log, "-q")
    assert result.exit_code == X.OK, result.output
    faults = [r for _, r in read_log(log) if r["k"] == "fault"]
    assert faults and all(f["kind"] == "bad_output" for f in faults)
    assert f"`tile` {m.NUMBER_HINT}" in faults[0]["detail"], faults[0]
    assert cli("verify", log).exit_code == X.OK


def test_a_hello_with_a_fractional_protocol_is_told_so_without_an_unrelated_hint(tmp_path):
    result = cli("match", float_bot("protocol=1.5"), FIRST, "--variant", "block", "--games", "1", "--seed", "3",
                 "--log", tmp_path / "p.jsonl", "-q")
    assert result.exit_code == X.BOT_START, result.output
    said = " ".join(result.stderr.split())
    assert f"`protocol` {m.NUMBER_HINT}" in said, said
    assert "answer the referee's hello at once" not in said


def test_check_passes_a_bot_that_writes_every_number_with_a_point(tmp_path):
    result = cli("check", float_bot(), "--variant", "block", "--seed", str(2**70), "--log-dir", tmp_path / "check")
    assert result.exit_code == X.OK, result.output
    assert "PASS" in result.stdout
