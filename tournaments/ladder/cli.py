"""``referee ladder run | add | retire | table | status``: the ladder's commands (added to ``referee``).

Results go to stdout; the host's lines and every error go to stderr.  Bad input (a ladder file
or database that cannot be used, a name taken, a command that does not exist, a second host on
the same database) is one line on stderr and exit code 2, before anything is changed.
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import trio
import typer

from referee.base import exitcodes as X
from referee.commands.shared import err, fail, interrupted, out, say
from tournaments.cli import Format, sandbox_note, sandbox_ready, table_result

if TYPE_CHECKING:
    from tournaments.ladder.store import Chosen
    from tournaments.wire import TableRecord

EPILOG = ("Exit codes: 0 done (stopped by --until or --max-deals), 1 a match process failed (a referee bug), 2 bad ladder file, "
          "database or entry (a name taken, a command that does not exist, a bot that failed its check), 130 interrupted "
          "(run again to continue).")

ladder_app = typer.Typer(
    help="Ladders: a host that keeps playing while bots join and leave, every table a duplicate match chosen where the order is "
    "least settled, ratings with a certified order; results in SQLite. Format: tournaments/README.md, \"Ladders\".",
    no_args_is_help=True,
    epilog=EPILOG,
)

LadderArg = Annotated[Path, typer.Argument(help="The ladder file (TOML).", show_default=False)]
DbOpt = Annotated[Path | None, typer.Option("--db", help="The ladder's database (default: the file's `database`, or <stem>.db beside it); logs go to <db stem>-logs/ beside it.")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="table (for people), csv, json or markdown.")]


def _load(path: Path, db: Path | None):
    from tournaments.config import LeagueError
    from tournaments.ladder.config import load_ladder

    try:
        return load_ladder(path, db)
    except LeagueError as exc:
        raise fail(str(exc)) from None


@contextmanager
def _reading(ladder):
    """The ladder (with its secret seed once a run drew it) and its store opened for reading
    (``None`` before anything was stored); a damaged database is one line and exit 2."""
    from tournaments.config import LeagueError
    from tournaments.store import db_error, open_store

    try:
        store = open_store(ladder.league.db_path, create=False)
    except LeagueError as exc:
        raise fail(str(exc)) from None
    try:
        try:
            yield ladder, store
        except sqlite3.Error as exc:
            raise fail(str(db_error(ladder.league.db_path, exc, "read"))) from None
        except LeagueError as exc:
            raise fail(str(exc)) from None
    finally:
        if store is not None:
            store.close()


@contextmanager
def _writing(ladder):
    """The ladder's store opened for writing (made if need be, with the ladder's tables)."""
    from tournaments.config import LeagueError
    from tournaments.ladder.store import ensure_schema
    from tournaments.store import db_error, open_store

    try:
        store = open_store(ladder.league.db_path, create=True)
        assert store is not None
        ensure_schema(store)
    except LeagueError as exc:
        raise fail(str(exc)) from None
    try:
        try:
            yield store
        except sqlite3.Error as exc:
            raise fail(str(db_error(ladder.league.db_path, exc, "write"))) from None
        except LeagueError as exc:
            raise fail(str(exc)) from None
    finally:
        store.close()


class HostLines:
    """A line on stderr per finished table and per change of the field, as ``league run`` prints
    its ``Finished match`` lines; with ``--report``, the page is rewritten after every table."""

    def __init__(self, ladder, quiet: bool, report_dir: Path | None) -> None:
        self.ladder = ladder
        self.quiet = quiet
        self.report_dir = report_dir
        self.noted = False

    def started(self, table: Chosen) -> None:
        if not self.noted:  # once the host holds the ladder and plays: a refused run says its reason alone
            self.noted = True
            sandbox_note(self.ladder.league.sandbox)

    def finished(self, table: Chosen, record: TableRecord | None, error: str | None) -> None:
        who = " vs ".join(table.bots)
        if not self.quiet:
            head = "Finished" if record is not None else "Failed"
            say(err, f"{head} table {table.number} ({who}, deal set {table.deal_set}): {table_result(record, error)}")
        self.refresh()

    def note(self, line: str) -> None:
        if not self.quiet or not line.startswith("  "):
            say(err, line)

    def refresh(self) -> None:
        if self.report_dir is None:
            return
        try:
            write_ladder_report(self.ladder, self.report_dir)
        except (OSError, ValueError, ArithmeticError, sqlite3.Error) as exc:  # the ladder goes on: a page costs no table
            say(err, f"warning: the page in {self.report_dir} was not refreshed: {exc}")


def write_ladder_report(ladder, folder: Path) -> dict[str, Any]:
    from tournaments.ladder.page import report_ladder
    from tournaments.store import open_store

    store = open_store(ladder.league.db_path, create=False)
    try:
        return report_ladder(ladder, store, folder)
    finally:
        if store is not None:
            store.close()


@ladder_app.command("run", epilog="Example: referee ladder run ladder.toml -j 2 --report ladder-page\n\n" + EPILOG)
def run(
    ladder_file: LadderArg,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", help="Tables at once (1 to 8); each lane plays its tables in its own match process.")] = 1,
    db: DbOpt = None,
    until: Annotated[str | None, typer.Option("--until", help="certified: stop once every two neighbours of the standings are separated or tied (the tables in play are finished first).", show_default=False)] = None,
    max_deals: Annotated[int | None, typer.Option("--max-deals", help="Stop once the ladder's tables hold N deals (counted over the whole ladder, not this run: a run started again goes on to the same N).", show_default=False)] = None,
    report_dir: Annotated[Path | None, typer.Option("--report", help="Keep the ladder's web page in this folder, rewritten after every table; it reloads itself.")] = None,
    cluster: Annotated[str | None, typer.Option("--cluster", help="Play the tables on a Dask cluster: a scheduler address (tcp://host:8786) or local:N for N worker processes here; -j tables at once. Needs pip install 'referee\\[cluster]'; the bots' commands must exist at the same paths on every worker.", show_default=False)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No line per finished table.")] = False,
    affinity: Annotated[bool, typer.Option("--affinity/--no-affinity", help="With -j 2 or more, keep each lane and its bots to CPUs of their own (as league run).")] = True,
) -> None:
    """Host the ladder: choose and play tables until stopped (Ctrl-C, SIGTERM), --until certified or --max-deals; bots join and leave meanwhile (ladder add, ladder retire)."""
    from tournaments.config import LeagueError
    from tournaments.ladder.config import LAG
    from tournaments.ladder.host import run_ladder

    ladder = _load(ladder_file, db)
    if until not in (None, "certified"):
        raise fail(f"--until {until}: the only thing a ladder runs until is 'certified'")
    if not 1 <= concurrency <= LAG:
        raise fail(f"--concurrency (-j): from 1 to {LAG}, not {concurrency}")
    if max_deals is not None and max_deals < 1:
        raise fail("--max-deals must be at least 1")
    address = None
    if cluster is not None:
        from tournaments.cluster import parse_address

        try:
            address = parse_address(cluster)
        except LeagueError as exc:
            raise fail(str(exc)) from None
    if report_dir is not None and report_dir.exists() and not report_dir.is_dir():
        raise fail(f"--report {report_dir}: exists and is not a folder")
    if ladder.league.sandbox:
        sandbox_ready(ladder_file)
    lines = HostLines(ladder, quiet, report_dir)
    def host(client: Any = None):
        return trio.run(lambda: run_ladder(ladder, concurrency, max_deals=max_deals, until_certified=until == "certified",
                                           display=lines, handle_signals=True, affinity=affinity, client=client))

    try:
        if address is None:
            report = host()
        else:
            from tournaments.cluster import connect

            with connect(address) as client:
                report = host(client)
    except LeagueError as exc:
        raise fail(str(exc).replace("another run of this league", "another run of this ladder")) from None
    except BaseException as exc:
        if interrupted(exc):  # while the file's bots were being checked: nothing was played
            say(err, "interrupted while the bots were checked: no table was played; run the same command again")
            raise typer.Exit(X.INTERRUPTED) from None
        raise
    lines.refresh()
    summary = (f"{ladder.name}: played {report.played} table{'s' if report.played != 1 else ''} in {report.seconds:.1f} s"
               + (f", {len(report.failed)} failed" if report.failed else "")
               + f"; the ladder holds {report.tables} table{'s' if report.tables != 1 else ''}, {report.deals} deals")
    if report.stopped is not None:
        raise fail(f"{report.stopped}; the ladder stopped and keeps every finished table ({summary}); make room and run it again")
    if report.interrupted:
        say(err, f"interrupted: {summary}; the tables in play were abandoned; run the same command again to continue")
        raise typer.Exit(X.INTERRUPTED)
    why = {"max-deals": f"--max-deals {max_deals} reached", "certified": "the order is certified"}.get(report.ended, report.ended)
    say(out, f"{summary} ({why})")
    for number, error in report.failed:
        say(err, f"failed: table {number}: {error.splitlines()[0] if error else ''}")
    if report.failed:
        raise typer.Exit(X.BUG)


@ladder_app.command("add", epilog="Example: referee ladder add ladder.toml greedy@2 -- python3 bots/greedy.py --fast\n\n" + EPILOG)
def add(
    ladder_file: LadderArg,
    name: Annotated[str, typer.Argument(help="The entry's name; a new version of a bot is a new entry: name@2, name@3, ….", show_default=False)],
    command: Annotated[list[str], typer.Argument(help="The bot's command line, after --.", show_default=False)],
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Where the bot runs (default: here); its command's relative paths are taken from here.")] = None,
    env: Annotated[list[str] | None, typer.Option("--env", help="KEY=VALUE added to the bot's environment (again for more).")] = None,
    db: DbOpt = None,
) -> None:
    """Enter a bot: it plays referee check's games first (in the sandbox unless the ladder turns it off) and joins at the next table the host chooses only if it passes."""
    from referee.base.errors import BotError
    from referee.bots.sandbox import absolute_words
    from referee.bots.spawn import resolve_command
    from referee.commands.check import checked
    from referee.matches.check import render
    from tournaments.config import BotEntry
    from tournaments.ladder import store as LS
    from tournaments.ladder.config import entry_problem
    from tournaments.ladder.host import validate, verdict

    ladder = _load(ladder_file, db)
    if (why := entry_problem(name)) is not None:
        raise fail(f"{name}: {why}")
    variables = {}
    for item in env or []:
        key, eq, value = item.partition("=")
        if not eq or not key or "\0" in item:
            raise fail(f"--env {item!r}: write KEY=VALUE")
        variables[key] = value
    workdir = (cwd or Path.cwd()).resolve()
    if not workdir.is_dir():
        raise fail(f"--cwd {cwd}: no such directory")
    if not command:
        raise fail("give the bot's command after --: referee ladder add LADDER.toml NAME -- COMMAND …")
    try:
        argv = resolve_command(command, Path.cwd())
    except BotError as exc:
        raise fail(f"{name}: {exc}") from None
    sandbox = ladder.league.sandbox
    if sandbox:
        sandbox_ready(ladder_file)
        argv = absolute_words(argv, Path.cwd())
    bot = BotEntry(name, list(command), str(workdir), variables, argv, workdir, sandbox)
    with _writing(ladder) as store:
        _name_free(ladder, store, name)
    say(err, f"checking {name} (referee check, {ladder.league.variant.id}) before it joins …")
    report = checked(validate, ladder, bot)  # Ctrl-C and a log that cannot be written: as referee check says them
    if not report.passed:
        for line in render(report):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        raise fail(f"{name} is refused: it failed referee check (the report above); it does not join the ladder")
    with _writing(ladder) as store:
        _name_free(ladder, store, name)
        LS.enter(store, bot, "add", verdict(report))
    say(out, f"{name} entered: it joins at the next table the host chooses")


