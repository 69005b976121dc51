#!/usr/bin/env python3
"""A bot that writes a file beside itself before it says hello, then plays as first_bot: fine
outside the sandbox, a crash inside it (everything but /tmp is read-only there), for
tests/ladder/test_host.py's check of a newcomer in the sandbox."""
import json
import sys
from pathlib import Path

(Path(__file__).resolve().parent / "writes_beside_bot.state").write_text("started\n")


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
        send({"type": "hello", "name": "writes_beside_bot.py", "version": "1.0", "author": "referee tests", "protocol": 1})
    elif kind == "turn":
        send({"type": "play", **msg["legal"][0]})
    elif kind == "match_end":
        break
