"""Nothing a bot or a file can do crashes the referee, fills the disk, or fools ``verify``.

Hostile input end to end: JSON nested too deep from a bot in ``check`` and in a league's match
process, and in deal files and logs; a flood of lines nobody asked for; bad command-line values
and unwritable or full log paths; SIGHUP; and a fuzz of arbitrary bytes as bot lines, deal files
and logs.  (One fault per hostile bot inside a match is tests/test_faults.py.)  Every error a
user can cause must be one line, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio
from typer.testing import CliRunner

from referee import exitcodes as X
from referee.cli import app

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sample_bots"
HOSTILE = Path(__file__).resolve().parent / "hostile_bots" / "hostile.py"
DEEP = "[" * 1000 + "]" * 1000
HANG = 120


def cli(*args: str):
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def one_line_error(result, *words: str) -> str:
    """The stderr of a refused command: one ``error:`` line containing ``words``."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# -- JSON nested too deep ---------------------------------------------------------------------------


def test_check_reports_json_nested_too_deep_as_bad_output(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    result = cli("check", f"{HOSTILE} deep {state}", "--variant", "draw", "--deals", "2", "--log-dir", tmp_path / "logs")
    assert result.exit_code == X.CHECK_FAILED, result.output
    assert "bad output" in result.stdout and "nested deeper than 64 levels" in result.stdout


async def test_a_league_charges_json_nested_too_deep_to_the_bot(tmp_path):
    """In a league's match process too: the pairing is played and stored, the bot is charged."""
    from tournaments.config import load_league
    from tournaments.runner import run_league

    state = tmp_path / "state"
    state.mkdir()
    path = tmp_path / "league.toml"
    path.write_text("\n".join([
        "seed = 1", "[game]", 'variant = "sport"', "deals = 4", "[clock]", "startup = 30.0", "move = 10.0",
        "[[bot]]", 'name = "first"', f'command = "{BOTS / "first_bot.py"}"',
        "[[bot]]", 'name = "deep"', f'command = "{HOSTILE} deep {state}"',
    ]) + "\n", encoding="utf-8")
    with trio.fail_after(HANG):
        report = await run_league(load_league(path))
    assert report.played == 1 and not report.failed
    table = json.loads(cli("league", "table", path, "--format", "json").stdout)
    rows = {row["bot"]: row for row in table["standings"]}
    assert rows["deep"]["bad_output"] == 1 and rows["first"]["bad_output"] == 0


def test_a_deal_file_nested_too_deep_is_refused_in_one_line(tmp_path):
    good = cli("deals", "generate", "--variant", "sport", "--count", "4")
    path = tmp_path / "deals.jsonl"
    lines = good.stdout.splitlines()
    lines[2] = '{"hands": ' + DEEP + "}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (["deals", "show", path], ["match", BOTS / "first_bot.py", BOTS / "first_bot.py", "--deals-file", path,
                                           "--deals", "4", "--log", tmp_path / "m.jsonl"]):
        result = cli(*args)
        assert result.exit_code == X.USAGE, result.output
        one_line_error(result, "line 3", "nested deeper than 64 levels")


def test_a_log_nested_too_deep_is_refused_in_one_line(tmp_path):
    log = tmp_path / "m.jsonl"
    played = cli("match", BOTS / "first_bot.py", BOTS / "greedy_bot.py", "--deals", "4", "--log", log, "-q")
    assert played.exit_code == 0, played.output
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[5] = '{"k": "in", "seat": 0, "x": ' + DEEP + "}"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for command in ("verify", "replay"):
        result = cli(command, log)
        assert result.exit_code == X.USAGE, result.output
        one_line_error(result, "line 6", "nested deeper than 64 levels")


def test_a_line_nested_too_deep_is_measured_outside_strings():
    from protocol.messages import MAX_DEPTH, too_deep

    assert not too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert too_deep(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    assert too_deep(b'{"a":' * (MAX_DEPTH + 1))  # cut short: still too deep
    assert not too_deep(b'{"a":"' + b"[{" * 500 + b'"}')  # brackets in a string do not count
    assert not too_deep(b'{"a":"\\"' + b"[" * 500 + b'"}')  # nor after an escaped quote
    assert not too_deep(b'[' + b"[]," * 500 + b"[]]")  # many arrays, none deep
