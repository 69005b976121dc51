"""A bot entered in a match: its name, its command line, its limits and its own clock, as a value
(what a match does to it is its :class:`referee.conversation.players.Entry`)."""

from __future__ import annotations

from dataclasses import dataclass

from referee.base.clock import TimeControl
from referee.bots.spawn import Confinement


@dataclass(frozen=True)
class Bot:
    """A bot entered in a match: a name, a command line, optional limits.  A value: what one
    match does to a bot (its faults, its clock…) is its :class:`Entry` of that match."""

    name: str
    argv: list[str]
    confinement: Confinement | None = None
    #: its own time control, where it is not the match's (the person at the table of ``referee
    #: play``; the log's header keeps it)
    tc: TimeControl | None = None
