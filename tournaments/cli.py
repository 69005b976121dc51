"""``referee league run | table | status``: the league commands (added to the ``referee`` app).

Results and tables go to stdout; the live display and every error go to stderr.  A bad league
file is one line on stderr and exit code 2 (:mod:`referee.base.exitcodes`) before any match starts.
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import trio
import typer
from rich.progress import Progress, TaskID

from referee.base import exitcodes as X
from referee.base.seeds import guessable, short_seed_warning
from referee.commands.shared import err, fail, out, progress_bar, say

if TYPE_CHECKING:
    from tournaments.config import League
    from tournaments.schedule import TableKey
    from tournaments.wire import TableRecord

EPILOG = "Exit codes: 0 done, 1 a match process failed (a referee bug), 2 bad league file or database, 3 a bot could not be started, 130 interrupted (run again to continue)."

league_app = typer.Typer(
    help="Leagues from a TOML file: tables of 2 or more bots, each a duplicate match, in a round robin, gauntlet, Swiss or "
    "knockout; results in SQLite, standings with ratings. Format: tournaments/README.md.",
    no_args_is_help=True,
    epilog=EPILOG,
)

LeagueArg = Annotated[Path, typer.Argument(help="The league file (TOML).", show_default=False)]
DbOpt = Annotated[Path | None, typer.Option("--db", help="The results database (default: the file's `database`, or <stem>.db beside it); logs go to <db stem>-logs/ beside it.")]


def _load(path: Path, db: Path | None):
    from tournaments.config import LeagueError, load_league

    try:
        return load_league(path, db)
    except LeagueError as exc:
        raise fail(str(exc)) from None


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


class FinishedLines:
    """A line on stderr per finished table, as cutechess-cli's "Finished game N (A vs B): result":
    ``Finished match 3 of 10 (greedy vs first): greedy won, points 120–80``.  It is printed
    on a terminal or not (under nohup or CI a run is followed by it), through the progress
    display's console when there is one, so that the bar stays below it."""

    def __init__(self, league, console: Any) -> None:
        self.console = console
        self.what = "match" if league.per_table == 2 else "table"
        self.total = 0
        self.finished_count = 0

    def begin(self, pairings: int, done: int, pending: int) -> None:
        self.total, self.finished_count = pairings, done

    def started(self, key: TableKey) -> None:
        return None

    def progress(self, key: TableKey, done: int, total: int) -> None:
        return None

    def finished(self, key: TableKey, record: TableRecord | None, error: str | None) -> None:
        if record is not None:
            self.finished_count += 1
            line = f"Finished {self.what} {self.finished_count} of {self.total} ({key.label}): {table_result(record, error)}"
        else:
            line = f"Failed {self.what} ({key.label}): {table_result(record, error)}; the next run plays it again"
        say(self.console, line)  # nothing when the terminal is gone (SIGHUP): the database has the result


class LiveDisplay:
    """A rich progress display on stderr: the league's bar with its ETA and one line per table
    in flight, with the lines of :class:`FinishedLines` (if any) printed above it."""

    def __init__(self, progress: Progress, lines: FinishedLines | None) -> None:
        self.p = progress
        self.lines = lines
        self.overall: TaskID | None = None
        self.tasks: dict[TableKey, TaskID] = {}

    def begin(self, pairings: int, done: int, pending: int) -> None:
        self.overall = self.p.add_task(self.label, total=pairings, completed=done)
        if self.lines is not None:
            self.lines.begin(pairings, done, pending)

    label = "league"

    def workers(self, n: int) -> None:
        """A cluster run: how many workers are connected, on the league's line."""
        self.label = f"league ({n} worker{'s' if n != 1 else ''})"
        if self.overall is not None:
            self.p.update(self.overall, description=self.label)

    def started(self, key: TableKey) -> None:
        self.tasks[key] = self.p.add_task(_escape(f"  {key.label}"), total=None)

    def progress(self, key: TableKey, done: int, total: int) -> None:
        task = self.tasks.get(key)
        if task is not None:
            self.p.update(task, completed=done, total=total)

    def finished(self, key: TableKey, record: TableRecord | None, error: str | None) -> None:
        task = self.tasks.pop(key, None)
        if task is not None:
            self.p.remove_task(task)
        if self.overall is not None and record is not None:
            self.p.advance(self.overall)
        if self.lines is not None:
            self.lines.finished(key, record, error)


