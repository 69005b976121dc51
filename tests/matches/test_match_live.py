"""What ``referee match`` shows while it plays and when it is stopped: the running score after
every pair (on a terminal, or with ``--live``; ``-q`` silences it), the result of the finished
pairs and ``--json`` with ``interrupted: true`` after Ctrl-C, SIGTERM or SIGHUP (exit 130, no bot
left), and a long match's deals table summarised unless ``--full``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import read_log

from referee.base import exitcodes as X
from tests.matches.test_match import FIRST, GREEDY, RANDOM, run

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

#: A mean that rounds to zero is printed without a sign ("0.00", referee.stats.means.signed).
SCORE = re.compile(r"Score of greedy_bot vs random_bot after (\d+) pairs?: ([+-]?\d+\.\d\d)(?: ± (\d+\.\d\d))? per deal")


def test_the_running_score_follows_every_pair_and_ends_where_the_result_does(tmp_path):
    out = tmp_path / "r.json"
    res = run("match", GREEDY, RANDOM, "--deals", "8", "--seed", "6", "--live", "--log", str(tmp_path / "m.jsonl"), "--json", str(out))
    assert res.exit_code == 0, res.output
    lines = [m for m in map(SCORE.search, res.stderr.splitlines()) if m]
    assert [int(m[1]) for m in lines] == list(range(1, 9))
    assert lines[0][3] is None and "(one pair: no interval yet)" in res.stderr
    paired = json.loads(out.read_text())["margin"]["greedy_bot"]["paired"]
    last = lines[-1]
    assert float(last[2]) == pytest.approx(paired["mean"], abs=0.005)
    assert float(last[3]) == pytest.approx((paired["ci"][1] - paired["ci"][0]) / 2, abs=0.006)
    assert "Score of" not in res.stdout  # stdout is the result's


def test_the_running_score_counts_pairs_won_level_and_lost(tmp_path):
    res = run("match", FIRST, FIRST, "--deals", "4", "--live", "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == 0, res.output
    # the same deterministic bot on both sides: every pair is level
    assert "Score of first_bot vs first_bot_2 after 4 pairs: 0.00 ± 0.00 per deal (95%), pairs won 0, level 4, lost 0" in res.stderr


def test_no_running_score_when_piped_or_quiet(tmp_path):
    res = run("match", GREEDY, RANDOM, "--deals", "4", "--log", str(tmp_path / "a.jsonl"))
    assert res.exit_code == 0 and "Score of" not in res.output
    res = run("match", GREEDY, RANDOM, "--deals", "4", "--log", str(tmp_path / "b.jsonl"), "--live", "--no-live")
    assert res.exit_code == 0 and "Score of" not in res.output


def test_three_bots_see_each_margin_against_the_field(tmp_path):
    res = run("match", GREEDY, RANDOM, FIRST, "--variant", "draw", "--games", "2", "--live", "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == 0, res.output
    assert "After 1 pair, margin per game against the field (95%): greedy_bot " in res.stderr
    assert re.search(r"After 2 pairs, .*· random_bot [+-]\d+\.\d ± \d+\.\d · first_bot ", res.stderr)


def test_the_running_score_shows_the_sprt(tmp_path):
    res = run("match", GREEDY, RANDOM, "--deals", "4", "--sprt", "elo0=0 elo1=5 min_pairs=2", "--live", "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == 0, res.output
    for n in (1, 2, 3):
        assert re.search(rf"after {n} pairs?: .*; LLR [+-]?\d\.\d\d \(-2\.94, \+2\.94\)", res.stderr), res.stderr


def test_on_a_terminal_the_running_score_is_shown_and_q_silences_it(tmp_path):
    """stderr a pseudo-terminal, as a user's: the line comes without asking; ``-q`` drops it."""
    import pty

    def stderr_of(*extra: str) -> str:
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "referee", "match", GREEDY, RANDOM, "--deals", "4", *extra],
                                stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL, cwd=tmp_path,
                                env={**os.environ, "TERM": "xterm", "COLUMNS": "200"})
        os.close(slave)
        chunks = []
        try:
            while True:  # read as it comes: a full pseudo-terminal would stop the writer
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the writer is gone and everything was read
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            assert proc.wait(timeout=120) == 0
        finally:
            os.close(master)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return b"".join(chunks).decode(errors="replace")

    shown = stderr_of("--log", "a.jsonl")
    assert "Score of greedy_bot vs random_bot after 3 pairs: " in shown
    assert "Score of" not in stderr_of("--log", "b.jsonl", "-q")


# -- stopping a match ---------------------------------------------------------------------------


def _wait_for_deals(log: Path, proc: subprocess.Popen, count: int) -> None:
    deadline = time.monotonic() + 90
    while True:
        assert proc.poll() is None, "the match ended before it could be stopped"
        assert time.monotonic() < deadline, "the match did not get going"
        if log.exists() and log.read_bytes().count(b'"k":"deal_end"') >= count:
            return
        time.sleep(0.05)


