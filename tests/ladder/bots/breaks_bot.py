#!/usr/bin/env python3
"""A bot that plays as first_bot until the file named by its first argument exists, and from
then on answers every turn with a line that is not a play (a fault each turn): a bot that passed
its check and broke later, for tests/ladder/test_suspension.py."""
import json
import os
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


flag = sys.argv[1]
for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict):
        continue
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "breaks_bot.py", "version": "1.0", "author": "referee tests", "protocol": 1})
    elif kind == "turn":
        if os.path.exists(flag):
            send({"type": "nonsense"})
        else:
            send({"type": "play", **msg["legal"][0]})
    elif kind == "match_end":
        break
