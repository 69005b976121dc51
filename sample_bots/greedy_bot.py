#!/usr/bin/env python3
"""greedy_bot: plays the heaviest tile it can.  Deterministic.  Standard library only.

Among the legal plays it takes, in this order of preference:
  1. the highest pip sum (get rid of points: a hand left at the end counts against you);
  2. a double (doubles are the hardest tiles to place later);
  3. the play that leaves the most tiles of the rest of the hand placeable on the new ends;
  4. the first such play in the "legal" list.
In sea_kozel it leads 6-6 for a hundred when it may, and writes off a fish rather than decline.
In kolbasa (where the tile is given) it lays a knife when it can, the one that cuts the most.
See random_bot.py for the protocol loop with more comments.
"""
import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def options_after(play, hand, ends):
    """How many tiles of the rest of the hand fit an open end after `play`."""
    a, b = play["tile"]
    end = play.get("train") or play.get("end")  # mexican_train names a train; "ends" has each train's end
    if end is None:  # the lead: the new ends are the tile's two halves
        new_ends = [a, b]
    else:  # the chosen end now shows the tile's other half; the other ends stay
        new_ends = [v for name, v in ends.items() if name != end]
        new_ends.append(b if ends[end] == a else a)
    rest = [t for t in hand if sorted(t) != sorted(play["tile"])]
    return sum(1 for t in rest if t[0] in new_ends or t[1] in new_ends)


def choose(turn):
    def preference(play):
        if play.get("stop"):  # "place nothing more this turn" (osel): only when nothing else is left
            return (-1, False, 0)
        if play["tile"] is None:  # sea_kozel after a fish: rather write it off than decline
            return (1 if play.get("declare") == "write_off" else 0, False, 0)
        if play.get("declare") == "hundred":  # sea_kozel: lead 6-6 for a hundred rather than plainly
            return (12, True, 99)
        if "place" in play:  # kolbasa: the tile is given; a knife cuts the sausage to the opponent, the longer the better
            kind, _, k = play["place"].partition(":")
            return (int(k) if kind == "knife" else 0, False, 0)
        a, b = play["tile"]
        return (a + b, a == b, options_after(play, turn["hand"], turn["ends"]))
    # max() returns the first of equal maxima, which is the first in the legal list.
    return max(turn["legal"], key=preference)


for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict):
        continue
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "greedy_bot.py", "version": "1.0",
              "author": "referee sample bots", "protocol": 1})
    elif kind == "turn":
        best = choose(msg)
        send({"type": "play", **best})  # the entry as it is: tile, end (closed, stop)
    elif kind == "match_end":
        break
