"""The statistics module on its own: Student t, intervals, LOS, pair classes, Elo, rank ranges, and
the GSPRT on synthetic results with known answers (fixed seeds, so every run is the same)."""

from __future__ import annotations

import math
import random

import pytest

from referee.stats import elo as E
from referee.stats import figures as F
from referee.stats import means as M
from referee.stats import sprt as SP


def test_student_t_quantiles_match_the_printed_tables():
    # Values from any printed t table (two-sided 95% and 99%).
    for df, q in [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042), (120, 1.980)]:
        assert M.t975(df) == pytest.approx(q, abs=1e-3)
    assert M.t_quantile(0.995, 10) == pytest.approx(3.169, abs=1e-3)
    assert M.t_quantile(0.025, 7) == pytest.approx(-M.t975(7))
    assert M.t_cdf(M.t_quantile(0.9, 4), 4) == pytest.approx(0.9, abs=1e-9)
    assert M.t_cdf(0.0, 3) == pytest.approx(0.5)


def test_the_interval_widens_with_the_confidence_and_keeps_the_95_percent_one():
    xs = [3.0, -1.0, 4.0, 1.0, 5.0, -2.0, 6.0]
    e95, e99 = M.estimate(xs), M.estimate(xs, 0.99)
    assert e99.half > e95.half
    assert e99.record().ci95 == e95.record().ci95 == e95.record().ci
    assert e99.record().confidence == 0.99


def test_los_agrees_with_the_interval():
    xs = [2.0, 1.0, 3.0, -1.0, 2.5, 0.5, 1.5, 2.0]
    est, p = M.estimate(xs), M.los(xs)
    assert est.low > 0 and p > 0.975  # the 95% interval above 0 <=> LOS above 97.5%
    near = [1.0, -1.0, 2.0, -1.5, 0.5]
    assert M.estimate(near).low < 0 and 0.5 < M.los(near) < 0.975
    assert M.los([1.0]) is None
    assert M.los([0.0, 0.0]) == 0.5 and M.los([2.0, 2.0]) == 1.0


def test_pentanomial_classes_count_the_plays_won_in_each_pair():
    # [board][orientation] margins of bot 0: won both, won one and lost one, level + lost, lost both
    ms = [[3, 1], [5, -2], [0, -4], [-1, -1], [0, 0], [2, 0]]
    def classes(ms):  # bot 0's classes when bot 1's net is 0 on every play
        return F.Boards.of([[[x, 0] for x in row] for row in ms]).classes[0]

    assert classes(ms) == [1, 1, 2, 1, 1]  # LL, LD, DD+WL (two), WD, WW
    assert F.class_labels(2) == ["LL", "LD", "DD+WL", "WD", "WW"]
    assert classes([[1, 1, -1]]) == [0, 0, 0, 0, 1, 0, 0]


def test_elo_from_pairs_is_symmetric_and_infinite_ends_are_null():
    boards = [[[3, 1], [2, 0]], [[0, 5], [4, 1]], [[2, 2], [1, 0]]]  # [board][orientation][bot] nets
    f = F.figures(F.Boards.of(boards), ["a", "b"])
    a, b = {r.bot: r for r in f.standings}["a"], {r.bot: r for r in f.standings}["b"]
    assert a.elo == -b.elo and a.score + b.score == pytest.approx(1.0)
    assert a.classes == list(reversed(b.classes))
    sweep = F.figures(F.Boards.of([[[1, 0], [1, 0]]] * 4), ["a", "b"])
    assert sweep.standings[0].elo is None  # a score of 1 is an infinite Elo difference


