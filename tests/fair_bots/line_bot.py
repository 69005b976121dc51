"""A bot that misbehaves as a plan says (tests/audit/test_verify_agrees.py): at its turn number
``turn`` it writes the ``before`` lines, then after ``think`` seconds its answer (its first
legal play, nothing, or the ``own`` line), then the ``after`` lines, and exits if ``exit``; on
every ``deal`` it writes the ``unasked_at_deal`` lines.  Lines are raw bytes, base64 in the plan.

    line_bot.py PLAN.json
"""

import base64
import json
import os
import sys
import time

plan = json.load(open(sys.argv[1]))
out = sys.stdout.buffer


def raw(value):
    return base64.b64decode(value)


def write(lines):
    for line in lines:
        out.write(line + b"\n")
    out.flush()


turns = 0
for line in sys.stdin.buffer:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        write([b'{"type":"hello","name":"lines","protocol":1}'])
    elif kind == "deal":
        write([raw(x) for x in plan["unasked_at_deal"]])
    elif kind == "turn":
        play = json.dumps({"type": "play", **msg["legal"][0]}).encode()
        if turns == plan["turn"]:
            write([raw(x) for x in plan["before"]])
            time.sleep(plan["think"])
            if plan["answer"] == "legal":
                write([play])
            elif plan["answer"] == "own":
                write([raw(plan["own"])])
            write([raw(x) for x in plan["after"]])
            if plan["exit"]:
                os._exit(0)
        else:
            write([play])
        turns += 1
    elif kind == "match_end":
        break
