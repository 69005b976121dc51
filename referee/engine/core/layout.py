"""Layouts: the tiles on the table, their open ends, and what each end shows.

A deal state (:mod:`.line`, :mod:`.cross`) owns exactly one layout and asks it three things:
which ends are open and what they show (:attr:`Layout.ends`, one entry per end index, ``-1`` for
an end that is closed or not open yet), what a tile laid on an end does to them
(:meth:`Layout.place`), and the count of the open ends where a game scores during play
(:meth:`Layout.count`, RULES.md §6 LAY-6).  Turns, draws, passes and the fish stay in the deal;
points stay in the game module.  End *indexes* are what the engine moves around; :attr:`names`
turns them into the protocol's end names, so a layout with other ends needs no change above it.

* :class:`Line` — the line of §2: two ends, ``left`` (0) and ``right`` (1).  A double lies
  crosswise and the line keeps two ends.
* :class:`Cross` — osel's cross, telephone's house, muggins' spinner (§6 LAY-1…LAY-7): the line
  plus ``up`` (2) and ``down`` (3), the perpendicular sides of the first double laid.  They open at
  once (osel, ``at_once=True``) or once the double is covered on both sides (telephone,
  muggins).  A double may be laid closed (osel): the end it lies on shows nothing more.

* :class:`Trains` — mexican_train's trains (:mod:`.trains`): one end per train, index ``s``
  seat ``s``'s train and index ``n`` the Mexican train, named ``"seat0"`` … ``"mexican"``;
  each starts at the station's number.  :meth:`place` extends one train; markers and the open
  double are the deal's turn rules (who may use which end), not the layout's, so the deal
  filters :attr:`ends` by the markers before offering plays, exactly as osel filters by the
  ends used in a turn.

* :class:`Sausage` — kolbasa's two lines (:mod:`.kolbasa`): the ends are *places* rather than
  line tips.  A place is an int: ``0`` the top line's end, ``1`` the bottom line's end,
  ``100 + j``/``200 + j`` a double inserted into junction ``j`` of the top/bottom line, and
  ``300 + i`` a knife at position ``i`` (KB-1…KB-6).  The places are recomputed for the tile
  turned up (:meth:`Sausage.places`); a knife returns the sausage it cut, which the deal moves
  to the opponent's row.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from .tiles import DOUBLE, HIGH, IS_DOUBLE, LOW, OTHER, PIPS, SUIT, Tile, tile

LEFT, RIGHT, UP, DOWN = 0, 1, 2, 3
END_NAMES = ("left", "right", "up", "down")
END_INDEX = {name: i for i, name in enumerate(END_NAMES)}


class Layout(ABC):
    """What every layout offers a deal state.  Subclasses set :attr:`names` and :attr:`ends`."""

    __slots__ = ("ends",)
    #: the protocol's name of each end index
    names: tuple[str, ...] = END_NAMES

    def __init__(self, ends: int) -> None:
        self.ends: list[int] = [-1] * ends

    @abstractmethod
    def place(self, t: Tile, end: int | None, closed: bool = False) -> None:
        """Lay tile ``t`` on ``end`` (``None``: the lead); the caller has checked it fits."""

    def count(self) -> int:
        """The sum the All-Fives games score: the open ends' numbers."""
        return sum(v for v in self.ends if v >= 0)

    def open_ends(self) -> list[tuple[int, int]]:
        """``(end index, number shown)`` for every open end, by index."""
        return [(e, v) for e, v in enumerate(self.ends) if v >= 0]

    def copy(self) -> Layout:
        other = object.__new__(type(self))
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                setattr(other, name, getattr(self, name))
        other.ends = list(self.ends)
        return other


class Line(Layout):
    """Two ends: after a lead ``a-b`` (a ≤ b) ``left`` shows ``a`` and ``right`` shows ``b`` (§5)."""

    __slots__ = ()
    names = END_NAMES[:2]

    def __init__(self) -> None:
        self.ends = [-1, -1]  # Layout.__init__(2), without the call: a deal starts with one

    def place(self, t: Tile, end: int | None, closed: bool = False) -> None:
        ends = self.ends
        if end is None:
            ends[0] = LOW[t]
            ends[1] = HIGH[t]
        else:
            ends[end] = OTHER[t][ends[end]]