def test_every_play_won_gives_a_one_sided_bound_not_an_infinite_interval():
    """Issue 33 item 8: not +inf [-inf, +inf], but "above the bound" at the confidence: the exact
    binomial bound of all n boards won, (1 - c)^(1/n), as an Elo."""
    sweep = F.figures(F.Boards.of([[[1, 0], [1, 0]]] * 12), ["a", "b"])
    won, lost = sweep.standings
    bound = E.elo_of_score(0.05 ** (1 / 12))
    assert won.elo is None and won.elo_ci == [round(bound, 1), None]
    assert lost.elo is None and lost.elo_ci == [None, -round(bound, 1)]
    assert 200 < bound < 230
    # about the rule of three at 95% (a board lost at most 3/n of the time), and growing with n
    for n in (20, 50, 100, 300):
        assert E.score_of_elo(E.elo_bound(n)) == pytest.approx(1 - 3 / n, abs=0.3 / n)
    assert E.elo_bound(10) < E.elo_bound(20) < E.elo_bound(100)
    assert E.elo_bound(4) < 0  # four boards won are no evidence at 95%: the bound says so
    assert E.elo_bound(20, 0.99) < E.elo_bound(20, 0.95)
    with pytest.raises(ValueError):
        E.elo_bound(0)
    # one play not won: an Elo again, with its two-sided interval (whose upper end may pass a score of 1)
    mixed = F.figures(F.Boards.of([[[1, 0], [1, 0]]] * 11 + [[[1, 0], [0, 1]]]), ["a", "b"])
    assert mixed.standings[0].elo is not None and mixed.standings[0].elo_ci[0] is not None


def test_a_winner_only_when_the_margin_is_significant():
    clear = [[[10, 0], [8, 1]] for _ in range(6)]
    f = F.figures(F.Boards.of(clear), ["a", "b"])
    assert f.ahead == f.winner == "a" and f.significant
    noisy = [[[10, 0], [0, 9]], [[0, 3], [4, 0]], [[5, 0], [0, 6]]]
    g = F.figures(F.Boards.of(noisy), ["a", "b"])
    assert g.ahead is not None and g.winner is None and not g.significant
    assert "95% interval above 0" in g.rule
    level = F.figures(F.Boards.of([[[1, 1], [2, 2]]]), ["a", "b"])
    assert level.ahead is None and level.winner is None


def test_three_bots_rank_by_margin_and_tied_places_share_a_range():
    # c is far ahead on every board; a and b trade places.
    boards = [[[5, 4, 20], [4, 5, 21], [5, 5, 19]], [[3, 6, 20], [6, 3, 22], [4, 4, 18]], [[6, 2, 21], [2, 6, 20], [4, 4, 20]],
              [[1, 7, 22], [7, 1, 19], [4, 4, 21]]]
    f = F.figures(F.Boards.of(boards), ["a", "b", "c"], unit="game")
    assert f.standings[0].bot == "c" and f.winner == "c"
    assert f.standings[0].places == [1, 1]
    assert f.standings[1].places == [2, 3] and f.standings[2].places == [2, 3]
    assert "per game" in f.rule
    assert len(f.class_labels) == 7


def test_rank_ranges():
    better = {(0, 1), (0, 2), (0, 3), (1, 3)}
    assert F.rank_ranges(4, lambda a, b: (a, b) in better) == [[1, 1], [2, 3], [2, 4], [3, 4]]


def test_the_mle_has_the_required_mean_and_the_published_gsprt_figure():
    values, probs = [0.0, 0.5, 1.0], [0.3, 0.5, 0.2]
    p = SP.mle_with_mean(values, probs, 0.55)
    assert sum(p) == pytest.approx(1.0) and sum(v * q for v, q in zip(values, p)) == pytest.approx(0.55)
    # A two-point distribution with a fixed mean has only one member.
    assert SP.mle_with_mean([0.0, 1.0], [0.5, 0.5], 0.7) == pytest.approx([0.3, 0.7])
    # W 4307 D 8620 L 4063, elo0 0 elo1 3: LLR 2.99 (the GSPRT example of the jw1912/SPRT README)
    llr = SP.llr_expected([4063, 8620, 4307], [0.0, 0.5, 1.0], E.score_of_elo(0), E.score_of_elo(3))
    assert llr == pytest.approx(2.99, abs=0.005)


