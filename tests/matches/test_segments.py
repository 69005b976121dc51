"""A segment's log lines (:mod:`referee.matches.segments`): held in memory, then in a file, or
written straight through while the log takes the chunk being played; whichever way, the log
gets every line once, in order."""

from __future__ import annotations

import pytest
import trio

from referee.matches import segments
from referee.matches.segments import Segment


def lines(a: int, b: int) -> list[bytes]:
    """Lines of many lengths, short ones after long ones (a short line fits where a long one
    did not)."""
    return [b'{"k":"line","n":%d,"pad":"%s"}\n' % (i, b"x" * (i * 37 % 300)) if i % 2 else b"%d\n" % i for i in range(a, b)]


@pytest.mark.parametrize("memory", [1 << 22, 600, 1])
def test_held_lines_reach_the_log_whole_and_in_order(tmp_path, monkeypatch, memory):
    """Chunks played ahead of the log are held (in memory up to ``memory`` bytes, then in a
    file) and given to the log when it takes them."""
    monkeypatch.setattr(segments, "SPILL_MEMORY", memory)
    out: list[bytes] = []

    async def main() -> None:
        seg = Segment(0, 0, out.append, tmp_path)
        seg.begin()
        for line in lines(0, 40):
            seg.write(line)
        seg.begin()
        for line in lines(40, 90):
            seg.write(line)
        seg.finish()
        assert not seg.live
        assert (await seg.take(0)) is not None and (await seg.take(1)) is not None
        assert await seg.take(2) is None
        seg.close()

    trio.run(main)
    assert b"".join(out) == b"".join(lines(0, 90))


@pytest.mark.parametrize("memory", [1 << 22, 600])
def test_the_chunk_the_log_waits_for_is_written_through(tmp_path, monkeypatch, memory):
    """Once the log takes the chunk being played, what was held of it goes first and every line
    after it goes straight to the log; the next chunk is held again."""
    monkeypatch.setattr(segments, "SPILL_MEMORY", memory)
    out: list[bytes] = []

    async def main() -> None:
        seg = Segment(0, 0, out.append, tmp_path)
        seg.begin()
        for line in lines(0, 20):
            seg.write(line)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(seg.take, 0)
            await trio.testing.wait_all_tasks_blocked()
            assert seg.live and b"".join(out) == b"".join(lines(0, 20))
            for line in lines(20, 30):
                seg.write(line)
                assert out[-1] == line  # written through, not held
            seg.begin()  # chunk 0 ends: take(0) returns
        assert not seg.live
        for line in lines(30, 60):
            seg.write(line)
        assert b"".join(out) == b"".join(lines(0, 30))
        seg.finish()
        assert await seg.take(1) is not None
        seg.close()

    trio.run(main)
    assert b"".join(out) == b"".join(lines(0, 60))


def test_a_chunk_finished_while_its_take_is_cancelled_is_still_there_to_commit(tmp_path):
    """A match stopped just as the chunk written live ends: its last line is in the log, so the
    ledger must still get the chunk (and the result count its deal) from ``finished``."""
    out: list[bytes] = []

    async def main() -> None:
        seg = Segment(0, 0, out.append, tmp_path)
        seg.begin()
        seg.write(b"deal\n")
        taken: list[object] = []

        async def take() -> None:
            try:
                taken.append(await seg.take(0))
            except trio.Cancelled:
                taken.append(seg.finished(0))
                raise

        async with trio.open_nursery() as nursery:
            nursery.start_soon(take)
            await trio.testing.wait_all_tasks_blocked()
            seg.write(b"deal_end\n")
            seg.begin()  # chunk 0 ends, and before take() runs again the match is stopped
            nursery.cancel_scope.cancel()
        assert out == [b"deal\n", b"deal_end\n"]
        assert len(taken) == 1 and taken[0] is not None
        assert seg.finished(0) is None  # given once
        seg.finish()
        seg.close()

    trio.run(main)
