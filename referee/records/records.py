"""The match log's records as types: one msgspec struct per record kind, one writer, one reader.

A match log is JSON lines; each line is one record, tagged by its ``"k"`` field.  This module is
the only place that knows their shape: :class:`referee.conversation.log.MatchLog` writes them, :func:`read_records`
reads them back, and replay, verify, the web report, ``referee check`` and leagues read these
types, never a record's fields by string key.

Two formats share the kinds (:attr:`Header.format`):

* **format 1** (logs written before round 3): the same bot processes play every orientation;
  an ``in`` record holds the line read as text (a line that did not decode cut short, and
  bytes that are not UTF-8 replaced); times are seconds with six decimals.
* **format 2**: every orientation has processes of its own (the ``hello`` record says which:
  ``o``, ``b``, ``slot``); every time is a whole number of microseconds since the match began
  (``t`` in seconds, six decimals, exact); an ``in`` record keeps what the referee read
  exactly (``line``, or ``b64`` for bytes that are not UTF-8) when it is at most
  :data:`KEPT` bytes, and otherwise its size, the start of it and what the referee made of it
  (``judged``), which is all the referee ever acts on (:mod:`referee.conversation.lines`); a fault keeps
  what the referee saw of the process (``exit``, ``overlong``), and a ``hello`` everything
  read during the handshake.  Whatever a bot writes, a move adds a bounded number of bytes.

Record kinds, in the order they appear: ``match`` (:class:`Header`), ``hello``, ``game``,
``deal``, ``out``, ``in``, ``play``, ``fault``, ``forfeit``, ``forfeited_deal``, ``deal_end``,
``game_end``, ``sprt``, ``stop``, ``interrupted`` (a match stopped before its end), ``result``.  PROTOCOL.md ("The match log") explains them for
people; the docstrings here are the field reference.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, Annotated, Any, Final, Literal

import msgspec
from msgspec import Meta, Struct

from protocol import messages as m
from referee.engine.core.shuffle import SPLITMIX64, Derivation
from referee.records.summary import MatchSummary
from referee.stats.sprt import SprtSpec

#: The newest log format, the one :class:`referee.conversation.log.MatchLog` writes.
FORMAT: Final = 2
#: A bot's line is kept whole in the log up to this many bytes; a longer one is kept as its size,
#: its start and what the referee made of it.
KEPT: Final = 1024

Count = Annotated[int, Meta(ge=0, le=1 << 62)]
Seat = Annotated[int, Meta(ge=-1, le=7)]
Seconds = Annotated[float, Meta(ge=0, le=1e12)]
Ms = Annotated[float, Meta(ge=0, le=1e15)]


class _Record(Struct, tag_field="k", forbid_unknown_fields=True, omit_defaults=True):
    pass


# -- the header --------------------------------------------------------------------------------


class TimeControlRecord(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """In seconds; ``margin``: how late past a move's allowance an answer was still accepted
    (absent: none, as in every log before it was added)."""

    startup: Annotated[float, Meta(ge=0, le=86400)]
    move: Annotated[float, Meta(ge=0, le=86400)]
    bank: Annotated[float, Meta(ge=0, le=86400)] | None
    increment: Annotated[float, Meta(ge=0, le=86400)]
    margin: Annotated[float, Meta(gt=0, le=86400)] | None = None


class HeaderBot(Struct, forbid_unknown_fields=True, omit_defaults=True):
    name: str
    command: list[str]
    #: the bot's own time control, where it is not the match's (the person at the table of
    #: ``referee play``, who has no clock unless given one); absent: the match's
    time_control: TimeControlRecord | None = None


class OpeningMove(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A move of a staged opening: the seat and the play's fields."""

    seat: Seat
    tile: m.TileJSON | None = None
    end: str | None = None
    closed: bool | msgspec.UnsetType = msgspec.UNSET
    stop: bool | msgspec.UnsetType = msgspec.UNSET
    declare: str | msgspec.UnsetType = msgspec.UNSET
    train: str | msgspec.UnsetType = msgspec.UNSET
    place: str | msgspec.UnsetType = msgspec.UNSET


