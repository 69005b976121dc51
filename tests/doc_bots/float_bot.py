#!/usr/bin/env python3
"""float_bot: first_bot as a bot written with a JSON library that writes every number with a
point (Lua's cjson and dkjson write ``5.0``): ``"protocol": 1.0``, ``"tile": [0.0, 4.0]``,
``"turn": 12.0``.  PROTOCOL.md ("Numbers") says such a bot is read as if it wrote integers.

    float_bot.py [fraction | protocol=X]

``fraction``: at its first turn, a tile's first half has a fraction (``[3.5, 4.0]``), a fault.
``protocol=X``: answer hello with ``"protocol": X`` (e.g. 1.5).
"""
import json
import sys

args = sys.argv[1:]
protocol = next((float(a.split("=", 1)[1]) for a in args if a.startswith("protocol=")), 1.0)
fraction = "fraction" in args


def floats(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [floats(v) for v in value]
    if isinstance(value, dict):
        return {k: floats(v) for k, v in value.items()}
    return value


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin.buffer:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "float_bot", "protocol": protocol})
    elif kind == "turn":
        play = floats({"type": "play", **msg["legal"][0], "turn": msg["id"]})
        if fraction and play["tile"] is not None:
            play["tile"][0] += 0.5
            fraction = False
        send(play)
    elif kind == "match_end":
        break
