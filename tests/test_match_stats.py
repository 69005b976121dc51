"""`referee match` figures end to end: a winner only when significant, LOS, pair classes and Elo,
the ranking rule with three bots, --confidence, and --sprt stopping a match cleanly."""

from __future__ import annotations

import json
import re

import pytest

from referee import exitcodes as X
from referee.log import read_log
from referee.replay import LogWalker, verify
from tests.test_match import FIRST, GREEDY, RANDOM, match, one_line_error, run


def test_a_margin_whose_interval_crosses_zero_names_no_winner(tmp_path):
    # The old rule named greedy_bot the winner here (it wrote more), though the interval crosses 0.
    result, _, res = match(tmp_path, GREEDY, RANDOM, "--variant", "sport", "--deals", "4", "--seed", "4")
    paired = result["margin"]["greedy_bot"]["paired"]
    assert paired["mean"] > 0 and paired["ci"][0] < 0 < paired["ci"][1]
    assert result["ahead"] == "greedy_bot" and result["winner"] is None and result["significant"] is False
    text = " ".join(res.output.split())
    assert "No winner: greedy_bot is ahead, but not significant at 95%" in text
    assert "Winner:" not in text
    first = result["ranking"]["standings"][0]
    assert f"LOS (greedy_bot better than random_bot): {100 * first['los']:.1f}%" in text
    assert 0.5 < first["los"] < 0.975  # not significant: the LOS stays below 97.5%
    # Pairs: every deal in both orientations, classified LL … WW, and an Elo with its interval.
    assert result["ranking"]["class_labels"] == ["LL", "LD", "DD+WL", "WD", "WW"]
    assert sum(first["classes"]) == paired["n"] == 4
    assert "Pairs (a deal in both orientations)" in text and "Elo difference greedy_bot − random_bot" in text
    assert first["elo_ci"][0] < first["elo_ci"][1]


def test_the_confidence_level_sets_the_intervals(tmp_path):
    r95, _, _ = match(tmp_path, GREEDY, RANDOM, "--deals", "8", name="a")
    r80, _, res = match(tmp_path, GREEDY, RANDOM, "--deals", "8", "--confidence", "0.8", name="b")
    p95, p80 = r95["margin"]["greedy_bot"]["paired"], r80["margin"]["greedy_bot"]["paired"]
    assert r80["confidence"] == 0.8 and p80["ci95"] == p95["ci95"]
    assert p80["ci"][1] - p80["ci"][0] < p95["ci"][1] - p95["ci"][0]
    assert "80% interval over 8 paired deals" in " ".join(res.output.split())
    one_line_error(run("match", GREEDY, FIRST, "--confidence", "95"), X.USAGE, "between 0 and 1")


def test_three_bots_print_the_ranking_rule_and_rank_by_margin(tmp_path):
    result, _, res = match(tmp_path, GREEDY, RANDOM, FIRST, "--variant", "draw", "--games", "2")
    rows = result["ranking"]["standings"]
    means = [r["margin"]["mean"] for r in rows]
    assert means == sorted(means, reverse=True)
    assert {r["bot"]: r["margin"]["mean"] for r in rows} == pytest.approx(
        {name: m["paired"]["mean"] for name, m in result["margin"].items()})
    assert len(result["ranking"]["class_labels"]) == 7  # a game in 3 rotations: 0 … 6 half plays won
    text = " ".join(res.output.split())
    assert "Rule: ranked by the mean margin per game against the field" in text
    assert "A pair is a game in all 3 rotations" in text
    for r in rows:
        assert r["places"][0] <= r["place"] <= r["places"][1]
    assert result["ahead"] == rows[0]["bot"]
    assert result["winner"] == (rows[0]["bot"] if rows[0]["ahead_of_next"] else None)


