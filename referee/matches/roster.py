"""Who plays a segment of a match: its process slots, seat by seat (:class:`Roster`)."""

from __future__ import annotations

from collections import Counter

from referee.conversation.players import Entry, Player


class Roster:
    """The process slots of a duplicate match, or of one segment of it (``only``: one orientation,
    of game ``game``): in every orientation, a bot has as many as the seats it takes, and no slot
    serves two orientations (a process never sees a deal twice)."""

    def __init__(self, entries: list[Entry], seatings: list[tuple[int, ...]], only: int | None = None, game: int = 0) -> None:
        self.players: dict[tuple[int, int, int], Player] = {}  # (orientation, bot, slot)
        self._seated: dict[int, list[Player]] = {}
        self.game = game
        for o, seating in enumerate(seatings):
            if only is not None and o != only:
                continue
            used: Counter[int] = Counter()
            seated = []
            for b in seating:
                p = self.players.setdefault((o, b, used[b]), Player(entries[b], used[b], o, game))
                seated.append(p)
                used[b] += 1
            self._seated[o] = seated

    @property
    def orientations(self) -> list[int]:
        """The orientations the roster seats."""
        return list(self._seated)

    def seat(self, orientation: int) -> list[Player]:
        """The player in each seat in an orientation."""
        return self._seated[orientation]
