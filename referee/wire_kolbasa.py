"""kolbasa between the engine and the wire (RULES.md §7 KB-1…KB-15, PROTOCOL.md "kolbasa").

The engine's kolbasa deal (:class:`~referee.engine.kolbasa.KolbasaDeal`) moves the tile turned
up to a *place* (an int of :mod:`referee.engine.layout`); the protocol names places
(``"top"``, ``"bottom"``, ``"top:J"``, ``"bottom:J"``, ``"knife:I"``, and ``"start"`` in the
``placed`` of the start) and carries them in a ``place`` field where line games have ``end``.
This module builds kolbasa's messages and reads its plays; :mod:`referee.wire` hands it every
kolbasa deal state.

What a seat is told is what KB-15 lets it see, nothing more: the tile turned up (``turned``)
and where it went (``placed``, ``tailed``, ``cut``), the layout (``turn.lines``), both rows'
lengths (``counts``) and each row with the tiles that returned face down in their public order
(``rows``: null for a tile still as dealt).  ``hand`` is always empty: a row is face down even
to its owner.
"""

from __future__ import annotations

from protocol import messages as m
from referee.engine.deal import Deal
from referee.engine.errors import IllegalPlay
from referee.engine.game import Game
from referee.engine.kolbasa import KolbasaDeal
from referee.engine.layout import parse_place, place_name
from referee.engine.line import Cut, Event, Placed, Play, Tailed, Turned
from referee.engine.state import DealState
from referee.engine.tiles import tile
from referee.wire import TILE_JSON, GameWire

START = "start"
_OPTIONS: dict[Play, m.PlayOption] = {}


def play_option(p: Play) -> m.PlayOption:
    """A legal place as a ``turn.legal`` entry: ``{"tile": [a, b], "place": "knife:3"}``."""
    opt = _OPTIONS.get(p)
    if opt is None:
        assert p.end is not None  # the start is never a move (KB-9)
        opt = _OPTIONS[p] = m.PlayOption(TILE_JSON[p.tile], place=place_name(p.end))
    return opt


def rows_json(rows: list[list[int | None]]) -> list[list[tuple[int, int] | None]]:
    return [[None if t is None else TILE_JSON[t] for t in row] for row in rows]


def lines_json(state: KolbasaDeal) -> m.Lines:
    lay = state.layout
    return m.Lines(None if lay.start[0] < 0 else lay.start, list(lay.lines[0]), list(lay.lines[1]))


def ends_json(state: KolbasaDeal) -> dict[str, int]:
    return {name: v for name, v in zip(("top", "bottom"), state.ends) if v >= 0}


class KolbasaWire(GameWire):
    """kolbasa's encoding, for :func:`referee.wire.wire_for`."""

    def turn_message(self, state: DealState, time_ms: int, bank_ms: int | None = None,
                     turn_id: int | m.UnsetType = m.UNSET) -> m.Turn:
        assert isinstance(state, KolbasaDeal)
        return m.Turn(
            legal=[play_option(p) for p in state.legal_plays()],
            hand=[],
            ends=ends_json(state),
            counts=[len(r) for r in state.rows],
            bazaar=0,
            time_ms=time_ms,
            bank_ms=bank_ms,
            id=turn_id,
            lines=lines_json(state),
            rows=rows_json(state.public_rows()),
        )

    def play_option(self, state: DealState, p: Play) -> m.PlayOption:
        return play_option(p)

    def event_lines(self, state: DealState, event: Event, players: int) -> list[bytes]:
        """The line every seat receives for a kolbasa event (all of them are public)."""
        kind = type(event)
        if kind is Placed:
            assert isinstance(event, Placed)
            msg: m.ToBot = m.Placed(event.seat, TILE_JSON[event.tile], forced=event.forced,
                                    place=START if event.end is None else place_name(event.end))
        elif kind is Turned:
            assert isinstance(event, Turned)
            msg = m.Turned(event.seat, TILE_JSON[event.tile])
        elif kind is Tailed:
            assert isinstance(event, Tailed)
            msg = m.Tailed(event.seat, TILE_JSON[event.tile])
        else:
            assert isinstance(event, Cut)
            msg = m.Cut(event.seat, event.to, [TILE_JSON[t] for t in event.tiles])
        return [m.encode_line(msg)] * players

    def deal_start(self, game: Game, deal: Deal, state: DealState, seat: int, game_number: int) -> m.DealStart:
        """The ``deal`` message: no hand (the row is face down, even to its owner), and both rows
        as dealt, every tile unseen."""
        return m.DealStart(
            game=game.variant.id,
            options=dict(game.options),
            players=game.players,
            seat=seat,
            side=seat,
            partner=None,
            hand=[],
            leader=state.leader,
            scores=list(game.totals),
            bazaar=0,
            game_number=game_number,
            deal_number=game.next_number,
            rows=[[None] * len(h) for h in deal.hands],
        )

    def engine_play(self, state: DealState, msg: m.Play) -> Play:
        """A bot's kolbasa ``play`` as an engine :class:`Play` (the engine then checks the tile is
        the one turned up and the place one of its places).

        Raises:
            IllegalPlay: no tile, no place, an end instead of a place, a place that names none,
                or a stop, closed double or declaration (kolbasa has none).
        """
        if msg.stop is True or msg.declare is not m.UNSET or msg.closed is True:
            raise IllegalPlay('kolbasa has no stop, closed double or declaration: send the tile turned up and its "place"',
                              IllegalPlay.BAD_MOVE)
        if msg.tile is None:
            raise IllegalPlay('"tile" is null: send the tile turned up and its "place"', IllegalPlay.NOT_YOUR_TILE)
        t = tile(*msg.tile)
        end = None if msg.end is m.UNSET else msg.end
        if msg.place is m.UNSET:
            if end is not None:
                raise IllegalPlay(f'kolbasa names a "place", not an end ({end!r}): send "place" as turn.legal gives it',
                                  IllegalPlay.BAD_END)
            raise IllegalPlay('no "place": send the place as turn.legal gives it, e.g. "place": "top"', IllegalPlay.BAD_END)
        if end is not None:
            raise IllegalPlay('send a "place" and no "end" (kolbasa has places, not ends)', IllegalPlay.BAD_END)
        place = parse_place(msg.place)
        if place is None:
            raise IllegalPlay(f'{msg.place!r} is not a place; places are named "top", "bottom", "top:J", "bottom:J" and "knife:I"',
                              IllegalPlay.BAD_END)
        return Play(t, place)

    def play_text(self, state: DealState, p: Play) -> str:
        assert isinstance(state, KolbasaDeal)
        return state.play_text(p)


WIRE = KolbasaWire()
