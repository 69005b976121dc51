"""What ``referee verify`` finds, for both formats of log (:mod:`referee.audit.verify`,
:mod:`referee.audit.legacy`): a log that disagrees with the referee, one that stops short, and the
counts of a log that agrees."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Inconsistent(Exception):
    """The log disagrees with the referee; the message names the line."""


class Incomplete(Inconsistent):
    """The log stops before the match's result (cut, or an interrupted match); everything up to
    ``consistent_to`` (a line number) agrees with the referee."""

    def __init__(self, message: str, consistent_to: int) -> None:
        super().__init__(message)
        self.consistent_to = consistent_to


@dataclass
class Counts:
    games: int = 0
    deals: int = 0
    plays: int = 0
    faults: int = 0
    turns_checked: int = 0
    lines: int = 0
    #: the SPRT's stop, in words, when it ended the match
    stopped: str | None = None


def stop_text(pairs: int, decision: str | None, llr: float) -> str:
    return f"stopped by the SPRT after {pairs} pairs: {decision} accepted (LLR {llr:+.3f})"


#: A ranking row's fields that follow from its position in the order: the rest are the bot's own.
_BY_POSITION = ("place", "places", "los_next", "ahead_of_next")


def older_ties(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """A result (as builtins) logged before bots level as fractions shared their place: the
    floats put them apart by their last bit, so the log's ranking orders them, gives them
    places in a row, and may name one of them ``ahead``.  When every bot's own figures agree
    and only that differs for bots today's ranking places level, the log's ranking and
    ``ahead`` are taken into ``mine`` as the log has them (a reading of the same figures)."""
    ours, old = (r.get("ranking") or {} for r in (mine, theirs))
    rows, logged = ours.get("standings"), old.get("standings")
    if not isinstance(rows, list) or not isinstance(logged, list) or len(rows) != len(logged) or rows == logged:
        return
    if not all(isinstance(r, dict) for r in [*rows, *logged]):
        return
    own = {r.get("bot"): {k: v for k, v in r.items() if k not in _BY_POSITION} for r in rows}
    if own != {r.get("bot"): {k: v for k, v in r.items() if k not in _BY_POSITION} for r in logged}:
        return
    place = {r.get("bot"): r.get("place") for r in rows}
    level = [list(place.values()).count(p) for p in place.values()]
    for i, (a, b) in enumerate(zip(rows, logged)):
        # a bot alone in its place today stands where it stood; bots level today stand in
        # their group, placed from its place to its place plus the group less one
        if level[i] == 1 and (a.get("bot"), a.get("place")) != (b.get("bot"), b.get("place")):
            return
        group = place[a.get("bot")]
        if level[i] > 1 and (place.get(b.get("bot")) != group or not isinstance(group, int)
                             or not group <= b.get("place", 0) < group + level[i]):
            return
    rest = [k for k in dict.fromkeys([*mine, *theirs]) if k not in ("ranking", "ahead") and mine.get(k) != theirs.get(k)]
    level_at_top = mine.get("ahead") is None and place.get(theirs.get("ahead")) == 1
    if rest or (mine.get("ahead") != theirs.get("ahead") and not level_at_top):
        return
    ours["standings"] = logged
    mine["ahead"] = theirs.get("ahead")
