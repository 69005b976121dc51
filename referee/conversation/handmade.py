"""Every line the referee builds by hand on a move's hot path, each beside the Struct it must equal.

A move writes a ``turn`` to the bot and three log records (``out``, ``in``, ``play``).  Encoding
each from its Struct costs more than the rest of the move's Python, so they are built here from
bytes encoded once (per play, hand, end, line) and formatted into a template instead:

* :class:`TurnLines`: a table's ``turn`` lines (:class:`protocol.messages.Turn`), its caches its
  own (one per table, in :class:`~referee.conversation.channel.Terms`);
* :func:`out_record`, :func:`in_record`, :class:`PlayRecords`: the log's ``out``, ``in`` and
  ``play`` records (:class:`referee.records.records.Out`, ``In``, ``Play``), the last with a cache per log.

Each gives exactly the bytes encoding its Struct gives (tests hold them together over playouts of
every game).  What each writes is declared beside it and checked against its Struct's fields
when this module is imported (:func:`check_fields`): a field added to the Struct and not written
here fails at import, naming the field, rather than leave a line silently short of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from protocol import messages as m
from referee.conversation.lines import Line, heard
from referee.engine.core.line import WRITE_OFF
from referee.records import records as R
from referee.sides.base import hand_json, play_option

if TYPE_CHECKING:
    from referee.engine import Play
    from referee.engine.core.state import DealState
    from referee.sides.base import GameSide

_enc = msgspec.json.Encoder()


def check_fields(struct: type[msgspec.Struct], written: tuple[str, ...], where: str) -> None:
    """``where`` builds ``struct``'s line by hand and writes the fields ``written``: both must be
    exactly the Struct's fields.

    Raises:
        TypeError: naming the fields the Struct has and ``where`` does not write (or the other way).
    """
    fields = struct.__struct_fields__
    new = [f for f in fields if f not in written]
    gone = [f for f in written if f not in fields]
    if new or gone:
        raise TypeError(f"{where} builds {struct.__module__}.{struct.__qualname__} by hand (referee/conversation/handmade.py) "
                        + (f"and does not write its field(s) {', '.join(new)}" if new else "")
                        + (" and " if new and gone else "")
                        + (f"writes field(s) {', '.join(gone)} it no longer has" if gone else "")
                        + ": write them there, or send the line encoded from the Struct")


# -- the turn ----------------------------------------------------------------------------------------

#: The fields of a ``turn`` :meth:`TurnLines.line` writes: the line games'.
TURN_FIELDS = ("legal", "hand", "ends", "counts", "bazaar", "time_ms", "bank_ms", "id", "count", "continuing")
#: The fields it leaves to the message, encoded: ``held`` (sea_kozel's write-off, a turn of its
#: own) and those of the families that encode every turn of theirs (``handmade_turn`` false).
TURN_ENCODED = ("held", "trains", "open_double", "open_trains", "lines", "rows")
check_fields(m.Turn, TURN_FIELDS + TURN_ENCODED, "the turn line")

#: a number as a turn writes it (``b"%d" % n``), without a comprehension's frame
_DECIMAL = b"%d".__mod__
#: entries a cache keeps before it starts again
_KEEP = 1 << 16
#: hands kept encoded before the cache starts again: a hand comes back within its board (the
#: other orientations of the deal, at most 16 boards behind), not across a match; 65,536 of them
#: were 12 MB of a long match's memory, filled a few hundred bytes a deal (issue 40 §7)
HANDS_KEPT = 4096


class TurnLines:
    """A table's ``turn`` lines: ``side.turn_message(...)`` as the line that goes to the bot,
    made from bytes encoded once per play, hand and end.  A family whose turn carries more than
    the line games' (``side.handmade_turn`` false), and a turn that carries ``held``, are encoded
    from the message."""

    __slots__ = ("_options", "_hands", "_ends", "_end_keys")

    def __init__(self) -> None:
        #: ``id(play) -> (play, its option's JSON)``: the play is kept, so its id names no other
        self._options: dict[int, tuple[Play, bytes]] = {}
        #: ``hand -> its JSON``
        self._hands: dict[int, bytes] = {}
        #: ``(names, *ends) -> b'"left":3,"right":5'``: a turn's ``ends`` inside its braces
        self._ends: dict[tuple[object, ...], bytes] = {}
        #: ``names -> [b'"left":', ...]``: an end's key in a turn's ``ends``, by layout
        self._end_keys: dict[tuple[str, ...], list[bytes]] = {}

    def line(self, side: GameSide, state: DealState, time_ms: int, bank_ms: int | None, turn_id: int) -> bytes:
        """The turn ``side`` sends in ``state``, encoded: exactly ``m.encode_line(side.turn_message(...))``."""
        plays = state.legal_plays()
        if not side.handmade_turn or not plays or plays[0] is WRITE_OFF:
            return m.encode_line(side.turn_message(state, time_ms, bank_ms, turn_id))
        by_id = self._options
        legal = []
        for p in plays:
            hit = by_id.get(id(p))
            if hit is None or hit[0] is not p:
                hit = (p, m.encoder.encode(play_option(p)))
                if len(by_id) < 4096:  # the engine's plays are interned; a fresh one is not kept
                    by_id[id(p)] = hit
            legal.append(hit[1])
        hands = state.hands
        mine = hands[state.turn]
        hand = self._hands.get(mine)
        if hand is None:
            hand = m.encoder.encode(hand_json(mine))
            if len(self._hands) >= HANDS_KEPT:
                self._hands.clear()
            self._hands[mine] = hand
        names = state.layout.names
        key = (names, *state.ends)
        ends = self._ends.get(key)
        if ends is None:
            keys = self._end_keys.get(names)
            if keys is None:
                keys = self._end_keys[names] = [m.encoder.encode(name) + b":" for name in names]
            ends = b",".join([b"%s%d" % (keys[e], v) for e, v in enumerate(state.ends) if v >= 0])
            if len(self._ends) >= _KEEP:
                self._ends.clear()
            self._ends[key] = ends
        line = b'{"type":"turn","legal":[%s],"hand":%s,"ends":{%s},"counts":[%s],"bazaar":%d,"time_ms":%d,"bank_ms":%s,"id":%d' % (
            b",".join(legal), hand, ends, b",".join(map(_DECIMAL, map(int.bit_count, hands))), state.bazaar_left(), time_ms,
            b"null" if bank_ms is None else b"%d" % bank_ms, turn_id)
        count = state.count()
        if count is not None:
            line += b',"count":%d' % count
        if state.continuing:
            line += b',"continuing":true'
        return line + b"}\n"


# -- the log's records of a move ---------------------------------------------------------------------

#: The fields of an ``out`` record :func:`out_record` writes.
OUT_FIELDS = ("seat", "t", "msgs", "bot", "stuck", "exit")
check_fields(R.Out, OUT_FIELDS, "the log's out record")


def out_record(seat: int, us: int, data: bytes, bot: str | None, stuck: bool, exit: R.Exit | None) -> bytes:
    """The ``out`` record of the lines ``data`` (each encoded JSON whose only newline is its last
    byte, so the messages joined with commas are the lines joined, with newlines turned into
    commas) written to ``seat`` at ``us`` microseconds: exactly ``encode(Out(...))``."""
    extra = b"" if bot is None else b',"bot":' + _enc.encode(bot)
    if stuck:
        extra += b',"stuck":true'
    if exit is not None:
        extra += b',"exit":' + _enc.encode(exit)
    return (b'{"k":"out","seat":%d,"t":%d.%06d,"msgs":[%s]%s}\n'
            % (seat, us // 1_000_000, us % 1_000_000, data[:-1].replace(b"\n", b","), extra))


#: The fields of an ``in`` record :func:`in_record` writes: its own, then what it keeps of the
#: line (a :class:`~referee.records.records.Heard`'s, less its time).
IN_FIELDS = ("seat", "t", "wait", "line", "b64", "size", "evidence", "judged")
check_fields(R.In, IN_FIELDS, "the log's in record")
check_fields(R.Heard, ("t", *IN_FIELDS[3:]), "the log's in record (what it keeps of a line)")


def in_record(seat: int, line: Line, us: int, wait: int) -> bytes:
    """The ``in`` record of ``line`` read from ``seat`` at ``us`` microseconds (``wait``: of the
    referee's own wait for a CPU): exactly ``encode(In(...))``.  What it keeps of the line is
    made once per line (``line.logged``)."""
    logged = line.logged
    if logged is None:
        logged = line.logged = _logged(line)
    if wait:
        return b'{"k":"in","seat":%d,"t":%d.%06d,"wait":%s,%s\n' % (seat, us // 1_000_000, us % 1_000_000,
                                                                   _enc.encode(wait / 1000), logged)
    return b'{"k":"in","seat":%d,"t":%d.%06d,%s\n' % (seat, us // 1_000_000, us % 1_000_000, logged)


def _logged(line: Line) -> bytes:
    """What an ``in`` record keeps of ``line``: its fields after the time, with the closing brace."""
    raw = line.raw
    if raw is not None:
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            pass
        else:
            return b'"line":%s}' % _enc.encode(text)
    return _enc.encode(msgspec.to_builtins(heard(line)))[1:]


#: The fields of a ``play`` record :class:`PlayRecords` writes by hand: the usual play's (a play
#: with a field only some games use is encoded from its record).
PLAY_FIELDS = ("seat", "tile", "end", "as_", "ms", "closed", "stop", "declare", "train", "place", "staged", "over")
check_fields(R.Play, PLAY_FIELDS, "the log's play record")


class PlayRecords:
    """A log's ``play`` records of the usual play (no field only some games use): the record up
    to its ``ms`` encoded once per seat, line and move, then the time formatted in."""

    __slots__ = ("_made",)

    def __init__(self) -> None:
        #: ``(seat, id(msg)) -> (msg, as, the record's bytes up to its ms)``: msg is kept, so its
        #: id names no other while it is here
        self._made: dict[tuple[int, int], tuple[m.Play, str, bytes]] = {}

    def record(self, seat: int, msg: m.Play, elapsed: int, played: str) -> bytes | None:
        """The ``play`` record of ``msg`` from ``seat``, ``elapsed`` microseconds after its turn,
        made as ``played``: exactly ``encode(Play(...))``; ``None`` for a play with a field only
        some games use (encode its record)."""
        hit = self._made.get((seat, id(msg)))
        if hit is None or hit[0] is not msg or hit[1] != played:
            if any(getattr(msg, name) is not m.UNSET for name in m.PLAY_EXTRAS):
                return None
            hit = (msg, played, R.encode(R.Play(seat, msg.tile, msg.end, played))[:-2])  # without its "}\n"
            if len(self._made) < 4096:
                self._made[(seat, id(msg))] = hit
        return b'%s,"ms":%s}\n' % (hit[2], _enc.encode(elapsed / 1000))
