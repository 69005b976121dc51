"""kolbasa's side: its places on the wire, its two lines in the replay and the web report, and
its knife and inserted double in ``referee check`` (RULES.md §7 KB-1…KB-15; for bots, docs/protocol/kolbasa.md).

The engine's kolbasa deal (:class:`~referee.engine.core.kolbasa.KolbasaDeal`) moves the tile turned
up to a *place* (an int of :mod:`referee.engine.core.layout`); the protocol names places
(``"top"``, ``"bottom"``, ``"top:J"``, ``"bottom:J"``, ``"knife:I"``, and ``"start"`` in the
``placed`` of the start) and carries them in a ``place`` field where line games have ``end``.
This module builds kolbasa's messages and reads its plays.

What a seat is told is what KB-15 lets it see, nothing more: the tile turned up (``turned``)
and where it went (``placed``, ``tailed``, ``cut``), the layout (``turn.lines``), both rows'
lengths (``counts``) and each row with the tiles that returned face down in their public order
(``rows``: null for a tile still as dealt).  ``hand`` is always empty: a row is face down even
to its owner.

``referee replay`` draws the start as one column across both lines, its top half on the top
line, and every tile after it the same width, so a knife's position ``i`` is the ``i``-th tile
of both lines, one above the other::

    top    {2}[2|4][4|6][6|5]
    bottom {3}[3|1][1|4][4|0]

The web report's ``sausage`` renderer draws the sausage as the engine's own layout
(:class:`~referee.engine.core.layout.Sausage`) lays it, step by step, and each row in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType

from protocol import messages as m
from protocol.bot import State
from referee.engine.core.deal import Deal
from referee.engine.core.errors import IllegalPlay
from referee.engine.core.game import Game
from referee.engine.core.kolbasa import KolbasaDeal
from referee.engine.core.layout import BOTTOM_END, INSERT_TOP, KNIFE, TOP_END, Sausage, parse_place, place_name
from referee.engine.core.line import Cut, Event, Placed, Play, Tailed, Turned
from referee.engine.core.state import DealState
from referee.engine.core.tiles import N_TILES, OTHER, parse_tile, tile, tile_name, tile_text
from referee.records.records import Play as PlayRecord
from referee.sides.base import TILE_JSON, DealSteps, Decision, GameSide, Stage, Who
from referee.sides.encoding import Encoding, Part
from referee.sides.pages import Board, RowsPage

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


#: junctions and knife positions a place may name for a learner (a line never holds more tiles)
KOLBASA_SPAN = 29
#: the most decisions a kolbasa deal may take (its knives send tiles back to the rows)
KOLBASA_MOVES = 1000


class SausageEncoding(Encoding):
    """kolbasa's, for learners: the tile is the one turned up, so an action is its place: 0
    ``top``, 1 ``bottom``, ``2 + j`` for ``top:j``, ``2 + SPAN + j`` for ``bottom:j``, ``2 + 2 SPAN + i``
    for ``knife:i``.  The observer's ``hand`` is its row's public tiles, the table its lines (a
    tile cut goes back to a row), and the observation adds every row's public tiles and the tile
    turned up."""

    ends = ("top", "bottom")
    extras = ()
    placed_stay = False
    max_moves = KOLBASA_MOVES

    @property
    def placements(self) -> int:
        return 2 + 3 * KOLBASA_SPAN

    def placement_of(self, o: m.PlayOption | m.Play, game: str) -> int:
        place = parse_place(o.place) if isinstance(o.place, str) else None
        if place is None:
            raise ValueError(f"{o.place!r} is not a kolbasa place")
        kind, k = divmod(place, 100)
        if kind and not k < KOLBASA_SPAN:
            raise ValueError(f"place {o.place} is past the {KOLBASA_SPAN} this encoding numbers")
        return place if kind == 0 else 2 + (kind - 1) * KOLBASA_SPAN + k

    def placement_name(self, action: int) -> str:
        if action < 2:
            return ("top", "bottom")[action]
        kind, k = divmod(action - 2, KOLBASA_SPAN)
        return f"{('top', 'bottom', 'knife')[kind]}:{k}"

    def parts(self) -> list[Part]:
        return [("rows", self.players * N_TILES, 0, 1, "for each seat from the observer, 1 for each tile of its row that is public"),
                ("up", N_TILES, 0, 1, "one-hot: the tile turned up and waiting for its place")]

    def own_tiles(self, state: State) -> list[tuple[int, int]]:
        return [t for t in state.rows[state.seat] if t is not None] if state.rows else []

    def observe(self, state: State, obs: Any, at: dict[str, int], up: int) -> None:
        n, me = self.players, state.seat
        lines = state.lines
        if lines is not None:
            for a, b in [*([lines.start] if lines.start is not None else []), *lines.top, *lines.bottom]:
                obs[at["table"] + tile(a, b)] = 1
        for s in range(n):
            for t in state.rows[s] if state.rows else ():
                if t is not None:
                    obs[at["rows"] + ((s - me) % n) * N_TILES + tile(*t)] = 1
        if up >= 0:
            obs[at["up"] + up] = 1


class KolbasaSide(GameSide):
    deals = ("referee.engine.core.kolbasa.KolbasaDeal",)
    layout = "sausage"
    encoding = SausageEncoding
    page = RowsPage
    decisions = (*GameSide.decisions,
                 Decision("knife offered", "knife offered", "knives offered"),
                 Decision("knife made", "knife laid", "knives laid"),
                 Decision("insertion offered", "double to insert offered", "doubles to insert offered"),
                 Decision("insertion made", "double inserted", "doubles inserted"))

    #: its turns say more than the line games' (the match encodes :meth:`turn_message`)
    handmade_turn = False

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

    def public_turn(self, state: DealState) -> m.Turn:
        """Every field of a kolbasa ``turn`` is public (KB-15: ``hand`` is empty, the rows are
        as every seat may know them): the mover's turn without its legal places."""
        assert isinstance(state, KolbasaDeal)
        return m.Turn(legal=[], hand=[], ends=ends_json(state), counts=[len(r) for r in state.rows], bazaar=0, time_ms=0,
                      lines=lines_json(state), rows=rows_json(state.public_rows()))

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

    # -- people: ``referee replay`` ----------------------------------------------------------------

    def replay_deal(self, state: DealState) -> list[str]:
        return ["   the rows, left to right (the rightmost is turned up first):"]

    def replay_event(self, e: Event, state: DealState, upto: int, who: Who, ms: str) -> list[str]:
        assert isinstance(state, KolbasaDeal)
        if type(e) is Turned:
            return [f"   {who(e.seat)} turns up {tile_text(e.tile)}"]
        if type(e) is Tailed:
            return ["      fits nowhere: face down to the left of its row"]
        if type(e) is Placed:
            out = [f"      {where_text(e.end)}{' (automatic)' if e.forced else ''}{ms}"]
            if e.end is None or e.end < KNIFE:  # a knife's layout is drawn after its cut
                out += [f"      {x}" for x in lines_text(state)]
            return out
        if type(e) is Cut:
            return [f"      it cuts {len(e.tiles)} tiles, face down to the left of {who(e.to)}'s row: "
                    + " ".join(tile_text(t) for t in e.tiles)] + [f"      {x}" for x in lines_text(state)]
        return []

    # -- people: the web report's replay --------------------------------------------------------

    def web_deal(self, d: DealSteps, state: DealState, hands: list[list[str]]) -> None:
        d.doc.rows = True  # hands are rows of face-down tiles, in order
        d.rows = [[parse_tile(t) for t in h] for h in hands]
        d.own = Sausage()
        d.table = _sausage_doc(d.own)

    def web_event(self, d: DealSteps, e: Event, state: DealState, who: Who, ms: float | None) -> None:
        assert d.rows is not None
        if type(e) is Turned:
            d.up = e.tile
            d.step("turn", e.seat, f"{who(e.seat)} turns up {tile_name(e.tile)}", tile=tile_name(e.tile))
        elif type(e) is Tailed:
            row = d.rows[e.seat]
            row.remove(e.tile)
            row.insert(0, e.tile)
            d.up = None
            d.step("tail", e.seat, f"{tile_name(e.tile)} fits nowhere: face down to the left end of {who(e.seat)}'s row",
                   tile=tile_name(e.tile))
        elif type(e) is Cut:
            d.rows[e.to][:0] = e.tiles
            d.hands[e.to].update(e.tiles)
            d.table = _sausage_doc(d.own)
            d.step("cut", e.seat, f"{who(e.seat)}'s knife cuts the sausage: {len(e.tiles)} tiles go face down to the left end of "
                   f"{who(e.to)}'s row", tiles=[tile_name(t) for t in e.tiles], to=e.to)
        else:
            super().web_event(d, e, state, who, ms)

    def web_place(self, d: DealSteps, e: Placed, state: DealState, who: Who, ms: float | None) -> None:
        """Lay a placement on the deal's sausage (the engine's :class:`Sausage`) and take the tile
        from its row.  A knife's step shows it across its junction with the sausage still whole;
        the :class:`Cut` step after it shows the cut."""
        assert d.rows is not None
        sausage: Sausage = d.own
        d.rows[e.seat].remove(e.tile)
        d.up = None
        name, t = tile_name(e.tile), e.end
        if t is not None and t >= KNIFE:
            i = t - KNIFE
            top = sausage.junction(0, i)
            d.table = msgspec.structs.replace(_sausage_doc(sausage), knife=Knife(i, [top, OTHER[e.tile][top]]))
            sausage.lay(e.tile, t)
            end, text = place_name(t), f"{who(e.seat)} lays {name} as a knife across junction {i}"
        else:
            sausage.lay(e.tile, t)
            d.table = _sausage_doc(sausage)
            if t is None:
                end, text = None, f"{name}, the first tile of {who(e.seat)}'s row, is the start"
            elif t < 100:
                end, text = place_name(t), f"{who(e.seat)} lays {name} on the {place_name(t)} line"
            else:
                line, j = divmod(t - 100, 100)
                end, text = place_name(t), f"{who(e.seat)} inserts {name} into the {('top', 'bottom')[line]} line at junction {j}"
        d.step("place", e.seat, text, tile=name, end=end, forced=e.forced, closed=getattr(e, "closed", False), ms=ms)

    # -- ``referee check`` -------------------------------------------------------------------------

    def offered(self, seat: int, state: DealState, turn: m.Turn, memo: dict[str, Any]) -> Iterable[str]:
        yield from super().offered(seat, state, turn, memo)
        places = [o.place for o in turn.legal if isinstance(o.place, str)]
        if any(p.startswith("knife:") for p in places):
            yield "knife offered"
        if any(p.startswith(("top:", "bottom:")) for p in places):
            yield "insertion offered"

    def made(self, rec: PlayRecord, memo: dict[str, Any]) -> Iterable[str]:
        yield from super().made(rec, memo)
        place = rec.place or ""
        if place.startswith("knife:"):
            yield "knife made"
        elif place.startswith(("top:", "bottom:")):
            yield "insertion made"


