"""The match runner: fixed deals, every orientation, and the result with its uncertainty.

It owns the deal stream and the orientations (RULES.md §4): every deal is played once per
orientation, so every bot holds every seat's cards and luck cancels.  Every orientation is
played by processes of its own (:class:`Roster`): a process never sees a deal twice, so a bot
that remembers learns nothing of the hand it holds in the other seating.  Deals come from the
seed through the keyed derivation of :mod:`referee.engine.shuffle` (``deals_from`` in the log's
header), and with no seed given from a fresh secret one (:mod:`referee.seeds`).

* Games of a fixed number of deals (sport) are one game per orientation, played deal by deal:
  deal ``k`` in every orientation, then deal ``k+1``.  The paired unit is the deal.
* Games to a target (kozel, draw, block, club) are played as whole games: game ``g`` in every
  orientation from the same point of the deal stream; the next game starts after the longest of
  them.  The paired unit is the game.

A bot's *net* for a unit is what its sides wrote, times the game's sense (+1 for points, -1 for
penalties), averaged over the orientations.  Its *margin* is its net less the mean net of the
other bots; with two bots, A's margin is net A − net B.  Pairing makes the interval narrow: the
result shows it beside the interval an unpaired reading of the same deals would give.

A *board* (the issue's "pair") is one paired unit with all its orientations: a deal in both
orientations, a game pair, or with *n* bots at *n* seats the unit in all *n* rotations.  The
figures of :mod:`referee.matches.stats` (ranking, LOS, pair classes, Elo, SPRT) are computed from the
finished boards.  With ``--sprt`` the match stops as soon as the test decides, after a board;
the log then holds an ``sprt`` record after every board and a ``stop`` record, and a sport game
stopped early has no ``game_end``.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import trio

from protocol import messages as m
from referee.bots.transport import BotTransport, Launch, launch_process
from referee.conversation.clock import TimeControl
from referee.conversation.faults import Fault
from referee.conversation.lines import Line, hear
from referee.conversation.players import Entry, Player
from referee.conversation.table import Table, Where
from referee.engine.deal import Deal, DealShape, deal_from_seed
from referee.engine.errors import BadDeal, BadOption
from referee.engine.game import DealRecord, Game, GameOutcome, Variant
from referee.engine.shuffle import BLAKE2B
from referee.errors import BotStartError, LogError
from referee.logs import records as R
from referee.logs.log import MatchLog
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec
from referee.matches.stats import sprt_state
from referee.signals import cancel_on_signals


class Observer:
    """What a caller sees of a match while it is played (``referee check``).  Each method is
    called as the thing happens and does nothing here: override the ones you need."""

    def seated(self, roster: Roster) -> None:
        """The match's process slots, before anything is played or logged."""

    def record(self, record: R.Record) -> None:
        """A log record, as the log is given it (before it is written)."""

    def out(self, seat: int, lines: list[bytes]) -> None:
        """The lines of one write to ``seat``."""

    def fault(self, fault: Fault) -> None:
        """A fault, before the bot's process is ended."""

    def closed(self, player: Player, proc: BotTransport, unread: list[bytes]) -> None:
        """A process ended when the match closed, with the lines it wrote that nobody read."""


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


class Roster:
    """The process slots of a duplicate match: in every orientation, a bot has as many as the
    seats it takes, and no slot serves two orientations (a process never sees a deal twice)."""

    def __init__(self, entries: list[Entry], seatings: list[tuple[int, ...]]) -> None:
        self.players: dict[tuple[int, int, int], Player] = {}  # (orientation, bot, slot)
        self._seated: list[list[Player]] = []
        for o, seating in enumerate(seatings):
            used: Counter[int] = Counter()
            seated = []
            for b in seating:
                p = self.players.setdefault((o, b, used[b]), Player(entries[b], used[b], o))
                seated.append(p)
                used[b] += 1
            self._seated.append(seated)

    def seat(self, orientation: int) -> list[Player]:
        """The player in each seat in an orientation."""
        return self._seated[orientation]


class DealStream:
    """Deals by index: from the seed (by its derivation), or from a deal file."""

    def __init__(self, shape: DealShape, seed: int, deals: list[Deal] | None, name: str | None, derivation: str = BLAKE2B) -> None:
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
        deals_file_sha256=spec.deal_file_sha256 if from_file else None)


def tc_record(tc: TimeControl) -> R.TimeControlRecord:
    return R.TimeControlRecord(float(tc.startup), float(tc.move), None if tc.bank is None else float(tc.bank), float(tc.increment))


