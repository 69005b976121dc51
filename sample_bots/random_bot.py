#!/usr/bin/env python3
"""random_bot: plays a uniformly random legal play.  Standard library only; copy it anywhere.

The protocol (PROTOCOL.md): one JSON object per line on stdin, one per line on stdout.
We answer "hello" with our name and "turn" with a "play" picked from turn["legal"];
every other message (deal, placed, drew, passed, deal_end, ...) needs no answer.

Seed: the environment variable BOT_SEED, or the first command-line argument, else random.
    python3 random_bot.py 42        BOT_SEED=42 python3 random_bot.py
"""
import json
import os
import random
import sys

# The seed, if one is given, makes the bot repeat itself exactly (handy when debugging).
seed = os.environ.get("BOT_SEED") or (sys.argv[1] if len(sys.argv) > 1 else None)
rng = random.Random(seed)


def send(message):
    """Write one message as one line, and flush so the referee sees it now."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin.buffer:  # one message per line, UTF-8; the loop ends when stdin closes
    try:
        msg = json.loads(line)
    except ValueError:
        continue  # not JSON: ignore it
    if not isinstance(msg, dict):
        continue
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "random_bot.py", "version": "1.0",
              "author": "referee sample bots", "protocol": 1})
    elif kind == "turn":
        choice = rng.choice(msg["legal"])  # every entry of "legal" is a legal move
        print(f"playing {choice}", file=sys.stderr)  # our log
        # Send the entry as it is: its tile and end, and "closed" or "stop" where the game has
        # them (osel); "turn" echoes the turn's id, so a late answer cannot count for another.
        send({"type": "play", **choice, "turn": msg.get("id")})
    elif kind == "match_end":
        break  # the match is over: exit
    # any other type (including ones added to the protocol later) is ignored
