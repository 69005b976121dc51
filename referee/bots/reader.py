"""Lines from a pipe or a stream: a reader owns its buffer and its reads, and splits what it
reads into lines (of bounded length, if it is given one).

:class:`LineReader` reads one non-blocking pipe's read end: a bot's stdout
(:class:`~referee.bots.process.BotProcess`), and the output of a league's match process on a cluster.
:class:`StreamLines` reads a trio stream: a match process's output, and its input, in a league
(``tournaments``).  Lines are bytes without their ``\\n`` (or ``\\r\\n``).  A reader never
raises for what the other end does: the end of the stream is ``None``, a line over the limit
:class:`LineTooLong`.  No method takes a timeout but :meth:`LineReader.line_within`, which waits
outside trio, and a read's ``stall``; callers put trio cancel scopes around the reads.
"""

from __future__ import annotations

import os
import select
import sys
import time

import trio

from referee.base.errors import LineTooLong
from referee.bots.pipes import Fd

CHUNK = 1 << 16  # bytes per read syscall
PREFIX = 200  # bytes of an overlong line kept for the error
BUDGET = 1 << 20  # bytes read without yielding, so a flooding writer cannot starve other tasks


class LineBuffer:
    """What a reader read and has not given out yet, split into lines of at most ``max_line``
    bytes, newline included (no limit when ``None``); ``name`` is how a :class:`LineTooLong`
    names the writer.  A line that grows past the limit is dropped as it comes."""

    def __init__(self, max_line: int | None = None, name: str = "") -> None:
        self.buf = bytearray()
        self.scanned = 0  # self.buf[:self.scanned] holds no newline
        self.discarding = False  # skipping the rest of an overlong line
        self.eof = False
        self.max_line = sys.maxsize if max_line is None else max_line
        self.name = name

    def unfinished_line(self) -> bytes:
        """What was written after the last complete line and not ended yet (a line without its
        newline, or one still half-flushed); the first 200 bytes."""
        return bytes(self.buf[:PREFIX])

    def _take(self) -> bytes | None:
        """Pop one complete line from the buffer, or ``None`` if there is none yet."""
        buf = self.buf
        i = buf.find(b"\n", self.scanned)
        if i < 0:
            self.scanned = len(buf)
            return None
        end = i - 1 if i and buf[i - 1] == 13 else i  # 13 is '\r'
        line = bytes(buf[:end])
        del buf[: i + 1]
        self.scanned = 0
        return line

    def _too_long(self) -> LineTooLong:
        """Drop the buffered start of an overlong line and skip the rest of it as it comes."""
        prefix = bytes(self.buf[:PREFIX])
        self.buf.clear()
        self.scanned = 0
        self.discarding = True
        return LineTooLong(
            f"bot {self.name!r} wrote a line longer than {self.max_line} bytes, starting {prefix[:60]!r}",
            bot=self.name,
            prefix=prefix,
            limit=self.max_line,
        )

    def _keep(self, data: bytes | bytearray) -> None:
        """Buffer what was read (the end of the stream when empty), skipping an overlong line."""
        if not data:
            self.eof = True
        elif not self.discarding:
            self.buf += data
        elif (i := data.find(b"\n")) >= 0:
            self.discarding = False
            self.buf += data[i + 1 :]


