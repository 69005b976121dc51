"""sea_kozel, general and blitz through the whole referee: matches from a seed or a deal file in
every orientation, reproducible logs that verify, replay naming declarations, special states and
the rule that decided each deal, and edited logs (a write-off turned into a decline, a special
state dropped) that no longer verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import read_log, strip_timings

from referee.audit.verify import Inconsistent, verify
from tests.matches.test_match_cross import FIRST, GREEDY, RANDOM, match, run

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run


@pytest.mark.parametrize("game, bots, extra", [
    ("sea_kozel", [RANDOM, GREEDY], []),
    ("sea_kozel", [RANDOM, GREEDY], ["--players", "2"]),
    ("general", [RANDOM, GREEDY], ["-o", "max_deals=10"]),
    ("blitz", [RANDOM, GREEDY, FIRST, RANDOM], []),
])
def test_same_seed_same_log_and_it_verifies(tmp_path, game, bots, extra):
    result, log1 = match(tmp_path, *bots, "--variant", game, "--seed", "4", *extra, name="a")
    _, log2 = match(tmp_path, *bots, "--variant", game, "--seed", "4", *extra, name="b")
    assert [strip_timings(r) for _, r in read_log(log1)] == [strip_timings(r) for _, r in read_log(log2)]
    assert verify(log1).plays > 20
    assert result["faults"] == []
    assert {d["orientation"] for d in result["deals"]} == set(range(2 if len(bots) == 2 else 4))
    ends = [r for _, r in read_log(log1) if r["k"] == "deal_end"]
    assert ends and all(r.get("rule") for r in ends)  # every deal says which rule decided it


def test_a_deal_file_is_played_in_every_orientation(tmp_path):
    deals = tmp_path / "deals.jsonl"
    res = run("deals", "generate", "--variant", "sea_kozel", "--players", "2", "--seed", "2", "--count", "200", "--output", str(deals))
    assert res.exit_code == 0, res.output
    result, log = match(tmp_path, RANDOM, GREEDY, "--variant", "sea_kozel", "--players", "2", "--deals-file", str(deals))
    assert {d["orientation"] for d in result["deals"]} == {0, 1}
    assert verify(log).plays > 0


def greedy_sea_kozel(tmp_path: Path, name: str = "g"):
    """greedy_bot leads 6-6 for a hundred whenever it may and writes off every fish it can."""
    return match(tmp_path, GREEDY, RANDOM, "--variant", "sea_kozel", "--games", "4", "--seed", "3", name=name)


def test_replay_names_declarations_special_states_and_rules(tmp_path):
    _, log = greedy_sea_kozel(tmp_path)
    records = [r for _, r in read_log(log)]
    declared = [r.get("declare") for r in records if r["k"] == "play" and r.get("declare")]
    assert "hundred" in declared and "write_off" in declared, declared
    assert any(r.get("special") for r in records if r["k"] == "deal")
    text = run("replay", str(log)).output
    assert "declares a hundred, leading 6-6" in text and "writes off the fish" in text
    assert "special: " in text and "(rule: " in text


@pytest.mark.parametrize("what", ["declare", "special"])
def test_a_log_edited_to_flip_a_write_off_or_drop_a_special_state_fails_verify(tmp_path, what):
    _, log = greedy_sea_kozel(tmp_path)
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if what == "declare" and rec["k"] == "play" and rec.get("declare") == "write_off":
            rec["declare"] = "decline"  # and in the bot's own line, so only the rules can catch it
            sent = json.loads(lines[i - 1])
            sent["line"] = sent["line"].replace('"write_off"', '"decline"')
            lines[i - 1] = json.dumps(sent)
        elif what == "special" and rec["k"] == "deal" and rec.get("special"):
            del rec["special"]
        else:
            continue
        lines[i] = json.dumps(rec)
        break
    else:
        pytest.fail(f"no {what} in the log")
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    with pytest.raises(Inconsistent, match=r"\(play\): as: the log has" if what == "declare" else r"\(deal\): special: the log has null"):
        verify(edited)
