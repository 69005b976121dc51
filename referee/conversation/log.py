"""The match log: one JSON object per line, everything needed to play a match again and verify it.

The records are the types of :mod:`referee.records.records` (the field reference); this module writes
them: :class:`MatchLog` is the one writer.  ``out``, ``in`` and ``play`` records, written on every
move, are built by hand from the bytes the referee already has (:mod:`referee.conversation.handmade`:
exactly what encoding the record would give); every other record is encoded from its struct.

A log whose name ends in ``.gz``, in any case (``match.jsonl.gz``, ``M.JSONL.GZ``), is written gzip-compressed as it goes
(:class:`GzipSink`), and every reader of logs reads it as it is (:func:`referee.records.records.log_lines`).

Two runs with the same seed, deals and deterministic bots give the same log apart from the
timing fields ``t`` and ``ms`` (and a turn's ``time_ms`` and ``bank_ms`` under a bank), see
:func:`referee.records.records.strip_timings`.
"""

from __future__ import annotations

import itertools
import operator
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO

import msgspec

from protocol import messages as m
from referee.base.errors import LogError
from referee.conversation.handmade import PlayRecords, in_record, out_record
from referee.conversation.lines import Line
from referee.engine.core.deal import Deal
from referee.engine.core.game import Special
from referee.engine.core.tiles import TILE_NAMES
from referee.records.records import GZIP_SUFFIX, Exit, Play, Record, SpecialRecord, encode, is_gzip_name

_enc = msgspec.json.Encoder()


def seconds(us: int) -> bytes:
    """Microseconds as the log writes a time: seconds with six decimals, exactly."""
    return b"%d.%06d" % divmod(us, 1_000_000)


#: gzip's level for compressed logs: 6 (gzip's default) makes a sport log of the C bots 14 times
#: smaller for about 0.6 ms of CPU a deal (bench/README.md, "Compressed logs")
GZIP_LEVEL = 6


