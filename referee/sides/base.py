"""What people and bots see of a game, for the line games: the base of every game's side.

A *side* (:class:`GameSide`) is one object per family of games that owns everything the referee
shows of them: how its deals travel to bots (engine values as protocol messages, and bots' plays
back), how ``referee replay`` tells them in words, the steps of the web report's replays, the
decisions ``referee check`` counts, and the positions it stages.  Nothing above the engine names
a concrete deal class: the table, verify, replay, the web report, ``check`` and staging ask
:func:`referee.sides.side_for` (or :func:`referee.sides.side_of`) for a deal's side.

This module is the line games' side (and every game's default): the functions at module level
are their encoding, which the engine speaks in tile ids and end indexes and the protocol in
``[low, high]`` arrays and end names (a legal play's JSON form is built once per tile and end,
not once per turn).  A family whose messages or pictures carry more (the cross games' arms,
mexican_train's trains, kolbasa's places) has a module of its own in this package with a
:class:`GameSide` subclass that overrides what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from msgspec import UNSET

from protocol import messages as m
from referee.engine import END_NAMES, STOP, Play, play
from referee.engine.core.deal import Deal
from referee.engine.core.errors import IllegalPlay
from referee.engine.core.game import DealRecord, Game, GameOutcome
from referee.engine.core.line import DECLINE, HUNDRED, WRITE_OFF, Declared, Drew, Event, Passed, Placed, Scored, line_of
from referee.engine.core.state import DealState
from referee.engine.core.tiles import HIGH, LOW, N_TILES, tile, tile_name, tile_text
from referee.records.records import Play as PlayRecord
from referee.sides.encoding import Encoding
from referee.sides.pages import Board, DealPage

TILE_JSON: list[tuple[int, int]] = [(LOW[t], HIGH[t]) for t in range(N_TILES)]
_OPTIONS: dict[Play, m.PlayOption] = {}


def play_option(p: Play) -> m.PlayOption:
    opt = _OPTIONS.get(p)
    if opt is None:
        if p == STOP:
            opt = m.PlayOption(None, None, stop=True)
        elif p.declare is not None:
            opt = m.PlayOption(None if p.tile < 0 else TILE_JSON[p.tile], None, declare=p.declare)  # type: ignore[arg-type]  # the engine's declarations are the protocol's Literal (the engine cannot import it)
        else:
            opt = m.PlayOption(TILE_JSON[p.tile], None if p.end is None else END_NAMES[p.end], closed=True if p.closed else m.UNSET)
        _OPTIONS[p] = opt
    return opt


#: ``_HAND_PART[k][v]``: the tiles of bits ``v`` of the hand's ``k``-th group of 7 tile ids
#: (four table look-ups build a hand; a loop over its bits costs three times as much).
_HAND_PART: list[list[tuple[tuple[int, int], ...]]] = [
    [tuple(TILE_JSON[7 * k + i] for i in range(7) if v >> i & 1 and 7 * k + i < N_TILES) for v in range(128)] for k in range(4)
]
assert N_TILES <= 28


def hand_json(hand: int) -> list[tuple[int, int]]:
    """A set of tiles as the protocol's ``[[low, high], ...]``, in tile id order."""
    part = _HAND_PART
    return [*part[0][hand & 127], *part[1][hand >> 7 & 127], *part[2][hand >> 14 & 127], *part[3][hand >> 21]]


def ends_json(state: DealState) -> dict[str, int]:
    names = state.layout.names
    out = {}
    for e, v in enumerate(state.ends):  # a loop: a comprehension is a call of its own
        if v >= 0:
            out[names[e]] = v
    return out


#: ``id(play) -> (play, its option)``: the turn's cheap way to :func:`play_option` (a Play's
#: hash is a Python call).  The play is kept, so its id cannot be reused by another object.
_OPTION_BY_ID: dict[int, tuple[Play, m.PlayOption]] = {}


