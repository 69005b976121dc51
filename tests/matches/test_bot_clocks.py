"""Per-bot time controls and a league's deal file (issue 33 item 9): ``referee match --tc`` (as
fastchess's per-engine ``tc=``), a league bot's ``clock``, and ``[game] deals_file`` with
``deals_order`` and ``deals_start`` (cutechess-cli's ``-openings``)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from support import read_log
from support.commands import referee as run_referee

from referee.base import exitcodes as X
from referee.engine import variant
from referee.engine.core.deal import parse_deal_lines
from tests.matches.test_match import FIRST, FLAWED, GREEDY, run

SLOW_ONCE = f"{FLAWED} slow_once"  # takes 0.6 s over its first answer, then answers at once


def header(log: Path) -> dict:
    return [r for _, r in read_log(log) if r["k"] == "match"][0]


@pytest.mark.slow
def test_tc_gives_one_bot_its_own_clock_and_the_log_and_verify_keep_it(tmp_path):
    log = tmp_path / "m.jsonl"
    res = run("match", SLOW_ONCE, SLOW_ONCE, "--name", "tight", "--name", "easy", "--variant", "block", "--players", "2",
              "--seed", "4", "--tc", "tight: move=0.3 startup=8", "--log", str(log), "--json", str(tmp_path / "r.json"))
    assert res.exit_code == X.OK, res.output
    faults = json.loads((tmp_path / "r.json").read_text())["faults"]
    assert faults and {f["bot"] for f in faults} == {"tight"}  # the same bot on the match's 5 s is never late
    assert {f["kind"] for f in faults} == {"timeout"}
    bots = header(log)["bots"]
    assert bots[0]["time_control"] == {"startup": 8.0, "move": 0.3, "bank": None, "increment": 0.0}
    assert "time_control" not in bots[1]
    hellos = {r["bot"]: r["limits"] for _, r in read_log(log) if r["k"] == "hello"}
    assert hellos["tight"]["move_ms"] == 300 and hellos["tight"]["startup_ms"] == 8000
    assert hellos["easy"]["move_ms"] == 5000
    verified = run("verify", str(log))
    assert verified.exit_code == X.OK, verified.output


def test_tc_by_number_and_bank_none(tmp_path):
    log = tmp_path / "m.jsonl"
    res = run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", "--seed", "1", "--bank", "30",
              "--tc", "2: bank=none move=2", "--log", str(log), "-q")
    assert res.exit_code == X.OK, res.output
    bots = header(log)["bots"]
    assert "time_control" not in bots[0] and bots[1]["time_control"] == {"startup": 10.0, "move": 2.0, "bank": None, "increment": 0.0}


@pytest.mark.parametrize(("tc", "says"), [
    ("nobody: move=1", "NAME one of greedy_bot, first_bot"),
    ("greedy_bot: mov=1", "'mov=1' is not one of startup=SECONDS"),
    ("greedy_bot: move=fast", "move='fast' is not a number of seconds"),
    ("greedy_bot: move=0", "--tc greedy_bot: 0 is out of bounds"),
    ("greedy_bot: bank=100000", "--tc greedy_bot: 100000 is out of bounds"),
    ("greedy_bot:", "give the bot's clock after its name"),
    ("3: move=1", "NAME one of"),
])
def test_a_bad_tc_is_one_line_and_exit_2(tmp_path, tc, says):
    res = run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", "--tc", tc, "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == X.USAGE
    assert says in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not (tmp_path / "m.jsonl").exists()


def test_tc_twice_for_one_bot_is_refused(tmp_path):
    res = run("match", GREEDY, FIRST, "--tc", "greedy_bot: move=1", "--tc", "1: move=2", "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == X.USAGE and "has a clock already" in res.stderr


# -- leagues ------------------------------------------------------------------------------------


def league(tmp_path: Path, game: str = "", greedy: str = "", name: str = "l") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nseed = 123456789012345678901\nsandbox = false\n\n[game]\nvariant = "sport"\ndeals = 4\n{game}\n'
                    f'[clock]\nmove = 5.0\n\n'
                    f'[[bot]]\nname = "greedy"\ncommand = "{GREEDY}"\n{greedy}\n\n[[bot]]\nname = "first"\ncommand = "{FIRST}"\n\n'
                    f'[[bot]]\nname = "first2"\ncommand = "{FIRST}"\n')
    return path


#: the command as a real process, its tables as wide as a wide terminal's
referee = partial(run_referee, env={"COLUMNS": "200"})


def logs_of(path: Path) -> list[Path]:
    return sorted(p for p in path.with_name(f"{path.stem}-logs").glob("*.jsonl") if not p.name.startswith("deals-"))


@pytest.mark.slow
def test_a_league_bot_with_a_clock_of_its_own(tmp_path):
    path = league(tmp_path, greedy="clock = { move = 0.75, bank = 40 }")
    ran = referee("league", "run", path, "-q", cwd=tmp_path)
    assert ran.returncode == X.OK, ran.stderr
    for log in logs_of(path):
        bots = {b["name"]: b for b in header(log)["bots"]}
        if "greedy" in bots:
            assert bots["greedy"]["time_control"] == {"startup": 10.0, "move": 0.75, "bank": 40.0, "increment": 0.0}
        assert all("time_control" not in b for n, b in bots.items() if n != "greedy")
        assert referee("verify", log, cwd=tmp_path).returncode == X.OK
    # its clock is part of the bot: changing it once it has results is refused, as its command is
    path.write_text(path.read_text().replace("move = 0.75", "move = 0.5"))
    again = referee("league", "run", path, "-q", cwd=tmp_path)
    assert again.returncode == X.USAGE and "greedy" in again.stderr and "clock" in again.stderr, again.stderr
    bad = league(tmp_path, greedy="clock = { move = 0 }", name="bad")
    refused = referee("league", "run", bad, cwd=tmp_path)
    assert refused.returncode == X.USAGE and "clock.move" in refused.stderr and len(refused.stderr.splitlines()) == 1, refused.stderr


def book(tmp_path: Path, count: int = 8) -> list[str]:
    made = referee("deals", "generate", "-v", "sport", "--seed", "5", "--count", str(count), "-O", tmp_path / "book.jsonl", cwd=tmp_path)
    assert made.returncode == X.OK, made.stderr
    return (tmp_path / "book.jsonl").read_text().splitlines()


def played_deals(log: Path) -> list:
    """The deals of a log's header deal file, as the match read them."""
    h = header(log)
    shape = variant(h["variant"]).shape(h["players"], h["options"])
    return parse_deal_lines(Path(h["deals_file"]).read_text().splitlines(), shape)


