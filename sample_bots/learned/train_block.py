#!/usr/bin/env python3
"""Train a block bot against random_bot: a linear softmax policy and REINFORCE, numpy only.

    python sample_bots/learned/train_block.py                      # about 1.5 minutes; writes block_policy.npz
    python sample_bots/learned/train_block.py --deals 500 --out /tmp/p.npz

The learner plays seat 0 or 1 of two-player block (each deal the other way round) in
:class:`referee.envs.SeatEnv`, against the in-process twin of sample_bots/random_bot.py.  Its
reward is the deal's margin: what it wrote less what the opponent wrote.  Each batch of deals
moves the weights along the policy gradient of the batch's returns less their mean.  The
policy it saves is played by learned_bot.py (``referee match``, ``referee check``).

Requires ``pip install 'referee[rl]'`` (numpy, gymnasium, pettingzoo).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from referee.envs import SeatEnv
from referee.envs.policy import LinearPolicy
from referee.envs.seat import random_bot

HERE = Path(__file__).resolve().parent


def train(deals: int, seed: int, batch: int, rate: float, minutes: float) -> tuple[LinearPolicy, list[float]]:
    """Train for ``deals`` deals (or ``minutes``, whichever ends first); the policy, and the mean
    margin of each batch."""
    rng = np.random.default_rng(seed)
    policy = LinearPolicy.zeros("block", 2)
    envs = [SeatEnv("block", random_bot(seed + s), players=2, seat=s, reward="margin") for s in (0, 1)]
    for s, env in enumerate(envs):
        env.reset(seed=seed + s)
    means: list[float] = []
    grads: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per step: legal, p, x
    returns: list[tuple[int, float]] = []  # steps of an episode, its return
    started = time.monotonic()
    played = 0
    while played < deals and time.monotonic() - started < minutes * 60:
        env = envs[played % 2]
        obs, info = env.reset()
        done, total, steps = False, 0.0, 0
        while not done:
            legal, p, x = policy.probabilities(obs, info["action_mask"])
            k = int(rng.choice(len(legal), p=p))
            onehot = np.zeros(len(legal))
            onehot[k] = 1
            grads.append((legal, onehot - p, x))
            obs, reward, done, _, info = env.step(int(legal[k]))
            total += reward
            steps += 1
        returns.append((steps, total))
        played += 1
        if len(returns) == batch:
            values = np.array([r for _, r in returns]) / 20.0
            advantage = values - values.mean()
            step = 0
            update = np.zeros_like(policy.weights)
            for (steps, _), a in zip(returns, advantage):
                for legal, g, x in grads[step:step + steps]:
                    update[legal] += a * np.outer(g, x)
                step += steps
            policy.weights += rate * update / batch
            means.append(float(np.mean([r for _, r in returns])))
            grads, returns = [], []
    for env in envs:
        env.close()
    return policy, means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=100000, help="deals to train on (default 100000)")
    parser.add_argument("--minutes", type=float, default=9.0, help="stop after this many minutes at most (default 9)")
    parser.add_argument("--batch", type=int, default=50, help="deals per update (default 50)")
    parser.add_argument("--rate", type=float, default=0.2, help="learning rate (default 0.2)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the deals and of the sampling (default 1)")
    parser.add_argument("--out", type=Path, default=HERE / "block_policy.npz", help="where to save the policy")
    args = parser.parse_args()
    started = time.monotonic()
    policy, means = train(args.deals, args.seed, args.batch, args.rate, args.minutes)
    policy.save(args.out, game="block", players=2)
    took = time.monotonic() - started
    tenth = max(1, len(means) // 10)
    first, last = np.mean(means[:tenth]) if means else 0.0, np.mean(means[-tenth:]) if means else 0.0
    print(f"trained on {len(means) * args.batch} deals in {took:.0f} s: mean margin a deal {first:+.2f} (first tenth) -> {last:+.2f} (last tenth)")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
