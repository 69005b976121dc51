#!/usr/bin/env python3
"""first_bot: always plays the first legal play.  Deterministic; useful in tests.

Standard library only.  See random_bot.py for the same loop with more comments.
"""
import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict):
        continue
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "first_bot.py", "version": "1.0",
              "author": "referee sample bots", "protocol": 1})
    elif kind == "turn":
        first = msg["legal"][0]
        send({"type": "play", **first})  # a legal entry sent as it is: tile, end (closed, stop)
    elif kind == "match_end":
        break
