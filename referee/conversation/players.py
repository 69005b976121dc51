"""Who sits at the table: a bot's part in one match (:class:`Entry`: its faults, its hello, its
time bank) and a process slot of it (:class:`Player`: a seat in one orientation, with the seat's
channel to the process that holds it now).  Below the table and the exchanges, which both play
with them."""

from __future__ import annotations

from collections import Counter

from protocol import messages as m
from referee.base.clock import Clock, TimeControl
from referee.bots.bot import Bot
from referee.conversation import faults as F
from referee.conversation.channel import Channel

#: Different remarks kept per bot; the rest are counted under one.
_REMARKS = 20



class Entry:
    """A bot's part in one match: its faults, whether it forfeited, its hello, its time bank
    (one for all its processes, as PROTOCOL.md says), and for ``referee check`` the harmless
    oddities it showed."""

    __slots__ = ("bot", "index", "faults", "forfeited", "hello", "clock", "remarks", "unknown_bytes")

    def __init__(self, bot: Bot, index: int, tc: TimeControl) -> None:
        self.bot = bot
        self.index = index
        self.faults: list[F.Fault] = []
        self.forfeited = False
        self.hello: m.BotHello | None = None
        self.clock = Clock(tc if bot.tc is None else bot.tc)
        #: plain-words remarks about harmless oddities (unknown message types…) and how many
        #: times each happened, for ``referee check``
        self.remarks: Counter[str] = Counter()
        #: bytes of lines of unknown types so far in the match (see UNKNOWN_PER_MATCH)
        self.unknown_bytes = 0

    @property
    def name(self) -> str:
        return self.bot.name

    def remark(self, text: str) -> None:
        if text not in self.remarks and len(self.remarks) >= _REMARKS:
            text = "did other harmless things (ignored)"
        self.remarks[text] += 1


class Player:
    """One process slot: a bot's seat (``slot`` 0, or 1 for its second seat in a pair game) in
    one game in one orientation (a *segment* of the match), with that seat's channel to its process
    (:class:`~referee.conversation.channel.Channel`: ``proc`` and the outbox).
    Every segment has slots of its own, so no process ever sees a deal in two seatings, or two
    games.  The process is replaced after a fault; the slot, and its place in the seating, stays."""

    __slots__ = ("channel", "entry", "slot", "orientation", "game", "pending", "starts", "unknown")

    def __init__(self, entry: Entry, slot: int, orientation: int = 0, game: int = 0) -> None:
        self.channel = Channel()
        self.entry = entry
        self.slot = slot
        self.orientation = orientation
        #: the game of the match this slot plays (each game in each orientation has processes of
        #: its own); it names the slot's stderr files, not the slot (:attr:`label`)
        self.game = game
        self.pending: F.Fault | None = None  # a fault found between deals, charged to the next
        self.starts = 0
        self.unknown = 0  # lines of unknown types since the last answer (see UNKNOWN_PER_MOVE)

    @property
    def bot(self) -> Bot:
        return self.entry.bot

    @property
    def label(self) -> str:
        """The process slot in messages and file names: ``A``, ``A#1`` (the second seat of a
        pair), ``A@1`` (orientation 1)."""
        name = self.entry.name if self.slot == 0 else f"{self.entry.name}#{self.slot}"
        return name if self.orientation == 0 else f"{name}@{self.orientation}"
