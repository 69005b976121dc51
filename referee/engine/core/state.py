"""The deal-state interface: what everything above the engine may ask of a deal in progress.

The table, the wire, the log, replay and verify, ``check`` and the benchmarks name only
:class:`DealState` (and :class:`~.line.Play`, the events of :mod:`.line`), never a concrete
deal class, so a game with another layout or other turns plugs in below them.  Today these
classes implement it: :class:`~.line.LineDeal` (the line games), :class:`~.cross.CrossDeal`
(osel, telephone, muggins) and :class:`~.trains.TrainDeal` (mexican_train) and
:class:`~.kolbasa.KolbasaDeal` (kolbasa's two lines; see :mod:`.layout`).

Shape (OpenSpiel's and python-chess's): :meth:`to_move` is a seat or ``TERMINAL``;
:meth:`legal_plays` lists every legal move of that seat in a fixed order, :data:`~.line.STOP`
and declarations included; :meth:`apply` is the unchecked fast path and :meth:`push` the checked
one that raises :class:`~.errors.IllegalPlay` with a reason a bot author can act on; the deal
performs forced leads, draws and passes itself and records everything in :attr:`history`;
:attr:`end` is ``None`` until the deal is over.
"""

from __future__ import annotations

from typing import Protocol

from .layout import Layout
from .line import DealEnd, Event, Play
from .tiles import Tile, TileSet


class DealState(Protocol):
    n: int  # seats
    hands: list[TileSet]  # every hand, as tile sets (hidden information: only views may show them)
    history: list[Event]  # placements, draws, passes and points written during play, in order
    end: DealEnd | None
    leader: int
    lead_tile: Tile | None  # a forced lead, already placed
    bazaar: tuple[Tile, ...]  # the tiles left to draw (empty when the undealt tiles sleep)

    @property
    def layout(self) -> Layout: ...  # read-only here: a cross deal holds a Cross

    ends: list[int]  # the layout's end values, -1 for an end that is closed or not open
    turn: int
    #: the seat to move is going on with a turn it began (multi-tile turns, TURN-1)
    continuing: bool

    def to_move(self) -> int: ...

    def legal_plays(self) -> list[Play]: ...

    def apply(self, p: Play) -> None: ...

    def push(self, p: Play, seat: int | None = None) -> Play: ...

    def check(self, p: Play, seat: int | None = None) -> None: ...

    def forfeit(self, seat: int) -> None: ...

    def bazaar_left(self) -> int: ...

    def count(self) -> int | None:
        """The count of the open ends in games that write points during play, else ``None``."""
        ...

    def copy(self) -> DealState: ...
