"""What a seat receives on the wire is enough to know its hand, and never shows it a hidden tile.

A bot is told its hand once, in the ``deal`` message, and then keeps track of it from the events
(PROTOCOL.md, "The conversation").  These tests play whole games through the real
:class:`~referee.conversation.table.Table` with in-process bots that record every byte written to them, then
replay each seat's bytes the way PROTOCOL.md tells a bot author to, and compare with the engine's
truth taken at the moment of each ``turn`` and each ``deal_end``:

* the hand, every seat's tile count and the bazaar size follow from ``deal`` plus the events;
* a drawn tile is never one the seat already holds, a placed tile of its own is one it holds;
* no message (``deal_end`` apart, which reveals every hand) names a tile the seat cannot know:
  only its own hand and the tiles on the table.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import tiles
from support.tables import scripted_house

import referee.conversation.table as table_module
from bench.referee import StubBot
from protocol import messages as m
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine import Deal, variant
from referee.engine.core.deal import deal_from_seed
from referee.engine.core.game import Game
from referee.sides.base import TILE_JSON

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

GAMES = [("sport", 4, {}), ("kozel", 4, {}), ("kozel", 4, {"teams": "none"}), ("kozel", 2, {}), ("kozel", 3, {}),
         ("draw", 2, {}), ("draw", 3, {}), ("draw", 4, {}), ("block", 2, {}), ("block", 3, {}), ("block", 4, {}),
         ("club", 2, {}), ("club", 3, {}), ("club", 4, {}),
         ("osel", 2, {}), ("osel", 3, {}), ("osel", 4, {}), ("telephone", 2, {}), ("telephone", 4, {}),
         ("muggins", 2, {}), ("muggins", 3, {}), ("muggins", 4, {}),
         ("mexican_train", 2, {}), ("mexican_train", 3, {}), ("mexican_train", 4, {})]

TILE_ID = {tuple(pair): t for t, pair in enumerate(TILE_JSON)}
#: fields holding arrays of plain numbers, which may look like a tile ([6, 6] counts)
_NUMBERS = frozenset(("counts", "scores", "totals", "values", "wrote", "winners", "losers", "dry", "played"))
# The originals, wrapped anew for every example (hypothesis runs examples under one monkeypatch).
REAL_WIRE_FOR = table_module.side_for
REAL_FINISH = Game.finish


class Truth:
    """The engine's state, noted as the table builds each ``turn`` and finishes each deal."""

    def __init__(self) -> None:
        self.turns: list[tuple[int, int, int, tuple[int, ...], int]] = []  # seat, hand, known, counts, bazaar
        self.ends: list[tuple[tuple[int, ...], int]] = []  # hands, tiles on the table


class WireBot(StubBot):
    """Stands in for a bot process: records every byte it is sent, answers ``hello``, and
    answers each ``turn`` with a legal play chosen by a seeded generator (the rest of a
    process's interface is the benchmark's stub's: no stderr, nothing to close)."""

    HELLO = b'{"type":"hello","name":"wire","protocol":1}'

    def __init__(self, rnd: random.Random, truth: Truth, reverse_leads: bool = False, slow_read: float = 0.0) -> None:
        self.rnd = rnd
        self.truth = truth
        self.reverse_leads = reverse_leads  # send a lead's halves high first
        self.slow_read = slow_read  # seconds spent reading each write that ends with a turn
        self.received = bytearray()
        self.turn_truths: list[tuple] = []
        self.turn_order: list[int] = []  # each turn's place among every bot's turns
        self.end_truths: list[tuple] = []
        self.out: list[bytes] = []

    def write_nowait(self, data: bytes) -> int:
        self.received += data
        for line in data.splitlines():
            kind = m.message_type(line)
            if kind == "hello":
                self.out.append(self.HELLO)
            elif kind == "turn":
                time.sleep(self.slow_read)
                self.turn_truths.append(self.truth.turns[-1])
                self.turn_order.append(len(self.truth.turns))
                choice = dict(self.rnd.choice(json.loads(line)["legal"]))
                if self.reverse_leads and choice["end"] is None and choice["tile"] is not None:
                    choice["tile"] = choice["tile"][::-1]
                self.out.append(json.dumps({"type": "play", **choice}).encode())
            elif kind == "deal_end":
                self.end_truths.append(self.truth.ends[-1])
        return len(data)

    def line_within(self, seconds: float) -> bytes | None:
        return self.out.pop(0) if self.out else None

    async def send(self, data: bytes) -> None:
        self.write_nowait(data)

    async def read_line(self) -> bytes:
        assert self.out, "asked to read without a question"
        return self.out.pop(0)



