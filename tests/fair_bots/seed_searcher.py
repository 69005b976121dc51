"""A cheating bot: from its first two hands it searches small seeds, under every one of the
referee's deal derivations, for two deals in a row that give it those hands, and writes on
stderr what it found (``SEED FOUND <derivation> <seed> <index>`` or ``SEED NONE``).  Then it
plays first legal.  (Two hands, not one: a single hand of seven tiles out of 28 is also dealt
by one small seed in a few hundred, by chance, so one hand would "find" a seed now and then.)

    seed_searcher.py LIMIT      try seeds 0..LIMIT-1 and deal indexes 0..7
"""

import json
import sys

from referee.engine import variant
from referee.engine.core.deal import deal_from_seed
from referee.engine.core.shuffle import DERIVATIONS
from referee.engine.core.tiles import tile

LIMIT = int(sys.argv[1])
searched = False
hands = []


def search(msg):
    game = variant(msg["game"]).new_game(msg["players"], msg["options"])
    first, second = hands
    for derivation in DERIVATIONS:
        for seed in range(LIMIT):
            for index in range(8):
                if (set(deal_from_seed(seed, index, game.shape, derivation).hands[msg["seat"]]) == first
                        and set(deal_from_seed(seed, index + 1, game.shape, derivation).hands[msg["seat"]]) == second):
                    return f"SEED FOUND {derivation} {seed} {index}"
    return "SEED NONE"


for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "searcher", "protocol": 1}), flush=True)
    elif msg["type"] == "deal" and not searched:
        hands.append({tile(*t) for t in msg["hand"]})
        if len(hands) == 2:
            searched = True
            print(search(msg), file=sys.stderr, flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
