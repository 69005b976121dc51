#!/usr/bin/env python3
"""A kolbasa bot written from the protocol's kolbasa page (docs/protocol/kolbasa.md) alone, as a stranger to this code
base would write it (standard library only, no sample bot, no protocol library).

It keeps both rows from ``deal.rows`` and the ``turned``, ``placed``, ``tailed`` and ``cut``
events, and the layout (the start and the two lines) from each ``placed`` and its place name.  From
the section's table of places it works out every place for a tile turned up, and checks: each
``turn`` (its ``legal``, in the documented order, ``rows``, ``lines``, ``ends`` and ``counts``);
that a ``tailed`` tile fits nowhere; that the other seat's placements were places it worked out;
that a ``cut`` lists the start, the top line outward and the bottom line outward.  It plays places
it chooses itself (a knife when it can, at random otherwise) and builds the answer from scratch,
the tile's halves in a random order and no ``end``.  Each difference goes to stderr as a line
starting ``MISMATCH``; at the end a line ``SAW {json}`` counts what the deals made it meet.
Seed: BOT_SEED.
"""
import json
import os
import random
import sys

rng = random.Random(os.environ.get("BOT_SEED", "1"))
saw = {"turns": 0, "knives": 0, "cuts_into_my_row": 0, "inserted": 0, "tailed": 0, "deals": 0}
me = None
rows = []  # both rows, left to right: a tile (a sorted tuple) where public, None where unseen
start = None  # [top half, bottom half]
lines = {"top": [], "bottom": []}  # each tile as [near half, far half], outward from the start


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def mismatch(what, told, worked_out):
    print(f"MISMATCH {what}: told {json.dumps(told)}, worked out {json.dumps(worked_out)}", file=sys.stderr, flush=True)


def tile(t):
    return tuple(sorted(t))


def junction(line, j):
    """The number junction ``j`` of a line shows: 0 is the start's half, j the far half of its j-th tile."""
    return (start[0] if line == "top" else start[1]) if j == 0 else lines[line][j - 1][1]


def places(t):
    """Every place for tile ``t``, in the order the section's table lists them."""
    a, b = t
    out = [line for line in ("top", "bottom") if junction(line, len(lines[line])) in (a, b)]
    if a == b:
        out += [f"{line}:{j}" for line in ("top", "bottom") for j in range(len(lines[line])) if junction(line, j) == a]
    shorter = min(len(lines["top"]), len(lines["bottom"]))
    out += [f"knife:{i}" for i in range(1, shorter + 1) if sorted((junction("top", i), junction("bottom", i))) == [a, b]]
    return out


def place_tile(t, where):
    """Lay ``t`` at ``where``; the tiles a knife cuts, in the section's order (else None)."""
    global start
    a, b = t
    if where in ("top", "bottom"):
        end = junction(where, len(lines[where]))
        lines[where].append([end, b if end == a else a])
        return None
    line, _, n = where.partition(":")
    if line in ("top", "bottom"):
        lines[line].insert(int(n), [a, a])
        return None
    i = int(n)
    top_half = junction("top", i)
    cut = [tile(start)] + [tile(x) for x in lines["top"][:i]] + [tile(x) for x in lines["bottom"][:i]]
    start = [top_half, b if top_half == a else a]
    lines["top"], lines["bottom"] = lines["top"][i:], lines["bottom"][i:]
    return cut


def rows_json():
    return [[list(x) if x is not None else None for x in row] for row in rows]


def lines_json():
    return {"start": start, "top": lines["top"], "bottom": lines["bottom"]}


