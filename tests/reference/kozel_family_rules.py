"""A second, independent reading of sea_kozel, general and blitz from RULES.md.

Written from docs/RULES.md alone (§1, §2, §3 kozel/sea_kozel/general/blitz, §5, §6 TURN-, SK-,
GEN-, BL-, X-), never from ``referee.engine``, so that property tests can play the same deals
through both and compare every event.  Nothing here is imported from ``referee``; the tile
helpers come from the cross-game reference, which is just as independent.

The interface is that of :mod:`reference.cross_rules` (tiles ``"a-b"`` with a ≤ b; ends
``"left"``/``"right"``, ``None`` for a lead; hands in seat order and the bazaar drawn from the
front), with sea_kozel's decisions and events added:

* moves: ``("place", tile, end, False)``; ``("lead_hundred", "6-6")`` — leading 6-6 *for a
  hundred*, offered beside the plain lead (SK-7); ``("write_off",)`` and ``("decline",)`` — the
  fisherman's decision after a fish with F > O and F ≥ 25 (SK-12); ``("stop",)`` after a turn's
  first double when a second one could follow (TURN-2).  blitz chains are compulsory (TURN-8):
  the same seat moves again and there is no stop.
* events: ``("placed", seat, tile, end, False, forced)``, ``("drew", seat, tile)``, ``("passed",
  seat)``, ``("declared", seat, "hundred")`` (just before that 6-6 lead), ``("write_off", seat)``
  / ``("declined", seat)``, ``("general", seat, side)`` (one per general, GEN-3, TURN-3), and
  last ``("deal_end", rule, wrote, totals)``.  ``rule`` names what decided the deal: sea_kozel
  ``bald``, ``hundred``, ``svoyak``, ``six_six``, ``six_six_hundred``, ``fish_hundred``,
  ``write_off``, ``declined``, ``eggs``, ``eggs_taken``, ``rotten_eggs``, ``write``, ``wipe``,
  ``under_25``; general ``general``, ``two_generals``, ``domino``, ``void_fish``; blitz
  ``domino``, ``fish``, ``eggs``, ``redeal``.  ``wrote`` is each side's change of total at the
  deal's end (a wipe is negative), ``totals`` the totals after it.
* ``pending()`` is the special state of sea_kozel told to bots at a deal's start: during a deal
  the state it is played under, between deals the one waiting for the next; ``None`` or a dict
  ``{"kind": "hundred", "side": s}``, ``{"kind": "write_off", "side": s, "deal": k, "of": 3}``,
  ``{"kind": "eggs", "total": t, "deal": k, "of": 3}``.

Sides are pairs (side ``s % 2``) in four-player sea_kozel and general, seats otherwise.
``winners()`` lists sides and is empty for a drawn game; ``losers()`` too (X-0: a drawn game
names no losers).  A game won by a side is lost by the other (sea_kozel, general) or by the
goats (blitz, §5).

Readings that RULES.md leaves to the reader, taken here (each also cited where coded):

* SK-9 with SK-12: in a hundred deal that ends in a fish with F > O and F ≥ 25, the fisherman
  decides first; declining makes the other side the fish's winner, writing off leaves the deal
  without a winner (the hundred lapses, the write-off replaces it, SK-10).
* SK-9's order applies the rules in turn, stopping only where the match ends: going out with
  6-6 (worth under 25) grants the hundred and is named ``six_six_hundred``, and normal scoring
  still runs after it, so in an eggs deal the eggs are taken with it (SK-14) under the 25 rule.
* SK-14: "eggs again" keeps counting the same three eggs deals, adding the new total.
* SK-12: a write-off succeeds on a deal its side wins with worth ≥ 25 however the points were
  scored (write or wipe); a new special state made by one of its deals replaces it (SK-10).
"""

from __future__ import annotations

from reference.cross_rules import TILES, check_deal, double_of, halves, holder, kozel_value, pips, search, void_deal

VARIANTS = ("sea_kozel", "general", "blitz")
LINE_ENDS = ("left", "right")
OF = 3  # write-off and eggs last up to three deals (§3 sea_kozel)