def test_sprt_stops_the_match_cleanly_and_the_log_verifies(tmp_path):
    budget = 100
    result, log, res = match(tmp_path, GREEDY, RANDOM, "--deals", str(budget), "--sprt", "elo0=0", "elo1=200", "alpha=0.05", "beta=0.05",
                             "--live")
    state = result["sprt"]
    assert result["stopped_by"] == "sprt" and state["decision"] == "H1"
    assert state["test"] == {"kind": "elo", "h0": 0.0, "h1": 200.0, "alpha": 0.05, "beta": 0.05}
    pairs = state["pairs"]
    assert pairs < budget and len(result["deals"]) == 2 * pairs
    assert result["game_results"] == []  # the sport games stopped before their last deal
    assert state["llr"] >= state["upper"] == pytest.approx(2.9444, abs=1e-4)
    records = [r for _, r in read_log(log)]
    per_pair = [r for r in records if r["k"] == "sprt"]
    assert [r["pairs"] for r in per_pair] == list(range(1, pairs + 1))
    assert all(r["decision"] is None for r in per_pair[:-1])
    assert [r["k"] for r in records[-2:]] == ["stop", "result"]
    assert records[-1]["stopped_by"] == "sprt"
    assert verify(log).deals == 2 * pairs
    walker = LogWalker(log)
    walker.walk()
    assert walker.stop is not None and walker.stop["decision"] == "H1"
    checked = run("verify", str(log))
    assert checked.exit_code == 0 and f"stopped by the SPRT after {pairs} pairs: H1 accepted" in " ".join(checked.output.split())
    live = " ".join(res.stderr.split())
    for n in range(1, pairs + 1):  # the running score: the LLR and its bounds after every pair
        assert re.search(rf"after {n} pairs?: .*?; LLR [+-]\d+\.\d\d \(-2\.94, \+2\.94\)", live), n
    assert f"LLR {state['llr']:+.2f} (-2.94, +2.94): H1 accepted" in live
    text = " ".join(res.stdout.split())
    assert "LLR" in text and "(-2.944, +2.944)" in text and f"Stopped by the SPRT after {pairs} pairs" in text


def test_sprt_accepts_h0_on_the_margin_too(tmp_path):
    result, _, res = match(tmp_path, GREEDY, RANDOM, "--deals", "100", "--sprt", "margin0=30 margin1=40")
    assert result["sprt"]["decision"] == "H0" and result["stopped_by"] == "sprt"
    assert result["sprt"]["test"]["kind"] == "margin"
    assert "H0 accepted" in res.output


def test_sprt_with_its_budget_spent_says_so(tmp_path):
    result, log, res = match(tmp_path, GREEDY, RANDOM, "--deals", "4", "--sprt", "elo0=0 elo1=5")
    assert result["sprt"]["decision"] is None and result["stopped_by"] is None and result["sprt"]["pairs"] == 4
    assert len(result["game_results"]) == 2  # the games ran to their end
    assert "budget ran out before the SPRT decided" in " ".join(res.output.split())
    assert json.loads(log.read_text().splitlines()[-1])["sprt"]["pairs"] == 4


@pytest.mark.parametrize("args, needles", [
    (["--sprt", "elo0=0"], ["elo1"]),
    (["--sprt", "elo0=10 elo1=5"], ["less than"]),
    (["--sprt", "alpha=2 elo0=0 elo1=5"], ["alpha"]),
    (["--sprt", "gamma=1"], ["SPRT setting 'gamma=1'"]),
])
def test_bad_sprt_settings_are_refused_in_one_line(args, needles):
    one_line_error(run("match", GREEDY, FIRST, *args), X.USAGE, *needles)


def test_sprt_needs_two_bots():
    one_line_error(run("match", GREEDY, FIRST, RANDOM, "--variant", "draw", "--sprt", "elo0=0 elo1=5"), X.USAGE, "2 bots")


def test_sprt_stops_games_to_a_target_after_a_game_pair(tmp_path):
    result, log, _ = match(tmp_path, GREEDY, RANDOM, "--variant", "draw", "--players", "2", "--games", "30",
                           "--sprt", "margin0=0", "margin1=40")
    pairs = result["sprt"]["pairs"]
    assert result["stopped_by"] == "sprt" and pairs < 30
    assert len(result["game_results"]) == 2 * pairs  # whole games, both orientations, none cut short
    assert verify(log).games == 2 * pairs
