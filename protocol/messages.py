"""Every message of the bot protocol, as msgspec Structs in two tagged unions on ``"type"``.

The referee and the optional Python bot library (:mod:`protocol.bot`) both use these, and
``protocol/schema.json`` is generated from them (``referee schema`` rewrites it; a test fails
when it is out of date).  PROTOCOL.md (the core page) and its family pages in docs/protocol/
explain the conversation, with a section for every message whose table names its fields (a test
holds the tables to these structs, so a new message or field needs its words there too); the
class docstrings here are the field reference.

Tiles travel as two-number arrays ``[low, high]`` (a bot may send the halves in either order);
ends as names, ``"left"`` or ``"right"`` for line games, also ``"up"`` and ``"down"`` on a cross
(osel, telephone, muggins); the lead has ``"end": null``.

Fields that only some games use (``closed``, ``stop``, ``count``, ``continuing``, ``played``,
``declare``, ``held``, ``special``, ``rule``; mexican_train's ``train``, ``trains``, ``open_double``,
``open_trains``, ``station`` and ``round``; kolbasa's ``place``, ``lines`` and ``rows``)
are *absent* where they do not apply, so a line game's messages are what they always were.

kolbasa (RULES.md §7 KB) names a *place* instead of an end (``"top"``, ``"bottom"``,
``"top:J"``, ``"bottom:J"``, ``"knife:I"``; ``"start"`` in the ``placed`` of the start), so its
``placed`` and ``turn.legal`` entries carry ``place`` and no ``end``; its rows are told face down
(``rows``: null for a tile nobody has seen) and its own events are ``turned``, ``tailed`` and
``cut``.

Forward compatibility: referee-to-bot messages only ever gain fields with defaults, and a bot
must ignore message types and fields it does not know.  The referee likewise ignores unknown
fields and unknown message types from a bot; a *known* type with a field of the wrong type or
range is a fault.
"""

import re
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET as UNSET  # re-exported: referee code marks absent fields with it
from msgspec import Meta, Struct, field
from msgspec import UnsetType as UnsetType

PROTOCOL_VERSION = 1

#: The deepest nesting of arrays and objects accepted in a line, from a bot or in a file the
#: referee reads (deal files, logs).  A real message nests 4 levels; decoders recurse once per
#: level, so without a limit a short line of brackets would exhaust the interpreter's stack.
MAX_DEPTH = 64

Half = Annotated[int, Meta(ge=0, le=6, description="one half of a tile, 0..6")]
TileJSON = Annotated[
    tuple[Half, Half],
    Meta(description="a tile as [low, high], e.g. [3, 5]; a bot may also send [5, 3]"),
]
Seat = Annotated[int, Meta(ge=0, le=7, description="a seat number; play passes from seat s to s+1")]
Declaration = Literal["hundred", "write_off", "decline"]
TurnId = Annotated[int, Meta(ge=-(2**53), le=2**53, description="a turn's id as the turn gave it")]
EndName = Annotated[str, Meta(description='an open end of the layout: "left" or "right"; on a cross also "up" and "down"')]
TrainName = Annotated[str, Meta(description='mexican_train: a train, "seat0" … "seat3" (the train that seat owns) or "mexican" (the common one)')]
PlaceName = Annotated[str, Meta(description='kolbasa: where the tile goes: "top" or "bottom" (that line\'s open end), "top:J" or '
                                            '"bottom:J" (a double inserted into junction J of that line, 0 against the start), '
                                            '"knife:I" (a knife at position I); "start" only in the placed of the start')]
#: a tile whose halves are in a meaningful order (kolbasa's start and lines), not sorted
Pair = Annotated[tuple[Half, Half], Meta(description="a tile as two halves in a fixed order (see the field)")]
RowTile = Annotated[TileJSON | None, Meta(description="a tile whose identity is public, or null for a face-down tile nobody has seen")]


# -- referee to bot ----------------------------------------------------------------------------


class ToBot(Struct, tag_field="type", omit_defaults=False):
    """Base of every message the referee sends."""


