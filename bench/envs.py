"""The learning environments' speed (issue 35 item 6), against OpenSpiel's own dominoes.

    python -m bench.envs [--rounds R] [--sims N]

1. **Steps a second of random masked play**, by PettingZoo's ``performance_benchmark`` (its own
   loop: about 5 s a run, a reset whenever every agent is done).  That loop reads the mask
   only from a dict observation; both environments keep theirs in ``infos`` (as Shimmy does),
   so both run under the same thin wrapper that hands it the observation and the mask as a
   dict.  Rows:

   * **Shimmy, python_team_dominoes** — ``OpenSpielCompatibilityV0`` around OpenSpiel's Python
     team dominoes (4 players in pairs, 7 tiles each, no bazaar): the baseline;
   * **ours, sport** — ``referee.envs.aec_env("sport")``: the same table (4 in pairs, no bazaar),
     with our observations made from the protocol's messages;
   * **Shimmy, referee_sport** — our OpenSpiel registration of sport under the same Shimmy
     wrapper (its chance nodes deal every tile, one step each, as the baseline's do).

   The runs alternate, ``--rounds`` times, so a busy spell of a shared machine slows them alike;
   each row's figure is its best round, and its ratio is against the baseline's best.
2. **random_sim_test** (``--sims`` simulations, serialization on), seconds for ours against
   OpenSpiel's: ``referee_block`` (2 players) against ``python_block_dominoes``, and
   ``referee_sport`` against ``python_team_dominoes``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import time
from typing import Any

import numpy as np
import open_spiel.python.games  # noqa: F401  (registers python_team_dominoes, python_block_dominoes)
import pyspiel
from pettingzoo.test import performance_benchmark
from pettingzoo.utils import BaseWrapper
from shimmy import OpenSpielCompatibilityV0

import referee.envs.openspiel  # noqa: F401  (registers referee_<game>)
from referee.envs import aec_env


class MaskInObservation(BaseWrapper):
    """The observation and ``infos[agent]["action_mask"]`` as PettingZoo's classic dict."""

    def observe(self, agent: str) -> Any:
        return {"observation": self.env.observe(agent), "action_mask": self.env.infos[agent]["action_mask"]}

    def last(self, observe: bool = True) -> Any:
        obs, reward, term, trunc, info = self.env.last(observe)
        if observe:
            obs = {"observation": obs, "action_mask": info.get("action_mask", np.zeros(1, np.int8))}
        return obs, reward, term, trunc, info


def steps_per_second(make: Any) -> float:
    env = MaskInObservation(make())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        performance_benchmark(env)
    found = re.search(r"([0-9.e+]+) turns per second", out.getvalue())
    assert found is not None, out.getvalue()
    env.close()
    return float(found.group(1))


def sim_seconds(name: str, sims: int, params: dict[str, Any] | None = None) -> float:
    game = pyspiel.load_game(name, params or {})
    started = time.perf_counter()
    pyspiel.random_sim_test(game, num_sims=sims, serialize=True, verbose=False)
    return time.perf_counter() - started


ENVS = {
    "Shimmy, python_team_dominoes": lambda: OpenSpielCompatibilityV0(game_name="python_team_dominoes"),
    "ours, sport": lambda: aec_env("sport", 4),
    "Shimmy, referee_sport": lambda: OpenSpielCompatibilityV0(game_name="referee_sport"),
}
SIMS: list[tuple[str, str, dict[str, Any]]] = [("referee_block", "python_block_dominoes", {}), ("referee_sport", "python_team_dominoes", {})]


def main() -> None:
    parser = argparse.ArgumentParser(description="The learning environments' speed against OpenSpiel's dominoes.")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each environment, alternating (default 2)")
    parser.add_argument("--sims", type=int, default=50, help="random_sim_test simulations per game (default 50)")
    args = parser.parse_args()
    best: dict[str, float] = {}
    for r in range(args.rounds):
        for name, make in ENVS.items():
            rate = steps_per_second(make)
            best[name] = max(best.get(name, 0.0), rate)
            print(f"round {r + 1}: {name:32} {rate:10.0f} steps/s", flush=True)
    base = best["Shimmy, python_team_dominoes"]
    print("\nperformance_benchmark, random masked play (best round):")
    for name, rate in best.items():
        print(f"  {name:32} {rate:10.0f} steps/s  {rate / base:5.2f}x")
    print(f"\nrandom_sim_test, {args.sims} simulations, serialize=True:")
    for ours, theirs, params in SIMS:
        a, b = sim_seconds(ours, args.sims, params), sim_seconds(theirs, args.sims)
        a2, b2 = sim_seconds(ours, args.sims, params), sim_seconds(theirs, args.sims)
        a, b = min(a, a2), min(b, b2)
        print(f"  {ours:16} {a:7.2f} s   {theirs:24} {b:7.2f} s   ours takes {a / b:5.2f}x the time")


if __name__ == "__main__":
    main()
