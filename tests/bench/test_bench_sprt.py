"""bench.sprt and bench.sprt_collect: the simulated pairs hold the hypotheses they are drawn for,
the committed pairs are the referee's, and a run repeats itself (the figures of docs/sprt.md)."""

from __future__ import annotations

import random
import statistics

import pytest

from bench import sprt as B
from bench.sprt_collect import MATCHES, pairs_of
from referee.stats.elo import score_of_elo
from referee.stats.figures import Boards
from referee.stats.sprt import parse_sprt
from tests.matches.test_match import GREEDY, RANDOM, match


def _mean_of(draw: B.Draw, n: int = 20000, seed: int = 1) -> tuple[float, float]:
    rng = random.Random(seed)
    tally = Boards(2, 2)
    for _ in range(n):
        tally.add(draw(rng))
    return tally.margin[0].mean, tally.scores[0].mean


def test_the_draws_hold_the_hypothesis_exactly():
    sample = next(s for s in B.load() if s.name == "kozel, greedy vs random")
    assert len(sample.pairs) == 1000 and sample.orientations == 2
    assert statistics.fmean(sample.margins()) > 30  # greedy is far ahead: the shift is large
    margin, _ = _mean_of(B.shifted(sample, 0.0))
    assert margin == pytest.approx(0.0, abs=1.5)  # 20000 draws of an sd of 54.5: ±0.8 at 2 sd
    # The reweighted sample's expected score is exactly that of the Elo, up to sampling.
    for elo in (0.0, 100.0):
        draw = B.tilted(sample, elo)
        _, score = _mean_of(draw)
        assert score == pytest.approx(score_of_elo(elo), abs=0.01)


def test_every_sample_has_its_tests_and_a_run_repeats_itself():
    samples = {s.name: s for s in B.load()}
    assert set(samples) == set(B.TESTS) == {name for name, _ in MATCHES}
    for tests in B.TESTS.values():
        for words in tests:
            parse_sprt([words])
    sample = samples["sport, greedy vs random"]
    test = parse_sprt(["margin0=0 margin1=5 min_pairs=0"])

    def run(seed: int) -> dict[int, B.Tally]:
        return B.simulate(test, B.shifted(sample, 0.0), 2, 60, random.Random(seed), cap=5000, minimums=(0, 10))

    first = run(3)
    assert first == run(3) and first != run(4)
    for tally in first.values():
        assert tally.runs == 60 and tally.undecided == 0 and tally.pairs >= 60
    assert first[10].pairs >= first[0].pairs  # a minimum never shortens a run
    assert first[10].pairs >= 10 * 60


def test_the_collected_pairs_are_the_first_bots_margins_in_each_orientation(tmp_path):
    result, _, _ = match(tmp_path, GREEDY, RANDOM, "--deals", "8")
    pairs = pairs_of(result)
    assert len(pairs) == 8 and all(len(p) == 2 for p in pairs)
    paired = result["margin"]["greedy_bot"]["paired"]
    assert statistics.fmean(sum(p) / 2 for p in pairs) == pytest.approx(paired["mean"], abs=1e-4)
    kozel, _, _ = match(tmp_path, GREEDY, RANDOM, "--variant", "kozel", "--games", "2", name="k")
    pairs = pairs_of(kozel)
    assert len(pairs) == 2
    assert statistics.fmean(sum(p) / 2 for p in pairs) == pytest.approx(kozel["margin"]["greedy_bot"]["paired"]["mean"], abs=1e-4)