class Header(_Record, tag="match"):
    """The match as it was set up: everything needed to deal its deals and play it again."""

    variant: str
    players: Annotated[int, Meta(ge=2, le=8)]
    options: dict[str, Any]
    deals: Count | None
    games: Count | None
    seed: int | None
    deals_file: str | None
    bots: list[HeaderBot]
    orientations: list[list[int]]
    time_control: TimeControlRecord
    max_faults: Annotated[int, Meta(ge=1, le=1 << 31)]
    max_line: Annotated[int, Meta(ge=1, le=1 << 34)]
    confidence: Annotated[float, Meta(gt=0, lt=1)]
    sprt: SprtSpec | None
    deal_limit: Count | None = None
    opening: list[OpeningMove] | None = None
    #: 1 (before round 3) or 2 (:data:`FORMAT`); see the module docstring
    format: Annotated[int, Meta(ge=1, le=FORMAT)] = 1
    #: how deals come from the seed (:mod:`referee.engine.core.shuffle`): written in every header the
    #: referee writes now, whichever it is; absent (format 1): ``splitmix64`` (see :attr:`derivation`)
    deals_from: Derivation | None = None
    #: the deal file's SHA-256, so that verify knows it has the same file
    deals_file_sha256: str | None = None
    #: the event the match belongs to (``referee match --event``), shown in its reports; absent: none
    event: str | None = None

    @property
    def derivation(self) -> Derivation:
        """The derivation the match's deals came from: ``deals_from``, or ``splitmix64`` where the
        header has none (it is written always, so that a header's bytes never depend on whether
        its value is the default)."""
        return self.deals_from or SPLITMIX64

    def __post_init__(self) -> None:
        """What no field's type can say: every seating has ``players`` seats, each one of
        ``bots``; a format-2 match from a deal file names the file's SHA-256 (the referee writes it
        in every such header, and verify could not otherwise tell the file is the one played)."""
        for seating in self.orientations:
            if len(seating) != self.players:
                raise ValueError(f"players is {self.players}, but the seating {seating} has {len(seating)} seats")
            if any(not 0 <= b < len(self.bots) for b in seating):
                raise ValueError(f"the seating {seating} names a bot that is not one of the {len(self.bots)} in bots")
        if self.format >= 2 and self.deals_file is not None and self.deals_file_sha256 is None:
            raise ValueError("the header names a deal file but not its SHA-256 (`deals_file_sha256`), "
                             "which the referee writes in every such header")


# -- processes ---------------------------------------------------------------------------------


