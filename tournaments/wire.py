"""The wire from a league's match processes (:mod:`tournaments.worker`) to the league: one JSON
object a line, tagged by ``"k"``, each a Struct of :data:`Message`, read by one decoder
(:func:`decode`), as :mod:`protocol.messages` does for bots.

=========================================================  =============================================
``{"k":"progress","done":3,"total":8}``                     :class:`Progress`: deals (fixed-deal games)
                                                            or games played, at most every 0.2 s
``{"k":"alive"}``                                           :class:`Alive`: every ``job.heartbeat``
                                                            seconds during a match (the watchdog)
``{"k":"result","margins":[...],"result":{...},...}``       :class:`Result`: the match's
                                                            :class:`TableRecord`
``{"k":"error","kind":"bot_start","message":"..."}``        :class:`Failed`: the match failed
``{"k":"probed","failures":[...]}``                         :class:`Probed`: ``--probe``'s answer
=========================================================  =============================================

Every job ends with exactly one :class:`Result` or :class:`Failed`.  A line that is none of these
(not JSON, an unknown ``k``, a field missing or of the wrong type) is a failure of the match
process (:class:`BadLine`), never skipped: the match process writes nothing else on its stdout.

How a table failed, where it has a kind, is one of :data:`FailureKind`: ``bot_start`` (a bot
could not be started; the match process says so), ``log`` (the log or the bots' stderr could
not be written; it says so), and the league's own ``log_lost`` (a finished match's log
disappeared) and ``worker_lost`` (the Dask workers playing it died).  All but ``log`` are not
counted as attempts of the table (:data:`NOT_ATTEMPTS`).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from referee.records.summary import MatchRecord

#: How a table failed, where the failure has a kind (see the module docstring).
FailureKind = Literal["bot_start", "log", "log_lost", "worker_lost"]
#: The kinds that are not counted as an attempt of the table (its bots did nothing wrong).
NOT_ATTEMPTS: frozenset[FailureKind] = frozenset(("bot_start", "log_lost", "worker_lost"))


class TableRecord(MatchRecord):
    """What the league stores of one table: :class:`referee.records.summary.MatchRecord` (the whole
    result, and the first bot's paired margin on every board) and ``margins``: on every
    board, every bot's paired margin against the others (its net less their mean, averaged over
    the rotations), in the order of the table's bots.  With two bots, ``margins[i]`` is
    ``[boards[i], -boards[i]]``."""

    margins: list[list[float]] = []


class Progress(msgspec.Struct, tag_field="k", tag="progress", forbid_unknown_fields=True):
    """Units (deals, or games to a target) played of the match's ``total``."""

    done: int
    total: int


class Alive(msgspec.Struct, tag_field="k", tag="alive", forbid_unknown_fields=True):
    """The match process is alive (its heartbeat)."""


class Result(TableRecord, tag_field="k", tag="result"):
    """The match's result: a :class:`TableRecord` on the wire (:meth:`record` without the tag)."""

    def record(self) -> TableRecord:
        return TableRecord(**{f: getattr(self, f) for f in TableRecord.__struct_fields__})


class Failed(msgspec.Struct, tag_field="k", tag="error", forbid_unknown_fields=True):
    """The match failed: how (``kind``) and why, in words."""

    kind: FailureKind
    message: str


class Probed(msgspec.Struct, tag_field="k", tag="probed", forbid_unknown_fields=True):
    """``--probe``'s answer: a line per bot that could not be started (empty: all answered hello)."""

    failures: list[str]


#: Every line a match process writes.
Message = Progress | Alive | Result | Failed | Probed

_decoder = msgspec.json.Decoder(Message)
_encoder = msgspec.json.Encoder()

#: The first members of a result line streamed piece by piece (:func:`tournaments.worker.encode_table`).
RESULT_TAG = b'"k":"result",'


class BadLine(ValueError):
    """A line from a match process that is not of the wire: what is wrong, and its start."""


def decode(line: bytes) -> Message:
    """The message of one line from a match process.

    Raises:
        BadLine: it is not one (with msgspec's reason and the line's start).
    """
    try:
        return _decoder.decode(line)
    except msgspec.DecodeError as exc:
        start = line[:120].decode("utf-8", "replace")
        raise BadLine(f"the match process wrote a line that is not of the league's wire ({exc}): {start!r}") from None


def encode(msg: Message) -> bytes:
    """One message as its line (with the newline)."""
    return _encoder.encode(msg) + b"\n"