def sea_value(hand: list[str]) -> int:
    """§2.7, SK-2: a hand of only 0-0 counts 25, only 6-6 counts 50, exactly those two 75."""
    if sorted(hand) == ["0-0"]:
        return 25
    if sorted(hand) == ["6-6"]:
        return 50
    if sorted(hand) == ["0-0", "6-6"]:
        return 75
    return sum(pips(t) for t in hand)


class RefGame:
    """A whole game of sea_kozel, general or blitz, deal after deal (see the module docstring)."""

    def __init__(self, variant: str, players: int, options: dict[str, str] | None = None) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; this reference reads {', '.join(VARIANTS)}")
        if variant == "sea_kozel" and players not in (2, 4):
            raise ValueError("sea_kozel is played by 2 players or 4 in pairs")
        if variant in ("general", "blitz") and players != 4:
            raise ValueError(f"{variant} is played by 4 players")
        self.variant = variant
        self.players = players
        options = {k: str(v) for k, v in (options or {}).items()}
        self.generals = 3  # §3 general: the default number of generals (our choice)
        self.max_deals = 50
        if variant == "general":
            for k, v in options.items():
                if k not in ("generals", "max_deals"):
                    raise ValueError(f"general has no option {k!r} (it has generals, max_deals)")
                if not v.isdigit() or int(v) < 1:
                    raise ValueError(f"general option {k} is a positive whole number, not {v!r}")
            self.generals = int(options.get("generals", "3"))
            self.max_deals = int(options.get("max_deals", "50"))
        elif options:
            # BL-2: blitz has no options; §3 sea_kozel names none.
            raise ValueError(f"{variant} has no options, got {', '.join(sorted(options))}")
        pairs = players == 4 and variant != "blitz"  # BL-1: blitz plays alone
        self.sides: list[tuple[int, ...]] = [(0, 2), (1, 3)] if pairs else [(s,) for s in range(players)]
        self.side_of = {s: i for i, seats in enumerate(self.sides) for s in seats}
        # §3 sea_kozel: 2 players have a bazaar of 14 whose last tile is never drawn.
        self.keep = 1 if players == 2 else 0
        self._totals = [0] * len(self.sides)
        self._leader: int | None = None  # who leads the next deal with any tile; None: forced
        self._pending: dict | None = None  # sea_kozel's special state for the next deal
        self.eggs = 0  # blitz: an eggs total waiting for the next write (§5)
        self.deals_played = 0  # deals played to their end (a void blitz deal is not)
        self._over = False
        self._winners: list[int] = []
        self._losers: list[int] = []
        # the current deal
        self.current: dict | None = None  # the special state this deal is played under
        self.hundred: int | None = None  # the side playing this deal for a hundred
        self.hands: list[list[str]] = []
        self.bazaar: list[str] = []
        self.drawn = 0
        self.ends: dict[str, int] = {}
        self.lead: str | None = None
        self.turn: int | None = None
        self.phase: str | None = None  # "lead", "one", "second", "chain", "decide"
        self.turn_tiles: list[str] = []
        self.first_end: str | None = None
        self.last_placer: int | None = None
        self.last_single: int | None = None  # the last seat that laid a non-double (TURN-10)
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
        return None if self._over or self.variant == "general" else self._leader  # GEN-1: 1-1 forced

    def deal_over(self) -> bool:
        return self.started and self.ended is not None

    def to_move(self) -> int | None:
        return self.turn if self.ended is None else None

    def pending(self) -> dict | None:
        state = self.current if self.started and self.ended is None else self._pending
        return None if state is None else {k: v for k, v in state.items() if k != "leader"}

    def start_deal(self, hands: list[list[str]], bazaar: list[str]) -> list[tuple]:
        if self._over:
            raise ValueError("the game is over")
        if self.started and self.ended is None:
            raise ValueError("the current deal is not over")
        check_deal(self.variant, self.players, 7, hands, bazaar)
        self.hands = [list(h) for h in hands]
        self.bazaar = list(bazaar)
        self.drawn = 0
        self.ends = {}
        self.lead = None
        self.turn = None
        self.phase = None
        self.turn_tiles = []
        self.first_end = None
        self.last_placer = None
        self.last_single = None
        self.ended = None
        self.started = True
        self.current, self._pending = self._pending, None
        self.hundred = self.current["side"] if self.current and self.current["kind"] == "hundred" else None
        events: list[tuple] = []
        if self.variant == "blitz" and void_deal(self.hands):
            # §2.9 via BL-1: the deal is void; the next deal of the stream replaces it with the
            # lead rule that applied to this one (§5).
            self.ended = "redeal"
            events.append(("deal_end", "redeal", [0] * len(self.sides), self.totals()))
            return events
        forced = self._forced_lead()
        if forced is None:
            self.turn = self._leader
            self.phase = "lead"
            return events
        seat, tile = forced
        self.turn = seat
        self.phase = "lead"
        self._place(seat, tile, None, True, events)
        return events

    def legal(self) -> list[tuple]:
        if self.to_move() is None:
            return []
        seat = self.turn
        hand = self.hands[seat]
        if self.phase == "decide":
            return [("decline",), ("write_off",)]  # SK-12
        if self.phase == "lead":
            moves = [("place", t, None, False) for t in hand]
            if self._may_declare(seat):
                moves.append(("lead_hundred", "6-6"))
            return sorted(moves)
        if self.phase == "second":
            # TURN-2: a second double on the other end, or stop.
            e = self._other_end()
            return sorted([("place", double_of(self.ends[e]), e, False), ("stop",)])
        return sorted(("place", t, e, False) for t in hand for e, v in self.ends.items() if v in halves(t))

    def play(self, move) -> list[tuple]:
        move = tuple(move)
        if move not in self.legal():
            raise ValueError(self._why_illegal(move))
        seat = self.turn
        events: list[tuple] = []
        if move == ("stop",):
            self._end_turn(events)
        elif move in (("write_off",), ("decline",)):
            events.append(("write_off", seat) if move == ("write_off",) else ("declined", seat))
            self._finish("fish", seat, events, decision=move[0])
        elif move[0] == "lead_hundred":
            # SK-7: the declaration is its own decision, told just before the lead.
            self.hundred = self.side_of[seat]
            events.append(("declared", seat, "hundred"))
            self._place(seat, "6-6", None, False, events)
        else:
            self._place(seat, move[1], move[2], False, events)
        return events

    # -- one deal ---------------------------------------------------------------------------

    def _lowest_double(self) -> tuple[int, str]:
        """SK-18 (kozel's 2–3 player rule): 1-1 … 6-6, then 0-0; no double: the heaviest tile."""
        return search(self.hands, [1, 2, 3, 4, 5, 6, 0])

    def _forced_lead(self) -> tuple[int, str] | None:
        if self.variant == "general":
            return holder(self.hands, "1-1"), "1-1"  # GEN-1: every deal
        if self.variant == "blitz":
            # BL-1: 1-1 forced in the first deal, later the last deal's ender leads any tile.
            return (holder(self.hands, "1-1"), "1-1") if self._leader is None else None
        if self.deals_played == 0:
            return self._lowest_double()  # SK-18
        if self.current and self.current["kind"] == "eggs":
            # SK-14: eggs deals are led with 1-1 by its holder; in the bazaar, the first-deal rule.
            s = holder(self.hands, "1-1")
            return (s, "1-1") if s is not None else self._lowest_double()
        return None

    def _may_declare(self, seat: int) -> bool:
        """SK-7: only on an ordinary later deal, the leader's side with points, 6-6 in hand."""
        return (self.variant == "sea_kozel" and self.deals_played > 0 and self.current is None
                and self._totals[self.side_of[seat]] > 0 and "6-6" in self.hands[seat])

    def _drawable(self) -> int:
        return max(0, len(self.bazaar) - self.drawn - self.keep)

    def _can_place(self, seat: int) -> bool:
        return any(v in halves(t) for t in self.hands[seat] for v in self.ends.values())

    def _blocked(self) -> bool:
        """§2.6, §5: nobody can place and nobody can draw."""
        return self._drawable() == 0 and not any(self._can_place(s) for s in range(self.players))

    def _other_end(self) -> str:
        return "right" if self.first_end == "left" else "left"

    def _begin_turn(self, seat: int) -> None:
        self.turn = seat
        self.phase = "one"
        self.turn_tiles = []
        self.first_end = None

    def _place(self, seat: int, tile: str, end: str | None, forced: bool, events: list) -> None:
        a, b = halves(tile)
        if end is None:
            self.lead = tile
            self.ends = {"left": a, "right": b}  # §5: after a lead a-b, left shows a, right b
        else:
            v = self.ends[end]
            self.ends[end] = b if v == a else a
        self.hands[seat].remove(tile)
        self.turn_tiles.append(tile)
        self.last_placer = seat
        if a != b:
            self.last_single = seat
        events.append(("placed", seat, tile, end, False, forced))
        if not self.hands[seat]:
            self._finish("domino", seat, events)  # TURN-1: the deal ends when the hand empties
            return
        if self.variant == "blitz":
            if self._can_place(seat):
                self.phase = "chain"  # TURN-8: compulsory, the lead included, any end
                return
            self._end_turn(events)
            return
        if self.phase == "one" and end is not None and a == b:
            # TURN-2: a first double on left or right (never a lead) may be followed by a
            # second double on the other end.
            self.first_end = end
            if double_of(self.ends[self._other_end()]) in self.hands[seat]:
                self.phase = "second"
                return
        self._end_turn(events)  # TURN-9: nothing more may be added

    def _end_turn(self, events: list) -> None:
        """TURN-9: the fish test at the turn's end, then the next seats draw or pass (§2.4)."""
        seat = self.turn
        self.turn = None
        self.phase = None
        p = seat
        while True:
            if self._blocked():
                self._fish(events)
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

    def _fish(self, events: list) -> None:
        if self.variant != "sea_kozel":
            self._finish("fish", self.last_placer, events)  # TURN-8: blitz's chain player
            return
        f = self.last_single  # TURN-10: the last player who laid a non-double
        if not (self.current and self.current["kind"] == "eggs"):
            big_f, big_o = self._fish_totals(f)
            if big_f > big_o and big_f >= 25:
                # SK-12: the fisherman decides before anything is scored.
                self.turn = f
                self.phase = "decide"
                return
        self._finish("fish", f, events)

    def _fish_totals(self, f: int) -> tuple[int, int]:
        tot = self._side_sum([sea_value(h) for h in self.hands])
        fs = self.side_of[f]
        return tot[fs], tot[1 - fs]

    # -- the deal's end and the game -------------------------------------------------------

    def _side_sum(self, values: list[int]) -> list[int]:
        return [sum(values[s] for s in seats) for seats in self.sides]

    def _finish(self, how: str, seat: int, events: list, decision: str | None = None) -> None:
        self.turn = None
        self.phase = None
        before = self.totals()
        rule = getattr(self, f"_end_{self.variant}")(how, seat, events, decision)
        self.ended = rule
        self.deals_played += 1
        if self.variant == "general" and not self._over and self.deals_played >= self.max_deals:
            # GEN-6: at the cap the pair with fewer generals wins; equal counts draw.
            self._over = True
            g = self._totals
            self._winners = [] if g[0] == g[1] else [0 if g[0] < g[1] else 1]
            self._losers = [1 - w for w in self._winners]  # equal counts: drawn, no losers
        wrote = [a - b for a, b in zip(self._totals, before)]
        events.append(("deal_end", rule, wrote, self.totals()))

    def _match(self, winners: list[int], losers: list[int] | None = None) -> None:
        """The game is over: ``winners`` won it; ``losers`` lost it (default: the other side of a
        two-sided game).  A drawn game (no winners) names no losers (X-0)."""
        self._over = True
        self._winners = winners
        if not winners:
            self._losers = []
        elif losers is not None:
            self._losers = losers
        else:
            self._losers = [1 - winners[0]]

    # One function of about 100 lines: SK-9 to SK-17 read in the book's order, one after the
    # other, as a second reading meant to be checked against the book (see pyproject.toml).
    def _end_sea_kozel(self, how: str, seat: int, events: list, decision: str | None) -> str:
        n = self.players
        tot = self._side_sum([sea_value(h) for h in self.hands])  # SK-2
        cur = self.current or {}
        eggs_deal = cur.get("kind") == "eggs"
        write_off = cur if cur.get("kind") == "write_off" else None
        new: dict | None = None
        fish_hundred = False
        if how == "domino":
            win: int | None = self.side_of[seat]
            leader = seat  # the previous winner leads
        else:
            f = seat
            fs = self.side_of[f]
            big_f, big_o = tot[fs], tot[1 - fs]  # F and O of §3
            if eggs_deal:
                # SK-14: inside eggs deals a fish is won by fewer pips; equal: eggs again.
                win = None if big_f == big_o else (fs if big_f < big_o else 1 - fs)
            elif decision is not None:
                win = 1 - fs if decision == "decline" else None  # SK-12
            elif big_f == big_o:
                win = None  # eggs
            elif big_f < 25 <= big_o:
                win, fish_hundred = fs, True  # SK-11
            else:
                win = fs if big_f < big_o else 1 - fs  # any other fish: fewer pips wins (our choice)
            leader = f if win in (None, fs) else (f + 1) % n  # SK-17
        worth = tot[1 - win] if win is not None else 0  # SK-4: the two opponents' hands

        rule = None
        if how == "domino" and "0-0" in self.turn_tiles:
            rule = "bald"  # TURN-3, SK-9: bald first
            self._match([win])
        elif self.hundred is not None and win is not None:
            h = self.hundred
            if win == h:
                rule = "hundred"  # SK-9: wins the deal, wins the match
                self._match([h])
            elif tot[h] >= 25:
                rule = "svoyak"  # SK-9: loses holding 25 or more
                self._match([1 - h])
            # losing holding less: scored normally below
        if rule is None and how == "domino" and "6-6" in self.turn_tiles:
            if worth >= 25:
                rule = "six_six"
                self._match([win])
            else:
                # The 6-6 rule grants the hundred, then normal scoring still runs (SK-9's
                # order): outside eggs a worth under 25 writes nothing, inside them the eggs
                # are taken with it (SK-14).
                rule = "six_six_hundred"
                new = {"kind": "hundred", "side": win}
        if rule is None or rule == "six_six_hundred":
            if decision == "write_off":
                rule = "write_off"  # SK-12: nothing is scored for that fish
                new = {"kind": "write_off", "side": self.side_of[seat], "deal": 1, "of": OF, "leader": seat}
            elif win is None:
                total = sum(tot)
                if eggs_deal:
                    total += cur["total"]
                    if cur["deal"] >= OF:
                        rule = "rotten_eggs"  # SK-14: the third eggs deal without a winner
                        self._match([])
                        return rule
                    new = {"kind": "eggs", "total": total, "deal": cur["deal"] + 1, "of": OF}
                else:
                    new = {"kind": "eggs", "total": total, "deal": 1, "of": OF}
                rule = "eggs"
            else:
                amount = worth + (cur["total"] if eggs_deal else 0)  # SK-14: eggs + worth
                if amount < 25:
                    scored = "under_25"  # SK-5: nothing happens
                elif self._totals[1 - win] > 0:
                    self._totals[1 - win] = 0  # §3: the other side's points are wiped
                    scored = "wipe"
                else:
                    self._totals[win] += amount
                    scored = "write"
                if rule is not None:
                    pass  # six_six_hundred names the deal
                elif eggs_deal:
                    rule = "eggs_taken"
                elif decision == "decline":
                    rule = "declined"
                elif fish_hundred:
                    rule = "fish_hundred"
                    new = {"kind": "hundred", "side": win}  # SK-11
                else:
                    rule = scored
                if self._totals[win] >= 125:
                    self._match([win])  # SK-19
        if write_off is not None and new is None and not self._over:
            x = write_off["side"]
            if not (win == x and worth >= 25):
                if write_off["deal"] >= OF:
                    new = {"kind": "hundred", "side": 1 - x}  # SK-12: the other side's hundred
                else:
                    new = dict(write_off, deal=write_off["deal"] + 1)
        if new is not None and new["kind"] == "hundred" and self.side_of[leader] != new["side"]:
            leader = (leader + 1) % n  # SK-8: the next seat clockwise
        if new is not None and new["kind"] == "write_off":
            leader = new["leader"]  # SK-12: the fisherman leads the write-off deals
        self._leader = None if new is not None and new["kind"] == "eggs" else leader  # SK-14: 1-1 forced
        self._pending = new
        return rule

    def _end_general(self, how: str, seat: int, events: list, decision: str | None) -> str:
        if how == "fish":
            return "void_fish"  # GEN-2: played out, void, no generals
        given = sum(t in ("0-0", "6-6") for t in self.turn_tiles)  # TURN-3: every tile counts
        to = (seat + 1) % self.players  # GEN-3: the next seat, always an opponent
        side = self.side_of[to]
        for _ in range(given):
            events.append(("general", to, side))
        self._totals[side] += given
        if self._totals[side] >= self.generals:
            self._match([1 - side])  # GEN-5: reaching `generals` loses at once
        return ("domino", "general", "two_generals")[given]

    def _end_blitz(self, how: str, seat: int, events: list, decision: str | None) -> str:
        """BL-1: four-player individual kozel: penalties, eggs, rule of 13 drop, goat at 101."""
        values = [kozel_value(h) for h in self.hands]
        raw = [0] * self.players
        self._leader = seat  # the player who went out, or the chain's player (TURN-8)
        if how == "domino":
            rule = "domino"
            raw = [0 if s == seat else v for s, v in enumerate(values)]  # every loser, own hand
        else:
            top = max(values)
            if values.count(top) > 1:
                self.eggs += sum(values)  # a tie for most: eggs, carried and accumulated
                return "eggs"
            rule = "fish"
            raw[values.index(top)] = sum(values)  # the single player holding most writes all
        if self.eggs:
            top = max(raw)
            if top > 0 and raw.count(top) == 1:  # §5: the single largest write takes them
                raw[raw.index(top)] += self.eggs
                self.eggs = 0
        for s, amount in enumerate(raw):
            if self._totals[s] == 0 and amount < 13:
                continue  # rule of 13 drop (§5: carried eggs are dropped with it)
            self._totals[s] += amount
        goats = [s for s in range(self.players) if self._totals[s] >= 101]
        if goats:
            self._match([s for s in range(self.players) if s not in goats], goats)
        return rule

    # -- why a move is refused --------------------------------------------------------------

    def _why_illegal(self, move: tuple) -> str:
        if self.ended is not None or not self.started:
            return "no deal is in progress"
        seat = self.turn
        if self.phase == "decide":
            return f"seat {seat} must write off the fish or decline (SK-12)"
        if move in (("write_off",), ("decline",)):
            return "writing off is decided only after a fish with F > O and F ≥ 25 (SK-12)"
        if move == ("stop",):
            if self.variant == "blitz":
                return "a blitz chain is compulsory: there is no stop (TURN-8)"
            return "stop ends a turn only after its first double (TURN-2)"
        if move and move[0] == "lead_hundred":
            return "a hundred is declared only by leading 6-6 on an ordinary later deal, with points (SK-7)"
        if len(move) != 4 or move[0] != "place":
            return f"not a move: {move!r}"
        _, tile, end, closed = move
        if tile not in TILES:
            return f"{tile!r} is not a tile"
        if tile not in self.hands[seat]:
            return f"seat {seat} does not hold {tile}"
        if closed:
            return f"{self.variant} has no closed doubles"
        if self.phase == "lead":
            return "the lead names no end"
        if end not in self.ends:
            return f"there is no end {end!r}"
        if self.ends[end] not in halves(tile):
            return f"{tile} does not match the {end} end, which shows {self.ends[end]}"
        if self.phase == "second":
            return "after the first double only a double on the other end may follow (TURN-2)"
        return f"{move!r} is not legal here"
