"""A small optional library for writing a bot in Python.

Write a function that picks a play, and hand it to :func:`run`::

    from protocol.bot import run

    def choose(turn, state):
        # turn.legal lists every legal play; state is what the bot knows about the deal
        best = max(turn.legal, key=lambda p: sum(p.tile))
        return best.tile, best.end

    if __name__ == "__main__":
        run(choose, name="heavy", version="1.0", author="me")

:func:`run` does the talking (PROTOCOL.md): it answers ``hello``, keeps a :class:`State` up to
date from the ``deal`` message and the ``placed`` / ``drew`` / ``passed`` events (kolbasa's
``turned`` / ``tailed`` / ``cut`` too), calls
``choose(turn, state)`` on every ``turn`` and writes the ``play``, and returns on ``match_end``
or when stdin closes.  Messages of a type it does not know are skipped, as are unknown fields.

While :func:`run` is running, ``print()`` goes to stderr (the bot's log), so a stray debug
print cannot corrupt the protocol stream on stdout.

The library does not check that ``choose`` returned a legal play: an illegal one is a fault,
and ``referee check`` reports it.  An exception in ``choose`` ends the bot (a crash, also a
fault) with the traceback in its log.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO, get_args

import msgspec

from .messages import (
    PROTOCOL_VERSION,
    UNSET,
    BotHello,
    Cut,
    DealEnd,
    DealStart,
    Declared,
    Drew,
    GameEnd,
    Hello,
    Limits,
    Lines,
    MatchEnd,
    Passed,
    Placed,
    Play,
    PlayOption,
    Scored,
    Special,
    Tailed,
    ToBotMessage,
    Turn,
    Turned,
    encode_line,
    message_type,
    to_bot_decoder,
)

Tile = tuple[int, int]
Event = Placed | Drew | Passed | Scored | Declared | Turned | Tailed | Cut
#: What ``choose`` may return: ``(tile, end)``, a :class:`~protocol.messages.PlayOption` taken
#: from ``turn.legal``, or a ready :class:`~protocol.messages.Play`.
Choice = tuple[Any, str | None] | PlayOption | Play
Chooser = Callable[[Turn, "State"], Choice]

#: Every message type the referee sends in protocol version 1; others are skipped.
KNOWN_TYPES = frozenset(cls.__struct_config__.tag for cls in get_args(ToBotMessage))


def norm(tile: Any) -> Tile:
    """A tile as ``(low, high)``, whatever order its halves came in."""
    a, b = tile
    a, b = int(a), int(b)
    return (a, b) if a <= b else (b, a)


def pips(tile: Any) -> int:
    """A tile's value: the sum of its halves."""
    a, b = tile
    return int(a + b)


def fits(tile: Any, number: int) -> bool:
    """True when ``tile`` shows ``number`` (can go on an end showing it)."""
    return number in tuple(tile)


class Family:
    """The part of :class:`State` one family of games keeps: the line games' (and every game's
    default).  :func:`family_for` picks a deal's family from its ``deal`` message; :class:`State`
    keeps what every game shares and hands each message to the family, which adds what only its
    games carry.  A new family adds a subclass here (in :data:`FAMILIES`) and touches nothing else
    of :class:`State`; its fields read as the State's own (``state.station``)."""

    #: ``(tile, name)`` pairs from ``choose`` name a train, not an end (mexican_train)
    trains = False

    def __init__(self, msg: DealStart | None = None) -> None:
        #: sea_kozel: the special state this deal is played under (a hundred, a write-off, eggs), or None
        self.special: Special | None = None if msg is None or msg.special is UNSET else msg.special

    @staticmethod
    def claims(msg: DealStart) -> bool:
        """Whether a deal so announced is of this family."""
        return True

    def on_deal(self, state: State, msg: DealStart) -> None:
        """The deal began: set what the common fields start as here."""

    def on_placed(self, state: State, msg: Placed, low: int, high: int) -> bool:
        """A tile went down; True when this family followed it on ``state.ends`` itself."""
        return False

    def on_passed(self, state: State, msg: Passed) -> None:
        pass

    def on_turn(self, state: State, msg: Turn) -> None:
        pass

    def copy(self) -> Family:
        """A copy whose lists and sets are its own."""
        return copy.copy(self)


