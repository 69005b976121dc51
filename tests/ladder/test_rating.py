"""The ladder's ratings: least squares over every table's margins, order-invariant, incremental,
and the separated/tied marks checked against an independent recomputation from the boards."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.ladder.rating import PRIOR_DEALS, Outcome, Ratings, ratings_of, t_quantile, verdict


def boards_of_field(seed: int, strengths: dict[str, float], tables: int, per_table: int = 2, deals: int = 8,
                    noise: float = 20.0) -> list[tuple[int, tuple[str, ...], list[list[Fraction]]]]:
    """Simulated stored boards: per table, its bots and every bot's margin on each board
    (``[board][seat]``, each board's margins summing to 0), in whole points as the store has them."""
    rng = random.Random(seed)
    names = sorted(strengths)
    out = []
    for t in range(tables):
        bots = tuple(rng.sample(names, per_table))
        boards = []
        for _ in range(deals):
            nets = [strengths[b] + rng.gauss(0, noise) for b in bots]
            # the paired margin: the bot's net less the others' mean (sums to 0 over the seats)
            whole = [round(x) for x in nets]
            margins = [Fraction(w) - Fraction(sum(whole) - w, per_table - 1) for w in whole]
            boards.append(margins)
        out.append((t, bots, boards))
    return out


def outcome_of(table: int, bots: tuple[str, ...], boards: list[list[Fraction]]) -> Outcome:
    deals = len(boards)
    return Outcome(table, table, bots, tuple(sum((b[i] for b in boards), Fraction(0)) / deals for i in range(len(bots))), deals)


def independent_marks(names: list[str], stored: list[tuple[int, tuple[str, ...], list[list[Fraction]]]],
                      resolution: float) -> tuple[list[str], list[str], np.ndarray]:
    """The standings' order and marks recomputed plainly: one weighted row per bot and board
    (margin × (N−1)/N against e_i − mean of the table), one prior row per bot, numpy's lstsq, σ²
    from the boards' residuals over the table means (the tables' weighted residuals), scipy's t."""
    stats = pytest.importorskip("scipy.stats")
    k = len(names)
    col = {n: i for i, n in enumerate(names)}
    rows, target, weight = [], [], []
    observations = 0
    played = set()
    for _, bots, boards in stored:
        n = len(bots)
        deals = len(boards)
        means = [float(sum(b[i] for b in boards)) / deals for i in range(n)]
        for i, bot in enumerate(bots):
            x = np.zeros(k)
            for other in bots:
                x[col[other]] -= 1.0 / n
            x[col[bot]] += 1.0
            rows.append(x)
            target.append(means[i] * (n - 1) / n)
            weight.append(deals)
            played.add(bot)
        observations += n - 1
    data = len(rows)
    for i in range(k):
        x = np.zeros(k)
        x[i] = 1.0
        rows.append(x)
        target.append(0.0)
        weight.append(PRIOR_DEALS)
    X, y, w = np.array(rows), np.array(target), np.array(weight, dtype=float)
    sw = np.sqrt(w)
    s, *_ = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)
    resid = (y - X @ s)[:data]
    dof = observations - (len(played) - 1)
    sigma2 = float(np.sum(w[:data] * resid ** 2)) / dof
    cov = sigma2 * np.linalg.inv((X * w[:, None]).T @ X)
    s = s - s.mean()
    order = sorted(range(k), key=lambda i: (-s[i], names[i]))
    marks = []
    for i, j in zip(order, order[1:]):
        d = s[i] - s[j]
        se = math.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j])
        if d / se > stats.t.ppf(0.975, dof):
            marks.append("separated")
        elif abs(d) + stats.t.ppf(0.95, dof) * se < resolution:
            marks.append("tied")
        else:
            marks.append("open")
    return [names[i] for i in order], marks, s