class Limits(Struct):
    """The limits in force for this bot, all measured by the referee on a monotonic clock."""

    startup_ms: Annotated[int, Meta(description='time to answer `hello` after the process starts')] = field(default=10000)
    move_ms: Annotated[int, Meta(description='time to answer each `turn` (before the bank, if any, is used)')] = field(default=5000)
    bank_ms: Annotated[int | None, Meta(description='a time bank for the whole match (like a chess clock), or null when there is none')] = None
    increment_ms: Annotated[int, Meta(description='added to the bank after every move')] = 0
    max_line: Annotated[int, Meta(description='the longest line (in bytes, newline included) the referee accepts')] = 65536
    max_faults: Annotated[int, Meta(description='faults in one match after which the bot forfeits the rest')] = 3


class Hello(ToBot, tag="hello"):
    """The first message.  Answer with your own ``hello`` before ``limits.startup_ms``."""

    protocol: Annotated[int, Meta(description='the protocol version the referee speaks; answer with the same number')]
    referee: Annotated[str, Meta(description="the referee's name and version")]
    limits: Limits


class Special(Struct, omit_defaults=True):
    """sea_kozel's special state for a deal (RULES.md §3, §6 SK-8…SK-14): ``"hundred"`` (``side``
    plays this deal for a hundred), ``"write_off"`` (``side`` is writing off its fish: this is
    deal ``deal`` of ``of``) or ``"eggs"`` (``total`` waits for the side that wins; deal ``deal`` of
    ``of``).  Fields that do not apply to the kind are absent."""

    kind: Literal["hundred", "write_off", "eggs"]
    side: int | None = None
    deal: Annotated[int | None, Meta(description='which of the special deals this is, from 1')] = None
    of: Annotated[int | None, Meta(description='how many special deals there are at most (3)')] = None
    total: Annotated[int | None, Meta(description='eggs: the points waiting')] = None


class DealStart(ToBot, tag="deal"):
    """A deal begins.  ``hand`` is yours alone, and ``hand`` and ``bazaar`` are the deal *as
    dealt*: the forced lead, if any, follows as a ``placed`` event with ``forced: true``, and any
    draws made at once after it follow as ``drew`` events."""

    game: Annotated[str, Meta(description="the game's identifier, e.g. sport or kozel (RULES.md)")]
    options: Annotated[dict[str, Any], Meta(description='every option of the game with its value')]
    players: int
    seat: Annotated[Seat, Meta(description='your seat')]
    side: Annotated[int, Meta(description='your side: in pair games 0 for seats 0 and 2, 1 for seats 1 and 3; otherwise your seat')]
    partner: Annotated[Seat | None, Meta(description="your partner's seat in pair games, else null")]
    hand: Annotated[list[TileJSON], Meta(description='your tiles as dealt (a forced lead you were dealt included)')]
    leader: Annotated[Seat, Meta(description='who leads this deal')]
    scores: Annotated[list[int], Meta(description="each side's total before this deal (penalties in kozel, points elsewhere)")]
    bazaar: Annotated[int, Meta(description='tiles in the bazaar as dealt, before any draw (0 in games without one)')]
    game_number: Annotated[int, Meta(description='which game of the match, from 0')] = 0
    deal_number: Annotated[int, Meta(description='which deal of the game, from 0')] = 0
    special: Annotated[Special | UnsetType,
                       Meta(description='sea_kozel: the special state this deal is played under, absent when there is none')] = UNSET
    station: Annotated[TileJSON | UnsetType,
                       Meta(description='mexican_train: the double on the station this round (not in any hand; every train starts from its number)')] = UNSET
    round: Annotated[int | UnsetType, Meta(description='mexican_train: which of the seven rounds, from 0 (6-6) to 6 (0-0)')] = UNSET
    rows: Annotated[list[list[RowTile]] | UnsetType,
                    Meta(description='kolbasa: each seat\'s row as dealt, by seat: every tile face down (null), so only their number')] = UNSET


