"""``referee ladder run``: the host that plays the ladder's tables until it is stopped.

**One chooser, lanes behind it.**  The host numbers its tables 0, 1, 2, … and chooses them one
by one, in order: table ``n``'s bots come from the matchmaking
(:class:`tournaments.ladder.matchmaking.Matchmaker`), given the entries that play at ``n``, the
ratings fitted to the outcomes of the tables before ``n - LAG`` only
(:data:`tournaments.ladder.config.LAG`; the chooser waits while one of those is in play) and the
tables chosen so far per entry, the tables each has waited since it was last seated (or joined),
and the seatings of the last ``LAG`` tables chosen (whose outcomes it may not see yet).  Its deal set is the number of tables those bots sat at
together before (table *k* of a pairing plays deal set *k* of the ladder's seed sequence,
:func:`deal_seed`), so a bot that joins late plays the very deals the others played.  A table
chosen is stored at once (``ladder_tables``, with its ``in_play`` row) and handed to one of
``-j`` lanes, each a match process of the league's (:class:`tournaments.runner.Child`), which
plays it as a league plays a table and stores it in one transaction (:meth:`Store.record`).
So what is chosen never depends on ``-j``, on timing or on a kill: a fixed field of
deterministic bots gives the same database however often the host is stopped and started.

**The field changes while it runs.**  Before every choice the host reads the entries: those
``ladder add`` entered are active from that table on, those ``ladder retire`` asked for are
retired from it (:func:`tournaments.ladder.store.take_in`).  A bot that forfeited (reached
``max_faults`` faults, or could not be started) at each of its last ``suspend_after`` tables
among those the choice may see is suspended from the table being chosen: it plays no more until
a new version is added.

**Kill and restart.**  SIGKILL at any moment loses only the tables in play: their results were
not stored, their half-written logs are removed by the next run, which plays the same tables
again (they are chosen already) before it chooses new ones.  Ctrl-C or SIGTERM abandons the
tables in play the same way, cleanly (every match process and bot stopped and reaped).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

from referee.base.signals import Stop, cancel_on_signals
from referee.matches.check import CheckOptions, CheckReport, render, run_check
from referee.matches.job import MatchJob
from tournaments.config import BotEntry, LeagueError
from tournaments.ladder import store as LS
from tournaments.ladder.config import LAG, Ladder, with_bots
from tournaments.ladder.matchmaking import Matchmaker
from tournaments.ladder.rating import Outcome, Ratings
from tournaments.ladder.status import blamed, outcome_of, settled_tables
from tournaments.ladder.store import Chosen, Entry
from tournaments.runner import WORKER_ARGV, Child, _claim_logs, _exclusive, _open, _remove, lane_cpus, make_job, place_outputs, stall_limit
from tournaments.store import Finished, Store, StoreError, this_run
from tournaments.wire import TableRecord

#: Seconds between two looks at the database for entries while the field is too small to play.
POLL = 1.0


def deal_seed(seed: int, deal_set: int) -> int:
    """The seed of deal set ``deal_set`` of a ladder whose secret seed is ``seed``: the same for
    every table that plays it, whoever sits there (256 bits, as secret as the seed)."""
    digest = hashlib.sha256(f"referee-ladder-deal-set:{seed}:{deal_set}".encode()).digest()
    return int.from_bytes(digest, "big")


def table_stem(number: int) -> str:
    """The file name of a table's log and stderr folder: ``table-000042``."""
    return f"table-{number:06d}"


#: How a lane plays one job: ``(job, stall) -> (record, error, kind)``, the job's log and its bots'
#: stderr written at ``job.log`` and ``job.stderr_dir`` (:meth:`tournaments.runner.Child.play`'s contract).
RunJob = Callable[[MatchJob, float], Awaitable[tuple[TableRecord | None, str | None, str | None]]]


class HostDisplay(Protocol):
    """What the host tells the person watching it."""

    def started(self, table: Chosen) -> None: ...
    def finished(self, table: Chosen, record: TableRecord | None, error: str | None) -> None: ...
    def note(self, line: str) -> None: ...