class Exit(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A bot process found gone: while the referee read (``op`` ``"read"``) or wrote
    (``"write"``) to it; its exit status (negative: the signal) if it had one; ``what`` the
    referee's words for it."""

    op: Literal["read", "write"]
    what: str
    status: int | None = None


class Overlong(Struct, forbid_unknown_fields=True):
    """A bot wrote a line longer than ``max_line``: the referee's words and the line's start."""

    op: Literal["read", "ready"]
    what: str
    prefix: str


class Judged(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """What the referee made of a line (:func:`referee.conversation.lines.judge`): a ``message`` (``msg``, its
    long strings cut), a message of an ``unknown`` type (``type``, cut), or a ``bad`` line:
    ``reason`` ``deep`` (nested too deeply), ``json`` (not JSON), ``object`` (JSON, but not an
    object) or ``schema`` (an object that does not fit the protocol; ``type`` when it names
    one), and ``why``, the decoder's words."""

    kind: Literal["message", "unknown", "bad"]
    msg: m.FromBotMessage | None = None
    type: str | None = None
    reason: Literal["deep", "json", "object", "schema"] | None = None
    why: str | None = None


class Heard(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A line read from a bot as the log keeps it (also inside ``hello``): exactly (``line``, or
    ``b64``), or, past :data:`KEPT` bytes, its ``size``, its start (``evidence``) and ``judged``."""

    t: Seconds | None = None
    line: str | None = None
    b64: str | None = None
    size: Count | None = None
    evidence: str | None = None
    judged: Judged | None = None

    def raw(self) -> bytes | None:
        """The line's bytes when the log keeps them whole, else ``None``."""
        if self.b64 is not None:
            return base64.b64decode(self.b64)
        if self.line is not None and self.size is None:
            return self.line.encode()
        return None


class Hello(_Record, tag="hello"):
    """A bot process started: the handshake.  Format 2 says which process it is (orientation
    ``o``, bot index ``b``, ``slot``), the limits the referee's hello told it (``limits``) and
    when that went out (``t``), every line read (``read``) and what else the referee saw: it
    could not start (``error``), it ended (``exit``), it wrote too long a line (``overlong``),
    or it said nothing in time (``unfinished``: what it wrote without a newline; ``unread``:
    bytes of the hello it left unread, or null when that cannot be told).  Format 1 has the
    answer's text in ``line``."""

    bot: str
    start: Count
    seat: Seat
    o: Count | None = None
    b: Count | None = None
    slot: Count | None = None
    limits: m.Limits | None = None
    t: Seconds | None = None
    read: list[Heard] | None = None
    ms: Ms | None = None
    error: str | None = None
    exit: Exit | None = None
    overlong: Overlong | None = None
    unfinished: str | None = None
    unread: int | None = None
    line: str | None = None


# -- games and deals ---------------------------------------------------------------------------


class Game(_Record, tag="game"):
    game: Count
    orientation: Count
    seating: list[int]


class SpecialRecord(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A special state a deal is played under (sea_kozel)."""

    kind: str
    side: int | None = None
    deal: int | None = None
    of: int | None = None
    total: int | None = None


class Deal(_Record, tag="deal"):
    game: Count
    orientation: Count
    deal: Count
    stream: Count
    hands: list[list[str]]
    undealt: list[str]
    void: str | None = None
    special: SpecialRecord | None = None


class Out(_Record, tag="out"):
    """Bytes written to a seat: the messages of one write, and when it began.  What goes out as
    the match closes (each process's last ``game_end`` and the ``match_end``) has ``seat`` -1 and
    the process's label in ``bot``.  A write that asks nothing (a deal's end) is logged once it
    is done, with what the referee saw: ``stuck`` (the bot read none of it for a move's time),
    or ``exit`` (the process was gone)."""

    seat: Seat
    t: Seconds
    msgs: list[m.ToBotMessage]
    bot: str | None = None
    stuck: bool = False
    exit: Exit | None = None


class In(_Record, tag="in"):
    """A line read from a seat (see :class:`Heard` for its fields; ``wait``: milliseconds the
    referee waited for a CPU between the turn's write and this read, not counted against the
    bot, logged for an answer that would otherwise be late: PROTOCOL.md, "Limits")."""

    seat: Seat
    t: Seconds
    wait: Ms | None = None
    line: str | None = None
    b64: str | None = None
    size: Count | None = None
    evidence: str | None = None
    judged: Judged | None = None

    def heard(self) -> Heard:
        return Heard(self.t, self.line, self.b64, self.size, self.evidence, self.judged)


class Play(_Record, tag="play"):
    """A play the referee accepted (``as`` is the move in words; ``staged``: made by the referee
    from the header's opening, no bot asked, no ``ms``; ``over``: milliseconds its line was read
    past the move's allowance, accepted within the time control's ``margin``)."""

    seat: Seat
    tile: m.TileJSON | None
    end: str | None
    as_: str = msgspec.field(name="as")
    ms: Ms | None = None
    closed: bool = False
    stop: bool = False
    declare: str | None = None
    train: str | None = None
    place: str | None = None
    staged: bool = False
    over: Ms | None = None


class Fault(_Record, tag="fault"):
    """A fault (:class:`referee.conversation.faults.Fault`), with what the referee saw of the process
    (``exit``, ``overlong``); ``charged``: the seat whose next deal a fault found between deals
    costs."""

    kind: str
    bot: str
    seat: Seat
    game: Count
    deal: Count
    detail: str
    line: str | None = None
    charged: Seat | None = None
    exit: Exit | None = None
    overlong: Overlong | None = None


class Forfeit(_Record, tag="forfeit"):
    bot: str
    faults: Count


class ForfeitedDeal(_Record, tag="forfeited_deal"):
    seat: Seat
    bot: str


class DealEnd(_Record, tag="deal_end"):
    game: Count
    orientation: Count
    deal: Count
    reason: str
    seat: int | None
    values: list[int]
    wrote: list[int]
    totals: list[int]
    notes: list[str]
    rule: str | None = None


class GameEnd(_Record, tag="game_end"):
    game: Count
    orientation: Count
    totals: list[int]
    winners: list[int]
    losers: list[int]
    dry: list[int]
    reason: str


class Sprt(_Record, tag="sprt"):
    pairs: Count
    llr: float
    lower: float
    upper: float
    decision: str | None


class Stop(_Record, tag="stop"):
    """The SPRT decided after ``pairs`` boards; ``unfinished``: the boards begun past them (their
    processes were ended, their records and results left out).  How many were begun depends on
    the lanes and on the machine's speed, not on the match, so it is not compared by ``verify``
    and :func:`strip_timings` drops it."""

    reason: str
    decision: str | None
    pairs: Count
    llr: float
    unfinished: Count | None = None


class Interrupted(_Record, tag="interrupted"):
    """The match was stopped before its end (Ctrl-C, SIGTERM or SIGHUP, or its caller gave up on
    it): what follows is only what the referee sent as it closed; there is no result."""

    why: str = "stopped before its end"


class Result(MatchSummary, tag="result", tag_field="k", forbid_unknown_fields=True):
    """The match result: the same object ``--json`` writes, less the deal and game lists."""


Record = (Header | Hello | Game | Deal | Out | In | Play | Fault | Forfeit | ForfeitedDeal | DealEnd | GameEnd | Sprt | Stop
          | Interrupted | Result)

_decoder = msgspec.json.Decoder(Record)
_encoder = msgspec.json.Encoder()


def encode(record: Record) -> bytes:
    """One record as a log line, newline included."""
    return _encoder.encode(record) + b"\n"


class Damaged(ValueError):
    """A line of a log that is not a record of this module: the message names the file and the
    line in one line."""


class CutShort(Damaged):
    """The log's last line has no newline: the log was cut in the middle of a record."""

    def __init__(self, path: Path, number: int) -> None:
        super().__init__(f"{path}: line {number} is cut short (no newline)")
        self.number = number


def decode(raw: bytes, path: Path | str = "the log", number: int = 0) -> Record:
    """One log line as its record.

    Raises:
        Damaged: not JSON, too deeply nested, or not a record (naming the field that is wrong).
    """
    if m.too_deep(raw):
        raise Damaged(f"{path}: line {number} is JSON nested deeper than {m.MAX_DEPTH} levels")
    try:
        return _decoder.decode(raw)
    except msgspec.ValidationError as exc:
        kind = _kind(raw)
        what = f"a {kind!r} record" if kind else "a record"
        raise Damaged(f"{path}: line {number} is not {what} of a match log: {exc}") from None
    except msgspec.DecodeError:
        raise Damaged(f"{path}: line {number} is not JSON") from None


def _kind(raw: bytes) -> str | None:
    try:
        k = msgspec.json.decode(raw, type=dict[str, Any]).get("k")
    except msgspec.DecodeError:
        return None
    return k if isinstance(k, str) and len(k) <= 20 else None


class TooLarge(Damaged):
    """A log past the bounds of what the referee writes (:class:`Bounds`): a line or the whole
    larger than any match could make, or empty lines in bulk.  Read no further."""


#: The longest line read from a log before its header says more: the referee's own bound on a
#: line (``--max-line`` is at most 16 MiB, and a bot's line is logged whole only up to
#: :data:`KEPT` bytes, so no record of a move comes near it).
LONGEST_LINE: Final = 1 << 24
#: What one fault may add to the result record's line (its detail and the evidence, escaped):
#: the result lists every fault, at most ``max_faults`` a bot.
FAULT_BYTES: Final = 4096
#: The longest result line read, however many faults the header allows.
LONGEST_RESULT: Final = 1 << 28
#: The most one deal adds to a log: measured at 20 to 40 KB (kozel, mexican_train, kolbasa of
#: the sample bots); a move adds at most 17 records of a bot's lines, under 8 KiB each, and a
#: deal has at most some hundreds of moves (kolbasa's knives included): 16 MiB is generous.
DEAL_BYTES: Final = 16 << 20
#: What a match adds besides its deals: the header, hellos, the SPRT's records, the result, and
#: each bot's lines of unknown types (1 MiB of a bot's bytes a match, logged as records).
MATCH_BYTES: Final = 64 << 20
BOT_BYTES: Final = 16 << 20
#: Empty lines a log may hold: the referee writes none, so more are a log made to cost time.
MOST_EMPTY: Final = 1024
#: Deals in a game to a target with no deal limit in its header (the engine's own, MAX_DEALS).
_TARGET_DEALS: Final = 500


class Bounds:
    """How much of a log a reader takes, so that a log cannot cost more memory or time than the
    match it claims to be: a line at most ``line`` bytes (:data:`LONGEST_LINE` until the header
    is read), the whole at most ``total`` bytes (none until then), empty lines at most
    :data:`MOST_EMPTY`.  :meth:`fit` sets them from the header."""

    __slots__ = ("line", "total")

    def __init__(self) -> None:
        self.line = LONGEST_LINE
        self.total: int | None = None

    def fit(self, header: Header) -> None:
        """The bounds of the match ``header`` describes: a line of :data:`LONGEST_LINE` (the
        result's more, by :data:`FAULT_BYTES` for every fault it may list), and a whole of
        :data:`DEAL_BYTES` for every deal it may play, :data:`MATCH_BYTES` and :data:`BOT_BYTES`
        a bot."""
        bots = len(header.bots)
        faults = bots * header.max_faults * FAULT_BYTES
        self.line = min(LONGEST_LINE + faults, LONGEST_RESULT)
        per_game = header.deals or header.deal_limit or _TARGET_DEALS
        deals = len(header.orientations) * (header.games or 1) * per_game
        self.total = deals * DEAL_BYTES + MATCH_BYTES + bots * BOT_BYTES + self.line


def read_records(path: Path, cut_ok: bool = False) -> Generator[tuple[int, Record, bytes], None, None]:
    """The records of a log with their line numbers and bytes (newline included); a compressed
    log (:func:`log_lines`) is read as it is, within the bounds its header sets (:class:`Bounds`).

    Raises:
        OSError: the file cannot be read.
        Damaged: a line that is not a record, naming it, or a compressed log that cannot be
            decompressed; :class:`TooLarge` past the bounds; with ``cut_ok``, :class:`CutShort`
            for a last line without its newline, once the lines before it are read.
    """
    bounds = Bounds()
    for number, raw in enumerate(log_lines(path, bounds), start=1):
        if not raw.endswith(b"\n"):
            if cut_ok:
                raise CutShort(path, number)
        if not raw.strip():
            continue
        record = decode(raw, path, number)
        if number == 1 and isinstance(record, Header):
            bounds.fit(record)
        yield number, record, raw


def header_of(path: Path) -> Header:
    """A log's header (its first line).

    Raises:
        OSError: the file cannot be read.
        Damaged: the first line is not a match header (or the log cannot be decompressed).
    """
    lines = log_lines(path, first_only=True)
    try:
        first = next(lines, b"")
    finally:
        lines.close()
    record = decode(first, path, 1) if first.strip() else None
    if not isinstance(record, Header):
        raise Damaged(f"{path}: line 1 is not a match header: is this a match log?")
    return record


#: The first bytes of a gzip stream, and of a zstd frame (which the referee does not read).
GZIP_MAGIC: Final = b"\x1f\x8b"
ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
#: How a log's name says it is written compressed (:class:`referee.conversation.log.MatchLog`).
GZIP_SUFFIX: Final = ".gz"
_CHUNK = 1 << 16


def log_lines(path: Path, bounds: Bounds | None = None, first_only: bool = False) -> Generator[bytes, None, None]:
    """The lines of a log file, each with its newline (but a cut last one), plain or
    gzip-compressed: told by its first bytes, so a compressed log is read whatever its name.

    A compressed log cut short (a crash or Ctrl-C while it was written: the writer flushes
    the stream at every deal's end) gives the lines that were written out before the cut, its
    last one without a newline when the cut fell inside a line, exactly as a cut plain log
    reads.  The file is read a chunk at a time, and a compressed one inflated a chunk at a time,
    within ``bounds`` (:class:`Bounds`; a reader may change them as it goes, as
    :func:`read_records` does at the header): no line longer than its bound is ever held
    whole.  ``first_only``: the first line only (a header is looked for in it).

    Raises:
        OSError: the file cannot be read.
        Damaged: a file named ``*.gz`` that is not gzip, a zstd-compressed file, or a gzip
            stream that is damaged (its data or its checksum); :class:`TooLarge` past the bounds.
    """
    bounds = bounds or Bounds()
    chunks: Iterator[bytes]
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(0)
        if head.startswith(GZIP_MAGIC):
            chunks = _inflated(f, path)
        elif head == ZSTD_MAGIC:
            raise Damaged(f"{path}: the file is compressed with zstd, which the referee does not read: decompress it "
                          "(zstd -d) or write the log as .jsonl.gz")
        elif is_gzip_name(path):
            raise Damaged(f"{path}: named {GZIP_SUFFIX} but not gzip-compressed (it does not begin with gzip's magic bytes)")
        else:
            chunks = iter(lambda: f.read(_CHUNK), b"")
        for line in _bounded_lines(chunks, path, bounds):
            yield line
            if first_only:
                return


def is_gzip_name(path: Path | str) -> bool:
    """Whether a log's name says it is (to be) gzip-compressed: ``.gz`` in any case."""
    return str(path).lower().endswith(GZIP_SUFFIX)


def _inflated(f: IO[bytes], path: Path) -> Generator[bytes, None, None]:
    """The gzip stream in ``f`` (one member or several, as ``cat a.gz b.gz`` makes), inflated
    :data:`_CHUNK` bytes at a time: a small file that inflates to gigabytes never does so at once."""
    unzip = zlib.decompressobj(wbits=31)
    while chunk := f.read(_CHUNK):
        data = chunk
        while data:
            if unzip.eof:  # the next member
                unzip = zlib.decompressobj(wbits=31)
            try:
                out = unzip.decompress(data, _CHUNK)
            except zlib.error as exc:
                raise Damaged(f"{path}: the gzip-compressed log is damaged ({exc}): not a readable match log") from None
            data = unzip.unused_data if unzip.eof else unzip.unconsumed_tail
            if out:
                yield out


def _bounded_lines(chunks: Iterator[bytes], path: Path, bounds: Bounds) -> Generator[bytes, None, None]:
    """The lines of a stream of chunks, each with its newline (a cut last one without), refused
    (:class:`TooLarge`) as soon as a line grows past ``bounds.line``, the bytes read past
    ``bounds.total`` or the empty lines past :data:`MOST_EMPTY`: counted a chunk at a time."""
    rest = bytearray()  # the line begun and not ended yet
    number = 0  # lines given out
    read = 0
    empty = 0
    for data in chunks:
        read += len(data)
        if bounds.total is not None and read > bounds.total:
            raise TooLarge(f"{path}: larger than {_size(bounds.total)}, the most the match its header describes can write: "
                           "not a log the referee wrote")
        lines = data.split(b"\n")
        if len(lines) == 1:
            rest += data
            if len(rest) > bounds.line:
                raise TooLarge(_too_long(path, number + 1, bounds.line))
            continue
        first = bytes(rest) + lines[0] + b"\n" if rest else lines[0] + b"\n"
        rest = bytearray(lines.pop())
        if len(first) > bounds.line:
            raise TooLarge(_too_long(path, number + 1, bounds.line))
        ended = lines[1:]
        empty += (first in (b"\n", b"\r\n")) + ended.count(b"") + ended.count(b"\r")
        if empty > MOST_EMPTY:
            raise TooLarge(f"{path}: more than {MOST_EMPTY} empty lines (the referee writes none): not a log the referee wrote")
        number += 1
        yield first
        for line in ended:
            number += 1
            yield line + b"\n"
        if len(rest) > bounds.line:
            raise TooLarge(_too_long(path, number + 1, bounds.line))
    if rest:
        yield bytes(rest)  # cut inside a line (or the stream's end is missing): a cut log


def _too_long(path: Path, number: int, limit: int) -> str:
    return f"{path}: line {number} is longer than {_size(limit)}, the longest the referee reads in a log: not a log the referee wrote"


def _size(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


#: the fields that depend on the wall clock (and ``unfinished``, on how many lanes played)
TIMING_FIELDS = frozenset(("t", "ms", "time_ms", "bank_ms", "over", "wait", "unfinished"))


def strip_timings(obj: Any) -> Any:
    """A copy of a decoded record (builtins) without the fields that depend on the wall clock."""
    if isinstance(obj, dict):
        return {k: strip_timings(v) for k, v in obj.items() if k not in TIMING_FIELDS}
    if isinstance(obj, list):
        return [strip_timings(v) for v in obj]
    return obj