def test_the_llr_grows_with_evidence_and_regularises_empty_classes():
    assert SP.llr_elo([0, 0, 0, 0, 0], 0, 20) == 0.0
    assert SP.llr_elo([1, 2, 4, 6, 7], 0, 20) > 0 > SP.llr_elo([7, 6, 4, 2, 1], 0, 20)
    assert SP.llr_elo([10, 20, 40, 60, 70], 0, 20) > SP.llr_elo([1, 2, 4, 6, 7], 0, 20)
    assert math.isfinite(SP.llr_elo([0, 0, 0, 0, 9], 0, 20))
    assert SP.llr_margin([5.0], 0, 2) == 0.0 and SP.llr_margin([5.0, 5.0], 0, 2) == 0.0  # no spread seen yet
    assert SP.llr_margin([4.0, 6.0, 5.0], 0, 2) > 0 > SP.llr_margin([-4.0, -6.0, -5.0], 0, 2)


def test_parse_sprt():
    t = SP.parse_sprt(["elo0=0", "elo1=20", "alpha=0.05", "beta=0.1"])
    assert (t.kind, t.h0, t.h1, t.alpha, t.beta) == ("elo", 0, 20, 0.05, 0.1)
    assert t.lower == pytest.approx(math.log(0.1 / 0.95)) and t.upper == pytest.approx(math.log(0.9 / 0.05))
    assert SP.parse_sprt(["margin0=0, margin1=2.5"]).kind == "margin"
    for bad, words in [("elo1", ["elo0=0"]), ("less than", ["elo0=5", "elo1=5"]), ("not both", ["elo0=0", "elo1=5", "margin0=0", "margin1=1"]),
                       ("not a number", ["elo0=x", "elo1=5"]), ("between 0 and 1", ["elo0=0", "elo1=5", "alpha=1.5"]),
                       ("twice", ["elo0=0", "elo0=1", "elo1=5"]), ("setting", ["gamma=1"])]:
        with pytest.raises(ValueError, match=bad):
            SP.parse_sprt(words)
    assert SP.is_sprt_word("elo1=20") and not SP.is_sprt_word("bot.py")


# -- simulated SPRTs --------------------------------------------------------------------------------


def _pentanomial_with_elo(elo: float) -> list[float]:
    """A pentanomial distribution (a fixed shape, tilted) whose mean score is L(elo)."""
    base = [0.1, 0.2, 0.4, 0.2, 0.1]
    values = [k / 4 for k in range(5)]
    target = E.score_of_elo(elo)
    lo, hi = -50.0, 50.0
    for _ in range(200):
        lam = (lo + hi) / 2
        w = [b * math.exp(lam * v) for b, v in zip(base, values)]
        mean = sum(x * v for x, v in zip(w, values)) / sum(w)
        lo, hi = (lam, hi) if mean < target else (lo, lam)
    return [x / sum(w) for x in w]


def _run_elo_sprt(rng: random.Random, probs: list[float], test: SP.SprtSpec, budget: int) -> str | None:
    counts = [0] * 5
    for _ in range(budget):
        counts[rng.choices(range(5), probs)[0]] += 1
        if decision := test.decide(SP.llr_elo(counts, test.h0, test.h1)):
            return decision
    return None


@pytest.mark.slow
def test_simulated_pentanomial_streams_accept_h1_at_the_expected_rates():
    test = SP.SprtSpec(kind="elo", h0=0, h1=60, alpha=0.05, beta=0.05)
    runs = 300
    rng = random.Random(20261130)
    at_h1 = [_run_elo_sprt(rng, _pentanomial_with_elo(60), test, 4000) for _ in range(runs)]
    at_h0 = [_run_elo_sprt(rng, _pentanomial_with_elo(0), test, 4000) for _ in range(runs)]
    assert None not in at_h1 and None not in at_h0  # every run decided well inside the budget
    # Wald's bounds hold the error rates at about alpha and beta (0.05 here).
    assert 0.90 <= at_h1.count("H1") / runs <= 0.99
    assert at_h0.count("H1") / runs <= 0.09
    far = [_run_elo_sprt(rng, _pentanomial_with_elo(150), test, 4000) for _ in range(50)]
    assert far.count("H1") == 50