def legal_json(plays: list[Play]) -> list[m.PlayOption]:
    """The ``legal`` of a turn: :func:`play_option` of each play."""
    out = []
    by_id = _OPTION_BY_ID
    for p in plays:
        hit = by_id.get(id(p))
        if hit is None or hit[0] is not p:
            hit = (p, play_option(p))
            if len(by_id) < 4096:  # the engine's plays are interned; a fresh one is not kept
                by_id[id(p)] = hit
        out.append(hit[1])
    return out


def turn_message(state: DealState, time_ms: int, bank_ms: int | None = None, turn_id: int | m.UnsetType = m.UNSET) -> m.Turn:
    count = state.count()
    plays = state.legal_plays()
    # sea_kozel's write-off decision (SK-12) carries the sides' totals it is made on
    held = getattr(state, "held", None) if plays and plays[0] is WRITE_OFF else None
    return m.Turn(
        legal=legal_json(plays),
        hand=hand_json(state.hands[state.turn]),
        ends=ends_json(state),
        counts=[h.bit_count() for h in state.hands],
        bazaar=state.bazaar_left(),
        time_ms=time_ms,
        bank_ms=bank_ms,
        id=turn_id,
        count=m.UNSET if count is None else count,
        continuing=True if state.continuing else m.UNSET,
        held=m.UNSET if held is None else list(held),
    )


_PLACED_LINES: dict[int, bytes] = {}


def event_lines(event: Event, players: int) -> list[bytes]:
    """The encoded line each seat receives for ``event`` (the same bytes for everyone, except
    that only the drawer sees the tiles drawn)."""
    if type(event) is Placed:
        # Once per move: a placed line is encoded once per distinct (seat, tile, end, forced, closed).
        end = event.end
        key = (((event.seat * N_TILES + event.tile) * 8 + (7 if end is None else end)) * 2 + event.forced) * 2 + event.closed
        line = _PLACED_LINES.get(key)
        if line is None:
            line = _PLACED_LINES[key] = m.encode_line(
                m.Placed(event.seat, TILE_JSON[event.tile], None if end is None else END_NAMES[end], event.forced,
                         True if event.closed else m.UNSET)
            )
        return [line] * players
    if type(event) is Scored:
        return [m.encode_line(m.Scored(event.seat, event.points, event.count))] * players
    if type(event) is Declared:
        return [m.encode_line(m.Declared(event.seat, event.what))] * players  # type: ignore[arg-type]  # as play_option's declare
    if type(event) is Drew:
        public = m.encode_line(m.Drew(event.seat, event.count, None))
        own = m.encode_line(m.Drew(event.seat, event.count, [TILE_JSON[t] for t in event.tiles]))
        return [own if s == event.seat else public for s in range(players)]
    assert type(event) is Passed
    return [m.encode_line(m.Passed(event.seat))] * players


def deal_start(game: Game, deal: Deal, state: DealState, seat: int, game_number: int) -> m.DealStart:
    """The ``deal`` message for ``seat``: its hand and the bazaar *as dealt*.

    ``state`` may already be past a forced lead and the automatic draws and passes that follow
    it at once; those reach the seat as the events after this message, so the hand and bazaar
    here must not include them (a bot adds what ``drew`` tells it).
    """
    side = game.side_of[seat]
    partner = None
    if game.pair_play:
        partner = (seat + 2) % 4
    return m.DealStart(
        game=game.variant.id,
        options=dict(game.options),
        players=game.players,
        seat=seat,
        side=side,
        partner=partner,
        hand=hand_json(deal.masks[seat]),
        leader=state.leader,
        scores=list(game.totals),
        bazaar=len(state.bazaar),  # the whole bazaar as dealt (empty when undealt tiles sleep)
        game_number=game_number,
        deal_number=game.next_number,
        special=special_json(game),
    )


def special_json(game: Game) -> m.Special | m.UnsetType:
    """The special state the next deal is played under (sea_kozel), or UNSET."""
    sp = game.special()
    if sp is None:
        return m.UNSET
    return m.Special(sp.kind, sp.side, sp.deal, sp.of, sp.total)  # type: ignore[arg-type]  # the engine's special kinds are the protocol's Literal


