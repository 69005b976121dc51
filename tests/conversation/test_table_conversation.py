"""The table's conversation with bots, without processes: scripted in-process bots
(:mod:`referee.bots.transport`) on trio's mock clock, so thinking times are exact and cost no real
time.  The time bank and the increment are read back from the very ``turn`` messages the table
sent, and the faults from what the table recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from support import read_log
from support.tables import FaultList, scripted_house

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.errors import BotStartError
from referee.bots.bot import Bot
from referee.bots.transport import HELLO, Script, ScriptedBot, first_legal, play_line, scripted, silent
from referee.conversation import faults as F
from referee.conversation.exchange import UNKNOWN_PER_MOVE, At, Terms, deliver, handshake, queue_events, turn
from referee.conversation.house import TableWatch
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine import variant
from referee.engine.core.deal import deal_from_seed
from referee.engine.core.line import Drew
from referee.engine.core.state import DealState
from referee.records import records as R
from referee.sides import side_for
from referee.sides.base import GameSide


def thinking(seconds: float) -> Script:
    """Greets at once, then thinks ``seconds`` over every turn and plays its first legal play."""

    def script(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        if type(msg) is m.Turn:
            return [(seconds, play_line(msg.legal[0]))]
        return list(first_legal(msg))

    return script


async def play(tmp_path: Path, scripts: dict[str, Script], tc: TimeControl, deals: int = 1,
               max_faults: int = 3) -> tuple[list[Entry], dict[str, list[ScriptedBot]], list[F.Fault]]:
    """Play ``deals`` deals of two-player draw, A against B, with scripted bots; their entries
    (faults, clocks), the bots started by label, and the faults."""
    launch, started = scripted(scripts)
    bots = [Entry(Bot("A", ["a"]), 0, tc), Entry(Bot("B", ["b"]), 1, tc)]
    seating = [Player(bots[0], 0), Player(bots[1], 0)]
    game = variant("draw").new_game(2, {})
    watch = FaultList()
    faults = watch.faults
    try:
        async with trio.open_nursery() as nursery:
            table = Table(nursery, seating, MatchLog(None), scripted_house(launch, tc, tmp_path, watch, max_faults=max_faults))
            await table.open()
            try:
                for i in range(deals):
                    await table.play_deal(game, seating, i, deal_from_seed(3, i, game.shape), Where(0))
            finally:
                await table.close()
    except BaseExceptionGroup as group:  # the nursery's wrapping of the table's one error
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return bots, started, faults


def turns(bot: ScriptedBot) -> list[m.Turn]:
    return [msg for msg in bot.received if type(msg) is m.Turn]


async def test_the_bank_gains_the_increment_after_every_move(tmp_path, autojump_clock):
    """Bank 1 s, increment 0.25 s, 0.125 s per move: each turn offers 125 ms more than the last,
    never more than the move limit; the clock ends where the sums say."""
    tc = TimeControl(startup=5, move=2, bank=1.0, increment=0.25)
    bots, started, faults = await play(tmp_path, {"A": thinking(0.125)}, tc, deals=3)
    assert faults == []
    seen = turns(started["A"][0])
    assert len(seen) >= 10
    banks = [1000 + 125 * k for k in range(len(seen))]
    assert [t.bank_ms for t in seen] == banks
    assert [t.time_ms for t in seen] == [min(2000, b) for b in banks]
    clock = bots[0].clock  # in microseconds
    assert clock.moves == len(seen)
    assert clock.bank == 1_000_000 + 125_000 * len(seen)
    assert clock.used == 125_000 * len(seen) and clock.longest == 125_000
    # B answers at once: its bank only grows, by the whole increment.
    assert [t.bank_ms for t in turns(started["B"][0])][:3] == [1000, 1250, 1500]


async def test_a_bank_spent_below_the_thinking_time_is_a_timeout(tmp_path, autojump_clock):
    """0.5 s a move against a 0.125 s increment drains a 1 s bank by 375 ms a move: the third
    turn offers 250 ms, the bot is still thinking when they run out, and the fault says so."""
    tc = TimeControl(startup=5, move=2, bank=1.0, increment=0.125)
    bots, started, faults = await play(tmp_path, {"A": thinking(0.5)}, tc, deals=3, max_faults=1)
    seen = turns(started["A"][0])
    assert [(t.bank_ms, t.time_ms) for t in seen] == [(1000, 1000), (625, 625), (250, 250)]
    assert [(f.kind, f.bot, f.detail) for f in faults] == [(F.TIMEOUT, "A", "no play within 250 ms")]
    assert bots[0].forfeited
    assert bots[0].clock.bank == 125_000  # charged the 250 ms it had


async def test_an_answer_later_than_the_move_limit_is_a_timeout(tmp_path, autojump_clock):
    """Without a bank a move has the move limit: 1.5 s against 1 s faults, charged 1 s."""
    tc = TimeControl(startup=5, move=1.0)
    bots, _, faults = await play(tmp_path, {"A": thinking(1.5)}, tc, max_faults=1)
    assert [(f.kind, f.detail, f.hint) for f in faults] == [(F.TIMEOUT, "no play within 1000 ms", F.LATE)]
    assert bots[0].clock.longest == 1_000_000


async def test_an_answer_just_inside_the_limit_counts(tmp_path, autojump_clock):
    tc = TimeControl(startup=5, move=1.0)
    bots, _, faults = await play(tmp_path, {"A": thinking(0.999)}, tc)
    assert faults == []
    assert bots[0].clock.longest == 999_000


async def test_the_handshake_refuses_another_protocol(tmp_path, autojump_clock):
    def other_protocol(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        return [(0.0, HELLO.replace(b'"protocol":1', b'"protocol":99'))] if type(msg) is m.Hello else []

    with pytest.raises(BotStartError, match="speaks protocol 99; this referee speaks 1"):
        await play(tmp_path, {"B": other_protocol}, TimeControl())


async def test_a_silent_bot_misses_the_start_up_limit_in_no_real_time(tmp_path, autojump_clock):
    start = trio.current_time()
    with pytest.raises(BotStartError, match="no hello within the start-up limit of 30 s, although it read the referee's hello"):
        await play(tmp_path, {"A": lambda msg: []}, TimeControl(startup=30))
    assert trio.current_time() - start == pytest.approx(30)


async def test_the_conversation_of_a_deal(tmp_path, autojump_clock):
    """Each bot hears hello, the deal, what happened (events ride on its next turn), the deal's
    end, and match_end when the table closes."""
    _, started, _ = await play(tmp_path, {}, TimeControl())
    for label in ("A", "B"):
        kinds = [type(msg).__name__ for msg in started[label][0].received]
        assert kinds[:2] == ["Hello", "DealStart"] and kinds[-2:] == ["DealEnd", "MatchEnd"]
        assert "Turn" in kinds
        assert started[label][0].closed


async def test_a_bot_that_exits_mid_deal_crashes_and_a_fresh_one_takes_the_seat(tmp_path, autojump_clock):
    def exits_on_first_turn(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        return [(0.0, None)] if type(msg) is m.Turn else list(first_legal(msg))

    _, started, faults = await play(tmp_path, {"A": exits_on_first_turn}, TimeControl(), deals=2)
    assert [f.kind for f in faults][:1] == [F.CRASH]
    assert len(started["A"]) >= 2  # started again for the next deal


async def test_a_game_past_its_deal_limit_ends_drawn_and_every_bot_hears_why(tmp_path, autojump_clock):
    """``Game.deal_limit`` (what ``referee check`` sets to keep its games short): a game to a
    target ends drawn after that many deals, and every bot hears why.  The log's observer sees
    every record as it is written, and the table's sees the processes it closed."""
    launch, started = scripted({})
    seating = [Player(Entry(Bot("A", ["a"]), 0, TimeControl()), 0), Player(Entry(Bot("B", ["b"]), 1, TimeControl()), 0)]
    game = variant("draw").new_game(2, {})
    game.deal_limit = 2
    records: list[R.Record] = []
    closed: list[str] = []
    stream = iter(range(100))

    def next_deal() -> tuple[int, object]:
        i = next(stream)
        return i, deal_from_seed(3, i, game.shape)

    async with trio.open_nursery() as nursery:
        class Closed(TableWatch):
            def closed(self, player, proc, unread):
                closed.append(player.label)

        table = Table(nursery, seating, MatchLog(None, on_record=records.append),
                      scripted_house(launch, TimeControl(), tmp_path, Closed()))
        await table.open()
        try:
            outcome = await table.play_game(game, seating, next_deal, Where(0))
        finally:
            await table.close()
    assert game.played == 2 and game.outcome() == outcome
    assert (outcome.winners, outcome.losers, outcome.reason) == ((), (), "deal limit (2) reached")
    for bot in (started["A"][0], started["B"][0]):
        ends = [msg for msg in bot.received if type(msg) is m.GameEnd]
        assert [e.reason for e in ends] == ["deal limit (2) reached"]
    kinds = [r.__struct_config__.tag for r in records]
    assert kinds.count("hello") == 2 and kinds.count("deal_end") == 2 and kinds[-1] == "game_end"
    assert "play" in kinds
    assert sorted(closed) == ["A", "B"]


