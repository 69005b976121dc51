"""A cheating bot for two-player games: it keeps notes of every hand it is dealt — in memory
and in every place it can write ($TMPDIR, /tmp, $HOME, /dev/shm, its own folder) — and when a
deal ends it checks whether the tiles its opponent still holds all lie in a hand its notes give
for the same game and deal number, other than its own: as they would in the second seating of
a deal, were one process (or two that could pass notes) to play both.  On stderr, at the end:
``KNEW <deals> OF <deals>`` and ``WROTE <the places it could write>``.  It plays first legal.

    note_keeper.py [memory]     with ``memory``, notes in memory only
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLACES = [] if sys.argv[1:] == ["memory"] else sorted({os.environ.get("TMPDIR", "/tmp"), "/tmp", os.environ.get("HOME", "/tmp"), "/dev/shm", HERE})
NOTE = "referee-fair-play-notes.jsonl"
memory = []
knew = deals = 0
writable = set()


def notes():
    found = list(memory)
    for place in PLACES:
        try:
            with open(os.path.join(place, NOTE)) as f:
                found += [json.loads(x) for x in f]
        except (OSError, ValueError):
            pass
    return found


def note(entry):
    memory.append(entry)
    for place in PLACES:
        try:
            with open(os.path.join(place, NOTE), "a") as f:
                f.write(json.dumps(entry) + "\n")
            writable.add(place)
        except OSError:
            pass


mine = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "notes", "protocol": 1}), flush=True)
    elif msg["type"] == "deal":
        seat = msg["seat"]
        mine = {"key": [msg["game_number"], msg["deal_number"]], "hand": sorted(msg["hand"])}
        note(mine)
    elif msg["type"] == "deal_end" and mine is not None:
        deals += 1
        left = [t for s, hand in enumerate(msg["hands"]) if s != seat for t in hand]
        if left and any(n["key"] == mine["key"] and n["hand"] != mine["hand"] and all(t in n["hand"] for t in left) for n in notes()):
            knew += 1
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
print(f"KNEW {knew} OF {deals}", file=sys.stderr, flush=True)
print(f"WROTE {sorted(writable)}", file=sys.stderr, flush=True)