@pytest.mark.parametrize(("per_table", "seed"), [(2, 1), (2, 2), (3, 3), (4, 4)])
def test_marks_agree_with_an_independent_recomputation_from_the_boards(per_table: int, seed: int) -> None:
    strengths = {"a": 12.0, "b": 6.0, "c": 5.5, "d": 0.0, "e": 0.2, "f": -9.0}
    stored = boards_of_field(seed, strengths, tables=120, per_table=per_table)
    ratings = ratings_of([outcome_of(*t) for t in stored], resolution=2.0)
    order, marks, s = independent_marks(sorted(strengths), stored, resolution=2.0)
    assert [x.name for x in ratings.standings()] == order
    assert [m.verdict for m in ratings.marks()] == marks
    mine = {x.name: x.rating for x in ratings.standings()}
    assert [mine[n] for n in order] == pytest.approx(sorted(s, reverse=True), abs=1e-9)
    assert {"separated", "open"} <= set(marks) or {"separated", "tied"} <= set(marks)


def test_a_field_played_long_enough_is_certified_with_ties_within_the_resolution() -> None:
    strengths = {"a": 10.0, "b": 0.0, "c": 0.0, "d": -10.0}
    stored = boards_of_field(5, strengths, tables=3000, deals=8)
    ratings = ratings_of([outcome_of(*t) for t in stored], resolution=2.0)
    assert ratings.certified()
    assert [m.verdict for m in ratings.marks()] == ["separated", "tied", "separated"]


def test_the_fit_recovers_the_strengths_and_the_noise() -> None:
    strengths = {"a": 10.0, "b": 3.0, "c": -1.0, "d": -12.0}
    stored = boards_of_field(7, strengths, tables=2000, deals=8, noise=20.0)
    ratings = ratings_of([outcome_of(*t) for t in stored], resolution=1.0)
    got = {x.name: x for x in ratings.standings()}
    mean = sum(strengths.values()) / 4
    for name, s in strengths.items():
        assert got[name].lo <= s - mean <= got[name].hi
        assert abs(got[name].rating - (s - mean)) < 1.0
    # a board's margin of two bots is net − net: its noise per deal is 2 × 20² over two bots' nets
    assert ratings.fit().sigma2 == pytest.approx(400.0, rel=0.1)


margins = st.integers(-60, 60)


@st.composite
def outcome_lists(draw: st.DrawFn) -> list[Outcome]:
    names = ["a", "b", "c", "d", "e"]
    out = []
    for t in range(draw(st.integers(0, 25))):
        n = draw(st.sampled_from([2, 2, 3]))
        bots = tuple(draw(st.permutations(names))[:n])
        raw = [Fraction(draw(margins), draw(st.integers(1, 12))) for _ in range(n - 1)]
        out.append(Outcome(t, t, bots, (*raw, -sum(raw, Fraction(0))), draw(st.integers(1, 24))))
    return out


@settings(max_examples=60, deadline=None)
@given(outcome_lists(), st.randoms(use_true_random=False))
def test_any_order_of_the_outcomes_gives_the_same_standings(outcomes: list[Outcome], rnd: random.Random) -> None:
    shuffled = outcomes[:]
    rnd.shuffle(shuffled)
    a = ratings_of(outcomes, 2.0, bots="abcde")
    b = ratings_of(shuffled, 2.0, bots="abcde")
    assert a.standings() == b.standings()
    assert a.marks() == b.marks()


@settings(max_examples=40, deadline=None)
@given(outcome_lists())
def test_refitting_after_every_outcome_equals_a_fit_from_scratch(outcomes: list[Outcome]) -> None:
    incremental = Ratings(2.0)
    for b in "abcde":
        incremental.add_bot(b)
    for o in outcomes:
        incremental.add(o)
        incremental.standings()  # a refit on the way
    scratch = ratings_of(outcomes, 2.0, bots="abcde")
    assert incremental.standings() == scratch.standings()
    assert incremental.marks() == scratch.marks()