class Cross(Layout):
    """The line plus the two perpendicular sides of the first double (RULES.md §6, LAY).

    ``spinner`` is the first double's number once one lies open (a closed double never becomes
    it, TURN-5), ``spinner_end`` the end it was laid on (``None``: it was the lead), ``opened``
    whether ``up``/``down`` are open.  ``double_at[e]``: the tile lying at end ``e`` is a double
    (it counts both halves, LAY-6); ``laid[e]``: tiles laid on arm ``e`` (``up``/``down`` count
    nothing until one lies there).
    """

    __slots__ = ("at_once", "double_at", "laid", "lead", "opened", "pieces", "spinner", "spinner_end")
    names = END_NAMES

    def __init__(self, at_once: bool) -> None:
        super().__init__(4)
        self.at_once = at_once
        self.spinner = -1
        self.spinner_end: int | None = None
        self.opened = False
        self.double_at = [False] * 4
        self.laid = [0] * 4
        self.lead = -1
        self.pieces = 0  # tiles on the table

    def copy(self) -> Cross:
        other = super().copy()
        assert isinstance(other, Cross)
        other.double_at = list(self.double_at)
        other.laid = list(self.laid)
        return other

    def _open(self) -> None:
        self.ends[UP] = self.ends[DOWN] = self.spinner
        self.opened = True

    def place(self, t: Tile, end: int | None, closed: bool = False) -> None:
        ends = self.ends
        double = IS_DOUBLE[t]
        self.pieces += 1
        if end is None:
            self.lead = t
            ends[LEFT], ends[RIGHT] = LOW[t], HIGH[t]
            self.double_at[LEFT] = self.double_at[RIGHT] = double
            if double:
                self.spinner = LOW[t]  # LAY-5: a lead double is the cross
                if self.at_once:
                    self._open()
            return
        shown = OTHER[t][ends[end]]
        self.laid[end] += 1
        if closed:
            ends[end] = -1  # LAY-7: nothing more on that side
            return
        ends[end] = shown
        self.double_at[end] = double
        if self.spinner < 0:
            if double:
                self.spinner = shown
                self.spinner_end = end
                if self.at_once:
                    self._open()  # LAY-4, osel: three ends show its number at once
        elif not self.opened:
            # LAY-3: a lead double is covered once both arms hold a tile; a double laid on an
            # end once a tile lies on its outer side, i.e. the next tile on that end.
            if self.spinner_end is None:
                if self.laid[LEFT] and self.laid[RIGHT]:
                    self._open()
            elif end == self.spinner_end:
                self._open()

    def count(self) -> int:
        """LAY-6: each open end's number, twice when a double lies there; ``up``/``down`` only
        once a tile lies on them; the lead alone counts its pips once."""
        if self.pieces == 1:
            return PIPS[self.lead]
        total = 0
        ends, double_at, laid = self.ends, self.double_at, self.laid
        for e in range(4):
            v = ends[e]
            if v > 0 and (e < UP or laid[e]):
                total += 2 * v if double_at[e] else v
        return total



class Trains(Layout):
    """mexican_train's trains (RULES.md §7 MT-3): ``players`` personal trains, then the Mexican
    train, each starting from the station's number ``station``.  ``laid[e]``: tiles on train
    ``e``; ``tiles[e]``: those tiles in order, each as ``(near, far)`` (for people and
    renderers)."""

    __slots__ = ("laid", "names", "station", "tiles")

    def __init__(self, players: int, station: int) -> None:
        super().__init__(players + 1)
        self.names = tuple(f"seat{s}" for s in range(players)) + ("mexican",)
        self.station = station
        self.ends = [station] * (players + 1)
        self.laid = [0] * (players + 1)
        self.tiles: list[list[tuple[int, int]]] = [[] for _ in range(players + 1)]

    def place(self, t: Tile, end: int | None, closed: bool = False) -> None:
        assert end is not None  # the station is not on a train
        near = self.ends[end]
        far = OTHER[t][near]
        self.ends[end] = far
        self.laid[end] += 1
        self.tiles[end].append((near, far))

    def copy(self) -> Trains:
        other = super().copy()
        assert isinstance(other, Trains)
        other.laid = list(self.laid)
        other.tiles = [list(train) for train in self.tiles]
        return other


