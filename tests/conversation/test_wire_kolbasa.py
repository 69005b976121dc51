"""kolbasa on the wire: what a seat is sent is exactly what KB-15 lets it see.

Whole games are played through the real :class:`~referee.conversation.table.Table` with the in-process bots
of ``test_wire_replay`` (each records every byte it is sent and answers a ``turn`` with a random
entry of ``legal``).  Each seat's bytes are then followed the way the protocol's kolbasa page
(docs/protocol/kolbasa.md) tells a kolbasa bot to (``deal.rows``, then ``turned``, ``placed``, ``tailed`` and ``cut``), and compared at each
``turn`` and ``deal_end`` with the engine's truth taken at that moment:

* the rows the bot rebuilds are ``turn.rows``, and both are the engine's rows with ``null``
  exactly where the tile has never been turned up (still as dealt);
* ``turn.lines``, ``ends`` and ``counts`` are the engine's layout and rows' lengths;
* no message before the ``deal_end`` names a tile that has not been turned up (a face-down tile
  whose identity is not public), and no message names a place the engine did not use.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.tables import scripted_house

import referee.conversation.table as table_module
from protocol import messages as m
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine import Deal, variant
from referee.engine.core.deal import deal_from_seed
from referee.engine.core.game import Game
from referee.engine.core.kolbasa import KolbasaDeal
from referee.engine.core.line import Turned
from referee.sides import side_for
from tests.conversation.test_wire_replay import TILE_ID, WireBot, tiles_named

REAL_WIRE_FOR = side_for
REAL_FINISH = Game.finish


class Truth:
    def __init__(self) -> None:
        #: per turn: rows, tiles turned up so far, (start, top, bottom), ends
        self.turns: list[tuple] = []
        self.ends: list[tuple] = []


def seen(state: KolbasaDeal) -> set[int]:
    return {e.tile for e in state.history if type(e) is Turned}


def play_kolbasa(monkeypatch, tmp_path: Path, seed: int, deals: list[Deal] | None = None, chooser=None) -> tuple[list[WireBot], Truth]:
    """One kolbasa game to the goat (or the ``deals`` given, one by one) between two recording
    bots, which answer with a random entry of ``legal`` (or ``chooser.choice(legal)``)."""
    truth = Truth()
    rnd = random.Random(seed)
    started: list[WireBot] = []

    async def start(nursery, bot, **kwargs) -> WireBot:
        b = WireBot(chooser or random.Random(rnd.random()), truth)
        started.append(b)
        return b

    class TruthWire:
        handmade_turn = False  # what the exchange sends is turn_message encoded: noted too

        def __init__(self, wire) -> None:
            self.wire = wire

        def __getattr__(self, name: str):
            return getattr(self.wire, name)

        def turn_message(self, state, time_ms, bank_ms=None, turn_id=m.UNSET):
            lay = state.layout
            truth.turns.append(([list(r) for r in state.rows], seen(state), (lay.start, list(lay.lines[0]), list(lay.lines[1])),
                                list(state.ends)))
            return self.wire.turn_message(state, time_ms, bank_ms, turn_id)


    def finish(self, state):
        truth.ends.append(([list(r) for r in state.rows], seen(state)))
        return REAL_FINISH(self, state)

    monkeypatch.setattr(table_module, "side_for", lambda state: TruthWire(REAL_WIRE_FOR(state)))
    monkeypatch.setattr(Game, "finish", finish)
    game = variant("kolbasa").new_game(2)
    stream = iter(deals) if deals is not None else (deal_from_seed(seed, i, game.shape) for i in range(10_000))
    index = iter(range(10_000))

    async def main() -> None:
        seating = [Player(Entry(Bot(f"bot{s}", ["wire"]), 0, TimeControl()), 0) for s in range(2)]
        async with trio.open_nursery() as nursery:
            table = Table(nursery, seating, MatchLog(None), scripted_house(start, TimeControl(startup=5, move=5), tmp_path))
            await table.open()
            try:
                if deals is not None:
                    for _ in deals:
                        await table.play_deal(game, seating, next(index), next(stream), Where(0))
                else:
                    await table.play_game(game, seating, lambda: (next(index), next(stream)), Where(0))
            finally:
                await table.close()

    trio.run(main)
    return started, truth


def follow(bot: WireBot) -> int:
    """Follow one seat's bytes as a kolbasa bot does; the number of turns checked."""
    turns = iter(bot.turn_truths)
    ends = iter(bot.end_truths)
    rows: list[list[int | None]] = []
    seat = -1
    named: set[int] = set()
    checked = 0
    for number, line in enumerate(bytes(bot.received).splitlines(), start=1):
        where = f"line {number}: {line.decode()}"
        msg = m.to_bot_decoder.decode(line)
        obj = json.loads(line)
        if type(msg) is not m.DealEnd:
            named.update(tiles_named(obj))
        if type(msg) is m.DealStart:
            assert msg.hand == [] and msg.bazaar == 0 and msg.rows is not m.UNSET, where
            seat = msg.seat
            rows = [list(r) for r in msg.rows]
            assert all(t is None for r in rows for t in r) and [len(r) for r in rows] == [14, 14], where
            named = set()
        elif type(msg) is m.Turned:
            assert rows[msg.seat], where
            t = TILE_ID[tuple(msg.tile)]
            assert rows[msg.seat][-1] in (None, t), f"{where}: the row's rightmost is known to be another tile"
            rows[msg.seat][-1] = t
        elif type(msg) is m.Placed:
            assert msg.end is m.UNSET and msg.place is not m.UNSET, where
            assert rows[msg.seat].pop() == TILE_ID[tuple(msg.tile)], f"{where}: not the tile turned up"
        elif type(msg) is m.Tailed:
            t = rows[msg.seat].pop()
            assert t == TILE_ID[tuple(msg.tile)], f"{where}: not the tile turned up"
            rows[msg.seat].insert(0, t)
        elif type(msg) is m.Cut:
            assert msg.to == 1 - msg.seat, where
            rows[msg.to][:0] = [TILE_ID[tuple(t)] for t in msg.tiles]
        elif type(msg) is m.Turn:
            true_rows, public, (start, top, bottom), ends_now = next(turns)
            assert msg.rows is not m.UNSET and msg.lines is not m.UNSET, where
            sent = [[None if t is None else TILE_ID[tuple(t)] for t in r] for r in msg.rows]
            assert sent == rows, f"{where}: turn.rows differ from the rows rebuilt from the events {rows}"
            for r_sent, r_true in zip(sent, true_rows):
                assert len(r_sent) == len(r_true), where
                for x, y in zip(r_sent, r_true):
                    assert x == (y if y in public else None), f"{where}: a row shows {x}, the truth is {y} (public: {y in public})"
            assert msg.counts == [len(r) for r in true_rows] and msg.hand == [] and msg.bazaar == 0, where
            assert msg.lines.start == start and msg.lines.top == top and msg.lines.bottom == bottom, where
            assert msg.ends == dict(zip(("top", "bottom"), ends_now)), where
            up = rows[seat][-1]
            assert up is not None and all(TILE_ID[tuple(o.tile)] == up and o.place is not m.UNSET and o.end is m.UNSET
                                          for o in msg.legal), where
            leaked = named - public
            assert not leaked, f"{where}: the seat was shown tiles never turned up: {sorted(leaked)}"
            checked += 1
        elif type(msg) is m.DealEnd:
            true_rows, public = next(ends)
            leaked = named - public
            assert not leaked, f"{where}: before the deal_end the seat was shown tiles never turned up: {sorted(leaked)}"
            assert [[t for t in r if t is not None] for r in rows] == [[t for t in r if t in public] for r in true_rows], where
            assert [sorted(TILE_ID[tuple(t)] for t in h) for h in msg.hands] == [sorted(r) for r in true_rows], where
    return checked


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_seat_is_told_what_kb15_says_and_nothing_more(monkeypatch, tmp_path, seed):
    bots, truth = play_kolbasa(monkeypatch, tmp_path, seed)
    assert len(bots) == 2  # nobody faulted
    assert sum(follow(b) for b in bots) == len(truth.turns) > 0


