"""bench.envs runs: every environment it times, both random_sim_test rows and its printed
tables, on a tiny count and a clock that runs fast (nothing here is timed)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel")
pytest.importorskip("shimmy")

from bench import envs as E


class FastClock:
    """``time.time`` for performance_benchmark: half a second a call, so its 5 s loop stops
    after ten rounds of every agent's move."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        self.now += 0.5
        return self.now


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setitem(E.performance_benchmark.__globals__, "time", FastClock())


def test_every_environment_is_stepped_with_its_mask(fast):
    for name, make in E.ENVS.items():
        assert E.steps_per_second(make) > 0, name


def test_the_main_prints_every_row(fast, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["bench.envs", "--rounds", "1", "--sims", "1"])
    E.main()
    out = capsys.readouterr().out
    for name in E.ENVS:
        assert f"round 1: {name}" in out
    for ours, theirs, _ in E.SIMS:
        assert ours in out and theirs in out
    assert "ours takes" in out
