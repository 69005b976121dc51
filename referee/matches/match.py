"""The match runner: fixed deals, every orientation, and the result with its uncertainty.

It owns the deal stream and the orientations (RULES.md §4): every deal is played once per
orientation, so every bot holds every seat's cards and luck cancels.  The match is played in
*segments*: one game in one orientation, from its start to its end, by processes of its own
(:class:`Roster`): a process plays one game in one seating and never sees a deal twice, so a bot
that remembers learns nothing of the hand it holds in the other seating.  Segments are played
``lanes`` at a time (``referee match -j N``); with one lane the next segment's processes are
started while the current one plays; on a cluster (``referee match --cluster``) the segments are
played by Dask workers (:func:`play_segment`, :mod:`referee.matches.cluster`) and everything else
stays here.  Deals come from the seed through the keyed derivation of
:mod:`referee.engine.core.shuffle` (``deals_from`` in the log's header), and with no seed given from a
fresh secret one (:mod:`referee.base.seeds`).

* Games of a fixed number of deals (sport): game ``g`` takes stream deals ``g * deals …`` in
  every orientation.  The paired unit is the deal: deal ``k`` in every orientation is a board.
* Games to a target (kozel, draw, block, club): game ``g`` in every orientation from the same
  point of the deal stream: ``g * 2**32`` (``blake2b-games``), or, from a deal file and under the
  older derivations, the point after the longest orientation of game ``g - 1`` (the games are then
  played one after another, their orientations at once).  The paired unit is the game.

Whatever the lanes, the log and the result are the same: a segment's records are held until
the log takes them board by board, in board order, each board's orientations in order
(:mod:`referee.matches.segments`).

A bot's *net* for a unit is what its sides wrote, times the game's sense (+1 for points, -1 for
penalties), averaged over the orientations.  Its *margin* is its net less the mean net of the
other bots; with two bots, A's margin is net A − net B.  Pairing makes the interval narrow: the
result shows it beside the interval an unpaired reading of the same deals would give.

A *board* (the issue's "pair") is one paired unit with all its orientations: a deal in both
orientations, a game pair, or with *n* bots at *n* seats the unit in all *n* rotations.  The
figures of :mod:`referee.stats` (ranking, LOS, pair classes, Elo, SPRT) are computed from the
finished boards.  With ``--sprt`` the test is applied to the boards in board order and the match
stops at the first board after which it decides; boards begun past it are ended and left out
(the ``stop`` record counts them).  The log then holds an ``sprt`` record after every board and
a ``stop`` record, and a sport game stopped early has no ``game_end``.

Faults are counted per segment: a bot with ``max_faults`` faults in one game in one seating
forfeits that segment's deals left, and its time bank is the segment's own, so the result does
not depend on which segments were played at once.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.cluster import ClusterUnavailable
from referee.base.errors import BotStartError, LogError
from referee.base.signals import cancel_on_signals
from referee.conversation.house import PROCESSES, BotSource, House, wants
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine.core.deal import Deal, DealShape, deal_from_seed
from referee.engine.core.errors import BadDeal, BadOption
from referee.engine.core.game import DealRecord, Game, Variant
from referee.engine.core.shuffle import BLAKE2B_GAMES, GAME_STRIDE, game_keyed
from referee.matches.results import MatchResult
from referee.matches.roster import Roster
from referee.matches.segments import Chunk, Segment
from referee.matches.spec import MatchSpec
from referee.matches.watch import Watch
from referee.records import records as R
from referee.stats.sprt import sprt_state


def orientations(variant: Variant, players: int, options: dict[str, Any], bots: int) -> list[tuple[int, ...]]:
    """The seatings of a duplicate match: ``result[o][seat]`` is the bot index in that seat.

    Raises:
        BadOption: the number of bots does not fit the game.
    """
    pairs = variant.game.uses_pairs(players, options)
    if pairs:
        if bots != 2:
            raise BadOption(f"{variant.id} in pairs takes 2 bots (each plays both seats of a pair), not {bots}")
        return [(0, 1, 0, 1), (1, 0, 1, 0)]
    if bots == players:
        return [tuple((seat - r) % players for seat in range(players)) for r in range(players)]
    if bots == 2 and players % 2 == 0:
        return [tuple(seat % 2 for seat in range(players)), tuple((seat + 1) % 2 for seat in range(players))]
    raise BadOption(f"{variant.id} with {players} players takes {players} bots" + (" or 2 (alternating seats)" if players % 2 == 0 else "") + f", not {bots}")


def match_length(v: Variant, deals: int | None, games: int | None,
                 names: tuple[str, str] = ("--deals", "--games")) -> tuple[int | None, int | None]:
    """The deals per game (fixed-deal games) and whole games per orientation a match plays,
    defaults filled in; ``names`` are how the caller spells the two.  Games to a target give no
    deal count; a fixed-deal game plays one game unless games are asked for (``None``: one),
    each of the deals its rules or ``deals`` set (mexican_train: always seven rounds, so more
    games are its only way to a longer match).

    Raises:
        BadOption: deals for a game to a target, or a count below 1 (or one the game refuses).
    """
    deals_name, games_name = names
    if games is not None and games < 1:
        raise BadOption(f"{games_name}: must be at least 1")
    if v.to_target:
        if deals is not None:
            raise BadOption(f"{deals_name}: {v.id} is scored to a target; give {games_name} (whole games per orientation), not deals")
        return None, 1 if games is None else games
    deals = v.game.default_deals if deals is None else deals
    assert deals is not None  # a game of a fixed number of deals has a default count
    if deals < 1:
        raise BadOption(f"{deals_name}: must be at least 1")
    return deals, games


def deals_needed(deals: int, games: int | None) -> str:
    """What a fixed-deal match needs of a deal file, in words."""
    if games is None:
        return f"the match plays {deals} (--deals {deals})"
    return f"the match plays {deals * games} ({games} games of {deals} deals)"


class DealStream:
    """Deals by index: from the seed (by its derivation), or from a deal file."""

    def __init__(self, shape: DealShape, seed: int, deals: list[Deal] | None, name: str | None, derivation: str = BLAKE2B_GAMES) -> None:
        self.shape = shape
        self.seed = seed
        self.deals = deals
        self.name = name
        self.derivation = derivation

    def __getitem__(self, index: int) -> Deal:
        if self.deals is None:
            return deal_from_seed(self.seed, index, self.shape, self.derivation)
        if index >= len(self.deals):
            raise BadDeal(f"the deal file {self.name or ''} holds {len(self.deals)} deals; the match needs more (deal {index + 1})")
        return self.deals[index]


def header(spec: MatchSpec, seatings: list[tuple[int, ...]]) -> R.Header:
    """The log's first record: everything needed to deal the match's deals and play it again."""
    tc = spec.tc
    from_file = spec.deal_file is not None
    return R.Header(
        variant=spec.variant.id, players=spec.players, options=spec.options, deals=spec.deals, games=spec.games,
        seed=None if from_file else spec.seed, deals_file=spec.deal_file_name,
        bots=[R.HeaderBot(b.name, list(b.argv), None if b.tc is None else tc_record(b.tc)) for b in spec.bots],
        orientations=[list(s) for s in seatings], time_control=tc_record(tc),
        max_faults=spec.max_faults, max_line=spec.max_line, confidence=float(spec.confidence), sprt=spec.sprt, deal_limit=spec.deal_limit,
        opening=opening_records(spec.opening) or None, format=R.FORMAT, deals_from=spec.deals_from,
        deals_file_sha256=spec.deal_file_sha256 if from_file else None, event=spec.event)


def tc_record(tc: TimeControl) -> R.TimeControlRecord:
    return R.TimeControlRecord(float(tc.startup), float(tc.move), None if tc.bank is None else float(tc.bank), float(tc.increment),
                               float(tc.margin) if tc.margin else None)


async def run_match(spec: MatchSpec, bots: BotSource = PROCESSES, watch: Watch | None = None, *, lanes: int = 1,
                    lockstep: bool = False, cluster: Cluster | None = None, block: float | None = None,
                    handle_signals: bool = True) -> MatchResult:
    """Play the match and return its result.

    The match is played in segments (one game in one orientation, each by processes of its own),
    ``lanes`` at a time; with one lane the next segment's processes are started and greeted while
    the current one plays.  The log and the result are the same whatever ``lanes``: records go to
    the log board by board (:mod:`referee.matches.segments`).  With ``lockstep`` every segment
    waits to play until the log takes its records, so the match is played in the log's own order
    (``verify`` plays a log again so, and ``referee play``, whose person plays every seating of a
    deal in turn); ``lanes`` is then the number of orientations.

    ``bots`` starts the bots and hears their lines: processes unless a test or benchmark scripts
    them, ``verify`` plays a log's lines back, ``referee play`` seats a person
    (:class:`~referee.conversation.house.BotSource`).  ``watch`` sees the match as it is played
    (:class:`~referee.matches.watch.Watch`): the progress after every deal and each finished
    board (the SPRT's state already in ``result.sprt``), both in board order; each segment's
    roster; the log's records, the turns asked, the faults and the processes' ends as they happen
    (segment by segment, not in board order); and, if it takes them, the log's lines instead of
    ``spec.log_path`` (``verify``).  Ctrl-C, SIGTERM and SIGHUP stop the match
    (:mod:`referee.base.signals`) unless ``handle_signals`` is false (a caller with a policy of its
    own, such as a league's match process).  ``block`` is the tables' (0 when other matches share
    this trio loop, and with more than one lane).  ``cluster`` plays the segments elsewhere (on
    Dask workers, :mod:`referee.matches.cluster`), ``lanes`` of them at a time; the log and the
    result are still made here, board by board, and are the same.

    Raises:
        ValueError: ``lanes`` below 1; a cluster with a watch that looks inside the tables, or
            with lockstep.
        ClusterUnavailable: the cluster lost the workers playing a segment too many times (the
            match was stopped there, as for a bot that could not start).
        BotStartError: a bot could not be started (the match was stopped there: the finished
            boards are in the log, with no result).
        BadDeal: the deal file ran out.
        LogError: the log could not be created or written (the match was stopped, its bots
            ended).
        Terminated: Ctrl-C, SIGTERM or SIGHUP; the bots were ended and the log closed first.
            Its ``result`` is the match's result so far (``interrupted``: its figures are the
            finished boards'), for the caller to report and close.
    """
    if lanes < 1:
        raise ValueError(f"lanes: at least 1, not {lanes}")
    if cluster is not None and (lockstep or any(wants(watch, w, Watch) for w in _AT_THE_TABLE)):
        raise ValueError("a match on a cluster has no lockstep and no watch at its tables: its segments are played elsewhere")
    v = spec.variant
    seatings = orientations(v, spec.players, spec.options, len(spec.bots))
    entries = [Entry(bot, i, spec.tc) for i, bot in enumerate(spec.bots)]
    result = MatchResult(spec, seatings, entries)

    shape = v.shape(spec.players, spec.options)
    stream = DealStream(shape, spec.seed, spec.deal_file, spec.deal_file_name, spec.deals_from)
    if not v.to_target and spec.deal_file is not None and len(spec.deal_file) < (spec.deals or 0) * (spec.games or 1):
        raise BadDeal(f"the deal file holds {len(spec.deal_file)} deals; {deals_needed(spec.deals or 0, spec.games)}")
    origin = trio.current_time()
    log = _open_log(spec, seatings, watch)
    if lockstep:
        lanes = len(seatings)
    if block is None:
        block = 0.0 if lanes > 1 else 0.001  # more than one lane: segments share this trio loop
    house = house_for(spec, block=block, origin=origin, bots=bots, watch=watch)
    play = _Lanes(spec, seatings, stream, result, log, house, lanes=lanes, lockstep=lockstep, cluster=cluster)
    failure: Exception | None = None
    # Ctrl-C, SIGTERM and SIGHUP cancel the match; the cleanup below runs to its end (Terminated
    # after, carrying the result so far).
    async with cancel_on_signals(raise_after=True, enabled=handle_signals, carry=result) as stop:
        try:
            failure = await play.run()
            if failure is not None:
                # Returned, not raised from the nursery, so callers see the error itself rather
                # than an exception group.
                if isinstance(failure, LogError):
                    failure = LogError(f"{failure}; the match was stopped and its bots ended")
                result.interrupted = True
        except BaseException:
            result.interrupted = True
            with suppress(LogError):  # a log that has failed says so by itself
                log.write(R.Interrupted())
            if stop.signal is None:  # after a signal the result goes to the caller with Terminated
                result.close()
            raise
        finally:
            with trio.CancelScope(shield=True):
                if cluster is not None:
                    cluster.stop()  # segments still playing on workers end there too
                play.close()
                try:
                    if not result.interrupted:
                        s = result.summary()
                        log.write(R.Result(**{f: getattr(s, f) for f in s.__struct_fields__}))
                    log.close()
                except LogError as exc:
                    failure = failure or exc
    if failure is not None:
        result.close()
        raise failure
    return result


def _new_game(spec: MatchSpec) -> Game:
    """A game of the match, as every segment starts one."""
    game = spec.variant.new_game(spec.players, spec.options, spec.deals)
    game.keep_records = False  # memory flat in the number of deals (bench.memory)
    if spec.deal_limit is not None:
        game.deal_limit = spec.deal_limit
    return game


def _board_done(spec: MatchSpec, result: MatchResult, log: MatchLog, on_board: Callable[[MatchResult], None] | None,
                unfinished: Callable[[], int]) -> bool:
    """After every finished board: run the SPRT, if any; True when it has decided (the ``stop``
    record then counts the boards begun past this one, which are left out: ``unfinished()``)."""
    state = None
    if spec.sprt is not None:
        state = result.sprt = sprt_state(spec.sprt, result.tally)
        log.write(R.Sprt(state.pairs, state.llr, state.lower, state.upper, state.decision))
    if on_board is not None:
        on_board(result)
    if state is None or state.decision is None:
        return False
    result.stopped_by = "sprt"
    log.write(R.Stop("sprt", state.decision, state.pairs, state.llr, unfinished()))
    return True


def _open_log(spec: MatchSpec, seatings: list[tuple[int, ...]], watch: Watch | None) -> MatchLog:
    """The match's log, its header written, and the bots' stderr folder made (emptied of a
    rerun's files).  A watch that takes the log's lines gets them instead of ``spec.log_path``.

    Raises:
        LogError: the log or the folder could not be written.
    """
    on_record = watch.record if wants(watch, "record") else None
    if wants(watch, "logged", Watch):
        log = MatchLog(None, on_record=on_record, sink=watch.logged)
    else:
        log = MatchLog(spec.log_path, on_record=on_record)
    log.write(header(spec, seatings))
    try:
        spec.stderr_dir.mkdir(parents=True, exist_ok=True)
        for stale in spec.stderr_dir.glob("*.stderr.log"):  # a rerun of the same log name starts afresh
            stale.unlink()
    except OSError as exc:
        log.close()
        raise LogError(f"cannot write the bots' stderr files in {spec.stderr_dir}: {exc.strerror or exc}") from None
    return log


#: The watch's methods that look inside a segment's tables (a cluster's segments have none here).
_AT_THE_TABLE = ("seated", "greeted", "record", "deal_begins", "deal_ends", "asked", "fault", "closed")

#: Boards a segment may play ahead of the board the log takes (lockstep: none).  A segment that
#: far ahead waits, its lane given to another; so the log, the running score and the SPRT never
#: lag more than this behind the play, and a segment holds at most this many boards' records.
AHEAD = 16


class _Lane:
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


class _Lanes:
    """The segments of one match, played ``lanes`` at a time, and the log and the result fed
    board by board in board order (the *ledger*: :meth:`_ledger`).

    Segments start in order (game by game, each game's orientations in order).  With one lane
    one more segment than the lanes is started ahead: its processes are started and greeted while
    the segments before it play (:meth:`Watch.greeted` is told), so process starts cost no
    time of the match's.  Games to a target from a deal file, or by a derivation that deals them
    one after another, wait for the game before them to be played in every orientation before
    they play (their first deal is the stream position after the longest of them).
    """

    def __init__(self, spec: MatchSpec, seatings: list[tuple[int, ...]], stream: DealStream, result: MatchResult,
                 log: MatchLog, house: House, *, lanes: int, lockstep: bool, cluster: Cluster | None = None,
                 progress: Callable[[str, int], None] | None = None) -> None:
        self.spec, self.seatings, self.stream, self.result, self.log = spec, seatings, stream, result, log
        watch = house.watch if isinstance(house.watch, Watch) else None
        self.progress = watch.progress if wants(watch, "progress", Watch) else progress
        on_board = watch.board if wants(watch, "board", Watch) else None
        self.board_done = partial(_board_done, spec, result, log, on_board, self._unfinished)
        #: what every segment's table is given besides its nursery, players and log
        self.house = house
        #: the watch, where it looks at segments or at what their tables log
        self.watch = watch if any(wants(watch, w, Watch) for w in _AT_THE_TABLE) else None
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
        self._board: tuple[int, int] = (-1, -1)  # the last board the log took
        self._taking = 0  # the board the log takes now, counted in board order
        self._moved = trio.Event()  # set (and replaced) when the log moves on to the next board
        self._greeted: list[trio.Event] = []  # by start order: the segment's processes are greeted

    def segment(self, g: int, o: int) -> Segment:
        seg = self.segments.get((g, o))
        if seg is None:
            seg = self.segments[(g, o)] = Segment(g, o, self.log.raw, self.folder)
        return seg

    def close(self) -> None:
        for seg in self.segments.values():
            seg.close()

    def _fail(self, exc: Exception) -> None:
        if self.failure is None:
            self.failure = exc
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    def _unfinished(self) -> int:
        """Boards begun (a segment's processes started for them) past the last one the log took."""
        per = 0 if self.spec.variant.to_target else 1
        begun = {(seg.game, k * per) for seg in self.segments.values() for k in range(seg.begun)}
        return sum(1 for b in begun if b > self._board)

    async def run(self) -> Exception | None:
        """Play the match; the first failure that stopped it (BotStartError, BadDeal, LogError)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._ledger)
            nursery.start_soon(self._schedule)
        return self.failure

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
                    nursery.start_soon(self._run_segment, self.segment(g, o), i, started, _Lane(playing))
                    i += 1

    async def _run_segment(self, seg: Segment, i: int, started: trio.Semaphore, lane: _Lane) -> None:
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

    def _board_of(self, seg: Segment, k: int) -> int:
        """The board, counted from 0 in board order, that chunk ``k`` of ``seg`` belongs to."""
        return seg.game if self.spec.variant.to_target else seg.game * (self.spec.deals or 0) + k

    async def _chunk(self, seg: Segment, k: int, lane: _Lane) -> None:
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
        board = self._board_of(seg, k)
        while board >= self._taking + AHEAD:
            lane.release()
            await self._moved.wait()
        await lane.acquire()

    async def _play_segment(self, seg: Segment, i: int, lane: _Lane) -> None:
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

    async def _segment_elsewhere(self, seg: Segment, lane: _Lane) -> None:
        """Play ``seg`` on the cluster and hold its chunks for the log, as if played here.  It
        waits, as a local segment's first chunk does, until it is fewer than :data:`AHEAD` boards
        ahead of the log and a lane is free; the stop record counts its first board as begun
        while it plays (how far a worker has got is not known here)."""
        assert self.cluster is not None
        spec, g, o = self.spec, seg.game, seg.orientation
        start = await self._start_of(g)
        while self._board_of(seg, 0) >= self._taking + AHEAD:
            await self._moved.wait()
        await lane.acquire()
        seg.begun = 1
        played = await self.cluster.play(spec, g, o, start)
        game = _new_game(spec)  # the game's sides, for the result's records (they never change)
        for chunk, _ in played.chunks:
            chunk.events = [self._event(call, game, g, o) for call in chunk.events]
        try:
            for name, data in played.stderr.items():
                (spec.stderr_dir / name).write_bytes(data)
        except OSError as exc:
            raise LogError(f"cannot write the bots' stderr files in {spec.stderr_dir}: {exc.strerror or exc}") from None
        if spec.variant.to_target and not self.keyed:
            self._game_ended(g, played.position)
        seg.restore(played.chunks)

    def _event(self, call: Any, game: Game, g: int, o: int) -> Callable[[], None]:
        """A chunk's event played elsewhere (:class:`_Recorder`'s data) as the call it stands for."""
        kind, *args = call
        if kind == "deal":
            rec, index = args
            return partial(self.result.add_deal, rec, game, o, g, index)
        if kind == "game":
            outcome, played = args
            return partial(self.result.add_game, outcome, game, o, g, played)
        assert kind == "progress"
        return partial(self.progress, *args) if self.progress is not None else _nothing

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

    async def _fixed_deals(self, seg: Segment, table: Table, seating: list[Player], log: MatchLog, lane: _Lane) -> None:
        """A game of a fixed number of deals in one orientation, a chunk per deal; game ``g``
        takes stream deals ``g * per_game …``."""
        spec, result, progress = self.spec, self.result, self.progress
        g, o = seg.game, seg.orientation
        per_game = spec.deals or 0
        game = _new_game(spec)
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
            seg.event(partial(result.add_deal, rec, game, o, g, index))
            if progress:
                seg.event(partial(progress, f"deal {k + 1}/{per_game}" if spec.games is None else
                                  f"game {g + 1}/{spec.games}, deal {k + 1}/{per_game}", 1))
        outcome = game.outcome()
        assert outcome is not None
        table.end_game(outcome, seating, Where(g, o))
        seg.event(partial(result.add_game, outcome, game, o, g, game.played))

    async def _whole_game(self, seg: Segment, table: Table, seating: list[Player], start: int, log: MatchLog) -> None:
        """A game to a target in one orientation, one chunk, from stream deal ``start``."""
        spec, result, progress = self.spec, self.result, self.progress
        g, o = seg.game, seg.orientation
        game = _new_game(spec)
        log.write(R.Game(g, o, list(self.seatings[o])))
        position = start

        def next_deal() -> tuple[int, Deal]:
            nonlocal position
            index = position
            position += 1
            return index, self.stream[index]

        def dealt(rec: DealRecord) -> None:
            seg.event(partial(result.add_deal, rec, game, o, g, position - 1))
            if progress:
                seg.event(partial(progress, f"game {g + 1}/{self.games}, deal {rec.number + 1}", 0))

        outcome = await table.play_game(game, seating, next_deal, Where(g, o), dealt, spec.opening)
        seg.event(partial(result.add_game, outcome, game, o, g, game.played))
        if progress:
            seg.event(partial(progress, f"game {g + 1}/{self.games}", 1))
        seg.position = position
        if not self.keyed:
            self._game_ended(g, position)

    async def _ledger(self) -> None:
        """Take the segments' chunks in board order into the log and the result; run the SPRT
        after every board; end the match when the last board is taken or the test decides."""
        try:
            per_game = 1 if self.spec.variant.to_target else (self.spec.deals or 0)
            for g in range(self.games):
                for k in range(per_game):
                    self._taking = g * per_game + k  # as _board_of counts (per_game is 1 to a target)
                    self._moved.set()
                    self._moved = trio.Event()
                    chunk = None
                    for o in range(len(self.seatings)):
                        seg = self.segment(g, o)
                        try:
                            chunk = await seg.take(k)
                        except trio.Cancelled:
                            # Stopped while the chunk was written live: if it finished, its
                            # deal is whole in the log, and the result counts it too.
                            if (late := seg.finished(k)) is not None:
                                self._commit(late)
                            raise
                        if chunk is None:  # the game ended before (a deal limit, in every orientation)
                            break
                        self._commit(chunk)
                    if chunk is None:
                        break
                    self._board = (g, k)
                    self.log.flush()
                    if self.board_done():
                        return
        except LogError as exc:
            self._fail(exc)
        finally:
            assert self._nursery is not None
            self._nursery.cancel_scope.cancel()  # segments still playing are not needed

    def _commit(self, chunk: Chunk) -> None:
        """A chunk the log has taken: the result's records, and the bots' faults, forfeits,
        hellos and remarks into the match's entries."""
        for fn in chunk.events:
            fn()
        entries = self.result.entries
        for i, faults in chunk.faults:
            entries[i].faults.extend(faults)
        for i in chunk.forfeited:
            entries[i].forfeited = True
        for i, hello in chunk.hellos:
            if entries[i].hello is None:
                entries[i].hello = hello
        for i, remarks in chunk.remarks:
            entries[i].remarks.update(remarks)


# -- a segment played elsewhere (on a cluster's worker) ----------------------------------------------


@dataclass
class SegmentPlayed:
    """One segment played by itself, as it travels back to the match: its chunks with their log
    lines (each chunk's ``events`` as :class:`_Recorder`'s data), the stream position after its
    game (games to a target), the bots' stderr files by name, and the worker that played it."""

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


class _Recorder:
    """Stands for the match's result and progress where a segment is played by itself: what
    the events of each chunk would call, kept as data to travel back to the match."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def add_deal(self, rec: DealRecord, game: Game, o: int, g: int, index: int) -> None:
        self.calls.append(("deal", rec, index))

    def add_game(self, outcome: Any, game: Game, o: int, g: int, played: int) -> None:
        self.calls.append(("game", outcome, played))

    def progress(self, description: str, advance: int) -> None:
        self.calls.append(("progress", description, advance))


class _Alone(_Lanes):
    """One segment played by itself from a given stream position: no log to wait for, no other
    segment to share lanes with."""

    def __init__(self, spec: MatchSpec, seatings: list[tuple[int, ...]], stream: DealStream, recorder: _Recorder,
                 house: House, start: int) -> None:
        super().__init__(spec, seatings, stream, recorder, None, house, lanes=1, lockstep=False,  # type: ignore[arg-type]
                         progress=recorder.progress)
        self._start = start
        self._greeted.append(trio.Event())

    async def _start_of(self, g: int) -> int:
        return self._start

    async def _chunk(self, seg: Segment, k: int, lane: _Lane) -> None:
        if k:
            seg.begin()


def _nowhere(data: bytes) -> None:
    raise AssertionError("a segment played by itself writes to no log")


def _nothing() -> None:
    pass


async def play_segment(spec: MatchSpec, game: int, orientation: int, start: int, stderr_dir: Path, *,
                       bots: BotSource = PROCESSES) -> SegmentPlayed:
    """Play game ``game`` in ``orientation`` by itself, from stream position ``start`` (games to a
    target; fixed deals know theirs), the bots' stderr in ``stderr_dir``: what a cluster's worker
    does for a match (:mod:`referee.matches.cluster`).  The segment is played exactly as in a
    match here: its own processes, its own faults and clock.

    Raises:
        BotStartError, BadDeal, LogError: as :func:`run_match`.
    """
    seatings = orientations(spec.variant, spec.players, spec.options, len(spec.bots))
    stream = DealStream(spec.variant.shape(spec.players, spec.options), spec.seed, spec.deal_file, spec.deal_file_name, spec.deals_from)
    house = house_for(spec, stderr_dir=stderr_dir, origin=trio.current_time(), bots=bots)
    recorder = _Recorder()
    alone = _Alone(spec, seatings, stream, recorder, house, start)
    seg = Segment(game, orientation, _nowhere, None)
    try:
        await alone._play_segment(seg, 0, _Lane(trio.Semaphore(1)))
        chunks = []
        for chunk, data in seg.played():
            recorder.calls = []
            for fn in chunk.events:
                fn()
            chunk.events = recorder.calls  # type: ignore[assignment]
            chunks.append((chunk, data))
        return SegmentPlayed(chunks, seg.position)
    finally:
        seg.close()


def house_for(spec: MatchSpec, *, stderr_dir: Path | None = None, block: float = 0.001, origin: float | None = None,
              bots: BotSource = PROCESSES, watch: Watch | None = None) -> House:
    """What every table of ``spec``'s match is given (its stderr in ``stderr_dir``, by default the
    spec's): the limits, the files no bot may see, the isolation, and the bot source and watch."""
    return House(spec.tc, spec.stderr_dir if stderr_dir is None else stderr_dir, spec.max_line, spec.max_faults, _hidden(spec),
                 spec.isolation == "strict", block, origin, bots, watch)


def _hidden(spec: MatchSpec) -> tuple[Path, ...]:
    paths = [*spec.hidden]
    if spec.log_path is not None:
        paths.append(spec.log_path)
    if spec.deal_file_name is not None:
        paths.append(Path(spec.deal_file_name))
    return tuple(paths)


def opening_records(opening: Sequence[tuple[int, m.Play]]) -> list[R.OpeningMove]:
    """A staged opening as the log's header holds it: each move's seat and its play's fields."""
    out = []
    for seat, move in opening:
        fields = msgspec.to_builtins(move)
        fields.pop("type", None)
        fields.pop("turn", None)
        out.append(msgspec.convert({"seat": seat, **fields}, R.OpeningMove))
    return out


def opening_moves(items: Sequence[R.OpeningMove]) -> list[tuple[int, m.Play]]:
    """The header's staged opening back as moves.

    Raises:
        ValueError: a move that is not a play (naming it).
    """
    moves = []
    for i, item in enumerate(items):
        fields = msgspec.to_builtins(item)
        seat = fields.pop("seat")
        try:
            move = m.decode_from_bot(msgspec.json.encode({"type": "play", "tile": None, **fields}))  # the header omits a null tile
        except msgspec.DecodeError as exc:
            raise ValueError(f"opening move {i} is not a play: {exc}") from None
        if not isinstance(move, m.Play):
            raise ValueError(f"opening move {i} is not a play")
        moves.append((seat, move))
    return moves
