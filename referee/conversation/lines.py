"""One judgement of a bot's line, shared by the referee and ``verify``.

Everything the referee does with a line a bot wrote follows from :func:`judge`: the line is a
message (a ``hello`` or a ``play``), a message of a type this protocol does not know (ignored,
within caps), or a bad line (a fault wherever it comes).  The judgement is a function of the
bytes alone, and the log keeps either the bytes (a line of at most
:data:`~referee.records.records.KEPT` bytes) or the judgement itself (a longer one), so
:func:`from_record` gives ``verify`` exactly the :class:`Line` the referee acted on.

Strings inside a message (an end's name, a train, a place, a hello's name) are cut to
:data:`LONGEST` characters: no legal move names anything that long, so cutting changes no
verdict, and what the log keeps of a move stays small whatever a bot sends.
"""

from __future__ import annotations

import base64
from typing import Any, Final

import msgspec

from protocol import messages as m
from referee.conversation import faults as F
from referee.records.records import KEPT, Heard, In, Judged

#: Characters of a string field a judged message keeps (longer ones are cut, marked with "…").
LONGEST = 100
#: Characters of an unknown message type a judgement keeps.
TYPE_CHARS = 64
#: Characters of the decoder's words a judgement keeps (they may quote the line).
WHY_CHARS = 200

MESSAGE: Final = "message"
UNKNOWN: Final = "unknown"
BAD: Final = "bad"


class Line:
    """A line read from a bot, as the referee acts on it: its judgement, its size in bytes, the
    start of it for a fault's evidence, and its bytes when the log keeps them whole.

    The evidence is worked out only when a fault asks for it (a line kept whole has its bytes;
    a longer one keeps its evidence from the moment it is read): the usual answer needs none.
    ``logged`` is the log's ``in`` record's field for it, once the log has made it
    (:meth:`referee.conversation.log.MatchLog.inp`).  A line is never changed once made (:func:`hear` gives
    the same one for the same bytes)."""

    __slots__ = ("judged", "size", "raw", "_evidence", "logged")

    def __init__(self, judged: Judged, size: int, evidence: str | None, raw: bytes | None) -> None:
        self.judged = judged
        self.size = size
        self.raw = raw
        self._evidence = evidence
        self.logged: bytes | None = None

    @property
    def evidence(self) -> str:
        if self._evidence is None:
            assert self.raw is not None  # a long line is made with its evidence
            self._evidence = F.cut(self.raw)
        return self._evidence

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Line) and (self.judged, self.size, self.raw) == (other.judged, other.size, other.raw)
                and self.evidence == other.evidence)

    def __repr__(self) -> str:
        return f"Line({self.judged!r}, size={self.size})"


def judge(raw: bytes) -> Judged:
    """What a bot's line is (without its newline): a message, an unknown type, or bad."""
    if m.too_deep(raw):
        return Judged(BAD, reason="deep", why=f"JSON nested deeper than {m.MAX_DEPTH} levels")
    try:
        try:
            msg = m.from_bot_decoder.decode(raw)
        except msgspec.ValidationError as strict:  # only a refused line is read again
            if "got `float`" not in str(strict):
                raise  # (here, not in integral_reading: a re-raised parameter is a reference cycle)
            msg = m.integral_reading(raw, strict)
    except msgspec.ValidationError as exc:
        kind = m.message_type(raw)
        if kind is not None and kind not in m.FROM_BOT_TYPES:
            return Judged(UNKNOWN, type=_cut(kind, TYPE_CHARS))
        if kind is None:  # msgspec checks types as it parses: "[x]" fails as an array
            return Judged(BAD, reason="object", why=_cut(str(exc), WHY_CHARS))
        return Judged(BAD, type=kind, reason="schema", why=_cut(str(exc), WHY_CHARS))
    except msgspec.DecodeError as exc:
        return Judged(BAD, reason="json", why=_cut(str(exc), WHY_CHARS))
    return Judged(MESSAGE, msg=_bounded(msg), type="play" if type(msg) is m.Play else "hello")


def _bounded(msg: m.FromBotMessage) -> m.FromBotMessage:
    """``msg`` with every string over :data:`LONGEST` characters cut."""
    if type(msg) is m.Play:
        end, train, place = msg.end, msg.train, msg.place
        if ((type(end) is str and len(end) > LONGEST) or (type(train) is str and len(train) > LONGEST)
                or (type(place) is str and len(place) > LONGEST)):
            return msgspec.structs.replace(msg, end=_cut(end), train=_cut(train), place=_cut(place))
        return msg
    assert isinstance(msg, m.BotHello)
    if max(len(msg.name), len(msg.version), len(msg.author)) > LONGEST:
        return m.BotHello(_cut(msg.name), msg.protocol, _cut(msg.version), _cut(msg.author))
    return msg


def _cut(value: Any, limit: int = LONGEST) -> Any:
    return value[:limit] + "…" if type(value) is str and len(value) > limit else value


def evidence(raw: bytes) -> str:
    """The start of a line, as faults and the log keep it (:func:`referee.conversation.faults.cut`)."""
    return F.cut(raw)


#: Lines heard, by their bytes: the judgement is a function of the bytes alone, and a bot says
#: the same few lines again and again (its plays), so each is judged once.  Only short lines
#: are kept, and only so many: a bot that never repeats itself is judged line by line.
_HEARD: dict[bytes, Line] = {}
HEARD_LINES = 4096
HEARD_BYTES = 256


def hear(raw: bytes) -> Line:
    """A line as the referee reads it."""
    line = _HEARD.get(raw)
    if line is not None:
        return line
    if len(raw) > KEPT:
        return Line(judge(raw), len(raw), evidence(raw), None)
    line = Line(judge(raw), len(raw), None, raw)
    if len(raw) <= HEARD_BYTES and len(_HEARD) < HEARD_LINES:
        _HEARD[bytes(raw)] = line
    return line


def heard(line: Line, t: float | None = None) -> Heard:
    """How the log keeps ``line`` (read at ``t``, in seconds since the match began)."""
    raw = line.raw
    if raw is None:
        return Heard(t, size=line.size, evidence=line.evidence, judged=line.judged)
    try:
        return Heard(t, line=raw.decode())
    except UnicodeDecodeError:
        return Heard(t, b64=base64.b64encode(raw).decode())


def from_record(h: Heard | In) -> Line:
    """The :class:`Line` a log record keeps, as the referee acted on it.

    Raises:
        ValueError: the record keeps neither the line nor its judgement, or its ``b64`` is not
            base64.
    """
    if h.b64 is not None:
        try:
            raw = base64.b64decode(h.b64, validate=True)
        except ValueError:
            raise ValueError("its b64 is not base64") from None
        return hear(raw)
    if h.size is None:
        if h.line is None:
            raise ValueError("it keeps no line")
        return hear(h.line.encode())
    if h.judged is None or h.evidence is None or h.size <= KEPT:
        raise ValueError("a long line must keep its size (over the kept length), its start and its judgement")
    return Line(h.judged, h.size, h.evidence, None)
