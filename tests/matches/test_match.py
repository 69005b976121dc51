"""`referee match` end to end with real bot processes: the issue's checks for the match runner,
the log, replay and verify, and the command line's answers to bad input."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import msgspec
import pytest
from support import read_log, strip_timings
from support.commands import cli

from referee.audit.verify import Inconsistent, verify
from referee.base import exitcodes as X
from referee.matches.report import verdict_text
from referee.matches.results import MatchSummary

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots"
GREEDY = str(BOTS / "greedy_bot.py")
RANDOM = f"{BOTS / 'random_bot.py'} 7"  # seeded: bots do not inherit the environment (BOT_SEED)
FIRST = str(BOTS / "first_bot.py")



def run(*args: str):
    return cli(*args)


def match(tmp_path: Path, *args: str, name: str = "m"):
    """A match played by the command line, with seed 1 unless the arguments give a seed or a
    deal file (a match without one deals from a fresh secret seed: tests/base/test_fair_play.py)."""
    log = tmp_path / f"{name}.jsonl"
    out = tmp_path / f"{name}.json"
    seeded = () if any(str(a) in ("--seed", "--deals-file") for a in args) else ("--seed", "1")
    res = run("match", *args, *seeded, "--log", str(log), "--json", str(out), "--move-time", "10")
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text()), log, res


def test_greedy_beats_random_over_12_sport_deals(tmp_path):
    result, log, res = match(tmp_path, GREEDY, RANDOM, "--variant", "sport", "--deals", "12", "--seed", "5")
    assert result["winner"] == "greedy_bot"
    margin = result["margin"]["greedy_bot"]["paired"]
    assert margin["mean"] > 0
    assert margin["n"] == 12
    assert len(result["deals"]) == 24  # every deal in both orientations
    text = " ".join(res.output.split())
    assert "Winner: greedy_bot" in text
    assert "95% interval over 12 paired deals" in text
    assert "read unpaired" in text


def test_a_deterministic_bot_against_itself_has_margin_zero_in_every_pair(tmp_path):
    result, _, _ = match(tmp_path, FIRST, FIRST, "--variant", "sport", "--deals", "8", "--seed", "3")
    names = [b["name"] for b in result["bots"]]
    assert names == ["first_bot", "first_bot_2"]
    by_deal: dict[int, list[dict]] = {}
    for d in result["deals"]:
        by_deal.setdefault(d["deal"], []).append(d)
    assert len(by_deal) == 8
    for plays in by_deal.values():
        a = sum(d["net"][0] - d["net"][1] for d in plays)
        assert a == 0, plays
    paired = result["margin"]["first_bot"]["paired"]
    assert paired["mean"] == 0 and paired["sd"] == 0
    assert result["winner"] is None


def test_same_seed_gives_the_same_log_apart_from_timings_and_logs_verify(tmp_path):
    _, log1, _ = match(tmp_path, GREEDY, FIRST, "--variant", "sport", "--deals", "4", "--seed", "11", name="a")
    _, log2, _ = match(tmp_path, GREEDY, FIRST, "--variant", "sport", "--deals", "4", "--seed", "11", name="b")
    one = [strip_timings(r) for _, r in read_log(log1)]
    two = [strip_timings(r) for _, r in read_log(log2)]
    assert one == two
    assert verify(log1).plays > 50
    res = run("verify", str(log1))
    assert res.exit_code == 0 and "consistent" in res.output


def _edit_first_play(log: Path, out: Path) -> None:
    """Change one accepted play (and the bot's line) to another legal-looking tile."""
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["k"] == "play":
            a, b = rec["tile"]
            rec["tile"] = [a, b + 1] if b < 6 else [a - 1, b]
            lines[i] = json.dumps(rec)
            sent = json.loads(lines[i - 1])
            assert sent["k"] == "in"
            msg = json.loads(sent["line"])
            msg["tile"] = rec["tile"]
            sent["line"] = json.dumps(msg)
            lines[i - 1] = json.dumps(sent)
            break
    out.write_text("\n".join(lines) + "\n")


def test_a_log_edited_to_change_one_move_fails_verify(tmp_path):
    _, log, _ = match(tmp_path, GREEDY, FIRST, "--variant", "sport", "--deals", "4")
    edited = tmp_path / "edited.jsonl"
    _edit_first_play(log, edited)
    with pytest.raises(Inconsistent):
        verify(edited)
    res = run("verify", str(edited))
    assert res.exit_code == X.INCONSISTENT


def test_a_log_with_a_changed_score_fails_verify(tmp_path):
    _, log, _ = match(tmp_path, GREEDY, FIRST, "--variant", "sport", "--deals", "4")
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["k"] == "deal_end":
            rec["totals"][0] += 1
            lines[i] = json.dumps(rec)
            break
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    with pytest.raises(Inconsistent, match=r"line \d+ \(deal_end\): totals: the log has"):
        verify(edited)


def test_kozel_whole_games_end_with_a_goat_and_a_correct_dry_flag(tmp_path):
    result, log, res = match(tmp_path, GREEDY, RANDOM, "--variant", "kozel", "--games", "2")
    assert result["unit"] == "game"
    assert len(result["game_results"]) == 4  # 2 games × 2 orientations
    for g in result["game_results"]:
        goats = g["losers"]
        assert goats, g
        assert all(g["totals"][s] >= 101 for s in goats)
        assert g["dry"] == [s for s in g["winners"] if g["totals"][s] == 0]
        assert ("won dry" in g["reason"]) == bool(g["dry"])
    # whole games in each orientation start from the same point of the deal stream
    starts = {}
    for d in result["deals"]:
        starts.setdefault((d["game"], d["orientation"]), d["stream"])
    assert starts[(0, 0)] == starts[(0, 1)] == 0
    assert starts[(1, 0)] == starts[(1, 1)] > 0
    assert verify(log).games == 4


@pytest.mark.parametrize(
    "variant, extra",
    [("draw", ["--players", "3"]), ("block", []), ("club", ["--players", "4"])],
)
def test_games_to_a_target_with_n_bots_or_alternating_seats(tmp_path, variant, extra):
    bots = [GREEDY, RANDOM, FIRST] if extra[-1:] == ["3"] else [GREEDY, FIRST]
    result, log, _ = match(tmp_path, *bots, "--variant", variant, *extra)
    n_orient = len(result["orientations"])
    assert n_orient == (3 if len(bots) == 3 else 2)
    assert len(result["game_results"]) == n_orient
    assert verify(log).games == n_orient


def test_a_bot_that_faults_mid_match_loses_the_deal_and_the_match_completes(tmp_path):
    bad = tmp_path / "bad_bot.py"
    marker = tmp_path / "faulted-once"
    bad.write_text(
        "import json, os, sys\n"
        f"MARK = {str(marker)!r}\n"
        "turns = 0\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'name': 'bad', 'protocol': 1}), flush=True)\n"
        "    elif msg['type'] == 'turn':\n"
        "        turns += 1\n"
        "        if turns == 3 and not os.path.exists(MARK):\n"
        "            open(MARK, 'w').close()  # misbehave once in the whole match\n"
        "            print(json.dumps({'type': 'play', **msg['legal'][0], 'end': 'nowhere'}), flush=True)\n"
        "        else:\n"
        "            print(json.dumps({'type': 'play', **msg['legal'][0]}), flush=True)\n"
        "    elif msg['type'] == 'match_end':\n"
        "        break\n"
    )
    result, log, res = match(tmp_path, FIRST, str(bad), "--variant", "sport", "--deals", "4")
    faults = result["faults"]
    assert len(faults) == 1 and faults[0]["bot"] == "bad_bot" and faults[0]["kind"] == "illegal"
    assert faults[0]["line"] and '"tile": [6, 6]' in faults[0]["line"]
    assert len(result["deals"]) == 8
    faulted = [d for d in result["deals"] if d["end"] == "fault"]
    assert len(faulted) == len(faults)
    for d in faulted:
        assert d["by_bot"] == "bad_bot"
        assert d["points"][1] == 0 and d["points"][0] > 0  # the opponents write the faulting pair's pips
    assert "illegal" in res.output
    assert verify(log).faults == len(faults)


def test_replay_prints_tiles_the_line_and_scores(tmp_path):
    _, log, _ = match(tmp_path, GREEDY, FIRST, "--variant", "draw")
    res = run("replay", str(log), "--game", "1", "--deal", "1", "--orientation", "0")
    assert res.exit_code == 0, res.output
    text = res.output
    assert "== game 1, orientation 0, deal 1" in text
    assert "leads [" in text and "|" in text
    assert "draws" in text or "knocks" in text or "plays on the" in text
    assert "wrote" in text and "totals" in text
    assert "orientation 1" not in text


def test_deals_generate_and_show_round_trip(tmp_path):
    path = tmp_path / "deals.jsonl"
    res = run("deals", "generate", "--variant", "kozel", "--seed", "5", "--count", "60", "--output", str(path))
    assert res.exit_code == 0, res.output
    assert len(path.read_text().splitlines()) == 60
    res = run("deals", "show", str(path), "--variant", "kozel")
    assert res.exit_code == 0 and "deal 6" in res.output and "[" in res.output
    # the same deals from the file and from the seed give the same match
    a, _, _ = match(tmp_path, GREEDY, FIRST, "--variant", "kozel", "--seed", "5", name="seeded")
    b, _, _ = match(tmp_path, GREEDY, FIRST, "--variant", "kozel", "--deals-file", str(path), name="filed")
    strip = lambda r: [dict(d) for d in r["deals"]]  # noqa: E731
    assert strip(a) == strip(b)


# -- bad input: one clear line, the right exit code, no traceback -------------------------------


def one_line_error(res, code: int, *needles: str) -> None:
    assert res.exit_code == code, res.output
    text = res.output.strip()
    assert "Traceback" not in text
    assert text.startswith("error:"), text
    for needle in needles:
        assert needle in text, text


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--variant", "poker"], ["unknown variant 'poker'", "sport"]),
        (["--variant", "sport", "--deals", "10"], ["multiple of 4", "10"]),
        (["--variant", "sport", "--games", "0"], ["--games", "at least 1"]),
        (["--variant", "kozel", "--deals", "4"], ["--games"]),
        (["--variant", "kozel", "-o", "rule13=sometimes"], ["rule13", "drop | hang | remember"]),
        (["--variant", "kozel", "-o", "colour=red"], ["no option 'colour'"]),
        (["--variant", "kozel", "--players", "2", "-o", "teams=none"], ["teams", "4 players"]),
        (["--variant", "draw", "--players", "3"], ["3 bots"]),
        (["--variant", "draw", "--players", "7"], ["2, 3, 4 players"]),
        (["--variant", "sport", "--move-time", "-1"], ["move"]),
        (["--variant", "sport", "-o", "nonsense"], ["name=value"]),
    ],
)
def test_bad_options_are_refused_in_one_line(args, needles):
    res = run("match", GREEDY, FIRST, *args)
    one_line_error(res, X.USAGE, *needles)