#: ``_DOUBLES_SHOWING[v]``: the doubles of the numbers in bit set ``v``; ``_TILE_BIT[a * 7 + b]``:
#: the tile showing ``a`` and ``b``, as a set.
_DOUBLES_SHOWING = [sum(1 << DOUBLE[n] for n in range(7) if v >> n & 1) for v in range(128)]
_TILE_BIT = [1 << tile(a, b) for a in range(7) for b in range(7)]

TOP_END, BOTTOM_END = 0, 1
INSERT_TOP, INSERT_BOTTOM, KNIFE = 100, 200, 300


def place_name(place: int) -> str:
    """A kolbasa place as people and logs read it: ``top``, ``bottom``, ``top:j``, ``bottom:j``
    (a double inserted into junction ``j``) or ``knife:i``."""
    if place == TOP_END:
        return "top"
    if place == BOTTOM_END:
        return "bottom"
    kind, k = divmod(place, 100)
    return f"{('top', 'bottom', 'knife')[kind - 1]}:{k}" if 1 <= kind <= 3 else f"place {place!r}"


_PLACE_KINDS = {"top": INSERT_TOP, "bottom": INSERT_BOTTOM, "knife": KNIFE}


def parse_place(name: str) -> int | None:
    """The place :func:`place_name` names, or ``None`` when ``name`` names none (the inverse for
    every place a deal can offer: junctions and positions 0..99)."""
    if name == "top":
        return TOP_END
    if name == "bottom":
        return BOTTOM_END
    kind, colon, k = name.partition(":")
    if not colon or kind not in _PLACE_KINDS or not (k.isascii() and k.isdigit()) or len(k) > 2 or (len(k) > 1 and k[0] == "0"):
        return None
    return _PLACE_KINDS[kind] + int(k)


