"""A bot that plays correctly (always ``legal[0]``, like sample_bots/first_bot.py) until the
moment it misbehaves, once per match.  Used by tests/conversation/test_faults.py.

    hostile.py BEHAVIOUR STATE_DIR [key=value ...]

STATE_DIR is shared by every process of one bot in one match (a pair game runs two at once,
and a faulting bot is restarted).  Files there:

``starts``   one line per process start: ``<start number> <pid>``.
``trigger``  written once, by the process that misbehaves, when it does: a JSON object with its
             ``seat``, ``game``, ``deal``, ``turn`` and ``pid``.
``child``    ``orphan`` only: the pid of the child it left behind.
             Created with O_EXCL, so only one process of the match ever misbehaves.

Options: ``deal=N`` (default 1): misbehave in the first deal whose ``deal_number`` is at least
N; ``turn=N`` (default 2): at the N-th turn of that deal, from 0, or later; ``last=1``: only
at a turn with one tile left in hand (its play ends the deal); ``every=1``: every process
misbehaves, not only the first one to get there; ``delay=S``: seconds for ``late``; ``start=N``
for the start-up behaviours: the process start (from 1) that misbehaves; ``mb=N`` for ``flood``.

Behaviours at the trigger turn (the turn is not answered unless said otherwise):
  silent        never answer (sleep)
  late          answer after ``delay`` seconds, then write a second play and touch ``late_written``
  garbage       write a line that is not JSON
  tile_string   a play whose tile is the string "3-5"
  huge          write a 10 MB line
  not_held      play a tile that is already on the table (nobody holds it)
  others_tile   play a tile neither in its hand nor on the table (sport: another player's)
  no_fit        play a tile of its hand that fits no open end
  wrong_end     play a legal tile on the end it does not match
  double_play   answer correctly, then write the same play again (out of turn)
  exit          write to stderr and exit with code 7
  orphan        start a child that inherits stdout and sleeps, then exit with code 5
  hang_noterm   (SIGTERM, SIGINT and SIGHUP ignored from the start) never answer
  no_read       fill its own stdin pipe (writing to /proc/PID/fd/0), answer correctly, and
                never read again; ``stdin_full`` holds the bytes it wrote
  deep          a play with an extra field nested 1,000 levels deep (2,046 bytes)
  deep_unknown  a line of an unknown type nested 1,000 levels deep, then the play
  deep_unasked  answer correctly, then write a line of unknown type nested 1,000 levels deep
  chatter       write ``lines`` lines (default 100) of an unknown type, ``size`` bytes each
                (default 100), then the play
  chatter_unasked  answer correctly, then write those lines, nobody having asked
Behaviours elsewhere:
  early_play    on ``deal`` (deal ≥ N, as the leader): write a play at once, before its turn
                comes; then answer the turn as usual
  flood         before its hello: write ``mb`` MB (default 256) to stderr
  protocol2     on process start ``start``: answer hello with protocol 2
  start_crash   on process start ``start``: write to stderr and exit 3 before hello
  start_garbage on process start ``start``: answer hello with a line that is not JSON
  start_silent  on process start ``start``: never answer hello
  start_deep    on process start ``start``: answer hello with a field nested 1,000 levels deep
  timeout_first every process: never answer its first turn (for max_faults)
Start-up behaviours combine with ``then=BEHAVIOUR`` (a trigger behaviour for the other starts).
"""

import json
import os
import signal
import subprocess
import sys
import time

behaviour, state = sys.argv[1], sys.argv[2]
opts = dict(arg.split("=", 1) for arg in sys.argv[3:])
DEAL = int(opts.get("deal", 1))
TURN = int(opts.get("turn", 2))
EVERY = opts.get("every") == "1"
START = int(opts.get("start", 2))
LAST = opts.get("last") == "1"

out = sys.stdout
stdin = sys.stdin.buffer

