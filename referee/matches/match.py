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
(:mod:`referee.matches.segments`).  The match is three modules: this one (:func:`run_match`, the
deal stream, the log's header and the log), :mod:`referee.matches.lanes` (which segment plays
when: scheduling only) and :mod:`referee.matches.ledger` (the only writer of the result: it
takes the boards in order, commits them and runs the SPRT).

A bot's *net* for a unit is what its sides wrote, times the game's sense (+1 for points, -1 for
penalties), averaged over the orientations.  Its *margin* is its net less the mean net of the
other bots; with two bots, A's margin is net A − net B.  Pairing makes the interval narrow: the
result shows it beside the interval an unpaired reading of the same deals would give.

A *board* (the issue's "pair") is one paired unit with all its orientations: a deal in both
orientations, a game pair, or with *n* bots at *n* seats the unit in all *n* rotations.  The
figures of :mod:`referee.stats` (ranking, LOS, pair classes, Elo, SPRT) are computed from the
finished boards (by the ledger).  With ``--sprt`` the test is applied to the boards in board order and the match
stops at the first board after which it decides; boards begun past it are ended and left out
(the ``stop`` record counts them).  The log then holds an ``sprt`` record after every board and
a ``stop`` record, and a sport game stopped early has no ``game_end``.

Faults are counted per segment: a bot with ``max_faults`` faults in one game in one seating
forfeits that segment's deals left, and its time bank is the segment's own, so the result does
not depend on which segments were played at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import msgspec
import trio

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.errors import LogError
from referee.base.signals import cancel_on_signals
from referee.conversation.house import PROCESSES, BotSource, House, wants
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry
from referee.engine.core.deal import Deal, DealShape, deal_from_seed
from referee.engine.core.errors import BadDeal, BadOption
from referee.engine.core.game import Variant
from referee.engine.core.shuffle import BLAKE2B_GAMES
from referee.matches.lanes import AT_THE_TABLE, Alone, Cluster, Lanes, SegmentPlayed
from referee.matches.ledger import Ledger
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec
from referee.matches.watch import Watch
from referee.records import records as R


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
    if cluster is not None and (lockstep or any(wants(watch, w, Watch) for w in AT_THE_TABLE)):
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
    ledger = Ledger(spec, seatings, result, log, on_board=watch.board if wants(watch, "board", Watch) else None,
                    progress=watch.progress if wants(watch, "progress", Watch) else None)
    play = Lanes(spec, seatings, stream, ledger, house, lanes=lanes, lockstep=lockstep, cluster=cluster, put=log.raw)
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
    return await Alone(spec, seatings, stream, house, start).play(game, orientation)


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