class Sausage(Layout):
    """kolbasa's layout (RULES.md §7 KB-1…KB-6): the start across two lines, ``top`` and
    ``bottom``, both growing away from it.  ``start`` is ``(top half, bottom half)``;
    ``lines[0]``/``lines[1]`` hold each line's tiles outward as ``(near, far)``.
    :attr:`ends` is ``[top end, bottom end]`` (``-1`` before the start)."""

    __slots__ = ("_fit", "_juncs", "lines", "start")
    names = ("top", "bottom")

    def __init__(self) -> None:
        self.ends = [-1, -1]
        self.start: tuple[int, int] = (-1, -1)
        self.lines: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
        # worked out once per layout, when first asked (a move asks several times):
        self._fit = -1  # fit_mask() (-1: not yet)
        self._juncs: tuple[list[int], list[int]] | None = None  # both lines' junctions

    def copy(self) -> Sausage:
        other = super().copy()
        assert isinstance(other, Sausage)
        other.lines = (list(self.lines[0]), list(self.lines[1]))
        return other

    def junction(self, line: int, j: int) -> int:
        """The number junction ``j`` of ``line`` shows (KB-1): the start's half for ``j = 0``,
        else the outer half of the line's ``j``-th tile."""
        return self.start[line] if j == 0 else self.lines[line][j - 1][1]

    def _junctions(self) -> tuple[list[int], list[int]]:
        """Every junction of each line, from 0 (the start's half) to the open end."""
        juncs = self._juncs
        if juncs is None:
            start, lines = self.start, self.lines
            juncs = self._juncs = ([start[0], *[far for _, far in lines[0]]], [start[1], *[far for _, far in lines[1]]])
        return juncs

    def places(self, t: Tile) -> list[int]:
        """Every place tile ``t`` may go, in increasing order (KB-3, KB-4, KB-6)."""
        a, b = LOW[t], HIGH[t]
        ends = self.ends
        out = [e for e in (TOP_END, BOTTOM_END) if ends[e] == a or ends[e] == b]
        if not self.fit_mask() >> t & 1:
            return out  # no junction or knife either (the common case for a tile that fits nowhere)
        top, bottom = self._junctions()
        if a == b:
            out += [INSERT_TOP + j for j in range(len(top) - 1) if top[j] == a]
            out += [INSERT_BOTTOM + j for j in range(len(bottom) - 1) if bottom[j] == a]
        for i in range(1, min(len(top), len(bottom))):
            x, y = top[i], bottom[i]
            if (x == a and y == b) or (x == b and y == a):
                out.append(KNIFE + i)
        return out

    def fit_mask(self) -> int:
        """Every tile that has some place (:meth:`places` is not empty), as a tile set: the
        deal's fish test and its turning up ask this for every tile of both rows."""
        fit = self._fit
        if fit >= 0:
            return fit
        ends = self.ends
        fit = (SUIT[ends[0]] if ends[0] >= 0 else 0) | (SUIT[ends[1]] if ends[1] >= 0 else 0)
        if self.start[0] >= 0:
            top, bottom = self._junctions()
            shown = 0
            for j in top[:-1]:
                shown |= 1 << j
            for j in bottom[:-1]:
                shown |= 1 << j
            fit |= _DOUBLES_SHOWING[shown]  # KB-6: a double into a junction showing its number
            for i in range(1, min(len(top), len(bottom))):
                fit |= _TILE_BIT[top[i] * 7 + bottom[i]]  # KB-3: a knife matching both junctions
        self._fit = fit
        return fit

    def place(self, t: Tile, end: int | None, closed: bool = False) -> None:
        self.lay(t, end)

    def lay(self, t: Tile, place: int | None) -> tuple[Tile, ...]:
        """Lay ``t`` at ``place`` (``None``: the start); return the sausage a knife cut (else ``()``)."""
        self._fit = -1
        self._juncs = None
        a, b = LOW[t], HIGH[t]
        if place is None:
            self.start = (a, b)  # KB-2: the lower half on top
        elif place == TOP_END or place == BOTTOM_END:
            near = self.ends[place]
            far = self.ends[place] = OTHER[t][near]
            self.lines[place].append((near, far))
            return ()  # the other line's end is where it was
        elif place < KNIFE:
            line, j = divmod(place - INSERT_TOP, 100)
            self.lines[line].insert(j, (a, a))
            return ()  # a double shows its number on both sides: every end is where it was
        else:
            i = place - KNIFE
            top = self.junction(0, i)
            cut = (tile(*self.start), *(tile(*x) for x in self.lines[0][:i]), *(tile(*x) for x in self.lines[1][:i]))
            self.start = (top, OTHER[t][top])  # KB-2: the half that matched the top junction on top
            self.lines = (self.lines[0][i:], self.lines[1][i:])
            self._ends()
            return cut
        self._ends()
        return ()

    def _ends(self) -> None:
        self.ends[0] = self.junction(0, len(self.lines[0]))
        self.ends[1] = self.junction(1, len(self.lines[1]))


class SeenTable:
    """A table as every seat sees it grow from a deal's events, for a reader of those events (a
    seat's sampler, :mod:`referee.engine.sampling`): :meth:`fits` is every tile a seat could have
    placed.  This one is the line's and the cross's (any open end); a family whose turns open
    other ends to other seats has its own (mexican_train's trains, :class:`.trains.TrainsSeen`).
    A game hands out a fresh one for each deal (:meth:`.game.Game.seen_table`)."""

    #: turns are compulsory chains (blitz, TURN-8): a chain that stopped says its player could
    #: place nothing more then
    chains = False

    def __init__(self, layout: Layout, chains: bool = False) -> None:
        self.layout = layout
        self.chains = chains

    def place(self, seat: int, t: Tile, end: int | None, closed: bool) -> None:
        self.layout.place(t, end, closed)

    def passed(self, seat: int) -> None:
        """A seat passed (nothing changes on a line or a cross)."""

    def fits(self, seat: int) -> int:
        m = 0
        for v in self.layout.ends:
            if v >= 0:
                m |= SUIT[v]
        return m
