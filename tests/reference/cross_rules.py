"""A second, independent reading of the cross games — osel, telephone, muggins — from RULES.md.

Written from docs/RULES.md alone (§1, §2, §3 osel/telephone/muggins/kozel, §5, §6 LAY-, TURN-,
OS-, TEL-, MUG-, X-), never from ``referee.engine``, so that property tests can play the same
deals through both and compare every event.  Nothing here is imported from ``referee``.

Notation is the protocol's: a tile is ``"a-b"`` with a ≤ b; an end is ``"left"``, ``"right"``,
``"up"``, ``"down"``, or ``None`` for a lead.  A deal is given as the hands in seat order and the
undealt tiles in order (the deal-file convention: drawn from the front; empty for the
four-player games without a bazaar).

:class:`RefGame` plays a whole game, deal after deal:

* ``start_deal(hands, bazaar)`` returns the events of the automatic start (a forced lead and
  its score, draws and passes after it); a void deal (osel's redeal, §2.9) ends at once with
  ``("deal_end", "redeal", [0, …], totals)``.
* ``legal()`` lists the decisions of the seat ``to_move()``, sorted: ``("place", tile, end,
  closed)`` and ``("stop",)``.  ``play(move)`` returns the events the move caused, in order:
  ``("placed", seat, tile, end, closed, forced)``, ``("scored", seat, points, count)``,
  ``("drew", seat, tile)`` (one event per tile), ``("passed", seat)`` and finally
  ``("deal_end", reason, wrote, totals)`` with reason ``"domino"``, ``"fish"`` or ``"redeal"``.
  ``wrote`` is what each side's total changed by *at the deal's end* (penalties, bonuses,
  deductions; the points of ``scored`` events are already in the totals), ``totals`` the
  totals after it.  Sides are pairs (side ``s % 2``) in four-player osel and telephone, seats
  otherwise.
* ``next_leader()`` is the seat that leads the next deal with any tile, or ``None`` when the next
  deal's lead is a forced search of the hands (the first-deal rule).  ``winners()`` is empty
  for a drawn game, and so is ``losers()`` (X-0: a drawn game names no losers).

Readings that RULES.md leaves to the reader, taken here (each also cited where coded):

* osel, TURN-4: a lead uses no end, so after a non-double lead the leader may add a double on
  ``left`` and another on ``right``; TURN-6 never starts from extras (it is a turn of its own),
  so the first of them lies open and is the cross, and the second may then be closed (TURN-5).
* osel, TURN-6: the first closed double is offered only when the player also holds the double
  for the other line end (not yet used this turn); the second closed double is a move of the
  player (the only legal one), not placed automatically.
* osel, OS-3: the hang is forgotten after any played deal that gives the side nothing (a deal
  it won, or eggs); a void deal (redeal) is not played and forgets nothing.
* osel eggs (§5): they go to the single largest write of the next played deal, before the rule
  of 13; a tied largest write or an eggs deal leaves them waiting, adding up.
* telephone winner_takes, TEL-7: the fish write is rounded to the nearest 5 as a domino's is.
* muggins MUG-6 / telephone TEL-4: a drawn game has no winners, and no losers (X-0).  A game
  won by one side: its losers are the other side (telephone), every other seat (muggins), or
  the goats (osel, §5).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# -- tiles (§1) ----------------------------------------------------------------------------------

TILES: list[str] = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]
LINE_ENDS = ("left", "right")
CROSS_ENDS = ("up", "down")


def halves(tile: str) -> tuple[int, int]:
    a, b = tile.split("-")
    return int(a), int(b)


def pips(tile: str) -> int:
    a, b = halves(tile)
    return a + b


def is_double(tile: str) -> bool:
    a, b = halves(tile)
    return a == b


def double_of(n: int) -> str:
    return f"{n}-{n}"


def heaviest(tiles: list[str]) -> str:
    """§2.8: the highest pip sum; between equal sums, the higher larger half."""
    return max(tiles, key=lambda t: (pips(t), max(halves(t))))


def round_down5(x: int) -> int:
    return x - x % 5


def round_near5(x: int) -> int:
    """TEL-7, MUG-5: to the nearest multiple of 5, 1–2 down and 3–4 up."""
    return 5 * ((x + 2) // 5)


def plain(hand: list[str]) -> int:
    return sum(pips(t) for t in hand)


def kozel_value(hand: list[str]) -> int:
    """§3 kozel, OS-2: a hand of only 0-0 counts 25, only 6-6 counts 50; 0-0 with 6-6 is 12."""
    if hand == ["0-0"]:
        return 25
    if hand == ["6-6"]:
        return 50
    return plain(hand)


def check_deal(variant: str, players: int, hand: int, hands: list[list[str]], bazaar: list[str]) -> None:
    """A deal is ``players`` hands of ``hand`` tiles and the rest, the 28 tiles each once."""
    if len(hands) != players:
        raise ValueError(f"{len(hands)} hands for {players} players")
    for s, h in enumerate(hands):
        if len(h) != hand:
            raise ValueError(f"seat {s} holds {len(h)} tiles, {variant} deals {hand}")
    every = [t for h in hands for t in h] + list(bazaar)
    if sorted(every) != sorted(TILES):
        raise ValueError("the hands and the bazaar are not the 28 tiles, each once")


def void_deal(hands: list[list[str]]) -> bool:
    """§2.9, §5: a hand with 5 or more doubles, or 6 or more of one suit (a double once)."""
    for h in hands:
        if sum(is_double(t) for t in h) >= 5:
            return True
        if any(sum(n in halves(t) for t in h) >= 6 for n in range(7)):
            return True
    return False


def holder(hands: list[list[str]], tile: str) -> int | None:
    for s, h in enumerate(hands):
        if tile in h:
            return s
    return None  # §5: lead searches look only at hands


def search(hands: list[list[str]], order: list[int]) -> tuple[int, str]:
    """The first double of ``order`` found in a hand; with none, the heaviest tile (§2.8)."""
    for n in order:
        s = holder(hands, double_of(n))
        if s is not None:
            return s, double_of(n)
    best = heaviest([t for h in hands for t in h])
    s = holder(hands, best)
    assert s is not None
    return s, best


# -- the layout: two arms from the lead, two more from the first double (LAY-1..7) ----------------


@dataclass
class Arm:
    """One direction of the layout: the tiles laid on it outward, and what its end shows."""

    shows: int
    tip_double: bool  # the tile at this end is a double (LAY-6 counts it twice)
    tiles: list[str] = field(default_factory=list)
    closed: bool = False  # osel: a closed double shuts this end (TURN-5, LAY-7)


class Layout:
    """The cross of osel, telephone and muggins.

    ``opens_at_once``: osel's first double opens ``up``/``down`` the moment it lies (LAY-4,
    LAY-5); telephone's and muggins' only once both its sides are covered (LAY-3).
    """

    def __init__(self, opens_at_once: bool) -> None:
        self.opens_at_once = opens_at_once
        self.lead: str | None = None
        self.arms: dict[str, Arm] = {}
        self.spinner: int | None = None  # the number of the first (open) double, LAY-2
        self.spinner_arm: str | None = None  # "lead", "left" or "right"
        self.spinner_depth = 0  # how many tiles its arm held once the spinner lay on it
        self.placed: list[str] = []

    def open_ends(self) -> list[tuple[str, int]]:
        return [(e, arm.shows) for e, arm in self.arms.items() if not arm.closed]

    def place(self, tile: str, end: str | None, closed: bool = False) -> None:
        self.placed.append(tile)
        a, b = halves(tile)
        if end is None:
            # §5, LAY-1: after a lead a-b with a ≤ b, left shows a and right shows b.
            self.lead = tile
            self.arms["left"] = Arm(a, a == b)
            self.arms["right"] = Arm(b, a == b)
            if a == b:
                self._spin(a, "lead")
            return
        arm = self.arms[end]
        v = arm.shows
        assert v in (a, b) and not arm.closed
        arm.shows = b if v == a else a
        arm.tip_double = a == b
        arm.tiles.append(tile)
        if closed:
            arm.closed = True  # TURN-5: shuts exactly the end it was laid on
        elif a == b and self.spinner is None:
            self._spin(a, end)  # LAY-2: the first double; TURN-5: a closed one never is
        self._maybe_open()

    def _spin(self, n: int, where: str) -> None:
        self.spinner = n
        self.spinner_arm = where
        self.spinner_depth = len(self.arms[where].tiles) if where != "lead" else 0
        self._maybe_open()

    def _maybe_open(self) -> None:
        if self.spinner is None or "up" in self.arms:
            return
        if not self.opens_at_once:
            # LAY-3: a lead double is covered once left and right each hold a tile; a double
            # laid on an arm is covered once a tile lies beyond it on that arm.
            if self.spinner_arm == "lead":
                if not (self.arms["left"].tiles and self.arms["right"].tiles):
                    return
            elif len(self.arms[self.spinner_arm].tiles) <= self.spinner_depth:
                return
        for e in CROSS_ENDS:
            self.arms[e] = Arm(self.spinner, True)

    def count(self) -> int:
        """LAY-6: the sum of the open ends (telephone, muggins)."""
        if self.lead is None:
            return 0
        if len(self.placed) == 1:
            return pips(self.lead)  # the lead alone: its pips once (3-2 → 5, 5-5 → 10)
        total = 0
        for e, arm in self.arms.items():
            if e in CROSS_ENDS and not arm.tiles:
                continue  # up/down add nothing until a tile lies on them
            # An empty left/right arm is the lead's own side: a lead double counts both
            # halves there (5-5 then 5-3 on the right: 10 + 3).
            total += arm.shows * (2 if arm.tip_double else 1)
        return total


# -- the games ------------------------------------------------------------------------------------

VARIANTS = ("osel", "telephone", "muggins")


@dataclass(frozen=True)
class Shape:
    hand: int
    keep: int  # bazaar tiles that are never drawn


def _shape(variant: str, players: int) -> Shape:
    if variant == "osel":
        # OS-1: kozel's deal — 4 in pairs, no bazaar; 2–3 alone, 7 each, last tile never drawn.
        if players in (2, 3, 4):
            return Shape(7, 1 if players < 4 else 0)
    elif variant == "telephone":
        # §3 telephone: 2 players (bazaar of 14) or 4 in pairs; TEL-1 the whole bazaar.
        if players in (2, 4):
            return Shape(7, 0)
    elif variant == "muggins":
        # §3 muggins: 2 players 7 each, 3–4 players 5 each; MUG-2 the whole bazaar.
        if players in (2, 3, 4):
            return Shape(7 if players == 2 else 5, 0)
    else:
        raise ValueError(f"unknown variant {variant!r}; this reference reads {', '.join(VARIANTS)}")
    raise ValueError(f"{variant} is not played by {players} players")


class RefGame:
    """A whole game of osel, telephone or muggins, deal after deal (see the module docstring)."""

    def __init__(self, variant: str, players: int, options: dict[str, str] | None = None) -> None:
        self.variant = variant
        self.players = players
        self.shape = _shape(variant, players)
        options = {k: str(v) for k, v in (options or {}).items()}
        self.scale = 1
        self.endgame = "loser_pays"
        if variant == "telephone":
            allowed = {"scale": ("1", "5"), "endgame": ("loser_pays", "winner_takes")}
            for k, v in options.items():
                if k not in allowed:
                    raise ValueError(f"telephone has no option {k!r} (it has scale, endgame)")
                if v not in allowed[k]:
                    raise ValueError(f"telephone option {k} is one of {' | '.join(allowed[k])}, not {v!r}")
            self.scale = int(options.get("scale", "1"))
            self.endgame = options.get("endgame", "loser_pays")
        elif options:
            # OS-2: osel has no options; §3 muggins names none.
            raise ValueError(f"{variant} has no options, got {', '.join(sorted(options))}")
        pairs = players == 4 and variant in ("osel", "telephone")  # OS-1, TEL-3; MUG-1 alone
        self.sides: list[tuple[int, ...]] = [(0, 2), (1, 3)] if pairs else [(s,) for s in range(players)]
        self.side_of = {s: i for i, seats in enumerate(self.sides) for s in seats}
        self._totals = [0] * len(self.sides)
        self.target = {"osel": 101, "telephone": 225 if self.scale == 1 else 72, "muggins": 200}[variant]
        self.hang = [0] * len(self.sides)  # osel: sums under 13 waiting (OS-3)
        self.eggs = 0  # osel: an eggs total waiting for the next write (§3 kozel, §5)
        self._leader: int | None = None  # who leads the next deal with any tile; None: forced search
        self.deals_played = 0
        self._over = False
        self._winners: list[int] = []
        self._losers: list[int] = []
        # the current deal
        self.hands: list[list[str]] = []
        self.bazaar: list[str] = []
        self.drawn = 0
        self.layout = Layout(variant == "osel")
        self.turn: int | None = None
        self.phase: str | None = None  # "one", "extras" or "close_pair" (osel's TURN-4..6)
        self.used: set[str] = set()  # ends used this turn (TURN-4)
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
        return None if self._over else self._leader

    def deal_over(self) -> bool:
        return self.started and self.ended is not None

    def to_move(self) -> int | None:
        return self.turn if self.ended is None else None

    def start_deal(self, hands: list[list[str]], bazaar: list[str]) -> list[tuple]:
        if self._over:
            raise ValueError("the game is over")
        if self.started and self.ended is None:
            raise ValueError("the current deal is not over")
        check_deal(self.variant, self.players, self.shape.hand, hands, bazaar)
        self.hands = [list(h) for h in hands]
        self.bazaar = list(bazaar)
        self.drawn = 0
        self.layout = Layout(self.variant == "osel")
        self.turn = None
        self.phase = None
        self.used = set()
        self.last_placer = None
        self.ended = None
        self.started = True
        events: list[tuple] = []
        if self.variant == "osel" and void_deal(self.hands):
            # §2.9 via OS-1: the deal is void; the next deal of the stream replaces it, and the
            # lead rule that applied to this one applies to the replacement (§5).
            self.ended = "redeal"
            events.append(("deal_end", "redeal", [0] * len(self.sides), self.totals()))
            return events
        if self._leader is not None:
            self._begin_turn(self._leader)  # a free lead: any tile
            return events
        seat, tile = self._forced_lead()
        self.turn = seat
        self._place(seat, tile, None, False, True, events)
        return events

    def legal(self) -> list[tuple]:
        if self.to_move() is None:
            return []
        seat = self.turn
        hand = self.hands[seat]
        if self.layout.lead is None:
            return sorted(("place", t, None, False) for t in hand)
        moves: list[tuple] = []
        if self.phase == "close_pair":
            # TURN-6: the only legal move is the double on the other line end, closed.
            e = self._other_line_end()
            moves.append(("place", double_of(self.layout.arms[e].shows), e, True))
        elif self.phase == "extras":
            moves = self._extras(seat)
            if moves:
                moves.append(("stop",))  # TURN-1: going on is optional
        else:
            for t in hand:
                for e, v in self.layout.open_ends():
                    if v in halves(t):
                        moves.append(("place", t, e, False))
                        if self._may_close(seat, t, e):
                            moves.append(("place", t, e, True))
        return sorted(moves)

    def play(self, move) -> list[tuple]:
        move = tuple(move)
        if move not in self.legal():
            raise ValueError(self._why_illegal(move))
        seat = self.turn
        events: list[tuple] = []
        if move == ("stop",):
            self._end_turn(events)
            return events
        _, tile, end, closed = move
        self._place(seat, tile, end, closed, False, events)
        return events

    # -- one deal ---------------------------------------------------------------------------

    def _forced_lead(self) -> tuple[int, str]:
        if self.variant == "osel":
            if self.players == 4:
                return holder(self.hands, "1-1"), "1-1"  # kozel: the holder of 1-1, OS-1
            return search(self.hands, [1, 2, 3, 4, 5, 6, 0])  # kozel 2–3: the lowest double
        if self.variant == "telephone":
            s = holder(self.hands, "2-3")  # TEL-2: 3-2 first; in the bazaar: highest double, heaviest
            if s is not None:
                return s, "2-3"
        return search(self.hands, [6, 5, 4, 3, 2, 1, 0])  # MUG-3 (and TEL-2's fallback)

    def _drawable(self) -> int:
        return max(0, len(self.bazaar) - self.drawn - self.shape.keep)

    def _can_place(self, seat: int) -> bool:
        ends = self.layout.open_ends()
        return any(v in halves(t) for t in self.hands[seat] for _, v in ends)

    def _blocked(self) -> bool:
        """§2.6, §5: nobody can place and nobody can draw."""
        return self._drawable() == 0 and not any(self._can_place(s) for s in range(self.players))

    def _begin_turn(self, seat: int) -> None:
        self.turn = seat
        self.phase = "one"
        self.used = set()

    def _other_line_end(self) -> str:
        (e,) = [x for x in LINE_ENDS if x not in self.used]
        return e

    def _may_close(self, seat: int, tile: str, end: str) -> bool:
        if self.variant != "osel" or not is_double(tile):
            return False
        if self.layout.spinner is not None:
            return True  # TURN-5: any double placed after the cross exists
        # TURN-6: no double on the table, the lead not a double (else it would be the cross):
        # a double closed on one line end as the turn's one tile ("a turn of its own", never
        # extras), when the double for the other line end is in hand too and that end is still
        # free this turn.
        if self.phase == "extras":
            return False
        other = "right" if end == "left" else "left"
        arm = self.layout.arms[other]
        if other in self.used or arm.closed:
            return False
        d = double_of(arm.shows)
        return d != tile and d in self.hands[seat]

    def _extras(self, seat: int) -> list[tuple]:
        """TURN-4: doubles only, each on an open end not used this turn."""
        moves = []
        for t in self.hands[seat]:
            if not is_double(t):
                continue
            for e, v in self.layout.open_ends():
                if e not in self.used and v == halves(t)[0]:
                    moves.append(("place", t, e, False))
                    if self._may_close(seat, t, e):
                        moves.append(("place", t, e, True))
        return moves

    def _place(self, seat: int, tile: str, end: str | None, closed: bool, forced: bool, events: list) -> None:
        closing_pair = self.variant == "osel" and closed and self.layout.spinner is None
        finishing_pair = self.phase == "close_pair"
        self.hands[seat].remove(tile)
        self.layout.place(tile, end, closed)
        self.last_placer = seat
        events.append(("placed", seat, tile, end, closed, forced))
        if self.variant != "osel":
            # LAY-6, X-2: after each move (a forced lead too) a positive multiple of 5 is written
            # by the mover's side (TEL-3); TEL-6 divides it by 5.
            c = self.layout.count()
            if c > 0 and c % 5 == 0:
                points = c // self.scale
                self._totals[self.side_of[seat]] += points
                events.append(("scored", seat, points, c))
        if not self.hands[seat]:
            self._finish("domino", seat, events)  # TURN-1: the deal ends when the hand empties
            return
        if self.variant != "osel":
            self._end_turn(events)  # one tile per turn (TEL-9)
            return
        if end is not None:
            self.used.add(end)
        if finishing_pair:
            self._finish("fish", seat, events)  # TURN-6: a fish at once, no draws first
            return
        if closing_pair:
            self.phase = "close_pair"
            return
        self.phase = "extras"
        if not self._extras(seat):
            self._end_turn(events)  # TURN-9: nothing more may be added

    def _end_turn(self, events: list) -> None:
        """TURN-9: the fish test at the turn's end, then the next seats draw or pass (§2.4)."""
        seat = self.turn
        self.turn = None
        self.phase = None
        self.used = set()
        p = seat
        while True:
            if self._blocked():
                self._finish("fish", self.last_placer, events)  # TURN-10: the last placer
                return
            p = (p + 1) % self.players
            while not self._can_place(p) and self._drawable():
                t = self.bazaar[self.drawn]
                self.drawn += 1
                self.hands[p].append(t)
                events.append(("drew", p, t))
            if self._can_place(p):
                self._begin_turn(p)
                return
            events.append(("passed", p))

    # -- the deal's end and the game -------------------------------------------------------

    def _finish(self, reason: str, seat: int, events: list) -> None:
        self.ended = reason
        self.turn = None
        self.phase = None
        before = self.totals()
        getattr(self, f"_score_{self.variant}")(reason, seat)
        self.deals_played += 1
        wrote = [a - b for a, b in zip(self._totals, before)]
        self._check_end()
        events.append(("deal_end", reason, wrote, self.totals()))

    def _side_sum(self, values: list[int]) -> list[int]:
        return [sum(values[s] for s in seats) for seats in self.sides]

    def _score_osel(self, reason: str, seat: int) -> None:
        """Kozel's penalty scoring (§3 kozel, OS-2, OS-4), eggs (§5), the rule of 13 (OS-3)."""
        values = [kozel_value(h) for h in self.hands]
        k = len(self.sides)
        raw = [0] * k
        self._leader = seat  # kozel: the player who went out, or the fisherman, leads next
        eggs_deal = False
        if reason == "domino":
            w = self.side_of[seat]
            # the losers write their own hands: the opposing pair, or every other player
            raw = [0 if i == w else v for i, v in enumerate(self._side_sum(values))]
        else:
            sides = self._side_sum(values)
            top = max(sides)
            if sides.count(top) > 1:
                eggs_deal = True  # eggs: nobody writes, the total waits (eggs add up)
                self.eggs += sum(values)
            else:
                raw[sides.index(top)] = sum(values)  # the heavier side writes all four hands
        if self.eggs and not eggs_deal:
            top = max(raw)
            if top > 0 and raw.count(top) == 1:  # §5: the single largest write takes them
                raw[raw.index(top)] += self.eggs
                self.eggs = 0
        for i, amount in enumerate(raw):
            if self._totals[i] > 0:
                self._totals[i] += amount  # OS-3: once a side has points every write counts
            elif amount == 0:
                self.hang[i] = 0  # OS-3: a deal that gives it nothing forgets the hang
            else:
                self.hang[i] += amount
                if self.hang[i] >= 13:
                    self._totals[i] += self.hang[i]
                    self.hang[i] = 0

    def _score_telephone(self, reason: str, seat: int) -> None:
        values = [plain(h) for h in self.hands]
        self._leader = seat  # TEL-2: the player who went out; after a fish the last placer
        if self.endgame == "loser_pays":
            # TEL-5: every player holding tiles takes their hand, rounded down to a multiple
            # of 5 (TEL-6: floor(hand / 5) under scale 5), off their side; never below 0.
            for s, v in enumerate(values):
                cut = round_down5(v) if self.scale == 1 else v // 5
                i = self.side_of[s]
                self._totals[i] = max(0, self._totals[i] - cut)
            return
        # TEL-7: the side that went out writes the other side's hands rounded to the nearest
        # 5; in a fish the side with fewer pips writes the other's; equal totals write nothing.
        sides = self._side_sum(values)
        if reason == "domino":
            w = self.side_of[seat]
        elif len(sides) == 2 and sides[0] != sides[1]:
            w = 0 if sides[0] < sides[1] else 1
        else:
            return
        amount = round_near5(sides[1 - w])
        self._totals[w] += amount // self.scale

    def _score_muggins(self, reason: str, seat: int) -> None:
        values = [plain(h) for h in self.hands]
        if reason == "domino":
            self._totals[seat] += 10  # MUG-4: going out writes 10; the others' pips are not written
            self._leader = seat
            return
        low = min(values)
        if values.count(low) > 1:
            self._leader = None  # MUG-3: a tie for fewest brings back the forced lead
            return
        w = values.index(low)
        self._totals[w] += round_near5(sum(values) - 2 * low)  # MUG-5: others' total − own
        self._leader = w  # MUG-3: the previous winner

    def _check_end(self) -> None:
        t = self._totals
        n = len(t)
        if self.variant == "osel":
            # §3 kozel, §5 goats: a side at 101 or more is a goat; every other side wins.
            goats = [i for i in range(n) if t[i] >= self.target]
            if goats:
                self._over = True
                self._winners = [i for i in range(n) if i not in goats]
                # every side a goat is a drawn game, which names no losers
                self._losers = goats if self._winners else []
            return
        reached = [i for i in range(n) if t[i] >= self.target]
        if not reached:
            return
        self._over = True
        if self.variant == "telephone":
            self._winners = reached if len(reached) == 1 else []  # TEL-4: both: drawn
            self._losers = [1 - reached[0]] if len(reached) == 1 else []  # a draw, no losers
            return
        best = max(t[i] for i in reached)  # MUG-6: the highest wins; equal highest draw
        top = [i for i in reached if t[i] == best]
        self._winners = top if len(top) == 1 else []
        self._losers = [i for i in range(n) if i not in top] if len(top) == 1 else []

    # -- why a move is refused --------------------------------------------------------------

    def _why_illegal(self, move: tuple) -> str:
        if self.ended is not None or not self.started:
            return "no deal is in progress"
        seat = self.turn
        if move == ("stop",):
            if self.phase == "close_pair":
                return "after closing one line end the other must be closed too (TURN-6)"
            return "stop ends a turn only after its first tile (TURN-1, TURN-4)"
        if len(move) != 4 or move[0] != "place":
            return f"not a move: {move!r}"
        _, tile, end, closed = move
        if tile not in TILES:
            return f"{tile!r} is not a tile"
        if tile not in self.hands[seat]:
            return f"seat {seat} does not hold {tile}"
        if self.layout.lead is None:
            return "the lead names no end" if end is not None else "a lead is never closed"
        if end not in self.layout.arms:
            return f"there is no open end {end!r}" + (" yet (LAY-4, LAY-5)" if end in CROSS_ENDS else "")
        arm = self.layout.arms[end]
        if arm.closed:
            return f"the {end} end is closed (LAY-7)"
        if arm.shows not in halves(tile):
            return f"{tile} does not match the {end} end, which shows {arm.shows}"
        if self.phase == "close_pair":
            return "after closing one line end the only move is closing the other (TURN-6)"
        if self.phase == "extras":
            if not is_double(tile):
                return "after the turn's tile only doubles may be added (TURN-4)"
            if end in self.used:
                return f"the {end} end was already used this turn (TURN-4)"
        if closed:
            if self.variant != "osel":
                return f"{self.variant} has no closed doubles"
            if not is_double(tile):
                return "only a double may be closed (TURN-5)"
            return "this double may not be closed here (TURN-5, TURN-6)"
        return f"{move!r} is not legal here"
