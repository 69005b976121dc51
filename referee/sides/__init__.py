"""Each family of games' side: everything people and bots see of its deals
(:class:`~referee.sides.base.GameSide`), one module per family.

* :mod:`~referee.sides.base` — the side's interface, with the line games' behaviour as its
  default: the protocol's encoding, the replay's words, the web report's steps, ``check``'s
  decisions;
* :mod:`~referee.sides.line`, :mod:`~referee.sides.cross`, :mod:`~referee.sides.trains`,
  :mod:`~referee.sides.kolbasa` — the families.

Every module of this package with a ``SIDE`` names, in ``SIDE.deals``, the engine's deal-state
classes it speaks for; the first time a side is asked for, they are all imported.  A deal state
of a class no side names takes the side of its nearest base class that one does, and the line
games' side at last, so a game on a new layout adds its module here and touches nothing else
above the engine.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from referee.engine.core.deal import deal_from_seed
from referee.engine.core.game import Variant
from referee.engine.core.state import DealState
from referee.sides.base import GameSide

#: how many deals :func:`side_of` tries before it gives up on a game whose deals are all void
_TRIES = 64

_BY_CLASS_NAME: dict[str, GameSide] = {}
_SIDES: list[GameSide] = []
_OF_CLASS: dict[type, GameSide] = {}
_OF_GAME: dict[tuple[str, int, tuple[tuple[str, Any], ...]], GameSide] = {}


def every_side() -> list[GameSide]:
    """Every family's side, the line games' first, then by module name."""
    if not _SIDES:
        names = sorted(info.name for info in pkgutil.iter_modules(__path__))
        for name in sorted(names, key=lambda n: n != "line"):
            side = getattr(importlib.import_module(f"{__name__}.{name}"), "SIDE", None)
            if isinstance(side, GameSide):
                _SIDES.append(side)
                for cls in side.deals:
                    _BY_CLASS_NAME.setdefault(cls, side)
    return _SIDES


def side_for(state: DealState) -> GameSide:
    """The side of ``state``'s game: the one that names its class, or its nearest base's."""
    cls = type(state)
    side = _OF_CLASS.get(cls)
    if side is None:
        sides = every_side()
        side = next((_BY_CLASS_NAME[n] for c in cls.__mro__ if (n := f"{c.__module__}.{c.__qualname__}") in _BY_CLASS_NAME), sides[0])
        _OF_CLASS[cls] = side
    return side


def side_of(v: Variant, players: int, options: dict[str, Any]) -> GameSide:
    """The side of a game before any deal of it is played (``referee check``'s counts, a match
    page): the side of the deal state its engine makes, found by dealing one from a fixed seed
    (the engine says a game's family only through the states it makes)."""
    key = (v.id, players, tuple(sorted(options.items())))
    side = _OF_GAME.get(key)
    if side is None:
        game = v.new_game(players, options)
        state = None
        for index in range(_TRIES):
            state = game.start(deal_from_seed(0, index, game.shape))
            if state is not None:
                break
        side = _OF_GAME[key] = every_side()[0] if state is None else side_for(state)
    return side
