"""What a learner's actions and observation hold of one family of games: the line games' here,
each other family's in its side's module (:class:`~referee.sides.cross.CrossEncoding`,
:class:`~referee.sides.trains.TrainsEncoding`, :class:`~referee.sides.kolbasa.SausageEncoding`),
named by its side's :attr:`~referee.sides.base.GameSide.encoding`.

:class:`referee.envs.codec.Codec` numbers the actions and builds the observation of every game
from the protocol's messages; what differs by family is asked of its encoding, so the codec names
no family:

* the **placements**: the ends (or trains) a tile may go on, and how many numbers a placement
  takes (:meth:`Encoding.placement_of`, :meth:`Encoding.placement_name`), and the moves that are
  no tile on an end, numbered after them (:attr:`Encoding.extras`);
* the **observation**: which tiles are the observer's own (:meth:`Encoding.own_tiles`), whether
  a tile placed stays on the table (:attr:`Encoding.placed_stay`), an end's place from the
  observer (:meth:`Encoding.end_place`), and the family's own parts (:meth:`Encoding.parts`,
  filled by :meth:`Encoding.observe`).

Nothing here imports numpy (the ``rl`` extra's): an observation is written into the array the
codec gives, by index.  docs/envs.md lists what each family's numbers mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from protocol import messages as m
from protocol.bot import State
from referee.engine.core.layout import END_NAMES
from referee.engine.core.tiles import N_TILES, tile, tile_name

#: the moves that are no tile on an end, in the order their actions follow the placements
EXTRAS = ("stop", "hundred", "write_off", "decline")
#: the most decisions a deal of the family can take (OpenSpiel's game length): 28 placements, a
#: stop after each, the declarations
MAX_MOVES = 64

#: a part of the observation: its name, its size, its bounds and what its numbers mean
Part = tuple[str, int, float, float, str]


class Encoding:
    """The line games': a tile on slot 0 (the lead, whose ``end`` is null) or on an end, ``left``
    and ``right``; then ``stop``, ``hundred``, ``write_off`` and ``decline``."""

    #: the names of the ends an observation shows (and, but for the lead, a tile may go on)
    ends: ClassVar[tuple[str, ...]] = END_NAMES[:2]
    #: numbers a placement takes for one tile and slot: 2 where a double may be laid closed
    closing: ClassVar[int] = 1
    extras: ClassVar[tuple[str, ...]] = EXTRAS
    #: whether a tile placed stays on the table (kolbasa's cut tiles go back to the rows)
    placed_stay: ClassVar[bool] = True
    max_moves: ClassVar[int] = MAX_MOVES

    def __init__(self, players: int) -> None:
        self.players = players
        self.end_names: tuple[str, ...] = self.ends
        self._index = {name: i for i, name in enumerate(self.end_names)}

    @property
    def slots(self) -> int:
        """Slots a tile may go to: the lead, then each end."""
        return 1 + len(self.end_names)

    @property
    def placements(self) -> int:
        """How many actions place a tile (the extras are numbered after them)."""
        return N_TILES * self.slots * self.closing

    # -- actions ---------------------------------------------------------------------------------

    def slot_of(self, o: m.PlayOption | m.Play) -> int:
        """The slot an entry's tile goes to, or -1 when it names none of this game's."""
        if o.end is None or o.end is m.UNSET:
            return 0
        return 1 + self._index.get(o.end, -2)

    def slot_name(self, slot: int) -> str:
        return "lead" if slot == 0 else self.end_names[slot - 1]

    def placement_of(self, o: m.PlayOption | m.Play, game: str) -> int:
        """The action of an entry that places a tile.

        Raises:
            ValueError: it names an end (a train, a place) ``game`` does not have.
        """
        assert o.tile is not None
        slot = self.slot_of(o)
        if slot < 0:
            raise ValueError(f"{m.encoder.encode(o).decode()} names no end of {game}")
        return (tile(*o.tile) * self.slots + slot) * self.closing + (o.closed is True)

    def placement_name(self, action: int) -> str:
        """A placement in words: ``"3-5 left"``, ``"0-6 lead"``, ``"6-6 up closed"``."""
        rest, closed = divmod(action, self.closing)
        t, slot = divmod(rest, self.slots)
        return f"{tile_name(t)} {self.slot_name(slot)}" + (" closed" if closed else "")

    # -- the observation -------------------------------------------------------------------------

    def parts(self) -> list[Part]:
        """The family's own parts of the observation, after the parts every game has."""
        return []

    def own_tiles(self, state: State) -> Iterable[tuple[int, int]]:
        """The tiles the observation's ``hand`` marks: the observer's hand."""
        return state.hand

    def end_place(self, i: int, me: int) -> int:
        """End ``i``'s place in the observation, for the observer in seat ``me``."""
        return i

    def observe(self, state: State, obs: Any, at: dict[str, int], up: int) -> None:
        """Write the family's own parts (and what of the table only it knows) into ``obs``, a
        float32 array laid out as the codec's sections say (``at``: where each begins).
        ``up``: kolbasa's tile turned up and waiting for its place, else -1."""