def test_missing_and_non_executable_bots_are_refused(tmp_path):
    one_line_error(run("match", str(tmp_path / "nowhere.py"), FIRST), X.USAGE, "nowhere.py", "no such file")
    plain = tmp_path / "plain_bot"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(stat.S_IRUSR | stat.S_IWUSR)
    one_line_error(run("match", str(plain), FIRST), X.USAGE, "not executable")


def test_a_bad_deal_file_is_refused_naming_the_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the default log would be claimed
    path = tmp_path / "deals.jsonl"
    good = run("deals", "generate", "--variant", "sport", "--count", "2").stdout.splitlines()
    broken = json.loads(good[1])
    broken["hands"][0][0] = broken["hands"][1][0]  # a tile twice, another missing
    path.write_text(good[0] + "\n" + json.dumps(broken) + "\n")
    one_line_error(run("match", GREEDY, FIRST, "--deals-file", str(path), "--deals", "4"), X.USAGE, "line 2", "appears twice")
    path.write_text(good[0] + "\n{not json\n")
    one_line_error(run("match", GREEDY, FIRST, "--deals-file", str(path), "--deals", "4"), X.USAGE, "line 2", "not valid JSON")
    path.write_text("\n".join(good) + "\n")
    one_line_error(run("match", GREEDY, FIRST, "--deals-file", str(path), "--deals", "4"), X.USAGE, "holds 2 deals")
    logs = tmp_path / "referee-logs"
    assert not logs.exists() or not list(logs.iterdir()), "a match refused before it began left an empty log behind"


