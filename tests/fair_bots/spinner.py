"""A bot that plays ``legal[0]`` and thinks all the time on another thread: it spins, and counts
the processor time it got between answering a turn and being sent the next one (the time the
other seats think), and the wall-clock time that took.  After each turn it writes on stderr
``spinner between_cpu_ms=C between_wall_ms=W turns=N`` (totals so far).  Under strict isolation
(PROTOCOL.md, "Fair play") it gets no processor time between its turns.  Used by
tests/bots/test_strict_isolation.py.
"""

import json
import sys
import threading
import time


def spin():
    n = 0
    while True:
        n += 1


sys.setswitchinterval(1e-4)  # the thread reading its input gets the interpreter at once when a line comes
threading.Thread(target=spin, daemon=True).start()
cpu = wall = 0.0
turns = 0
answered = None  # (process time, wall time) when it last answered
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "spinner", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        now = (time.process_time(), time.monotonic())
        if answered is not None:
            cpu += now[0] - answered[0]
            wall += now[1] - answered[1]
        turns += 1
        print(f"spinner between_cpu_ms={cpu * 1000:.1f} between_wall_ms={wall * 1000:.1f} turns={turns}", file=sys.stderr, flush=True)
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
        answered = (time.process_time(), time.monotonic())
    elif msg["type"] == "match_end":
        break