def _name_free(ladder, store, name: str) -> None:
    """Refuse a name an entry or a bot of the file has, suggesting the next free version."""
    from tournaments.ladder import store as LS

    taken = {e.name for e in LS.entries(store)} | {b.name for b in ladder.league.bots}
    if name in taken:
        base = name.split("@")[0]
        n = 2
        while f"{base}@{n}" in taken:
            n += 1
        raise fail(f"{name}: the ladder has an entry of that name already (its results stay its own); a new version is a new "
                   f"entry: {base}@{n}")


@ladder_app.command("retire")
def retire(ladder_file: LadderArg, name: Annotated[str, typer.Argument(help="The entry to retire.", show_default=False)], db: DbOpt = None) -> None:
    """Retire an entry: it plays no table chosen from now on, and keeps its results and its place in the standings."""
    from tournaments.ladder import store as LS

    ladder = _load(ladder_file, db)
    if not ladder.league.db_path.exists():
        raise fail(f"{ladder.league.db_path}: no such database: the ladder has no entry yet")
    with _writing(ladder) as store:
        found = {e.name: e for e in LS.entries(store)}
        e = found.get(name)
        if e is None:
            raise fail(f"{name}: no entry of that name" + (f" (entries: {', '.join(found)})" if found else " (the ladder has none)"))
        if e.state in ("retired", "retiring"):
            raise fail(f"{name}: retired already")
        LS.ask_retire(store, name)
    say(out, f"{name} retires: it plays no table chosen from now on and keeps its results")


