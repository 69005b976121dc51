"""The registry's lookup: every game module of :mod:`referee.engine.games` imported once, and a
game found by its id.  It stands above the engine's core (where :func:`register` and
:data:`VARIANTS` live) and the games, so that neither imports the other's folder."""

from __future__ import annotations

import importlib
import pkgutil

from . import games
from .core.errors import UnknownVariant
from .core.game import VARIANTS, Variant

_loaded = False


def _load_games() -> None:
    """Import every module of :mod:`.games` once (each registers its variant).  A flag, not an
    empty registry, says whether that happened: one game module imported on its own registers
    only itself."""
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(games.__path__):
        importlib.import_module(f"{games.__name__}.{info.name}")
    _loaded = True


def variant(name: str) -> Variant:
    """The registered game ``name``.

    Raises:
        UnknownVariant: naming the games that exist.
    """
    _load_games()
    try:
        return VARIANTS[name]
    except KeyError:
        raise UnknownVariant(f"unknown variant {name!r}; choose one of: {', '.join(variant_names())}") from None


def variant_names(refereed: bool = False) -> list[str]:
    """Every game the engine knows (``refereed``: only those the referee can play)."""
    _load_games()
    return [name for name, v in VARIANTS.items() if v.refereed or not refereed]


def refereed_variant(name: str) -> Variant:
    """The registered game ``name``, if the referee can play it.

    Raises:
        UnknownVariant: ``name`` is not a game, or only the rules engine plays it so far.
    """
    v = variant(name)
    if not v.refereed:
        raise UnknownVariant(f"{name} is in the rules engine but the referee cannot play it yet; "
                             f"refereed games: {', '.join(variant_names(refereed=True))}")
    return v
