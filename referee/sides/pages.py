"""The web pages' documents of a deal, typed, with the tiles a seat may not see marked on the
type, and :func:`cut`, which cuts a document down to what some seats may see.

A deal's document (:class:`DealPage`) lists its steps (:class:`Step`), each with the hands after
it and the table's *board* where the placements alone do not draw it (:class:`Board`: the trains'
markers, kolbasa's sausage).  The web report's replays show a document whole; ``referee play``
shows the person the same document cut to the person's seats (:func:`cut`), as a bot in those
seats is told the deal (PROTOCOL.md), no more.

A field that holds tiles some seat may not see says so on its type,
``Annotated[..., Hidden(...)]``: whose the tiles are (each seat its own item of the list, the
step's seat, or nobody's, as the bazaar and the sleeping tiles) and whether a cut leaves them face
down (``null``) or takes them out; a field that names a tile every seat sees is marked
:class:`FaceUp`.  :func:`cut` reads only these marks, for every family: a
family whose table hides something new marks its field, on its own subclass of
:class:`DealPage` and :class:`Step` if its rule differs (kolbasa's rows, face down even to their
owner), and names the subclass on its side (:attr:`referee.sides.base.GameSide.page`).

The JSON a page receives is :func:`msgspec.to_builtins` of a document: a field left ``UNSET`` is
not written, so every step holds only the keys of its kind, in the order the fields are declared.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType

#: whose tiles a :class:`Hidden` field holds: ``"each"`` — item ``i`` of the list is seat ``i``'s;
#: ``"seat"`` — the seat of the step (its ``seat`` field); ``"nobody"`` — no seat's (the bazaar,
#: the sleeping tiles, kolbasa's face-down rows)
Owner = Literal["each", "seat", "nobody"]


@dataclass(frozen=True)
class Hidden:
    """The mark of a field whose tiles only their owner sees (:data:`Owner`).

    ``face_down``: a cut leaves each tile as ``null`` (its count stays public); otherwise the
    tiles are taken out (an empty list: the count is told elsewhere, as a draw's words).
    ``unless_face_up``: a tile the document has shown face up by then (in a field marked
    :class:`FaceUp`, in this step or one before) stays: kolbasa's tile once turned up is public
    wherever it goes (KB-15).  ``open_at_end``: a step of kind ``end`` shows the tiles to every
    seat (every bot is told the hands left, ``deal_end``)."""

    owner: Owner
    face_down: bool = True
    unless_face_up: bool = False
    open_at_end: bool = False


@dataclass(frozen=True)
class FaceUp:
    """The mark of a field naming a tile (or tiles) every seat sees face up: placed, turned up,
    cut off the table."""


Tile = str  # "a-b"
TileList = list[Tile]
Hands = list[Sequence[Tile | None]]  # each seat's, or row's (a cut leaves ``None`` for a tile face down)


class Board(Struct):
    """What a step's table shows beyond its placements; a family that needs it subclasses this."""


class Seat(Struct):
    seat: int
    bot: str
    side: int


class Result(Struct):
    """How the deal ended, as ``deal_end`` says it."""

    reason: str
    seat: int | None
    values: list[int]
    wrote: list[int]
    totals: list[int]
    notes: list[str]


class FaultNote(Struct):
    kind: str
    detail: str
    line: str | None


class Step(Struct):
    """One step of a deal's replay: the deal as dealt, an engine event, a fault, the end.  The
    fields after ``up`` are the ones of some kinds only (``UNSET``: not in the JSON)."""

    kind: str
    seat: int | None
    text: str
    hands: Annotated[Hands, Hidden("each", open_at_end=True)]
    bazaar: int
    scores: list[int]
    table: Board | UnsetType = UNSET
    up: Tile | None | UnsetType = UNSET  # kolbasa: the tile turned up and waiting for its place
    tile: Annotated[Tile, FaceUp()] | UnsetType = UNSET
    end: str | None | UnsetType = UNSET
    forced: bool | UnsetType = UNSET
    closed: bool | UnsetType = UNSET
    ms: float | None | UnsetType = UNSET
    tiles: Annotated[TileList, Hidden("seat", face_down=False)] | UnsetType = UNSET  # drawn: only the drawer sees them
    to: int | UnsetType = UNSET
    wrote: list[int] | UnsetType = UNSET
    fault: FaultNote | UnsetType = UNSET
    result: Result | UnsetType = UNSET


class DealPage(Struct):
    """A deal's replay page: the deal as dealt, its steps, its result."""

    #: the class of this document's steps
    step_type: ClassVar[type[Step]] = Step

    kind: Literal["deal"]
    variant: str
    title: str
    layout: str
    players: int
    game: int
    orientation: int
    deal: int
    stream: int
    slug: str | None
    seats: list[Seat]
    sides: list[str]
    hands: Annotated[Hands, Hidden("each")]
    undealt: Annotated[list[Tile | None], Hidden("nobody")]
    undealt_kind: Literal["bazaar", "sleeping"]
    leader: int
    before: list[int]
    steps: list[Step]
    result: Result | None = None
    cut: bool = False
    rows: bool | UnsetType = UNSET  # the hands are rows in order (kolbasa)
    table: Board | UnsetType = UNSET  # what the whole deal's table shows (the trains' names)
    station: Tile | UnsetType = UNSET
    match_title: str | UnsetType = UNSET  # the report's, not the live table's
    prev: str | None | UnsetType = UNSET
    next: str | None | UnsetType = UNSET


# -- kolbasa: rows face down, even to their owner (KB-8) ---------------------------------------


class RowsStep(Step):
    hands: Annotated[Hands, Hidden("nobody", unless_face_up=True, open_at_end=True)]
    #: kolbasa draws nothing: ``tiles`` are the tiles a knife cuts off the table, seen by both
    tiles: Annotated[TileList, FaceUp()] | UnsetType = UNSET


class RowsPage(DealPage):
    step_type: ClassVar[type[Step]] = RowsStep

    hands: Annotated[Hands, Hidden("nobody")]


# -- cutting ------------------------------------------------------------------------------------


#: a struct type's plan: the fields a cut looks at, in order (``None``: walk into it; a
#: :class:`Hidden`: cut it), and the fields marked :class:`FaceUp`
_PLANS: dict[type, tuple[list[tuple[str, Hidden | None]], list[str]]] = {}


def _plan(cls: type) -> tuple[list[tuple[str, Hidden | None]], list[str]]:
    plan = _PLANS.get(cls)
    if plan is None:
        fields: list[tuple[str, Hidden | None]] = []
        face_up = []
        for name, hint in typing.get_type_hints(cls, include_extras=True).items():
            if name not in cls.__struct_fields__:  # type: ignore[attr-defined]  # cls is a page Struct; type[DealPage] does not say so
                continue
            mark = _mark(hint, Hidden)
            if mark is not None or _holds_structs(hint):
                fields.append((name, mark))
            if _mark(hint, FaceUp) is not None:
                face_up.append(name)
        plan = _PLANS[cls] = (fields, face_up)
    return plan


M = typing.TypeVar("M")


def _mark(hint: Any, kind: type[M]) -> M | None:
    if typing.get_origin(hint) is Annotated:
        return next((x for x in hint.__metadata__ if isinstance(x, kind)), None)
    for arg in typing.get_args(hint):  # Annotated[...] | UnsetType
        mark = _mark(arg, kind)
        if mark is not None:
            return mark
    return None


def _holds_structs(hint: Any) -> bool:
    if isinstance(hint, type) and issubclass(hint, Struct):
        return True
    return any(_holds_structs(arg) for arg in typing.get_args(hint))


def cut(doc: Any, seats: typing.Collection[int]) -> Any:
    """``doc`` (a struct of this module, or a list of them) as ``seats`` may see it: every tile of
    a :class:`Hidden` field they may not see face down (``null``) or taken out, as its mark says.
    The document is read in order (the deal as dealt, then each step), so a tile shown face up
    by a step is known from that step on.  ``doc`` itself is left as it is."""
    return _cut(doc, seats, set())


def _cut(doc: Any, seats: typing.Collection[int], face_up: set[Tile]) -> Any:
    if isinstance(doc, list):
        return [_cut(x, seats, face_up) for x in doc]
    if not isinstance(doc, Struct):
        return doc
    fields, shows = _plan(type(doc))
    for name in shows:
        value = getattr(doc, name)
        if isinstance(value, str):
            face_up.add(value)
        elif isinstance(value, list):
            face_up.update(value)
    changes = {}
    for name, mark in fields:
        value = getattr(doc, name)
        if value is UNSET or value is None:
            continue
        changes[name] = _cut(value, seats, face_up) if mark is None else _hide(doc, value, mark, seats, face_up)
    return msgspec.structs.replace(doc, **changes) if changes else doc


def _hide(owner: Any, value: list[Any], mark: Hidden, seats: typing.Collection[int], face_up: set[Tile]) -> list[Any]:
    if mark.open_at_end and getattr(owner, "kind", None) == "end":
        return [list(x) if isinstance(x, list) else x for x in value]

    def tiles(items: list[Any], mine: bool) -> list[Any]:
        if mine:
            return list(items)
        if not mark.face_down:
            return []
        if mark.unless_face_up:
            return [t if t in face_up else None for t in items]
        return [None] * len(items)

    if mark.owner == "each":
        return [tiles(h, s in seats) for s, h in enumerate(value)]
    if mark.owner == "seat":
        return tiles(value, owner.seat in seats)
    if value and isinstance(value[0], list):  # nobody's hands (rows)
        return [tiles(h, False) for h in value]
    return tiles(value, False)