def test_a_deal_file_without_deals_plays_all_its_deals(tmp_path):
    """``--deals-file`` alone plays the file (it once wanted the default --deals 12 of an 8-deal
    file, "though no --deals was typed"); a count the game refuses says what would play."""
    path = tmp_path / "deals.jsonl"
    assert run("deals", "generate", "--variant", "sport", "--seed", "3", "--count", "10", "--output", str(path)).exit_code == 0
    one_line_error(run("match", GREEDY, FIRST, "--deals-file", str(path)), X.USAGE,
                   "the deal file holds 10 deals, and sport plays a multiple of 4 deals", "give --deals 8 to play its first 8")
    eight = tmp_path / "eight.jsonl"
    eight.write_text("".join(path.read_text().splitlines(keepends=True)[:8]))
    result, log, _ = match(tmp_path, GREEDY, FIRST, "--deals-file", str(eight))
    assert result["deals_per_game"] == 8 and len(result["deals"]) == 16 and result["seed"] is None
    assert verify(log).deals == 16
    one_line_error(run("match", GREEDY, FIRST, "--deals-file", str(eight), "--deals", "12"), X.USAGE,
                   "the deal file holds 8 deals; the match plays 12 (--deals 12)")


def test_a_fixed_deal_game_plays_several_games_each_from_its_own_deals(tmp_path):
    result, log, _ = match(tmp_path, GREEDY, FIRST, "--deals", "4", "--games", "2", "--seed", "9")
    assert result["games"] == 2 and len(result["deals"]) == 16 and len(result["game_results"]) == 4
    assert {(d["game"], d["deal"], d["stream"]) for d in result["deals"]} == {(g, k, 4 * g + k) for g in range(2) for k in range(4)}
    assert result["margin"]["greedy_bot"]["paired"]["n"] == 8
    assert verify(log).games == 4


