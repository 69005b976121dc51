"""bench.ladder's simulation: a small field is ordered and certified by every schedule, its
intervals hold the true strengths, the noise is the real deals', and the summary line parses."""

from __future__ import annotations

import re

import numpy as np
import pytest

from bench import ladder as B


def test_the_noise_is_the_real_sport_deals_at_the_issues_scale() -> None:
    noise = B.real_noise()
    assert len(noise) == 2000
    assert noise.mean() == pytest.approx(0.0, abs=1e-9)
    assert noise.std() == pytest.approx(B.NOISE)
    # the real shape: far from a few values, heavier-tailed than nothing at all
    assert len(np.unique(noise)) > 50


def test_kendall_tau() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert B.kendall_tau(a, a) == 1.0
    assert B.kendall_tau(a, -a) == -1.0
    assert B.kendall_tau(a, np.array([2.0, 1.0, 3.0, 4.0])) == pytest.approx(1 - 2 / 6)


@pytest.mark.parametrize("schedule", sorted(B.SCHEDULES))
def test_a_small_field_is_ordered_and_certified_with_intervals_that_hold(schedule: str) -> None:
    strengths = np.array([15.0, 8.0, 0.0, -1.0, -12.0, 20.0])
    run = B.simulate(strengths, B.SCHEDULES[schedule](3), B.real_noise(), np.random.default_rng(3), cap=200_000, resolution=2.0)
    assert run.tau_deals is not None and run.certify_deals is not None
    assert run.tau_deals <= run.deals and run.certify_deals <= run.deals
    assert run.intervals == 6 and run.covered >= 5


def test_a_run_repeats_itself() -> None:
    strengths = np.array([10.0, 0.0, -10.0, 3.0])
    runs = [B.simulate(strengths, B.SCHEDULES["matchmaker"](1), B.real_noise(), np.random.default_rng(9), cap=100_000, resolution=2.0) for _ in range(2)]
    assert (runs[0].tau_deals, runs[0].certify_deals, runs[0].covered) == (runs[1].tau_deals, runs[1].certify_deals, runs[1].covered)


def test_the_summary_line_reads_as_the_issue_says() -> None:
    lines: list[str] = []
    rows = B.bench(6, 2, 1, 200_000, lines.append, resolution=2.0)
    assert any("matchmaker" in x for x in lines)
    line = B.summary(rows, 200_000)
    m = re.fullmatch(r"tau deals vs random pairing: (\d+\.\d\d); vs round robin: (\d+\.\d\d); "
                     r"certify vs round robin: (\d+\.\d\d); coverage: (\d+)%", line)
    assert m, line
    assert all(float(x) > 0 for x in m.groups())


def test_the_bench_says_which_rules_seated_the_tables_and_what_an_oracle_would_do() -> None:
    lines: list[str] = []
    rows = B.bench(6, 2, 1, 200_000, lines.append, resolution=2.0, with_oracle=True)
    # the oracle (rule 4 told the true strengths) reaches τ and stops there: no certification, no intervals
    assert all(r.tau_deals is not None and r.certify_deals is None and r.intervals == 0 for r in rows["oracle"].runs)
    assert any(x.startswith("oracle") for x in lines)
    # the matchmaker's tables up to τ, by rule, are counted by the rule's own Matchmaker.rule
    counted = [sum(r.rules.values()) for r in rows["matchmaker"].runs]
    assert all(n == r.tau_deals // B.DEALS for n, r in zip(counted, rows["matchmaker"].runs))
    assert any(re.fullmatch(r"matchmaker's tables up to tau>=0\.95: overdue \d+%, placement \d+%, refresh \d+%, uncertain pairs \d+%", x)
               for x in lines)
    assert any(x.startswith("tau deals vs random pairing ") and "±" in x for x in lines)