def test_simulated_margin_streams_accept_h1_at_the_expected_rates():
    test = SP.SprtSpec(kind="margin", h0=0, h1=3, alpha=0.05, beta=0.05)
    rng = random.Random(7)

    def run(mean: float) -> str | None:
        xs: list[float] = []
        for _ in range(4000):
            xs.append(round(rng.gauss(mean, 10)))
            if decision := test.decide(SP.llr_margin(xs, test.h0, test.h1)):
                return decision
        return None

    runs = 300
    at_h1 = [run(3) for _ in range(runs)]
    at_h0 = [run(0) for _ in range(runs)]
    assert 0.88 <= at_h1.count("H1") / runs <= 0.99
    assert at_h0.count("H1") / runs <= 0.10


def test_running_moments_agree_with_the_two_pass_figures():
    """The figures fold boards in one at a time (memory flat in the deals); the running mean and
    deviation agree with the textbook two-pass ones."""
    import statistics

    rng = random.Random(3)
    for n in (2, 3, 50, 2000):
        xs = [rng.choice([-40, -3.5, 0, 7, 120]) + rng.random() for _ in range(n)]
        m = M.Moments.of(xs)
        assert m.n == n and m.mean == pytest.approx(statistics.fmean(xs), rel=1e-12, abs=1e-12)
        assert m.sd == pytest.approx(statistics.stdev(xs), rel=1e-12)
        e = M.estimate(xs)
        assert e.low < statistics.fmean(xs) < e.high
    assert M.Moments.of([2.5] * 9).m2 == 0.0 and M.los([2.5] * 9) == 1.0  # no spread: exactly none


# -- the SPRT's minimum of pairs ----------------------------------------------------------------


def _two_bot_boards(margins: list[float]) -> F.Boards:
    """Boards whose first bot's margin is the given one in both orientations."""
    return F.Boards.of([[[m, 0.0], [m, 0.0]] for m in margins])


def test_the_sprt_decides_nothing_before_its_minimum_of_pairs():
    # Three pairs of a tiny spread: the LLR is far below the lower bound (the "H0 after 3 pairs").
    test = SP.parse_sprt(["margin0=0 margin1=5", "min_pairs=10"])
    boards = _two_bot_boards([0.5, -0.5, 0.0])
    assert SP.sprt_llr(test, boards) < test.lower
    state = SP.sprt_state(test, boards)
    assert state.decision is None and state.pairs == 3
    assert "no decision before 10 pairs" in state.line()
    # The same pairs without a minimum decide at once, as every test did before min_pairs existed.
    assert SP.sprt_state(SP.SprtSpec(kind="margin", h0=0, h1=5, alpha=0.05, beta=0.05), boards).decision == "H0"
    # It decides at the first pair at or past the minimum whose LLR is beyond a bound.
    boards = _two_bot_boards([0.5, -0.5, 0.0] * 3)
    assert SP.sprt_state(test, boards).decision is None  # 9 pairs
    boards.add([[0.0, 0.0], [0.0, 0.0]])
    assert SP.sprt_state(test, boards).decision == "H0"  # the 10th
    assert test.decide(-10.0, 9) is None and test.decide(-10.0, 10) == "H0" and test.decide(10.0, 10) == "H1"
    assert test.decide(-10.0) == "H0"  # the LLR alone: the bounds only