waiting_cut = None  # the cut a knife just made, until its event comes
ended_by = None  # the seat that ended the last deal (went out, or the fisherman)
for text in sys.stdin:
    msg = json.loads(text)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "kolbasa_reader", "protocol": 1})
    elif kind == "deal":
        saw["deals"] += 1
        me = msg["seat"]
        rows = [[None if x is None else tile(x) for x in row] for row in msg["rows"]]
        if msg["hand"] != [] or msg["bazaar"] != 0 or [len(r) for r in rows] != [14, 14] or any(x is not None for r in rows for x in r):
            mismatch("deal: no hand, no bazaar, two rows of 14 face down", [msg["hand"], msg["bazaar"], msg["rows"]], None)
        start, lines = None, {"top": [], "bottom": []}
        starter = 0 if msg["deal_number"] == 0 else ended_by  # seat 0 first, then whoever ended the last deal
    elif kind == "turned":
        t = tile(msg["tile"])
        if rows[msg["seat"]][-1] not in (None, t):  # public already once no unseen tile is left
            mismatch("turned: the rightmost tile", msg["tile"], rows[msg["seat"]][-1])
        rows[msg["seat"]][-1] = t
    elif kind == "tailed":
        t = tile(msg["tile"])
        if rows[msg["seat"]][-1] != t:
            mismatch("tailed: the tile turned up", msg["tile"], rows[msg["seat"]][-1])
        if start is not None and places(t):
            mismatch("tailed, yet it fits", msg["tile"], places(t))
        saw["tailed"] += 1
        rows[msg["seat"]] = [t] + rows[msg["seat"]][:-1]
    elif kind == "placed":
        t = tile(msg["tile"])
        if rows[msg["seat"]][-1] != t or "end" in msg:
            mismatch("placed: the tile turned up, with a place and no end", msg, rows[msg["seat"]][-1])
        rows[msg["seat"]].pop()
        if msg["place"] == "start":
            if start is not None or not msg["forced"] or msg["seat"] != starter:
                mismatch("start", msg, {"lines": lines_json(), "starter": starter})
            start = list(t)
            continue
        if msg["seat"] != me and msg["place"] not in places(t):
            mismatch("the other seat's place", msg, places(t))
        if ":" in msg["place"] and not msg["place"].startswith("knife"):
            saw["inserted"] += 1
        waiting_cut = place_tile(t, msg["place"])
    elif kind == "cut":
        told = [tile(x) for x in msg["tiles"]]
        if waiting_cut != told or msg["to"] != 1 - msg["seat"]:
            mismatch("cut", msg, waiting_cut)
        waiting_cut = None
        rows[msg["to"]] = told + rows[msg["to"]]
        if msg["to"] == me:
            saw["cuts_into_my_row"] += 1
    elif kind == "turn":
        saw["turns"] += 1
        t = rows[me][-1]
        if msg["rows"] != rows_json():
            mismatch("rows", msg["rows"], rows_json())
        if msg["lines"] != lines_json():
            mismatch("lines", msg["lines"], lines_json())
        ends = {line: junction(line, len(lines[line])) for line in ("top", "bottom")}
        if msg["ends"] != ends or msg["counts"] != [len(r) for r in rows] or msg["hand"] != []:
            mismatch("ends, counts, hand", [msg["ends"], msg["counts"], msg["hand"]], [ends, [len(r) for r in rows], []])
        legal = [{"tile": list(t), "place": p} for p in places(t)]
        if msg["legal"] != legal:
            mismatch("legal", msg["legal"], legal)
        knives = [p for p in places(t) if p.startswith("knife")]
        choice = rng.choice(knives) if knives else rng.choice(places(t) or [e["place"] for e in msg["legal"]])
        if knives:
            saw["knives"] += 1
        a, b = t
        send({"type": "play", "tile": [b, a] if rng.random() < 0.5 else [a, b], "place": choice})
    elif kind == "deal_end":
        ended_by = msg["seat"]
        if msg["hands"] != [sorted(list(x) for x in row) for row in rows] and None not in rows[0] + rows[1]:
            mismatch("deal_end rows", msg["hands"], rows_json())
        if msg["reason"] == "domino":
            winner = msg["seat"]
            if rows[winner]:
                mismatch("domino: the winner's row is empty", rows_json(), None)
    elif kind == "match_end":
        break
print("SAW " + json.dumps(saw), file=sys.stderr, flush=True)