def table_result(record: TableRecord | None, error: str | None) -> str:
    """A finished table's result in a few words (a failed one: its error's first line)."""
    if record is None:
        return _first_line(error)
    r = record.result
    t = r.totals
    faults = len(r.faults)
    more = f", {faults} fault{'s' if faults != 1 else ''}" if faults else ""
    if len(t) == 2:
        who = f"{r.ahead} won" if r.ahead else "drawn"
        return f"{who}, points {t[0].points}–{t[1].points}{more}"
    standings = r.ranking.standings
    points = dict(zip(r.names, (x.points for x in t)))
    places = ", ".join(f"{s.bot} {_ordinal(s.place)}" for s in standings)
    return f"{places}; points {', '.join(str(points[s.bot]) for s in standings)}{more}"  # in the places' order


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 < 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def sandbox_ready(path: Path) -> None:
    """Refuse in one line a host (league or ladder, its file ``path``) whose sandbox cannot be had."""
    from referee.bots.sandbox import SandboxUnavailable, find_bwrap

    try:
        find_bwrap()
    except SandboxUnavailable as exc:
        raise fail(f"{path}: {exc} (or turn it off with sandbox = false)") from None


def sandbox_note(sandboxed: bool) -> None:
    """Say on stderr, as a host begins to play, what its sandboxed bots still share (run as an
    ordinary user: the pipe-buffer allowance, unless the host turned it off)."""
    from referee.bots.sandbox import shared_pipe_allowance

    if sandboxed and (note := shared_pipe_allowance()) is not None:
        say(err, note)


def _refuse_what_is_missing(league: League, league_file: Path, *, local: bool) -> None:
    """Refuse, in one line, a league this machine cannot play as written: a sandbox without
    bwrap, strict isolation without a cgroup freezer (a cluster's workers judge their own)."""
    if any(b.sandbox for b in league.bots):
        sandbox_ready(league_file)
    if league.isolation == "strict" and local:
        from referee.bots.cgroups import freezer_missing

        if (why := freezer_missing()) is not None:
            raise fail(f"{league_file}: {why} (isolation = \"concurrent\" in the league file)")