def test_the_default_minimum_and_bad_minimums():
    assert SP.parse_sprt(["elo0=0 elo1=20"]).min_pairs == SP.MIN_PAIRS >= 10
    assert SP.parse_sprt(["elo0=0 elo1=20 min_pairs=0"]).min_pairs == 0
    assert SP.is_sprt_word("min_pairs=30")
    for value in ("-1", "2.5", "x", "1e9", "inf"):
        with pytest.raises(ValueError, match="min_pairs"):
            SP.parse_sprt(["elo0=0 elo1=20", f"min_pairs={value}"])


def test_a_test_without_a_minimum_encodes_as_before_it_existed():
    """A log's header and result hold the test as ``msgspec.to_builtins(spec)``: a log written
    before ``min_pairs`` existed has no such field, decodes to no minimum, and encodes back the
    same (so ``verify`` finds the result it recorded); a new test writes its minimum."""
    import msgspec

    old = {"kind": "elo", "h0": 0.0, "h1": 20.0, "alpha": 0.05, "beta": 0.05}
    spec = msgspec.convert(old, SP.SprtSpec)
    assert spec.min_pairs == 0 and msgspec.to_builtins(spec) == old
    boards = _two_bot_boards([5.0])
    assert SP.sprt_state(spec, boards).decision == spec.decide(SP.sprt_llr(spec, boards))
    new = msgspec.to_builtins(SP.parse_sprt(["elo0=0 elo1=20"]))
    assert new == {**old, "min_pairs": SP.MIN_PAIRS}
    assert msgspec.convert(new, SP.SprtSpec).min_pairs == SP.MIN_PAIRS


def test_the_secular_equation_is_solved_to_the_last_bits():
    """Newton's steps inside the bracket find the same root as the bisection they replaced."""

    def bisect(a, p):
        lo, hi = -1.0 / max(a), -1.0 / min(a)
        for _ in range(300):
            mid = (lo + hi) / 2.0
            if mid in (lo, hi):
                break
            if sum(pi * ai / (1.0 + mid * ai) for ai, pi in zip(a, p)) > 0:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2.0

    rng = random.Random(5)
    for _ in range(3000):
        k = rng.choice([3, 5, 7])
        counts = [rng.choice([1e-3, 1, 2, 7, 40, 900, 50_000]) for _ in range(k)]
        n = sum(counts)
        values = [i / (k - 1) for i in range(k)]
        s = rng.uniform(0.02, 0.98)
        a = [v - s for v in values]
        p = [c / n for c in counts]
        assert SP._secular(a, p) == pytest.approx(bisect(a, p), rel=1e-9, abs=1e-12)


# -- no negative zero ---------------------------------------------------------------------------


def test_signed_never_writes_a_negative_zero():
    assert M.signed(-0.0) == "0" and M.signed(-0.4) == "0" and M.signed(0.4) == "0"
    assert M.signed(-0.004, 2) == "0.00" and M.signed(0.0, 3) == "0.000"
    assert M.signed(0.6) == "+1" and M.signed(-0.6) == "-1" and M.signed(4.8, 2) == "+4.80" and M.signed(-26.25, 2) == "-26.25"


def test_figures_that_round_to_zero_are_stored_as_zero():
    import msgspec

    # Level pairs: a score of exactly 0.5 is an Elo of -400·log10(1) = -0.0 before it is cleaned.
    level = F.figures(F.Boards.of([[[3, 0], [0, 3]], [[0, 2], [2, 0]]]), ["a", "b"])
    tiny = F.figures(F.Boards.of([[[0.00001, 0], [0, 0.00002]], [[0, 0.00001], [0, 0]]]), ["a", "b"])
    field = F.figures(F.Boards.of([[[1, 1, 1], [2, 2, 2], [0, 0, 0]], [[1, 1, 1], [1, 1, 1], [3, 3, 3]]]), ["a", "b", "c"])
    for f in (level, tiny, field):
        text = msgspec.json.encode(f).decode()
        assert "-0.0," not in text and "-0.0]" not in text and "-0.0}" not in text, text
    assert level.standings[0].elo == 0.0 and math.copysign(1, level.standings[0].elo) == 1
    assert math.copysign(1, SP.parse_sprt(["margin0=-0 margin1=5"]).h0) == 1
    llr = SP.sprt_state(SP.parse_sprt(["margin0=-1 margin1=1 min_pairs=0"]), _two_bot_boards([2.0, -2.0]))
    assert llr.llr == 0.0 and math.copysign(1, llr.llr) == 1