def test_a_bot_that_stops_playing_does_not_drift() -> None:
    """c stops; a and b play on, exactly as the fit expects them to: c's rating stays put to the
    last bit of a float, and its interval does not widen (nothing decays with time)."""
    strengths = {"a": 5.0, "b": 0.0, "c": -5.0}
    ratings = ratings_of([outcome_of(*t) for t in boards_of_field(9, strengths, tables=60)], 2.0)
    before = {x.name: x for x in ratings.standings()}
    gap = Fraction(before["a"].rating - before["b"].rating)
    for t in range(60, 160):
        ratings.add(Outcome(t, t, ("a", "b"), (gap, -gap), 8))
    after = {x.name: x for x in ratings.standings()}
    assert after["c"].rating == pytest.approx(before["c"].rating, abs=1e-9)
    assert after["c"].hi - after["c"].lo <= before["c"].hi - before["c"].lo
    assert after["c"].tables == before["c"].tables


def test_a_bot_without_results_sits_at_the_mean_with_a_wide_interval() -> None:
    ratings = ratings_of([outcome_of(*t) for t in boards_of_field(3, {"a": 5.0, "b": -5.0}, tables=30)], 2.0, bots=["new"])
    new = next(s for s in ratings.standings() if s.name == "new")
    a = next(s for s in ratings.standings() if s.name == "a")
    assert new.tables == 0 and new.deals == 0
    assert new.hi - new.lo > 5 * (a.hi - a.lo)


def test_before_the_noise_is_known_everything_is_open() -> None:
    ratings = Ratings(2.0)
    for b in "ab":
        ratings.add_bot(b)
    ratings.add(Outcome(0, 0, ("a", "b"), (Fraction(30), Fraction(-30)), 12))
    assert [m.verdict for m in ratings.marks()] == ["open"]
    assert ratings.standings()[0].name == "a" and math.isinf(ratings.standings()[0].hi)
    assert not ratings.certified()


@pytest.mark.parametrize(("outcome", "message"), [
    (Outcome(0, 0, ("a",), (Fraction(0),), 1), "two to eight bots"),
    (Outcome(0, 0, ("a", "a"), (Fraction(0), Fraction(0)), 1), "two to eight bots"),
    (Outcome(0, 0, ("a", "x"), (Fraction(1), Fraction(-1)), 1), "'x' is not a bot"),
    (Outcome(0, 0, ("a", "b"), (Fraction(1), Fraction(0)), 1), "sum to 1"),
    (Outcome(0, 0, ("a", "b"), (Fraction(1),), 1), "1 margins for 2 bots"),
    (Outcome(0, 0, ("a", "b"), (Fraction(1), Fraction(-1)), 0), "at least 1"),
])
def test_bad_outcomes_are_refused(outcome: Outcome, message: str) -> None:
    ratings = Ratings(2.0)
    ratings.add_bot("a")
    ratings.add_bot("b")
    with pytest.raises(ValueError, match=message):
        ratings.add(outcome)
    assert ratings.standings()[0].tables == 0


def test_the_resolution_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Ratings(0.0)


def test_t_quantiles_match_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for dof in (1, 2, 5, 29, 30, 31, 45, 100, 1000):
        for p in (0.95, 0.975):
            assert t_quantile(p, dof) == pytest.approx(stats.t.ppf(p, dof), abs=2e-4)
    assert math.isinf(t_quantile(0.975, 0))


def test_verdicts() -> None:
    assert verdict(5.0, 1.0, 1000, 2.0) == "separated"
    assert verdict(0.1, 0.5, 1000, 2.0) == "tied"
    assert verdict(1.5, 1.0, 1000, 2.0) == "open"
    assert verdict(0.0, math.inf, 0, 2.0) == "open"


# -- the incremental fit -------------------------------------------------------------------------


