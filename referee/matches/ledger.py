"""The match's ledger: the only writer of its result.

The segments of a match (:mod:`referee.matches.segments`) are played in any order, ``-j N`` at a
time, here or on a cluster; the ledger takes their chunks in board order, each board's
orientations in order (the log's lines go with them, :meth:`Segment.take`), and commits each
:class:`Board`, a value, to the result: its chunks' events (:class:`~referee.matches.segments.DealPlayed`,
:class:`~referee.matches.segments.GamePlayed`, :class:`~referee.matches.segments.Progressed`) and
what the bots did in it (faults, forfeits, hellos, remarks).  After every board it runs the SPRT,
if the match has one, and says whether the test has decided.  So the result, the log and the
test see the same boards in the same order whatever order the segments finished in.

The scheduler (:mod:`referee.matches.lanes`) reads :attr:`Ledger.taking` and waits on
:attr:`Ledger.moved` to keep the segments at most a few boards ahead of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import trio

from referee.conversation.log import MatchLog
from referee.matches.results import MatchResult
from referee.matches.segments import Chunk, DealPlayed, GamePlayed, Progressed, Segment
from referee.matches.spec import MatchSpec
from referee.records import records as R
from referee.stats.sprt import sprt_state


@dataclass(frozen=True, slots=True)
class Board:
    """One paired unit with all its orientations, as the log took it: chunk ``number`` of game
    ``game`` (a deal of a fixed-deal game, or the whole game to a target) in every orientation,
    ``chunks[o]`` orientation ``o``'s."""

    game: int
    number: int
    chunks: tuple[Chunk, ...]


class Ledger:
    """Takes the segments' chunks board by board in board order into the log and the result
    (:meth:`run`); ``on_board`` is told of every finished board (the SPRT's state already in
    ``result.sprt``) and ``progress`` of every step the segments made, both in board order."""

    def __init__(self, spec: MatchSpec, seatings: list[tuple[int, ...]], result: MatchResult, log: MatchLog, *,
                 on_board: Callable[[MatchResult], None] | None = None,
                 progress: Callable[[str, int], None] | None = None) -> None:
        self.spec, self.seatings, self.result, self.log = spec, seatings, result, log
        self.on_board = on_board
        self.progress = progress
        #: a game of the match, for its sides (the result's records): they never change
        self.game = spec.new_game()
        #: chunks per game (one for a game to a target), and games per orientation
        self.per_game = 1 if spec.variant.to_target else (spec.deals or 0)
        self.games = spec.games or 1
        #: the board the log takes now, counted from 0 in board order
        self.taking = 0
        #: set (and replaced) when the log moves on to the next board
        self.moved = trio.Event()
        #: the last board committed, ``(game, number)``
        self.last: tuple[int, int] = (-1, -1)

    def board_of(self, game: int, k: int) -> int:
        """The board, counted from 0 in board order, that chunk ``k`` of ``game`` belongs to."""
        return game * self.per_game + k

    async def run(self, segment: Callable[[int, int], Segment], unfinished: Callable[[], int]) -> None:
        """Take every board of the match from its segments (``segment(game, orientation)``) in
        board order and commit it; return after the last, or once the SPRT has decided (the
        ``stop`` record then counts ``unfinished()`` boards begun past it, left out).

        Raises:
            LogError: the log or the result's files could not be written.
        """
        n = len(self.seatings)
        for g in range(self.games):
            for k in range(self.per_game):
                self.taking = self.board_of(g, k)
                self.moved.set()
                self.moved = trio.Event()
                chunks: list[Chunk] = []
                for o in range(n):
                    seg = segment(g, o)
                    try:
                        chunk = await seg.take(k)
                    except trio.Cancelled:
                        # Stopped while the chunk was written live: if it finished, its deal is
                        # whole in the log, and the result counts it too.
                        if (late := seg.finished(k)) is not None:
                            chunks.append(late)
                        self._enter(g, chunks)
                        raise
                    if chunk is None:  # the game ended before (a deal limit, in every orientation)
                        break
                    chunks.append(chunk)
                if len(chunks) < n:
                    self._enter(g, chunks)
                    break
                if self.commit(Board(g, k, tuple(chunks)), unfinished):
                    return

    def commit(self, board: Board, unfinished: Callable[[], int]) -> bool:
        """``board``, taken by the log (its lines written), into the result; then the SPRT, if
        any.  True when the test has decided (the match stops here)."""
        assert self.board_of(board.game, board.number) == self.taking, "boards are committed in board order"
        self._enter(board.game, list(board.chunks))
        self.last = (board.game, board.number)
        self.log.flush()
        state = None
        spec, result, log = self.spec, self.result, self.log
        if spec.sprt is not None:
            state = result.sprt = sprt_state(spec.sprt, result.tally)
            log.write(R.Sprt(state.pairs, state.llr, state.lower, state.upper, state.decision))
        if self.on_board is not None:
            self.on_board(result)
        if state is None or state.decision is None:
            return False
        result.stopped_by = "sprt"
        log.write(R.Stop("sprt", state.decision, state.pairs, state.llr, unfinished()))
        return True

    def _enter(self, g: int, chunks: list[Chunk]) -> None:
        """The chunks of game ``g`` (``chunks[o]`` orientation ``o``'s) into the result's records,
        and the bots' faults, forfeits, hellos and remarks into the match's entries."""
        result, game, progress = self.result, self.game, self.progress
        entries = result.entries
        for o, chunk in enumerate(chunks):
            for event in chunk.events:
                match event:
                    case DealPlayed(rec, index):
                        result.add_deal(rec, game, o, g, index)
                    case GamePlayed(outcome, played):
                        result.add_game(outcome, game, o, g, played)
                    case Progressed(description, advance):
                        if progress is not None:
                            progress(description, advance)
            for i, faults in chunk.faults:
                entries[i].faults.extend(faults)
            for i in chunk.forfeited:
                entries[i].forfeited = True
            for i, hello in chunk.hellos:
                if entries[i].hello is None:
                    entries[i].hello = hello
            for i, remarks in chunk.remarks:
                entries[i].remarks.update(remarks)