PLACE_TEXT = st.one_of(st.sampled_from(["top", "bottom", "top:0", "bottom:1", "knife:1", "knife:3", "knife:0", "top:10", "knife:",
                                        "knife:01", "start", "left", "knife:-1", "knife:1.0", "top:٣"]), st.text(max_size=10))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10_000), moves=st.integers(0, 30), place=st.one_of(st.just(m.UNSET), PLACE_TEXT),
       end=st.one_of(st.none(), st.just(m.UNSET), st.sampled_from(["left", "right", "top", "up"])),
       halves=st.tuples(st.integers(0, 6), st.integers(0, 6)), extra=st.sampled_from(["", "stop", "closed", "declare"]))
def test_any_play_is_legal_or_an_illegal_move_that_says_why(seed, moves, place, end, halves, extra):
    """Whatever a decoded ``play`` holds, kolbasa's reading of it is a legal move or an
    :class:`IllegalPlay` with a one-line reason, never another exception."""
    from referee.engine import IllegalPlay

    game = variant("kolbasa").new_game(2)
    state = game.start(deal_from_seed(seed, 0, game.shape))
    assert state is not None
    rng = random.Random(seed)
    for _ in range(moves):
        if state.to_move() < 0:
            break
        state.apply(rng.choice(state.legal_plays()))
    if state.to_move() < 0:
        return
    fields = {"stop": {"stop": True}, "closed": {"closed": True}, "declare": {"declare": "hundred"}, "": {}}[extra]
    msg = m.Play(tile=halves, end=end, place=place, **fields)
    wire = side_for(state)
    try:
        state.copy().push(wire.engine_play(state, msg), state.turn)
    except IllegalPlay as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert not extra and place is not m.UNSET and end in (None, m.UNSET)
        assert any(wire.play_option(state, p).place == place and wire.play_option(state, p).tile == tuple(sorted(halves))
                   for p in state.legal_plays())
