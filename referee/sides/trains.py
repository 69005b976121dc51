"""mexican_train's side: its trains on the wire, in the replay, in the web report and in ``referee
check`` (RULES.md §7 MT-1…MT-12).

On the wire a move names a tile and a train (``{"type":"play","tile":[5,6],"train":"mexican"}``); trains are
named ``"seat0"`` … ``"seat3"`` (the train that seat owns) and ``"mexican"``, the names of the
engine's :class:`~referee.engine.core.layout.Trains`.  What differs from the line games' encoding
(:mod:`referee.sides.base`):

* ``turn.legal`` entries carry ``train`` (``end`` is null), and every ``turn`` adds ``trains``
  (each train's end, its length and its marker), ``open_double`` and ``open_trains``; ``ends``
  names every train's end.
* ``placed`` carries ``train``.  The station double is no ``placed`` event: it comes from no
  seat's hand, and ``deal.station`` names it.
* ``deal`` carries the ``station`` double and the ``round`` (0 for 6-6 … 6 for 0-0).
* A ``play`` must name a known train: a missing or unknown one is an illegal move that says
  which trains exist.

``referee replay`` draws each train from the station outward, with its marker and an open or
hanging double; the web report's ``trains`` renderer draws a row per train.  ``referee check``
counts and stages the train open to a seat by its marker and a double left hanging.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec import Struct

from protocol import messages as m
from protocol.bot import State
from referee.engine.core.deal import Deal
from referee.engine.core.errors import IllegalPlay
from referee.engine.core.game import Game
from referee.engine.core.line import STOP, Event, Passed, Placed, Play
from referee.engine.core.state import DealState
from referee.engine.core.tiles import IS_DOUBLE, N_TILES, tile, tile_name, tile_text
from referee.engine.core.trains import TrainDeal, train_play
from referee.records.records import Play as PlayRecord
from referee.sides.base import TILE_JSON, DealSteps, Decision, GameSide, Stage, Who, engine_play, event_lines, hand_json
from referee.sides.encoding import Encoding, Part
from referee.sides.pages import Board, Seat

#: the train names of an ``n``-seat round, by train index
TRAIN_NAMES: dict[int, tuple[str, ...]] = {n: (*(f"seat{s}" for s in range(n)), "mexican") for n in (2, 3, 4)}


class TrainsEncoding(Encoding):
    """mexican_train's, for learners: a tile on a train, ``seat0`` … ``seat{n-1}`` then ``mexican``
    (no lead: the station is no move), nothing else; the observation adds the markers and the open
    double, and the seats' trains are counted from the observer's own."""

    extras = ()

    def __init__(self, players: int) -> None:
        super().__init__(players)
        self.end_names = (*(f"seat{s}" for s in range(players)), "mexican")
        self._index = {name: i for i, name in enumerate(self.end_names)}

    @property
    def slots(self) -> int:
        return len(self.end_names)

    def slot_of(self, o: m.PlayOption | m.Play) -> int:
        return self._index[o.train] if isinstance(o.train, str) and o.train in self._index else -1

    def slot_name(self, slot: int) -> str:
        return self.end_names[slot]

    def parts(self) -> list[Part]:
        trains = len(self.end_names)
        return [("markers", trains, 0, 1, "1 for each train carrying a marker (trains: the seats' from the observer, then the Mexican)"),
                ("open_double", trains, 0, 1, "one-hot: the train whose last tile is a double not yet covered")]

    def end_place(self, i: int, me: int) -> int:
        return (i - me) % self.players if i < self.players else i

    def observe(self, state: State, obs: Any, at: dict[str, int], up: int) -> None:
        me = state.seat
        if state.station is not None:
            obs[at["table"] + tile(*state.station)] = 1
        for name in state.markers:
            if name in self._index:
                obs[at["markers"] + self.end_place(self._index[name], me)] = 1
        double = state.open_double
        if double is not None and double in self._index:
            obs[at["open_double"] + self.end_place(self._index[double], me)] = 1


class TrainSide(GameSide):
    deals = ("referee.engine.core.trains.TrainDeal",)
    layout = "trains"
    encoding = TrainsEncoding
    lead_word = "on the station"
    decisions = (*GameSide.decisions,
                 Decision("marked train offered", "marked train offered", "marked trains offered"),
                 Decision("marked train made", "marked train played on", "marked trains played on"),
                 Decision("hanging double offered", "hanging double to cover", "hanging doubles to cover"))

    def __init__(self) -> None:
        self._options: dict[tuple[Play, int], m.PlayOption] = {}
        self._placed: dict[tuple[int, int, int | None, bool, int], bytes] = {}

    def play_option(self, state: DealState, p: Play) -> m.PlayOption:
        key = (p, state.n)
        opt = self._options.get(key)
        if opt is None:
            assert p.end is not None  # every move names its train
            opt = self._options[key] = m.PlayOption(TILE_JSON[p.tile], None, train=TRAIN_NAMES[state.n][p.end])
        return opt

    #: its turns say more than the line games' (the match encodes :meth:`turn_message`)
    handmade_turn = False

    def turn_message(self, state: DealState, time_ms: int, bank_ms: int | None = None,
                     turn_id: int | m.UnsetType = m.UNSET) -> m.Turn:
        assert isinstance(state, TrainDeal)
        seat = state.turn
        names = TRAIN_NAMES[state.n]
        ends = state.ends
        laid = state.layout.laid
        markers = state.markers
        return m.Turn(
            legal=[self.play_option(state, p) for p in state.legal_plays()],
            hand=hand_json(state.hands[seat]),
            ends={names[e]: v for e, v in enumerate(ends)},
            counts=[h.bit_count() for h in state.hands],
            bazaar=state.bazaar_left(),
            time_ms=time_ms,
            bank_ms=bank_ms,
            id=turn_id,
            trains=[m.TrainEnd(names[e], v, laid[e], bool(markers >> e & 1)) for e, v in enumerate(ends)],
            open_double=names[state.open_train] if state.open_train >= 0 else None,
            open_trains=[names[e] for e in state.open_trains(seat)],
        )

    def event_lines(self, state: DealState, event: Event, players: int) -> list[bytes]:
        if type(event) is not Placed:
            return event_lines(event, players)
        if event.end is None:
            return []  # the station: deal.station names it, and it came from no seat's hand
        key = (event.seat, event.tile, event.end, event.forced, players)
        line = self._placed.get(key)
        if line is None:
            line = self._placed[key] = m.encode_line(m.Placed(event.seat, TILE_JSON[event.tile], None, event.forced,
                                                              train=TRAIN_NAMES[players][event.end]))
        return [line] * players

    def deal_start(self, game: Game, deal: Deal, state: DealState, seat: int, game_number: int) -> m.DealStart:
        assert isinstance(state, TrainDeal)
        msg = super().deal_start(game, deal, state, seat, game_number)
        msg.station = TILE_JSON[state.station]
        msg.round = game.next_number
        return msg

    def engine_play(self, state: DealState, msg: m.Play) -> Play:
        """A bot's ``play`` as the engine's move on a train index.

        Raises:
            IllegalPlay: no train, an unknown train, or an ``end`` instead of a train.
        """
        if msg.stop is True or msg.declare is not m.UNSET:
            return engine_play(msg)  # the deal refuses them, saying why
        names = TRAIN_NAMES[state.n]
        known = ", ".join(f'"{name}"' for name in names)
        if msg.tile is None:
            raise IllegalPlay('"tile" is null: a play names a tile and a train', IllegalPlay.NOT_YOUR_TILE)
        if msg.train is m.UNSET:
            if msg.end is not None:
                raise IllegalPlay(f'mexican_train has trains, not ends: send "train" ({known}) instead of "end": {msg.end!r}',
                                  IllegalPlay.BAD_END)
            raise IllegalPlay(f'a play names its train: "train" is one of {known}', IllegalPlay.BAD_END)
        if msg.train not in names:
            raise IllegalPlay(f"{msg.train!r} is not a train; with {state.n} players the trains are {known}", IllegalPlay.BAD_END)
        if msg.end is not None:
            raise IllegalPlay(f'a play names a train, not an end: send "end": null or leave it out (got {msg.end!r})', IllegalPlay.BAD_END)
        return train_play(tile(*msg.tile), names.index(msg.train))

    def play_text(self, state: DealState, p: Play) -> str:
        assert isinstance(state, TrainDeal)
        return "stop" if p == STOP else state.play_text(p) if 0 <= p.tile < N_TILES and p.declare is None else str(p)

    # -- people: ``referee replay`` ----------------------------------------------------------------

    def replay_event(self, e: Event, state: DealState, upto: int, who: Who, ms: str) -> list[str]:
        assert isinstance(state, TrainDeal)
        if type(e) is Placed:
            if e.end is None:
                return [f"   station {tile_text(e.tile)}; {who(e.seat)} starts"]
            return [f"   {who(e.seat)} plays {tile_text(e.tile)} on {state.train_name(e.end)}{ms}",
                    f"      {trains_text(state, upto, [e.end])[0]}"]
        if type(e) is Passed:
            _, _, open_train, _ = trains_at(state, upto)
            hangs = f"; the double on {state.train_name(open_train)} hangs" if open_train >= 0 else ""
            return [f"   {who(e.seat)} knocks: a marker goes on {state.train_name(e.seat)}{hangs}"]
        return super().replay_event(e, state, upto, who, ms)

    def replay_deal_end(self, state: DealState) -> list[str]:
        assert isinstance(state, TrainDeal)
        return ["   the trains:", *(f"      {line}" for line in trains_text(state, len(state.history)))]

    # -- people: the web report's replay --------------------------------------------------------

    def web_deal(self, d: DealSteps, state: DealState, hands: list[list[str]]) -> None:
        assert isinstance(state, TrainDeal)
        seats = d.doc.seats
        d.doc.table = TrainsTable([Train(name, _train_words(state, e, seats)) for e, name in enumerate(state.layout.names)])
        d.doc.station = tile_name(state.station)
        d.table = TrainsBoard([], None, False)

    def web_event(self, d: DealSteps, e: Event, state: DealState, who: Who, ms: float | None) -> None:
        assert isinstance(state, TrainDeal)
        # The text replay's reading of the markers and the open double, so both agree.
        _, markers, open_train, hangs = trains_at(state, d.events)
        names = state.layout.names
        d.table = TrainsBoard([names[s] for s in range(state.n) if markers >> s & 1], names[open_train] if open_train >= 0 else None,
                              hangs)
        super().web_event(d, e, state, who, ms)

    def web_place(self, d: DealSteps, e: Placed, state: DealState, who: Who, ms: float | None) -> None:
        assert isinstance(state, TrainDeal)
        name = tile_name(e.tile)
        if e.end is None:  # the station double: nobody's tile
            d.step("station", None, f"{name} on the station", tile=name, end=None)
            return
        text = f"{who(e.seat)} plays {name} on {_train_words(state, e.end, d.doc.seats)}"
        d.step("place", e.seat, text, tile=name, end=state.layout.names[e.end], forced=e.forced, closed=getattr(e, "closed", False), ms=ms)

    def web_pass_text(self, d: DealSteps, e: Passed, state: DealState, who: Who) -> str:
        assert isinstance(state, TrainDeal)
        hanging = d.table.open if isinstance(d.table, TrainsBoard) and d.table.hangs else None
        return (f"{who(e.seat)} knocks: a marker goes on its train"
                + (f"; the double on {_train_words(state, state.layout.names.index(hanging), d.doc.seats)} hangs" if hanging else ""))

    # -- ``referee check`` -------------------------------------------------------------------------

    def offered(self, seat: int, state: DealState, turn: m.Turn, memo: dict[str, Any]) -> Iterable[str]:
        """Besides the line games' decisions: whether the turn offers another seat's train (open
        by its marker), and whether it asks to cover a double that someone else laid and left
        hanging (the last tile placed since the seat's turn before is another seat's)."""
        yield from super().offered(seat, state, turn, memo)
        if turn.trains is None or turn.trains is m.UNSET:
            return
        history = state.history
        seen = memo.get(f"seen{seat}")
        since = seen[1] if seen is not None and seen[0] is state else 0
        memo[f"seen{seat}"] = (state, len(history))
        own = f"seat{seat}"
        covering = memo["covering"] = turn.open_double is not None and turn.open_double is not m.UNSET  # the turn must cover a double
        if not covering and any(isinstance(o.train, str) and o.train.startswith("seat") and o.train != own for o in turn.legal):
            yield "marked train offered"
        if covering:
            placed = [e for e in history[since:] if type(e) is Placed and e.end is not None]  # the station came from no hand
            if placed and placed[-1].seat != seat:
                yield "hanging double offered"

    def made(self, rec: PlayRecord, memo: dict[str, Any]) -> Iterable[str]:
        yield from super().made(rec, memo)
        train = rec.train or ""
        if train.startswith("seat") and train != f"seat{rec.seat}" and not memo.get("covering", False):
            yield "marked train made"


class Train(Struct):
    name: str  # as the placements' ``end`` names it
    label: str  # in words: whose it is


class TrainsTable(Board):
    """The deal's trains, in the order of the engine's layout."""

    trains: list[Train]


class TrainsBoard(Board):
    """What a step's trains show beyond their tiles: the markers (by train), the train with an
    uncovered double and whether that double hangs (MT-8)."""

    markers: list[str]
    open: str | None
    hangs: bool


def trains_at(state: TrainDeal, upto: int) -> tuple[list[int], int, int, bool]:
    """After the first ``upto`` events: the tiles on each train, the markers (a bitmask of
    seats), the train with an uncovered double (or -1) and whether that double hangs (its
    player passed, MT-8)."""
    laid = [0] * (state.n + 1)
    markers = 0
    open_train = -1
    hangs = False
    for e in state.history[:upto]:
        if type(e) is Passed:
            markers |= 1 << e.seat
            hangs = open_train >= 0
        elif type(e) is Placed and e.end is not None:
            laid[e.end] += 1
            if e.end == e.seat:
                markers &= ~(1 << e.seat)
            open_train = e.end if IS_DOUBLE[e.tile] else -1
            hangs = False
    return laid, markers, open_train, hangs


def trains_text(state: TrainDeal, upto: int, trains: list[int] | None = None) -> list[str]:
    """mexican_train's trains after the first ``upto`` events, one line each (``trains``: only
    those), tiles outward from the station: ``seat1    [5|6][6|6]  marker, open double``."""
    laid, markers, open_train, hangs = trains_at(state, upto)
    lines = []
    for t in range(state.n + 1) if trains is None else trains:
        tiles = "".join(f"[{near}|{far}]" for near, far in state.layout.tiles[t][:laid[t]]) or "-"
        notes = (["marker"] if markers >> t & 1 else []) + ([f"{'hanging' if hangs else 'open'} double"] if t == open_train else [])
        lines.append(f"{state.train_name(t):<8} {tiles}" + (f"  ({', '.join(notes)})" if notes else ""))
    return lines


def _train_words(state: TrainDeal, e: int, seats: list[Seat]) -> str:
    """Train ``e`` as players call it: "the Mexican train", "greedy_bot's train", and when that
    bot holds more than one seat, "greedy_bot's train (seat 2)"."""
    if e == state.n:
        return "the Mexican train"
    bot = seats[e].bot
    return f"{bot}'s train" + (f" (seat {e})" if sum(s.bot == bot for s in seats) > 1 else "")


def _marked_train(state: DealState, legal: list[m.PlayOption]) -> bool:
    """The seat may play on another seat's train, open to it by a marker (MT-4, MT-6)."""
    if not isinstance(state, TrainDeal) or state.open_train >= 0:  # an open double's train is open to all
        return False
    own = f"seat{state.to_move()}"
    return any(isinstance(o.train, str) and o.train.startswith("seat") and o.train != own for o in legal)


def _hanging_double(state: DealState, legal: list[m.PlayOption]) -> bool:
    """A double someone else laid and could not cover hangs, and this seat must cover it (MT-7,
    MT-8)."""
    if not isinstance(state, TrainDeal) or state.open_train < 0:
        return False
    laid = next(e for e in reversed(state.history) if type(e) is Placed)
    return laid.seat != state.to_move()


TrainSide.stages = {
    "mexican_train": (
        Stage("markers", "a train with a marker", "marked train offered", _marked_train, "marked train made",
              "it played on its own train or the Mexican (MT-4)"),
        Stage("hanging", "a hanging double", "hanging double offered", _hanging_double),
    ),
}

SIDE = TrainSide()
