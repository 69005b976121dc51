"""mexican_train on the wire: trains by name, markers and the open double in every ``turn``.

A move names a tile and a train (``{"type":"play","tile":[5,6],"train":"mexican"}``); trains are
named ``"seat0"`` … ``"seat3"`` (the train that seat owns) and ``"mexican"``, the names of the
engine's :class:`~referee.engine.layout.Trains`.  What differs from the line games' encoding
(:mod:`referee.wire`):

* ``turn.legal`` entries carry ``train`` (``end`` is null), and every ``turn`` adds ``trains``
  (each train's end, its length and its marker), ``open_double`` and ``open_trains``; ``ends``
  names every train's end.
* ``placed`` carries ``train``.  The station double is no ``placed`` event: it comes from no
  seat's hand, and ``deal.station`` names it.
* ``deal`` carries the ``station`` double and the ``round`` (0 for 6-6 … 6 for 0-0).
* A ``play`` must name a known train: a missing or unknown one is an illegal move that says
  which trains exist.
"""

from __future__ import annotations

from protocol import messages as m
from referee.engine.deal import Deal
from referee.engine.errors import IllegalPlay
from referee.engine.game import Game
from referee.engine.line import STOP, Event, Placed, Play
from referee.engine.state import DealState
from referee.engine.tiles import N_TILES, tile
from referee.engine.trains import TrainDeal, train_play
from referee.wire import TILE_JSON, GameWire, engine_play, event_lines, hand_json

#: the train names of an ``n``-seat round, by train index
TRAIN_NAMES: dict[int, tuple[str, ...]] = {n: (*(f"seat{s}" for s in range(n)), "mexican") for n in (2, 3, 4)}


class TrainWire(GameWire):
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


WIRE = TrainWire()
