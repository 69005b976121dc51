#!/usr/bin/env python3
"""cwd_bot: first_bot that first writes its working directory to stderr (``cwd: PATH``), so a
test reads from its stderr log where the referee ran it (PROTOCOL.md, "The bot's process":
tests/bots/test_bot_cwd.py)."""
import json
import os
import sys

print("cwd:", os.getcwd(), file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "cwd_bot", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
