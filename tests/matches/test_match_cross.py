"""The cross games through the whole referee: matches from a seed or a deal file in every
orientation, reproducible logs that verify, replay drawing the cross, and a log edited to change
a closed double or a stop that no longer verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import read_log, strip_timings

from referee.audit.verify import Inconsistent, verify
from tests.matches.test_match import BOTS, FIRST, GREEDY, RANDOM, run
from tests.matches.test_match import match as whole_match

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

RANDOM2 = f"{BOTS / 'random_bot.py'} 8"


def match(tmp_path: Path, *args: str, name: str = "m"):
    """A match through the command line: its ``--json`` result and its log."""
    result, log, _ = whole_match(tmp_path, *args, name=name)
    return result, log


@pytest.mark.parametrize("game, extra", [("osel", []), ("telephone", ["-o", "scale=5", "-o", "endgame=winner_takes"]),
                                         ("muggins", ["--players", "2"])])
def test_same_seed_same_log_and_it_verifies(tmp_path, game, extra):
    result, log1 = match(tmp_path, RANDOM, GREEDY, "--variant", game, "--seed", "4", *extra, name="a")
    _, log2 = match(tmp_path, RANDOM, GREEDY, "--variant", game, "--seed", "4", *extra, name="b")
    assert [strip_timings(r) for _, r in read_log(log1)] == [strip_timings(r) for _, r in read_log(log2)]
    assert verify(log1).plays > 20
    assert result["faults"] == []
    orientations = {d["orientation"] for d in result["deals"]}
    assert orientations == {0, 1}  # both bots in every seat


def test_a_deal_file_is_played_in_every_orientation(tmp_path):
    deals = tmp_path / "deals.jsonl"
    res = run("deals", "generate", "--variant", "muggins", "--players", "3", "--seed", "2", "--count", "200", "--output", str(deals))
    assert res.exit_code == 0, res.output
    result, log = match(tmp_path, RANDOM, GREEDY, FIRST, "--variant", "muggins", "--deals-file", str(deals))
    assert {d["orientation"] for d in result["deals"]} == {0, 1, 2}
    assert verify(log).plays > 0


def test_replay_draws_the_cross_and_names_points_and_stops(tmp_path):
    _, log = match(tmp_path, RANDOM, GREEDY, "--variant", "telephone", "--seed", "4")
    text = "\n".join(run("replay", str(log), "--game", "1").output.splitlines())
    assert "up: " in text and "down: " in text and "{" in text
    assert "the ends add up to" in text and "writes" in text
    _, log = match(tmp_path, RANDOM, RANDOM2, "--variant", "osel", "--seed", "4", name="o")
    text = run("replay", str(log)).output
    assert "stops" in text and "#" in text and "closed" in text


def _edit(log: Path, out: Path, flag: str) -> None:
    """Drop ``flag`` (closed or stop) from the first play that has it, and from the bot's line."""
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["k"] == "play" and rec.get(flag):
            del rec[flag]
            if flag == "stop":
                rec["tile"] = [0, 0]
            lines[i] = json.dumps(rec)
            sent = json.loads(lines[i - 1])
            msg = json.loads(sent["line"])
            msg.pop(flag)
            msg["tile"] = rec["tile"]
            sent["line"] = json.dumps(msg)
            lines[i - 1] = json.dumps(sent)
            break
    else:
        pytest.fail(f"no play with {flag} in the log")
    out.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("flag", ["closed", "stop"])
def test_a_log_edited_to_drop_a_closed_double_or_a_stop_fails_verify(tmp_path, flag):
    _, log = match(tmp_path, RANDOM, RANDOM2, "--variant", "osel", "--seed", "4")
    edited = tmp_path / "edited.jsonl"
    _edit(log, edited, flag)
    with pytest.raises(Inconsistent):
        verify(edited)
