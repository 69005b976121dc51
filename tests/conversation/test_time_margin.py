"""The time margin (``--time-margin``, cutechess-cli's and fastchess's ``timemargin``; PROTOCOL.md,
"Limits"): a line read late by no more than the margin is accepted, its overrun logged with the
play (``over``) and charged like any time used (to the bank, where there is one); a line later
than that is a timeout; the header records the margin, and ``verify`` agrees with both, and with
neither once the log is edited.  Scripted bots on trio's mock clock: the thinking times are exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
import trio.testing
from support.commands import cli

from protocol import messages as m
from referee.audit.verify import Inconsistent, verify
from referee.base import exitcodes as X
from referee.base.clock import Clock, TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import Script, ScriptedBot, first_legal, play_line, scripted
from referee.conversation import faults as F
from referee.conversation.exchange import At, Terms, turn
from referee.conversation.house import BotSource
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.engine import variant
from referee.engine.core.deal import deal_from_seed
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.records import records as R
from referee.sides import side_for


def late_at(turn_index: int, seconds: float) -> Script:
    """Answers every turn at once with its first legal play, but its ``turn_index``-th (from 0)
    after thinking ``seconds``."""
    seen = [0]

    def script(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        if type(msg) is m.Turn:
            seen[0] += 1
            return [(seconds if seen[0] - 1 == turn_index else 0.0, play_line(msg.legal[0]))]
        return list(first_legal(msg))

    return script


def seat_with(script: Script, tc: TimeControl) -> tuple[Player, ScriptedBot]:
    bot = ScriptedBot(script, "A")
    p = Player(Entry(Bot("A", ["a"]), 0, tc), 0)
    p.channel.proc = bot
    return p, bot


async def one_turn(tmp_path: Path, tc: TimeControl, think: float) -> tuple[F.Fault | None, Player, list[dict]]:
    """One turn of a two-player draw deal answered after ``think`` seconds: the fault, the
    player and the log's records."""
    log = MatchLog(tmp_path / "turn.jsonl")
    terms = Terms(log, tc, trio.current_time(), block=0)
    game = variant("draw").new_game(2, {})
    state = game.start(deal_from_seed(3, 0, game.shape))
    assert state is not None
    p, _ = seat_with(late_at(0, think), tc)
    fault = await turn(terms, p, At(state.to_move(), 0, 0), state, side_for(state), 1)
    log.close()
    return fault, p, [json.loads(line) for line in (tmp_path / "turn.jsonl").read_bytes().splitlines()]


async def test_a_line_late_by_less_than_the_margin_is_accepted_and_the_overrun_logged(tmp_path, autojump_clock):
    fault, p, records = await one_turn(tmp_path, TimeControl(move=0.5, margin=0.05), 0.52)
    assert fault is None
    play = records[-1]
    assert (play["k"], play["ms"], play["over"]) == ("play", 520.0, 20.0)
    assert p.entry.clock.used == 520_000 and p.entry.clock.longest == 520_000  # charged the whole time


async def test_a_line_on_time_logs_no_overrun(tmp_path, autojump_clock):
    fault, _, records = await one_turn(tmp_path, TimeControl(move=0.5, margin=0.05), 0.5)
    assert fault is None and records[-1]["k"] == "play" and "over" not in records[-1]


async def test_a_line_late_by_more_than_the_margin_is_a_timeout(tmp_path, autojump_clock):
    fault, p, records = await one_turn(tmp_path, TimeControl(move=0.5, margin=0.05), 0.56)
    assert fault is not None and (fault.kind, fault.detail, fault.hint) == (F.TIMEOUT, "no play within 500 ms (and the margin of 50 ms)", F.LATE)
    assert not any(r["k"] == "play" for r in records)
    assert p.entry.clock.used == 500_000


async def test_without_a_margin_a_line_late_by_a_millisecond_is_a_timeout(tmp_path, autojump_clock):
    fault, _, _ = await one_turn(tmp_path, TimeControl(move=0.5), 0.501)
    assert fault is not None and (fault.kind, fault.detail) == (F.TIMEOUT, "no play within 500 ms")


def test_the_overrun_is_charged_to_the_bank_and_a_spent_bank_has_no_margin():
    clock = Clock(TimeControl(move=2, bank=1.0, margin=0.05))
    assert (clock.allowance(), clock.limit(clock.allowance())) == (1_000_000, 1_050_000)
    clock.charge(1_030_000)  # 30 ms late, within the margin
    assert clock.bank == -30_000 and clock.allowance() == 0
    assert clock.limit(clock.allowance()) == 0  # nothing left to be late against: the margin is no free time