def deal_end(rec: DealRecord) -> m.DealEnd:
    assert rec.end is not None
    return m.DealEnd(
        reason=rec.end.reason,  # type: ignore[arg-type]  # the engine's reasons are the protocol's Literal
        seat=rec.end.seat,
        hands=[[TILE_JSON[t] for t in hand] for hand in rec.hands],
        values=list(rec.values),
        wrote=list(rec.wrote),
        totals=list(rec.totals),
        notes=list(rec.notes),
        played=list(rec.played) if rec.played else m.UNSET,
        rule=m.UNSET if rec.rule is None else rec.rule,
    )


def game_end(outcome: GameOutcome) -> m.GameEnd:
    return m.GameEnd(list(outcome.totals), list(outcome.winners), list(outcome.losers), outcome.reason, list(outcome.dry))


def engine_play(msg: m.Play) -> Play:
    """A bot's ``play`` as an engine :class:`Play`.

    Raises:
        IllegalPlay: the end is not a name the protocol knows, or the play names no tile and
            is not a stop (or is both).
    """
    if msg.stop is True:
        if msg.tile is not None:
            raise IllegalPlay('a stop names no tile: send "tile": null with "stop": true', IllegalPlay.BAD_MOVE)
        if msg.declare is not m.UNSET:
            raise IllegalPlay("a play is a stop or a declaration, not both", IllegalPlay.BAD_MOVE)
        return STOP
    if msg.declare is not m.UNSET:
        if msg.declare == "hundred":
            if msg.tile is None:
                raise IllegalPlay('a hundred is declared with the 6-6 lead: send "tile": [6, 6], "declare": "hundred"', IllegalPlay.BAD_MOVE)
            return HUNDRED if tuple(sorted(msg.tile)) == (6, 6) else Play(tile(*msg.tile), None, msg.closed is True, "hundred")
        if msg.tile is not None:
            raise IllegalPlay(f'{msg.declare} names no tile: send "tile": null, "declare": "{msg.declare}"', IllegalPlay.BAD_MOVE)
        return WRITE_OFF if msg.declare == "write_off" else DECLINE
    if msg.tile is None:
        raise IllegalPlay('"tile" is null: a play names a tile, or says "stop": true', IllegalPlay.NOT_YOUR_TILE)
    a, b = msg.tile
    t = tile(a, b)
    if msg.end is None:
        return Play(t, None, True) if msg.closed is True else play(t)
    try:
        end = END_NAMES.index(msg.end)
    except ValueError:
        raise IllegalPlay(f"{msg.end!r} is not an end; ends are named {', '.join(END_NAMES)}", IllegalPlay.BAD_END) from None
    return play(t, end, msg.closed is True)


#: ``id(msg) -> (msg, engine_play(msg))``, for :meth:`GameSide.engine_play`
_ENGINE_BY_ID: dict[int, tuple[m.Play, Play]] = {}


#: Who sits in a seat, in words ("seat 2 (greedy)"), as a replay names it.
Who = Callable[[int], str]


@dataclass(frozen=True)
class Decision:
    """A kind of move ``referee check`` counts when the bot is offered it or makes it, with its
    words for one and for many ("knife offered", "knives offered")."""

    key: str
    one: str
    many: str


@dataclass(frozen=True)
class Stage:
    """A decision ``referee check`` stages (:mod:`referee.matches.staging`): ``wanted(state, legal)`` says
    whether the position with these legal moves (as bots are sent them) is one; ``offered`` is
    the :class:`Decision` the check counts the offers under."""

    name: str  # short, for file names: "hundred"
    title: str  # in words: "6-6 for a hundred"
    offered: str
    wanted: Callable[[DealState, list[m.PlayOption]], bool]
    #: for a decision that may be declined: what ``referee check`` counts when the bot takes it,
    #: and what it says, as information (declining is legal), of a bot that never did (``{plays}``
    #: stands for what it played there instead, in words: "0-0")
    made: str | None = None
    never: str = ""


def declares(what: str) -> Callable[[DealState, list[m.PlayOption]], bool]:
    """A stage's test: the seat may declare ``what`` (sea_kozel's hundred, its fish)."""
    return lambda state, legal: any(o.declare == what for o in legal)