class QuietHost:
    def started(self, table: Chosen) -> None:
        pass

    def finished(self, table: Chosen, record: TableRecord | None, error: str | None) -> None:
        pass

    def note(self, line: str) -> None:
        pass


@dataclass
class HostReport:
    played: int = 0  # tables this run stored with a result
    failed: list[tuple[int, str]] = field(default_factory=list)
    interrupted: bool = False
    stopped: str | None = None  # the disk or the database could not take more
    ended: str = ""  # why the run ended: "max-deals", "certified", "interrupted", "stopped"
    seconds: float = 0.0
    tables: int = 0  # tables stored in the ladder (with a result) at the end
    deals: int = 0  # deals they played
    refused: list[tuple[str, list[str]]] = field(default_factory=list)  # file bots the check refused, with its report


def check_options(ladder: Ladder, bot: BotEntry, log_dir: Path) -> CheckOptions:
    """How a joining bot is checked: ``referee check`` in the ladder's game, under its clock and
    limits, run as it will run in the ladder (in the sandbox unless the ladder turns it off)."""
    lg = ladder.league
    return CheckOptions(tc=lg.tc, only=lg.variant.id, max_faults=lg.max_faults, max_line=lg.max_line, log_dir=log_dir,
                        sandbox=bot.sandbox, cwd=bot.workdir, memory_mb=lg.memory_mb, env=dict(bot.env) or None,
                        isolation=lg.isolation)


def check_dir(ladder: Ladder, name: str) -> Path:
    return ladder.league.logs_dir / "checks" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


async def validate(ladder: Ladder, bot: BotEntry) -> CheckReport:
    """Play the joining bot's validation: the check of ``referee check`` (against the sample
    bots, every seating, the ladder's game), judged as it judges (:func:`referee.matches.check.run_check`)."""
    return await run_check(" ".join(bot.argv), list(bot.argv), bot.name, check_options(ladder, bot, check_dir(ladder, bot.name)))


def verdict(report: CheckReport) -> str:
    """The check a bot passed, in a line (kept with its entry; its logs, under the ladder's
    ``checks/`` folder, hold its seed)."""
    games = len(report.games)
    return f"PASS: {games} game{'s' if games != 1 else ''} of referee check in {report.options.only}"


