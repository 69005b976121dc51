"""``league run`` off a terminal (issue 33 item 4): under nohup or CI it prints a line per
finished table as it finishes, like cutechess-cli's "Finished game N (A vs B): result";
``-q`` and ``--no-live`` silence them and ``--live`` brings them back under ``-q``; on a terminal
the league's bar, and ``match``'s, show an ETA."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.base import exitcodes as X
from tests.matches.test_match import FIRST, GREEDY, RANDOM

FINISHED = re.compile(r"Finished match (\d+) of 3 \((\w+) vs (\w+)\): (?:(\w+) won|drawn), points \d+–\d+(?:, \d+ faults?)?")


def league_file(tmp_path: Path, name: str = "l") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nseed = 123456789012345678901\nsandbox = false\n\n[game]\nvariant = "sport"\ndeals = 4\n\n'
                    f'[clock]\nmove = 5.0\n\n'
                    f'[[bot]]\nname = "greedy"\ncommand = "{GREEDY}"\n\n[[bot]]\nname = "first"\ncommand = "{FIRST}"\n\n'
                    f'[[bot]]\nname = "random"\ncommand = "{RANDOM}"\nenv = {{ BOT_SEED = "7" }}\n')
    return path


def league_run(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``league run`` with stdout and stderr on pipes, as under nohup or CI."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return subprocess.run([sys.executable, "-m", "referee", "league", "run", str(path), *extra], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, env=env)


@pytest.mark.slow
def test_off_a_terminal_a_line_per_finished_table_as_it_finishes(tmp_path):
    path = league_file(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "referee", "league", "run", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # read while the league still plays: the line comes when the match ends
        assert FINISHED.fullmatch(first.rstrip("\n")), first
        still_playing = proc.poll() is None
        stdout, rest = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == X.OK, rest
    assert still_playing  # the first line came before the league ended (3 matches of 8 deals: more than a moment)
    lines = [first.rstrip("\n"), *rest.splitlines()]
    found = [FINISHED.fullmatch(line) for line in lines if line.startswith("Finished")]
    assert all(found) and [int(m.group(1)) for m in found if m] == [1, 2, 3], lines
    assert {frozenset(m.group(2, 3)) for m in found if m} == {frozenset(p) for p in (("greedy", "first"), ("greedy", "random"), ("first", "random"))}
    assert stdout.startswith("l: played 3 matches in ")
    # what the lines say is what the table says: the winner of each is one of its two bots
    assert all(m.group(4) in (None, m.group(2), m.group(3)) for m in found if m)


@pytest.mark.slow
def test_quiet_and_no_live_silence_the_lines_and_live_brings_them_back(tmp_path):
    quiet = league_run(league_file(tmp_path, "q"), "-q")
    assert quiet.returncode == X.OK, quiet.stderr
    assert "Finished" not in quiet.stderr and quiet.stdout.startswith("q: played 3 matches")
    silent = league_run(league_file(tmp_path, "s"), "--no-live")
    assert silent.returncode == X.OK, silent.stderr
    assert "Finished" not in silent.stderr
    both = league_run(league_file(tmp_path, "b"), "-q", "--live")
    assert both.returncode == X.OK, both.stderr
    assert [int(m.group(1)) for m in map(FINISHED.fullmatch, both.stderr.splitlines()) if m] == [1, 2, 3]
    # a run with nothing left to play prints no line
    again = league_run(tmp_path / "b.toml")
    assert again.returncode == X.OK and "Finished" not in again.stderr


def _on_a_terminal(argv: list[str], cwd: Path) -> str:
    """stderr of ``argv`` on a pseudo-terminal, as a user's."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL, cwd=cwd,
                            env={**os.environ, "TERM": "xterm", "COLUMNS": "200"})
    os.close(slave)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the writer is gone and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=300) == 0
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode(errors="replace"))  # without its colours


@pytest.mark.slow
def test_on_a_terminal_the_bars_show_an_eta_and_the_lines_still_come(tmp_path):
    shown = _on_a_terminal([sys.executable, "-m", "referee", "league", "run", str(league_file(tmp_path))], tmp_path)
    assert re.search(r"league .*\d+/3 .*ETA \d:\d\d:\d\d", shown), shown
    assert re.search(r"Finished match 3 of 3 \(", shown)
    shown = _on_a_terminal([sys.executable, "-m", "referee", "match", GREEDY, FIRST, "--deals", "8", "--log", "m.jsonl"], tmp_path)
    assert re.search(r"\d+/16 .*ETA (\d:\d\d:\d\d|-:--:--)", shown), shown


def test_a_finished_table_of_three_lists_the_points_in_the_order_of_its_places():
    """Issue 40 §3: the points followed the table's bots (alphabetical), not the places beside them."""
    from types import SimpleNamespace as NS

    from tournaments.cli import table_result

    result = NS(names=["a", "b", "c"], totals=[NS(points=75), NS(points=61), NS(points=90)], faults=[], ahead=None,
                ranking=NS(standings=[NS(bot="b", place=1), NS(bot="a", place=2), NS(bot="c", place=3)]))
    assert table_result(NS(result=result), None) == "b 1st, a 2nd, c 3rd; points 61, 75, 90"