class GzipSink:
    """A gzip stream written to a file as a log is written: lines are gathered and compressed
    64 KiB at a time; :meth:`flush` (at every deal's end) pushes all of it to the file as
    a complete deflate block, so a log cut there (a crash, Ctrl-C, a full disk) decompresses
    to every line written before.  The gzip header has no name and no time in it: the same
    lines make the same bytes."""

    __slots__ = ("_file", "_zip", "_parts", "_size")

    def __init__(self, f: IO[bytes]) -> None:
        self._file = f
        self._zip = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)  # 31: the gzip container
        self._parts: list[bytes] = []
        self._size = 0

    def write(self, data: bytes) -> None:
        self._parts.append(data)
        self._size += len(data)
        if self._size >= 1 << 16:
            self._compress()

    def _compress(self) -> None:
        if self._parts:
            self._file.write(self._zip.compress(b"".join(self._parts)))
            self._parts = []
            self._size = 0

    def flush(self) -> None:
        self._compress()
        self._file.write(self._zip.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        try:
            self._compress()
            self._file.write(self._zip.flush(zlib.Z_FINISH))
        finally:
            self._file.close()


class MatchLog:
    """Writes a match log.  Cheap on the hot path: ``out`` records reuse the bytes that were
    written to the bot instead of encoding the messages again.

    ``sink`` takes every line instead of a file (``verify`` compares each with the log it
    checks).  A ``path`` named ``*.gz`` is written gzip-compressed (:class:`GzipSink`).  Every
    method raises :class:`~referee.base.errors.LogError` when the file cannot be created or written (a
    folder, no permission, a full disk); after that the log is closed and writes nothing more,
    and :meth:`close` does not raise again.
    """

    def __init__(self, path: Path | None, *, on_record: Callable[[Record], None] | None = None,
                 sink: Callable[[bytes], object] | None = None) -> None:
        self.path = path
        #: sees every record :meth:`write` is given, before it is written (``referee check``
        #: reads the hellos and the plays from it)
        self.on_record = on_record
        self._file: IO[bytes] | GzipSink | None = None
        self._sink = sink
        #: the usual play's records, built by hand
        self._plays = PlayRecords()
        if path is not None:
            if path.is_dir():
                raise LogError(f"cannot write the log {path}: it is a folder")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._file = open(path, "wb", buffering=1 << 16)
                if is_gzip_name(path):  # .gz in any case
                    self._file = GzipSink(self._file)
            except FileExistsError:  # from mkdir: a file where a folder should be
                raise LogError(f"cannot write the log {path}: a part of {path.parent} is a file, not a folder") from None
            except OSError as exc:
                raise self._failed(exc) from None
            self._sink = self._file.write

    def _failed(self, exc: OSError) -> LogError:
        """Stop writing, and the one-line error for ``exc``."""
        f, self._file = self._file, None
        self._sink = None
        if f is not None:
            try:
                f.close()
            except OSError:
                pass  # the buffered rest cannot be written either
        return LogError(f"cannot write the log {self.path}: {exc.strerror or exc}")

    def _put(self, data: bytes) -> None:
        if self._sink is not None:
            try:
                self._sink(data)
            except OSError as exc:
                raise self._failed(exc) from None

    def write(self, record: Record) -> None:
        if self.on_record is not None:
            self.on_record(record)
        if self._sink is not None:
            self._put(encode(record))

    def raw(self, data: bytes) -> None:
        """Log lines already encoded (a segment's, taken in board order: :mod:`referee.matches.segments`)."""
        if self._sink is not None:
            self._put(data)

    def out(self, seat: int, lines: list[bytes], data: bytes, us: int, bot: str | None = None, *, stuck: bool = False,
            exit: Exit | None = None) -> None:
        """The lines written to ``seat`` in one write (``data``: them joined), begun ``us``
        microseconds after the match began; ``bot``: the process's label, for what goes out as the
        match closes (``seat`` -1); ``stuck`` or ``exit``: what became of a write that asked
        nothing (:class:`referee.records.records.Out`)."""
        sink = self._sink
        if sink is not None:
            try:
                sink(out_record(seat, us, data, bot, stuck, exit))
            except OSError as exc:
                raise self._failed(exc) from None

    def inp(self, seat: int, line: Line, us: int, wait: int = 0) -> None:
        """A line read from ``seat``, ``us`` microseconds after the match began (``wait``:
        microseconds of the referee's own wait for a CPU not counted against the bot)."""
        sink = self._sink
        if sink is not None:
            try:  # as in out()
                sink(in_record(seat, line, us, wait))
            except OSError as exc:
                raise self._failed(exc) from None

    def play(self, seat: int, msg: m.Play, elapsed: int | None, played: str) -> None:
        """The ``play`` record of a play accepted from ``seat`` (:func:`play_record`).  The usual
        play (no field only some games use, nobody watching the records) is built by hand
        (:class:`~referee.conversation.handmade.PlayRecords`)."""
        if self.on_record is None and elapsed is not None:
            line = self._plays.record(seat, msg, elapsed, played)
            if line is not None:
                sink = self._sink
                if sink is not None:
                    try:  # as in out()
                        sink(line)
                    except OSError as exc:
                        raise self._failed(exc) from None
                return
        self.write(play_record(seat, msg, elapsed, played))

    def flush(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as exc:
                raise self._failed(exc) from None

    def close(self) -> None:
        self._sink = None
        if self._file is not None:
            f, self._file = self._file, None
            try:
                f.close()
            except OSError as exc:
                self._file = f
                raise self._failed(exc) from None


def play_record(seat: int, msg: m.Play, elapsed: int | None, played: str) -> Play:
    """The log's record of an accepted play (``elapsed`` in microseconds; ``None`` for a move of
    a staged opening, made by the referee); the fields only some games use only where they are
    set and true, so a line game's record is what it always was."""
    rec = Play(seat, None if msg.tile is None else msg.tile, msg.end, played, None if elapsed is None else elapsed / 1000,
               staged=elapsed is None)
    if _extras(msg) != _NO_EXTRAS:  # the usual play has none: one look instead of one per field
        for name in m.PLAY_EXTRAS:
            value = getattr(msg, name)
            if value is not m.UNSET and value is not False:
                setattr(rec, name, value)
    return rec


_extras = operator.attrgetter(*m.PLAY_EXTRAS)
_NO_EXTRAS = (m.UNSET,) * len(m.PLAY_EXTRAS) if len(m.PLAY_EXTRAS) > 1 else m.UNSET


def stderr_dir_of(log_path: Path) -> Path:
    """The folder beside a match log that holds its bots' stderr files (``m.stderr`` for
    ``m.jsonl`` and for ``m.jsonl.gz``)."""
    return log_path.with_name(_stem(log_path) + ".stderr")


def _stem(log_path: Path) -> str:
    """A log's name without its suffix (``.jsonl``, or ``.jsonl.gz`` for a compressed one)."""
    name = log_path.name[: -len(GZIP_SUFFIX)] if is_gzip_name(log_path.name) else log_path.name
    return name[: -len(Path(name).suffix)] if Path(name).suffix else name


def fresh_path(path: Path, *, directory: bool = False) -> Path:
    """``path``, or the first free of ``name-2``, ``name-3``… beside it, claimed at once (an empty
    file, or a folder, is made) so that two runs started together never share it.

    A log is free when neither it nor its stderr folder exists; a folder when it does not exist.
    Default log names go through this, so a run never overwrites an earlier one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for k in itertools.count(1):
        if k == 1:
            candidate = path
        elif directory:
            candidate = path.with_name(f"{path.name}-{k}")
        else:
            stem = _stem(path)
            candidate = path.with_name(f"{stem}-{k}{path.name[len(stem):]}")
        try:
            if directory:
                candidate.mkdir()
            elif stderr_dir_of(candidate).exists():
                continue
            else:
                os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            continue
        return candidate
    raise AssertionError("unreachable")


def special_record(sp: Special) -> SpecialRecord:
    """A pending special state (sea_kozel) as the log and the replay show it: the fields that apply."""
    return SpecialRecord(sp.kind, sp.side, sp.deal, sp.of, sp.total)


def tile_names(deal: Deal) -> tuple[list[list[str]], list[str]]:
    """A deal's hands and undealt tiles by name, as a ``deal`` record holds them."""
    names = TILE_NAMES
    return [[names[t] for t in hand] for hand in deal.hands], [names[t] for t in deal.undealt]