class Host:
    """One run of a ladder: its store, what it has chosen and what is settled, its ratings."""

    def __init__(self, ladder: Ladder, store: Store, display: HostDisplay, *, max_deals: int | None, until_certified: bool) -> None:
        self.ladder = ladder
        self.league = ladder.league
        self.store = store
        self.display = display
        self.max_deals = max_deals
        self.until_certified = until_certified
        self.report = HostReport()
        self.run_id = this_run()["id"]
        assert self.league.seed is not None
        self.seed = self.league.seed
        self.matchmaker = Matchmaker(self.league.per_table, floor=ladder.floor, seed=self.seed)
        self.for_choice = Ratings(ladder.resolution)  # the outcomes of the tables before n - LAG
        self.for_all = Ratings(ladder.resolution)  # every outcome stored
        self.in_choice: set[str] = set()
        self.in_all: set[str] = set()
        self.fed = 0  # tables 0 .. fed-1 are in for_choice
        self.beyond: dict[int, Outcome] = {}  # the outcomes stored of the tables from fed on (in for_all, not for_choice)
        self.in_sight: set[str] = set()  # bots of the tables that came into the choice's sight since the last one
        self.entries: list[Entry] = []
        self.chosen: dict[int, Chosen] = LS.chosen(store)
        self.settled: dict[int, Outcome | None] = {}
        self.forfeits: dict[int, set[str]] = {}  # per settled table, the bots that forfeited at it
        self.deals: dict[int, int] = {}  # deals each settled table played
        self.together: Counter[tuple[str, ...]] = Counter(c.key.bots for c in self.chosen.values())
        self.played: Counter[str] = Counter(b for c in self.chosen.values() for b in c.bots)
        self.last_seated: dict[str, int] = {b: n for n in sorted(self.chosen) for b in self.chosen[n].bots}
        self.changed = trio.Event()
        self.deals_settled = 0  # deals of the settled tables (a failed one: 0)
        self.deals_played = 0  # ... of those with a result
        self.tables_played = 0
        self.first_deals: int | None = None  # deals the first table with a result played
        self.history: dict[str, list[int]] = {}  # per bot, the settled tables it sat at, in order
        self._load_settled()
        self.refresh()

    # -- what is stored -------------------------------------------------------------------------

    def _load_settled(self) -> None:
        for t in settled_tables(self.store, self.chosen, self.league.max_faults):
            self._settle(t.table, t.outcome, set(t.forfeits), t.deals)

    def _settle(self, table: Chosen, outcome: Outcome | None, forfeits: set[str], deals: int) -> None:
        self.settled[table.number] = outcome
        self.forfeits[table.number] = forfeits
        self.deals[table.number] = deals
        self.deals_settled += deals
        for b in table.bots:
            bisect.insort(self.history.setdefault(b, []), table.number)
        if outcome is not None:
            self.deals_played += deals
            self.tables_played += 1
            if self.first_deals is None:
                self.first_deals = deals
        if outcome is not None:
            for b in outcome.bots:
                self._enter(self.for_all, self.in_all, b)
            self.for_all.add(outcome)
            if table.number >= self.fed:
                self.beyond[table.number] = outcome
        old, self.changed = self.changed, trio.Event()
        old.set()

    @staticmethod
    def _enter(ratings: Ratings, entered: set[str], name: str) -> None:
        if name not in entered:
            ratings.add_bot(name)
            entered.add(name)

    def refresh(self) -> None:
        """Read the entries again (the league's bots become theirs)."""
        self.entries = LS.entries(self.store)
        self.league = with_bots(self.ladder, [e.bot for e in self.entries]).league
        for e in self.entries:
            if e.active_from is not None:
                self._enter(self.for_all, self.in_all, e.name)

    # -- choosing ---------------------------------------------------------------------------------

    def per_table_deals(self) -> int | None:
        """Deals a table plays, when the game has a fixed number (``None``: played to a target)."""
        lg = self.league
        if lg.variant.to_target:
            return None
        if self.first_deals is not None:
            return self.first_deals
        return (lg.deals or 0) * (lg.games or 1) * lg.orientations

    def deals_chosen(self) -> int:
        """Deals of the tables chosen: those played, and those still to play (a fixed-length
        game's count; a game to a target: the mean so far, 1 before any)."""
        fixed = self.per_table_deals()
        guess = fixed if fixed is not None else (round(self.deals_played / self.tables_played) if self.tables_played else 1)
        return self.deals_settled + (len(self.chosen) - len(self.settled)) * guess

    def stored_deals(self) -> int:
        return self.deals_played

    def enough(self) -> str | None:
        """Why no further table is chosen (``None``: go on)."""
        if self.max_deals is not None and self.deals_chosen() >= self.max_deals:
            return "max-deals"
        # every outcome's marks, read off the choice's fit and the outcomes it does not count yet: one
        # refit a table serves both (for_all keeps the exact sums, solved when certification is declared)
        if self.until_certified and len(self.in_all) >= 2 and self.for_choice.certified(list(self.beyond.values()), self.for_all):
            return "certified"
        return None

    def _suspensions(self, number: int, bots: set[str]) -> list[tuple[str, str]]:
        """Those of ``bots`` (the bots of the tables that came into the choice's sight) that
        forfeited at each of their last ``suspend_after`` tables among those before
        ``number - LAG`` (a pure function of the stored outcomes)."""
        k = self.ladder.suspend_after
        horizon = number - LAG
        out = []
        for name in sorted(bots):
            seen = self.history.get(name, [])
            last = seen[max(0, bisect.bisect_left(seen, horizon) - k):bisect.bisect_left(seen, horizon)]
            if len(last) == k and all(name in self.forfeits[n] for n in last):
                out.append((name, f"forfeited (or could not start) at tables {', '.join(map(str, last))}, {k} in a row"))
        return out

    async def _wait(self, seconds: float | None = None) -> None:
        event = self.changed
        if seconds is None:
            await event.wait()
        else:
            with trio.move_on_after(seconds):
                await event.wait()

    async def next_table(self, number: int) -> Chosen | None:
        """Choose table ``number`` (waiting for what the choice may see); ``None``: no more."""
        said_small = False
        while True:
            if (why := self.enough()) is not None:
                self.report.ended = why
                return None
            horizon = number - LAG
            while any(m not in self.settled for m in range(self.fed, horizon) if m in self.chosen):
                await self._wait()
                if (why := self.enough()) is not None:
                    self.report.ended = why
                    return None
            for m in range(self.fed, max(self.fed, horizon)):
                if m in self.chosen:
                    self.in_sight.update(self.chosen[m].bots)
                outcome = self.settled.get(m)
                self.beyond.pop(m, None)
                if outcome is not None:
                    for b in outcome.bots:
                        self._enter(self.for_choice, self.in_choice, b)
                    self.for_choice.add(outcome)
            self.fed = max(self.fed, horizon)
            changed = LS.take_in(self.store, number)
            if changed or not self.entries:
                self.refresh()
                for name in changed:
                    e = next(x for x in self.entries if x.name == name)
                    self.display.note(f"table {number}: {name} {'joins' if e.state == 'active' else 'leaves (retired)'}")
            active = [e.name for e in self.entries if e.plays_at(number)]
            sight, self.in_sight = self.in_sight & set(active), set()
            for name, why in self._suspensions(number, sight):
                LS.suspend(self.store, name, number, why)
                self.display.note(f"table {number}: {name} is suspended: {why}")
                self.refresh()
                active.remove(name)
            for name in active:
                self._enter(self.for_choice, self.in_choice, name)
            if len(active) >= self.league.per_table:
                break
            if not said_small:
                self.display.note(f"waiting for bots: {len(active)} active, a table seats {self.league.per_table} "
                                  f"(referee ladder add {self.ladder.path.name} NAME -- COMMAND)")
                said_small = True
            await self._wait(POLL)
        playing = set(active)
        waited = {e.name: number - max(self.last_seated.get(e.name, -1) + 1, e.active_from or 0)
                  for e in self.entries if e.name in playing}
        # the tables chosen whose outcomes the choice may not see yet (the last LAG)
        unseen = [self.chosen[m].bots for m in range(max(0, number - LAG), number) if m in self.chosen]
        bots = self.matchmaker.choose(number, active, self.for_choice, self.played, waited, unseen)
        seated = tuple(sorted(bots))
        table = Chosen(number, seated, self.together[seated])
        LS.choose(self.store, table, self.run_id)
        self.chosen[number] = table
        self.together[seated] += 1
        self.played.update(seated)
        for b in seated:
            self.last_seated[b] = number
        return table

    # -- playing ----------------------------------------------------------------------------------

    def paths(self, table: Chosen) -> tuple[Path, Path]:
        logs = self.league.logs_dir
        return logs / f"{table_stem(table.number)}{self.league.log_suffix}", logs / f"{table_stem(table.number)}.stderr"

    async def play(self, table: Chosen, run: RunJob, stall: float) -> None:
        """Play one table with ``run`` (a lane's: here, or on the cluster) and store it; its
        half-written files are removed if it is cut short."""
        league = self.league
        final_log, final_err = self.paths(table)
        token = f"{os.getpid()}-{secrets.token_hex(3)}"
        part_log = final_log.with_name(f".{final_log.name}.{token}.part{league.log_suffix}")
        part_err = final_log.with_name(f".{final_err.name}.{token}.part.stderr")
        parts = [part_log, part_err]
        try:
            job = make_job(league, table.key, part_log, part_err)
            job = msgspec.structs.replace(job, seed=deal_seed(self.seed, table.deal_set))
            started = time.time()
            self.display.started(table)
            record, error, kind = await run(job, stall)
            finished = time.time()
            if kind == "log":
                raise OSError(error or "the log could not be written")
            placed = place_outputs(part_log, final_log, part_err, final_err)
            parts.clear()
            if record is not None and not placed:
                record, error = None, f"its log disappeared while the match was played (was {league.logs_dir} removed?)"
            log_rel = os.path.relpath(final_log, league.db_path.parent) if placed else None
            self.store.record(Finished(table.key, started, finished, log_rel, record, error))
        finally:
            for path in parts:
                _remove(path)
        if record is not None:
            self.report.played += 1
            faults = Counter(f.bot for f in record.result.faults)
            deals = len(record.result.deals)
            self._settle(table, outcome_of(table, record.margins, deals), {b for b in table.bots if faults[b] >= league.max_faults},
                         deals)
        else:
            self.report.failed.append((table.number, error or "unknown failure"))
            self._settle(table, None, set(blamed(table, error)), 0)
        self.display.finished(table, record, error)


