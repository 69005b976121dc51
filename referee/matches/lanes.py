"""The scheduling of a match's segments: which segment plays when, on which lane.

A match is played in *segments* (one game in one orientation, by processes of its own,
:mod:`referee.matches.segments`), ``lanes`` at a time (``referee match -j N``), here or on a
cluster's workers (:class:`Cluster`).  :class:`Lanes` starts them in order (game by game, each
game's orientations in order), keeps each at most :data:`AHEAD` boards ahead of the board the
ledger takes (:mod:`referee.matches.ledger`: a segment that far ahead gives its lane up while it
waits), plays them in lockstep with the log for ``verify`` and ``referee play``, and tells games to
a target dealt one after another where the game before them ended.  A segment's play only
*records* what happened, as its chunks' events; what the match makes of it is the ledger's.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import trio

from referee.base.cluster import ClusterUnavailable
from referee.base.errors import BotStartError, LogError
from referee.conversation.house import House, wants
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine.core.deal import Deal
from referee.engine.core.errors import BadDeal
from referee.engine.core.game import DealRecord
from referee.engine.core.shuffle import GAME_STRIDE, game_keyed
from referee.matches.ledger import Ledger
from referee.matches.roster import Roster
from referee.matches.segments import Chunk, DealPlayed, GamePlayed, Progressed, Segment
from referee.matches.spec import MatchSpec
from referee.matches.watch import Watch
from referee.records import records as R


class Deals(Protocol):
    """The match's deals by their index in the deal stream (:class:`referee.matches.match.DealStream`)."""

    def __getitem__(self, index: int) -> Deal: ...


def _nowhere(data: bytes) -> None:
    raise AssertionError("a segment played by itself writes to no log")


#: The watch's methods that look inside a segment's tables (a cluster's segments have none here).
AT_THE_TABLE = ("seated", "greeted", "record", "deal_begins", "deal_ends", "asked", "fault", "closed")

#: Boards a segment may play ahead of the board the log takes (lockstep: none).  A segment that
#: far ahead waits, its lane given to another; so the log, the running score and the SPRT never
#: lag more than this behind the play, and a segment holds at most this many boards' records.
AHEAD = 16


class Lane:
    """A segment's hold on one of the match's lanes, taken while it plays and given up while it
    waits for the log."""

    def __init__(self, lanes: trio.Semaphore) -> None:
        self._lanes = lanes
        self.held = False

    async def acquire(self) -> None:
        if not self.held:
            await self._lanes.acquire()
            self.held = True

    def release(self) -> None:
        if self.held:
            self._lanes.release()
            self.held = False