@league_app.command("run", epilog="Example: referee league run tournaments/example.toml --concurrency 2\n\n" + EPILOG)
def run(
    league_file: LeagueArg,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", help="Matches at once; each lane plays its matches in its own worker process.")] = 1,
    db: DbOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary line: no progress bar and no line per finished table (unless --live).")] = False,
    live: Annotated[bool | None, typer.Option("--live/--no-live", help="A line per finished table on stderr, like cutechess-cli's \"Finished game\" (default: on, unless -q), on a terminal or not.", show_default=False)] = None,
    report_dir: Annotated[Path | None, typer.Option("--report", help="Keep a web report in this folder (see `referee report`), refreshed after each finished match; its league page reloads itself.")] = None,
    cluster: Annotated[str | None, typer.Option("--cluster", help="Play the matches on a Dask cluster: a scheduler address (tcp://host:8786) or local:N for N worker processes here. Needs pip install 'referee\\[cluster]'.", show_default=False)] = None,
    retry: Annotated[bool, typer.Option("--retry", help="Also play the pairings given up after 3 matches cut short in a row (crashed, hung or stopped).")] = False,
    affinity: Annotated[bool, typer.Option("--affinity/--no-affinity", help="With --concurrency 2 or more (up to the CPUs), keep each lane and its bots to CPUs of its own, as fastchess's -use-affinity: a lane's bots cannot take another lane's time.")] = True,
) -> None:
    """Play every pairing not yet finished; interrupted runs continue where they stopped."""
    from tournaments.config import LeagueError
    from tournaments.runner import run_league
    from tournaments.store import MAX_ATTEMPTS

    league = _load(league_file, db)
    if concurrency < 1:
        raise fail("--concurrency must be at least 1")
    address = None
    if cluster is not None:
        from tournaments.cluster import parse_address

        try:
            address = parse_address(cluster)
        except LeagueError as exc:
            raise fail(str(exc)) from None
    _refuse_what_is_missing(league, league_file, local=address is None)
    lines = FinishedLines(league, err) if (live if live is not None else not quiet) else None
    display: Any = lines
    live_display = None
    progress = progress_bar(None, quiet)
    if progress is not None:
        display = live_display = LiveDisplay(progress, lines)
    if report_dir is not None:
        if report_dir.exists() and not report_dir.is_dir():
            raise fail(f"--report {report_dir}: exists and is not a folder")
        display = ReportingDisplay(league, report_dir, display)
        display.refresh()

    display = BeginNotes(league, display)

    def play():
        if address is not None:
            from tournaments.cluster import run_league_on_cluster

            return run_league_on_cluster(league, address, display=display, handle_signals=True, retry=retry,
                                         on_workers=live_display.workers if live_display is not None else _say_workers)
        return trio.run(lambda: run_league(league, concurrency, display=display, handle_signals=True, retry=retry, affinity=affinity))

    try:
        if progress is not None:
            with progress:
                report = play()
        else:
            report = play()
    except LeagueError as exc:
        from tournaments.cluster import BotUnavailable

        raise fail(str(exc), X.BOT_START if isinstance(exc, BotUnavailable) else X.USAGE) from None
    summary = (f"{league.name}: played {report.played} {'match' if league.per_table == 2 else 'table'}"
               f"{('es' if league.per_table == 2 else 's') if report.played != 1 else ''} in {report.seconds:.1f} s"
               + (f", {len(report.failed)} failed" if report.failed else "")
               + f"; {report.pairings - report.left} of {report.pairings} {league.unit}s done")
    if report.stopped is not None:
        raise fail(f"{report.stopped}; the league stopped and keeps every finished match ({summary}); "
                   f"make room and run the same command again to continue")
    if report.interrupted:
        say(err, f"interrupted: {summary}; run the same command again to continue" + _cut_short(report.cut_runs + 1, report.longest))
        raise typer.Exit(X.INTERRUPTED)
    say(out, summary)
    for key, error in report.failed:
        say(err, f"failed: {key.label}: {error.splitlines()[0] if error else ''}")
    for key, error in report.given_up:
        say(err, f"given up: {key.label}: cut short {MAX_ATTEMPTS} times, last: {_first_line(error)} (--retry plays it again)")
    if report.failed or report.given_up:
        only_starts = report.bot_start_failures == len(report.failed) and not report.given_up
        raise typer.Exit(X.BOT_START if only_starts else X.BUG)


def _first_line(text: str | None) -> str:
    lines = (text or "").splitlines()
    return lines[0] if lines else "unknown"


def _cut_short(runs: int, longest: float | None) -> str:
    from tournaments.status import cut_short

    return cut_short(runs, longest)