class Placed(ToBot, tag="placed"):
    """A tile was placed (by anyone, you included)."""

    seat: Seat
    tile: TileJSON
    end: Annotated[EndName | None | UnsetType, Meta(description='the end it went on; null for the lead; absent in kolbasa, which names a place')] = UNSET
    forced: Annotated[bool, Meta(description='true when the referee placed it (a forced lead, kolbasa\'s start)')] = False
    closed: Annotated[bool | UnsetType, Meta(description='osel: present and true when the double was laid closed (nothing more goes on that end)')] = UNSET
    train: Annotated[TrainName | UnsetType, Meta(description='mexican_train: the train it went on ("end" is then null)')] = UNSET
    place: Annotated[PlaceName | UnsetType, Meta(description='kolbasa: the place it went ("start" for the start)')] = UNSET


class Scored(ToBot, tag="scored"):
    """Points written during play (telephone, muggins): after ``seat`` placed a tile the open
    ends added up to ``count``, and that seat's side wrote ``points`` (``count``, or a fifth of it
    under telephone's ``scale=5``)."""

    seat: Seat
    points: int
    count: Annotated[int, Meta(description='the sum of the open ends that made the points (RULES.md §6 LAY-6)')]


class Declared(ToBot, tag="declared"):
    """sea_kozel: ``seat`` declared ``what`` — ``"hundred"`` (it leads 6-6 for a hundred; the
    ``placed`` of that 6-6 follows), or, after a fish it could write off, ``"write_off"`` or
    ``"decline"`` (RULES.md §6 SK-7, SK-12)."""

    seat: Seat
    what: Literal["hundred", "write_off", "decline"]


class Drew(ToBot, tag="drew"):
    """A player drew from the bazaar.  Only the drawer is told which tiles."""

    seat: Seat
    count: int
    tiles: Annotated[list[TileJSON] | None, Meta(description="the tiles drawn, in order; only in the drawer's copy, null for everyone else")] = None


class Passed(ToBot, tag="passed"):
    """A player could neither place nor draw, and knocked."""

    seat: Seat


class Turned(ToBot, tag="turned"):
    """kolbasa (KB-7): ``seat`` turned up the rightmost tile of its row.  A ``placed`` of that
    tile follows (the seat's move, or the start), or a ``tailed`` when it fits nowhere."""

    seat: Seat
    tile: TileJSON


class Tailed(ToBot, tag="tailed"):
    """kolbasa (KB-7): the tile ``seat`` turned up fits nowhere; it went face down to the left end
    of that seat's own row, and the turn passed."""

    seat: Seat
    tile: TileJSON


class Cut(ToBot, tag="cut"):
    """kolbasa (KB-5): ``seat`` laid a knife and cut the sausage: ``tiles`` (the start, then the
    top line outward, then the bottom line outward) went face down, as one block in this order, to
    the left end of seat ``to``'s row.  Follows the knife's ``placed``."""

    seat: Seat
    to: Seat
    tiles: list[TileJSON]


class PlayOption(Struct):
    """One legal move; answering with exactly these fields is always legal."""

    tile: Annotated[TileJSON | None, Meta(description='the tile to place; null only for a stop, a write_off or a decline')]
    end: Annotated[EndName | None | UnsetType, Meta(description='the end; null for the lead; absent in kolbasa, which names a place')] = UNSET
    closed: Annotated[bool | UnsetType, Meta(description='osel: present and true to lay this double closed')] = UNSET
    stop: Annotated[bool | UnsetType, Meta(description='present and true for "place nothing more this turn" (osel, after the turn\'s '
                                                       'first tile; sea_kozel and general, instead of the second double)')] = UNSET
    declare: Annotated[Declaration | UnsetType,
                       Meta(description='sea_kozel: "hundred" with the 6-6 lead, or "write_off"/"decline" (with "tile": null) after a fish')] = UNSET
    train: Annotated[TrainName | UnsetType, Meta(description='mexican_train: the train to put the tile on ("end" is null)')] = UNSET
    place: Annotated[PlaceName | UnsetType, Meta(description='kolbasa: the place for the tile turned up')] = UNSET


class TrainEnd(Struct):
    """mexican_train: one train as it stands (RULES.md §7 MT-3…MT-10)."""

    train: TrainName
    end: Annotated[int, Meta(description='the number its end shows (the station\'s number while it is empty)')]
    tiles: Annotated[int, Meta(description='how many tiles lie on it')]
    marker: Annotated[bool, Meta(description='whether it carries a marker (its owner passed and has not played on it since)')]