def test_each_exchange_takes_its_seat_game_and_deal_as_arguments():
    """No exchange reads a 'current seat/game/deal': the handshake, the turn, the unasked output
    and the deal's end each get an ``At`` (so two tables, or two deals, can never write each
    other's coordinates into a fault), and the table keeps no such fields either."""
    import inspect

    from referee.conversation import exchange
    for fn in (exchange.handshake, exchange.silent_start, exchange.turn, exchange.unasked, exchange.answer,
               exchange.deliver, exchange.new_fault):
        assert "at" in inspect.signature(fn).parameters, fn.__name__
    assert "self" not in inspect.getsource(exchange)
    source = inspect.getsource(Table)
    for field in ("self.seat", "self.game_number", "self.deal_number"):
        assert field not in source
    assert At(2, 1, 3).deal == 3


# -- each exchange on its own: no table, no process ---------------------------------------------


def seat_with(script: Script, tc: TimeControl | None = None) -> tuple[Player, ScriptedBot]:
    """A player in a seat, its bot already started (scripted), its clock set."""
    p = Player(Entry(Bot("A", ["a"]), 0, tc or TimeControl()), 0)
    bot = ScriptedBot(script, "A")
    p.channel.proc = bot
    return p, bot


def terms_of(tmp_path: Path, tc: TimeControl | None = None) -> Terms:
    return Terms(MatchLog(tmp_path / "log.jsonl"), tc or TimeControl(), trio.current_time(), block=0)


