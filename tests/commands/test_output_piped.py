"""Output for scripts and logs (issue 33 item 3): off a terminal nothing wraps and no line ends in
spaces, whatever ``COLUMNS`` says; the seed is written in one form everywhere (the header, the
footer, the log's name), which ``--seed`` takes back; ``-q`` prints one line, as its help says.

Every test runs the command line as a process with its stdout on a pipe and reads the bytes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.base import exitcodes as X
from tests.matches.test_match import FIRST, GREEDY

#: A bot name longer than any narrow terminal is wide.
LONG = "a_bot_whose_name_is_longer_than_a_narrow_terminal_is_wide"


def referee(*args: str | Path, columns: int, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], cwd=cwd, capture_output=True, timeout=300,
                          env={**env, "COLUMNS": str(columns), "TERM": "xterm"}, stdin=subprocess.DEVNULL)


def long_bot(tmp_path: Path) -> Path:
    bot = tmp_path / f"{LONG}.py"
    shutil.copy(GREEDY, bot)
    return bot


@pytest.mark.slow
def test_piped_match_output_is_the_same_at_any_width_and_has_no_trailing_spaces(tmp_path):
    bot = long_bot(tmp_path)
    outputs = []
    for columns in (40, 80, 400):
        res = referee("match", bot, FIRST, "--deals", "4", "--seed", "7", "--log", "m.jsonl", "--overwrite", columns=columns, cwd=tmp_path)
        assert res.returncode == X.OK, res.stderr
        outputs.append(res.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    text = outputs[0].decode()
    lines = text.splitlines()
    assert not [line for line in lines if line != line.rstrip()], "lines ending in spaces"
    # every phrase that broke mid-way at 80 columns or less is whole on its line
    assert f"sport — A = {LONG}, B = first_bot; 4 seats, seed 7" in lines
    assert any(line.startswith(f"A = {LONG}, B = first_bot.  X@s: bot X in seat s;") and line.endswith("what that bot wrote")
               for line in lines)
    assert any(re.fullmatch(rf"Margin per deal, {LONG} − first_bot: [+-]\d+\.\d\d ± \d+\.\d\d  \(95% interval over 4 paired deals: "
                            r"\[[+-]?\d+\.\d\d, [+-]?\d+\.\d\d\]\)", line) for line in lines), text
    assert any(line.startswith(f"Pairs (a deal in both orientations), {LONG}'s side: LL ") and "WW" in line for line in lines), text
    assert any(line.startswith(f"Elo difference {LONG} − first_bot: ") and line.endswith(")") for line in lines), text
    assert any(line.startswith(f"LOS ({LONG} better than first_bot): ") for line in lines), text


@pytest.mark.slow
def test_a_league_table_piped_is_the_same_at_any_width(tmp_path):
    bot = long_bot(tmp_path)
    name = LONG[:40]  # a league's bot names are at most 40 characters
    league = tmp_path / "l.toml"
    league.write_text(f'name = "piped"\nseed = 123456789012345678901\nsandbox = false\n\n[game]\nvariant = "sport"\ndeals = 4\n\n'
                      f'[[bot]]\nname = "{name}"\ncommand = "{bot}"\n\n[[bot]]\nname = "first"\ncommand = "{FIRST}"\n\n'
                      f'[[bot]]\nname = "greedy"\ncommand = "{GREEDY}"\n')
    ran = referee("league", "run", league, "-q", columns=40, cwd=tmp_path)
    assert ran.returncode == X.OK, ran.stderr
    tables = [referee("league", "table", league, columns=c, cwd=tmp_path) for c in (40, 400)]
    assert tables[0].returncode == X.OK, tables[0].stderr
    assert tables[0].stdout == tables[1].stdout
    lines = tables[0].stdout.decode().splitlines()
    assert not [line for line in lines if line != line.rstrip()]
    assert any(name in line and re.search(r"\d", line) for line in lines)  # the row of the long name, on one line


@pytest.mark.slow
def test_the_seed_is_printed_in_one_form_which_seed_takes_back(tmp_path):
    seed = "0x0000000000001234567890abcdef1234"  # past 2**64: printed in hex, as given here
    res = referee("match", GREEDY, FIRST, "--deals", "4", "--seed", "0x1234567890ABCDEF1234", columns=80, cwd=tmp_path)
    assert res.returncode == X.OK, res.stderr
    lines = res.stdout.decode().splitlines()
    assert lines[0].endswith(f"; 4 seats, seed {seed}")
    assert f"seed: {seed}   (--seed {seed} plays these deals again)" in lines
    assert f"log: referee-logs/match-sport-{seed}.jsonl" in lines
    assert (tmp_path / "referee-logs" / f"match-sport-{seed}.jsonl").is_file()
    again = referee("match", GREEDY, FIRST, "--deals", "4", "--seed", seed, columns=80, cwd=tmp_path)
    assert again.returncode == X.OK, again.stderr
    assert f"log: referee-logs/match-sport-{seed}-2.jsonl" in again.stdout.decode().splitlines()
    deals = [line for line in res.stdout.decode().splitlines() if re.match(r"\s+\d+\s+[01]\s+[AB]@", line)]
    assert deals and deals == [line for line in again.stdout.decode().splitlines() if re.match(r"\s+\d+\s+[01]\s+[AB]@", line)]
    small = referee("match", GREEDY, FIRST, "--deals", "4", "--seed", "0x2a", columns=80, cwd=tmp_path)  # below 2**64: decimal
    assert "seed: 42   (--seed 42 plays these deals again)" in small.stdout.decode().splitlines()
    assert small.stdout.decode().splitlines()[0].endswith("seed 42")


#: a seed of 128 bits: a short one gets its one-line warning on stderr, which -q does not silence
LONG_SEED = str(2**127 + 1)


@pytest.mark.slow
def test_quiet_prints_one_verdict_line_with_or_without_the_sprt(tmp_path):
    help_text = referee("match", "--help", columns=300, cwd=tmp_path).stdout.decode()
    assert "Print only the verdict, in one line" in " ".join(help_text.split())
    plain = referee("match", GREEDY, FIRST, "--deals", "4", "--seed", LONG_SEED, "-q", columns=80, cwd=tmp_path)
    assert plain.returncode == X.OK, plain.stderr
    assert plain.stderr == b""
    assert len(plain.stdout.decode().splitlines()) == 1
    assert re.fullmatch(r"(Winner: greedy_bot — significant|No winner: greedy_bot is ahead, but not significant) at 95% \(LOS [\d.]+%\)\n",
                        plain.stdout.decode())
    tested = referee("match", GREEDY, FIRST, "--deals", "40", "--seed", LONG_SEED, "-q", "--sprt", "margin0=0 margin1=3", columns=80, cwd=tmp_path)
    assert tested.returncode == X.OK, tested.stderr
    assert tested.stderr == b""
    assert re.fullmatch(r"SPRT (H0 accepted|H1 accepted|undecided) after \d+ pairs \(LLR [+-]\d\.\d{3}, bounds -2\.944 and \+2\.944\); "
                        r"(Winner|No winner): greedy_bot[^\n]*\(LOS [\d.]+%\)\n", tested.stdout.decode()), tested.stdout


def test_quiet_says_why_there_is_no_los_after_one_pair(tmp_path):
    """A game to a target plays one game pair unless told otherwise: one pair has no spread, so no
    LOS; -q keeps its one form, "(LOS …)", and says so, instead of leaving the figure out."""
    res = referee("match", GREEDY, FIRST, "--variant", "block", "--seed", LONG_SEED, "-q", columns=80, cwd=tmp_path)
    assert res.returncode == X.OK, res.stderr
    assert res.stderr == b""
    assert re.fullmatch(r"(No winner: (greedy_bot|first_bot) is ahead, but not significant at 95% \(LOS —, one pair\)|Result: a draw\.)\n",
                        res.stdout.decode()), res.stdout
    assert "(LOS —, one pair)" in res.stdout.decode()  # this seed's game pair is not level
