"""`referee match` figures end to end: a winner only when significant, LOS, pair classes and Elo,
the ranking rule with three bots, --confidence, and --sprt stopping a match cleanly."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support import read_log

from referee.audit.verify import verify
from referee.base import exitcodes as X
from referee.stats.elo import elo_bound
from referee.stats.sprt import MIN_PAIRS
from tests.matches.test_match import FIRST, GREEDY, RANDOM, match, one_line_error, run

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run


def test_a_margin_whose_interval_crosses_zero_names_no_winner(tmp_path):
    # The old rule named greedy_bot the winner here (it wrote more), though the interval crosses 0.
    result, _, res = match(tmp_path, GREEDY, RANDOM, "--variant", "sport", "--deals", "4", "--seed", "8")
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
    result, log, res = match(tmp_path, GREEDY, RANDOM, "--deals", str(budget), "--sprt", "margin0=0", "margin1=3", "alpha=0.05", "beta=0.05",
                             "--live")
    state = result["sprt"]
    assert result["stopped_by"] == "sprt" and state["decision"] == "H1"
    assert state["test"] == {"kind": "margin", "h0": 0.0, "h1": 3.0, "alpha": 0.05, "beta": 0.05, "min_pairs": MIN_PAIRS}
    pairs = state["pairs"]
    assert MIN_PAIRS <= pairs < budget and len(result["deals"]) == 2 * pairs
    assert result["game_results"] == []  # the sport games stopped before their last deal
    assert state["llr"] >= state["upper"] == pytest.approx(2.9444, abs=1e-4)
    records = [r for _, r in read_log(log)]
    assert records[0]["sprt"] == state["test"]  # the header: the test, its minimum included
    per_pair = [r for r in records if r["k"] == "sprt"]
    assert [r["pairs"] for r in per_pair] == list(range(1, pairs + 1))
    assert all(r["decision"] is None for r in per_pair[:-1])
    assert [r["k"] for r in records if r["k"] != "out"][-2:] == ["stop", "result"]  # then only what closing sent
    assert records[-1]["stopped_by"] == "sprt"
    assert verify(log).deals == 2 * pairs
    stop = next(r for r in records if r["k"] == "stop")
    assert verify(log).stopped == f"stopped by the SPRT after {pairs} pairs: H1 accepted (LLR {stop['llr']:+.3f})"
    checked = run("verify", str(log))
    assert checked.exit_code == 0 and f"stopped by the SPRT after {pairs} pairs: H1 accepted" in " ".join(checked.output.split())
    live = " ".join(res.stderr.split())
    for n in range(1, pairs + 1):  # the running score: the LLR and its bounds after every pair
        assert re.search(rf"after {n} pairs?: .*?; LLR [+-]\d+\.\d\d \(-2\.94, \+2\.94\)", live), n
    assert f"LLR {state['llr']:+.2f} (-2.94, +2.94): H1 accepted" in live
    text = " ".join(res.stdout.split())
    assert "LLR" in text and "(-2.944, +2.944)" in text and f"Stopped by the SPRT after {pairs} pairs" in text


def test_the_sprt_plays_its_minimum_of_pairs_though_the_llr_crosses_a_bound_sooner(tmp_path):
    """With seed 16 six pairs carry the margin test's LLR past the upper bound:
    four margins are no estimate of their spread, and without a minimum the match stopped there
    (the issue saw the same test accept H0 after 3 pairs).  With it the log shows the LLR beyond
    the bound with no decision, and the match plays on."""
    args = (GREEDY, RANDOM, "--deals", "100", "--seed", "16", "--sprt")
    result, log, res = match(tmp_path, *args, "margin0=0 margin1=5", name="with")
    per_pair = [r for _, r in read_log(log) if r["k"] == "sprt"]
    early = [r for r in per_pair if r["pairs"] < MIN_PAIRS]
    assert len(early) == MIN_PAIRS - 1
    assert any(r["llr"] >= r["upper"] for r in early)  # beyond the bound, and yet…
    assert all(r["decision"] is None for r in early)  # …no decision, and the match went on
    state = result["sprt"]
    assert state["pairs"] >= MIN_PAIRS and state["decision"] is not None and state["decision"] == per_pair[-1]["decision"]
    assert len(result["deals"]) == 2 * state["pairs"]
    assert run("verify", str(log)).exit_code == 0
    # min_pairs=0 is the test without a minimum (a log from before it existed reads as this one).
    old, old_log, _ = match(tmp_path, *args, "margin0=0 margin1=5 min_pairs=0", name="without")
    assert old["sprt"]["decision"] == "H1" and old["sprt"]["pairs"] == 6
    assert "min_pairs" not in old["sprt"]["test"] and "min_pairs" not in next(read_log(old_log))[1]["sprt"]
    assert run("verify", str(old_log)).exit_code == 0


def test_the_report_says_when_the_minimum_holds_the_decision_back(tmp_path):
    _, _, res = match(tmp_path, GREEDY, RANDOM, "--deals", "4", "--sprt", "margin0=0 margin1=5 min_pairs=4", "--live")
    live = " ".join(res.stderr.split())
    for n in (1, 2, 3):  # the running score, after each pair
        assert re.search(rf"after {n} pairs?: [^;]*; LLR [+-]?\d\.\d\d \([^)]*\) \(no decision before 4 pairs\)", live), live
    assert not re.search(r"after 4 pairs: [^;]*; LLR [^(]*\([^)]*\) \(no decision", live)
    assert "min_pairs=4" in " ".join(res.stdout.split())


def test_a_budget_below_the_minimum_is_refused():
    one_line_error(run("match", GREEDY, FIRST, "--deals", "8", "--sprt", "elo0=0 elo1=20"), X.USAGE,
                   "within 8 pairs", f"min_pairs={MIN_PAIRS}", "--deals")
    one_line_error(run("match", GREEDY, FIRST, "--variant", "kozel", "--games", "3", "--sprt", "margin0=0 margin1=20 min_pairs=4"),
                   X.USAGE, "within 3 pairs", "--games")


def test_sprt_accepts_h0_on_the_margin_too(tmp_path):
    result, _, res = match(tmp_path, GREEDY, RANDOM, "--deals", "100", "--sprt", "margin0=30 margin1=40")
    assert result["sprt"]["decision"] == "H0" and result["stopped_by"] == "sprt"
    assert result["sprt"]["test"]["kind"] == "margin"
    assert "H0 accepted" in res.output


def test_sprt_with_its_budget_spent_says_so(tmp_path):
    result, log, res = match(tmp_path, GREEDY, RANDOM, "--deals", "4", "--sprt", "elo0=0 elo1=5 min_pairs=4")
    assert result["sprt"]["decision"] is None and result["stopped_by"] is None and result["sprt"]["pairs"] == 4
    assert len(result["game_results"]) == 2  # the games ran to their end
    assert "budget ran out before the SPRT decided" in " ".join(res.output.split())
    assert json.loads(log.read_text().splitlines()[-1])["sprt"]["pairs"] == 4


@pytest.mark.parametrize("args, needles", [
    (["--sprt", "elo0=0"], ["elo1"]),
    (["--sprt", "elo0=10 elo1=5"], ["less than"]),
    (["--sprt", "alpha=2 elo0=0 elo1=5"], ["alpha"]),
    (["--sprt", "gamma=1"], ["SPRT setting 'gamma=1'"]),
    (["--sprt", "elo0=0 elo1=5 min_pairs=-3"], ["min_pairs", "whole number"]),
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


# -- numbers that explain themselves ----------------------------------------------------------------

NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0(?:\.0*)?(?![\d.])")


def test_no_negative_zero_is_printed_or_stored(tmp_path):
    """Two copies of one deterministic bot: every pair is level, so every margin, interval and Elo
    is 0, and a score of exactly ½ makes the Elo -400·log10(1) = -0.0 before it is cleaned."""
    result, log, res = match(tmp_path, FIRST, FIRST, "--deals", "8", "--sprt", "margin0=-1 margin1=1 min_pairs=4")
    first = result["ranking"]["standings"][0]
    assert first["score"] == 0.5 and first["elo"] == 0 and result["margin"]["first_bot"]["paired"]["mean"] == 0
    assert NEGATIVE_ZERO.search("x -0 y") and NEGATIVE_ZERO.search("[-0.00, 1]") and not NEGATIVE_ZERO.search("-0.5 -10 a-0")
    assert not NEGATIVE_ZERO.search(res.output), res.output
    assert not NEGATIVE_ZERO.search(log.read_text())
    assert not NEGATIVE_ZERO.search((tmp_path / "m.json").read_text())
    # every pair alike: the exact bound of 8 level pairs, not the point [0, 0] of a zero spread
    assert first["elo_ci"] == [-112.3, 112.3]
    assert "Elo difference first_bot − first_bot_2: 0 [-112, +112] (95% interval: every pair alike" in " ".join(res.output.split())


def test_sea_kozel_says_that_a_game_won_outright_counts_as_125(tmp_path):
    result, _, res = match(tmp_path, GREEDY, RANDOM, "--variant", "sea_kozel", "--games", "4")
    text = " ".join(res.output.split())
    outright = [g for g in result["game_results"] if 125 in g["points"] and max(g["totals"]) < 125]
    assert outright, "seed 1 has games won outright"
    assert f"Note: {len(outright)} of the {len(result['game_results'])} games were won outright" in text
    assert "counts as reaching 125 for its winner, whatever its totals read" in text
    for g in outright:  # the game table shows what each such game counted
        seating = result["orientations"][g["orientation"]]
        counted = " / ".join(str(g["points"][seating[s]]) for s in range(2))
        assert f"{' / '.join(map(str, g['totals']))} → {counted}" in text
    # The margin is the counted points' (per game pair), not the written totals'.
    pairs: dict[int, list[int]] = {}
    for g in result["game_results"]:
        pairs.setdefault(g["game"], []).append(g["points"][0] - g["points"][1])
    assert result["margin"]["greedy_bot"]["paired"]["mean"] == pytest.approx(sum(sum(d) / 2 for d in pairs.values()) / len(pairs))
    # kozel counts every game at its totals: no note.
    _, _, plain = match(tmp_path, GREEDY, RANDOM, "--variant", "kozel", "--games", "2", name="k")
    assert "won outright" not in plain.output and "→" not in plain.output


def test_the_three_bot_elo_orders_the_bots_as_the_ranking_and_says_how(tmp_path):
    result, _, res = match(tmp_path, GREEDY, FIRST, RANDOM, "--variant", "draw", "--games", "6")
    rows = result["ranking"]["standings"]
    elos = [r["elo"] for r in rows]
    assert None not in elos and elos == sorted(elos, reverse=True)
    assert all((r["elo"] > 0) == (r["margin"]["mean"] > 0) for r in rows)
    text = " ".join(res.output.split())
    assert "Elo: the margin on the Elo scale" in text and "0 is the field's mean" in text
    assert "orders the bots as their margins do" in text


def test_the_readmes_sprt_example_is_what_the_referee_prints(tmp_path):
    # The README quotes a run (seed 1, greedy against random_bot.py 7); a change to the deals, the
    # bots or the test that changes it must change the README with it.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split("Greedy against random in sport (seed 1, `random_bot.py 7`)")[1].split("```text")[1].split("```")[0]
    quoted = [" ".join(line.split()) for line in block.splitlines() if line.strip() not in ("", "…")]
    _, _, res = match(tmp_path, GREEDY, RANDOM, "--variant", "sport", "--deals", "400", "--sprt", "margin0=0 margin1=3")
    printed = " ".join(res.output.split())
    for line in quoted:
        assert line in printed, line


def test_a_bot_that_won_every_play_gets_an_elo_bound_in_print_json_and_the_log(tmp_path):
    """Issue 33 item 8: every pair won reads "> +NNN" (the one-sided bound), not "+∞ [−∞, +∞]";
    --json stays valid JSON (no Infinity) with the bound as the interval's finite end, and the
    log verifies, also as written before the bound (the interval [null, null])."""
    illegal = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'hostile_bots' / 'flawed.py'} illegal"
    result, log, res = match(tmp_path, GREEDY, illegal, "--variant", "sport", "--deals", "12", "--seed", "123456789012")
    text = " ".join(res.output.split())
    won, lost = result["ranking"]["standings"]
    assert won["classes"] == [0, 0, 0, 0, 12]
    bound = elo_bound(12)
    assert won["elo"] is None and won["elo_ci"] == [round(bound, 1), None]
    assert lost["elo"] is None and lost["elo_ci"] == [None, -round(bound, 1)]
    assert f"Elo difference greedy_bot − flawed: > +{bound:.0f} (95% one-sided bound: every play won, 12 pairs; score 1.000)" in text
    assert "∞" not in res.output
    raw = (tmp_path / "m.json").read_text()
    json.loads(raw, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert verify(log).deals == 24
    lines = log.read_text().splitlines()
    old = lines[-1].replace(f'"elo_ci":[{won["elo_ci"][0]},null]', '"elo_ci":[null,null]').replace(
        f'"elo_ci":[null,{lost["elo_ci"][1]}]', '"elo_ci":[null,null]')
    assert old != lines[-1]
    before = tmp_path / "before.jsonl"
    before.write_text("\n".join([*lines[:-1], old]) + "\n")
    assert verify(before).deals == 24
    before.write_text("\n".join([*lines[:-1], old.replace('"elo_ci":[null,null]', '"elo_ci":null')]) + "\n")  # one pair: none
    assert verify(before).deals == 24


def test_two_identical_bots_get_an_honest_elo_interval_and_old_logs_still_verify(tmp_path):
    """Issue 40: greedy against itself, 4 deals, every pair level (DD+WL): the Elo was `0 [0, 0]`,
    a point from a spread of 0.  Now the exact bound; the log verifies, and so does the same log
    as the referee wrote it before (the point), while any other interval there is caught."""
    result, log, res = match(tmp_path, GREEDY, GREEDY, "--variant", "sport", "--deals", "4")
    first = result["ranking"]["standings"][0]
    assert first["classes"] == [0, 0, 4, 0, 0] and first["elo"] == 0 and first["elo_ci"] == [-203.7, 203.7]
    assert "0 [-204, +204] (95% interval: every pair alike" in " ".join(res.output.split())
    assert verify(log).deals == 8
    lines = log.read_bytes().splitlines()
    for point, verifies in (([0.0, 0.0], True), ([-1.0, 1.0], False)):
        last = json.loads(lines[-1])
        for row in last["ranking"]["standings"]:
            row["elo_ci"] = point
        old = tmp_path / f"old{verifies}.jsonl"
        old.write_bytes(b"\n".join([*lines[:-1], json.dumps(last, ensure_ascii=False).encode()]) + b"\n")
        checked = run("verify", str(old))
        assert (checked.exit_code == 0) is verifies, checked.output


def test_a_game_pair_is_named_without_parentheses_in_parentheses(tmp_path):
    """Issue 40: "Pairs (a game pair (one game in each orientation))"."""
    _, _, res = match(tmp_path, GREEDY, FIRST, "--variant", "block", "--players", "2")
    text = " ".join(res.output.split())
    assert "Pairs (a game in both orientations), greedy_bot's side: LL " in text
    assert not re.search(r"\([^()]*\(", text.split("Pairs ", 1)[1].split(":", 1)[0])