async def run_match(spec: MatchSpec, progress: Callable[[str, int], None] | None = None,
                    on_board: Callable[[MatchResult], None] | None = None, *,
                    launch: Launch = launch_process, table_type: type[Table] = Table, handle_signals: bool = True,
                    observer: Observer | None = None, block: float | None = None,
                    sink: Callable[[bytes], None] | None = None, hear_line: Callable[[bytes], Line] = hear) -> MatchResult:
    """Play the match and return its result.

    ``progress(description, advance)`` is called after every deal, ``on_board(result)`` after
    every finished board (the SPRT's state already in ``result.sprt``).  ``launch`` starts the bots (processes
    unless a test or benchmark scripts them, see :mod:`referee.bots.transport`); ``table_type`` is
    the table that plays (a benchmark times its ``open`` and ``close``).  Ctrl-C, SIGTERM and
    SIGHUP stop the match (:mod:`referee.signals`) unless ``handle_signals`` is false (a caller
    with a policy of its own, such as a league's match process).  ``observer`` sees the log's
    records, the writes to bots, the faults and the processes' ends as they happen; ``block``
    is the table's (0 when other matches share this trio loop).  ``sink`` takes the log's lines
    instead of ``spec.log_path``, and ``hear_line`` judges the bots' lines (``verify`` plays a
    log again with both, :mod:`referee.logs.verify`).

    Raises:
        BotStartError: a bot could not be started (nothing was played).
        BadDeal: the deal file ran out.
        LogError: the log could not be created or written (the match was stopped, its bots
            ended).
        Terminated: Ctrl-C, SIGTERM or SIGHUP; the bots were ended and the log closed first.
            Its ``result`` is the match's result so far (``interrupted``: its figures are the
            finished boards'), for the caller to report and close.
    """
    v = spec.variant
    seatings = orientations(v, spec.players, spec.options, len(spec.bots))
    entries = [Entry(bot, i, spec.tc) for i, bot in enumerate(spec.bots)]
    result = MatchResult(spec, seatings, entries)
    roster = Roster(entries, seatings)
    seated = roster.seat
    if observer is not None:
        observer.seated(roster)

    shape = v.shape(spec.players, spec.options)
    stream = DealStream(shape, spec.seed, spec.deal_file, spec.deal_file_name, spec.deals_from)
    if not v.to_target and spec.deal_file is not None and len(spec.deal_file) < (spec.deals or 0) * (spec.games or 1):
        raise BadDeal(f"the deal file holds {len(spec.deal_file)} deals; {deals_needed(spec.deals or 0, spec.games)}")
    origin = trio.current_time()
    log = _open_log(spec, seatings, observer, sink)

    new_game = partial(_new_game, spec)
    board_done = partial(_board_done, spec, result, log, on_board)
    failure: Exception | None = None
    # Ctrl-C, SIGTERM and SIGHUP cancel the match; the cleanup below runs to its end (Terminated
    # after, carrying the result so far).
    async with cancel_on_signals(raise_after=True, enabled=handle_signals, carry=result) as stop, trio.open_nursery() as nursery:
        table = table_type(nursery, list(roster.players.values()), tc=spec.tc, log=log, stderr_dir=spec.stderr_dir,
                           max_line=spec.max_line, max_faults=spec.max_faults, hidden=_hidden(spec), launch=launch,
                           on_fault=None if observer is None else observer.fault,
                           on_closed=None if observer is None else observer.closed, origin=origin, hear_line=hear_line,
                           strict=spec.isolation == "strict", **({} if block is None else {"block": block}))
        try:
            await table.open()
            if not v.to_target:
                await _play_fixed_deals(spec, table, log, seatings, seated, new_game, stream, result, progress, board_done)
            else:
                await _play_whole_games(spec, table, log, seatings, seated, new_game, stream, result, progress, board_done)
        except (BotStartError, BadDeal, LogError) as exc:
            # Raised outside the nursery below, so callers see the error itself rather than an
            # exception group.
            failure = LogError(f"{exc}; the match was stopped and its bots ended") if isinstance(exc, LogError) else exc
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
                await table.close()
                try:
                    if not result.interrupted:
                        s = result.summary()
                        log.write(R.Result(**{f: getattr(s, f) for f in s.__struct_fields__}))
                    log.close()
                except LogError as exc:
                    failure = failure or exc
            nursery.cancel_scope.cancel()
    if failure is not None:
        result.close()
        raise failure
    return result


def _new_game(spec: MatchSpec) -> Game:
    """A game of the match, as every orientation starts one."""
    game = spec.variant.new_game(spec.players, spec.options, spec.deals)
    game.keep_records = False  # memory flat in the number of deals (bench.memory)
    if spec.deal_limit is not None:
        game.deal_limit = spec.deal_limit
    return game


def _board_done(spec: MatchSpec, result: MatchResult, log: MatchLog, on_board: Callable[[MatchResult], None] | None) -> bool:
    """After every finished board: run the SPRT, if any; True when it has decided."""
    state = None
    if spec.sprt is not None:
        state = result.sprt = sprt_state(spec.sprt, result.tally)
        log.write(R.Sprt(state.pairs, state.llr, state.lower, state.upper, state.decision))
    if on_board is not None:
        on_board(result)
    if state is None or state.decision is None:
        return False
    result.stopped_by = "sprt"
    log.write(R.Stop("sprt", state.decision, state.pairs, state.llr))
    return True