class Lines(Struct):
    """kolbasa's layout (RULES.md §7 KB-1, KB-2): the start across two lines, ``top`` and
    ``bottom``, both growing away from it."""

    start: Annotated[Pair | None, Meta(description='the start as [top half, bottom half]; null before it is laid')]
    top: Annotated[list[Pair], Meta(description='the top line outward from the start, each tile as [near half, far half]')]
    bottom: Annotated[list[Pair], Meta(description='the bottom line outward from the start, each tile as [near half, far half]')]


class Turn(ToBot, tag="turn"):
    """Your move.  Answer with one ``play`` before ``time_ms`` runs out."""

    legal: Annotated[list[PlayOption], Meta(description='every legal move (never empty), stop included: the simplest bot answers with one of these')]
    hand: list[TileJSON]
    ends: Annotated[
        dict[str, int],
        Meta(description='each open end and the number it shows ({} before the lead); closed ends and a cross\'s unopened up/down are absent'),
    ]
    counts: Annotated[list[int], Meta(description='how many tiles each seat holds')]
    bazaar: Annotated[int, Meta(description='tiles left in the bazaar')]
    time_ms: Annotated[int, Meta(description='the time you have for this move, in milliseconds')]
    bank_ms: Annotated[int | None, Meta(description='what is left of your time bank before this move, or null without a bank')] = None
    id: Annotated[
        int | UnsetType,
        Meta(description='this turn\'s number in the match (the referee always sends it); a play may echo it as "turn", '
                         'and one that echoes another number is out of turn'),
    ] = UNSET
    count: Annotated[int | UnsetType, Meta(description='telephone, muggins: the sum of the open ends now (RULES.md §6 LAY-6)')] = UNSET
    continuing: Annotated[
        bool | UnsetType,
        Meta(description='present and true when you are going on with a turn you began: osel\'s extra doubles or closing the second '
                         'line end; sea_kozel\'s and general\'s second double; a blitz chain'),
    ] = UNSET
    held: Annotated[list[int] | UnsetType,
                    Meta(description='sea_kozel, with the write-off decision only: each side\'s total at the fish, by side, as the '
                                     'rules count the hands (SK-2: a hand of only 0-0 is 25, only 6-6 50, both 75); the offer '
                                     'comes because your side\'s is the larger and 25 or more')] = UNSET
    trains: Annotated[list[TrainEnd] | UnsetType,
                      Meta(description='mexican_train: every train, the seats\' in seat order and then the Mexican')] = UNSET
    open_double: Annotated[TrainName | None | UnsetType,
                           Meta(description='mexican_train: the train whose last tile is a double not yet covered, or null')] = UNSET
    open_trains: Annotated[list[TrainName] | UnsetType,
                           Meta(description='mexican_train: the trains you may play on now (your own, every marked one, the Mexican; '
                                            'only the open double\'s while one is open)')] = UNSET
    lines: Annotated[Lines | UnsetType, Meta(description='kolbasa: the start and both lines')] = UNSET
    rows: Annotated[list[list[RowTile]] | UnsetType,
                    Meta(description='kolbasa: each seat\'s row left to right, by seat (the rightmost is turned up next); a tile that '
                                     'returned face down (a tail, a sausage) is public, the others are null')] = UNSET


class DealEnd(ToBot, tag="deal_end"):
    """The deal is over.  Every hand is revealed."""

    reason: Literal["domino", "fish", "fault"]
    seat: Annotated[Seat, Meta(description='who went out (domino), the fisherman (fish), or who faulted (fault)')]
    hands: Annotated[list[list[TileJSON]], Meta(description='what each seat still held')]
    values: Annotated[list[int], Meta(description="each hand's value as the game counts it")]
    wrote: Annotated[list[int], Meta(description='what each side wrote in this deal')]
    totals: Annotated[list[int], Meta(description="each side's total after the deal")]
    notes: Annotated[list[str], Meta(description='why, in words')] = []
    played: Annotated[list[int] | UnsetType, Meta(description='telephone, muggins: what each side wrote during play (already in wrote)')] = UNSET
    rule: Annotated[str | UnsetType,
                    Meta(description='sea_kozel, general, blitz: the rule that decided the deal, e.g. "bald", "svoyak", "void_fish" '
                                     '(docs/protocol/sea_kozel.md)')] = UNSET


