"""A second, independent reading of kolbasa, the sausage, from RULES.md.

Written from docs/RULES.md alone (§1, §3 kolbasa, §4, §7 KB-1…KB-15) and the seeds it cites
(001 and 003), never from ``referee.engine``, so that property tests can play the same deals
through both and compare every event.  Nothing here is imported from ``referee``; the tile
helpers come from the cross-game reference, which is just as independent.

Notation:

* A tile is ``"a-b"`` with a ≤ b.  A row is a list of tiles left to right; its last tile is the
  rightmost, turned up next (KB-8).
* The layout is :class:`Sausage`: ``start`` is ``(top half, bottom half)`` (``None`` before the
  first tile), ``lines`` the top and bottom lines, each a list of ``(near, far)`` halves outward
  from the start (KB-1, KB-2).
* A place is named as the logs name it: ``"top"`` / ``"bottom"`` (a line's open end),
  ``"top:j"`` / ``"bottom:j"`` (a double inserted into junction ``j``, KB-6) or ``"knife:i"``
  (a knife at position ``i``, KB-3).

:class:`RefGame` ``(variant, players, options)`` plays a whole game to the goat; the variant is
``"kolbasa"``, 2 players, no options (KB-12):

* ``start_deal(rows)`` starts the next deal from the two rows (14 tiles each, all 28, KB-8) and
  returns the automatic events before the first decision: the starter's start (KB-9, KB-10),
  then every turn whose tile fits nowhere.
* ``legal()`` lists the places of the tile turned up, sorted, as moves ``("place", tile,
  place)``; ``up()`` is that tile.  ``play(move)`` returns the events the move caused, in order.
* Events: ``("turned", seat, tile)``; ``("placed", seat, tile, place)`` (place ``None`` for the
  start); ``("cut", seat, to, tiles)`` after the knife's placement (KB-5, the tiles in the
  order they join ``to``'s row); ``("tailed", seat, tile)`` (KB-7); last ``("deal_end",
  reason, seat, wrote, totals)`` with reason ``"domino"`` (``seat`` went out) or ``"fish"``
  (``seat`` the fisherman, KB-11, KB-14), ``wrote`` what each seat wrote and ``totals`` the
  totals after it.  ValueError for an illegal move.
* ``deal_over()``, ``game_over()``, ``totals()``, ``goats()``, ``winners()``, ``losers()``,
  ``next_leader()``.

Readings that RULES.md leaves to the reader, taken here (each also cited where coded):

* KB-5: "as one block, in this order" means the block lies left to right in that order at the
  left end of the opponent's row: the start becomes the opponent's leftmost tile, so the last
  tile of the bottom line's cut part is the one nearest to the opponent's old row.
* KB-11, KB-13: after a placement the knife cuts first, then an empty row ends the deal as a
  domino (before any fish test); a fish is tested after every placement (a tile sent to a tail
  changes no row's contents, so nothing else can make one), and also after the automatic
  start.
* KB-11: eggs add up if several come before the next write; "one row's pips" is either row's
  (they are equal).
* KB-14: the start counts as a placement (it is placed, automatically); the deal ends as a
  fish right after the placement that makes 1,000, unless that placement went out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reference.cross_rules import TILES, halves, is_double, pips

__all__ = ["GOAT", "LINES", "MAX_PLACEMENTS", "ROW", "TILES", "RefGame", "Sausage", "halves", "is_double", "pips"]

ROW = 14  # §3 kolbasa: each gets 14 tiles face down in a row
GOAT = 101  # KB-12
MAX_PLACEMENTS = 1000  # KB-14
LINES = ("top", "bottom")  # KB-2


@dataclass
class Sausage:
    """The layout: the start across both lines and the two lines outward from it (KB-1)."""

    start: tuple[int, int] | None = None
    lines: tuple[list[tuple[int, int]], list[tuple[int, int]]] = field(default_factory=lambda: ([], []))

    def junction(self, line: int, j: int) -> int:
        """KB-1: junction j is the place after the line's j-th tile; j = 0 is against the start."""
        assert self.start is not None
        return self.start[line] if j == 0 else self.lines[line][j - 1][1]

    def end(self, line: int) -> int:
        """The number the line's open end shows: its last junction."""
        return self.junction(line, len(self.lines[line]))

    def places(self, tile: str) -> list[str]:
        """Every place ``tile`` may go (KB-3, KB-4, KB-6); empty before the start."""
        if self.start is None:
            return []
        a, b = halves(tile)
        out = []
        for line, name in enumerate(LINES):
            if self.end(line) in (a, b):
                out.append(name)  # KB-6: a double goes on a line end showing its number too
            if a == b:
                # KB-6: inserted into any junction j < the line's length showing its number
                out += [f"{name}:{j}" for j in range(len(self.lines[line])) if self.junction(line, j) == a]
        shorter = min(len(self.lines[0]), len(self.lines[1]))
        for i in range(1, shorter + 1):  # KB-3: 1 ≤ i ≤ the shorter line's length, never 0
            if sorted((self.junction(0, i), self.junction(1, i))) == [a, b]:
                out.append(f"knife:{i}")
        return out

    def lay(self, tile: str, place: str) -> list[str]:
        """Lay ``tile`` at ``place``; return the sausage a knife cut (KB-5), else ``[]``."""
        a, b = halves(tile)
        kind, _, k = place.partition(":")
        if kind == "knife":
            i = int(k)
            assert self.start is not None
            top = self.junction(0, i)
            cut = [f"{min(self.start)}-{max(self.start)}"]
            for line in (0, 1):  # KB-5: the start, then the top line outward, then the bottom
                cut += [f"{min(t)}-{max(t)}" for t in self.lines[line][:i]]
            # KB-2: the knife is the new start, the half that matched the top junction on top
            self.start = (top, b if top == a else a)
            self.lines = (self.lines[0][i:], self.lines[1][i:])
            return cut
        line = LINES.index(kind)
        if k:  # KB-6: a double inserted into junction j, moving the line apart
            self.lines[line].insert(int(k), (a, a))
        else:
            shows = self.end(line)
            self.lines[line].append((shows, b if shows == a else a))
        return []

    def lay_start(self, tile: str) -> None:
        """KB-2: the first start a-b (a ≤ b) puts a on top."""
        self.start = halves(tile)


