"""Fuzzing with hypothesis: arbitrary bytes as a bot's lines, as deal files and as match logs
end in a fault charged to the bot or a one-line error, never an exception out of the referee.

The bot's lines go through the table's own line handling (a scripted in-process bot on trio's
mock clock, :mod:`referee.bots.transport`), so hundreds of conversations cost seconds.  League files
are fuzzed by tests/tournaments/test_league_hardening.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.commands import cli
from support.tables import FaultList, scripted_house

from protocol import messages as m
from referee.base import exitcodes as X
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import HELLO, first_legal, play_line, scripted
from referee.conversation import faults as F
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine import variant
from referee.engine.core.deal import deal_from_seed

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sample_bots"

#: Bytes a hostile bot might write: anything, with JSON's own characters and newlines common.
LINE_BYTES = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from([b"{", b"}", b"[", b"]", b'"', b":", b",", b"\\", b"\n", b"\r", b"\x00", b"\xff", b"\xc3",
                              b'"type"', b'"play"', b'"hello"', b'"tile"', b'"end"', b"null", b"1", b"-1", b"1e999",
                              b"[3,5]", b'"left"', b"true"]), max_size=80).map(b"".join),
    st.tuples(st.sampled_from([b'{"type":"play","x":', b'{"type":"hello","name":"x","protocol":1,"x":', b'{"type":"x","x":']),
              st.sampled_from([0, 3, 64, 65, 300, 1000, 3000])).map(lambda t: t[0] + b"[" * t[1] + b"]" * t[1] + b"}"),
)


def lines_of(data: bytes) -> list[bytes]:
    """What a pipe would deliver as lines: split at newlines, a CR before one dropped."""
    return [line[:-1] if line.endswith(b"\r") else line for line in data.split(b"\n")]


def converse(answers: list[bytes], where: str) -> tuple[list[F.Fault], MatchLog]:
    """A deal of two-player draw in which bot A answers ``hello`` or its second turn with the
    lines of ``answers`` (then, at a turn, its first legal play)."""
    turns = {"n": 0}

    def hostile(msg: m.ToBotMessage):
        if type(msg) is m.Hello and where == "hello":
            return [(0.0, line) for data in answers for line in lines_of(data)] + [(0.0, HELLO)]
        if type(msg) is m.Turn:
            turns["n"] += 1
            if where == "turn" and turns["n"] == 2:
                return [(0.0, line) for data in answers for line in lines_of(data)] + [(0.0, play_line(msg.legal[0]))]
        return list(first_legal(msg))

    watch = FaultList()
    faults = watch.faults
    log = MatchLog(None)

    async def main() -> None:
        launch, _ = scripted({"A": hostile})
        bots = [Entry(Bot("A", ["a"]), 0, TimeControl()), Entry(Bot("B", ["b"]), 1, TimeControl())]
        seating = [Player(bots[0], 0), Player(bots[1], 0)]
        game = variant("draw").new_game(2, {})
        async with trio.open_nursery() as nursery:
            table = Table(nursery, seating, log, scripted_house(launch, TimeControl(startup=5, move=5), Path("/nonexistent"), watch))
            try:
                await table.open()
            except Exception as exc:  # a bot that cannot start: the match's one error for it
                from referee.base.errors import BotStartError

                assert isinstance(exc, BotStartError), exc
                return
            try:
                for i in range(2):
                    await table.play_deal(game, seating, i, deal_from_seed(3, i, game.shape), Where(0))
            finally:
                await table.close()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return faults, log


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers=st.lists(LINE_BYTES, min_size=1, max_size=4), where=st.sampled_from(["turn", "hello"]))
def test_arbitrary_bytes_from_a_bot_are_a_fault_or_ignored(answers, where):
    faults, _ = converse(answers, where)
    for fault in faults:
        assert fault.kind in F.KINDS and fault.bot == "A", fault
        assert "\n" not in fault.detail
        assert fault.line is None or len(fault.line) <= F.EVIDENCE + 20


def assert_clean(result, codes: tuple[int, ...]) -> None:
    assert result.exit_code in codes, result.output
    if result.exit_code == X.USAGE:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output


#: A line that opens 3,000 arrays, deeper than Python's recursion limit.
DEEP_LINE = b'{"type":"play","x":' + b"[" * 3000 + b"]" * 3000 + b"}"


@pytest.mark.slow  # real matches through the command line, many times
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(LINE_BYTES, st.binary(max_size=2000)))
def test_arbitrary_deal_files_are_read_or_refused_in_one_line(tmp_path, data):
    path = tmp_path / "deals.jsonl"
    path.write_bytes(data)
    assert_clean(cli("deals", "show", path), (X.OK, X.USAGE))


@pytest.mark.slow  # real matches through the command line, many times
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(LINE_BYTES, st.binary(max_size=2000)))
@example(data=DEEP_LINE)  # json's parser recurses: found by hypothesis, now always tried
def test_arbitrary_logs_are_verified_or_refused_in_one_line(tmp_path, data):
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    assert_clean(cli("verify", path), (X.USAGE, X.INCONSISTENT))
    assert_clean(cli("replay", path), (X.OK, X.USAGE))


_LOG: list[bytes] = []


def real_log(tmp_path: Path) -> bytes:
    if not _LOG:
        log = tmp_path / "real.jsonl"
        played = cli("match", BOTS / "greedy_bot.py", BOTS / "random_bot.py", "--variant", "draw", "--log", log, "-q")
        assert played.exit_code == 0, played.output
        _LOG.append(log.read_bytes())
    return _LOG[0]


@pytest.mark.slow  # real matches through the command line, many times
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1), cut=st.integers(0, 200), insert=LINE_BYTES)
@example(where=0.0, cut=0, insert=DEEP_LINE)
def test_damaged_logs_are_found_out_in_one_line(tmp_path, where, cut, insert):
    """A real log with bytes replaced somewhere: verify says consistent only if the damage left
    a log the engine agrees with, else inconsistent, incomplete or not a log; never a traceback."""
    data = real_log(tmp_path)
    at = int(where * len(data))
    path = tmp_path / "log.jsonl"
    path.write_bytes(data[:at] + insert + data[at + cut:])
    assert_clean(cli("verify", path), (X.OK, X.USAGE, X.INCONSISTENT))
    assert_clean(cli("replay", path), (X.OK, X.USAGE))
    assert_clean(cli("report", path, "-O", tmp_path / "site"), (X.OK, X.USAGE))


@pytest.mark.slow  # real matches through the command line, many times
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 400), field=st.text(min_size=1, max_size=8), value=st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False), st.text(max_size=20),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)))
def test_a_record_with_a_field_changed_is_found_out_in_one_line_by_verify_replay_and_report(tmp_path, line, field, value):
    """A real log with one field of one record set to anything (or added): each of verify,
    replay and report answers in one line (verify: 4 when the log is well-formed but wrong),
    never a traceback."""
    records = [json.loads(x) for x in real_log(tmp_path).splitlines()]
    rec = records[line % len(records)]
    keys = [k for k in rec if k != "k"]
    rec[keys[sum(map(ord, field)) % len(keys)] if keys and not field.startswith("+") else field] = value
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert_clean(cli("verify", path), (X.OK, X.USAGE, X.INCONSISTENT))
    assert_clean(cli("replay", path), (X.OK, X.USAGE))
    assert_clean(cli("report", path, "-O", tmp_path / "site"), (X.OK, X.USAGE))


@pytest.mark.parametrize(("field", "value"), [("undealt", [{}]), ("undealt", 7), ("hands", [[{"a": 1}]]), ("hands", "x"),
                                              ("stream", "0"), ("deal", None), ("game", [])])
def test_a_deal_record_with_a_field_of_the_wrong_type_is_refused_in_one_line(tmp_path, field, value):
    """Found by the fuzzing above: a dict where a tile should be gave a traceback from verify."""
    records = [json.loads(line) for line in real_log(tmp_path).splitlines()]
    first = next(r for r in records if r["k"] == "deal")
    first[field] = value
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert_clean(cli("verify", path), (X.USAGE, X.INCONSISTENT))
    assert_clean(cli("replay", path), (X.OK, X.USAGE, X.INCONSISTENT))