class GameEnd(ToBot, tag="game_end"):
    """A game (a sequence of deals to a target or a number of deals) is over."""

    totals: list[int]
    winners: Annotated[list[int], Meta(description='the winning sides; empty for a drawn game')]
    losers: Annotated[list[int], Meta(description='the losing sides (in kozel: the goats)')]
    reason: str
    dry: Annotated[list[int], Meta(description='winning sides that ended with nothing against them (a dry win in kozel)')] = []


class MatchEnd(ToBot, tag="match_end"):
    """The match is over.  Exit within a second; the referee then ends the process."""

    reason: str = "match over"


ToBotMessage = Hello | DealStart | Placed | Scored | Declared | Drew | Passed | Turned | Tailed | Cut | Turn | DealEnd | GameEnd | MatchEnd


# -- bot to referee ----------------------------------------------------------------------------


class FromBot(Struct, tag_field="type"):
    """Base of every message a bot sends.  Unknown fields are ignored."""


class BotHello(FromBot, tag="hello"):
    """Your answer to ``hello``."""

    name: str
    protocol: Annotated[int, Meta(description='the protocol version you speak; the referee refuses any it does not')]
    version: str = ""
    author: str = ""


class Play(FromBot, tag="play"):
    """Your answer to ``turn``: a tile you hold and the end to put it on (null for the lead);
    or, where ``turn.legal`` offers it, ``"tile": null, "stop": true``, or a declaration (sea_kozel);
    in kolbasa, the tile turned up and its ``place``."""

    tile: Annotated[TileJSON | None, Meta(description='the tile to place; null only with "stop": true or "declare": "write_off"/"decline"')]
    end: EndName | None = None
    closed: Annotated[bool | UnsetType, Meta(description='osel: true to lay this double closed')] = UNSET
    stop: Annotated[bool | UnsetType, Meta(description='true to place nothing more this turn, with "tile": null')] = UNSET
    turn: Annotated[TurnId | None | UnsetType, Meta(description="the id of the turn this answers (optional); another turn's id is a fault")] = UNSET
    declare: Annotated[Declaration | UnsetType,
                       Meta(description='sea_kozel, where turn.legal offers it: "hundred" with the 6-6 lead; "write_off"/"decline" with "tile": null')] = UNSET
    train: Annotated[TrainName | UnsetType, Meta(description='mexican_train: the train to put the tile on ("end" null or absent)')] = UNSET
    place: Annotated[PlaceName | UnsetType, Meta(description='kolbasa: where the tile turned up goes (see turn.legal), instead of an end')] = UNSET


FromBotMessage = BotHello | Play

#: The fields of a play that only some games use, in the order a match log's ``play`` record
#: keeps them (each only where it is set and not false).  A game with a field of its own adds it
#: here, and the log, verify and replay carry it.
PLAY_EXTRAS = ("closed", "stop", "declare", "train", "place")

END_NAMES = ("left", "right", "up", "down")

encoder = msgspec.json.Encoder()
from_bot_decoder = msgspec.json.Decoder(FromBotMessage)
to_bot_decoder = msgspec.json.Decoder(ToBotMessage)
FROM_BOT_TYPES = frozenset(("hello", "play"))


def encode_line(msg: ToBot | FromBot) -> bytes:
    """One message as one JSON line, newline included."""
    return encoder.encode(msg) + b"\n"


class TooDeep(msgspec.DecodeError):
    """A line nested deeper than :data:`MAX_DEPTH` levels (it was not decoded)."""


_BRACKETS = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|$)|[\[{]|[\]}]', re.S)