def test_a_bot_that_cannot_start_exits_3_with_its_stderr(tmp_path):
    broken = tmp_path / "broken_bot.py"
    broken.write_text("import sys\nprint('cannot load my weights', file=sys.stderr)\nsys.exit(5)\n")
    res = run("match", str(broken), FIRST, "--variant", "sport", "--deals", "4", "--log", str(tmp_path / "l.jsonl"))
    assert res.exit_code == X.BOT_START, res.output
    assert "could not be started" in res.output
    assert "cannot load my weights" in res.output
    assert "Traceback" not in res.output


def test_verify_and_replay_refuse_what_is_not_a_log(tmp_path):
    one_line_error(run("verify", str(tmp_path / "none.jsonl")), X.USAGE, "no such file")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\n")
    one_line_error(run("verify", str(junk)), X.USAGE, "line 1")
    one_line_error(run("replay", str(junk)), X.USAGE, "line 1")


def test_variants_and_schema_commands(tmp_path):
    res = run("variants")
    assert res.exit_code == 0
    for vid in ("sport", "kozel", "draw", "block", "club", "rule13"):
        assert vid in res.output
    assert run("schema", "--check").exit_code == 0
    schema = json.loads(run("schema").output)
    assert "ToBot" in schema["$defs"]


def test_python_dash_m_referee_runs(tmp_path):
    import subprocess

    res = subprocess.run([sys.executable, "-m", "referee", "variants"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "COLUMNS": "200"})
    assert res.returncode == 0 and "kozel" in res.stdout


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP", "SIGKILL", "SIGINT+SIGINT", "SIGINT+SIGTERM", "SIGTERM+SIGINT"])
def test_stopping_the_referee_leaves_no_bot_behind(tmp_path, sig):
    """Ctrl-C, SIGTERM and SIGHUP clean up and exit 130; even SIGKILL takes the bots with it.
    Two signals back to back (an impatient second Ctrl-C) stop it the same way: the second cannot
    break into the cleanup, so the match neither hangs nor leaves a bot or a half line behind."""
    import signal
    import subprocess
    import time

    log = tmp_path / "stopped.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee", "match", GREEDY, RANDOM, "--deals", "40000", "--log", str(log), "-q"],
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.stat().st_size > 10_000):
            assert time.monotonic() < deadline and proc.poll() is None, "the match did not get going"
            time.sleep(0.05)
        bots = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert len(bots) == 8  # two seats of a pair in each of two seatings, for each of two bots
        for name in sig.split("+"):
            proc.send_signal(getattr(signal, name))
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if sig == "SIGKILL":
        assert code == -signal.SIGKILL
    else:
        assert code == X.INTERRUPTED
        stderr = proc.stderr.read()
        assert "interrupted" in stderr and "Traceback" not in stderr
        assert json.loads(log.read_bytes().splitlines()[-1])  # the log was closed on a whole line
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in bots):
        assert time.monotonic() < deadline, f"bots still alive after {sig}: {bots}"
        time.sleep(0.05)
    proc.stderr.close()