def records(terms: Terms) -> list[dict]:
    terms.log.close()
    assert terms.log.path is not None
    return [rec for _, rec in read_log(terms.log.path)]


def draw_deal() -> tuple[DealState, GameSide]:
    game = variant("draw").new_game(2, {})
    state = game.start(deal_from_seed(3, 0, game.shape))
    assert state is not None
    return state, side_for(state)


def answering(*replies: tuple[float, bytes | None]) -> Script:
    """Greets, then answers the first turn with ``replies`` (then its first legal play)."""
    left = [list(replies)]

    def script(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        if type(msg) is m.Turn and left:
            return left.pop()
        return list(first_legal(msg))

    return script


async def test_a_turn_sends_what_waits_reads_the_play_and_makes_it(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    state, wire = draw_deal()
    seat = state.to_move()
    p, bot = seat_with(thinking(0.25))
    p.channel.outbox = [m.encode_line(m.Passed(1))]  # an event waiting for the seat rides on the turn
    before = len(state.history)
    assert await turn(terms, p, At(seat, 4, 7), state, wire, 12) is None
    assert [type(msg) for msg in bot.received] == [m.Passed, m.Turn]
    assert bot.received[1].id == 12
    assert len(state.history) > before and p.channel.outbox == []
    assert p.entry.clock.used == 250_000
    out, inp, play_rec = records(terms)
    assert (out["k"], out["seat"], [msg["type"] for msg in out["msgs"]]) == ("out", seat, ["passed", "turn"])
    assert (inp["k"], inp["line"]) == ("in", bot_line(bot, 0))
    assert (play_rec["k"], play_rec["seat"], play_rec["ms"]) == ("play", seat, 250.0)


def bot_line(bot: ScriptedBot, turn_index: int) -> str:
    """The play line the scripted bot answered its ``turn_index``-th turn with (first legal)."""
    t = [msg for msg in bot.received if type(msg) is m.Turn][turn_index]
    return play_line(t.legal[0]).decode()


async def test_a_turn_answered_after_the_deadline_is_a_timeout_by_the_referees_clock(tmp_path, autojump_clock):
    tc = TimeControl(move=0.5)
    terms = terms_of(tmp_path, tc)
    state, wire = draw_deal()
    seat = state.to_move()
    p, _ = seat_with(thinking(0.75), tc)
    fault = await turn(terms, p, At(seat, 0, 2), state, wire, 1)
    assert fault is not None
    assert (fault.kind, fault.seat, fault.deal, fault.detail, fault.hint) == (F.TIMEOUT, seat, 2, "no play within 500 ms", F.LATE)
    assert p.entry.clock.used == 500_000


async def test_a_play_written_before_the_turn_is_out_of_turn_and_the_turn_is_not_sent(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    state, wire = draw_deal()
    seat = state.to_move()
    p, bot = seat_with(silent)
    bot.expect(m.Passed, b'{"type":"play","tile":[0,0],"end":null}')  # an event delivered earlier, answered with a play
    bot.write_nowait(m.encode_line(m.Passed(1)))
    fault = await turn(terms, p, At(seat, 0, 0), state, wire, 1)
    assert fault is not None and (fault.kind, fault.detail) == (F.OUT_OF_TURN, "sent a 'play' message when it was not its turn")
    bot.assert_done()
    assert len(bot.received) == 1  # the turn was never sent


@pytest.mark.parametrize("extra", [0, 1])
async def test_unknown_lines_before_the_answer_are_skipped_up_to_the_cap(tmp_path, autojump_clock, extra):
    """UNKNOWN_PER_MOVE lines of an unknown type in answer to a turn are ignored (and remarked
    on); one more is a bad_output fault."""
    terms = terms_of(tmp_path)
    state, wire = draw_deal()
    seat = state.to_move()
    chatter = [(0.0, b'{"type":"note","n":%d}' % i) for i in range(UNKNOWN_PER_MOVE + extra)]
    p, _ = seat_with(answering(*chatter, (0.0, play_line(wire.play_option(state, state.legal_plays()[0])))))
    fault = await turn(terms, p, At(seat, 0, 0), state, wire, 1)
    if extra:
        assert fault is not None and fault.kind == F.BAD_OUTPUT
        assert fault.detail.startswith(f"wrote more than {UNKNOWN_PER_MOVE} lines of unknown types in one move")
    else:
        assert fault is None
        assert p.unknown == 0  # counted per move: the answer starts the count again
        assert p.entry.remarks["sent a message of unknown type 'note' (ignored)"] == UNKNOWN_PER_MOVE


@pytest.mark.parametrize("untyped", [b'{"tile":[0,0],"end":null}', b'{"type":"","tile":[0,0],"end":null}', b"{}"])
async def test_an_answer_in_time_without_a_type_is_bad_output_not_a_timeout(tmp_path, autojump_clock, untyped):
    """A play that forgot its ``"type"`` came in time: it is said so (issue 40), not waited past
    as a message of a later protocol until the turn times out with the flush hint."""
    terms = terms_of(tmp_path)
    state, wire = draw_deal()
    seat = state.to_move()
    p, _ = seat_with(answering((0.1, untyped)))
    fault = await turn(terms, p, At(seat, 0, 0), state, wire, 1)
    assert fault is not None
    assert (fault.kind, fault.detail, fault.line, fault.hint) == (F.BAD_OUTPUT, 'the answer came in time but has no "type"',
                                                                  untyped.decode(), F.UNTYPED)
    assert not p.entry.remarks  # no remark of an "unknown type ''"
    assert trio.current_time() - terms.origin == pytest.approx(0.1)  # judged as read, not at the deadline
    records(terms)


async def test_a_play_echoing_another_turn_is_out_of_turn(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    state, wire = draw_deal()
    seat = state.to_move()
    option = wire.play_option(state, state.legal_plays()[0])
    p, _ = seat_with(answering((0.0, play_line(option)[:-1] + b',"turn":3}')))
    fault = await turn(terms, p, At(seat, 0, 0), state, wire, 4)
    assert fault is not None
    assert (fault.kind, fault.detail) == (F.OUT_OF_TURN, "the play answers turn 3, but this is turn 4")


async def test_the_handshake_skips_unknown_lines_and_logs_the_hello(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)

    def chatty(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        return [(0.5, b'{"type":"banner"}'), (0.25, HELLO)] if type(msg) is m.Hello else []

    p, bot = seat_with(chatty)
    record = R.Hello("A", 1, -1)
    assert await handshake(terms, p, At(-1, 0, 0), m.encode_line(m.Hello(m.PROTOCOL_VERSION, "r", m.Limits(1, 1, None, 0, 9, 3))), record) is None
    assert [type(msg) for msg in bot.received] == [m.Hello]
    assert record.read == [R.Heard(0.5, '{"type":"banner"}'), R.Heard(0.75, HELLO.decode())]  # every line read, when
    assert (record.t, record.ms) == (0.0, 750.0)
    assert p.entry.hello is not None and p.entry.hello.name == "scripted"
    assert p.entry.remarks["sent a message of unknown type 'banner' before hello (ignored)"] == 1


async def test_delivering_to_a_bot_that_has_exited_is_a_crash(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    p, bot = seat_with(first_legal)
    bot.closed = True
    p.channel.outbox = [m.encode_line(m.GameEnd([1, 0], [0], [1], "target", []))]
    fault = await deliver(terms, p, At(1, 2, 3))
    assert fault is not None and (fault.kind, fault.seat, fault.game, fault.deal) == (F.CRASH, 1, 2, 3)
    assert p.channel.outbox == []


async def test_delivering_sends_the_outbox_in_one_write_and_sees_unasked_lines(tmp_path, autojump_clock):
    terms = terms_of(tmp_path)
    p, bot = seat_with(lambda msg: [(0.0, b"not json")] if type(msg) is m.DealEnd else [])
    p.channel.outbox = [m.encode_line(m.Passed(0)), m.encode_line(m.DealEnd("fish", 0, [[], []], [0, 0], [0, 0], [0, 0], []))]
    fault = await deliver(terms, p, At(0, 0, 0))
    assert [type(msg) for msg in bot.received] == [m.Passed, m.DealEnd]
    assert fault is not None and (fault.kind, fault.detail) == (F.BAD_OUTPUT, "wrote a line that is not a JSON object")
    assert [r["k"] for r in records(terms)] == ["out", "in"]


def test_queued_events_reach_every_seat_and_only_the_drawer_sees_its_tiles():
    game = variant("draw").new_game(2, {})
    for i in range(50):  # a deal where someone draws early
        state = game.start(deal_from_seed(11, i, game.shape))
        assert state is not None
        while state.end is None and not any(type(e) is Drew for e in state.history):
            state.push(state.legal_plays()[0])
        if any(type(e) is Drew for e in state.history):
            break
    wire = side_for(state)
    seating = [Player(Entry(Bot("A", ["a"]), 0, TimeControl()), 0), Player(Entry(Bot("B", ["b"]), 1, TimeControl()), 0)]
    assert queue_events(state, 0, seating, wire) == len(state.history)
    drew = next(e for e in state.history if type(e) is Drew)
    told = [[m.to_bot_decoder.decode(line) for line in p.channel.outbox] for p in seating]
    assert [len(t) for t in told] == [len(state.history)] * 2
    seen = [next(msg for msg in t if type(msg) is m.Drew) for t in told]
    assert seen[drew.seat].tiles and seen[1 - drew.seat].tiles is None
    assert queue_events(state, len(state.history), seating, wire) == len(state.history)  # nothing new


async def test_a_turns_log_times_are_the_readings_it_timed_the_answer_with(tmp_path, autojump_clock):
    """The turn's out and in records carry the readings the turn took for its deadline (the
    write, the answer's read), in whole microseconds since the match's origin."""
    terms = Terms(MatchLog(tmp_path / "log.jsonl"), TimeControl(), trio.current_time() - 2.5, block=0)
    state, wire = draw_deal()
    p, _ = seat_with(thinking(0.25))
    assert await turn(terms, p, At(state.to_move(), 0, 0), state, wire, 1) is None
    log = (tmp_path / "log.jsonl").read_bytes() if terms.log.close() is None else b""
    out, inp, _ = (json.loads(line) for line in log.splitlines())
    assert (out["t"], inp["t"]) == (2.5, 2.75)
    assert b'"t":2.500000,' in log and b'"t":2.750000,' in log  # exactly, six decimals


async def test_a_cancelled_table_stops_by_the_end_of_its_deal(tmp_path, autojump_clock):
    """A turn answered at once does not look whether it was cancelled (an SPRT decided, a failure
    elsewhere): the deal looks as it starts and its end's writes do, so a table cancelled in the
    middle of a deal of instant bots deals no other."""
    scope = trio.CancelScope()
    asked = 0

    def cancelling(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        nonlocal asked
        if type(msg) is m.Turn:
            asked += 1
            if asked == 3:
                scope.cancel()
        return list(first_legal(msg))

    launch, started = scripted({"A": cancelling})
    tc = TimeControl()
    bots = [Entry(Bot("A", ["a"]), 0, tc), Entry(Bot("B", ["b"]), 1, tc)]
    seating = [Player(bots[0], 0), Player(bots[1], 0)]
    game = variant("draw").new_game(2, {})
    dealt = 0
    async with trio.open_nursery() as nursery:
        table = Table(nursery, seating, MatchLog(None), scripted_house(launch, tc, tmp_path))
        await table.open()
        try:
            with scope:
                for i in range(3):
                    dealt += 1
                    await table.play_deal(game, seating, i, deal_from_seed(3, i, game.shape), Where(0))
        finally:
            with trio.CancelScope(shield=True):
                await table.close()
    assert scope.cancelled_caught and asked >= 3 and dealt == 1
    for bot in (started["A"][0], started["B"][0]):
        assert [type(msg) for msg in bot.received].count(m.DealStart) == 1