def play_recorded(monkeypatch, tmp_path: Path, vid: str, players: int, options: dict, deals, seed: int, *,
                  tc: TimeControl | None = None, reverse_leads: bool = False, slow_read: float = 0.0) -> list[WireBot]:
    """Play one game of ``vid`` through the table; every bot process that sat at it, by its
    label (the seat's bot, then its orientation).

    ``deals`` is a list of deals to play in order, or None for the seeded stream of ``seed``.
    In pair games the two seats of a pair are one bot (two processes, as in a match)."""
    truth = Truth()
    started: list[tuple[str, WireBot]] = []

    async def start(nursery, bot, *, name: str, **kwargs) -> WireBot:
        # Seeded by the process's label, not by start order: a table starts its processes
        # together and trio runs ready tasks in no fixed order.
        bot = WireBot(random.Random(f"{seed}/{name}"), truth, reverse_leads, slow_read)
        started.append((name, bot))
        return bot

    class TruthWire:
        """The game's encoding, noting the truth as each ``turn`` is built."""

        handmade_turn = False  # what the exchange sends is turn_message encoded: noted too

        def __init__(self, wire) -> None:
            self.wire = wire

        def __getattr__(self, name: str):
            return getattr(self.wire, name)

        def turn_message(self, state, time_ms, bank_ms=None, turn_id=m.UNSET):
            known = state.layout_mask()
            truth.turns.append((state.turn, state.hands[state.turn], known | state.hands[state.turn],
                                tuple(h.bit_count() for h in state.hands), state.bazaar_left()))
            return self.wire.turn_message(state, time_ms, bank_ms, turn_id)


    def finish(self, state):
        truth.ends.append((tuple(state.hands), state.layout_mask()))
        return REAL_FINISH(self, state)

    monkeypatch.setattr(table_module, "side_for", lambda state: TruthWire(REAL_WIRE_FOR(state)))
    monkeypatch.setattr(Game, "finish", finish)

    game = variant(vid).new_game(players, options)
    stream = iter(deals) if deals is not None else (deal_from_seed(seed, i, game.shape) for i in range(10_000))
    index = iter(range(10_000))

    def next_deal() -> tuple[int, Deal]:
        return next(index), next(stream)

    async def main() -> None:
        limits = tc or TimeControl(startup=5, move=5)
        if game.pair_play:  # one entry (one bot, one time bank) for both seats of a pair
            pair = [Entry(Bot("pair A", ["wire"]), 0, limits), Entry(Bot("pair B", ["wire"]), 1, limits)]
            seating = [Player(pair[s % 2], s // 2) for s in range(players)]
        else:
            seating = [Player(Entry(Bot(f"bot{s}", ["wire"]), s, limits), 0) for s in range(players)]
        async with trio.open_nursery() as nursery:
            table = Table(nursery, seating, MatchLog(None), scripted_house(start, limits, tmp_path))
            await table.open()
            try:
                if deals is not None:
                    for _ in deals:
                        await table.play_deal(game, seating, *next_deal(), Where(0))
                else:
                    await table.play_game(game, seating, next_deal, Where(0))
            finally:
                await table.close()

    trio.run(main)
    return [bot for _, bot in sorted(started, key=lambda s: s[0])]  # by label: start order is trio's


def tiles_named(obj, key: str | None = None) -> list[int]:
    """Every tile a decoded message names, wherever it sits (a field added later included)."""
    if key in _NUMBERS:
        return []
    if isinstance(obj, list):
        if len(obj) == 2 and all(type(x) is int for x in obj):
            return [TILE_ID[tuple(sorted(obj))]]
        return [t for x in obj for t in tiles_named(x)]
    if isinstance(obj, dict):
        return [t for k, v in obj.items() for t in tiles_named(v, k)]
    return []


def replay(bot: WireBot) -> int:
    """Follow one process's bytes as PROTOCOL.md tells a bot to; the number of turns checked.

    Raises AssertionError at the first line where what the bot would believe differs from the
    truth, or where a line names a tile the seat cannot know."""
    turns = iter(bot.turn_truths)
    ends = iter(bot.end_truths)
    seat = players = -1
    hand: set[int] = set()
    counts: list[int] = []
    bazaar = 0
    named: set[int] = set()  # tiles named to this seat since the deal began
    checked = 0
    for number, line in enumerate(bytes(bot.received).splitlines(), start=1):
        where = f"line {number}: {line.decode()}"
        msg = m.to_bot_decoder.decode(line)
        if type(msg) is not m.DealEnd:
            named.update(tiles_named(json.loads(line)))
        if type(msg) is m.DealStart:
            seat, players = msg.seat, msg.players
            hand = {TILE_ID[tuple(t)] for t in msg.hand}
            assert len(hand) == len(msg.hand), where
            counts = [len(hand)] * players
            bazaar = msg.bazaar
            named = set(hand)
        elif type(msg) is m.Placed:
            counts[msg.seat] -= 1
            if msg.seat == seat:
                t = TILE_ID[tuple(msg.tile)]
                assert t in hand, f"{where}: placed a tile the seat does not hold"
                hand.discard(t)
        elif type(msg) is m.Drew:
            counts[msg.seat] += msg.count
            bazaar -= msg.count
            assert bazaar >= 0, f"{where}: more tiles drawn than the bazaar held"
            if msg.seat == seat:
                assert msg.tiles is not None and len(msg.tiles) == msg.count, where
                for pair in msg.tiles:
                    t = TILE_ID[tuple(pair)]
                    assert t not in hand, f"{where}: drew {pair}, which the seat already holds"
                    hand.add(t)
            else:
                assert msg.tiles is None, f"{where}: shows another seat's drawn tiles"
        elif type(msg) is m.Turn:
            true_seat, true_hand, known, true_counts, true_bazaar = next(turns)
            assert true_seat == seat, where
            assert sum(1 << t for t in hand) == true_hand, f"{where}: the replayed hand {sorted(hand)} is not the true hand"
            assert {TILE_ID[tuple(t)] for t in msg.hand} == hand, where
            assert tuple(counts) == true_counts == tuple(msg.counts), f"{where}: replayed counts {counts}"
            assert bazaar == true_bazaar == msg.bazaar, f"{where}: replayed bazaar {bazaar}"
            leaked = [t for t in named if not known >> t & 1]
            assert not leaked, f"{where}: the seat was shown hidden tiles {leaked}"
            checked += 1
        elif type(msg) is m.DealEnd:
            end_hands, layout = next(ends)
            known = end_hands[seat] | layout
            leaked = [t for t in named if not known >> t & 1]
            assert not leaked, f"{where}: before the deal_end the seat was shown hidden tiles {leaked}"
            assert sum(1 << t for t in hand) == end_hands[seat], f"{where}: the replayed hand at the end is wrong"
            assert [TILE_ID[tuple(t)] for t in msg.hands[seat]] == sorted(hand), where
    assert next(turns, None) is None and next(ends, None) is None
    return checked


@pytest.mark.parametrize("vid, players, options", GAMES, ids=[f"{g}-{n}{'-' + '-'.join(o.values()) if o else ''}" for g, n, o in GAMES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_seat_can_replay_its_hand_from_the_wire(monkeypatch, tmp_path, vid, players, options, seed):
    bots = play_recorded(monkeypatch, tmp_path, vid, players, options, None, seed)
    assert len(bots) == players  # nobody faulted: one process per seat
    assert sum(replay(bot) for bot in bots) > 0


def test_club_forced_lead_then_draw_deal_is_the_deal_as_dealt(monkeypatch, tmp_path):
    """Issue 8's smallest case: club, 3 players.  6-6 lies in the bazaar, so seat 0 leads with
    the highest double dealt, 5-5 (forced).  Seat 1 holds no 5: it draws one tile (6-6), which
    does not fit, and passes.  Seat 1's ``deal`` must still list its 7 dealt tiles and everyone's
    ``bazaar`` must be 7; the ``drew`` that follows adds the 6-6 (it used to be in both)."""
    deal = Deal(
        (
            tiles("5-5", "2-6", "4-5", "1-4", "5-6", "0-2", "1-5"),
            tiles("1-1", "3-3", "1-2", "2-2", "0-1", "4-6", "0-0"),
            tiles("0-4", "0-5", "3-6", "2-5", "1-6", "0-6", "3-5"),
        ),
        tiles("6-6", "1-3", "2-4", "0-3", "2-3", "4-4", "3-4"),
    )
    bots = play_recorded(monkeypatch, tmp_path, "club", 3, {}, [deal], 7)
    lines = [[json.loads(x) for x in bytes(b.received).splitlines()] for b in bots]
    deals = [next(x for x in seat_lines if x["type"] == "deal") for seat_lines in lines]
    by_seat = {d["seat"]: (d, seat_lines) for d, seat_lines in zip(deals, lines)}
    d1, seen1 = by_seat[1]
    assert d1["hand"] == [[0, 0], [0, 1], [1, 1], [1, 2], [2, 2], [3, 3], [4, 6]]
    assert all(d["bazaar"] == 7 for d in deals)
    assert all(d["leader"] == 0 for d in deals)
    after = seen1[seen1.index(d1) + 1 :]
    assert after[0] == {"type": "placed", "seat": 0, "tile": [5, 5], "end": None, "forced": True}
    assert after[1] == {"type": "drew", "seat": 1, "count": 1, "tiles": [[6, 6]]}
    assert after[2] == {"type": "passed", "seat": 1}
    for bot in bots:
        replay(bot)
    _, seen0 = by_seat[0]
    assert {"type": "drew", "seat": 1, "count": 1, "tiles": None} in seen0