def too_deep(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON ``data`` opens more than ``limit`` arrays or objects at once (brackets
    inside strings do not count).  Cheap when it cannot be: two counts of a short line."""
    if len(data) <= limit or data.count(b"[") + data.count(b"{") <= limit:
        return False
    depth = 0
    for token in _BRACKETS.finditer(data):
        c = data[token.start()]
        if c == 0x22:  # a string
            continue
        if c in b"[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def check_depth(data: bytes) -> None:
    """Raise :class:`TooDeep` when ``data`` nests deeper than :data:`MAX_DEPTH`; call it before
    decoding anything that came from outside."""
    if too_deep(data):
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")


def decode_from_bot(line: bytes) -> FromBotMessage:
    """A line as a message from a bot, strictly (an integer as an integer: the referee's own
    lines and format-1 logs; a bot's line is judged with :func:`integral_reading` as well).

    Raises:
        TooDeep: nested deeper than :data:`MAX_DEPTH` (checked first: nothing is decoded).
        msgspec.ValidationError: a JSON object that does not fit the protocol (or of an unknown
            type: see :func:`message_type`).
        msgspec.DecodeError: not JSON.
    """
    check_depth(line)
    return from_bot_decoder.decode(line)


#: What a refusal of a number with a fraction where an integer is asked says, after the field's name.
NUMBER_HINT = "takes integers (4 or 4.0, not 4.5)"


def integral_reading(line: bytes, refusal: msgspec.ValidationError) -> FromBotMessage:
    """A bot's line that the strict decoder refused, read again with every number whose value is an
    integer taken as that integer (``1.0`` as ``1``, ``[0.0, 4.0]`` as ``[0, 4]``): JSON has only
    numbers, and some libraries (Lua's cjson and dkjson) write every one with a point.  Only the
    refused line comes here, so the usual answer is decoded once, as before.

    Raises:
        msgspec.ValidationError: it does not fit even so: ``refusal`` itself when no number was
            the trouble, else what is wrong once the integers are read (a tile's ``7.0`` is out
            of range), and where a number with a fraction stands for an integer, words that say
            so and name the field.
    """
    if "got `float`" not in str(refusal):
        try:
            raise refusal
        finally:
            del refusal  # the frame would hold the exception that holds the frame
    try:
        msg: FromBotMessage = msgspec.convert(_integral(msgspec.json.decode(line)), FromBotMessage)
        return msg
    except msgspec.ValidationError as exc:
        why = str(exc)
        if "got `float`" not in why:
            raise
        at = why.rpartition(" - at `")[2].rstrip("`") if " - at `" in why else "$"
        field = re.match(r"\$\.(\w+)", at)
        name = f"`{field.group(1)}`" if field else "this field"
        # msgspec's own words ("Expected `int`, got `float`") would deny that 4.0 is read as 4
        raise msgspec.ValidationError(f"a number with a fraction at `{at}`: {name} {NUMBER_HINT}") from None


def _integral(value: Any) -> Any:
    if type(value) is float:
        return int(value) if value.is_integer() else value
    if type(value) is list:
        return [_integral(v) for v in value]
    if type(value) is dict:
        return {k: _integral(v) for k, v in value.items()}
    return value


class _Envelope(Struct):
    type: str = ""


_envelope_decoder = msgspec.json.Decoder(_Envelope)


def message_type(line: bytes) -> str | None:
    """The ``type`` of a JSON object line, or ``None`` if it is not one, or nested deeper than
    :data:`MAX_DEPTH` (used on error paths)."""
    if too_deep(line):
        return None
    try:
        return _envelope_decoder.decode(line).type
    except msgspec.DecodeError:
        return None


def schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of both directions, as committed in ``protocol/schema.json``."""
    (to_bot, from_bot), components = msgspec.json.schema_components([ToBotMessage, FromBotMessage], ref_template="#/$defs/{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/referee-dominoes/referee/protocol/schema.json",
        "title": f"referee bot protocol, version {PROTOCOL_VERSION}",
        "description": "Messages are JSON objects, one per line, tagged by 'type'. See PROTOCOL.md.",
        "$defs": {
            **components,
            "ToBot": to_bot,
            "FromBot": from_bot,
        },
        "anyOf": [{"$ref": "#/$defs/ToBot"}, {"$ref": "#/$defs/FromBot"}],
    }