class RefGame:
    """A whole game of kolbasa, deal after deal, to the goat (see the module docstring)."""

    def __init__(self, variant: str, players: int = 2, options: dict[str, str] | None = None) -> None:
        if variant != "kolbasa":
            raise ValueError(f"unknown variant {variant!r}; this reference reads kolbasa")
        if players != 2:
            raise ValueError(f"kolbasa is played by 2 players, not {players}")
        if options:
            raise ValueError(f"kolbasa has no options, got {', '.join(sorted(options))} (KB-12)")
        self.variant = variant
        self.players = 2
        self._totals = [0, 0]
        self.eggs = 0  # KB-11: pips waiting for the next write
        self.deals_played = 0
        self.last_ender: int | None = None  # KB-10
        self._goats: list[int] = []
        # the current deal
        self.rows: list[list[str]] = [[], []]
        self.layout = Sausage()
        self.turn: int | None = None
        self.last_placer: int | None = None
        self.placements = 0
        self.ended: str | None = None
        self.started = False

    # -- the public interface ---------------------------------------------------------------

    def totals(self) -> list[int]:
        return list(self._totals)

    def goats(self) -> list[int]:
        return list(self._goats)

    def game_over(self) -> bool:
        return bool(self._goats)

    def winners(self) -> list[int]:
        return [s for s in range(2) if s not in self._goats] if self._goats else []

    def losers(self) -> list[int]:
        """The goats, unless both are (a drawn game names no losers, X-0)."""
        return self.goats() if self.winners() else []

    def next_leader(self) -> int | None:
        """KB-10: seat 0 starts the first deal, later deals whoever ended the previous one."""
        if self.game_over():
            return None
        return 0 if self.last_ender is None else self.last_ender

    def deal_over(self) -> bool:
        return self.started and self.ended is not None

    def to_move(self) -> int | None:
        return self.turn if self.started and self.ended is None else None

    def up(self) -> str | None:
        """The tile turned up and waiting for its place."""
        seat = self.to_move()
        return None if seat is None else self.rows[seat][-1]

    def start_deal(self, rows: list[list[str]]) -> list[tuple]:
        if self.game_over():
            raise ValueError("the game is over: there is a goat")
        if self.started and self.ended is None:
            raise ValueError("the current deal is not over")
        self._check_deal(rows)
        leader = self.next_leader()
        assert leader is not None
        self.rows = [list(r) for r in rows]
        self.layout = Sausage()
        self.turn = None
        self.last_placer = None
        self.placements = 0
        self.ended = None
        self.started = True
        events: list[tuple] = []
        # KB-9: the starter's first turn lays their rightmost tile as the start, automatically.
        t = self.rows[leader].pop()
        events.append(("turned", leader, t))
        self.layout.lay_start(t)
        self.placements += 1
        self.last_placer = leader
        events.append(("placed", leader, t, None))
        self._after_placement(leader, events)
        return events

    def legal(self) -> list[tuple]:
        t = self.up()
        if t is None:
            return []
        return sorted(("place", t, p) for p in self.layout.places(t))

    def play(self, move) -> list[tuple]:
        move = tuple(move)
        if move not in self.legal():
            raise ValueError(self._why_illegal(move))
        seat = self.turn
        assert seat is not None
        _, tile, place = move
        events: list[tuple] = []
        self.rows[seat].pop()
        cut = self.layout.lay(tile, place)
        self.placements += 1
        self.last_placer = seat
        events.append(("placed", seat, tile, place))
        if cut:
            # KB-5: face down to the left end of the opponent's row, as one block, in order
            self.rows[1 - seat][:0] = cut
            events.append(("cut", seat, 1 - seat, cut))
        self._after_placement(seat, events)
        return events

    # -- one deal ----------------------------------------------------------------------------

    def _check_deal(self, rows: list[list[str]]) -> None:
        if len(rows) != 2:
            raise ValueError(f"{len(rows)} rows for 2 players")
        for s, r in enumerate(rows):
            if len(r) != ROW:
                raise ValueError(f"seat {s}'s row has {len(r)} tiles, kolbasa deals {ROW}")
        if sorted(t for r in rows for t in r) != sorted(TILES):
            raise ValueError("the two rows are not the 28 tiles, each once")

    def _fits(self, tile: str) -> bool:
        return bool(self.layout.places(tile))

    def _blocked(self) -> bool:
        """KB-11: no tile in either row can be placed anywhere."""
        return not any(self._fits(t) for r in self.rows for t in r)

    def _after_placement(self, seat: int, events: list) -> None:
        if not self.rows[seat]:
            self._finish("domino", seat, events)  # KB-13: after the knife's cut
            return
        if self._blocked() or self.placements >= MAX_PLACEMENTS:  # KB-11, KB-14
            assert self.last_placer is not None
            self._finish("fish", self.last_placer, events)
            return
        self._advance(1 - seat, events)

    def _advance(self, seat: int, events: list) -> None:
        """KB-7: from ``seat`` on, each turn turns up the rightmost tile; a tile that fits nowhere
        goes to the left end of its own row and the turn passes, until a tile fits (a decision).
        Not blocked means some row holds a tile that fits, and the layout does not change while
        tiles go to tails, so that tile comes up within one turn around each row."""
        p = seat
        for _ in range(2 * (len(self.rows[0]) + len(self.rows[1])) + 2):
            t = self.rows[p][-1]
            events.append(("turned", p, t))
            if self._fits(t):
                self.turn = p
                return
            self.rows[p].pop()
            self.rows[p].insert(0, t)
            events.append(("tailed", p, t))
            p = 1 - p
        raise RuntimeError("no tile came up that fits, yet the deal is not blocked (KB-11)")

    # -- the deal's end and the game ----------------------------------------------------------

    def _finish(self, reason: str, seat: int, events: list) -> None:
        self.ended = reason
        self.turn = None
        self.deals_played += 1
        self.last_ender = seat  # KB-10: who went out, or the fisherman
        rows = [sum(pips(t) for t in r) for r in self.rows]
        wrote = [0, 0]
        if reason == "domino":
            loser: int | None = 1 - seat  # §3: the opponent writes the pips of their row
        elif rows[0] == rows[1]:
            loser = None  # KB-11: eggs, nobody writes; one row's pips wait for the next write
            self.eggs += rows[0]
        else:
            loser = 0 if rows[0] > rows[1] else 1  # KB-11: the heavier row writes its own
        if loser is not None:
            wrote[loser] = rows[loser] + self.eggs
            self.eggs = 0
        self._totals = [a + b for a, b in zip(self._totals, wrote)]
        self._goats = [s for s in range(2) if self._totals[s] >= GOAT]  # KB-12
        events.append(("deal_end", reason, seat, wrote, self.totals()))

    # -- why a move is refused --------------------------------------------------------------

    def _why_illegal(self, move: tuple) -> str:
        t = self.up()
        if t is None:
            return "no deal is in progress"
        if len(move) != 3 or move[0] != "place":
            return f"not a move: {move!r} (a move is ('place', tile, place); turning up and tails are automatic)"
        _, tile, place = move
        if tile != t:
            return f"the tile turned up is {t}, not {tile!r}: the player chooses only where it goes (KB-7)"
        return f"{place!r} is not a place for {t}; its places: {', '.join(self.layout.places(t))}"
