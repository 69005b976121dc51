"""mexican_train on the wire (its page of the protocol, docs/protocol/mexican_train.md).

* The worked transcript on that page is what the real :class:`~referee.conversation.table.Table` sends seat
  0 for its seed, byte for byte (in-process scripted bots, no processes).
* What a seat is told is enough to follow the trains: the Python library's :class:`State`, fed
  only the ``deal`` and the events, agrees with every ``turn``'s ``ends``, markers and open double
  (and ``tests/conversation/test_wire_replay.py`` checks hands, counts and that no hidden tile leaks).
* A play that names no train, an unknown one, or an end is an illegal move saying why.
* Issue 17's worked examples (a double covered by its player, one left hanging and covered by
  the next player, a marker left by a pass and lifted by its owner, going out on a double, a
  blocked round with a marker ignored) at the table: what each seat is told, turn by turn.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import trio
from support import tiles, transcript_block
from support.tables import scripted_house

from protocol import bot
from protocol import messages as m
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import HELLO, Script, ScriptedBot, first_legal, scripted
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine import IllegalPlay, variant
from referee.engine.core.deal import Deal, deal_from_seed
from referee.engine.core.game import Game
from referee.engine.core.tiles import DOUBLE
from referee.engine.core.trains import TrainDeal
from referee.sides import side_for

#: the documented round: round 0 (6-6 on the station) of a two-player game from this seed
SEED, PLAYERS = 228, 2


def doubles_first(record: list[str] | None = None) -> Script:
    """Greets; on every turn plays a double if it may (so it has to cover it), else the first
    legal move, naming the train and echoing the turn's id.  With ``record``, the conversation
    goes there: ``< `` each line received, ``> `` each answer."""

    def script(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        if type(msg) is m.Hello:
            return [(0.0, HELLO)]
        if type(msg) is not m.Turn:
            return []
        pick = next((o for o in msg.legal if o.tile is not None and o.tile[0] == o.tile[1]), msg.legal[0])
        line = json.dumps({"type": "play", "tile": list(pick.tile or ()), "train": pick.train, "turn": msg.id},
                          separators=(",", ":")).encode()
        if record is not None:
            record.append(f"> {line.decode()}")
        return [(0.0, line)]

    return script


class Recorder(ScriptedBot):
    """A scripted bot that also keeps every line it is sent but ``hello``, as sent (``< `` first)."""

    def __init__(self, script: Script, name: str, record: list[str]) -> None:
        super().__init__(script, name)
        self.record = record

    def write_nowait(self, data: bytes) -> int:
        self.record.extend(f"< {line.decode()}" for line in data.splitlines() if m.message_type(line) != "hello")
        return super().write_nowait(data)


def play_deals(deals: list[Deal], players: int, scripts: dict[str, Script], records: dict[str, list[str]] | None = None,
               log: Path | None = None, game: Game | None = None) -> dict[str, list[ScriptedBot]]:
    """Play ``deals`` as rounds 0, 1, … of a mexican_train game at the real table, bot ``s{k}`` in
    seat k (``scripts`` by label, first legal move otherwise); a bot named in ``records`` keeps
    what it is sent there.  The scripted bots started, by label."""
    records = records or {}
    launch, started = scripted(scripts)

    async def launch_recording(nursery, b, **kwargs):
        if b.name in records:
            rb = Recorder(scripts.get(b.name, first_legal), b.name, records[b.name])
            started.setdefault(b.name, []).append(rb)
            return rb
        return await launch(nursery, b, **kwargs)

    game = game or variant("mexican_train").new_game(players)
    seating = [Player(Entry(Bot(f"s{k}", [f"s{k}"]), 0, TimeControl()), 0) for k in range(players)]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            table = Table(nursery, seating, MatchLog(log),
                          scripted_house(launch_recording, TimeControl(startup=5, move=5), Path("/nonexistent")))
            await table.open()
            try:
                for i, deal in enumerate(deals):
                    await table.play_deal(game, seating, i, deal, Where(0))
            finally:
                await table.close()
                table.log.close()

    trio.run(main)
    return started


def transcript(seed: int = SEED, players: int = PLAYERS) -> list[str]:
    """Round 0 of a ``players``-player game from ``seed`` as seat 0 is told it: seat 0 plays
    :func:`doubles_first`, the others their first legal move."""
    record: list[str] = []
    deal = deal_from_seed(seed, 0, variant("mexican_train").shape(players))
    play_deals([deal], players, {"s0": doubles_first(record)}, {"s0": record})
    return [line for line in record if m.message_type(line[2:].encode()) != "match_end"]


def test_the_transcript_shows_a_double_covered_and_a_double_left_hanging():
    """Seat 0 lays 4-4 and, told ``open_double`` is its train, covers it; seat 1 lays 2-2, cannot
    cover it, draws and passes: its train gets a marker, and seat 0's only legal move is to cover
    the hanging double on seat 1's train, which it does, going out."""
    lines = transcript()
    text = "\n".join(lines)
    assert '"station":[6,6],"round":0' in lines[0]
    assert '> {"type":"play","tile":[4,4],"train":"seat0"' in text
    assert '"open_double":"seat0","open_trains":["seat0"]' in text
    assert '< {"type":"passed","seat":1}' in text
    assert '"legal":[{"tile":[1,2],"end":null,"train":"seat1"}]' in text
    assert '{"train":"seat1","end":2,"tiles":7,"marker":true}' in text
    assert lines[-1].startswith('< {"type":"deal_end","reason":"domino","seat":0')