@dataclass
class DealSteps:
    """A deal of the web report being drawn (:mod:`referee.web.data`): its document, whose
    ``steps`` each side appends to with :meth:`step`, and the hands as the events change them.

    ``table`` is what a step's table shows beyond its placements (``step.table``: the trains'
    markers, kolbasa's sausage), ``rows`` the hands as rows in order where a game has them
    (kolbasa), ``up`` the tile turned up and waiting for its place; ``own`` is the side's own
    working state (kolbasa's sausage as the engine lays it).
    """

    doc: DealPage
    hands: list[set[int]]
    bazaar: list[int]  # undealt tiles in order (drawn from the front when the game draws)
    sides: list[tuple[int, ...]]  # the seats of each side, for points written during play
    scores: list[int] = field(default_factory=list)
    drawn: int = 0
    events: int = 0  # the engine events of this deal so far
    table: Board | None = None
    rows: list[list[int]] | None = None
    up: int | None = None
    own: Any = None

    def step(self, kind: str, seat: int | None, text: str, **extra: Any) -> None:
        """Add a step; ``extra`` are fields of the document's step type (:class:`~referee.sides.pages.Step`)."""
        rows = self.rows
        self.doc.steps.append(self.doc.step_type(
            kind, seat, text,
            [[tile_name(t) for t in r] for r in rows] if rows is not None else [[tile_name(t) for t in sorted(h)] for h in self.hands],
            len(self.bazaar) - self.drawn,
            list(self.scores),
            table=UNSET if self.table is None else self.table,
            up=UNSET if rows is None else None if self.up is None else tile_name(self.up),
            **extra,
        ))

    def side_of(self, seat: int) -> int:
        for i, seats in enumerate(self.sides):
            if seat in seats:
                return i
        return seat


#: Declarations (sea_kozel, RULES.md §6 SK-7 and SK-12) in words: the text replay's, the web's.
DECLARED_TEXT = {"hundred": "declares a hundred, leading 6-6", "write_off": "writes off the fish",
                 "decline": "declines to write off the fish"}
DECLARED_STEP = {"hundred": "6-6 led for a hundred", "write_off": "writes the fish off", "decline": "declines the fish"}