@pytest.mark.slow
def test_every_table_plays_the_deal_file_from_its_start(tmp_path):
    lines = book(tmp_path)
    shape = variant("sport").shape(4, {})
    deals = parse_deal_lines(lines, shape)
    path = league(tmp_path, game='deals_file = "book.jsonl"\ndeals_start = 3\n')
    ran = referee("league", "run", path, "-q", cwd=tmp_path)
    assert ran.returncode == X.OK, ran.stderr
    logs = logs_of(path)
    assert len(logs) == 3
    assert {header(log)["deals_file_sha256"] for log in logs} != {None} and len({header(log)["deals_file"] for log in logs}) == 1
    assert played_deals(logs[0]) == [*deals[2:], *deals[:2]]  # from the third, then round to the first
    # first and first2 are the same program: against greedy on the same deals they score the same
    against = {tuple(sorted(b["name"] for b in header(log)["bots"])): log for log in logs}
    ends = [[r["wrote"] for _, r in read_log(against[pair]) if r["k"] == "deal_end"] for pair in (("first", "greedy"), ("first2", "greedy"))]
    assert ends[0] and ends[0] == ends[1]
    for log in logs:
        assert referee("verify", log, cwd=tmp_path).returncode == X.OK


@pytest.mark.slow
def test_a_random_order_is_the_seeds_and_the_same_at_every_table(tmp_path):
    lines = book(tmp_path)
    deals = parse_deal_lines(lines, variant("sport").shape(4, {}))
    orders = []
    for name, seed in (("a", "1"), ("b", "1"), ("c", "2")):
        path = league(tmp_path, game='deals_file = "book.jsonl"\ndeals_order = "random"\n', name=name)
        path.write_text(path.read_text().replace("seed = 123456789012345678901", f"seed = {seed}"))
        ran = referee("league", "run", path, "-q", cwd=tmp_path)
        assert ran.returncode == X.OK, ran.stderr
        played = [played_deals(log) for log in logs_of(path)]
        assert all(p == played[0] for p in played)
        assert sorted(played[0], key=repr) == sorted(deals, key=repr) and played[0] != deals  # a permutation of the file's
        orders.append(played[0])
    assert orders[0] == orders[1] and orders[0] != orders[2]


@pytest.mark.parametrize(("game", "says"), [
    ('deals_file = "book.jsonl"\ndeals_start = 9\n', "game.deals_start: 9 is past the file's last deal (8)"),
    ('deals_file = "book.jsonl"\ndeals_order = "shuffled"\n', "game.deals_order: 'shuffled' is not one of sequential, random"),
    ('deals_file = "nowhere.jsonl"\n', "game.deals_file: nowhere.jsonl: No such file"),
    ('deals_start = 2\n', "go with game.deals_file"),
    ('deals_file = "short.jsonl"\n', "holds 2 deals, and a match plays 4"),
])
@pytest.mark.slow
def test_a_bad_deal_file_setting_is_one_line_and_exit_2(tmp_path, game, says):
    lines = book(tmp_path)
    (tmp_path / "short.jsonl").write_text("\n".join(lines[:2]) + "\n")
    refused = referee("league", "run", league(tmp_path, game=game), cwd=tmp_path)
    assert refused.returncode == X.USAGE and says in refused.stderr and len(refused.stderr.splitlines()) == 1, refused.stderr


def test_the_deal_file_is_hidden_from_sandboxed_bots(tmp_path):
    from tournaments.config import load_league
    from tournaments.runner import hidden_from_bots

    book(tmp_path)
    loaded = load_league(league(tmp_path, game='deals_file = "book.jsonl"\n'))
    assert (tmp_path / "book.jsonl").resolve() in hidden_from_bots(loaded, ("greedy", "first"))
