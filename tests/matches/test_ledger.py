"""The match's ledger (referee/matches/ledger.py) on its own: segments that finish their chunks in
any order, the ledger taking them; the boards it commits, the events it replays and the log's
lines come out in board order, whatever the order the segments played in.  No process, no table."""

from __future__ import annotations

import sys

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.bots.bot import Bot
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry
from referee.engine import variant
from referee.matches.ledger import Board, Ledger
from referee.matches.results import MatchResult
from referee.matches.segments import Progressed, Segment
from referee.matches.spec import MatchSpec

GAMES, DEALS = 2, 4
SEATINGS = [(0, 1, 0, 1), (1, 0, 1, 0)]  # sport in pairs


def sport() -> MatchSpec:
    v = variant("sport")
    bots = [Bot("A", [sys.executable, "a.py"]), Bot("B", [sys.executable, "b.py"])]
    return MatchSpec(v, bots, 4, v.resolve_options(4, {}), deals=DEALS, games=GAMES, seed=1)


def committed_in(order: list[int]) -> tuple[list[tuple[int, int]], list[str], bytes]:
    """Play every segment's chunks, advancing segment ``order[i] % segments`` at step ``i`` (then
    the rest in turn), with the ledger taking them; what it committed: the boards, the events
    replayed (progress, in the order the ledger gave them) and the log's bytes."""
    spec = sport()
    written: list[bytes] = []
    log = MatchLog(None, sink=written.append)
    told: list[str] = []
    result = MatchResult(spec, SEATINGS, [Entry(b, i, spec.tc) for i, b in enumerate(spec.bots)])
    boards: list[tuple[int, int]] = []
    ledger = Ledger(spec, SEATINGS, result, log, on_board=lambda _: boards.append(ledger.last),
                    progress=lambda text, _: told.append(text))
    segments = {(g, o): Segment(g, o, log.raw, None) for g in range(GAMES) for o in range(len(SEATINGS))}
    keys = sorted(segments)
    done = dict.fromkeys(keys, 0)

    def step(key: tuple[int, int]) -> None:
        seg, k = segments[key], done[key]
        if k == DEALS:
            if not seg.over:
                seg.finish()
            return
        g, o = key
        seg.begin()
        seg.write(f"{g} {k} {o}\n".encode())
        seg.event(Progressed(f"{g} {k} {o}", 1))
        done[key] += 1

    async def play() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ledger.run, lambda g, o: segments[(g, o)], lambda: 0)
            for pick in order:
                step(keys[pick % len(keys)])
                await trio.testing.wait_all_tasks_blocked()
            while not all(seg.over for seg in segments.values()):
                for key in keys:
                    step(key)
                    await trio.testing.wait_all_tasks_blocked()

    trio.run(play)
    result.close()
    return boards, told, b"".join(written)


IN_ORDER = [f"{g} {k} {o}" for g in range(GAMES) for k in range(DEALS) for o in range(len(SEATINGS))]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), max_size=40))
def test_the_ledger_commits_the_same_boards_whatever_order_the_segments_finish_in(order):
    boards, told, log = committed_in(order)
    assert boards == [(g, k) for g in range(GAMES) for k in range(DEALS)]
    assert told == IN_ORDER
    assert log == "".join(line + "\n" for line in IN_ORDER).encode()


def test_a_board_out_of_order_is_refused():
    """The ledger commits boards in board order only: one ahead of the board it takes is a bug."""
    spec = sport()
    result = MatchResult(spec, SEATINGS, [Entry(b, i, spec.tc) for i, b in enumerate(spec.bots)])
    ledger = Ledger(spec, SEATINGS, result, MatchLog(None, sink=lambda _: None))
    with result, pytest.raises(AssertionError, match="board order"):
        ledger.commit(Board(0, 1, ()), lambda: 0)
