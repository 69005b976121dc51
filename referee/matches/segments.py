"""A match in segments: what one game in one orientation writes, held until the match's log
takes it in board order.

A *segment* is one game of the match in one orientation (seating), played from its start to its
end by processes of its own (:mod:`referee.matches.match` plays segments one or ``-j N`` at a
time).  Its records are cut into *chunks*, one per board it plays a part in: a deal of a game of
a fixed number of deals (sport), or the whole game of a game to a target.  The match's log takes
the chunks in board order, each board's in orientation order (:meth:`Segment.take`), so the log
is the same whichever segment finished first and however many were played at once.

A chunk that the log is waiting for is written straight through as it is played (the *live*
chunk); the others wait in the segment's buffer, in memory up to :data:`SPILL_MEMORY` bytes and
then in an unnamed temporary file, so a long segment played ahead of the log does not grow the
referee's memory.  With *lockstep* (``verify``, ``referee play``) a segment begins a chunk only
once it is live: the match is then played in the log's own order, line by line.  A segment
played on a cluster's worker is played by itself there (:meth:`Segment.played` gives its chunks)
and its chunks held here as if played here (:meth:`Segment.restore`).
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import trio

from protocol import messages as m
from referee.base.errors import LogError
from referee.conversation.faults import Fault
from referee.conversation.players import Entry
from referee.engine.core.game import DealRecord, GameOutcome

#: Bytes of log lines a segment keeps in memory before it moves them to a temporary file.
SPILL_MEMORY = 1 << 22


class _Spill:
    """Bytes appended and read back by offset: in memory, then in an unnamed temporary file."""

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder
        self.memory = bytearray()
        self._file: IO[bytes] | None = None
        self.size = 0
        #: the offset of the first byte still held (``memory[0]``, or the file's first byte):
        #: what the log has taken is let go (:meth:`release`), so a long segment holds only
        #: what waits for the log, not all it ever wrote
        self.base = 0
        #: bytes the memory still takes before the file is made (-1 once it is): a line that fits
        #: is appended by the segment itself (:meth:`Segment.write`), without a call here
        self.room = SPILL_MEMORY

    def append(self, data: bytes) -> None:
        try:
            if self._file is None and len(self.memory) + len(data) > SPILL_MEMORY:
                self._file = tempfile.TemporaryFile(dir=self._folder)
                self._file.write(self.memory)
                self.memory = bytearray()
                self.room = -1
            if self._file is not None:
                self._file.write(data)
            else:
                self.memory += data
                self.room = SPILL_MEMORY - len(self.memory)
        except OSError as exc:
            raise LogError(f"cannot hold a segment's log lines in {self._folder or tempfile.gettempdir()}: "
                           f"{exc.strerror or exc}") from None
        self.size += len(data)

    def read(self, start: int, end: int) -> Iterator[bytes]:
        if start >= end:
            return
        start -= self.base
        end -= self.base
        if self._file is None:
            yield bytes(self.memory[start:end])
            return
        self._file.flush()
        fd = self._file.fileno()
        while start < end:
            piece = os.pread(fd, min(1 << 20, end - start), start)
            if not piece:
                raise LogError("a segment's buffered log lines were cut short")
            start += len(piece)
            yield piece

    def release(self, upto: int) -> None:
        """Let go of the bytes before offset ``upto`` (nothing reads them again).  In memory
        they are dropped (a bytearray drops its front without copying the rest); a file is
        closed once nothing in it is wanted, and the next bytes are held in memory again."""
        if self._file is None:
            if upto > self.base:
                del self.memory[: upto - self.base]
                self.base = upto
                self.room = SPILL_MEMORY - len(self.memory)
        elif upto >= self.size:
            self._file.close()
            self._file = None
            self.base = self.size
            self.room = SPILL_MEMORY

    def close(self) -> None:
        self.memory = bytearray()
        self.room = -1  # anything written after this goes through append (to a new file)
        if self._file is not None:
            self._file.close()
            self._file = None


# -- what a chunk tells the match's result when the log takes it (:mod:`referee.matches.ledger`) ----


@dataclass(frozen=True, slots=True)
class DealPlayed:
    """A deal of the segment's game ended: its record, and its place in the deal stream."""

    rec: DealRecord
    index: int


@dataclass(frozen=True, slots=True)
class GamePlayed:
    """The segment's game ended: its outcome after ``played`` deals."""

    outcome: GameOutcome
    played: int


@dataclass(frozen=True, slots=True)
class Progressed:
    """The match moved on, in words (``advance``: units of the progress bar)."""

    description: str
    advance: int


#: A chunk's events, in the order they happened; data, so a segment played on a cluster's worker
#: sends them back as they are.
ChunkEvent = DealPlayed | GamePlayed | Progressed


class Chunk:
    """A segment's part of one board: its log lines (``start``…``end`` of the segment's buffer,
    unless written live), what the match's result is told when the log takes it (``events``),
    and what the segment's bots did in it (faults, hello, remarks) for the match's entries."""

    __slots__ = ("index", "start", "end", "events", "faults", "forfeited", "hellos", "remarks")

    def __init__(self, index: int, start: int) -> None:
        self.index = index
        self.start = start
        self.end = start
        self.events: list[ChunkEvent] = []
        self.faults: list[tuple[int, list[Fault]]] = []
        self.forfeited: list[int] = []
        self.hellos: list[tuple[int, m.BotHello]] = []
        self.remarks: list[tuple[int, Counter[str]]] = []