class TrainsFamily(Family):
    """mexican_train: the station double of this round (``ends`` then holds every train's end, by
    train name), the round (0 for 6-6 … 6 for 0-0), the trains carrying a marker, and the train
    whose last tile is an uncovered double."""

    trains = True

    def __init__(self, msg: DealStart) -> None:
        super().__init__(msg)
        self.station: Tile | None = norm(msg.station)
        self.round: int | None = None if msg.round is UNSET else msg.round
        self.markers: set[str] = set()
        self.open_double: str | None = None

    @staticmethod
    def claims(msg: DealStart) -> bool:
        return msg.station is not UNSET and msg.station is not None

    def on_deal(self, state: State, msg: DealStart) -> None:
        assert self.station is not None  # every train starts from the station's number
        state.ends = dict.fromkeys([*(f"seat{s}" for s in range(msg.players)), "mexican"], self.station[0])

    def on_placed(self, state: State, msg: Placed, low: int, high: int) -> bool:
        if msg.train is UNSET:
            return False
        shown = state.ends.get(msg.train, low)
        state.ends[msg.train] = high if shown == low else low
        self.open_double = msg.train if low == high else None
        if msg.train == f"seat{msg.seat}":
            self.markers.discard(msg.train)  # only the owner's own play removes a marker
        return True

    def on_passed(self, state: State, msg: Passed) -> None:
        self.markers.add(f"seat{msg.seat}")  # a pass puts a marker on the passer's train

    def on_turn(self, state: State, msg: Turn) -> None:
        if msg.trains is not UNSET:
            self.markers = {t.train for t in msg.trains if t.marker}
            self.open_double = None if msg.open_double is UNSET else msg.open_double

    def copy(self) -> TrainsFamily:
        other = copy.copy(self)
        other.markers = set(self.markers)
        return other


class RowsFamily(Family):
    """kolbasa: each seat's row left to right, a tile where it is public and None where it is
    face down unseen (from ``deal`` and each ``turn``), and the two lines (from each ``turn``)."""

    def __init__(self, msg: DealStart) -> None:
        super().__init__(msg)
        self.rows: list[list[Tile | None]] = _rows(msg.rows)
        self.lines: Lines | None = None

    @staticmethod
    def claims(msg: DealStart) -> bool:
        return msg.rows is not UNSET and bool(msg.rows)

    def on_deal(self, state: State, msg: DealStart) -> None:
        state.counts = [len(r) for r in self.rows]  # no hand, only face-down rows

    def on_placed(self, state: State, msg: Placed, low: int, high: int) -> bool:
        return msg.place is not UNSET  # the layout comes whole with each turn (turn.lines, turn.ends)

    def on_turn(self, state: State, msg: Turn) -> None:
        if msg.rows is not UNSET:
            self.rows = _rows(msg.rows)
        if msg.lines is not UNSET:
            self.lines = msg.lines

    def copy(self) -> RowsFamily:
        other = copy.copy(self)
        other.rows = [list(r) for r in self.rows]
        return other


def _rows(rows: Any) -> list[list[Tile | None]]:
    return [] if rows is UNSET else [[None if t is None else norm(t) for t in r] for r in rows]


#: The families a deal may be of, asked in order; the line games' last (it claims every deal).
FAMILIES: tuple[type[Family], ...] = (TrainsFamily, RowsFamily, Family)


def family_for(msg: DealStart) -> Family:
    """The family state of the deal ``msg`` announces."""
    return next(f for f in FAMILIES if f.claims(msg))(msg)


def _family_field(name: str, default: Callable[[], Any], doc: str) -> Any:
    """A field of the deal's family read (and set) as the State's own: ``default()`` where the
    deal's family has no such field."""
    def get(self: State) -> Any:
        return getattr(self.family, name) if hasattr(self.family, name) else default()

    def put(self: State, value: Any) -> None:
        setattr(self.family, name, value)

    return property(get, put, doc=doc)