class LineReader(Fd, LineBuffer):
    """The read end ``fd`` (non-blocking) of a pipe, as lines.  The reader owns the descriptor:
    :meth:`~referee.bots.pipes.Fd.close` closes it."""

    def __init__(self, fd: int, max_line: int | None = None, name: str = "") -> None:
        Fd.__init__(self, fd)
        LineBuffer.__init__(self, max_line, name)
        self._poll = select.poll()  # "anything to read?" without a failing read
        self._poll.register(fd, select.POLLIN)

    async def read_line(self, stall: float | None = None) -> bytes | None:
        """The next line, or ``None`` at the end of the stream (or once the reader is closed).

        When a line is already buffered or in the pipe this costs at most one read syscall and
        does not yield to other tasks (a bot's turn is the referee's hot path); it waits
        otherwise, through trio.  ``stall``: at most so many seconds without a byte arriving.

        Raises:
          LineTooLong: the line is longer than ``max_line`` bytes, newline included.  The rest
            of that line is skipped, so the next call returns the line after it.
          trio.TooSlowError: nothing arrived for ``stall`` seconds.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        skipped = 0
        while True:
            line = self._take()
            if line is not None:
                return line
            if len(self.buf) >= self.max_line:
                raise self._too_long()
            try:
                n = self._fill()
            except BlockingIOError:
                try:
                    if stall is None:
                        await trio.lowlevel.wait_readable(self.fd)
                    else:
                        with trio.fail_after(stall):
                            await trio.lowlevel.wait_readable(self.fd)
                except trio.ClosedResourceError:  # closed meanwhile
                    return None
                continue
            if not n:
                return None
            if self.discarding:
                skipped += n
                if skipped >= BUDGET:  # an endless line must not keep us from being cancelled
                    skipped = 0
                    await trio.lowlevel.checkpoint()

    def line_nowait(self) -> bytes | None:
        """The next line if it is buffered or in the pipe now (one read at most), else ``None``.

        Never waits and never raises: whenever :meth:`read_line` would wait, raise or skip an
        overlong line, this returns ``None`` and leaves it all to :meth:`read_line` (what it
        read stays buffered).
        """
        line = self._take()
        if line is None and not self.discarding and len(self.buf) < self.max_line:
            try:
                if self._fill():
                    line = self._take()
            except BlockingIOError:
                pass
        return line

    def line_within(self, seconds: float) -> bytes | None:
        """Like :meth:`line_nowait`, but block the thread up to ``seconds`` for the line.

        This waits in ``poll(2)`` outside trio's event loop, so nothing else in the loop runs
        meanwhile; the referee keeps ``seconds`` short (about a millisecond).  It pays because a
        bot that answers at once is then read without a trip through the scheduler, which costs
        several times a pipe round trip.  Returns ``None`` when no whole line came in time, or
        whenever :meth:`read_line` would have something to report.
        """
        fd = self.fd
        if not self.buf and fd >= 0 and not self.eof and not self.discarding:
            # The usual turn: nothing buffered, and the answer is in the pipe as one whole line.
            # One read, and the line is that read (line_nowait's way costs five calls more).
            try:
                data = os.read(fd, min(CHUNK, self.max_line))
            except BlockingIOError:
                pass  # not yet: wait below
            else:
                n = len(data)
                if n and data.find(b"\n") == n - 1:
                    return data[:-2] if n > 1 and data[-2] == 13 else data[:-1]  # 13 is '\r'
                if not n:
                    self.eof = True  # read_line reports it
                    return None
                self.buf += data  # as _fill would have read it
        line = self.line_nowait()
        if line is not None or self.fd < 0 or self.eof or self.discarding:
            return line
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self._poll.poll(max(1, int(left * 1000 + 0.999))):
                return None
            line = self.line_nowait()
            if line is not None or self.eof or self.discarding or len(self.buf) >= self.max_line:
                return line

    def ready_lines(self) -> list[bytes]:
        """Every complete line already buffered or readable right now; never waits.

        A line still incomplete stays buffered for :meth:`read_line`, and so does the end of
        the stream, which :meth:`read_line` reports.  Reads at most about 1 MiB per call, so a
        writer that never pauses cannot keep it busy.

        Raises:
          LineTooLong: the first line not yet returned is overlong (as in :meth:`read_line`).
            When complete lines come before it, they are returned and the next call raises.
        """
        # The usual answer, before every turn, is "nothing": a poll says so for a third of
        # the cost of a read that fails with EAGAIN (and the exception it raises).
        if not self.buf and self.fd >= 0 and not self.eof and not self._poll.poll(0):
            return []
        lines = []
        budget = BUDGET
        while True:
            line = self._take()
            if line is not None:
                lines.append(line)
                continue
            if len(self.buf) >= self.max_line:
                if lines:
                    return lines
                raise self._too_long()
            if budget <= 0:
                return lines
            try:
                n = self._fill()
            except BlockingIOError:
                return lines
            if not n:
                return lines
            budget -= n

    def _fill(self) -> int:
        """One read into the buffer; the number of bytes read, 0 at end of stream.

        Reads at most what keeps the buffer within ``max_line``, which is enough since the
        buffer never holds a complete line when this is called.  Raises BlockingIOError when
        the pipe is empty.
        """
        if self.eof or self.fd < 0:
            return 0
        data = os.read(self.fd, min(CHUNK, self.max_line - len(self.buf)))
        self._keep(data)
        return len(data)


class StreamLines(LineBuffer):
    """A trio stream's lines (no limit on their length unless ``max_line`` is given)."""

    def __init__(self, stream: trio.abc.ReceiveStream, max_line: int | None = None, name: str = "") -> None:
        super().__init__(max_line, name)
        self.stream = stream

    async def read_line(self, stall: float | None = None) -> bytes | None:
        """The next line, or ``None`` at the end of the stream (what was buffered of an
        unfinished line stays in :attr:`buf`).

        Raises:
          LineTooLong: as :meth:`LineReader.read_line`.
          trio.TooSlowError: nothing arrived for ``stall`` seconds.
        """
        while True:
            line = self._take()
            if line is not None:
                return line
            if len(self.buf) >= self.max_line:
                raise self._too_long()
            if self.eof:
                return None
            if stall is None:
                self._keep(await self.stream.receive_some())
            else:
                with trio.fail_after(stall):
                    self._keep(await self.stream.receive_some())

    async def until_eof(self) -> None:
        """Return at the end of the stream; what arrives meanwhile is kept for :meth:`read_line`."""
        while not self.eof:
            self._keep(await self.stream.receive_some())