def ladder_history(seed: int, tables: int, field: int = 30) -> list[tuple[str, object]]:
    """A ladder's life as the ratings see it: bots join over time (``("join", name)``), play tables
    of two or three (``("table", Outcome)``), some retire (they never play again), and the fit is
    asked for now and then (``("fit", None)``)."""
    rng = random.Random(seed)
    strength = {f"b{i:02d}": rng.gauss(0, 10) for i in range(field)}
    waiting = sorted(strength, key=lambda _: rng.random())
    active: list[str] = []
    events: list[tuple[str, object]] = []
    for t in range(tables):
        while waiting and (len(active) < 3 or rng.random() < 0.08):
            active.append(waiting.pop())
            events.append(("join", active[-1]))
        if len(active) > 4 and rng.random() < 0.03:
            active.remove(rng.choice(active))  # retired: stays in the ratings, plays no more
        n = rng.choice([2, 2, 2, 3])
        bots = tuple(rng.sample(active, n))
        deals = rng.choice([4, 8, 12])
        raw = [Fraction(round(deals * (strength[b] + rng.gauss(0, 20))), deals) for b in bots]
        mean = sum(raw, Fraction(0)) / n
        events.append(("table", Outcome(t, t, bots, tuple(r - mean for r in raw), deals)))
        if rng.random() < 0.3:
            events.append(("fit", None))
    return events


def replay(events: list[tuple[str, object]], resolution: float = 1.0, fits: bool = True) -> Ratings:
    ratings = Ratings(resolution)
    for kind, what in events:
        if kind == "join":
            ratings.add_bot(str(what))
        elif kind == "table":
            assert isinstance(what, Outcome)
            ratings.add(what)
        elif fits:
            ratings.fit()
    return ratings


def by_name(ratings: Ratings, fit_of: str = "fit") -> tuple[dict[str, float], dict[tuple[str, str], float], float]:
    fit = getattr(ratings, fit_of)()
    names = fit.names
    rating = {n: float(fit.rating[i]) for i, n in enumerate(names)}
    unit = {(a, b): float(fit.unit[i, j]) for i, a in enumerate(names) for j, b in enumerate(names)}
    return rating, unit, fit.sigma2


@pytest.mark.parametrize("seed", range(6))
def test_the_incremental_fit_equals_a_fit_from_scratch_after_joins_results_and_retirements(seed: int) -> None:
    """Hundreds of tables (past several exact solves of the incremental state, REFIT_EVERY), bots
    joining and retiring, the fit asked for at random moments: the incremental fit's ratings,
    covariance and noise equal a from-scratch fit's (the outcomes in another order, the bots
    entered in another order) to 1e-9, and the standings, marks and certification are equal."""
    events = ladder_history(seed, tables=40 + 90 * seed)
    incremental = replay(events)
    outcomes = [what for _, what in events if isinstance(what, Outcome)]
    shuffled = outcomes[:]
    random.Random(seed).shuffle(shuffled)
    scratch = ratings_of(shuffled, 1.0, bots=sorted((str(n) for k, n in events if k == "join"), reverse=True))
    mine, mine_unit, mine_sigma2 = by_name(incremental)
    theirs, theirs_unit, theirs_sigma2 = by_name(scratch, "exact")
    assert mine.keys() == theirs.keys()
    assert all(mine[n] == pytest.approx(theirs[n], abs=1e-9) for n in mine)
    assert all(mine_unit[p] == pytest.approx(theirs_unit[p], abs=1e-9) for p in mine_unit)
    assert mine_sigma2 == pytest.approx(theirs_sigma2, rel=1e-9)
    assert incremental.standings() == scratch.standings()
    assert incremental.marks() == scratch.marks()
    assert incremental.certified() == scratch.certified()
    fit = incremental.fit()
    assert [fit.names[i] for i in fit.order] == [s.name for s in scratch.standings()]


@pytest.mark.parametrize("seed", range(3))
def test_the_incremental_fit_is_a_function_of_the_outcomes_in_order(seed: int) -> None:
    """What the matchmaking reads is the same to the last bit whenever the fit was asked for and
    in whatever order the bots were entered (a host restarted on the same tables chooses the same)."""
    events = ladder_history(100 + seed, tables=150)
    asked = replay(events)
    joins = [e for e in events if e[0] == "join"]
    late = joins[::-1] + [e for e in events if e[0] == "table"]  # every bot first, in reverse, fit asked once
    once = replay(late, fits=False)
    a, a_unit, a_sigma2 = by_name(asked)
    b, b_unit, b_sigma2 = by_name(once)
    assert a == b and a_unit == b_unit and a_sigma2 == b_sigma2
    fa, fb = asked.fit(), once.fit()
    assert [fa.names[i] for i in fa.order] == [fb.names[i] for i in fb.order]