# -- Elo against the field (three or more bots) --------------------------------------------------


def _elo_key(row: F.Standing) -> float:
    if row.elo is not None:
        return row.elo
    return math.inf if row.margin.mean > 0 else -math.inf if row.margin.mean < 0 else 0.0


def test_with_three_bots_the_elo_column_agrees_with_the_ranking():
    # a wins most plays by a little, b few by a lot: b has the better margin, a the better score.
    boards = []
    for k in range(12):
        big = 40 + k
        boards.append([[2, big, 0]] * 3 if k % 3 == 0 else [[3, 0, 1]] * 3)  # [orientation][bot] nets
    rows = F.figures(F.Boards.of(boards), ["a", "b", "c"], unit="game").standings
    by = {r.bot: r for r in rows}
    assert [r.bot for r in rows][0] == "b" and by["a"].score > by["b"].score  # a score-based Elo would put a first
    assert by["b"].elo > by["a"].elo
    assert [_elo_key(r) for r in rows] == sorted((_elo_key(r) for r in rows), reverse=True)
    # 0 is the field's mean: the margins sum to 0, and the Elo has the margin's sign.
    assert sum(r.margin.mean for r in rows) == pytest.approx(0, abs=1e-3)
    for r in rows:
        assert (r.elo > 0) == (r.margin.mean > 0) and r.elo_ci[0] <= r.elo <= r.elo_ci[1]


def test_the_field_elo_is_odd_increasing_and_exact_in_the_tails():
    zs = [-40.0, -9.0, -3.0, -0.5, 0.0, 0.5, 3.0, 9.0, 40.0]
    elos = [E.elo_of_z(z) for z in zs]
    assert elos == sorted(elos) and E.elo_of_z(0.0) == 0.0
    for z in (0.3, 2.0, 8.0):
        assert E.elo_of_z(-z) == pytest.approx(-E.elo_of_z(z))
    assert E.elo_of_z(1.0) == pytest.approx(E.elo_of_score(0.8413447460685429), rel=1e-9)
    assert E.elo_of_z(50.0) == math.inf and E.elo_of_z(-50.0) == -math.inf


def test_places_and_elo_agree_on_random_fields():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    nets = st.integers(-150, 150)

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(st.integers(3, 5).flatmap(lambda k: st.lists(st.lists(st.lists(nets, min_size=k, max_size=k), min_size=k, max_size=k),
                                                        min_size=1, max_size=12)))
    def check(boards):
        k = len(boards[0][0])
        rows = F.figures(F.Boards.of(boards), [f"b{i}" for i in range(k)], unit="game").standings
        keys = [_elo_key(r) for r in rows]
        assert keys == sorted(keys, reverse=True), [(r.place, r.margin.mean, r.elo) for r in rows]
        for r, s in zip(rows, rows[1:]):
            if r.place == s.place:
                assert r.elo == s.elo

    check()