def lines_text(state: KolbasaDeal) -> list[str]:
    """The two lines, start first, each tile as ``[near|far]``, and the rows' lengths."""
    lay = state.layout
    out = []
    for name, half, line in (("top", lay.start[0], lay.lines[0]), ("bottom", lay.start[1], lay.lines[1])):
        out.append(f"{name:<7}{{{half}}}" + "".join(f"[{near}|{far}]" for near, far in line))
    out.append(f"rows: seat 0 has {len(state.rows[0])} tiles, seat 1 has {len(state.rows[1])}")
    return out


def where_text(place: int | None) -> str:
    if place is None:
        return "laid as the start"
    if place in (TOP_END, BOTTOM_END):
        return f"laid on the {'top' if place == TOP_END else 'bottom'} line"
    if place < KNIFE:
        line, j = divmod(place - INSERT_TOP, 100)
        return f"inserted into junction {j} of the {('top', 'bottom')[line]} line"
    return f"laid across as a knife at position {place - KNIFE}"


class Knife(Struct):
    """A knife being laid: across junction ``at`` of the sausage, ``tile`` as ``[near, far]``."""

    at: int
    tile: list[int]


class SausageBoard(Board):
    """kolbasa's table as the engine's layout has it: the start (top half first) and each line
    outward, tiles as ``[near, far]``; and the knife of a step that lays one."""

    start: list[int] | None
    top: list[list[int]]
    bottom: list[list[int]]
    knife: Knife | UnsetType = UNSET


def _sausage_doc(s: Sausage) -> SausageBoard:
    return SausageBoard(None if s.start[0] < 0 else list(s.start), [list(t) for t in s.lines[0]], [list(t) for t in s.lines[1]])


def _places(*kinds: str) -> Callable[[DealState, list[m.PlayOption]], bool]:
    """A place of one of these kinds is offered (``knife:i``; ``top:j``/``bottom:j``, a double
    inserted into a junction)."""
    return lambda state, legal: any(isinstance(o.place, str) and o.place.partition(":")[0] in kinds and ":" in o.place
                                    for o in legal)


KolbasaSide.stages = {
    "kolbasa": (
        Stage("knife", "a knife", "knife offered", _places("knife"), "knife made", "it placed the tile elsewhere (KB-3, KB-5)"),
        Stage("double", "a double to insert", "insertion offered", _places("top", "bottom"), "insertion made",
              "it placed the double at a line's end (KB-4, KB-6)"),
    ),
}

SIDE = KolbasaSide()
