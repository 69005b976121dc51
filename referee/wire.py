"""Between the engine and the wire: engine values as protocol messages, and bots' plays back.

The engine speaks tile ids and end indexes; the protocol speaks ``[low, high]`` arrays and end
names.  This module converts, and precomputes what every turn needs (a legal play's JSON form
is built once per tile and end, not once per turn).

The functions at module level are the line and cross games' encoding.  A game whose messages
carry more (mexican_train's trains, kolbasa's places) has its own module with a
:class:`GameWire` subclass, named in :data:`GAME_WIRES` by its deal-state class; the table,
verify and replay ask :func:`wire_for` for a deal's encoding and never name a game.
"""

from __future__ import annotations

import importlib

from protocol import messages as m
from referee.engine import END_NAMES, STOP, Play, play
from referee.engine.deal import Deal
from referee.engine.errors import IllegalPlay
from referee.engine.game import DealRecord, Game, GameOutcome
from referee.engine.line import DECLINE, HUNDRED, WRITE_OFF, Declared, Drew, Event, Passed, Placed, Scored
from referee.engine.state import DealState
from referee.engine.tiles import HIGH, LOW, N_TILES, tile

TILE_JSON: list[tuple[int, int]] = [(LOW[t], HIGH[t]) for t in range(N_TILES)]
_OPTIONS: dict[Play, m.PlayOption] = {}


def play_option(p: Play) -> m.PlayOption:
    opt = _OPTIONS.get(p)
    if opt is None:
        if p == STOP:
            opt = m.PlayOption(None, None, stop=True)
        elif p.declare is not None:
            opt = m.PlayOption(None if p.tile < 0 else TILE_JSON[p.tile], None, declare=p.declare)  # type: ignore[arg-type]
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
        return [m.encode_line(m.Declared(event.seat, event.what))] * players  # type: ignore[arg-type]
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
    return m.Special(sp.kind, sp.side, sp.deal, sp.of, sp.total)  # type: ignore[arg-type]


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


class GameWire:
    """One deal state's encoding: how its turns, events, deal starts and plays travel.  This base
    is the line and cross games' (the functions above); a game module overrides what differs."""

    def turn_message(self, state: DealState, time_ms: int, bank_ms: int | None = None,
                     turn_id: int | m.UnsetType = m.UNSET) -> m.Turn:
        return turn_message(state, time_ms, bank_ms, turn_id)

    def play_option(self, state: DealState, p: Play) -> m.PlayOption:
        return play_option(p)

    def event_lines(self, state: DealState, event: Event, players: int) -> list[bytes]:
        return event_lines(event, players)

    def deal_start(self, game: Game, deal: Deal, state: DealState, seat: int, game_number: int) -> m.DealStart:
        return deal_start(game, deal, state, seat, game_number)

    def engine_play(self, state: DealState, msg: m.Play) -> Play:
        return engine_play(msg)

    def play_text(self, state: DealState, p: Play) -> str:
        """A move as the log's ``as`` and a fault's list of legal moves name it."""
        hit = _TEXT_BY_ID.get(id(p))
        if hit is None or hit[0] is not p:
            hit = (p, str(p))
            if len(_TEXT_BY_ID) < 4096:  # as _OPTION_BY_ID: the engine's plays are interned
                _TEXT_BY_ID[id(p)] = hit
        return hit[1]


#: ``id(play) -> (play, str(play))`` for :meth:`GameWire.play_text` (the play is kept, so its id
#: is not reused while it is a key).
_TEXT_BY_ID: dict[int, tuple[Play, str]] = {}


LINE_WIRE = GameWire()

#: The deal states whose messages differ from the line games': the deal-state class (module and
#: name) and the module whose ``WIRE`` (a :class:`GameWire`) encodes them.  A new game adds one
#: line here.  The modules are imported when first needed (they import this one).
GAME_WIRES: dict[str, str] = {
    "referee.engine.trains.TrainDeal": "referee.wire_trains",
    "referee.engine.kolbasa.KolbasaDeal": "referee.wire_kolbasa",
}
_WIRE_OF: dict[type, GameWire] = {}


def wire_for(state: DealState) -> GameWire:
    """The encoding of ``state``'s game (:data:`LINE_WIRE` unless :data:`GAME_WIRES` names one)."""
    cls = type(state)
    w = _WIRE_OF.get(cls)
    if w is None:
        module = GAME_WIRES.get(f"{cls.__module__}.{cls.__qualname__}")
        w = LINE_WIRE if module is None else importlib.import_module(module).WIRE
        _WIRE_OF[cls] = w
    return w