class PassingOn:
    """A display that passes everything on to another one (or to none)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def begin(self, pairings: int, done: int, pending: int) -> None:
        if self.inner is not None:
            self.inner.begin(pairings, done, pending)

    def started(self, key: TableKey) -> None:
        if self.inner is not None:
            self.inner.started(key)

    def progress(self, key: TableKey, done: int, total: int) -> None:
        if self.inner is not None:
            self.inner.progress(key, done, total)

    def finished(self, key: TableKey, record: TableRecord | None, error: str | None) -> None:
        if self.inner is not None:
            self.inner.finished(key, record, error)


class BeginNotes(PassingOn):
    """Says that the league file's seed is guessable, and what its sandboxed bots still share
    (:func:`sandbox_note`), once the run has checked the league and its database and is about to
    play: a run refused for another reason prints that reason alone."""

    def __init__(self, league, inner: Any) -> None:
        super().__init__(inner)
        self.league = league

    def begin(self, pairings: int, done: int, pending: int) -> None:
        seed = self.league.seed
        if seed is not None and guessable(seed):
            say(err, short_seed_warning(seed, f"leave seed out of {self.league.path.name}: the first run draws a "
                                              "secret one and keeps it in the database"))
        sandbox_note(any(b.sandbox for b in self.league.bots))
        super().begin(pairings, done, pending)


class ReportingDisplay(PassingOn):
    """Passes everything on to another display (or none) and rewrites the web report after
    each finished match, so a served report folder follows the league as it runs."""

    def __init__(self, league, folder: Path, inner: Any) -> None:
        super().__init__(inner)
        self.league = league
        self.folder = folder

    def refresh(self) -> None:
        from tournaments.config import LeagueError

        try:
            _league_report(self.league, self.folder)
        except (OSError, LeagueError, ValueError) as exc:
            # The league goes on: a report that cannot be written costs no match.
            say(err, f"warning: the report in {self.folder} was not refreshed: {exc}")

    def finished(self, key: TableKey, record: TableRecord | None, error: str | None) -> None:
        super().finished(key, record, error)
        self.refresh()


def _league_report(league, folder: Path) -> dict[str, Any]:
    from tournaments.report import report_league
    from tournaments.store import open_store

    store = open_store(league.db_path, create=False)
    try:
        if store is not None:
            league = store.secret_seed(league, create=False)
        return report_league(league, store, folder)
    finally:
        if store is not None:
            store.close()


def write_league_report(path: Path, db: Path | None, folder: Path) -> dict[str, Any]:
    """``referee report LEAGUE.toml``: the league's report, its file and store checked as
    ``league table`` checks them."""
    with _reading(_load(path, db)) as (league, store):
        from tournaments.report import report_league

        return report_league(league, store, folder)
def _report_text(path: Path, db: Path | None, folder: Path) -> str:
    doc = write_league_report(path, db, folder)
    unit = "pairings" if doc.get("bots_per_table", 2) == 2 else "tables"
    return f"{doc['pairings']['done']} of {doc['pairings']['total']} {unit} played"


def register(app: typer.Typer, report_writers: dict[str, Any]) -> None:
    """Add ``referee league`` and ``referee report LEAGUE.toml`` to the referee's command line
    (the ``referee.commands`` entry point in pyproject.toml names this function)."""
    app.add_typer(league_app, name="league")
    report_writers[".toml"] = _report_text


def _say_workers(n: int) -> None:
    say(err, f"cluster: {n} worker{'s' if n != 1 else ''} connected")


class Format(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"
    markdown = "markdown"


@league_app.command("table")
def table(
    league_file: LeagueArg,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="table (for people), csv, json or markdown.")] = Format.table,
    db: DbOpt = None,
    legend: Annotated[bool, typer.Option("--legend/--no-legend", help="Under a table or markdown, what each column means (--no-legend: the footnotes only).")] = True,
) -> None:
    """Print the standings: W/D/L (tables of N: places), match points, points for and against, ratings with 95% intervals, faults."""
    from tournaments import standings as S

    with _reading(_load(league_file, db)) as (league, store):
        s = S.standings(league, store)
    if fmt is Format.csv:
        sys.stdout.write(S.to_csv(s))
        err.print(f"{s.rule}\nrating: {s.method}", highlight=False, soft_wrap=True)
    elif fmt is Format.json:
        sys.stdout.write(S.to_json(s))
    elif fmt is Format.markdown:
        sys.stdout.write(S.to_markdown(s, legend=legend))
    else:  # into a file or a pipe nothing wraps (referee.base.console): no column is cut short
        out.print(S.rich_table(s, legend=legend))


@contextmanager
def _reading(league):
    """The league (with its secret seed, once a run has drawn it) and its store opened for
    reading (``None`` before any run), checked against the file."""
    from tournaments.config import LeagueError
    from tournaments.store import db_error, open_store

    try:
        store = open_store(league.db_path, create=False)
    except LeagueError as exc:
        raise fail(str(exc)) from None
    try:
        if store is not None:
            try:
                league = store.secret_seed(league, create=False)
                store.check(league, adopt=False)
            except LeagueError as exc:
                raise fail(str(exc)) from None
            except sqlite3.Error as exc:
                raise fail(str(db_error(league.db_path, exc, "read"))) from None
        try:
            yield league, store
        except sqlite3.Error as exc:
            raise fail(str(db_error(league.db_path, exc, "read"))) from None
    finally:
        if store is not None:
            store.close()


@league_app.command("status")
def status(
    league_file: LeagueArg,
    db: DbOpt = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="table (lines for people), csv, json or markdown: one row per table.")] = Format.table,
) -> None:
    """Show which tables are done, failed (tried again by the next run), given up and pending, and the rounds drawn."""
    from tournaments import status as T

    with _reading(_load(league_file, db)) as (league, store):
        data = T.status(league, store)
    if fmt is Format.csv:
        sys.stdout.write(T.to_csv(data))
    elif fmt is Format.json:
        sys.stdout.write(T.to_json(data))
    elif fmt is Format.markdown:
        sys.stdout.write(T.to_markdown(data))
    else:
        for line in T.to_lines(data):  # plain text: names and errors may hold "[...]"
            say(out, line)
