#!/usr/bin/env python3
"""learned_bot: plays block with the policy train_block.py saved (block_policy.npz beside it).

    referee match sample_bots/learned/learned_bot.py sample_bots/random_bot.py --variant block --players 2 --games 10 --seed 7
    referee check sample_bots/learned/learned_bot.py

The policy is a linear softmax over the environments' observation (referee.envs.codec), taken
at its likeliest action; referee.envs.policy.as_bot makes it a protocol bot.  In any game but
two-player block it plays the first legal move.  Another policy file: the first argument.
Requires ``pip install 'referee[rl]'``.
"""

import sys
from pathlib import Path

from protocol.bot import run
from referee.envs.policy import LinearPolicy, as_bot

path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "block_policy.npz"
policy = LinearPolicy.load(path)

if __name__ == "__main__":
    run(as_bot(policy, games=("block",), players=(2,)), name="learned_bot", version="1.0", author="referee sample bots")