def test_the_web_pages_and_league_ratings_print_no_negative_zero():
    from referee.web.site import _env
    from tournaments.standings import Row, _flat, _rating_text

    signed = _env().filters["signed"]
    assert signed(-0.0) == "0" and signed(-0.04, 1) == "0.0" and signed(12.0) == "+12" and signed(2.5) == "+2.5"
    assert signed(-3) == "-3" and signed("—") == "—"
    assert _rating_text(Row(rank=1, bot="a", rating=-0.3, rating_low=-40.0, rating_high=39.4)) == "0 ± 40"
    assert _rating_text(Row(rank=1, bot="ref", rating=-0.0, rating_low=-0.0, rating_high=-0.0)) == "0 (ref.)"
    from types import SimpleNamespace

    from tournaments.standings import Standings

    two = Standings(SimpleNamespace(per_table=2, schedule="round-robin"), [], 0, 0, 0)  # its kind is read
    flat = _flat(two, Row(rank=1, bot="a", rating=-0.04, rating_low=-0.01, rating_high=0.02))
    assert all(math.copysign(1, flat[k]) == 1 for k in ("rating", "rating_low", "rating_high"))


# -- the normalized Elo model (fastchess's model=normalized) ------------------------------------------


def test_model_normalized_reads_elo0_and_elo1_as_normalized_elo():
    t = SP.parse_sprt(["elo0=0 elo1=5 model=normalized"])
    assert (t.kind, t.h0, t.h1) == ("nelo", 0, 5)
    assert t.words == "elo0=0 elo1=5 model=normalized"
    assert SP.parse_sprt(["elo0=0", "elo1=5", "model=logistic"]).kind == "elo"
    assert SP.parse_sprt(["elo0=0 elo1=5"]).words == "elo0=0 elo1=5"
    assert SP.parse_sprt(["margin0=0 margin1=3"]).words == "margin0=0 margin1=3"
    for bad, words in [("models are logistic and normalized", ["elo0=0 elo1=5 model=bayesian"]),
                       ("not the margin's", ["margin0=0 margin1=3 model=normalized"]),
                       ("twice", ["elo0=0 elo1=5 model=normalized model=logistic"]),
                       ("within", ["elo0=0 elo1=5000 model=normalized"])]:
        with pytest.raises(ValueError, match=bad):
            SP.parse_sprt(words)


def test_the_normalized_fit_has_the_asked_t_and_is_the_observed_one_at_its_own_t():
    values = [k / 4 for k in range(5)]
    probs = [0.05, 0.2, 0.5, 0.2, 0.05]
    for t in (-3.0, -0.5, 0.0, 0.2, 1.0, 2.0, 4.0):  # 1 and beyond: where a fit from the uniform start fails
        p = SP.mle_with_t(values, probs, t)
        mu = sum(a * q for a, q in zip(values, p))
        sd = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(values, p)))
        assert sum(p) == pytest.approx(1.0) and (mu - 0.5) / sd == pytest.approx(t, abs=1e-9)
    assert SP.mle_with_t(values, probs, 0.0) == pytest.approx(probs)  # symmetric: already at t = 0
    # nElo per play: a pair's t is sqrt(2) times the nElo over 800 / ln 10 (fastchess's pentanomial model)
    assert SP.t_of_nelo(100, 2) == pytest.approx(math.sqrt(2) * 100 * math.log(10) / 800)


def test_the_normalized_llr_agrees_with_its_normal_approximation_near_the_results():
    counts = [40, 120, 300, 130, 50]
    n = sum(counts)
    values = [k / 4 for k in range(5)]
    mu = sum(c * v for c, v in zip(counts, values)) / n
    sd = math.sqrt(sum(c * (v - mu) ** 2 for c, v in zip(counts, values)) / n)
    t = (mu - 0.5) / sd
    for lo, hi in ((0, 5), (0, 30), (-20, 20)):
        t0, t1 = SP.t_of_nelo(lo, 2), SP.t_of_nelo(hi, 2)
        approx = n / 2 * math.log((1 + (t - t0) ** 2) / (1 + (t - t1) ** 2))
        assert SP.llr_normalized(counts, lo, hi) == pytest.approx(approx, rel=0.02, abs=0.01)
    assert SP.llr_normalized([0] * 5, 0, 5) == 0.0
    assert SP.llr_normalized([1, 2, 4, 6, 7], 0, 20) > 0 > SP.llr_normalized([7, 6, 4, 2, 1], 0, 20)
    assert math.isfinite(SP.llr_normalized([0, 0, 100, 0, 0], 257, 354))  # far from the results: the approximation