@pytest.mark.parametrize("sig", ["SIGINT", *(pytest.param(s, marks=pytest.mark.slow) for s in ("SIGTERM", "SIGHUP", "SIGINT+SIGINT"))])
def test_a_stopped_match_prints_and_writes_the_result_of_its_finished_pairs(tmp_path, sig):
    log, out = tmp_path / "m.jsonl", tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", GREEDY, RANDOM, "--deals", "40000", "--log", str(log),
                             "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, start_new_session=True, env={**os.environ, "COLUMNS": "200"})
    try:
        _wait_for_deals(log, proc, 50)  # past the 40 rows a deals table shows whole
        bots = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True, check=False).stdout.split()
        assert len(bots) == 8  # two seats of a pair, in each of two seatings, for each bot
        for name in sig.split("+"):
            proc.send_signal(getattr(signal, name))
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == X.INTERRUPTED, stderr
    assert "Traceback" not in stderr
    result = json.loads(out.read_text())
    pairs = result["margin"]["greedy_bot"]["paired"]["n"]
    assert result["interrupted"] is True and pairs >= 25
    assert len(result["deals"]) in (2 * pairs, 2 * pairs + 1)  # a pair's first orientation may be played
    assert sum(t["points"] for t in result["totals"]) == sum(sum(d["wrote"]) for d in result["deals"])
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]
    text = " ".join(stdout.split())
    assert f"Match interrupted after {pairs} pairs: the figures above cover those pairs only." in text
    assert f"over {pairs} paired deals" in text and "deals in all: the first 20 and the last 20 are shown" in text
    assert f"interrupted after {pairs} pairs (terminated by {sig.split('+')[0]}); the log so far is in {log}, the result in {out}" in stderr
    records = [r for _, r in read_log(log)]
    assert sum(r["k"] == "deal_end" for r in records) == len(result["deals"])
    assert records[-1]["k"] != "result"  # the log says where it stopped: verify calls it incomplete
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in bots):
        assert time.monotonic() < deadline, f"bots still alive after {sig}: {bots}"
        time.sleep(0.05)


@pytest.mark.slow
def test_stopped_before_a_pair_is_finished_says_so(tmp_path):
    """A signal while the bots start: no pair, no figures, but still the JSON and exit 130."""
    slow = tmp_path / "slow_bot.py"
    slow.write_text(f"import time, runpy, sys\ntime.sleep(5)\nsys.argv = [{GREEDY!r}]\nrunpy.run_path({GREEDY!r}, run_name='__main__')\n")
    log, out = tmp_path / "m.jsonl", tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", str(slow), FIRST, "--log", str(log), "--json", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        # the bots are started after the signals are caught: once both run, slow_bot sleeps 5 s more
        while len(subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True, check=False).stdout.split()) < 2:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == X.INTERRUPTED, stderr
    assert "Match interrupted before a pair was finished: no result." in stdout
    result = json.loads(out.read_text())
    assert result["interrupted"] is True and result["deals"] == [] and result["winner"] is None


# -- a long match's tables ------------------------------------------------------------------------


def test_a_long_match_summarises_its_deals_table_unless_full(tmp_path):
    res = run("match", FIRST, GREEDY, "--deals", "24", "--log", str(tmp_path / "a.jsonl"), "--seed", "2")
    assert res.exit_code == 0, res.output
    text = res.stdout
    rows = re.findall(r"^\s+(\d+)\s+([01])\s+[AB]@\d", text, flags=re.MULTILINE)
    assert [(int(d), int(o)) for d, o in rows] == [(k, o) for k in (*range(1, 11), *range(15, 25)) for o in (0, 1)]
    assert re.search(r"^\s+…\s+…", text, flags=re.MULTILINE)
    assert ("48 deals in all: the first 20 and the last 20 are shown, 8 between them are not; --full prints every row "
            "(--json has every deal)") in text
    res = run("match", FIRST, GREEDY, "--deals", "24", "--log", str(tmp_path / "b.jsonl"), "--seed", "2", "--full")
    rows = re.findall(r"^\s+(\d+)\s+([01])\s+[AB]@\d", res.stdout, flags=re.MULTILINE)
    assert len(rows) == 48 and "deals in all" not in res.stdout and "…" not in res.stdout
    res = run("match", FIRST, GREEDY, "--deals", "20", "--log", str(tmp_path / "c.jsonl"))  # 40 rows: all of them
    assert len(re.findall(r"^\s+(\d+)\s+([01])\s+[AB]@\d", res.stdout, flags=re.MULTILINE)) == 40 and "deals in all" not in res.stdout


def test_a_long_match_of_games_summarises_its_games_table_in_whole_pairs(tmp_path):
    res = run("match", FIRST, GREEDY, "--variant", "block", "--players", "2", "--games", "25", "--log", str(tmp_path / "a.jsonl"))
    assert res.exit_code == 0, res.output
    assert "50 games in all: the first 20 and the last 20 are shown, 10 between them are not" in res.stdout
    games = re.findall(r"^\s+(\d+)\s+([01])\s+\d+\s+\d+ / \d+", res.stdout, flags=re.MULTILINE)
    assert [(int(g), int(o)) for g, o in games] == [(g, o) for g in (*range(1, 11), *range(16, 26)) for o in (0, 1)]