async def run_ladder(ladder: Ladder, concurrency: int = 1, *, max_deals: int | None = None, until_certified: bool = False,
                     display: HostDisplay | None = None, handle_signals: bool = False, worker_argv: Sequence[str] = WORKER_ARGV,
                     stall: float | None = None, affinity: bool = True, client: Any = None) -> HostReport:
    """Host ``ladder`` until it is stopped, certified (``until_certified``) or has chosen tables
    of ``max_deals`` deals: each of ``concurrency`` lanes plays its tables in a match process
    here, or, given a Dask ``client`` (:func:`tournaments.cluster.connect`), as a task on the
    cluster (:func:`tournaments.cluster.play_match`: the same match process on a worker, its log
    and stderr sent back and written here); the host alone chooses and stores, as here.

    Raises:
      LeagueError: another run holds the ladder, its settings differ from the stored results, a
        bot of the file differs from its entry, the database or the log folder cannot be used.
    """
    if not 1 <= concurrency <= LAG:
        raise LeagueError(f"{ladder.path}: -j must be from 1 to {LAG} (the tables a choice may not wait for)")
    display = display or QuietHost()
    t0 = time.monotonic()
    with _exclusive(ladder.league), _open(ladder.league) as store:
        host = await _begin(ladder, store, display, max_deals=max_deals, until_certified=until_certified)
        try:
            await _serve(host, concurrency, handle_signals, worker_argv, stall, affinity, client)
        except (StoreError, OSError) as exc:
            host.report.stopped = str(exc) if isinstance(exc, StoreError) else f"cannot write in {ladder.league.logs_dir}: {exc}"
            host.report.ended = "stopped"
        finally:
            try:
                store.not_playing([p.key for p in store.in_play()])
            except StoreError:
                pass
        host.report.tables = sum(1 for o in host.settled.values() if o is not None)
        host.report.deals = host.stored_deals()
    host.report.seconds = time.monotonic() - t0
    return host.report


