"""The match log: one JSON object per line, everything needed to replay and verify a match.

Record kinds (the ``"k"`` field), in the order they appear:

``match``     the header: variant, players, options, bots, seed or deal file, time control;
              ``deal_limit`` when games stop, drawn, after that many deals, and ``opening``
              (each move's ``seat`` and play fields) when every game begins with a staged
              opening the referee plays itself (both ``referee check``'s).
``hello``     a bot process started and shook hands: ``bot`` (its label), ``start`` (1 for the
              first process of that slot, 2 for its first replacement…), ``line`` (its answer).
``game``      a game starts in one orientation: ``game``, ``orientation``, ``seating`` (bot
              index per seat).
``deal``      a deal starts: ``stream`` (its index in the deal stream), ``hands``/``undealt``
              (tile names), ``void`` (the redeal reason, or null); sea_kozel adds ``special``
              when the deal is played under one (``kind`` hundred/write_off/eggs, ``side``,
              ``deal`` of ``of``, ``total``; the fields that apply).
``out``       bytes written to a seat: ``seat``, ``t`` (seconds since the match started) and
              ``msgs``, the messages of that write.
``in``        a line read from a seat: ``seat``, ``t``, ``line`` (as text, even if not JSON).
``play``      a play the referee accepted: ``seat``, ``tile``, ``end``, ``ms`` (time taken),
              ``as`` (the move in words); ``closed``, ``stop``, ``declare``, ``train``
              (mexican_train) or ``place`` (kolbasa, whose ``end`` is null) only where the play
              had them; a move of the staged opening has ``staged: true`` and no ``ms``.
``fault``     a fault: the :class:`~referee.faults.Fault` fields; ``charged``, when the fault
              was found between deals, is the seat whose next deal it costs.
``deal_end``  the deal's record: reason, seat, values, wrote, totals, notes; ``rule`` in the
              games that name the rule that decided a deal (sea_kozel, general, blitz).
``game_end``  the game's outcome.
``sprt``      with ``--sprt``, after every finished pair: ``pairs``, ``llr``, ``lower``, ``upper``,
              ``decision`` ("H0", "H1" or null).
``stop``      the SPRT decided and the match stopped: ``reason`` ("sprt"), ``decision``, ``pairs``,
              ``llr``.  A sport game stopped early has no ``game_end``.
``result``    the match result (the same object ``--json`` writes).

Two runs with the same seed, deals and deterministic bots give the same log apart from the
timing fields ``t``, ``ms`` and ``time_ms`` (see :func:`strip_timings`).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO, Any

import msgspec

from protocol.messages import MAX_DEPTH, too_deep
from referee.engine.deal import Deal
from referee.engine.game import Special
from referee.engine.tiles import TILE_NAMES
from referee.errors import LogError

TIMING_KEYS = frozenset(("t", "ms", "time_ms", "bank_ms", "elapsed"))

_enc = msgspec.json.Encoder()


class MatchLog:
    """Writes a match log.  Cheap on the hot path: ``out`` records reuse the bytes that were
    written to the bot instead of encoding the messages again.

    Every method raises :class:`~referee.errors.LogError` when the file cannot be created or
    written (a folder, no permission, a full disk); after that the log is closed and writes
    nothing more, and :meth:`close` does not raise again.
    """

    def __init__(self, path: Path | None, clock: Callable[[], float],
                 on_record: Callable[[dict[str, Any]], None] | None = None,
                 on_out: Callable[[int, list[bytes]], None] | None = None, origin: float | None = None) -> None:
        self.path = path
        self._clock = clock  # a callable giving seconds since the match started
        #: the referee's clock at the match's start, when ``clock`` is that clock less it: then a
        #: caller that has just read the clock passes the reading (``now``) instead of the log
        #: reading it again (the turn's hot path)
        self.origin = origin
        #: sees every record :meth:`write` is given, before it is written (``referee check``
        #: reads the hellos and the plays from it)
        self.on_record = on_record
        #: sees the lines of every :meth:`out` (``referee check`` counts what a bot was offered)
        self.on_out = on_out
        self._file: IO[bytes] | None = None
        if path is not None:
            if path.is_dir():
                raise LogError(f"cannot write the log {path}: it is a folder")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._file = open(path, "wb", buffering=1 << 16)
            except FileExistsError:  # from mkdir: a file where a folder should be
                raise LogError(f"cannot write the log {path}: a part of {path.parent} is a file, not a folder") from None
            except OSError as exc:
                raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> LogError:
        """Stop writing, and the one-line error for ``exc``."""
        f, self._file = self._file, None
        if f is not None:
            try:
                f.close()
            except OSError:
                pass  # the buffered rest cannot be written either
        return LogError(f"cannot write the log {self.path}: {exc.strerror or exc}")

    def write(self, record: dict[str, Any]) -> None:
        if self.on_record is not None:
            self.on_record(record)
        if self._file is not None:
            try:
                self._file.write(_enc.encode(record) + b"\n")
            except OSError as exc:
                raise self._failed(exc) from None

    def out(self, seat: int, lines: list[bytes], data: bytes | None = None, now: float | None = None) -> None:
        """The lines written to ``seat`` in one write; ``data``, when given, is them joined;
        ``now``, the referee's clock read just now (see :attr:`origin`)."""
        if self.on_out is not None:
            self.on_out(seat, lines)
        if self._file is not None:
            # Each line is encoded JSON whose only newline is its last byte, so the messages
            # joined with commas are the lines joined, with newlines turned into commas.
            body = (b"".join(lines) if data is None else data)[:-1].replace(b"\n", b",")
            try:
                t = self._clock() if now is None or self.origin is None else now - self.origin
                self._file.write(b'{"k":"out","seat":%d,"t":%.6f,"msgs":[%s]}\n' % (seat, t, body))
            except OSError as exc:
                raise self._failed(exc) from None

    def inp(self, seat: int, line: bytes | str, now: float | None = None) -> None:
        """A line read from ``seat``: its bytes, or text already decoded (and cut short);
        ``now`` as in :meth:`out`."""
        if self._file is not None:
            text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            t = self._clock() if now is None or self.origin is None else now - self.origin
            try:
                self._file.write(b'{"k":"in","seat":%d,"t":%.6f,"line":%s}\n' % (seat, t, _enc.encode(text)))
            except OSError as exc:
                raise self._failed(exc) from None

    def flush(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as exc:
                raise self._failed(exc) from None

    def close(self) -> None:
        if self._file is not None:
            f, self._file = self._file, None
            try:
                f.close()
            except OSError as exc:
                self._file = f
                raise self._failed(exc) from None


def stderr_dir_of(log_path: Path) -> Path:
    """The folder beside a match log that holds its bots' stderr files."""
    return log_path.with_name(log_path.stem + ".stderr")


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
            candidate = path.with_name(f"{path.stem}-{k}{path.suffix}")
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


def special_record(sp: Special) -> dict[str, Any]:
    """A pending special state (sea_kozel) as the log and the replay show it: the fields that apply."""
    return {k: v for k, v in (("kind", sp.kind), ("side", sp.side), ("deal", sp.deal), ("of", sp.of), ("total", sp.total))
            if v is not None}


def deal_json(deal: Deal) -> dict[str, Any]:
    names = TILE_NAMES
    return {"hands": [[names[t] for t in hand] for hand in deal.hands], "undealt": [names[t] for t in deal.undealt]}


class CutShort(ValueError):
    """The log's last line has no newline: the log was cut in the middle of a record."""

    def __init__(self, path: Path, number: int) -> None:
        super().__init__(f"{path}: line {number} is cut short (no newline)")
        self.number = number


def read_log(path: Path, cut_ok: bool = False) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """The records of a log with their line numbers.

    Raises:
        ValueError: a line that is not a JSON object, naming the line.
        CutShort: with ``cut_ok``, a last line without its newline (whatever it holds), once
            the lines before it are read.
    """
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if cut_ok and not raw.endswith(b"\n"):
                raise CutShort(path, number)
            if not raw.strip():
                continue
            if too_deep(raw):
                raise ValueError(f"{path}: line {number} is JSON nested deeper than {MAX_DEPTH} levels")
            try:
                rec = json.loads(raw)
            except ValueError:
                raise ValueError(f"{path}: line {number} is not JSON") from None
            if not isinstance(rec, dict) or "k" not in rec:
                raise ValueError(f"{path}: line {number} is not a log record")
            yield number, rec


def strip_timings(obj: Any) -> Any:
    """A copy of a record without the fields that depend on the wall clock."""
    if isinstance(obj, dict):
        return {k: strip_timings(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [strip_timings(v) for v in obj]
    return obj
