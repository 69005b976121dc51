"""What ``referee verify`` finds, for both formats of log (:mod:`referee.audit.verify`,
:mod:`referee.audit.legacy`): a log that disagrees with the referee, one that stops short, and the
counts of a log that agrees."""

from __future__ import annotations

from dataclasses import dataclass


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
