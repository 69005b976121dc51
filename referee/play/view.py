"""What the person at the table sees: the web report's deal documents, built live and cut down
to one seat's knowledge.

:class:`LiveView` is the report's own :class:`~referee.web.data.MatchReader` fed the referee's
records one by one as the match writes them (instead of reading a finished log), so the live
table is drawn from the very documents, and by the very renderers, that a replay is.  What the
page is sent of a deal in play is :func:`seen`: the document with every tile the person's seats
cannot see replaced by ``null`` (drawn face down): the other hands, the bazaar, the tiles others
draw, and in kolbasa every row's tiles as dealt (KB-8: even its owner's; a tile once turned up is
public wherever it goes, KB-15, as ``turn.rows`` shows it).  That is what a bot in
those seats is told (PROTOCOL.md), no more; once the deal is over its last step shows the hands
left, as ``deal_end`` tells every bot.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.engine.core.state import DealState
from referee.records import records as R
from referee.web.data import MatchReader


@dataclass
class Shown:
    """A deal as the person sees it: its document (the full one: :func:`seen` cuts it down), the
    seats the person holds in it, and, once it is over, the game's end if it ended the game."""

    doc: dict[str, Any]
    mine: list[int]
    over: bool = False
    game_end: dict[str, Any] | None = None
    #: where in the match: game, orientation (seating) and deal, from 0
    where: tuple[int, int, int] = (0, 0, 0)


class LiveView(MatchReader):
    """The match for the person who is bot ``me``, record by record (:meth:`feed`).

    :attr:`live` is the deal in play (``None`` between deals); :attr:`finished` the deals that
    are over and that the person has not yet moved on from (the page shows the oldest, with its
    result, until the person goes on)."""

    def __init__(self, me: int) -> None:
        super().__init__(Path("<the match in play>"))
        self.me = me
        self.live: Shown | None = None
        self.finished: deque[Shown] = deque()
        self.last: Shown | None = None  # the last deal that ended (a game's end belongs to it)

    def feed(self, rec: R.Record) -> None:
        """One record, as the referee writes it."""
        self.take(rec)

    def mine(self) -> list[int]:
        """The seats the person holds in the game in play."""
        return [s for s, b in enumerate(self.seating) if b == self.me]

    def on_deal(self, rec: R.Deal, state: DealState | None) -> None:
        super().on_deal(rec, state)
        if state is not None and self.cur is not None:
            self.live = Shown(self.cur.doc, self.mine(), where=(rec.game, rec.orientation, rec.deal))

    def on_deal_end(self, rec: R.DealEnd, state: DealState) -> None:
        super().on_deal_end(rec, state)
        shown = self.live
        if shown is None:
            return
        shown.over = True
        self.live = None
        self.finished.append(shown)
        self.last = shown

    def on_game_end(self, rec: R.GameEnd) -> None:
        super().on_game_end(rec)
        if self.last is not None:
            self.last.game_end = {"totals": rec.totals, "winners": rec.winners, "losers": rec.losers, "reason": rec.reason}

    def on_show(self) -> Shown | None:
        """The deal the page shows: the oldest finished one not yet moved on from, else the one
        in play, else (between deals, and once the match is over) the last one that ended."""
        return self.finished[0] if self.finished else self.live or self.last

    def go_on(self) -> bool:
        """The person moves on from the finished deal on show; whether there was one."""
        if not self.finished:
            return False
        self.finished.popleft()
        return True


def seen(shown: Shown) -> dict[str, Any]:
    """``shown``'s document as its seats may see it: every tile they cannot see is ``null``."""
    doc = shown.doc
    mine = set(shown.mine)
    rows = bool(doc.get("rows"))
    steps = doc["steps"]
    last = len(steps) - 1

    def hands(hs: list[list[str]], public: set[str], reveal: bool) -> list[list[str | None]]:
        if reveal:
            return [list(h) for h in hs]
        if rows:  # kolbasa: a row shows its public tiles (turned up once, KB-15), every other face down
            return [[t if t in public else None for t in h] for h in hs]
        return [list(h) if s in mine else [None] * len(h) for s, h in enumerate(hs)]

    out_steps = []
    public: set[str] = set()
    for i, step in enumerate(steps):
        reveal = shown.over and i == last and step["kind"] == "end"
        if step["kind"] == "turn":
            public.add(step["tile"])
        s = {**step, "hands": hands(step["hands"], public, reveal)}
        if step["kind"] == "draw" and step["seat"] not in mine:
            s["tiles"] = []
        out_steps.append(s)
    return {**doc, "hands": hands(doc["hands"], set(), False), "undealt": [None] * len(doc["undealt"]), "steps": out_steps}