async def _begin(ladder: Ladder, store: Store, display: HostDisplay, *, max_deals: int | None, until_certified: bool) -> Host:
    """What a run does before its first table: adopt the settings (or refuse them), take the
    secret seed, claim the log folder, forget what a killed run left, and enter the file's bots
    not entered yet, each once it passed its check."""
    LS.ensure_schema(store)
    league = store.secret_seed(ladder.league, create=True)
    ladder = replace(ladder, league=league)
    entered = {e.name: e for e in LS.entries(store)}
    for bot in league.bots:
        e = entered.get(bot.name)
        if e is not None and e.bot.identity() != bot.identity():
            raise LeagueError(f"{ladder.path}: bot {bot.name!r}: its command, cwd or env differ from its entry's; a new version is "
                              f"a new entry: name it {bot.name.split('@')[0]}@2 (or the next free number)")
    # the entries (ladder_entries) are the ladder's bots and the check above holds the file to them; the
    # league's bots table stays empty, or a run restarted before any table ended would fill it
    # where an uninterrupted one does not
    store.check(with_bots(ladder, []).league, adopt=True)
    store.begin_runs(this_run())
    _claim_logs(league)
    for leftover in league.logs_dir.glob(".*.part*"):
        _remove(leftover)
    for bot in league.bots:
        if bot.name in entered:
            continue
        display.note(f"checking {bot.name} (referee check, {league.variant.id}) before it joins")
        report = await validate(ladder, bot)
        if not report.passed:
            display.note(f"{bot.name} is refused: it failed the check (below); it does not join")
            ladder_report = render(report)
            for line in ladder_report:
                display.note(f"  {line}")
            continue
        LS.enter(store, bot, "file", verdict(report))
    return Host(ladder, store, display, max_deals=max_deals, until_certified=until_certified)