# -- which start is this? ----------------------------------------------------------------------
fd = os.open(os.path.join(state, "starts"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
os.write(fd, b"%d\n" % os.getpid())
os.close(fd)
with open(os.path.join(state, "starts")) as f:
    start_number = [int(x) for x in f.read().split()].index(os.getpid()) + 1

if behaviour.startswith(("start_", "protocol2")):
    startup = behaviour if start_number == START else None
    behaviour = opts.get("then", "exit") if start_number < START else "none"
else:
    startup = None

if behaviour == "hang_noterm":
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)


AT_TURN = {"silent", "late", "garbage", "tile_string", "huge", "not_held", "others_tile", "no_fit", "wrong_end",
           "double_play", "exit", "orphan", "hang_noterm", "no_read", "deep", "deep_unknown", "deep_unasked",
           "chatter", "chatter_unasked"}
DEEP = "[" * 1000 + "]" * 1000


def chatter():
    """Write ``lines`` lines of an unknown type, ``size`` bytes each (newline included)."""
    size = int(opts.get("size", 100))
    line = json.dumps({"type": "thinking", "pad": ""})
    line = line[:-2] + "x" * max(0, size - len(line) - 1) + '"}\n'
    for _ in range(int(opts.get("lines", 100))):
        out.write(line)


def send(message):
    out.write(json.dumps(message) + "\n")
    out.flush()


def claim(**info):
    """True for the one process of the match that misbehaves now (all of them with every=1)."""
    path = os.path.join(state, "trigger")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        if not EVERY:
            return False
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    os.write(fd, json.dumps({**where, **info, "pid": os.getpid()}).encode())
    os.close(fd)
    return True


def forever():
    while True:
        time.sleep(60)


def fits(tile, n):
    return n in tile


if behaviour == "flood":
    block = b"stderr flood " * 80000 + b"\n"  # about 1 MB
    for _ in range(int(opts.get("mb", 256))):
        os.write(2, block)

where = {}
placed = []
turns = 0
for raw in stdin:
    msg = json.loads(raw)
    kind = msg.get("type")
    if kind == "hello":
        if startup == "start_crash":
            print("hostile: cannot load my weights (start-up crash on purpose)", file=sys.stderr, flush=True)
            sys.exit(3)
        if startup == "start_silent":
            forever()
        if startup == "start_garbage":
            out.write("Hello, referee!\n")
            out.flush()
            continue
        if startup == "start_deep":
            out.write('{"type":"hello","name":"hostile","protocol":1,"x":' + DEEP + '}\n')
            out.flush()
            continue
        send({"type": "hello", "name": "hostile", "protocol": 2 if startup == "protocol2" else 1})
    elif kind == "deal":
        where = {"seat": msg["seat"], "game": msg["game_number"], "deal": msg["deal_number"]}
        placed = []
        turns = 0
        # As the leader (sport: any tile leads), so that the early play is a legal answer to
        # the turn that comes in the same batch, and the bot's own answer is the extra line.
        if behaviour == "early_play" and msg["deal_number"] >= DEAL and msg["leader"] == msg["seat"] and claim(turn=-1):
            send({"type": "play", "tile": msg["hand"][0], "end": None})
    elif kind == "placed":
        placed.append(sorted(msg["tile"]))
    elif kind == "turn":
        turn, turns = turns, turns + 1
        first = msg["legal"][0]
        answer = {"type": "play", "tile": first["tile"], "end": first["end"]}
        if behaviour == "early_play":
            # Echo the id: should this answer, the extra line, reach the referee only after its
            # next turn was written (a loaded machine), it still answers a turn not asked.
            answer["turn"] = msg["id"]
        if behaviour == "timeout_first":
            claim(turn=turn)
            forever()
        due = behaviour in AT_TURN and where.get("deal", -1) >= DEAL and turn >= TURN
        if LAST:  # only at a turn with one tile left: the play ends the deal
            due = due and len(msg["hand"]) == 1
        hand = [sorted(t) for t in msg["hand"]]
        ends = msg["ends"]
        legal_tiles = [sorted(p["tile"]) for p in msg["legal"]]
        # behaviours that need a particular position wait for one
        if behaviour == "not_held" and not placed:
            due = False
        if behaviour == "no_fit":
            unfit = [t for t in hand if not ends or not any(fits(t, v) for v in ends.values())]
            due = due and bool(ends) and bool(unfit)
        if behaviour == "wrong_end":
            one_sided = [p for p in msg["legal"] if p["end"] is not None
                         and not any(fits(p["tile"], v) for e, v in ends.items() if e != p["end"])]
            due = due and bool(one_sided)
        extra = {}
        if behaviour == "wrong_end" and due:
            p = one_sided[0]
            extra = {"tile": p["tile"], "end": next(e for e in ends if e != p["end"])}
        if not due or not claim(turn=turn, **extra):
            send(answer)
            continue
        if behaviour in ("silent", "hang_noterm"):
            forever()
        elif behaviour == "late":
            time.sleep(float(opts.get("delay", 1.5)))
            send(answer)
            send(answer)
            open(os.path.join(state, "late_written"), "w").close()
            forever()
        elif behaviour == "garbage":
            out.write("I think I will play the double six\n")
            out.flush()
        elif behaviour == "tile_string":
            send({"type": "play", "tile": "3-5", "end": first["end"]})
        elif behaviour == "huge":
            chunk = "x" * (1 << 20)
            out.write('{"type":"play","tile":"')
            for _ in range(10):
                out.write(chunk)
            out.write('"}\n')
            out.flush()
        elif behaviour == "not_held":
            send({"type": "play", "tile": placed[0], "end": "left"})
        elif behaviour == "others_tile":
            mine = hand + placed
            other = next([a, b] for a in range(7) for b in range(a, 7) if [a, b] not in mine)
            send({"type": "play", "tile": other, "end": "left"})
        elif behaviour == "no_fit":
            send({"type": "play", "tile": unfit[0], "end": "left"})
        elif behaviour == "wrong_end":
            send({"type": "play", "tile": extra["tile"], "end": extra["end"]})
        elif behaviour == "double_play":
            out.write((json.dumps(answer) + "\n") * 2)  # in one write: both lines arrive together
            out.flush()
        elif behaviour == "deep":
            out.write(json.dumps(answer)[:-1] + ', "eval": ' + DEEP + "}\n")
            out.flush()
        elif behaviour == "deep_unknown":
            out.write('{"type":"thinking","x":' + DEEP + "}\n" + json.dumps(answer) + "\n")
            out.flush()
        elif behaviour == "deep_unasked":
            out.write(json.dumps(answer) + "\n" + '{"type":"thinking","x":' + DEEP + "}\n")
            out.flush()
        elif behaviour == "chatter":
            chatter()
            send(answer)
        elif behaviour == "chatter_unasked":
            out.write(json.dumps(answer) + "\n")
            chatter()
            out.flush()
        elif behaviour == "exit":
            print("hostile: giving up in the middle of a deal", file=sys.stderr, flush=True)
            sys.exit(7)
        elif behaviour == "orphan":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            with open(os.path.join(state, "child"), "w") as f:
                f.write(str(child.pid))
            os._exit(5)
        elif behaviour == "no_read":
            # fill the pipe first, so that it is full by the time the referee next writes
            w = os.open(f"/proc/{os.getpid()}/fd/0", os.O_WRONLY | os.O_NONBLOCK)
            filled = 0
            try:
                while True:
                    filled += os.write(w, b"#" * 4096)
            except BlockingIOError:
                pass
            with open(os.path.join(state, "stdin_full"), "w") as f:
                f.write(str(filled))
            send(answer)
            forever()
        else:
            send(answer)
    elif kind == "match_end":
        break
