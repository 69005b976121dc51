#!/usr/bin/env python3
"""A mexican_train bot written from the protocol's mexican_train page (docs/protocol/mexican_train.md) alone, as a stranger to
this code base would write it (standard library only, no sample bot, no protocol library).

It follows the table from ``deal`` and the events (each train's end, tile count and marker, the
open double, its own hand and the tile it has just drawn), works out its legal moves from the
section's words (its own train, trains with markers and the Mexican, only the open double's train
while one is open, only a tile just drawn; listed by tile, then train) and checks every ``turn``
against what it worked out.  It plays one of its own moves, built from scratch rather than copied
from ``legal``: no ``end``, the tile's halves in a random order.  Each difference is written to
stderr as a line starting ``MISMATCH``; at the end a line ``SAW {json}`` counts what the deals
made it meet (a hanging double, a marker train, a drawn tile, a double of its own to cover).
Seed: BOT_SEED.
"""
import json
import os
import random
import sys

rng = random.Random(os.environ.get("BOT_SEED", "1"))
saw = {"turns": 0, "own_double_to_cover": 0, "hanging_double": 0, "marker_train_played": 0,
       "drawn_tile_turn": 0}
table = {}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def mismatch(what, told, worked_out):
    print(f"MISMATCH {what}: told {json.dumps(told)}, worked out {json.dumps(worked_out)}", file=sys.stderr, flush=True)


def tile(t):
    return tuple(sorted(t))


def on_deal(msg):
    n = msg["players"]
    names = [f"seat{s}" for s in range(n)] + ["mexican"]
    station = msg["station"][0]
    if msg["station"] != [6 - msg["round"], 6 - msg["round"]]:
        mismatch("station", msg["station"], [6 - msg["round"]] * 2)
    if msg["leader"] != msg["round"] % n:
        mismatch("leader", msg["leader"], msg["round"] % n)
    if msg["round"] != msg["deal_number"]:
        mismatch("round", msg["round"], msg["deal_number"])
    dealt = {2: 8, 3: 7, 4: 6}[n]
    if len(msg["hand"]) != dealt or msg["bazaar"] != 27 - n * dealt:
        mismatch("deal sizes", [len(msg["hand"]), msg["bazaar"]], [dealt, 27 - n * dealt])
    table.clear()
    table.update(seat=msg["seat"], names=names, end=dict.fromkeys(names, station), tiles=dict.fromkeys(names, 0),
                 marker=dict.fromkeys(names, False), open_double=None, hand=[tile(t) for t in msg["hand"]],
                 drawn=None, last_placer=None)


def on_placed(msg):
    train, (a, b) = msg["train"], msg["tile"]
    end = table["end"][train]
    if end not in (a, b) or msg.get("end") is not None:
        mismatch("placed", msg, {"train end": end})
    table["end"][train] = b if end == a else a
    table["tiles"][train] += 1
    if msg["seat"] == table["seat"]:
        table["hand"].remove(tile(msg["tile"]))
    if train == f"seat{msg['seat']}":
        table["marker"][train] = False  # the owner's play lifts its marker
    if a == b:
        table["open_double"] = train
    elif table["open_double"] == train:
        table["open_double"] = None
    table["drawn"] = None
    table["last_placer"] = msg["seat"]


def on_drew(msg):
    if msg["seat"] != table["seat"]:
        table["drawn"] = None
        return
    if msg["count"] != 1 or not msg["tiles"] or len(msg["tiles"]) != 1:
        mismatch("drew (one tile, shown to its drawer)", msg, {"count": 1})
    table["hand"].extend(tile(t) for t in msg["tiles"] or [])
    table["drawn"] = tile(msg["tiles"][-1]) if msg["tiles"] else None


def on_turn(msg):
    saw["turns"] += 1
    me = f"seat{table['seat']}"
    if sorted(tile(t) for t in msg["hand"]) != sorted(table["hand"]):
        mismatch("hand", msg["hand"], sorted(table["hand"]))
    if msg["ends"] != table["end"]:
        mismatch("ends", msg["ends"], table["end"])
    trains = [{"train": k, "end": table["end"][k], "tiles": table["tiles"][k], "marker": table["marker"][k]}
              for k in table["names"]]
    if msg["trains"] != trains:
        mismatch("trains", msg["trains"], trains)
    if msg["open_double"] != table["open_double"]:
        mismatch("open_double", msg["open_double"], table["open_double"])
    if table["open_double"] is not None:
        open_trains = [table["open_double"]]
    else:
        open_trains = [k for k in table["names"] if k in (me, "mexican") or table["marker"][k]]
    if msg["open_trains"] != open_trains:
        mismatch("open_trains", msg["open_trains"], open_trains)
    tiles = [table["drawn"]] if table["drawn"] else sorted(table["hand"])
    legal = [{"tile": list(t), "end": None, "train": k} for t in tiles for k in open_trains if table["end"][k] in t]
    if msg["legal"] != legal:
        mismatch("legal", msg["legal"], legal)
    if table["drawn"]:
        saw["drawn_tile_turn"] += 1
    if table["open_double"] == me and table["tiles"][me] and any(
            o["train"] == me for o in legal) and not table["marker"][me]:
        saw["own_double_to_cover"] += 1
    if table["open_double"] not in (None, me):
        saw["hanging_double"] += 1
    move = rng.choice(legal or msg["legal"])
    if move["train"] != me and move["train"] != "mexican" and table["marker"][move["train"]]:
        saw["marker_train_played"] += 1
    a, b = move["tile"]
    send({"type": "play", "tile": [b, a] if rng.random() < 0.5 else [a, b], "train": move["train"]})


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "mexican_train_reader", "protocol": 1})
    elif kind == "deal":
        on_deal(msg)
    elif kind == "placed":
        on_placed(msg)
    elif kind == "drew":
        on_drew(msg)
    elif kind == "passed":
        table["marker"][f"seat{msg['seat']}"] = True
        table["drawn"] = None
    elif kind == "turn":
        on_turn(msg)
    elif kind == "deal_end":
        left = sorted(tile(t) for t in msg["hands"][table["seat"]])
        if left != sorted(table["hand"]):
            mismatch("deal_end hand", left, sorted(table["hand"]))
        if msg["seat"] != table["last_placer"] or (msg["reason"] == "domino") != (msg["hands"][msg["seat"]] == []):
            mismatch("deal_end: the seat that went out, or the last that placed in a fish", [msg["reason"], msg["seat"]],
                     table["last_placer"])
        pips = [sum(map(sum, h)) for h in msg["hands"]]
        if msg["values"] != pips or msg["wrote"] != pips:
            mismatch("each seat writes its own pips", [msg["values"], msg["wrote"]], pips)
    elif kind == "match_end":
        break
print("SAW " + json.dumps(saw), file=sys.stderr, flush=True)