def test_certification_is_the_exact_solves_when_declared() -> None:
    """A field that certifies: certified() turns true at the table where the exact solve's marks
    are all settled, not a table earlier or later."""
    strengths = {"a": 12.0, "b": 4.0, "c": 3.9, "d": -8.0}
    ratings = Ratings(1.0)
    for name in strengths:
        ratings.add_bot(name)
    declared = None
    for t, bots, boards in boards_of_field(5, strengths, tables=300, noise=4.0):
        ratings.add(outcome_of(t, bots, boards))
        exact = all(m.verdict != "open" for m in ratings.marks())
        assert ratings.certified() == exact
        if exact and declared is None:
            declared = t
    assert declared is not None


@pytest.mark.parametrize("seed", range(4))
def test_the_choices_fit_with_the_later_outcomes_is_the_whole_fit(seed: int) -> None:
    """A host's two views: the choice's ratings (lagging) updated by the outcomes they do not count
    yet (a Woodbury update, what certified() reads every table) equal the ratings of every outcome
    solved from scratch, a bot entered since included; and certified() says what their marks say."""
    events = ladder_history(200 + seed, tables=120 + 40 * seed)
    outcomes = [what for _, what in events if isinstance(what, Outcome)]
    lag = 1 + seed * 3
    choice = replay([e for e in events if e[0] != "table" or e[1] not in outcomes[-lag:]])
    whole = replay(events + [("join", "newcomer")])
    later = outcomes[-lag:]
    view = choice._with_later(later, whole)
    assert view is not None
    rating, order, var, sigma2, dof = view
    exact = whole.exact()
    assert np.allclose(rating, exact.rating, rtol=0, atol=1e-9)
    assert [whole.names[i] for i in order] == [s.name for s in whole.standings()]
    assert np.allclose(var, [exact.cov[i, i] + exact.cov[j, j] - 2 * exact.cov[i, j] for i, j in zip(order, order[1:])], rtol=1e-9,
                       atol=0)
    assert sigma2 == pytest.approx(exact.sigma2, rel=1e-9) and dof == exact.dof
    assert choice.certified(later, whole) == all(m.verdict != "open" for m in whole.marks())


def test_certified_reads_the_whole_ratings_when_the_choices_know_no_bot_yet() -> None:
    """A host's first look for certification comes before its choice's ratings have any bot."""
    choice, whole = Ratings(1.0), Ratings(1.0)
    for name in "xy":
        whole.add_bot(name)
    assert not choice.certified([], whole)
    choice.add_bot("x")
    assert not choice.certified([], whole)  # y unknown here: uncoupled, its mark open


def test_a_fit_handed_out_keeps_its_values_while_the_ratings_move_on() -> None:
    """The incremental state is updated in place (its pending terms applied every FOLD_BLOCK, the
    centre moved by a bot's first result, the rows of bots without results rebuilt): a fit still
    held reads what it read when it was handed out."""
    ratings = Ratings(1.0)
    kept = []
    for kind, what in ladder_history(7, tables=200):
        if kind == "join":
            ratings.add_bot(str(what))
        elif kind == "table":
            assert isinstance(what, Outcome)
            ratings.add(what)
            if what.table % 5 == 0:
                fit = ratings.fit()
                kept.append((fit, [a.copy() for a in (fit.base, fit.z, fit.alpha, fit.cw, fit.rating)]))
    assert any(len(fit.alpha) for fit, _ in kept)
    for fit, then in kept:
        assert all(np.array_equal(a, b) for a, b in zip((fit.base, fit.z, fit.alpha, fit.cw, fit.rating), then))
