"""What one seat may know.  Only this module decides it.

A :class:`View` holds the seat's own hand, the open ends, every player's tile count, the bazaar
size, the public history (other players' draws reduced to their count) and, for the seat to
move, its legal plays.  It never holds another player's tile, the bazaar's tiles or the
sleeping tiles: ``tests/engine/test_views.py`` changes those and checks that the view stays equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from .line import Drew, Event, LineDeal, Play
from .tiles import Tile, tiles_of


@dataclass(frozen=True, slots=True)
class View:
    seat: int
    players: int
    hand: tuple[Tile, ...]
    ends: tuple[int, ...]
    counts: tuple[int, ...]
    bazaar: int
    to_move: int
    history: tuple[Event, ...]
    legal: tuple[Play, ...]


def seen_by(event: Event, seat: int) -> Event:
    """``event`` as ``seat`` may see it: other players' drawn tiles are hidden, only the count stays."""
    if type(event) is Drew and event.seat != seat:
        return Drew(event.seat, (), event.count)
    return event


def view(state: LineDeal, seat: int) -> View:
    return View(
        seat=seat,
        players=state.n,
        hand=tuple(tiles_of(state.hands[seat])),
        ends=tuple(state.ends),
        counts=tuple(h.bit_count() for h in state.hands),
        bazaar=state.bazaar_left(),
        to_move=state.turn,
        history=tuple(seen_by(e, seat) for e in state.history),
        legal=tuple(state.legal_plays()) if state.turn == seat else (),
    )