def _open_log(spec: MatchSpec, seatings: list[tuple[int, ...]], observer: Observer | None, sink: Callable[[bytes], None] | None) -> MatchLog:
    """The match's log, its header written, and the bots' stderr folder made (emptied of a
    rerun's files).

    Raises:
        LogError: the log or the folder could not be written.
    """
    if observer is None:
        log = MatchLog(spec.log_path if sink is None else None, sink=sink)
    else:
        log = MatchLog(spec.log_path if sink is None else None, on_record=observer.record, on_out=observer.out, sink=sink)
    log.write(header(spec, seatings))
    try:
        spec.stderr_dir.mkdir(parents=True, exist_ok=True)
        for stale in spec.stderr_dir.glob("*.stderr.log"):  # a rerun of the same log name starts afresh
            stale.unlink()
    except OSError as exc:
        log.close()
        raise LogError(f"cannot write the bots' stderr files in {spec.stderr_dir}: {exc.strerror or exc}") from None
    return log


async def _play_fixed_deals(spec: MatchSpec, table: Table, log: MatchLog, seatings: list[tuple[int, ...]],
                            seated: Callable[[int], list[Player]], new_game: Callable[[], Game], stream: DealStream,
                            result: MatchResult, progress: Callable[[str, int], None] | None, board_done: Callable[[], bool]) -> None:
    """Games of a fixed number of deals: deal ``k`` in every orientation, then deal ``k+1``; the
    board is the deal."""
    per_game = spec.deals or 0
    # Game g takes stream deals g * per_game … in every orientation, deal by deal.
    for g in range(spec.games or 1):
        games = [new_game() for _ in seatings]
        staged = [deque(spec.opening) for _ in seatings]
        for o, seating in enumerate(seatings):
            log.write(R.Game(g, o, list(seating)))
        for k in range(per_game):
            if games[0].outcome() is not None:  # a deal limit (every orientation has played as many)
                break
            index = g * per_game + k
            for o in range(len(seatings)):
                rec = await table.play_deal(games[o], seated(o), index, stream[index], Where(g, o), staged=staged[o])
                assert rec is not None  # sport never redeals
                result.add_deal(rec, games[o], o, g, index)
                if progress:
                    progress(f"deal {k + 1}/{per_game}" if spec.games is None else
                             f"game {g + 1}/{spec.games}, deal {k + 1}/{per_game}", 1)
            if board_done():
                break
        # A sport game the SPRT stopped early has no outcome: its deals are the result.
        if result.stopped_by is not None:
            break
        for o, game in enumerate(games):
            outcome = game.outcome()
            assert outcome is not None
            table.end_game(outcome, seated(o), Where(g, o))
            result.add_game(outcome, game, o, g, game.played)


async def _play_whole_games(spec: MatchSpec, table: Table, log: MatchLog, seatings: list[tuple[int, ...]],
                            seated: Callable[[int], list[Player]], new_game: Callable[[], Game], stream: DealStream,
                            result: MatchResult, progress: Callable[[str, int], None] | None, board_done: Callable[[], bool]) -> None:
    """Games to a target: game ``g`` in every orientation from the same point of the deal stream;
    the board is the game."""
    cursor = 0
    for g in range(spec.games or 1):

        def dealt(rec: DealRecord, game: Game, o: int, index: int, g: int = g) -> None:
            result.add_deal(rec, game, o, g, index)
            if progress:
                progress(f"game {g + 1}/{spec.games or 1}, deal {rec.number + 1}", 0)

        def ended(outcome: GameOutcome, game: Game, o: int, g: int = g) -> None:
            result.add_game(outcome, game, o, g, game.played)
            if progress:
                progress(f"game {g + 1}/{spec.games or 1}", 1)

        cursor = await play_board(table, log, seatings, seated, new_game, stream.__getitem__, g, cursor,
                                  on_deal=dealt, on_game=ended, opening=spec.opening)
        if board_done():
            break


async def play_board(table: Table, log: MatchLog, seatings: list[tuple[int, ...]],
                     seated: Callable[[int], list[Player]], new_game: Callable[[], Game],
                     deal_at: Callable[[int], Deal], g: int, cursor: int, *,
                     on_deal: Callable[[DealRecord, Game, int, int], None] | None = None,
                     on_game: Callable[[GameOutcome, Game, int], None] | None = None,
                     opening: Sequence[tuple[int, m.Play]] = ()) -> int:
    """Play game ``g`` once in every orientation, each from deal ``cursor`` of the stream (so
    every orientation gets the same deals); the stream position after the longest of them.

    ``on_deal(record, game, orientation, stream index)`` after every deal,
    ``on_game(outcome, game, orientation)`` after every game; every game begins with the staged
    ``opening`` (:meth:`Table.play_game`).
    """
    furthest = cursor
    for o, seating in enumerate(seatings):
        game = new_game()
        log.write(R.Game(g, o, list(seating)))
        position = cursor

        def next_deal() -> tuple[int, Deal]:
            nonlocal position
            index = position
            position += 1
            return index, deal_at(index)

        def after(rec: DealRecord, game: Game = game, o: int = o) -> None:
            if on_deal is not None:
                on_deal(rec, game, o, position - 1)  # noqa: B023  (the live cursor of next_deal)

        outcome = await table.play_game(game, seated(o), next_deal, Where(g, o), after, opening)
        if on_game is not None:
            on_game(outcome, game, o)
        furthest = max(furthest, position)
    return furthest


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
