"""What a caller sees of a match while it is played: the :class:`Watch`.

:func:`~referee.matches.match.run_match` is given two objects besides the match's spec: where the
bots come from (a :class:`~referee.conversation.house.BotSource`) and a watch.  A watch is told,
as typed values and as they happen, what its caller asked to see: the running progress and each
finished board (in board order), each segment as it is seated and greeted, and from every table
the log's records, each turn asked, each fault and each process's end
(:class:`~referee.conversation.house.TableWatch`).  The log's own lines go to :meth:`Watch.logged`
when the watch takes them (``verify`` compares them with the log it checks).

Each method does nothing here: override the ones you need.  Only those are called, so a watch
costs a match nothing for what it does not look at.  :func:`watching` makes a watch of two plain
callables, for the commands that only show progress.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from referee.conversation.house import TableWatch

if TYPE_CHECKING:
    from referee.matches.results import MatchResult
    from referee.matches.roster import Roster


class Watch(TableWatch):
    """What a caller sees of a match (see the module's docstring)."""

    def progress(self, description: str, advance: int) -> None:
        """After every deal, in board order: ``description`` of the match so far and how many
        deals it advanced by."""

    def board(self, result: MatchResult) -> None:
        """After every finished board, in board order (the SPRT's state already in ``result.sprt``)."""

    def seated(self, roster: Roster) -> None:
        """A segment's process slots (one game in one orientation), before it plays or logs."""

    def greeted(self, roster: Roster) -> None:
        """A segment's processes have all answered ``hello``; they wait for its first deal (with one
        lane, while the segment before plays): the place to freeze them until then."""

    def logged(self, line: bytes) -> None:
        """A line of the log, in the log's order, instead of its being written to the spec's
        ``log_path`` (a watch that takes the lines is the log's only reader)."""


def watching(progress: Callable[[str, int], None] | None = None, board: Callable[[MatchResult], None] | None = None) -> Watch | None:
    """A watch that calls ``progress`` and ``board`` (either may be ``None``); ``None`` for neither."""
    if progress is None and board is None:
        return None
    return _Calls(progress, board)


class _Calls(Watch):
    def __init__(self, progress: Callable[[str, int], None] | None, board: Callable[[MatchResult], None] | None) -> None:
        self._progress = progress
        self._board = board

    def progress(self, description: str, advance: int) -> None:
        if self._progress is not None:
            self._progress(description, advance)

    def board(self, result: MatchResult) -> None:
        if self._board is not None:
            self._board(result)
