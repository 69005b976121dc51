"""A seed a person types is usually small, and whoever tries every seed up to it deals every
hand (tests/base/test_fair_play.py finds one in seconds): ``match`` and ``check`` say so in the one
line ``league run`` prints, and say nothing of a secret seed or of a long typed one."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.commands import cli

from referee.base import exitcodes as X

ROOT = Path(__file__).resolve().parents[2]
GREEDY, FIRST = ROOT / "sample_bots" / "greedy_bot.py", ROOT / "sample_bots" / "first_bot.py"
WORDS = "is short: anyone who tries every seed up to it can deal every hand"


def warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("warning: seed")]


@pytest.mark.parametrize("typed, shown", [("31337", "31337"), ("0x7a69", "31337"), ("0", "0")])
def test_a_short_seed_typed_for_a_match_gets_the_leagues_warning(tmp_path, typed, shown):
    result = cli("match", GREEDY, FIRST, "--variant", "block", "--games", "1", "--seed", typed, "--log", tmp_path / "m.jsonl", "-q")
    assert result.exit_code == X.OK, result.output
    said = warnings(result.stderr)
    assert said == [f"warning: seed {shown} {WORDS} (leave out --seed: the referee draws a secret one and prints it with the result)"]
    assert not warnings(result.stdout)


@pytest.mark.parametrize("seed", [None, str(2**64 + 5), "0x" + "ab" * 32])
def test_a_secret_seed_or_a_long_one_gets_no_warning(tmp_path, seed):
    args = ["--seed", seed] if seed else []
    result = cli("match", GREEDY, FIRST, "--variant", "block", "--games", "1", *args, "--log", tmp_path / "m.jsonl", "-q")
    assert result.exit_code == X.OK, result.output
    assert not warnings(result.output) and "is short" not in result.output


def test_a_match_from_a_deal_file_gets_no_warning_whatever_its_seed(tmp_path):
    deals = tmp_path / "deals.jsonl"
    assert cli("deals", "generate", "--variant", "sport", "--seed", "5", "--count", "4", "--output", deals).exit_code == X.OK
    result = cli("match", GREEDY, FIRST, "--deals-file", deals, "--seed", "5", "--log", tmp_path / "m.jsonl", "-q")
    assert result.exit_code == X.OK, result.output
    assert "is short" not in result.output


def test_a_refused_match_prints_its_reason_alone(tmp_path):
    result = cli("match", GREEDY, FIRST, "--variant", "block", "--games", "1", "--deals", "3", "--seed", "42", "--log", tmp_path / "m.jsonl")
    assert result.exit_code == X.USAGE
    assert "is short" not in result.output and result.stderr.startswith("error: ")


@pytest.mark.slow
def test_a_short_seed_typed_for_check_gets_the_warning(tmp_path):
    result = cli("check", GREEDY, "--variant", "block", "--seed", "42", "--log-dir", tmp_path / "check")
    assert result.exit_code == X.OK, result.output
    assert warnings(result.stderr) == [f"warning: seed 42 {WORDS} (leave out --seed: the referee draws a secret one and prints it in the report)"]
    plain = cli("check", GREEDY, "--variant", "block", "--log-dir", tmp_path / "check2")
    assert plain.exit_code == X.OK and "is short" not in plain.output