def _print(fmt: Format, data: dict[str, Any], as_csv, as_markdown, for_people) -> None:
    """``data`` on stdout in the format asked for (``for_people`` prints the default one)."""
    from tournaments.ladder.status import to_json

    if fmt is Format.table:
        for_people(data)
    else:
        sys.stdout.write({Format.csv: as_csv, Format.json: to_json, Format.markdown: as_markdown}[fmt](data))


@ladder_app.command("table")
def table(ladder_file: LadderArg, fmt: FormatOpt = Format.table, db: DbOpt = None) -> None:
    """Print the standings: ratings (points a deal) with 95% intervals, tables, deals, and the separated/tied mark to the next bot."""
    from tournaments.ladder import status as T

    with _reading(_load(ladder_file, db)) as (ladder, store):
        data = T.standings(ladder, store)
    _print(fmt, data, T.table_csv, T.table_markdown, lambda d: out.print(T.rich_table(d)))


@ladder_app.command("status")
def status(ladder_file: LadderArg, fmt: FormatOpt = Format.table, db: DbOpt = None) -> None:
    """Show the run holding the ladder, the tables in play (since when, by which run), the tables per bot and an ETA to certification."""
    from tournaments.ladder import status as T

    with _reading(_load(ladder_file, db)) as (ladder, store):
        data = T.status(ladder, store)
    def lines(d: dict[str, Any]) -> None:
        for line in T.status_lines(d):  # plain text: names and errors may hold "[...]"
            say(out, line)

    _print(fmt, data, T.status_csv, T.status_markdown, lines)


def register(app: typer.Typer, report_writers: dict[str, Any]) -> None:
    """Add ``referee ladder`` to the referee's command line (the ``referee.commands`` entry point
    in pyproject.toml names this function)."""
    app.add_typer(ladder_app, name="ladder")
