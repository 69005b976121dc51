"""One judgement of a bot's line (issue 22): whatever a bot writes, the referee's log of it
verifies.  Hypothesis makes bots that write lines of every kind at some turn — plays legal and
not, with wrong turn ids, of no type or the referee's own types, nested deep, with huge or
fractional numbers, invalid UTF-8, duplicate keys, padding past 1 KiB and past ``max_line``,
several at once, late, or an exit — plays each in a real match, and ``verify`` must say
consistent.  In-process bots on trio's mock clock for many cases; real processes for fewer.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import messages as m
from referee.audit.verify import verify
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import first_legal, play_line, scripted
from referee.conversation.house import BotSource
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

ROOT = Path(__file__).resolve().parents[2]
LINE_BOT = Path(__file__).resolve().parents[1] / "fair_bots" / "line_bot.py"
MAX_LINE = 4096  # small, so that lines past it are cheap to make


def plays(legal: dict) -> st.SearchStrategy[dict]:
    """Plays built from a legal entry: itself, with a turn id, other fields, other tiles and ends."""
    return st.one_of(
        st.just({"type": "play", **legal}),
        st.builds(lambda t: {"type": "play", **legal, "turn": t}, st.one_of(st.integers(-3, 400), st.integers(2**53 - 2, 2**70))),
        st.builds(lambda e: {"type": "play", **legal, "end": e}, st.one_of(st.sampled_from(["left", "right", "up", "down", "nowhere"]),
                                                                           st.text(min_size=0, max_size=300))),
        st.builds(lambda t: {"type": "play", "tile": t, "end": legal.get("end")},
                  st.one_of(st.lists(st.integers(-1, 8), min_size=0, max_size=3), st.just("3-5"), st.just(None), st.floats(0, 6))),
        st.builds(lambda pad: {"type": "play", **legal, "pad": "x" * pad}, st.integers(0, 3 * MAX_LINE)),
        st.builds(lambda x: {"type": "play", **legal, "extra": x}, st.recursive(st.none() | st.integers() | st.text(max_size=5),
                                                                                 lambda c: st.lists(c, max_size=3), max_leaves=8)),
    )


def raw_lines(legal: dict) -> st.SearchStrategy[bytes]:
    kinds = st.sampled_from(["hello", "deal", "turn", "match_end", "note", "", "PLAY", "play "])
    return st.one_of(
        plays(legal).map(lambda d: json.dumps(d).encode()),
        plays(legal).map(lambda d: json.dumps(d, ensure_ascii=False).encode()),
        kinds.map(lambda k: json.dumps({"type": k, "n": 1}).encode()),
        st.just(b'{"n":1}'), st.just(b"[1,2]"), st.just(b"null"), st.just(b""), st.just(b"not json"),
        st.just(b'{"type":"play","tile":[1,2],"tile":[3,4],"end":"left"}'),
        st.just(b'{"type":"hello","name":"again","protocol":1}'),
        st.integers(1, 200).map(lambda d: b"[" * d + b"]" * d),
        st.integers(60, 70).map(lambda d: b'{"type":"note","x":' + b"[" * d + b"]" * d + b"}"),
        st.binary(max_size=40).map(lambda b: b'{"type":"play","end":"' + b.replace(b'"', b"").replace(b"\\", b"").replace(b"\n", b"") + b'"}'),
        st.just(b'{"type":"play","tile":[1,2],"end":"\xff\xfe"}'),
        st.integers(MAX_LINE - 100, MAX_LINE + 100).map(lambda n: b'{"type":"note","pad":"' + b"y" * n + b'"}'),
        st.binary(max_size=60).filter(lambda b: b"\n" not in b),
    )


@st.composite
def behaviours(draw) -> dict:
    """At which of its turns the bot misbehaves, and how: lines written before, in place of, or
    after its answer, how long it thinks, or an exit."""
    legal = draw(st.sampled_from([{"tile": [1, 2], "end": "left"}, {"tile": [0, 0], "end": None}, {"tile": [3, 6], "end": "right"}]))
    return {
        "turn": draw(st.integers(0, 6)),
        "before": draw(st.lists(raw_lines(legal), max_size=3)),
        "answer": draw(st.sampled_from(["legal", "none", "own"])),
        "own": draw(raw_lines(legal)),
        "after": draw(st.lists(raw_lines(legal), max_size=2)),
        "think": draw(st.sampled_from([0.0, 0.2, 0.49, 0.51, 2.0])),
        "exit": draw(st.booleans()),
        "unasked_at_deal": draw(st.lists(raw_lines(legal), max_size=2)),
    }


def script_of(b: dict):
    turns = [0]

    def script(msg: m.ToBotMessage):
        if type(msg) is m.DealStart and b["unasked_at_deal"]:
            return [(0.0, line) for line in b["unasked_at_deal"]]
        if type(msg) is not m.Turn:
            return list(first_legal(msg))
        k = turns[0]
        turns[0] += 1
        if k != b["turn"]:
            return [(0.0, play_line(msg.legal[0]))]
        out: list[tuple[float, bytes | None]] = [(0.0, line) for line in b["before"]]
        if b["answer"] == "legal":
            out.append((b["think"], play_line(msg.legal[0])))
        elif b["answer"] == "own":
            out.append((b["think"], b["own"]))
        out += [(0.0, line) for line in b["after"]]
        if b["exit"]:
            out.append((0.0, None))
        return out

    return script


def spec(tmp_path: Path, name: str) -> MatchSpec:
    v = variant("block")
    return MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], 2, v.resolve_options(2), games=1, seed=3,
                     tc=TimeControl(startup=5, move=0.5), max_line=MAX_LINE, max_faults=2, deal_limit=2,
                     log_path=tmp_path / f"{name}.jsonl", stderr_dir=tmp_path / f"{name}.stderr")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(b=behaviours())
@pytest.mark.slow
def test_whatever_an_in_process_bot_writes_the_log_verifies(tmp_path, b):
    launch, _ = scripted({"A": script_of(b)})
    s = spec(tmp_path, "scripted")
    trio.run(lambda: run_match(s, BotSource(launch), block=0, handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0))
    verify(s.log_path)  # raises Inconsistent where the referee and verify disagree


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(b=behaviours())
def test_whatever_a_bot_process_writes_the_log_verifies(tmp_path, b):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({k: ([base64.b64encode(x).decode() for x in v] if isinstance(v, list) else
                                    base64.b64encode(v).decode() if isinstance(v, bytes) else v) for k, v in b.items()}))
    s = spec(tmp_path, "process")
    s.bots[0] = Bot("A", [sys.executable, str(LINE_BOT), str(plan)])
    s.bots[1] = Bot("B", [sys.executable, str(ROOT / "sample_bots" / "first_bot.py")])
    trio.run(lambda: run_match(s, handle_signals=False))
    verify(s.log_path)
