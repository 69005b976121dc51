"""A seat's channel (referee/conversation/channel.py) on its own: scripted bots on trio's mock
clock, no table, no process; and the bytes the move's hot path makes without encoding a
message or a record (the turn line, the ``in`` and ``play`` records, the heard-line cache),
each held against what encoding the message or record gives."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest
import trio
from support import read_log

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.errors import BotExited
from referee.bots.bot import Bot
from referee.bots.transport import Script, ScriptedBot, first_legal, play_line, silent
from referee.conversation import faults as F
from referee.conversation import lines
from referee.conversation.channel import SILENT, STUCK, Answered, Channel, Gone, Late, Refused, Silent, Terms, Verdict
from referee.conversation.handmade import TurnLines, check_fields
from referee.conversation.lines import Line, hear, judge
from referee.conversation.log import MatchLog, play_record
from referee.conversation.players import Entry, Player
from referee.engine import variant, variant_names
from referee.engine.core.deal import deal_from_seed
from referee.engine.core.errors import BadDeal
from referee.records import records as R
from referee.sides import side_for
from referee.sides.base import GameSide

PLAY = b'{"type":"play","tile":[0,1],"end":"left"}'


def terms_of(tmp_path: Path, move: float = 1.0) -> Terms:
    return Terms(MatchLog(tmp_path / "log.jsonl"), TimeControl(move=move), trio.current_time(), block=0)


def logged(terms: Terms) -> list[dict]:
    terms.log.close()
    assert terms.log.path is not None
    return [rec for _, rec in read_log(terms.log.path)]


def channel_with(script: Script = silent) -> tuple[Channel, ScriptedBot]:
    ch = Channel()
    bot = ScriptedBot(script, "A")
    ch.proc = bot
    return ch, bot


def a_turn(turn_id: int = 1) -> bytes:
    return m.encode_line(m.Turn([m.PlayOption((0, 1), "left")], [(0, 1)], {}, [1, 1], 0, 1000, None, turn_id))


def judged(line: Line) -> Verdict:
    """The settle of a turn: a message ends it, a line of an unknown type is read past."""
    return None if line.judged.kind == lines.UNKNOWN else line.judged.msg


def unsettled(settled: list[Line]):  # noqa: ANN201 - a settle that must not be called
    def settle(line: Line) -> Verdict:
        settled.append(line)
        return None
    return settle


# -- ask ---------------------------------------------------------------------------------------------


async def test_ask_writes_the_outbox_and_the_turn_in_one_write_and_reads_the_answer_by_the_clock(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch, bot = channel_with()
    bot.expect(m.Passed).expect(m.Turn, (0.25, PLAY))
    ch.queue(m.encode_line(m.Passed(1)))
    writes: list[bytes] = []
    write = bot.write_nowait
    bot.write_nowait = lambda data: writes.append(data) or write(data)
    reply = await ch.ask(terms, 0, a_turn(), 1_000_000, judged)
    assert len(writes) == 1 and len(bot.received) == 2
    bot.assert_done()
    assert ch.outbox == []
    assert reply == Answered(hear(PLAY), judge(PLAY).msg, 250_000)  # exactly, on the mock clock
    out, inp = logged(terms)
    assert (out["k"], out["seat"], [x["type"] for x in out["msgs"]], out["t"]) == ("out", 0, ["passed", "turn"], 0.0)
    assert (inp["k"], inp["line"], inp["t"]) == ("in", PLAY.decode(), 0.25)


async def test_ask_reads_past_ignored_lines_to_the_answer(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch, bot = channel_with()
    bot.expect(m.Turn, b'{"type":"note"}', (0.5, b'{"type":"later"}'), (0.25, PLAY))
    reply = await ch.ask(terms, 1, a_turn(), 1_000_000, judged)
    bot.assert_done()
    assert isinstance(reply, Answered) and reply.line.raw == PLAY and reply.took == 750_000
    assert [r["k"] for r in logged(terms)] == ["out", "in", "in", "in"]


async def test_no_line_by_the_deadline_is_nothing_after_exactly_the_allowance(tmp_path, autojump_clock):
    """An answer thought over for 1.0 s against 0.5 s: the wait ends at the deadline, nothing is
    judged, and no later line is waited for."""
    terms = terms_of(tmp_path)
    ch, bot = channel_with()
    bot.expect(m.Turn, (1.0, PLAY))
    settled: list[Line] = []
    reply = await ch.ask(terms, 0, a_turn(), 500_000, unsettled(settled))
    assert reply is SILENT and isinstance(reply, Silent)
    assert trio.current_time() - terms.origin == pytest.approx(0.5) and settled == []


class SlowReferee(ScriptedBot):
    """A bot that answers at once, read by a referee whose clock says a second has gone by (a
    busy loop, or a replayed log's times): the answer is late by the referee's clock."""

    def __init__(self) -> None:
        super().__init__(silent, "S")
        self.expect(m.Turn, PLAY)
        self.readings = 0

    def now(self) -> float:
        self.readings += 1
        return trio.current_time() + (1.0 if self.readings > 1 else 0.0)


async def test_a_line_read_after_the_allowance_comes_back_unjudged(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch = Channel()
    ch.proc = SlowReferee()
    settled: list[Line] = []
    reply = await ch.ask(terms, 0, a_turn(), 500_000, unsettled(settled))
    assert reply == Late(hear(PLAY), 1_000_000, 0) and settled == []


async def test_allowance_zero_writes_nothing_at_once_and_reads_nothing(tmp_path, autojump_clock):
    """An empty bank: the turn is not written without waiting, and nothing is read in time."""
    terms = terms_of(tmp_path)
    ch, bot = channel_with(first_legal)
    bot._replies.append((0.0, PLAY))  # a line waiting all the same
    assert await ch.ask(terms, 0, a_turn(), 0, judged) is SILENT


async def test_a_bot_that_exits_instead_of_answering_is_gone_while_reading(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch, bot = channel_with()
    bot.expect(m.Turn, (0.1, None))
    with pytest.raises(Gone) as gone:
        await ch.ask(terms, 0, a_turn(), 1_000_000, judged)
    bot.assert_done()
    terms.log.close()
    assert gone.value.op == "read" and isinstance(gone.value.exited, BotExited)


class Pausing(ScriptedBot):
    """A transport that is told when its seat is asked and when it has answered: the seam a
    sandbox that freezes bots off turn plugs into."""

    def __init__(self, events: list[str]) -> None:
        super().__init__(silent, "P")
        self.events = events

    def resume(self) -> None:
        self.events.append("resume")

    def pause(self) -> None:
        self.events.append("pause")

    def write_nowait(self, data: bytes) -> int:
        self.events.append("write")
        return super().write_nowait(data)

    def line_within(self, seconds: float) -> bytes | None:
        line = super().line_within(seconds)
        if line is not None:
            self.events.append("read")
        return line

    async def read_line(self) -> bytes:
        line = await super().read_line()
        self.events.append("read")
        return line


@pytest.mark.parametrize(("replies", "allowance"), [
    ([(0.0, PLAY)], 1_000_000),  # at once
    ([(0.2, b'{"type":"note"}'), (0.2, PLAY)], 1_000_000),  # read past an ignored line, then the answer
    ([(2.0, PLAY)], 1_000_000),  # silent past the deadline
    ([(0.1, None)], 1_000_000),  # gone
])
async def test_ask_is_where_a_seat_is_resumed_and_paused(tmp_path, autojump_clock, replies, allowance):
    """Under strict isolation (the table sets ``strict`` on its channels)."""
    events: list[str] = []
    ch = Channel()
    ch.strict = True
    ch.proc = Pausing(events).expect(m.Turn, *replies)
    try:
        await ch.ask(terms_of(tmp_path), 0, a_turn(), allowance, judged)
    except Gone:
        pass
    assert events[0] == "resume" and events[1] == "write" and events[-1] == "pause"
    assert events.count("resume") == events.count("pause") == 1


async def test_without_strict_isolation_a_seat_is_neither_resumed_nor_paused(tmp_path, autojump_clock):
    events: list[str] = []
    ch = Channel()
    ch.proc = Pausing(events).expect(m.Turn, PLAY)
    reply = await ch.ask(terms_of(tmp_path), 0, a_turn(), 1_000_000, judged)
    assert isinstance(reply, Answered) and "resume" not in events and "pause" not in events


# -- deliver and what is said unasked -------------------------------------------------------------


async def test_deliver_writes_the_outbox_once_and_logs_it(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch, bot = channel_with()
    assert await ch.deliver(terms, 2) is None  # nothing waits: nothing written, nothing logged
    ch.queue(m.encode_line(m.Passed(0)))
    ch.queue(m.encode_line(m.MatchEnd()))
    assert await ch.deliver(terms, 2) is None
    assert [type(x) for x in bot.received] == [m.Passed, m.MatchEnd] and ch.outbox == []
    (out,) = logged(terms)
    assert (out["seat"], len(out["msgs"]), "stuck" in out) == (2, 2, False)


class FullPipe(ScriptedBot):
    """A bot that never reads: nothing can be written to it."""

    def write_nowait(self, data: bytes) -> int:
        return 0

    async def send(self, data: bytes) -> None:
        await trio.sleep_forever()


async def test_deliver_to_a_bot_that_does_not_read_is_stuck_after_a_moves_time(tmp_path, autojump_clock):
    terms = terms_of(tmp_path, move=2.0)
    ch = Channel()
    ch.proc = FullPipe(first_legal, "F")
    ch.queue(m.encode_line(m.Passed(0)))
    assert await ch.deliver(terms, 0) is STUCK
    assert trio.current_time() - terms.origin == pytest.approx(2.0)
    (out,) = logged(terms)
    assert out["stuck"] is True


async def test_deliver_to_a_bot_gone_says_so_and_logs_the_exit(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch, bot = channel_with(first_legal)
    bot.closed = True
    ch.queue(m.encode_line(m.Passed(0)))
    failure = await ch.deliver(terms, 0)
    assert isinstance(failure, BotExited) and failure.__traceback__ is None
    (out,) = logged(terms)
    assert out["exit"]["op"] == "write"


async def test_unasked_lines_are_heard_and_logged_one_by_one(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch, bot = channel_with(lambda msg: [(0.0, b'{"type":"note"}'), (0.0, PLAY)])
    bot.write_nowait(m.encode_line(m.Passed(0)))
    raws = ch.unasked()
    assert raws == [b'{"type":"note"}', PLAY]
    first = ch.hear(terms, 3, raws[0])
    assert first.judged.kind == lines.UNKNOWN
    (inp,) = logged(terms)  # only what was heard is logged: the play after it was not
    assert (inp["seat"], inp["line"]) == (3, '{"type":"note"}')


def test_a_player_has_its_seats_channel():
    p = Player(Entry(Bot("A", ["a"]), 0, TimeControl()), 0)
    assert not isinstance(p, Channel) and p.channel.proc is None and p.channel.outbox == []


async def test_a_fault_the_settle_makes_ends_the_turn_refused(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    ch, bot = channel_with()
    bot.expect(m.Turn, (0.1, b'{"type":"note"}'), (0.2, b"nonsense"))
    fault = F.Fault(F.BAD_OUTPUT, "A", 0, 0, 0, "not JSON")

    def settle(line: Line) -> Verdict:
        return fault if line.judged.kind == lines.BAD else None

    reply = await ch.ask(terms, 0, a_turn(), 1_000_000, settle)
    assert reply == Refused(hear(b"nonsense"), fault, 300_000)


# -- bytes made without encoding ----------------------------------------------------------------------


def playout_states(vid: str, seed: int, deals: int = 6):
    """The states of random playouts of ``vid`` (each yielded before its move)."""
    v = variant(vid)
    rng = random.Random(seed)
    for players in v.players:
        game = v.new_game(players, v.resolve_options(players, {}))
        started = 0
        for i in range(200):
            if started == deals or game.outcome() is not None:
                break
            try:
                state = game.start(deal_from_seed(seed, i, game.shape))
            except BadDeal:  # not this round's deal (mexican_train's station): the next one
                continue
            if state is None:
                continue
            started += 1
            while state.end is None:
                yield state
                state.push(rng.choice(state.legal_plays()))
            game.finish(state)


@pytest.mark.parametrize("vid", variant_names(refereed=True))
def test_the_turn_line_is_the_turn_message_encoded(vid):
    """Over playouts of every refereed game, at every turn: the line the referee sends is the
    encoding of the turn message, byte for byte, with and without a bank."""
    turns = 0
    lines = TurnLines()
    for k, state in enumerate(playout_states(vid, 5)):
        side: GameSide = side_for(state)
        bank = None if k % 2 else 1000 + k
        assert lines.line(side, state, 500 + k, bank, k + 1) == m.encode_line(side.turn_message(state, 500 + k, bank, k + 1))
        turns += 1
    assert turns > 50


def test_a_field_the_hand_built_lines_do_not_write_fails_at_import():
    """A field added to Turn (or to a log record built by hand) and not written by
    referee/conversation/handmade.py stops the referee from importing, naming the field."""
    code = ("import msgspec\n"
            "from protocol import messages as m\n"
            "class Turn(m.Turn, tag='turn'):\n"
            "    hint: int = 0\n"
            "m.Turn = Turn\n"
            "import referee.conversation.handmade\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 1
    assert "TypeError: the turn line builds __main__.Turn by hand" in run.stderr
    assert "does not write its field(s) hint" in run.stderr
    with pytest.raises(TypeError, match="does not write its field.s. wait"):
        check_fields(R.In, ("seat", "t", "line", "b64", "size", "evidence", "judged"), "a test")


def test_a_family_that_says_more_in_its_turns_says_so():
    """No method is swapped in behind a family's back: one that overrides turn_message says
    whether its turns may be built by hand."""
    with pytest.raises(TypeError, match="overrides turn_message"):
        type("Quiet", (GameSide,), {"turn_message": GameSide.turn_message})
    loud = type("Loud", (GameSide,), {"turn_message": GameSide.turn_message, "handmade_turn": False})
    assert loud.handmade_turn is False and GameSide.handmade_turn is True
    assert [side.handmade_turn for side in map(side_for_variant, ("mexican_train", "kolbasa", "kozel"))] == [False, False, True]


def side_for_variant(vid: str) -> GameSide:
    state = next(iter(playout_states(vid, 1)))
    return side_for(state)


async def test_each_table_has_turn_lines_of_its_own(tmp_path):
    one, two = terms_of(tmp_path), terms_of(tmp_path)
    assert one.turns is not two.turns
    one.log.close()
    two.log.close()


PLAYS = [b'{"type":"play","tile":[1,2],"end":"left"}', b'{"type":"play","tile":[2,1],"end":null}', b'{"type":"play","tile":null,"stop":true}',
         b'{"type":"play","tile":[6,6],"end":null,"declare":"hundred"}', b'{"type":"play","tile":[3,3],"end":"up","closed":true}',
         b'{"type":"play","tile":[1,6],"end":null,"train":"mexican"}', b'{"type":"play","tile":[2,4],"place":"top"}',
         b'{"type":"play","tile":[0,0],"end":"right","turn":7}', b'{"type":"play","tile":[0,"x"],"end":"\\u00e9"}']


@pytest.mark.parametrize("raw", PLAYS)
@pytest.mark.parametrize("elapsed", [0, 1, 999, 1000, 123_456, 86_400_000_000, None])
def test_the_play_record_is_its_struct_encoded(tmp_path, raw, elapsed):
    """MatchLog.play, cached or not, writes what encoding play_record's struct writes."""
    msg = hear(raw).judged.msg
    if not isinstance(msg, m.Play):
        pytest.skip("not a play")
    got: list[bytes] = []
    log = MatchLog(None, sink=got.append)
    for seat in (0, 3, 0):  # the second time for seat 0 comes from what was cached
        log.play(seat, msg, elapsed, "1-2 on the left")
        assert got[-1] == R.encode(play_record(seat, msg, elapsed, "1-2 on the left"))
    log.play(0, msg, elapsed, "another text")  # the same play moved otherwise: not the cached bytes
    assert got[-1] == R.encode(play_record(0, msg, elapsed, "another text"))


def test_a_watched_log_hands_the_play_record_to_its_watcher():
    seen: list[R.Record] = []
    log = MatchLog(None, on_record=seen.append, sink=lambda b: None)
    msg = hear(PLAYS[0]).judged.msg
    assert isinstance(msg, m.Play)
    log.play(1, msg, 2000, "1-2 on the left")
    assert seen == [play_record(1, msg, 2000, "1-2 on the left")]


@pytest.mark.parametrize("raw", [PLAY, b"not json", b'{"type":"note"}', "{\"type\":\"play\",\"tile\":[1,2],\"end\":\"é\"}".encode(),
                                 b'{"type":"play","end":"\xff"}', b"x" * 2000, b"[" * 100])
def test_the_in_record_is_what_the_record_encodes(raw):
    """MatchLog.inp, first and once the line keeps its logged bytes, writes an ``in`` record that
    decodes to the line as lines.heard keeps it."""
    got: list[bytes] = []
    log = MatchLog(None, sink=got.append)
    line = hear(raw)
    log.inp(2, line, 1_500_000)
    log.inp(2, line, 1_500_000)
    assert got[0] == got[1]
    rec = msgspec.json.decode(got[0], type=R.Record)
    assert isinstance(rec, R.In) and rec.seat == 2 and rec.t == 1.5
    assert lines.from_record(rec) == line


def test_a_line_is_judged_once_and_long_or_many_lines_are_not_kept():
    a = hear(PLAY)
    assert hear(bytes(PLAY)) is a and a.judged == judge(PLAY)
    long = b'{"type":"play","tile":[1,2],"end":"' + b"l" * 300 + b'"}'
    assert hear(long) is not hear(long) and hear(long) == hear(long)
    lines._HEARD.clear()
    for i in range(lines.HEARD_LINES + 10):
        hear(b'{"type":"note","n":%d}' % i)
    assert len(lines._HEARD) == lines.HEARD_LINES


def test_first_legal_answers_what_the_turn_line_offers():
    """The scripted bot reads the turn line as a bot would (a decode of the bytes sent)."""
    state = next(playout_states("draw", 2))
    side = side_for(state)
    msg = m.to_bot_decoder.decode(side.turn_line(state, 100, None, 1))
    assert isinstance(msg, m.Turn)
    replies: Sequence[tuple[float, bytes | None]] = first_legal(msg)
    assert replies == [(0.0, play_line(msg.legal[0]))]


# -- the scripted bot's expectations (python-chess's MockTransport) ---------------------------------


async def test_a_scripted_bot_answers_what_it_expects_in_order_and_says_what_it_was_never_sent(autojump_clock):
    bot = ScriptedBot(silent, "E").expect(m.Passed(1), b"one").expect(m.Turn, (0.5, lambda msg: play_line(msg.legal[0])))
    bot.write_nowait(m.encode_line(m.Passed(0)))  # not the expected passed: the script's (silent)
    bot.write_nowait(m.encode_line(m.Passed(1)))
    assert await bot.read_line() == b"one"
    with pytest.raises(AssertionError, match=r"bot 'E' was never sent Turn \(it was sent: Passed, Passed\)"):
        bot.assert_done()
    bot.write_nowait(a_turn())
    assert bot.line_within(0) is None  # thinking
    assert await bot.read_line() == PLAY and trio.current_time() == pytest.approx(0.5)
    bot.assert_done()


async def test_an_expected_exit_ends_the_scripted_bot(autojump_clock):
    bot = ScriptedBot(first_legal, "X").expect(lambda msg: type(msg) is m.Turn and msg.id == 2, None)
    bot.write_nowait(a_turn(1))  # not the one expected: the script plays
    assert await bot.read_line() == PLAY
    bot.write_nowait(a_turn(2))
    with pytest.raises(BotExited):
        await bot.read_line()
    assert bot.closed and bot.returncode == 0
    bot.assert_done()
