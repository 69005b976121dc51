"""Where a bot runs: one statement (PROTOCOL.md, "The bot's process", **Working directory**),
held for ``match``, ``check`` and a league, in the sandbox and out of it, with and without a
``cwd`` (issue 40 §3).

The bot (tests/doc_bots/cwd_bot.py) writes its working directory to its stderr log.  It lives in
``home/bots``; the referee runs from ``run`` (a league's file is in ``home``), so each of the
places the statement names is a different folder.  Every run passes ``--seed``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import needs_bwrap
from support.commands import cli

from tests.bots.test_sandbox_fairplay import folder

ROOT = Path(__file__).resolve().parents[2]
CWD_BOT = ROOT / "tests" / "doc_bots" / "cwd_bot.py"
FIRST = ROOT / "sample_bots" / "first_bot.py"

pytestmark = pytest.mark.slow  # real bot processes


def cwds(where: Path) -> set[str]:
    """The working directories the bot's processes wrote in their stderr logs under ``where``."""
    said = {line.removeprefix("cwd: ") for log in where.rglob("*.stderr.log")
            for line in log.read_text(errors="replace").splitlines() if line.startswith("cwd: ")}
    assert said, f"no stderr log under {where} says where the bot ran"
    return said


@pytest.fixture
def places(tmp_path, monkeypatch) -> dict[str, Path]:
    home = folder(tmp_path / "home")
    shutil.copy(CWD_BOT, folder(home / "bots") / "cwd_bot.py")
    run = folder(tmp_path / "run")
    given = folder(tmp_path / "given")
    monkeypatch.chdir(run)
    return {"home": home, "own": home / "bots", "run": run, "given": given, "out": folder(tmp_path / "out")}


def expected(p: dict[str, Path], sandbox: bool, cwd: bool, league: bool = False) -> set[str]:
    """The statement: the cwd given; else in the sandbox the bot's own directory; else the
    referee's working directory (a league's: the league file's directory)."""
    where = p["given"] if cwd else p["own"] if sandbox else p["home"] if league else p["run"]
    return {os.path.realpath(where)}


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)], ids=["plain", "sandbox"])
@pytest.mark.parametrize("cwd", [False, True], ids=["own", "cwd"])
def test_match_runs_the_bot_where_the_protocol_says(places, sandbox, cwd):
    p = places
    bot = str(p["own"] / "cwd_bot.py") if cwd else "python3 ../home/bots/cwd_bot.py"
    args = ["match", bot, str(FIRST), "--variant", "sport", "--deals", "4", "--seed", "4", "--log", str(p["out"] / "m.jsonl"), "-q"]
    if cwd:
        args += ["--cwd", str(p["given"]), "--cwd", str(p["run"])]
    r = cli(*args, *(["--sandbox"] if sandbox else []))
    assert r.exit_code == 0, r.output
    assert cwds(p["out"]) == expected(p, sandbox, cwd)


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)], ids=["plain", "sandbox"])
@pytest.mark.parametrize("cwd", [False, True], ids=["own", "cwd"])
def test_check_runs_the_bot_where_the_protocol_says(places, sandbox, cwd):
    p = places
    args = ["check", "python3 ../home/bots/cwd_bot.py", "--variant", "sport", "--deals", "1", "--seed", "4",
            "--log-dir", str(p["out"] / "check")]
    if cwd:
        args = ["check", str(p["own"] / "cwd_bot.py"), *args[2:], "--cwd", str(p["given"])]
    r = cli(*args, *(["--sandbox"] if sandbox else []))
    assert r.exit_code == 0, r.output
    assert cwds(p["out"]) == expected(p, sandbox, cwd)


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)], ids=["plain", "sandbox"])
@pytest.mark.parametrize("cwd", [False, True], ids=["own", "cwd"])
def test_a_league_runs_the_bot_where_the_protocol_says(places, sandbox, cwd):
    p = places
    shutil.copy(FIRST, p["own"] / "first_bot.py")
    lines = ["seed = 7", f"sandbox = {'true' if sandbox else 'false'}", f'logs = "{p["out"] / "logs"}"', "[game]",
             'variant = "sport"', "deals = 4", "[clock]", "startup = 30.0", "move = 10.0",
             "[[bot]]", 'name = "cwd"', 'command = "python3 bots/cwd_bot.py"' if not cwd else f'command = "{p["own"] / "cwd_bot.py"}"',
             *([f'cwd = "{p["given"]}"'] if cwd else []),
             "[[bot]]", 'name = "first"', 'command = "bots/first_bot.py"']
    (p["home"] / "league.toml").write_text("\n".join(lines) + "\n")
    r = cli("league", "run", p["home"] / "league.toml", "-q")
    assert r.exit_code == 0, r.output
    assert cwds(p["out"]) == expected(p, sandbox, cwd, league=True)
