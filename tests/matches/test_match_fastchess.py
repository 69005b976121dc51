"""fastchess's habits on ``referee match`` (issue 40 §5): the Elo and LOS every N pairs
(``--rating-interval``, as ``-ratinginterval``), a deal file played from a start or in a seeded
random order (``--deals-start``, ``--deals-order``, as a league's), a bot's own environment
(``--env "BOT: NAME=VALUE"``, as a league bot's ``env``), a notice when ``-j`` asks for more
lanes than the match has segments, and the event's name (``--event``) in the log's header and
the reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import read_log
from support.commands import one_line_error

from referee.base import exitcodes as X
from referee.base.seeds import parse_seed, seed_text
from referee.engine import variant
from referee.engine.core.deal import deal_from_seed, format_deal_line, parse_deal_lines
from referee.engine.core.shuffle import BLAKE2B_GAMES
from referee.matches.deal_order import played_order
from tests.matches.test_match import FIRST, GREEDY, RANDOM, run


def header(log: Path) -> dict:
    return next(r for _, r in read_log(log) if r["k"] == "match")


def book(tmp_path: Path, count: int = 8, name: str = "book.jsonl", vid: str = "block", players: int = 2) -> Path:
    """A deal file of ``count`` seeded deals of the game."""
    v = variant(vid)
    shape = v.shape(players, v.resolve_options(players, {}))
    path = tmp_path / name
    path.write_text("".join(format_deal_line(deal_from_seed(77, i, shape, BLAKE2B_GAMES), shape, i) + "\n" for i in range(count)))
    return path


def hands_played(log: Path) -> list:
    """The hands of each deal of orientation 0, in the order the match played them."""
    return [r["hands"] for _, r in read_log(log) if r["k"] == "deal" and r["orientation"] == 0]


# -- --event --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_event_is_kept_in_the_header_shown_in_the_reports_and_verified(tmp_path):
    log = tmp_path / "m.jsonl"
    res = run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", "--seed", "2", "--event", "Spring cup 2026", "--log", str(log))
    assert res.exit_code == X.OK, res.output
    assert header(log)["event"] == "Spring cup 2026"
    assert res.stdout.splitlines()[0] == "Event: Spring cup 2026"
    assert run("verify", str(log)).exit_code == X.OK
    site = tmp_path / "site"
    assert run("report", str(log), "-O", str(site)).exit_code == X.OK
    assert "Event: Spring cup 2026" in (site / "index.html").read_text(encoding="utf-8")
    # Without --event the header has no such field (logs before it verify as they did).
    plain = tmp_path / "plain.jsonl"
    assert run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", "--seed", "2", "--log", str(plain), "-q").exit_code == X.OK
    assert "event" not in header(plain)
    assert run("verify", str(plain)).exit_code == X.OK


@pytest.mark.parametrize("event", ["", "   ", "a\tb", "x" * 201])
def test_a_bad_event_name_is_one_line(tmp_path, event):
    one_line_error(run("match", GREEDY, FIRST, "--event", event, "--log", str(tmp_path / "m.jsonl")), "--event", code=X.USAGE)
    assert not (tmp_path / "m.jsonl").exists()


# -- --deals-order and --deals-start ----------------------------------------------------------------


def test_played_order_is_the_leagues():
    deals = list(range(14))
    assert played_order(deals, "sequential", 3, 1, "ab") == [*range(2, 14), 0, 1]
    shuffled = played_order(deals, "random", 1, 5, "ab", per_block=7)
    assert shuffled in ([*range(7), *range(7, 14)], [*range(7, 14), *range(7)])  # whole blocks, each in order
    assert played_order(deals, "random", 1, 5, "ab") == played_order(deals, "random", 1, 5, "ab") != played_order(deals, "random", 1, 6, "ab")


@pytest.mark.slow
def test_deals_start_plays_the_file_from_that_deal_and_verify_plays_it_again(tmp_path):
    path = book(tmp_path, 12, vid="sport", players=4)
    log = tmp_path / "m.jsonl"
    res = run("match", GREEDY, FIRST, "--variant", "sport", "--deals-file", str(path), "--deals-start", "5", "--deals", "8",
              "--log", str(log), "-q")
    assert res.exit_code == X.OK, res.output
    shape = variant("sport").shape(4, variant("sport").resolve_options(4, {}))
    deals = parse_deal_lines(path.read_text().splitlines(), shape)
    played = parse_deal_lines((tmp_path / "m.deals.jsonl").read_text().splitlines(), shape)
    assert played == [*deals[4:], *deals[:4]]
    assert header(log)["deals_file"] == str(tmp_path / "m.deals.jsonl")
    lines = (tmp_path / "m.deals.jsonl").read_text().splitlines()
    assert hands_played(log) == [json.loads(x)["hands"] for x in lines[:8]]  # deals 5 to 12 of the file
    assert run("verify", str(log)).exit_code == X.OK


@pytest.mark.slow
def test_deals_order_random_is_shuffled_by_the_seed_reproducibly(tmp_path):
    path = book(tmp_path, 12, vid="sport", players=4)

    def played(seed: str, name: str) -> list[str]:
        log = tmp_path / f"{name}.jsonl"
        res = run("match", GREEDY, FIRST, "--variant", "sport", "--deals-file", str(path), "--deals-order", "random", "--seed", seed,
                  "--log", str(log))
        assert res.exit_code == X.OK, res.output
        shown = seed_text(parse_seed(seed))
        assert f"seed: {shown}   (--seed {shown} plays these deals again)" in res.stdout
        assert run("verify", str(log)).exit_code == X.OK
        return (tmp_path / f"{name}.deals.jsonl").read_text().splitlines()

    a, again, other = played("0x1234567890abcdef1234", "a"), played("0x1234567890abcdef1234", "b"), played("0x99999999999999999999", "c")
    assert a == again != other
    original = path.read_text().splitlines()
    hands = lambda lines: sorted(json.dumps(json.loads(x)["hands"]) for x in lines)  # noqa: E731
    assert hands(a) == hands(original) and [json.loads(x)["hands"] for x in a] != [json.loads(x)["hands"] for x in original]


@pytest.mark.parametrize(("args", "says"), [
    (["--deals-order", "random"], "--deals-order and --deals-start go with --deals-file"),
    (["--deals-start", "2"], "go with --deals-file"),
    (["--deals-file", "{book}", "--deals-order", "shuffled"], "--deals-order 'shuffled': one of sequential, random"),
    (["--deals-file", "{book}", "--deals-start", "9"], "--deals-start: 9 is past the file's last deal (8)"),
    (["--deals-file", "{book}", "--deals-start", "0"], "--deals-start: 0 is not a deal"),
])
def test_bad_deal_orders_are_one_line(tmp_path, args, says):
    path = book(tmp_path)
    args = [a.replace("{book}", str(path)) for a in args]
    one_line_error(run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", *args, "--log", str(tmp_path / "m.jsonl")), says,
                   code=X.USAGE)
    assert not (tmp_path / "m.deals.jsonl").exists()


# -- --env for one bot ----------------------------------------------------------------------------


@pytest.mark.slow
def test_env_for_one_bot_reaches_that_bot_only_and_wins_over_the_shared_value(tmp_path):
    telling = f"sh -c 'echo \"LEVEL=$LEVEL SHARED=$SHARED\" >&2; exec python3 {FIRST}'"
    log = tmp_path / "m.jsonl"
    res = run("match", telling, telling, "--name", "a", "--name", "b", "--variant", "block", "--players", "2", "--seed", "1",
              "--env", "b: LEVEL=9", "--env", "SHARED=yes", "--env", "2: SHARED=no", "--log", str(log), "-q")
    assert res.exit_code == X.OK, res.output
    said = {name: (tmp_path / "m.stderr" / f"{name}.stderr.log").read_text().splitlines()[0] for name in ("a", "b")}
    assert said == {"a": "LEVEL= SHARED=yes", "b": "LEVEL=9 SHARED=no"}


@pytest.mark.parametrize(("env", "says"), [
    ("nobody: X=1", "BOT one of greedy_bot, first_bot"),
    ("greedy_bot: X", "write it as NAME=VALUE after greedy_bot:"),
    ("=1", "write it as NAME=VALUE"),
    ("X", "write it as NAME=VALUE"),
])
def test_a_bad_env_is_one_line(tmp_path, env, says):
    one_line_error(run("match", GREEDY, FIRST, "--env", env, "--log", str(tmp_path / "m.jsonl")), says, code=X.USAGE)


# -- -j and --rating-interval -----------------------------------------------------------------------


@pytest.mark.slow
def test_more_lanes_than_segments_gets_a_notice_and_enough_lanes_none(tmp_path):
    res = run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", "--seed", "1", "-j", "5", "--log", str(tmp_path / "a.jsonl"))
    assert res.exit_code == X.OK, res.output
    assert ("note: -j 5 asks for more lanes than the match has segments: 2 (a game in each of its 2 seatings), so 2 play at once; "
            "--games N gives it N times as many") in res.stderr
    res = run("match", GREEDY, FIRST, "--variant", "block", "--players", "2", "--seed", "1", "-j", "4", "--games", "2",
              "--log", str(tmp_path / "b.jsonl"))
    assert res.exit_code == X.OK, res.output
    assert "note: -j" not in res.stderr


@pytest.mark.slow
def test_rating_interval_prints_elo_and_los_every_n_pairs(tmp_path):
    res = run("match", GREEDY, RANDOM, "--variant", "sport", "--deals", "12", "--seed", "5", "--rating-interval", "4",
              "--log", str(tmp_path / "m.jsonl"), "-q")
    assert res.exit_code == X.OK, res.output
    lines = [line for line in res.stderr.splitlines() if line.startswith("After ")]
    assert [line.split(":")[0] for line in lines] == ["After 4 pairs", "After 8 pairs", "After 12 pairs"]
    assert all("Elo greedy_bot − random_bot " in line and "(95%), LOS " in line for line in lines), lines
    # The last line says what the result says.
    result = run("match", GREEDY, RANDOM, "--variant", "sport", "--deals", "12", "--seed", "5", "--log", str(tmp_path / "n.jsonl"))
    los = next(line for line in result.stdout.splitlines() if line.startswith("LOS (greedy_bot better than random_bot): "))
    assert lines[-1].endswith("LOS " + los.rsplit(" ", 1)[1])


@pytest.mark.slow
def test_rating_interval_of_three_bots_names_each_against_the_field(tmp_path):
    res = run("match", GREEDY, FIRST, RANDOM, "--variant", "kozel", "--players", "3", "--games", "1", "--seed", "5",
              "--rating-interval", "1", "--log", str(tmp_path / "m.jsonl"), "-q")
    assert res.exit_code == X.OK, res.output
    line = next(line for line in res.stderr.splitlines() if line.startswith("After 1 pair: "))
    assert "Elo against the field (95%): greedy_bot " in line and " · first_bot " in line and " · random_bot " in line


def test_rating_interval_below_one_is_refused(tmp_path):
    one_line_error(run("match", GREEDY, FIRST, "--rating-interval", "0"), "--rating-interval: at least 1 pair, not 0", code=X.USAGE)