def match_spec(tmp_path: Path, name: str, margin: float, bank: float | None = None) -> MatchSpec:
    v = variant("block")
    return MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], 2, v.resolve_options(2), games=1, seed=3,
                     tc=TimeControl(startup=5, move=0.5, bank=bank, margin=margin), max_faults=2, deal_limit=2,
                     log_path=tmp_path / f"{name}.jsonl", stderr_dir=tmp_path / f"{name}.stderr")


def play_match(spec: MatchSpec, script: Script) -> list[bytes]:
    launch, _ = scripted({"A": script})
    trio.run(lambda: run_match(spec, BotSource(launch), block=0, handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0))
    assert spec.log_path is not None
    return spec.log_path.read_bytes().splitlines(keepends=True)


def records_of(lines: list[bytes]) -> list[dict]:
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("bank", [None, 20.0])
def test_a_match_with_margin_accepted_late_lines_verifies_and_its_header_has_the_margin(tmp_path, bank):
    lines = play_match(match_spec(tmp_path, "late", 0.05, bank), late_at(2, 0.53))
    recs = records_of(lines)
    assert recs[0]["time_control"]["margin"] == 0.05
    late = [r for r in recs if r["k"] == "play" and "over" in r]
    assert [r["over"] for r in late] == [30.0] and not any(r["k"] == "fault" for r in recs)
    if bank is not None:  # the next turn's bank says the overrun was charged: 20 s less 530 ms
        turns = [msg for r in recs if r["k"] == "out" and r["seat"] >= 0 for msg in r["msgs"] if msg["type"] == "turn"]
        banks = [t["bank_ms"] for t in turns]
        assert 19470 in banks
    assert verify(tmp_path / "late.jsonl").faults == 0


def test_a_match_with_a_line_later_than_the_margin_verifies_with_its_timeout(tmp_path):
    recs = records_of(play_match(match_spec(tmp_path, "timeout", 0.05), late_at(2, 0.6)))
    faults = [r for r in recs if r["k"] == "fault"]
    assert [(f["kind"], f["detail"]) for f in faults] == [("timeout", "no play within 500 ms (and the margin of 50 ms)")]
    assert verify(tmp_path / "timeout.jsonl").faults == 1


def edited(lines: list[bytes], path: Path, edit) -> Path:
    recs = records_of(lines)
    edit(recs)
    path.write_bytes(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in recs))
    return path


def late_in_record(recs: list[dict]) -> dict:
    """The ``in`` record of the line accepted within the margin (the one before its play)."""
    k = next(i for i, r in enumerate(recs) if r["k"] == "play" and "over" in r)
    return next(r for r in reversed(recs[:k]) if r["k"] == "in")


@pytest.mark.parametrize("what", ["later than the margin", "no margin in the header", "a smaller margin", "the overrun changed",
                                  "the overrun removed", "an overrun on time"])
def test_a_tampered_log_with_a_margin_does_not_verify(tmp_path, what):
    lines = play_match(match_spec(tmp_path, "late", 0.05), late_at(2, 0.53))

    def edit(recs: list[dict]) -> None:
        if what == "later than the margin":
            late_in_record(recs)["t"] = round(late_in_record(recs)["t"] + 0.03, 6)  # 60 ms late
        elif what == "no margin in the header":
            del recs[0]["time_control"]["margin"]
        elif what == "a smaller margin":
            recs[0]["time_control"]["margin"] = 0.02
        elif what == "the overrun changed":
            next(r for r in recs if r["k"] == "play" and "over" in r)["over"] = 3.0
        elif what == "the overrun removed":
            del next(r for r in recs if r["k"] == "play" and "over" in r)["over"]
        else:
            next(r for r in recs if r["k"] == "play" and "over" not in r)["over"] = 1.0

    path = edited(lines, tmp_path / "edited.jsonl", edit)
    with pytest.raises(Inconsistent):
        verify(path)


@pytest.mark.parametrize("value", ["-1", "nan", "1e9"])
def test_a_bad_time_margin_is_refused_in_one_line(tmp_path, value):
    for command in (["match", "a.py", "b.py", "--log", tmp_path / "m.jsonl"], ["check", "a.py", "--log-dir", tmp_path / "c"]):
        result = cli(*command, "--time-margin", value)
        text = result.stderr.strip()
        assert result.exit_code == X.USAGE and len(text.splitlines()) == 1 and "--time-margin" in text, result.output


def test_a_header_without_a_margin_decodes_as_none_and_is_written_without_one():
    tc = R.TimeControlRecord(10.0, 5.0, None, 0.0)
    assert b"margin" not in R._encoder.encode(tc)
    assert msgspec_decode(b'{"startup":10.0,"move":5.0,"bank":null,"increment":0.0}').margin is None


def msgspec_decode(raw: bytes) -> R.TimeControlRecord:
    import msgspec

    return msgspec.json.decode(raw, type=R.TimeControlRecord)