def _pentanomial_with_t(t: float) -> list[float]:
    """A pentanomial distribution (a fixed shape, tilted) whose t per pair is ``t``."""
    base = [0.1, 0.2, 0.4, 0.2, 0.1]
    values = [k / 4 for k in range(5)]
    lo, hi = -50.0, 50.0
    for _ in range(200):
        lam = (lo + hi) / 2
        w = [b * math.exp(lam * v) for b, v in zip(base, values)]
        p = [x / sum(w) for x in w]
        mean = sum(x * v for x, v in zip(p, values))
        sd = math.sqrt(sum(x * (v - mean) ** 2 for x, v in zip(p, values)))
        lo, hi = (lam, hi) if (mean - 0.5) / sd < t else (lo, lam)
    return p


@pytest.mark.slow
def test_simulated_pentanomial_streams_hold_the_normalized_tests_error_rates():
    """At H0 the normalized test accepts H1 about alpha of the time, at H1 H0 about beta."""
    test = SP.SprtSpec(kind="nelo", h0=0, h1=60, alpha=0.05, beta=0.05)
    rng = random.Random(20261202)

    def run(probs: list[float]) -> str | None:
        counts = [0] * 5
        for _ in range(4000):
            counts[rng.choices(range(5), probs)[0]] += 1
            if decision := test.decide(SP.llr_normalized(counts, test.h0, test.h1)):
                return decision
        return None

    runs = 300
    at_h1 = [run(_pentanomial_with_t(SP.t_of_nelo(60, 2))) for _ in range(runs)]
    at_h0 = [run(_pentanomial_with_t(0.0)) for _ in range(runs)]
    assert None not in at_h1 and None not in at_h0
    assert 0.90 <= at_h1.count("H1") / runs <= 0.99
    assert at_h0.count("H1") / runs <= 0.09


#: One board of four bots in four rotations where bots 0 and 1 are level as fractions (their
#: margins sum to −32/3 over the rotations) but their margins, summed in the order of the plays,
#: differ in the last bit of the float (−2.666666666666667 and −2.666666666666666).
LEVEL_AS_FRACTIONS = [[43, 56, 52, 13], [30, 53, 51, 54], [49, 21, 23, 56], [18, 10, 9, 54]]


def test_bots_level_as_fractions_share_a_place_whatever_the_floats_say():
    """The ranking's places come from exact sums, not from float means that round differently."""
    tally = F.Boards.of([[list(map(float, net)) for net in LEVEL_AS_FRACTIONS]])
    assert tally.margin[0].mean != tally.margin[1].mean  # the floats disagree ...
    assert tally.exact[0] == tally.exact[1]  # ... the fractions do not
    f = F.figures(tally, list("ABCD"))
    assert [(s.bot, s.place) for s in f.standings] == [("D", 1), ("A", 2), ("B", 2), ("C", 4)]
    assert [F.board_margin(LEVEL_AS_FRACTIONS, i) for i in range(2)] == [-32 / 3 / 4] * 2
    # Level at the top (38/3 each; floats 3.166666666666668 and …667): no one is ahead, no winner.
    tally = F.Boards.of([[[36.0, 40.0, 8.0, 4.0], [36.0, 15.0, 9.0, 37.0], [58.0, 21.0, 45.0, 20.0], [3.0, 57.0, 51.0, 54.0]]])
    assert tally.margin[0].mean != tally.margin[1].mean
    top = F.figures(tally, list("ABCD"))
    assert [(s.bot, s.place) for s in top.standings] == [("A", 1), ("B", 1), ("D", 3), ("C", 4)]
    assert (top.ahead, top.winner, top.significant) == (None, None, False)
