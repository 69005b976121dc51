"""A second, independent reading of mexican_train from RULES.md.

Written from docs/RULES.md alone (§1, §2.4, §3 mexican_train, §4, §5, §7 MT-1…MT-15) and the
seed it cites (001), never from ``referee.engine``, so that property tests can play the same
deals through both and compare every event.  Nothing here is imported from ``referee``; the tile
helpers come from the cross-game reference, which is just as independent.

The interface is that of :mod:`reference.cross_rules`, with trains for ends:

* A tile is ``"a-b"`` with a ≤ b.  A train is named ``"seat0"`` … ``"seat3"`` (the train that
  seat owns) or ``"mexican"`` (the common one).
* :class:`RefGame` ``(variant, players, options)`` plays the seven rounds (MT-14); the variant
  is ``"mexican_train"``, 2–4 players (MT-2), no options.
* ``start_deal(hands, bazaar)`` starts the next round.  The station double is implied by the
  round (MT-1: round k puts (6−k)-(6−k) on the station) and is not an event; the hands and the
  bazaar are the 27 other tiles (MT-3), the bazaar drawn from the front (§5).  It returns the
  automatic events before the starter's first decision (MT-15: a starter who cannot place
  draws, and passes if the tile does not fit).
* ``legal()`` lists the decisions of the seat ``to_move()``, sorted: ``("place", tile, train)``.
  Drawing and passing are never decisions (§2.4, §5 "Not moves"): the reference performs them.
  A drawn tile that fits is placed by the player's next move (MT-5), so after a draw
  ``legal()`` lists that tile's places only.
* ``play(move)`` returns the events the move caused, in order: ``("placed", seat, tile,
  train)``; ``("marker", seat, False)`` when it took the seat's marker off (MT-10);
  ``("drew", seat, tile)``; ``("passed", seat)`` then ``("marker", seat, True)`` when the pass
  put a marker on a train that had none (MT-6; a pass on a train already marked changes
  nothing and has no marker event); last ``("deal_end", reason, wrote, totals)`` with reason
  ``"domino"`` or ``"fish"`` (MT-11), ``wrote`` each seat's hand pips (MT-13) and ``totals``
  the totals after it.  ValueError for an illegal move.
* ``deal_over()``, ``game_over()``, ``totals()``, ``winners()`` (every seat tied for the lowest
  total, MT-14), ``losers()`` (every other seat), ``next_leader()`` (the seat that starts the next round, MT-1; ``None`` once the
  game is over).

Readings that RULES.md leaves to the reader, taken here (each also cited where coded):

* MT-7: covering one's own double ends the turn; the double's player gets no further tile.
* MT-11: the block test runs after each placement and after each pass; a player who draws the
  last tile of the bazaar and cannot place it still passes (and gets a marker) before the
  round ends blocked, as §2.6 does for the other games (the fish comes after the knock of
  the draw that made it).
* A blocked round's fisherman is reported nowhere: every seat writes its own hand, so the
  fisherman changes nothing in the score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reference.cross_rules import TILES, halves, is_double, pips

__all__ = ["HAND", "MEXICAN", "ROUNDS", "TILES", "RefGame", "Train", "halves", "is_double", "pips", "station", "train_of"]

# -- tiles (§1) ----------------------------------------------------------------------------------

MEXICAN = "mexican"
ROUNDS = 7
HAND = {2: 8, 3: 7, 4: 6}  # §3 mexican_train: the 27 tiles, 8, 7 or 6 each; the rest is the bazaar


def train_of(seat: int) -> str:
    return f"seat{seat}"


def station(round_index: int) -> str:
    """MT-1: round k puts (6−k)-(6−k) on the station."""
    n = 6 - round_index
    return f"{n}-{n}"


@dataclass
class Train:
    """One train: the tiles laid on it outward from the station and the number its end shows."""

    shows: int
    tiles: list[str] = field(default_factory=list)
    marker: bool = False  # seats' trains only (MT-6)
    owner: int | None = None  # None: the Mexican train


class RefGame:
    """A whole game of mexican_train, round after round (see the module docstring)."""

    def __init__(self, variant: str, players: int, options: dict[str, str] | None = None) -> None:
        if variant != "mexican_train":
            raise ValueError(f"unknown variant {variant!r}; this reference reads mexican_train")
        if players not in HAND:
            raise ValueError(f"mexican_train is played by 2 to 4 players, not {players} (MT-2)")
        if options:
            raise ValueError(f"mexican_train has no options, got {', '.join(sorted(options))} (MT-14)")
        self.variant = variant
        self.players = players
        self.hand_size = HAND[players]
        self._totals = [0] * players
        self.rounds_played = 0
        self._over = False
        self._winners: list[int] = []
        self._losers: list[int] = []
        # the current round
        self.round_index = 0
        self.hands: list[list[str]] = []
        self.bazaar: list[str] = []
        self.trains: dict[str, Train] = {}
        self.open_double: str | None = None  # the train whose end is an uncovered double (MT-8)
        self.turn: int | None = None
        self.last_placer: int | None = None
        self.ended: str | None = None
        self.started = False

    # -- the public interface ---------------------------------------------------------------

    def totals(self) -> list[int]:
        return list(self._totals)

    def game_over(self) -> bool:
        return self._over

    def winners(self) -> list[int]:
        return list(self._winners)

    def losers(self) -> list[int]:
        return list(self._losers)

    def next_leader(self) -> int | None:
        """MT-1: the seat that starts the next round to be dealt (round k: seat k mod n)."""
        if self._over:
            return None
        in_progress = self.started and self.ended is None
        return (self.rounds_played + in_progress) % self.players

    def deal_over(self) -> bool:
        return self.started and self.ended is not None

    def to_move(self) -> int | None:
        return self.turn if self.started and self.ended is None else None

    def start_deal(self, hands: list[list[str]], bazaar: list[str]) -> list[tuple]:
        if self._over:
            raise ValueError("the game is over")
        if self.started and self.ended is None:
            raise ValueError("the current round is not over")
        self.round_index = self.rounds_played
        self._check_deal(hands, bazaar)
        self.hands = [list(h) for h in hands]
        self.bazaar = list(bazaar)
        v = halves(station(self.round_index))[0]
        # MT-3: every seat's train and the Mexican start from the station's number.
        self.trains = {train_of(s): Train(v, owner=s) for s in range(self.players)}
        self.trains[MEXICAN] = Train(v)
        self.open_double = None
        self.turn = None
        self.last_placer = None
        self.ended = None
        self.started = True
        events: list[tuple] = []
        self._advance(self.round_index % self.players, events)  # MT-1, MT-15
        return events

    def legal(self) -> list[tuple]:
        if self.to_move() is None:
            return []
        seat = self.turn
        assert seat is not None
        return sorted(("place", t, name) for t in self.hands[seat] for name in self._places(seat, t))

    def play(self, move) -> list[tuple]:
        move = tuple(move)
        if move not in self.legal():
            raise ValueError(self._why_illegal(move))
        seat = self.turn
        assert seat is not None
        _, tile, name = move
        events: list[tuple] = []
        self._place(seat, tile, name, events)
        return events

    # -- one round ---------------------------------------------------------------------------

    def _check_deal(self, hands: list[list[str]], bazaar: list[str]) -> None:
        if len(hands) != self.players:
            raise ValueError(f"{len(hands)} hands for {self.players} players")
        for s, h in enumerate(hands):
            if len(h) != self.hand_size:
                raise ValueError(f"seat {s} holds {len(h)} tiles, mexican_train deals {self.hand_size} to {self.players} players")
        every = [t for h in hands for t in h] + list(bazaar)
        rest = [t for t in TILES if t != station(self.round_index)]
        if sorted(every) != sorted(rest):
            raise ValueError(f"the hands and the bazaar are not the 27 tiles without the station {station(self.round_index)}, each once")

    def _open_to(self, seat: int) -> list[str]:
        """MT-4: the seat's own train, the Mexican, and every train with a marker."""
        return [name for name, tr in self.trains.items() if tr.owner is None or tr.owner == seat or tr.marker]

    def _places(self, seat: int, tile: str) -> list[str]:
        """The trains ``tile`` may go on for ``seat`` now (MT-4, MT-5, MT-7, MT-8)."""
        if self.open_double is not None:
            # MT-7, MT-8: an open double must be covered before anything else, wherever it lies.
            return [self.open_double] if self.trains[self.open_double].shows in halves(tile) else []
        out = []
        for name in self._open_to(seat):
            tr = self.trains[name]
            if tr.shows not in halves(tile):
                continue
            if not tr.tiles and is_double(tile):
                continue  # MT-3: no train's first tile can be a double (never the case: the station's double is out)
            out.append(name)
        return out

    def _can_place(self, seat: int) -> bool:
        return any(self._places(seat, t) for t in self.hands[seat])

    def _blocked(self) -> bool:
        """MT-11: the bazaar is empty and no held tile matches any train end, markers
        regardless, or nothing held covers the open double."""
        if self.bazaar:
            return False
        if self.open_double is not None:
            v = self.trains[self.open_double].shows
            return not any(v in halves(t) for h in self.hands for t in h)
        ends = {tr.shows for tr in self.trains.values()}
        return not any(n in ends for h in self.hands for t in h for n in halves(t))

    def _place(self, seat: int, tile: str, name: str, events: list) -> None:
        tr = self.trains[name]
        a, b = halves(tile)
        covering = self.open_double is not None
        self.hands[seat].remove(tile)
        tr.shows = b if tr.shows == a else a
        tr.tiles.append(tile)
        self.last_placer = seat
        events.append(("placed", seat, tile, name))
        if tr.owner == seat and tr.marker:
            tr.marker = False  # MT-10: only the owner's own play on their train removes it
            events.append(("marker", seat, False))
        if covering:
            self.open_double = None
        if a == b:
            self.open_double = name  # never a cover: the only double with its number is itself
        if not self.hands[seat]:
            self._finish("domino", events)  # MT-9: going out ends the round, even on a double
            return
        # MT-7: after a double, a fresh move by the same seat, which must cover it.
        self._advance(seat if a == b else (seat + 1) % self.players, events)

    def _advance(self, seat: int, events: list) -> None:
        """From ``seat`` on: the first seat that can place (after its one draw) gets the turn;
        every seat that cannot passes with a marker (MT-5, MT-6). The block test runs before
        each seat's turn (MT-11)."""
        p = seat
        knocks = 0  # passes in a row with the bazaar empty
        while True:
            if self._blocked():
                self._finish("fish", events)
                return
            if knocks > 2 * self.players:
                # not blocked means someone can place within two rounds of turns (a train closed
                # to a holder opens when its owner passes): a loop here is a bug of this reading
                raise RuntimeError("every seat keeps passing, yet the round is not blocked (MT-11)")
            if not self._can_place(p) and self.bazaar:
                t = self.bazaar.pop(0)  # MT-5: exactly one tile, from the front
                self.hands[p].append(t)
                events.append(("drew", p, t))
            if self._can_place(p):
                self.turn = p
                return
            events.append(("passed", p))
            knocks = knocks + 1 if not self.bazaar else 0
            tr = self.trains[train_of(p)]
            if not tr.marker:
                tr.marker = True  # MT-6: every pass, also with the bazaar empty
                events.append(("marker", p, True))
            p = (p + 1) % self.players

    # -- the round's end and the game ------------------------------------------------------

    def _finish(self, reason: str, events: list) -> None:
        self.ended = reason
        self.turn = None
        wrote = [sum(pips(t) for t in h) for h in self.hands]  # MT-13: plain pips, 0-0 is 0
        self._totals = [a + b for a, b in zip(self._totals, wrote)]
        self.rounds_played += 1
        if self.rounds_played == ROUNDS:  # MT-14: exactly seven rounds
            self._over = True
            low = min(self._totals)
            self._winners = [s for s, t in enumerate(self._totals) if t == low]
            self._losers = [s for s, t in enumerate(self._totals) if t != low]
        events.append(("deal_end", reason, wrote, self.totals()))

    # -- why a move is refused --------------------------------------------------------------

    def _why_illegal(self, move: tuple) -> str:
        if not self.started or self.ended is not None:
            return "no round is in progress"
        seat = self.turn
        assert seat is not None
        if len(move) != 3 or move[0] != "place":
            return f"not a move: {move!r} (a move is ('place', tile, train); drawing and passing are automatic)"
        _, tile, name = move
        if tile not in TILES:
            return f"{tile!r} is not a tile"
        if tile not in self.hands[seat]:
            return f"seat {seat} does not hold {tile}"
        if name not in self.trains:
            return f"there is no train {name!r}"
        tr = self.trains[name]
        if self.open_double is not None and name != self.open_double:
            return f"the double on {self.open_double} must be covered first (MT-7, MT-8)"
        if self.open_double is None and name not in self._open_to(seat):
            return f"{name} is not open to seat {seat}: it is another seat's train without a marker (MT-4)"
        if tr.shows not in halves(tile):
            return f"{tile} does not match {name}, which shows {tr.shows}"
        return f"{move!r} is not legal here"