@dataclass
class State:
    """What the bot knows, updated by :func:`run` before every call of ``choose``.

    The deal fields come from the last ``deal`` message; ``hand``, ``ends``, ``counts`` and
    ``bazaar`` follow the events and are reset from each ``turn`` (the referee's word wins).
    ``history`` holds the events of the current deal in order.  What only one family of games
    carries is kept by the deal's :attr:`family` (:class:`Family`) and read here as the State's
    own fields: ``special`` (sea_kozel), ``station``, ``round``, ``markers``, ``open_double``
    (mexican_train), ``rows`` and ``lines`` (kolbasa); outside their family they read as None or
    empty.
    """

    name: str = ""
    protocol: int = PROTOCOL_VERSION
    referee: str = ""
    limits: Limits = field(default_factory=Limits)
    # the current deal
    game: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    players: int = 0
    seat: int = 0
    side: int = 0
    partner: int | None = None
    leader: int = 0
    scores: list[int] = field(default_factory=list)
    game_number: int = 0
    deal_number: int = 0
    #: what only the deal's family of games keeps (the line games' until a deal says otherwise)
    family: Family = field(default_factory=Family)
    hand: list[Tile] = field(default_factory=list)
    ends: dict[str, int] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)
    bazaar: int = 0
    history: list[Event] = field(default_factory=list)
    # results so far
    last_deal: DealEnd | None = None
    last_game: GameEnd | None = None
    deals_seen: int = 0

    special = _family_field("special", lambda: None, "sea_kozel: the special state this deal is played under, or None")
    station = _family_field("station", lambda: None, "mexican_train: the station double of this round")
    round = _family_field("round", lambda: None, "mexican_train: the round, 0 for 6-6 … 6 for 0-0")
    markers = _family_field("markers", set, "mexican_train: the trains carrying a marker")
    open_double = _family_field("open_double", lambda: None, "mexican_train: the train whose last tile is an uncovered double")
    rows = _family_field("rows", list, "kolbasa: each seat's row left to right, None where face down unseen")
    lines = _family_field("lines", lambda: None, "kolbasa: the two lines, from each turn")

    def table(self) -> list[Tile]:
        """Every tile placed in this deal, in the order placed."""
        return [norm(e.tile) for e in self.history if type(e) is Placed]

    # -- updates (run calls these; a bot driving its own loop may too) -----------------

    def on_hello(self, msg: Hello) -> None:
        self.protocol = msg.protocol
        self.referee = msg.referee
        self.limits = msg.limits

    def on_deal(self, msg: DealStart) -> None:
        self.game = msg.game
        self.options = dict(msg.options)
        self.players = msg.players
        self.seat = msg.seat
        self.side = msg.side
        self.partner = msg.partner
        self.leader = msg.leader
        self.scores = list(msg.scores)
        self.game_number = msg.game_number
        self.deal_number = msg.deal_number
        self.family = family_for(msg)
        self.hand = [norm(t) for t in msg.hand]
        self.ends = {}
        self.bazaar = msg.bazaar
        self.history = []
        # Every hand of a deal starts the same size; drawing changes that later.
        self.counts = [len(msg.hand)] * msg.players
        self.family.on_deal(self, msg)
        self.deals_seen += 1

    def on_placed(self, msg: Placed) -> None:
        self.history.append(msg)
        tile = norm(msg.tile)
        if msg.seat == self.seat and tile in self.hand:
            self.hand.remove(tile)
        if 0 <= msg.seat < len(self.counts):
            self.counts[msg.seat] = max(0, self.counts[msg.seat] - 1)
        low, high = tile
        end = msg.end
        if self.family.on_placed(self, msg, low, high) or end is UNSET:
            return
        if end is None:
            # RULES.md §5: after a lead a-b (a <= b) the left end shows a, the right end b.
            self.ends = {"left": low, "right": high}
        elif msg.closed is True:
            self.ends.pop(end, None)  # osel: nothing more goes on a closed double
        elif end in self.ends:
            shown = self.ends[end]
            self.ends[end] = high if shown == low else low

    def on_scored(self, msg: Scored) -> None:
        """Points written during play (telephone, muggins) go to the mover's side at once."""
        self.history.append(msg)
        side = msg.seat % 2 if self.partner is not None else msg.seat
        if 0 <= side < len(self.scores):
            self.scores[side] += msg.points

    def on_drew(self, msg: Drew) -> None:
        self.history.append(msg)
        if 0 <= msg.seat < len(self.counts):
            self.counts[msg.seat] += msg.count
        self.bazaar = max(0, self.bazaar - msg.count)
        if msg.seat == self.seat and msg.tiles:
            self.hand.extend(norm(t) for t in msg.tiles)

    def on_passed(self, msg: Passed) -> None:
        self.history.append(msg)
        self.family.on_passed(self, msg)

    def on_cut(self, msg: Cut) -> None:
        """kolbasa: the sausage went to the left of seat ``to``'s row."""
        self.history.append(msg)
        if 0 <= msg.to < len(self.counts):
            self.counts[msg.to] += len(msg.tiles)

    def on_turn(self, msg: Turn) -> None:
        self.hand = [norm(t) for t in msg.hand]
        self.ends = dict(msg.ends)
        self.counts = list(msg.counts)
        self.bazaar = msg.bazaar
        self.family.on_turn(self, msg)

    def hear(self, msg: ToBotMessage) -> None:
        """Update from any message the referee sends (what :func:`run` does with each line; a bot
        or an environment driving its own loop calls it too)."""
        handler = _HANDLERS.get(type(msg))
        if handler is not None:
            handler(self, msg)
        elif isinstance(msg, (Declared, Turned, Tailed)):
            # sea_kozel: a hundred declared, a fish written off or not; kolbasa: the row's tiles
            # move (turn.rows tells where)
            self.history.append(msg)

    def on_deal_end(self, msg: DealEnd) -> None:
        self.last_deal = msg
        self.scores = list(msg.totals)

    def on_game_end(self, msg: GameEnd) -> None:
        self.last_game = msg


