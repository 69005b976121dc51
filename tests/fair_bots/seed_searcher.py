"""A cheating bot: from its first hand it searches small seeds, under both of the referee's
deal derivations, for the deal that gives it that hand, and writes on stderr what it found
(``SEED FOUND <derivation> <seed> <index>`` or ``SEED NONE``).  Then it plays first legal.

    seed_searcher.py LIMIT      try seeds 0..LIMIT-1 and deal indexes 0..7
"""

import json
import sys

from referee.engine import variant
from referee.engine.deal import deal_from_seed
from referee.engine.shuffle import DERIVATIONS
from referee.engine.tiles import tile

LIMIT = int(sys.argv[1])
searched = False


def search(msg):
    game = variant(msg["game"]).new_game(msg["players"], msg["options"])
    hand = {tile(*t) for t in msg["hand"]}
    for derivation in DERIVATIONS:
        for seed in range(LIMIT):
            for index in range(8):
                if set(deal_from_seed(seed, index, game.shape, derivation).hands[msg["seat"]]) == hand:
                    return f"SEED FOUND {derivation} {seed} {index}"
    return "SEED NONE"


for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "searcher", "protocol": 1}), flush=True)
    elif msg["type"] == "deal" and not searched:
        searched = True
        print(search(msg), file=sys.stderr, flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