class GameSide:
    """Everything people and bots see of one family of games.  This base is the line games'
    (the functions above); a family's module overrides what differs and names the deal-state
    classes it speaks for in :attr:`deals`."""

    #: the deal-state classes (module and name) whose deals this side shows
    deals: tuple[str, ...] = ()
    #: the renderer of the web report's replays that draws this family's table (``LAYOUTS`` in
    #: ``referee/web/static/replay.js``)
    layout = "line"
    #: what a learner's actions and observation hold of the family (:mod:`referee.sides.encoding`)
    encoding: type[Encoding] = Encoding
    #: the type of this family's deal documents, with the tiles a seat may not see marked on it
    page: type[DealPage] = DealPage
    #: how the match page says the leader's first tile came to be played ("forced")
    lead_word = "forced"
    #: the moves ``referee check`` counts for this family, in the order it lists them
    decisions: tuple[Decision, ...] = (
        Decision("turns going on", "further tile in a turn", "further tiles in a turn"),
        Decision("stop offered", "stop offered", "stops offered"),
        Decision("stop made", "stop made", "stops made"),
        Decision("closing offered", "closed double offered", "closed doubles offered"),
        Decision("closed made", "double laid closed", "doubles laid closed"),
        Decision("hundred offered", "hundred offered", "hundreds offered"),
        Decision("hundred made", "hundred declared", "hundreds declared"),
        Decision("write-off offered", "fish to write off offered", "fish to write off offered"),
        Decision("write_off made", "fish written off", "fish written off"),
        Decision("decline made", "write-off declined", "write-offs declined"),
    )
    #: the decisions ``referee check`` stages, by game
    stages: dict[str, tuple[Stage, ...]] = {}

    # -- bots: the wire --------------------------------------------------------------------------

    #: the match builds this family's ``turn`` lines by hand from the state, as the line games'
    #: (:class:`referee.conversation.handmade.TurnLines`); a family whose :meth:`turn_message` says
    #: more sets it false and its turns are encoded from that message.  A family that overrides
    #: :meth:`turn_message` must say which (``__init_subclass__`` refuses it otherwise).
    handmade_turn = True

    def turn_message(self, state: DealState, time_ms: int, bank_ms: int | None = None,
                     turn_id: int | m.UnsetType = m.UNSET) -> m.Turn:
        return turn_message(state, time_ms, bank_ms, turn_id)

    def public_turn(self, state: DealState) -> m.Turn | None:
        """A ``turn`` with no legal entry that any seat may be told now, where a family's turn
        carries only public fields and its events do not say all of them (kolbasa's rows and
        lines): the learning environments keep every seat's view current with it.  ``None``
        (here): a turn holds the mover's own hand, and the events say the rest."""
        return None

    def turn_line(self, state: DealState, time_ms: int, bank_ms: int | None, turn_id: int) -> bytes:
        """:meth:`turn_message`'s ``turn``, encoded (what the match sends, which it builds faster)."""
        return m.encode_line(self.turn_message(state, time_ms, bank_ms, turn_id))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "turn_message" in cls.__dict__ and "handmade_turn" not in cls.__dict__:
            raise TypeError(f"{cls.__qualname__} overrides turn_message: say whether the match may build its turns by hand "
                            "(handmade_turn = True: the line games' fields only) or must encode turn_message (False)")

    def play_option(self, state: DealState, p: Play) -> m.PlayOption:
        return play_option(p)

    def event_lines(self, state: DealState, event: Event, players: int) -> list[bytes]:
        return event_lines(event, players)

    def deal_start(self, game: Game, deal: Deal, state: DealState, seat: int, game_number: int) -> m.DealStart:
        return deal_start(game, deal, state, seat, game_number)

    def engine_play(self, state: DealState, msg: m.Play) -> Play:
        # A bot's play is the same message object each time it writes the same line
        # (lines.hear), and engine_play is a function of the message: each is worked out once.
        hit = _ENGINE_BY_ID.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        p = engine_play(msg)
        if len(_ENGINE_BY_ID) < 4096:  # msg is kept, so its id names no other while it is here
            _ENGINE_BY_ID[id(msg)] = (msg, p)
        return p

    def play_text(self, state: DealState, p: Play) -> str:
        """A move as the log's ``as`` and a fault's list of legal moves name it."""
        hit = _TEXT_BY_ID.get(id(p))
        if hit is None or hit[0] is not p:
            hit = (p, str(p))
            if len(_TEXT_BY_ID) < 4096:  # as _OPTION_BY_ID: the engine's plays are interned
                _TEXT_BY_ID[id(p)] = hit
        return hit[1]

    # -- people: ``referee replay`` ----------------------------------------------------------------

    def replay_deal(self, state: DealState) -> list[str]:
        """Lines the replay prints at a deal's start, before the hands."""
        return []

    def replay_event(self, e: Event, state: DealState, upto: int, who: Who, ms: str) -> list[str]:
        """The replay's lines for one event, the ``upto``-th of the deal (``ms``: the time of the
        play that made it, " (staged)", or empty)."""
        if type(e) is Placed:
            where = "leads" if e.end is None else f"plays on the {END_NAMES[e.end]}"
            forced = " (forced)" if e.forced else ""
            closed = " closed" if e.closed else ""
            return [f"   {who(e.seat)} {where} {tile_text(e.tile)}{closed}{forced}{ms}", f"      {self.layout_text(state, upto)}"]
        if type(e) is Scored:
            return [f"      the ends add up to {e.count}: {who(e.seat)} writes {e.points}"]
        if type(e) is Declared:
            return [f"   {who(e.seat)} {DECLARED_TEXT[e.what]}"]
        if type(e) is Drew:
            return [f"   {who(e.seat)} draws {e.count}: " + " ".join(tile_text(t) for t in e.tiles)]
        if type(e) is Passed:
            return [f"   {who(e.seat)} knocks"]
        return []

    def layout_text(self, state: DealState, upto: int) -> str:
        """The layout after the first ``upto`` events, as one line for people: its tiles left to
        right."""
        return "".join(f"[{a}|{b}]" for a, b in line_of(state.history[:upto]))

    def replay_deal_end(self, state: DealState) -> list[str]:
        """Lines the replay prints when a deal ends, before its result."""
        return []

    # -- people: the web report's replay --------------------------------------------------------

    def web_deal(self, d: DealSteps, state: DealState, hands: list[list[str]]) -> None:
        """Add what this family's deal document holds beyond the hands (``hands``: the log's, as
        dealt) before the first step."""

    def web_event(self, d: DealSteps, e: Event, state: DealState, who: Who, ms: float | None) -> None:
        """The step (or steps) of one event: what changed, in words and data."""
        if type(e) is Placed:
            d.hands[e.seat].discard(e.tile)
            self.web_place(d, e, state, who, ms)
        elif type(e) is Drew:
            got = list(e.tiles)
            d.drawn += e.count
            d.hands[e.seat].update(got)
            d.step("draw", e.seat, f"{who(e.seat)} draws {e.count}", tiles=[tile_name(t) for t in got])
        elif type(e) is Passed:
            d.step("pass", e.seat, self.web_pass_text(d, e, state, who))
        elif type(e) is Scored:
            # Points written during play (telephone, muggins).
            side = d.side_of(e.seat)
            wrote = [0] * len(d.sides)
            wrote[side] = e.points
            d.scores[side] += e.points
            d.step("score", e.seat, f"{who(e.seat)} writes {e.points} (the ends count {e.count})", wrote=wrote)
        elif type(e) is Declared:
            d.step("declare", e.seat, f"{who(e.seat)} declares: {DECLARED_STEP.get(e.what, e.what)}")
        else:  # an event this page does not know yet still gets its step, so the counter stays true
            seat = getattr(e, "seat", None)
            d.step(type(e).__name__.lower(), seat, f"{who(seat) if seat is not None else 'the referee'}: {e}")

    def web_place(self, d: DealSteps, e: Placed, state: DealState, who: Who, ms: float | None) -> None:
        closed = getattr(e, "closed", False)  # a double laid face down (osel)
        end = None if e.end is None else state.layout.names[e.end]
        text = (f"{who(e.seat)} {'leads' if end is None else 'plays'} {tile_name(e.tile)}{'' if end is None else f' on the {end}'}"
                + (" face down (closed)" if closed else "") + (" (forced)" if e.forced else ""))
        d.step("place", e.seat, text, tile=tile_name(e.tile), end=end, forced=e.forced, closed=closed, ms=ms)

    def web_pass_text(self, d: DealSteps, e: Passed, state: DealState, who: Who) -> str:
        return f"{who(e.seat)} knocks (passes)"

    # -- ``referee check``: the decisions a bot was offered and made ------------------------------

    def offered(self, seat: int, state: DealState, turn: m.Turn, memo: dict[str, Any]) -> Iterable[str]:
        """The :attr:`decisions` a turn offers ``seat`` (``state``: the deal as it is asked;
        ``memo``: the side's notes across one game's turns)."""
        legal = turn.legal
        if turn.continuing:
            yield "turns going on"
        if any(o.stop is True for o in legal):
            yield "stop offered"
        if any(o.closed is True for o in legal):
            yield "closing offered"
        if any(o.declare == "hundred" for o in legal):
            yield "hundred offered"
        if any(o.declare == "write_off" for o in legal):
            yield "write-off offered"

    def made(self, rec: PlayRecord, memo: dict[str, Any]) -> Iterable[str]:
        """The :attr:`decisions` an accepted play made."""
        for flag in ("closed", "stop"):
            if getattr(rec, flag):
                yield f"{flag} made"
        if rec.declare:
            yield f"{rec.declare} made"


#: ``id(play) -> (play, str(play))`` for :meth:`GameSide.play_text` (the play is kept, so its id
#: is not reused while it is a key).
_TEXT_BY_ID: dict[int, tuple[Play, str]] = {}
