"""A bot with one flaw a bot author could well make, for tests/matches/test_check.py.

    flawed.py FLAW[+FLAW…]

Without a flaw (``ok``) it plays like sample_bots/first_bot.py: the first entry of ``turn.legal``,
as it is.  The flaws:

  ok             none
  unknown_type   before each play, writes a message of a type the referee does not know
  debug_print    before each play, prints a debugging line to stdout
  tile_string    writes its tile as a string, "3-5"
  illegal        plays its first tile on the left end, whatever the ends show
  crash_on_drew  dies with a KeyError when it sees a ``drew`` event (games with a bazaar)
  slow_once      takes 0.6 s over its first answer, then answers at once (``slow_once 1.8``: 1.8 s)
  late_once      takes 0.8 s over its first answer (``late_once 1.8``: 1.8 s)
  extra_line     writes a play after each ``deal_end``, when nothing was asked
  bye_line       writes a line on ``match_end`` before it exits, when nothing was asked
  protocol2      says it speaks protocol 2
  no_name        a hello without its "name" (a field missing, not a slow start)
  no_start       exits at start with a message on stderr
  no_exit        does not exit on ``match_end``
  banner         prints a banner line to stdout before it reads anything
  no_flush       never flushes stdout: its hello stays in its buffer
  markup_stderr  writes stderr lines that look like rich markup ("[perlbot] …", "[/INFO] …"),
                 then exits before its hello
  bad_declare    answers a fish decision (write off or decline, sea_kozel) with a tile instead
  no_declare     never declares: answers a hundred with its first plain lead, declines every fish
  crash_declare  exits (code 3) whenever a turn offers a declaration (a hundred, a fish to write off)
  markup_hello   a hello whose name and author look like rich markup; plays like ``ok``
  crash_second_deal  dies with a KeyError on the second ``deal`` message its process reads
  early_string   in a game's first three deals (``deal_number`` 0–2), writes its tile as a string
  late_crash     from a game's fourth deal on, exits (code 4) at its first turn of the deal

Flaws joined by ``+`` (``crash_second_deal+bad_declare``) are all the bot's.
"""

import json
import sys
import time

flaws = set((sys.argv[1] if len(sys.argv) > 1 else "ok").split("+"))
flaw = sys.argv[1] if len(sys.argv) > 1 else "ok"  # in its hello


if "no_start" in flaws:
    print("flawed: config file 'weights.bin' not found", file=sys.stderr, flush=True)
    sys.exit(2)
if "markup_stderr" in flaws:
    print("[perlbot] loading [bold]weights[/bold]", file=sys.stderr, flush=True)
    print("[/INFO] cannot go on", file=sys.stderr, flush=True)
    sys.exit(2)
if "banner" in flaws:
    print("flawed bot v2 -- ready", flush=True)
if "no_flush" in flaws:
    sys.stdout = open(1, "w", buffering=1 << 16, closefd=False)  # a pipe buffer, even with PYTHONUNBUFFERED


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    if "no_flush" not in flaws:
        sys.stdout.flush()


answered = 0
deals = 0
deal_number = 0  # the game's deal now played
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        if "no_flush" in flaws:
            print("flawed: got hello", file=sys.stderr, flush=True)
        if "markup_hello" in flaws:
            send({"type": "hello", "name": "[/INFO]", "author": "[red]me[/red]", "version": "[perlbot]", "protocol": 1})
        elif "no_name" in flaws:
            send({"type": "hello", "protocol": 1})
        else:
            send({"type": "hello", "name": f"flawed-{flaw}", "protocol": 2 if "protocol2" in flaws else 1})
    elif kind == "deal" and "crash_second_deal" in flaws and (deals := deals + 1) == 2:
        print(msg["state_of_the_game"])  # a KeyError: it expected a field the protocol does not have
    elif kind == "deal":
        deal_number = msg["deal_number"]
    elif kind == "drew" and "crash_on_drew" in flaws:
        print(msg["tiles_drawn"])  # a KeyError: the field is called "tiles"
    elif kind == "deal_end" and "extra_line" in flaws:
        send({"type": "play", "tile": [0, 0], "end": None})
    elif kind == "turn":
        first = msg["legal"][0]
        play = {"type": "play", **first}
        if "unknown_type" in flaws:
            send({"type": "thinking", "candidates": len(msg["legal"])})
        elif "debug_print" in flaws:
            print(f"my hand: {msg['hand']}", flush=True)
        elif "tile_string" in flaws or ("early_string" in flaws and deal_number < 3 and first["tile"] is not None):
            play["tile"] = "{}-{}".format(*first["tile"])
        elif "late_crash" in flaws and deal_number >= 3:
            sys.exit(4)
        elif "illegal" in flaws:
            play = {"type": "play", "tile": msg["hand"][0], "end": "left" if msg["ends"] else None}
        elif "crash_declare" in flaws and any(o.get("declare") for o in msg["legal"]):
            sys.exit(3)
        elif "bad_declare" in flaws and first.get("declare") in ("write_off", "decline"):
            play = {"type": "play", "tile": msg["hand"][0], "end": "left" if msg["ends"] else None}
        elif "no_declare" in flaws:
            play = {"type": "play", **next(o for o in msg["legal"] if o.get("declare") not in ("hundred", "write_off"))}
        elif flaws & {"slow_once", "late_once"} and answered == 0:
            time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0.6 if "slow_once" in flaws else 0.8)
        answered += 1
        send(play)
    elif kind == "match_end":
        if "bye_line" in flaws:
            send({"type": "play", "tile": [6, 6], "end": None})
        if "no_exit" in flaws:
            time.sleep(30)
        break