# -- what bot authors hit (issue 8) ------------------------------------------------------------

FLAWED = str(ROOT / "tests" / "hostile_bots" / "flawed.py")


@pytest.mark.parametrize(
    ("flaw", "expected"),
    [
        ("banner", ["flawed: expected a hello, but the line is not valid: JSON is malformed",
                    "the line: 'flawed bot v2 -- ready'", "standard output is for protocol lines only"]),
        ("no_flush", ["no hello within the start-up limit of 2 s, although it read the referee's hello",
                      "does it flush its standard output after every line?", "flawed: got hello"]),
    ],
)
def test_a_start_up_failure_shows_the_line_and_a_hint(tmp_path, flaw, expected):
    res = run("match", f"{FLAWED} {flaw}", FIRST, "--variant", "block", "--players", "2", "--startup-time", "2",
              "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == X.BOT_START, res.output
    for text in expected:
        assert text in res.stderr, (text, res.stderr)


def test_bot_text_that_looks_like_markup_is_printed_as_written(tmp_path):
    """A stderr line such as ``[/INFO]`` used to crash the referee (exit 1) with a MarkupError;
    ``[perlbot]`` vanished.  Names given with --name are printed as written too."""
    res = run("match", f"{FLAWED} markup_stderr", FIRST, "--variant", "block", "--players", "2", "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == X.BOT_START, res.output
    assert "[perlbot] loading [bold]weights[/bold]" in res.stderr
    assert "[/INFO] cannot go on" in res.stderr
    res = run("match", f"{FLAWED} debug_print", FIRST, "--variant", "block", "--players", "2", "--name", "[/INFO]",
              "--name", "[perlbot]", "--log", str(tmp_path / "n.jsonl"), "--json", str(tmp_path / "r.json"))
    assert res.exit_code == X.OK, res.output
    assert "A = [/INFO], B = [perlbot]" in res.stdout
    assert "\n[/INFO] " in res.stdout and "\n[perlbot] " in res.stdout  # the totals table
    assert verdict_text(msgspec.convert(json.loads((tmp_path / "r.json").read_text()), MatchSummary)).plain in res.stdout


def test_a_fault_in_play_shows_the_line_and_a_hint(tmp_path):
    """As ``referee check`` does: under each fault line the line the bot wrote, and the hint once."""
    res = run("match", f"{FLAWED} illegal", FIRST, "--variant", "block", "--players", "2", "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == X.OK, res.output
    faults = res.stdout.partition("Faults:\n")[2].partition("\n\n")[0].splitlines()
    assert faults[0].startswith("  flawed game 1 deal ") and ": illegal: " in faults[0]
    assert faults[1] == '      the line: {"type": "play", "tile": ' + faults[1].partition('"tile": ')[2]
    assert faults[2] == "      hint: Any entry of turn.legal, copied as it is, is a legal answer."
    assert sum(line.startswith("      hint: ") for line in faults) == 1
    res = run("match", f"{FLAWED} debug_print", FIRST, "--variant", "block", "--players", "2", "--log", str(tmp_path / "d.jsonl"))
    assert "      the line: my hand: [[" in res.stdout and "hint: Standard output is for protocol lines only" in res.stdout


@pytest.mark.parametrize(("name", "shown"), [("x" * 5000, "… (5,000 characters)"), ("", "''"), ("a\nb", "'a\\nb'"), ("   ", "'   '")])
def test_a_name_that_cannot_be_a_name_is_refused_before_anything_starts(tmp_path, name, shown):
    """A 5,000-character --name was reported as "a bot could not be started" (its stderr file's
    name was too long); an empty one printed "No winner:  is ahead"."""
    res = run("match", GREEDY, FIRST, "--name", name, "--name", "b", "--log", str(tmp_path / "m.jsonl"))
    one_line_error(res, X.USAGE, "--name ", shown, "a bot's name is 1 to 64 printable characters")
    assert not (tmp_path / "m.jsonl").exists()
    result, _, _ = match(tmp_path, GREEDY, FIRST, "--deals", "4", "--name", "n" * 64, "--name", "[b]")
    assert [b["name"] for b in result["bots"]] == ["n" * 64, "[b]"]


def test_a_folder_where_a_file_belongs_is_called_a_folder(tmp_path):
    for args in (["replay", str(tmp_path)], ["verify", str(tmp_path)]):
        one_line_error(run(*args), X.USAGE, f"{tmp_path} is a folder; give a match log")
    one_line_error(run("report", str(tmp_path), "-O", str(tmp_path / "site")), X.USAGE, f"{tmp_path} is a folder")
    one_line_error(run("deals", "show", str(tmp_path)), X.USAGE, f"deal file {tmp_path} is a folder")
    one_line_error(run("match", GREEDY, FIRST, "--deals-file", str(tmp_path)), X.USAGE, f"deal file {tmp_path} is a folder")


def test_replay_names_a_missing_or_mistyped_field_in_words(tmp_path):
    _, log, _ = match(tmp_path, GREEDY, FIRST, "--deals", "4")
    header = log.read_text().splitlines()[0]
    missing = tmp_path / "missing.jsonl"
    missing.write_text(header + '\n{"k": "game"}\n')
    one_line_error(run("replay", str(missing)), X.USAGE, "cannot replay", "line 2 is not a 'game' record of a match log",
                   "missing required field `game`")
    typed = tmp_path / "typed.jsonl"
    typed.write_text(json.dumps({**json.loads(header), "bots": 7}) + "\n" + "\n".join(log.read_text().splitlines()[1:40]) + "\n")
    res = run("replay", str(typed))
    one_line_error(res, X.USAGE, "line 1 is not a 'match' record", "Expected `array`, got `int` - at `$.bots`")
    assert "object is not" not in res.output
    for command in (["verify", str(typed)], ["report", str(typed), "-O", str(tmp_path / "site")]):  # the same line from each
        one_line_error(run(*command), X.USAGE, "line 1 is not a 'match' record", "at `$.bots`")


def test_every_bot_is_named_from_its_command(tmp_path):
    """An interpreter names no bot: the file it runs does (every Java bot was called java)."""
    interpreter = sys.executable
    result, _, _ = match(tmp_path, f"{interpreter} -u {FIRST}", f"{interpreter} {RANDOM}", "--variant", "block", "--players", "2")
    assert [b["name"] for b in result["bots"]] == ["first_bot", "random_bot"]
    result, _, _ = match(tmp_path, FIRST, f"{interpreter} {FIRST}", "--variant", "block", "--players", "2", name="same")
    assert [b["name"] for b in result["bots"]] == ["first_bot", "first_bot_2"]


def test_logs_are_never_overwritten(tmp_path, monkeypatch):
    """Without --log every match gets a log of its own (numbered); an existing --log file is
    replaced only with --overwrite."""
    monkeypatch.chdir(tmp_path)
    args = ["match", GREEDY, FIRST, "--variant", "block", "--players", "2", "-q"]
    first, second = run(*args, "--seed", "1"), run(*args, "--seed", "2")
    assert first.exit_code == second.exit_code == X.OK
    logs = tmp_path / "referee-logs"
    assert (logs / "match-block-1.jsonl").is_file() and (logs / "match-block-2.jsonl").is_file()
    third = run(*args, "--seed", "1")
    assert third.exit_code == X.OK
    assert (logs / "match-block-1-2.jsonl").is_file() and (logs / "match-block-1-2.stderr").is_dir()
    assert strip_timings([r for _, r in read_log(logs / "match-block-1.jsonl")]) == \
        strip_timings([r for _, r in read_log(logs / "match-block-1-2.jsonl")])
    before = (logs / "match-block-1.jsonl").read_bytes()
    refused = run(*args, "--log", str(logs / "match-block-1.jsonl"), "--seed", "3")
    assert refused.exit_code == X.USAGE
    assert "exists; add --overwrite to replace it" in refused.stderr
    assert (logs / "match-block-1.jsonl").read_bytes() == before
    replaced = run(*args, "--log", str(logs / "match-block-1.jsonl"), "--seed", "3", "--overwrite")
    assert replaced.exit_code == X.OK
    assert (logs / "match-block-1.jsonl").read_bytes() != before


def test_output_follows_columns_and_script_lines_never_wrap(tmp_path, monkeypatch):
    """COLUMNS sets the width even on a terminal that calls itself dumb (rich gave 80 there); the
    verdict, the log path, each fault and verify's line are never wrapped, however narrow."""
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("FORCE_COLOR", "1")  # a terminal, as far as rich can tell
    monkeypatch.setenv("COLUMNS", "150")
    wide = run("variants").stdout.splitlines()
    assert 80 < max(len(line) for line in wide) <= 150
    monkeypatch.setenv("COLUMNS", "40")
    log = tmp_path / "a-log-with-a-rather-long-name-to-overflow-forty-columns.jsonl"
    res = run("match", f"{FLAWED} debug_print", FIRST, "--variant", "block", "--players", "2", "--log", str(log),
              "--json", str(tmp_path / "r.json"))
    assert res.exit_code == X.OK, res.output
    lines = res.stdout.splitlines()
    data = json.loads((tmp_path / "r.json").read_text())
    faults = data["faults"]
    assert faults
    for f in faults:
        assert f"  {f['bot']} game {f['game'] + 1} deal {f['deal'] + 1} seat {f['seat']}: {f['kind']}: {f['detail']}" in lines
    assert all(line in lines for line in verdict_text(msgspec.convert(data, MatchSummary)).plain.splitlines())
    assert f"log: {log}   result: {tmp_path / 'r.json'}" in lines
    clean = tmp_path / "clean.jsonl"
    assert run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", "--log", str(clean), "-q").exit_code == X.OK
    verified = run("verify", str(clean))
    checked = verified.stdout.splitlines()
    assert verified.exit_code == X.OK, verified.output
    assert len(checked) == 1 and checked[0].startswith("consistent: ") and checked[0].endswith("score and the result")