async def _serve(host: Host, concurrency: int, handle_signals: bool, worker_argv: Sequence[str], stall: float | None,
                 affinity: bool, client: Any) -> None:
    league = host.league
    limit = stall_limit(league) if stall is None else stall
    cpus = lane_cpus(concurrency) if affinity and client is None else None
    send, receive = trio.open_memory_channel[Chosen](0)

    def interrupted(_stop: Stop) -> None:
        host.report.interrupted = True
        host.report.ended = "interrupted"

    async def chooser() -> None:
        async with send:
            # tables chosen by an earlier run and not stored: played first, as chosen
            for n in sorted(n for n in host.chosen if n not in host.settled):
                await send.send(host.chosen[n])
            number = max(host.chosen, default=-1) + 1
            while True:
                table = await host.next_table(number)
                if table is None:
                    return
                await send.send(table)
                number += 1

    async def lane(index: int, receive: trio.MemoryReceiveChannel[Chosen]) -> None:
        argv = list(worker_argv) if cpus is None else [*worker_argv, "--cpus", ",".join(map(str, cpus[index]))]
        async with receive:
            table = await _next(receive)
            if client is not None:
                while table is not None:
                    await host.play(table, partial(on_cluster, client), limit)
                    table = await _next(receive)
                return
            while table is not None:
                async with trio.open_nursery() as nursery:
                    child = await Child.start(nursery, argv)
                    while table is not None and not child.dead:
                        await host.play(table, partial(on_child, child), limit)
                        table = await _next(receive)
                    if not child.dead:
                        await child.close()

    async with cancel_on_signals(interrupted, enabled=handle_signals):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(chooser)
            for i in range(concurrency):
                nursery.start_soon(lane, i, receive.clone())
            await receive.aclose()


async def on_child(child: Child, job: MatchJob, stall: float) -> tuple[TableRecord | None, str | None, str | None]:
    """Play ``job`` in a lane's match process here."""
    return await child.play(job, lambda done, total: None, stall)


async def on_cluster(client: Any, job: MatchJob, stall: float) -> tuple[TableRecord | None, str | None, str | None]:
    """Play ``job`` as a task on the cluster and write its log and stderr where the job says (the
    host renames them into place); a task cancelled (Ctrl-C) is cancelled on the cluster too."""
    from tournaments.cluster import play_match, task_failure

    future = client.submit(play_match, job, stall, pure=False)
    try:
        out = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
    except trio.Cancelled:
        future.cancel()
        raise
    except Exception as exc:  # noqa: BLE001 — KilledWorker, a task that raised: the table failed
        out = task_failure(exc)
    if out.get("log") is not None:
        Path(job.log).write_bytes(out["log"])
    if out.get("stderr"):
        folder = Path(job.stderr_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in out["stderr"].items():
            (folder / Path(name).name).write_bytes(data)
    return out["record"], out["error"], out.get("kind")


async def _next(receive: trio.MemoryReceiveChannel[Chosen]) -> Chosen | None:
    try:
        return await receive.receive()
    except trio.EndOfChannel:
        return None
