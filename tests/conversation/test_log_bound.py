"""The log is bounded whatever a bot writes (README, "Logs"; PROTOCOL.md, "Limits"): a line is
kept whole only up to 1 KiB, a longer one as its size, its start and the referee's judgement.
A bot that pads every answer to 60 KiB makes a log no bigger per move than an honest bot's
(before, such padding was logged whole: 40 times the size); a bot that writes the most a move
allows (16 lines of an unknown type and its answer, each of the worst bytes) adds under 17 ×
8 KiB; and both logs verify."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.commands import cli

pytestmark = pytest.mark.slow  # matches of real bot processes: the full run

ROOT = Path(__file__).resolve().parents[2]
FIRST = ROOT / "sample_bots" / "first_bot.py"

PADDER = """\
import json, sys
pad = int(sys.argv[1])
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "padder", "protocol": 1, "pad": "x" * pad}), flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0], "pad": "x" * pad}), flush=True)
    elif msg["type"] == "match_end":
        break
"""

#: 16 lines of an unknown type a move (the most that is ignored), each 1 KiB of control
#: characters (6 bytes each once escaped in JSON), then the answer padded past 1 KiB with them.
WORST = """\
import json, sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "worst", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        for _ in range(16):
            print(json.dumps({"type": "note", "x": "\\u0001" * 980}), flush=True)
        print(json.dumps({"type": "play", **msg["legal"][0], "x": "\\u0001" * 60000}), flush=True)
    elif msg["type"] == "match_end":
        break
"""


def played(tmp_path: Path, name: str, script: str, *args: str) -> tuple[Path, int]:
    bot = tmp_path / f"{name}.py"
    bot.write_text(script)
    log = tmp_path / f"{name}.jsonl"
    result = cli("match", f"{sys.executable} {bot} {' '.join(args)}", FIRST, "--variant", "draw", "--games", "1", "--seed", "5",
                 "--log", log, "-q")
    assert result.exit_code == 0, result.output
    assert cli("verify", log).exit_code == 0
    plays = sum(1 for line in log.read_bytes().splitlines() if line.startswith(b'{"k":"play"'))
    return log, plays


def test_padding_every_answer_does_not_inflate_the_log(tmp_path):
    honest, plays = played(tmp_path, "honest", PADDER, "0")
    padded, padded_plays = played(tmp_path, "padded", PADDER, "60000")
    assert plays == padded_plays > 20  # the same deals, the same moves
    honest_size, padded_size = honest.stat().st_size, padded.stat().st_size
    assert padded_size - honest_size < 512 * plays, (honest_size, padded_size)  # a few hundred bytes a move more, at most
    assert padded_size < 1.5 * honest_size
    assert b"x" * 1000 not in padded.read_bytes()  # the padding itself is nowhere


def test_the_most_a_bot_can_write_in_a_move_is_bounded(tmp_path):
    log, plays = played(tmp_path, "worst", WORST)
    lines = log.read_bytes().splitlines()
    ins = [line for line in lines if line.startswith(b'{"k":"in"')]
    assert len(ins) >= 17 * plays // 2  # the candidate's moves, each with its 16 notes
    assert max(len(line) for line in ins) < 8 * 1024
    per_move = sum(len(line) for line in ins) / (len(ins) / 17)
    assert per_move < 17 * 8 * 1024