def test_protocol_md_mexican_train_transcript_is_what_the_referee_sends():
    documented = transcript_block("mexican_train", "mexican-train-transcript")
    assert documented == transcript(), ("regenerate with: python -c 'import sys; sys.path.insert(0, \"tests\"); "
                                        "from test_protocol_mexican_train import transcript as t; print(*t(), sep=chr(10))'")


def random_legal(seed: int) -> Script:
    """Greets; answers every turn with a legal entry chosen by a seeded generator, as it is."""
    import random

    rnd = random.Random(seed)

    def script(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        if type(msg) is m.Turn:
            return [(0.0, b'{"type":"play",' + m.encoder.encode(rnd.choice(msg.legal))[1:])]
        return list(first_legal(msg))

    return script


def follow(record: list[str]) -> int:
    """Feed what one seat was sent to the library's State, the events only, and compare it with
    every ``turn`` before the turn itself updates it; the number of turns checked."""
    state = bot.State()
    checked = 0
    for number, line in enumerate(record, start=1):
        msg = m.to_bot_decoder.decode(line[2:])
        where = f"line {number}: {line}"
        if type(msg) is m.DealStart:
            state.on_deal(msg)
        elif type(msg) is m.Placed:
            state.on_placed(msg)
        elif type(msg) is m.Drew:
            state.on_drew(msg)
        elif type(msg) is m.Passed:
            state.on_passed(msg)
        elif type(msg) is m.Turn:
            assert msg.trains is not m.UNSET and msg.open_trains is not m.UNSET
            assert state.ends == msg.ends == {t.train: t.end for t in msg.trains}, where
            assert state.markers == {t.train for t in msg.trains if t.marker}, where
            assert state.open_double == msg.open_double, where
            assert sorted(state.hand) == sorted(bot.norm(t) for t in msg.hand), where
            mine = f"seat{state.seat}"
            if msg.open_double is not None:
                assert msg.open_trains == [msg.open_double], where
            else:
                assert msg.open_trains == [t.train for t in msg.trains if t.train in (mine, "mexican") or t.marker], where
            assert {o.train for o in msg.legal} <= set(msg.open_trains), where
            for o in msg.legal:
                assert o.end is None and o.tile is not None and state.ends[o.train] in o.tile, where
            state.on_turn(msg)
            checked += 1
    return checked


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_events_are_enough_to_follow_every_train(players):
    """Seven rounds of random legal play: every seat, following only ``deal`` and the events,
    knows each train's end, the markers and the open double at each of its turns."""
    shape = variant("mexican_train").shape(players)
    deals = [deal_from_seed(players * 100, i, shape) for i in range(7)]
    records: dict[str, list[str]] = {f"s{k}": [] for k in range(players)}
    play_deals(deals, players, {f"s{k}": random_legal(k) for k in range(players)}, records)
    for label, record in records.items():
        assert sum(line.startswith('< {"type":"deal",') for line in record) == 7, label
        assert follow(record) > 20, label
    assert any('"marker":true' in line for record in records.values() for line in record)
    assert any('"open_double":"' in line for record in records.values() for line in record)


def test_the_library_answers_with_a_train():
    """protocol.bot sends a legal entry with its train, and a ``(tile, train)`` pair as a play on
    that train."""
    to_bot = [line[2:] for line in transcript() if line.startswith("< ")]
    hello = m.encode_line(m.Hello(protocol=1, referee="test", limits=m.Limits()))
    src = hello + "".join(t + "\n" for t in to_bot).encode() + m.encode_line(m.MatchEnd())
    for choose in (lambda turn, state: turn.legal[-1], lambda turn, state: (turn.legal[-1].tile[::-1], turn.legal[-1].train)):
        out = io.BytesIO()
        state = bot.run(choose, "lib", infile=io.BytesIO(src), outfile=out)
        sent = [json.loads(line) for line in out.getvalue().splitlines()][1:]
        assert len(sent) == sum(line.startswith('< {"type":"turn"') for line in transcript())
        assert all(s["train"] in ("seat0", "seat1", "mexican") and s.get("end") is None for s in sent)
        assert state.station == (6, 6) and state.round == 0


def _state(players: int = 3) -> TrainDeal:
    game = variant("mexican_train").new_game(players)
    state = game.start(deal_from_seed(5, 0, game.shape))
    assert isinstance(state, TrainDeal)
    return state


@pytest.mark.parametrize("play, reason, words", [
    ({"tile": [1, 2]}, IllegalPlay.BAD_END, 'a play names its train: "train" is one of "seat0", "seat1", "seat2", "mexican"'),
    ({"tile": [1, 2], "train": "seat3"}, IllegalPlay.BAD_END, "'seat3' is not a train; with 3 players the trains are"),
    ({"tile": [1, 2], "train": "Mexican"}, IllegalPlay.BAD_END, "'Mexican' is not a train"),
    ({"tile": [1, 2], "end": "left"}, IllegalPlay.BAD_END, 'mexican_train has trains, not ends: send "train"'),
    ({"tile": [1, 2], "end": "left", "train": "seat0"}, IllegalPlay.BAD_END, "a play names a train, not an end"),
    ({"tile": None}, IllegalPlay.NOT_YOUR_TILE, '"tile" is null'),
])
def test_a_play_without_a_known_train_is_refused_saying_why(play, reason, words):
    state = _state()
    msg = m.from_bot_decoder.decode(json.dumps({"type": "play", **play}).encode())
    with pytest.raises(IllegalPlay) as e:
        side_for(state).engine_play(state, msg)
    assert e.value.reason == reason and words in str(e.value)


def test_stop_and_declarations_reach_the_deal_which_refuses_them():
    state = _state()
    w = side_for(state)
    for line in ('{"type":"play","tile":null,"stop":true}', '{"type":"play","tile":null,"declare":"write_off"}'):
        with pytest.raises(IllegalPlay):
            state.check(w.engine_play(state, m.from_bot_decoder.decode(line.encode())))


# -- issue 17's worked examples at the table: what the seats are told ------------------------------


def planned(*moves: tuple[str, str]) -> Script:
    """Greets; answers its turns with ``moves`` (tile, train) in order, each checked to be in
    ``legal``, then with its first legal move."""
    queue = list(moves)

    def script(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        if type(msg) is not m.Turn or not queue:
            return list(first_legal(msg))
        name, train = queue.pop(0)
        a, b = sorted(int(x) for x in name.split("-"))
        assert any(o.tile == (a, b) and o.train == train for o in msg.legal), f"{name} on {train} is not legal in {msg.legal}"
        return [(0.0, json.dumps({"type": "play", "tile": [a, b], "train": train}).encode())]

    return script


def example(hands: tuple[tuple[str, ...], ...], bazaar: tuple[str, ...], seat0: list[tuple[str, str]],
            seat1: list[tuple[str, str]]) -> tuple[list[m.ToBotMessage], list[m.ToBotMessage]]:
    """A two-player round on the 6-6 station from chosen hands, played at the table; what each
    seat was sent, decoded."""

    class ChosenTiles(variant("mexican_train").game):
        """Round 0 (6-6 on the station, seat 0 starts) dealt from a few chosen tiles, not 27."""

        def choose_lead(self, deal: Deal) -> tuple[int, int]:
            return 0, DOUBLE[6]

    deal = Deal(tuple(tiles(*h) for h in hands), tiles(*bazaar))
    records: dict[str, list[str]] = {"s0": [], "s1": []}
    play_deals([deal], 2, {"s0": planned(*seat0), "s1": planned(*seat1)}, records,
               game=ChosenTiles(variant("mexican_train"), 2, {}, None))
    return tuple([m.to_bot_decoder.decode(line[2:]) for line in records[k] if line.startswith("< ")] for k in ("s0", "s1"))


def after(msgs: list[m.ToBotMessage], pred) -> m.ToBotMessage:
    """The first message after the first one ``pred`` accepts."""
    i = next(i for i, x in enumerate(msgs) if pred(x))
    return msgs[i + 1]


def placed(seat: int, tile: tuple[int, int], train: str):
    return lambda x: type(x) is m.Placed and (x.seat, x.tile, x.train) == (seat, tile, train)


def marker(turn: m.Turn, train: str) -> bool:
    assert turn.trains is not m.UNSET
    return next(t.marker for t in turn.trains if t.train == train)


def test_a_double_covered_by_its_player_at_the_table():
    s0, s1 = example((("3-6", "3-3", "1-3", "0-0"), ("5-6", "2-5", "0-1", "1-1")), (),
                     [("3-6", "seat0"), ("3-3", "seat0"), ("1-3", "seat0")], [("5-6", "seat1")])
    turn = after(s0, placed(0, (3, 3), "seat0"))  # seat 0 moves again at once, told to cover
    assert type(turn) is m.Turn and turn.open_double == "seat0" and turn.open_trains == ["seat0"]
    assert [(o.tile, o.train) for o in turn.legal] == [((1, 3), "seat0")]
    assert after(s1, placed(0, (3, 3), "seat0")) == m.Placed(0, (1, 3), None, False, train="seat0")  # seat 1 was not asked between


def test_a_double_left_hanging_is_covered_by_the_next_player_at_the_table():
    s0, s1 = example((("3-6", "3-3", "0-0", "0-5"), ("5-6", "3-5", "2-4", "1-1")), ("2-2", "4-4"),
                     [("3-6", "seat0"), ("3-3", "seat0")], [("5-6", "seat1"), ("3-5", "seat0")])
    assert after(s1, placed(0, (3, 3), "seat0")) == m.Drew(0, 1, None)  # seat 1 is not shown the tile drawn
    assert after(s0, placed(0, (3, 3), "seat0")) == m.Drew(0, 1, [(2, 2)])
    turn = after(s1, lambda x: type(x) is m.Passed and x.seat == 0)
    assert type(turn) is m.Turn and turn.open_double == "seat0" and turn.open_trains == ["seat0"] and marker(turn, "seat0")
    assert [(o.tile, o.train) for o in turn.legal] == [((3, 5), "seat0")]  # 5-something would fit its own train, but not now
    nxt = after(s0, placed(1, (3, 5), "seat0"))
    assert type(nxt) is m.Turn and nxt.open_double is None and marker(nxt, "seat0")  # another seat's cover leaves the marker


def test_a_pass_leaves_a_marker_and_the_owners_play_removes_it_at_the_table():
    s0, s1 = example((("2-6", "1-1", "0-5"), ("1-6", "3-4", "1-3", "2-2")), ("4-4", "2-3"),
                     [("2-6", "seat0"), ("2-3", "seat0")], [("1-6", "seat1"), ("1-3", "seat1")])
    turn = after(s1, lambda x: type(x) is m.Passed and x.seat == 0)
    assert type(turn) is m.Turn and marker(turn, "seat0") and turn.open_trains == ["seat0", "seat1", "mexican"]
    assert [(o.tile, o.train) for o in turn.legal] == [((1, 3), "seat1"), ((2, 2), "seat0")]
    drawn = after(s0, placed(1, (1, 3), "seat1"))
    assert drawn == m.Drew(0, 1, [(2, 3)])
    turn = after(s0, lambda x: x == drawn)  # the drawn tile fits: it must be placed now
    assert type(turn) is m.Turn and [(o.tile, o.train) for o in turn.legal] == [((2, 3), "seat0")] and marker(turn, "seat0")
    turn = after(s1, placed(0, (2, 3), "seat0"))
    assert type(turn) is m.Turn and not marker(turn, "seat0") and turn.open_trains == ["seat1", "mexican"]


def test_going_out_on_a_double_at_the_table():
    s0, s1 = example((("3-6", "3-3"), ("5-6", "2-5", "0-1")), (), [("3-6", "seat0"), ("3-3", "seat0")], [("5-6", "seat1")])
    for msgs in (s0, s1):
        end = after(msgs, placed(0, (3, 3), "seat0"))  # no turn to cover it: the round is over
        assert type(end) is m.DealEnd and (end.reason, end.seat, end.values) == ("domino", 0, [0, 8])


def test_a_blocked_round_ignores_markers_at_the_table():
    s0, s1 = example((("2-6", "0-1", "1-1"), ("3-6", "2-4", "0-0")), (), [("2-6", "seat0")], [("3-6", "seat1"), ("2-4", "seat0")])
    turn = after(s1, lambda x: type(x) is m.Passed and x.seat == 0)  # the bazaar is empty: no draw
    assert type(turn) is m.Turn and marker(turn, "seat0") and [(o.tile, o.train) for o in turn.legal] == [((2, 4), "seat0")]
    for msgs in (s0, s1):
        end = after(msgs, placed(1, (2, 4), "seat0"))  # seat 0's marker does not keep the round open
        assert type(end) is m.DealEnd and (end.reason, end.seat, end.values) == ("fish", 1, [3, 0])