class Segment:
    """One game in one orientation: its log lines chunk by chunk, until the match's log takes
    them (see the module docstring).  ``put`` writes lines to the match's log."""

    def __init__(self, game: int, orientation: int, put: Callable[[bytes], None], folder: Path | None) -> None:
        self.game = game
        self.orientation = orientation
        self._put = put
        self._spill = _Spill(folder)
        #: chunks begun so far
        self.begun = 0
        self._open: Chunk | None = None
        self._finished: dict[int, Chunk] = {}
        self.over = False
        #: the chunk the match's log takes now (written live), -1 before the log wants any
        self.wanted = -1
        #: the chunk being played is the one the log takes now: its lines go straight through
        #: (kept up to date wherever ``_open`` or ``wanted`` changes, :meth:`_route`)
        self.live = False
        self._changed = trio.Event()
        #: cancelled when the match no longer needs the segment (the SPRT decided, a failure)
        self.scope = trio.CancelScope()
        #: the segment's own part of each bot (its faults, its hello, its clock), by bot index
        self.entries: list[Entry] = []
        self._seen: list[int] = []
        self._remarks: list[Counter[str]] = []
        #: the deal stream position after the segment's game (games to a target)
        self.position = 0

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _route(self) -> None:
        self.live = self._open is not None and self._open.index == self.wanted

    def write(self, data: bytes) -> None:
        """A log line of the segment (the sink of its :class:`~referee.conversation.log.MatchLog`):
        three a move, so the usual case (held in memory) is appended here."""
        if self.live:
            self._put(data)
            return
        spill = self._spill
        n = len(data)
        if n <= spill.room:
            spill.memory += data
            spill.room -= n
            spill.size += n
        else:
            spill.append(data)

    def begin(self) -> None:
        """The segment's next chunk begins (the one before it, if any, is finished)."""
        self._end_open()
        self._open = Chunk(self.begun, self._spill.size)
        self.begun += 1
        self._route()
        if not self._seen:
            self._seen = [0] * len(self.entries)
            self._remarks = [Counter() for _ in self.entries]

    def event(self, event: ChunkEvent) -> None:
        """Tell the match's result ``event`` when its log takes the chunk being played."""
        assert self._open is not None
        self._open.events.append(event)

    def finish(self) -> None:
        """The segment is over: its last chunk is finished."""
        self._end_open()
        self.over = True
        self._notify()

    def _end_open(self) -> None:
        chunk = self._open
        if chunk is None:
            return
        chunk.end = self._spill.size
        for i, e in enumerate(self.entries):
            if len(e.faults) > self._seen[i]:
                chunk.faults.append((i, e.faults[self._seen[i]:]))
                self._seen[i] = len(e.faults)
            if e.forfeited:
                chunk.forfeited.append(i)
            if e.hello is not None:
                chunk.hellos.append((i, e.hello))
            new = e.remarks - self._remarks[i]
            if new:
                chunk.remarks.append((i, new))
                self._remarks[i] = Counter(e.remarks)
        self._finished[chunk.index] = chunk
        self._open = None
        self.live = False
        self._notify()

    async def turn(self) -> None:
        """Wait until the match's log takes the chunk just begun (lockstep)."""
        while not self.live:
            await self._changed.wait()

    async def take(self, index: int) -> Chunk | None:
        """Chunk ``index`` once it is finished, its lines written to the match's log; ``None``
        when the segment ended with fewer chunks.  From now on the chunk is written live."""
        self.wanted = index
        self._route()
        chunk = self._open
        if chunk is not None and chunk.index == index:
            for piece in self._spill.read(chunk.start, self._spill.size):
                self._put(piece)
            chunk.start = self._spill.size
            self._release()
        self._notify()  # a segment waiting for its turn (lockstep) may go
        while index not in self._finished:
            if self.over:
                return None
            await self._changed.wait()
        return self.finished(index)

    def finished(self, index: int) -> Chunk | None:
        """Chunk ``index`` if it is finished (its lines then written to the match's log), else
        ``None``, without waiting: what a cancelled :meth:`take` leaves, a chunk written live
        whose last line may already be in the log."""
        chunk = self._finished.pop(index, None)
        if chunk is not None:
            for piece in self._spill.read(chunk.start, chunk.end):
                self._put(piece)
            self._release()
        return chunk

    def _release(self) -> None:
        """Let the buffer go of every line the log has taken: all before the first line a chunk
        still waits with (the chunk being played, if it is not live, and the finished ones)."""
        waiting = [c.start for c in self._finished.values()]
        if self._open is not None:
            waiting.append(self._open.start)
        self._spill.release(min(waiting, default=self._spill.size))

    def played(self) -> Iterator[tuple[Chunk, bytes]]:
        """Every chunk of a segment played by itself (on a cluster's worker, the log never taking
        any), in order, with its log lines."""
        assert self.over
        for k in range(self.begun):
            chunk = self._finished[k]
            yield chunk, b"".join(self._spill.read(chunk.start, chunk.end))

    def restore(self, played: list[tuple[Chunk, bytes]]) -> None:
        """The chunks of the segment, played elsewhere (:meth:`played`), held for the log to
        take as if they had been played here; the segment is then over."""
        for chunk, data in played:
            chunk.start = self._spill.size
            self._spill.append(data)
            chunk.end = self._spill.size
            self._finished[chunk.index] = chunk
        self.begun = len(played)
        self.finish()

    def close(self) -> None:
        self._spill.close()