class Lanes:
    """The segments of one match, played ``lanes`` at a time, while the ledger takes their
    chunks board by board in board order (:class:`~referee.matches.ledger.Ledger`).

    Segments start in order (game by game, each game's orientations in order).  With one lane
    one more segment than the lanes is started ahead: its processes are started and greeted while
    the segments before it play (:meth:`Watch.greeted` is told), so process starts cost no
    time of the match's.  Games to a target from a deal file, or by a derivation that deals them
    one after another, wait for the game before them to be played in every orientation before
    they play (their first deal is the stream position after the longest of them).
    """

    def __init__(self, spec: MatchSpec, seatings: list[tuple[int, ...]], stream: Deals, ledger: Ledger | None,
                 house: House, *, lanes: int, lockstep: bool, cluster: Cluster | None = None,
                 put: Callable[[bytes], None] = _nowhere) -> None:
        self.spec, self.seatings, self.stream, self.ledger = spec, seatings, stream, ledger
        #: where the log's lines go when the ledger takes them (the match's log)
        self.put = put
        watch = house.watch if isinstance(house.watch, Watch) else None
        #: what every segment's table is given besides its nursery, players and log
        self.house = house
        #: the watch, where it looks at segments or at what their tables log
        self.watch = watch if any(wants(watch, w, Watch) for w in AT_THE_TABLE) else None
        self.lanes, self.lockstep = lanes, lockstep
        self.cluster = cluster
        self.games = spec.games or 1
        self.segments: dict[tuple[int, int], Segment] = {}
        self.folder = None if spec.log_path is None else spec.log_path.parent
        self.failure: Exception | None = None
        self._nursery: trio.Nursery | None = None
        # Games to a target: the stream position each game starts from (known at once when
        # game-keyed, else when the game before it has ended in every orientation).
        self.keyed = spec.deal_file is None and game_keyed(spec.deals_from)
        self._starts: dict[int, int] = {0: 0}
        self._started: dict[int, trio.Event] = {}
        self._ended: Counter[int] = Counter()
        self._furthest: Counter[int] = Counter()
        self._greeted: list[trio.Event] = []  # by start order: the segment's processes are greeted

    def segment(self, g: int, o: int) -> Segment:
        seg = self.segments.get((g, o))
        if seg is None:
            seg = self.segments[(g, o)] = Segment(g, o, self.put, self.folder)
        return seg

    def close(self) -> None:
        for seg in self.segments.values():
            seg.close()

    def _fail(self, exc: Exception) -> None:
        if self.failure is None:
            self.failure = exc
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    def unfinished(self) -> int:
        """Boards begun (a segment's processes started for them) past the last one the log took."""
        assert self.ledger is not None
        per = 0 if self.spec.variant.to_target else 1
        begun = {(seg.game, k * per) for seg in self.segments.values() for k in range(seg.begun)}
        return sum(1 for b in begun if b > self.ledger.last)

    async def run(self) -> Exception | None:
        """Play the match while the ledger takes it; the first failure that stopped it
        (BotStartError, BadDeal, LogError, ClusterUnavailable)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._take)
            nursery.start_soon(self._schedule)
        return self.failure

    async def _take(self) -> None:
        """The ledger at work; once it has taken the last board (or the SPRT decided), segments
        still playing are not needed."""
        assert self.ledger is not None
        try:
            await self.ledger.run(self.segment, self.unfinished)
        except LogError as exc:
            self._fail(exc)
        finally:
            assert self._nursery is not None
            self._nursery.cancel_scope.cancel()

    async def _schedule(self) -> None:
        # Every orientation of a board must be under way for the log to take it, and one more
        # segment is started ahead (its processes greeted while the others play).
        started = trio.Semaphore(max(self.lanes, len(self.seatings)) + (0 if self.lockstep else 1))
        playing = trio.Semaphore(self.lanes)
        async with trio.open_nursery() as nursery:
            i = 0
            for g in range(self.games):
                for o in range(len(self.seatings)):
                    await started.acquire()
                    self._greeted.append(trio.Event())
                    nursery.start_soon(self._run_segment, self.segment(g, o), i, started, Lane(playing))
                    i += 1

    async def _run_segment(self, seg: Segment, i: int, started: trio.Semaphore, lane: Lane) -> None:
        try:
            with seg.scope:
                if self.cluster is not None:
                    await self._segment_elsewhere(seg, lane)
                else:
                    await self._play_segment(seg, i, lane)
        except (BotStartError, BadDeal, LogError, ClusterUnavailable) as exc:
            self._fail(exc)
        finally:
            self._greeted[i].set()
            lane.release()
            started.release()

    async def _near_the_log(self, seg: Segment, k: int, lane: Lane | None = None) -> None:
        """Wait until chunk ``k`` of ``seg`` is fewer than :data:`AHEAD` boards ahead of the board
        the ledger takes, giving ``lane`` up meanwhile."""
        ledger = self.ledger
        assert ledger is not None
        board = ledger.board_of(seg.game, k)
        while board >= ledger.taking + AHEAD:
            if lane is not None:
                lane.release()
            await ledger.moved.wait()

    async def _chunk(self, seg: Segment, k: int, lane: Lane) -> None:
        """Before chunk ``k`` of ``seg`` is played: begin it (``k`` > 0; the first is begun before
        the processes start, for their hellos), and wait until the segment may play it: in lockstep
        until the log takes it, else until it is fewer than :data:`AHEAD` boards ahead of the log
        and a lane is free (a segment waiting for the log gives its lane up meanwhile)."""
        if k:
            seg.begin()
            if self.lockstep:
                await seg.turn()
        if self.lockstep:
            return
        await self._near_the_log(seg, k, lane)
        await lane.acquire()

    async def _play_segment(self, seg: Segment, i: int, lane: Lane) -> None:
        spec, g, o = self.spec, seg.game, seg.orientation
        seg.entries = [Entry(bot, i, spec.tc) for i, bot in enumerate(spec.bots)]
        roster = Roster(seg.entries, self.seatings, only=o, game=g)
        watch = self.watch
        if watch is not None:
            watch.seated(roster)
        log = MatchLog(None, on_record=watch.record if wants(watch, "record") else None, sink=seg.write)
        seg.begin()
        if self.lockstep:
            await seg.turn()
        elif i >= self.lanes:
            # Starts go ``lanes`` at a time, in order, so that the next segment's starts take the
            # time the one before it plays rather than the time it starts in.
            await self._greeted[i - self.lanes].wait()
        async with trio.open_nursery() as nursery:
            table = Table(nursery, list(roster.players.values()), log, self.house)
            played = False
            failure: Exception | None = None
            try:
                await table.open()
                self._greeted[i].set()
                if watch is not None:
                    watch.greeted(roster)
                start = await self._start_of(g)
                await self._chunk(seg, 0, lane)
                if spec.variant.to_target:
                    await self._whole_game(seg, table, roster.seat(o), start, log)
                else:
                    await self._fixed_deals(seg, table, roster.seat(o), log, lane)
                played = True
            except (BotStartError, BadDeal, LogError) as exc:
                failure = exc  # raised below, outside the nursery (not as an exception group)
            finally:
                with trio.CancelScope(shield=True):
                    if played:
                        await table.close()
                    else:
                        await table.abandon()
                nursery.cancel_scope.cancel()
        if failure is not None:
            raise failure
        seg.finish()

    async def _segment_elsewhere(self, seg: Segment, lane: Lane) -> None:
        """Play ``seg`` on the cluster and hold its chunks for the log, as if played here.  It
        waits, as a local segment's first chunk does, until it is fewer than :data:`AHEAD` boards
        ahead of the log and a lane is free; the stop record counts its first board as begun
        while it plays (how far a worker has got is not known here)."""
        assert self.cluster is not None
        spec, g, o = self.spec, seg.game, seg.orientation
        start = await self._start_of(g)
        await self._near_the_log(seg, 0)
        await lane.acquire()
        seg.begun = 1
        played = await self.cluster.play(spec, g, o, start)
        try:
            for name, data in played.stderr.items():
                (spec.stderr_dir / name).write_bytes(data)
        except OSError as exc:
            raise LogError(f"cannot write the bots' stderr files in {spec.stderr_dir}: {exc.strerror or exc}") from None
        if spec.variant.to_target and not self.keyed:
            self._game_ended(g, played.position)
        seg.restore(played.chunks)

    async def _start_of(self, g: int) -> int:
        """The stream position game ``g`` starts from (games to a target)."""
        if not self.spec.variant.to_target:
            return 0
        if self.keyed:
            return g * GAME_STRIDE
        if g not in self._starts:
            await self._started.setdefault(g, trio.Event()).wait()
        return self._starts[g]

    def _game_ended(self, g: int, position: int) -> None:
        """Game ``g`` (to a target) has ended in one more orientation, at stream ``position``."""
        self._ended[g] += 1
        self._furthest[g] = max(self._furthest[g], position)
        if self._ended[g] == len(self.seatings):
            self._starts[g + 1] = self._furthest[g]
            self._started.setdefault(g + 1, trio.Event()).set()

    async def _fixed_deals(self, seg: Segment, table: Table, seating: list[Player], log: MatchLog, lane: Lane) -> None:
        """A game of a fixed number of deals in one orientation, a chunk per deal; game ``g``
        takes stream deals ``g * per_game …``."""
        spec = self.spec
        g, o = seg.game, seg.orientation
        per_game = spec.deals or 0
        game = spec.new_game()
        staged = deque(spec.opening)
        log.write(R.Game(g, o, list(self.seatings[o])))
        for k in range(per_game):
            if game.outcome() is not None:  # a deal limit (every orientation has played as many)
                break
            if k:
                await self._chunk(seg, k, lane)
            index = g * per_game + k
            rec = await table.play_deal(game, seating, index, self.stream[index], Where(g, o), staged=staged)
            assert rec is not None  # sport never redeals
            seg.event(DealPlayed(rec, index))
            seg.event(Progressed(f"deal {k + 1}/{per_game}" if spec.games is None else
                                 f"game {g + 1}/{spec.games}, deal {k + 1}/{per_game}", 1))
        outcome = game.outcome()
        assert outcome is not None
        table.end_game(outcome, seating, Where(g, o))
        seg.event(GamePlayed(outcome, game.played))

    async def _whole_game(self, seg: Segment, table: Table, seating: list[Player], start: int, log: MatchLog) -> None:
        """A game to a target in one orientation, one chunk, from stream deal ``start``."""
        spec = self.spec
        g, o = seg.game, seg.orientation
        game = spec.new_game()
        log.write(R.Game(g, o, list(self.seatings[o])))
        position = start

        def next_deal() -> tuple[int, Deal]:
            nonlocal position
            index = position
            position += 1
            return index, self.stream[index]

        def dealt(rec: DealRecord) -> None:
            seg.event(DealPlayed(rec, position - 1))
            seg.event(Progressed(f"game {g + 1}/{self.games}, deal {rec.number + 1}", 0))

        outcome = await table.play_game(game, seating, next_deal, Where(g, o), dealt, spec.opening)
        seg.event(GamePlayed(outcome, game.played))
        seg.event(Progressed(f"game {g + 1}/{self.games}", 1))
        seg.position = position
        if not self.keyed:
            self._game_ended(g, position)


# -- a segment played elsewhere (on a cluster's worker) ----------------------------------------------


@dataclass
class SegmentPlayed:
    """One segment played by itself, as it travels back to the match: its chunks with their log
    lines and events, the stream position after its game (games to a target), the bots' stderr
    files by name, and the worker that played it."""

    chunks: list[tuple[Chunk, bytes]]
    position: int
    stderr: dict[str, bytes] = field(default_factory=dict)
    worker: str = ""


class Cluster(Protocol):
    """Where a match's segments are played when not here (:mod:`referee.matches.cluster`)."""

    async def play(self, spec: MatchSpec, game: int, orientation: int, start: int) -> SegmentPlayed:
        """Game ``game`` in ``orientation``, from stream position ``start`` (games to a target),
        played to its end elsewhere.

        Raises:
            BotStartError, BadDeal, LogError: as the segment raised them where it was played.
            ClusterUnavailable: the cluster could not play it.
        """
        ...

    def stop(self) -> None:
        """The match is over: segments still playing may end."""


class Alone(Lanes):
    """One segment played by itself from a given stream position (what a cluster's worker
    plays): no ledger to wait for, no other segment to share lanes with."""

    def __init__(self, spec: MatchSpec, seatings: list[tuple[int, ...]], stream: Deals, house: House, start: int) -> None:
        super().__init__(spec, seatings, stream, None, house, lanes=1, lockstep=False)
        self._start = start
        self._greeted.append(trio.Event())

    async def _start_of(self, g: int) -> int:
        return self._start

    async def _chunk(self, seg: Segment, k: int, lane: Lane) -> None:
        if k:
            seg.begin()

    async def play(self, game: int, orientation: int) -> SegmentPlayed:
        """Play the segment to its end; its chunks, as they travel back to the match."""
        seg = Segment(game, orientation, _nowhere, None)
        try:
            await self._play_segment(seg, 0, Lane(trio.Semaphore(1)))
            return SegmentPlayed(list(seg.played()), seg.position)
        finally:
            seg.close()