_HANDLERS: dict[type, Callable[[State, Any], None]] = {
    Hello: State.on_hello, DealStart: State.on_deal, Placed: State.on_placed, Drew: State.on_drew, Passed: State.on_passed,
    Scored: State.on_scored, Cut: State.on_cut, Turn: State.on_turn, DealEnd: State.on_deal_end, GameEnd: State.on_game_end,
}


def to_play(choice: Choice, trains: bool = False) -> Play:
    """Turn what ``choose`` returned into a :class:`~protocol.messages.Play`; with ``trains``
    (mexican_train) a ``(tile, name)`` pair names a train, not an end."""
    if isinstance(choice, Play):
        return choice
    if isinstance(choice, PlayOption):
        return _option_play(choice)
    tile, end = choice
    if isinstance(tile, PlayOption):  # (option, anything): take the option as it is
        return _option_play(tile)
    if trains:
        return Play(tile=norm(tile), train=end if end is not None else UNSET)
    return Play(tile=norm(tile), end=end)


def _option_play(option: PlayOption) -> Play:
    """A legal entry as the play that answers with it (closed and stop included)."""
    return Play(tile=None if option.tile is None else norm(option.tile), end=None if option.end is UNSET else option.end,
                closed=option.closed, stop=option.stop, declare=option.declare, train=option.train, place=option.place)


def log(*parts: Any) -> None:
    """Write a line to the bot's log (stderr), which the referee keeps in a capped file."""
    print(*parts, file=sys.stderr, flush=True)


def run(
    choose: Chooser,
    name: str,
    version: str = "",
    author: str = "",
    *,
    infile: BinaryIO | None = None,
    outfile: BinaryIO | None = None,
) -> State:
    """Play a match over stdin/stdout until ``match_end`` or end of input.

    Args:
        choose: called as ``choose(turn, state)`` on every ``turn``; returns ``(tile, end)``
            (``end`` is ``None`` for the lead; in mexican_train a train's name), or one of
            ``turn.legal``.
        name, version, author: what the bot's ``hello`` says.
        infile, outfile: binary streams to use instead of stdin and stdout (for tests).

    Returns:
        The final :class:`State`.
    """
    src = infile if infile is not None else sys.stdin.buffer
    out = outfile if outfile is not None else sys.stdout.buffer
    state = State(name=name)
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr  # print() inside choose() must not reach the protocol stream
    try:
        for line in src:
            if not line.strip():
                continue
            kind = message_type(line)
            if kind not in KNOWN_TYPES:
                if kind is None:
                    log(f"{name}: skipping a line that is not a JSON object: {line[:200]!r}")
                continue  # an unknown message type: a later protocol addition, ignored
            try:
                msg = to_bot_decoder.decode(line)
            except msgspec.DecodeError as exc:
                log(f"{name}: skipping a {kind!r} message I cannot read ({exc}): {line[:200]!r}")
                continue
            if isinstance(msg, MatchEnd):
                break
            state.hear(msg)
            if isinstance(msg, Hello):
                if msg.protocol != PROTOCOL_VERSION:
                    log(f"{name}: the referee speaks protocol {msg.protocol}, I speak {PROTOCOL_VERSION}")
                _send(out, BotHello(name=name, version=version, author=author, protocol=PROTOCOL_VERSION))
            elif isinstance(msg, Turn):
                _send(out, to_play(choose(msg, state), trains=state.family.trains))
    finally:
        sys.stdout = saved_stdout
    return state


def _send(out: BinaryIO, msg: BotHello | Play) -> None:
    out.write(encode_line(msg))
    out.flush()
