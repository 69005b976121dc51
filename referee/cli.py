"""The command line: ``referee match``, ``play``, ``replay``, ``verify``, ``deals``, ``check``,
``league``, ``schema`` and ``variants``.

Typed errors are caught here, at the edge, and printed as one line on stderr followed by the
exit code of :mod:`referee.exitcodes`; nothing a user can cause ends in a traceback.
"""

from __future__ import annotations

import functools
import io
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import msgspec
import trio
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from protocol.messages import MAX_DEPTH, too_deep
from referee import exitcodes as X
from referee.bots.bot import Bot
from referee.bots.sandbox import DEFAULT_MEMORY_MB, DEFAULT_PROCESSES, SandboxUnavailable, find_bwrap
from referee.bots.spawn import Confinement, bot_name, resolve_command
from referee.console import Console
from referee.conversation.clock import TimeControl
from referee.engine import refereed_variant, variant, variant_names
from referee.engine.deal import Deal, format_deal_line, parse_deal_lines
from referee.engine.errors import BadDeal, RulesError
from referee.engine.game import Variant
from referee.engine.shuffle import BLAKE2B_GAMES
from referee.errors import BotError, BotStartError, LogError
from referee.logs.log import fresh_path, stderr_dir_of
from referee.matches.job import (
    MAX_NAME,
    BotJob,
    BotName,
    ClockJob,
    Confidence,
    Deals,
    GameJob,
    Games,
    LimitsJob,
    MarginMs,
    MatchJob,
    MemoryMb,
    Processes,
    bound_problem,
    within,
)
from referee.matches.live import score_line
from referee.matches.match import deals_needed, match_length, orientations, run_match
from referee.matches.report import render, verdict_line
from referee.matches.results import MatchResult
from referee.matches.spec import ISOLATIONS, Isolation, MatchSpec
from referee.matches.stats import SprtSpec, is_sprt_word, parse_sprt
from referee.seeds import seed_text
from referee.signals import Terminated

if TYPE_CHECKING:
    from referee.play.seat import Person

#: Rows of the deals (or games) table past which ``referee match`` prints a summary (``--full``: all).
TABLE_ROWS = 40

EPILOG = "Exit codes: 0 done (a forfeit is a result), 1 bug, 2 usage or bad input, 3 a bot could not be started, 4 verify found an inconsistency, 5 check found problems, 130 interrupted."

app = typer.Typer(
    name="referee",
    help="Referee and tournament runner for domino bots: JSON lines over stdin/stdout, duplicate matches, leagues.",
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
deals_app = typer.Typer(help="Generate and show deal files (fixed deals, RULES.md §4).", no_args_is_help=True)
app.add_typer(deals_app, name="deals")

out = Console()
err = Console(stderr=True)

#: ``referee report FILE`` for files another package knows, by suffix (``.toml``: a league).
#: A writer makes the report folder and returns what it wrote, in words ("3 of 6 pairings played").
ReportWriter = Callable[[Path, Optional[Path], Path], str]
REPORT_WRITERS: dict[str, ReportWriter] = {}

#: The entry point group through which packages built on the referee add their commands: each
#: entry is a function called with the app and :data:`REPORT_WRITERS` (``tournaments`` adds
#: ``league``).  The arrow stays one way: the referee never imports them by name.
COMMANDS_GROUP = "referee.commands"


def _add_commands() -> None:
    from importlib.metadata import entry_points

    for entry in entry_points(group=COMMANDS_GROUP):
        entry.load()(app, REPORT_WRITERS)


def fail(message: str, code: int = X.USAGE) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise.  ``message`` is printed as it is,
    never read as rich markup: it may quote a bot's stderr, name or output."""
    err.print(Text("error: ", style="bold red") + Text(message), highlight=False, soft_wrap=True)
    return typer.Exit(code)


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"game option {item!r}: write it as name=value, e.g. -o rule13=hang")
        options[key.strip()] = value.strip()
    return options


def load_deal_file(path: Path, shape) -> list:
    if path.is_dir():
        raise fail(f"deal file {path} is a folder; give a file of deals (`referee deals generate` writes one)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise fail(f"deal file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise fail(f"deal file {path}: not UTF-8 text") from None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if too_deep(line.encode()):
            raise fail(f"deal file {path}: line {number}: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return parse_deal_lines(lines, shape)
    except BadDeal as exc:
        raise fail(f"deal file {path}: {exc}") from None


def seed_option(text: str | None) -> int:
    """``--seed`` as a number, or a fresh secret seed when it is not given."""
    from referee.seeds import fresh_seed, parse_seed

    if text is None:
        return fresh_seed()
    try:
        return parse_seed(text)
    except ValueError as exc:
        raise fail(f"--seed: {exc}") from None


def warn_short_seed(typed: str | None, seed: int, printed: str = "with the result") -> None:
    """Warn, in one line as ``league run`` does, when the ``--seed`` typed is short enough to find."""
    from referee.seeds import guessable, short_seed_warning

    if typed is not None and guessable(seed):
        say(err, short_seed_warning(seed, f"leave out --seed: the referee draws a secret one and prints it {printed}"))


def file_sha256(path: Path) -> str:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise fail(f"deal file {path}: {exc.strerror or exc}") from None


def file_length(v, players: int, opts: dict[str, Any], count: int) -> tuple[int, int | None]:
    """``--deals-file`` alone, in a game of fixed deals: the deals and games that play every
    deal of the file (one game of them all, or, where the rules fix a game's length as
    mexican_train's seven rounds, as many whole games as the file holds)."""
    try:
        v.new_game(players, opts, count)
        return count, None
    except RulesError as exc:
        per_game = v.game.default_deals
        if per_game and count > per_game and count % per_game == 0:
            return per_game, count // per_game
        fits = next((n for n in (per_game or 0, *range(count - 1, max(0, count - 64), -1)) if 0 < n < count and _accepts(v, players, opts, n)), None)
        hint = "" if fits is None else f"; give --deals {fits} to play its first {fits}"
        raise fail(f"the deal file holds {count} deals, and {exc}{hint}") from None


def _accepts(v, players: int, opts: dict[str, Any], deals: int) -> bool:
    try:
        v.new_game(players, opts, deals)
    except RulesError:
        return False
    return True


def distinct_name(command: str, taken: set[str]) -> str:
    """The bot's name from its command (:func:`referee.bots.spawn.bot_name`), numbered ``_2``,
    ``_3``… when another bot of the match has it already."""
    stem = bot_name(command)
    name, k = stem, 2
    while name in taken:
        name, k = f"{stem}_{k}", k + 1
    return name


def claim(path: Path, *, directory: bool = False) -> Path:
    """A fresh log (or folder) at ``path`` or numbered beside it (:func:`referee.logs.log.fresh_path`)."""
    try:
        return fresh_path(path, directory=directory)
    except OSError as exc:
        raise fail(f"cannot create {path}: {exc.strerror or exc}") from None


def progress_bar(total: int | None, quiet: bool) -> Progress | None:
    if quiet or not err.is_terminal:
        return None
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True)


TC_PANEL = "Time control"
LIMITS_PANEL = "Limits and sandbox"
OUTPUT_PANEL = "Output"
GAME_PANEL = "Game"
STATS_PANEL = "Statistics"


@app.command(epilog="Example: referee match sample_bots/greedy_bot.py sample_bots/random_bot.py --variant sport --deals 12\n\n" + EPILOG)
def match(
    bots: Annotated[list[str], typer.Argument(help="Bots: a path (.py and .js run with python and node) or a quoted command line.", show_default=False)],
    variant_id: Annotated[str, typer.Option("--variant", "-v", help="The game: " + ", ".join(variant_names(refereed=True)) + ".", rich_help_panel=GAME_PANEL)] = "sport",
    deals: Annotated[Optional[int], typer.Option(help="Deals per game, for games of fixed deals (sport: a multiple of 4, default 12; mexican_train: always 7).", rich_help_panel=GAME_PANEL)] = None,
    games: Annotated[Optional[int], typer.Option(help="Whole games per orientation (default 1); for mexican_train, seven rounds each.", rich_help_panel=GAME_PANEL)] = None,
    seed: Annotated[Optional[str], typer.Option(help="Seed of the deal stream (same seed, same deals): decimal, or hexadecimal with 0x.  Default: a fresh secret seed, printed with the result.", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    deals_file: Annotated[Optional[Path], typer.Option("--deals-file", help="Play the deals of this file instead of seeded ones (without --deals or --games: all of them).", rich_help_panel=GAME_PANEL)] = None,
    option: Annotated[Optional[list[str]], typer.Option("--option", "-o", help="A game option as name=value (repeat); see `referee variants`.", rich_help_panel=GAME_PANEL)] = None,
    players: Annotated[Optional[int], typer.Option(help="Seats at the table (default: the game's usual count, or one per bot).", rich_help_panel=GAME_PANEL)] = None,
    name: Annotated[Optional[list[str]], typer.Option("--name", "-n", help="Display names, one per bot in order.", rich_help_panel=GAME_PANEL)] = None,
    startup_time: Annotated[float, typer.Option(help="Seconds a bot has to answer hello.", rich_help_panel=TC_PANEL)] = 10.0,
    move_time: Annotated[float, typer.Option(help="Seconds a bot has for each move.", rich_help_panel=TC_PANEL)] = 5.0,
    bank: Annotated[Optional[float], typer.Option(help="A time bank per bot for each game in each seating, in seconds (chess-clock style).", rich_help_panel=TC_PANEL)] = None,
    increment: Annotated[float, typer.Option(help="Seconds added to the bank after every move.", rich_help_panel=TC_PANEL)] = 0.0,
    bot_tc: Annotated[Optional[list[str]], typer.Option("--tc", help='One bot\'s own clock, as "NAME: move=0.5 bank=30 increment=0.1 startup=5" (repeat, once per bot; NAME as the result names it, or the bot\'s number from 1); what it leaves out is the match\'s (--move-time, --bank…).', rich_help_panel=TC_PANEL, show_default=False)] = None,
    time_margin: Annotated[float, typer.Option(help="Milliseconds an answer may be read late and still count (cutechess-cli's timemargin): the overrun is logged and charged to the bank (PROTOCOL.md, \"Limits\").", rich_help_panel=TC_PANEL)] = 0.0,
    max_faults: Annotated[int, typer.Option(help="Faults after which a bot forfeits the rest of the match.", rich_help_panel=LIMITS_PANEL)] = 3,
    max_line: Annotated[int, typer.Option(help="Longest line accepted from a bot, in bytes.", rich_help_panel=LIMITS_PANEL)] = 65536,
    memory_mb: Annotated[Optional[int], typer.Option(help=f"Memory cap per bot process, in MiB: its address space (RLIMIT_AS), default none; in the sandbox its memory and its /tmp, default {DEFAULT_MEMORY_MB} (PROTOCOL.md).", rich_help_panel=LIMITS_PANEL, show_default=False)] = None,
    cpu_seconds: Annotated[Optional[int], typer.Option(help="CPU-time limit per bot process (RLIMIT_CPU), in seconds.", rich_help_panel=LIMITS_PANEL)] = None,
    cwd: Annotated[Optional[list[Path]], typer.Option(help="Working directory of the bots: one for all, or one per bot in order.", rich_help_panel=LIMITS_PANEL)] = None,
    env: Annotated[Optional[list[str]], typer.Option(help="An environment variable NAME=VALUE for every bot (repeat); bots get only a few of the referee's own (PROTOCOL.md).", rich_help_panel=LIMITS_PANEL)] = None,
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Run every bot under bubblewrap: no network, no other processes, its own directory read-only, a private /tmp (PROTOCOL.md).", rich_help_panel=LIMITS_PANEL)] = False,
    max_processes: Annotated[int, typer.Option(help="In the sandbox: processes and threads a bot may have at once.", rich_help_panel=LIMITS_PANEL)] = DEFAULT_PROCESSES,
    isolation: Annotated[str, typer.Option(help="strict: only the process whose turn it is runs, every other one of the match is frozen (no thinking on the opponent's time); concurrent: all run (PROTOCOL.md, Fair play).", rich_help_panel=LIMITS_PANEL)] = "concurrent",
    log: Annotated[Optional[Path], typer.Option(help="Where to write the JSON-lines match log (default: referee-logs/match-<variant>-<seed>.jsonl, or -2, -3… if taken).", rich_help_panel=OUTPUT_PANEL)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the --log file (and its stderr files) if it exists.", rich_help_panel=OUTPUT_PANEL)] = False,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Also write the result as a JSON object to this file.", rich_help_panel=OUTPUT_PANEL)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the verdict, in one line (with --sprt, the test's decision first; no running score).", rich_help_panel=OUTPUT_PANEL)] = False,
    live: Annotated[Optional[bool], typer.Option("--live/--no-live", help="The running score after every pair, on stderr (default: on a terminal, unless -q).", show_default=False, rich_help_panel=OUTPUT_PANEL)] = None,
    full: Annotated[bool, typer.Option("--full", help=f"Print the whole deals and games tables, however long (past {TABLE_ROWS} rows: the first and last rows and a count).", rich_help_panel=OUTPUT_PANEL)] = False,
    confidence: Annotated[float, typer.Option(help="Confidence level of the intervals; a winner is named only when significant at it.", rich_help_panel=STATS_PANEL)] = 0.95,
    sprt: Annotated[Optional[list[str]], typer.Option(help='Stop as soon as a sequential test decides: "margin0=0 margin1=3" (mean points per pair) or "elo0=0 elo1=50" (logistic Elo of the pairs; model=normalized: their normalized Elo, as fastchess), with alpha=, beta= (0.05 each) and min_pairs= (10: nothing is decided before); --deals/--games is then the budget.', rich_help_panel=STATS_PANEL)] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", help="Segments played at once, each a game in one seating with processes of its own (one core each is about right).  Same result and log whatever N.  A game of fixed deals has as many segments as seatings (2 for two bots): more lanes than that need --games.", rich_help_panel=GAME_PANEL)] = 1,
) -> None:
    """Play a duplicate match: every deal in every orientation, so luck cancels and the margin means skill."""
    confidence = bounded(confidence, Confidence, "--confidence")
    if concurrency < 1:
        raise fail(f"--concurrency (-j): at least 1, not {concurrency}")
    bots, test = sprt_test(bots, sprt)
    v, players, opts, deal_list, deals, games = game_setup(variant_id, players, option, deals_file, deals, games, len(bots), test)
    names = names_of(name, len(bots))
    cwds = cwds_of(cwd, len(bots))
    extra_env = parse_env(env)
    check_sandbox(sandbox, max_processes)
    tc = bounded({"startup": startup_time, "move": move_time, "bank": bank, "increment": increment,
                  "margin": bounded(time_margin, MarginMs, "--time-margin") / 1000}, ClockJob,
                 {"startup": "--startup-time", "move": "--move-time", "bank": "--bank", "increment": "--increment"})
    limits = bounded({"max_faults": max_faults, "max_line": max_line, "memory_mb": memory_mb, "cpu_seconds": cpu_seconds,
                      "max_processes": max_processes, "isolation": isolation_of(isolation)}, LimitsJob,
                     {"max_faults": "--max-faults", "max_line": "--max-line", "memory_mb": "--memory-mb", "cpu_seconds": "--cpu-seconds",
                      "max_processes": "--max-processes", "isolation": "--isolation"})
    seed_value = seed_option(seed)
    entrants = with_clocks(entrants_of(bots, names, cwds, extra_env, sandbox), bot_tc, tc)
    log_path = log_path_of(log, overwrite, json_path, v, seed_value, deals_file)
    job = MatchJob(game=GameJob(variant=v.id, players=players, options=opts, deals=deals, games=games), tc=tc, limits=limits,
                   seed=seed_value, deals_from=BLAKE2B_GAMES, bots=entrants, log=str(log_path), stderr_dir=str(stderr_dir_of(log_path)), hidden=[],
                   confidence=confidence, sprt=test, deals_file=str(deals_file) if deals_file else None,
                   deals_file_sha256=file_sha256(deals_file) if deals_file else None)
    spec = job.spec(deal_list)
    warn_short_seed(None if deals_file else seed, seed_value)
    result, stopped = play_watched(spec, quiet=quiet, live=live, sandbox=sandbox, claimed=None if log else log_path, lanes=concurrency)
    with result, held_signals():  # a second Ctrl-C does not cut the result short
        show_result(result, quiet=quiet, full=full, json_path=json_path, seed=None if deals_file else seed_value, log_path=log_path)
    if stopped is not None:
        pairs = result.tally.count
        say(err, f"interrupted after {pairs} pair{'' if pairs == 1 else 's'} ({stopped}); the log so far is in {log_path}"
                 + (f", the result in {json_path}" if json_path else ""))
        raise typer.Exit(X.INTERRUPTED)


def bounded(value: Any, kind: Any, names: str | dict[str, str]) -> Any:
    """``value`` converted to ``kind`` (a type of :mod:`referee.matches.job`, whose bounds it checks), or
    a one-line error naming the option (``names``: the option, or the options by field)."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise fail(bound_problem(exc, kind, value, names) or f"{names if isinstance(names, str) else 'an option'}: {exc}") from None


def sprt_test(bots: list[str], sprt: list[str] | None) -> tuple[list[str], SprtSpec | None]:
    """``--sprt``'s test, and the bots without its settings (given unquoted, the settings after
    the first land among the bots: ``--sprt elo0=0 elo1=20 alpha=0.05``)."""
    if sprt is None:
        return bots, None
    sprt = [*sprt, *(b for b in bots if is_sprt_word(b))]
    bots = [b for b in bots if not is_sprt_word(b)]
    try:
        test = parse_sprt(sprt)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if len(bots) != 2:
        raise fail(f"--sprt tests one bot against another: give 2 bots, not {len(bots)}")
    return bots, test


def game_of(variant_id: str, players: int | None, option: list[str] | None, bots: int) -> tuple[Variant, int, dict[str, Any]]:
    """The game, its seats (default: the game's usual count, or one per bot) and its options."""
    try:
        v = refereed_variant(variant_id)
    except RulesError as exc:
        raise fail(str(exc)) from None
    if players is None:
        players = v.default_players if bots <= 2 and v.default_players in v.players else bots
    try:
        return v, players, v.resolve_options(players, parse_options(option))
    except RulesError as exc:
        raise fail(str(exc)) from None


def length_of(v: Variant, players: int, opts: dict[str, Any], deals: int | None, games: int | None, deals_file: Path | None,
              test: SprtSpec | None) -> tuple[list[Deal] | None, int | None, int | None]:
    """The deal file's deals, the deals per game and the games per orientation; what the game,
    the deal file and the SPRT's minimum refuse is refused here."""
    deal_list = load_deal_file(deals_file, v.shape(players, opts)) if deals_file else None
    if deal_list is not None and deals is None and games is None and not v.to_target:
        deals, games = file_length(v, players, opts, len(deal_list))
    try:
        deals, games = match_length(v, deals, games)
    except RulesError as exc:
        raise fail(str(exc)) from None
    deals, games = bounded(deals, Deals | None, "--deals"), bounded(games, Games | None, "--games")
    budget = games if v.to_target else deals
    if test is not None and budget is not None and budget < test.min_pairs:
        raise fail(f"--sprt cannot decide within {budget} pairs: it decides nothing before min_pairs={test.min_pairs}; "
                   f"give more {'--games' if v.to_target else '--deals'} or a smaller min_pairs")
    if deal_list is not None and not v.to_target and len(deal_list) < (deals or 0) * (games or 1):
        raise fail(f"the deal file holds {len(deal_list)} deals; {deals_needed(deals or 0, games)}")
    try:
        v.new_game(players, opts, deals)  # checks the deal count (sport: a multiple of 4)
    except RulesError as exc:
        per_game = v.game.default_deals
        hint = (f"; for {deals} deals, give --games {deals // per_game} ({per_game} deals each)"
                if deals and per_game and games is None and deals > per_game and deals % per_game == 0 else "")
        raise fail(f"{exc}{hint}") from None
    return deal_list, deals, games


def names_of(names: list[str] | None, bots: int) -> list[str] | None:
    """The ``--name`` values, checked: one per bot, printable, not all spaces, within the bound
    of a bot's name (it names the bot's stderr files and every table and line of the result)."""
    if names and len(names) != bots:
        raise fail(f"--name was given {len(names)} times for {bots} bots")
    for display in names or []:
        if not within(display, BotName) or not display.isprintable() or not display.strip():
            shown = repr(display) if len(display) <= MAX_NAME else repr(display[:MAX_NAME]) + f"… ({len(display):,} characters)"
            raise fail(f"--name {shown}: a bot's name is 1 to {MAX_NAME} printable characters, not all spaces")
    return names


def cwds_of(cwd: list[Path] | None, bots: int) -> list[Path | None]:
    """Each bot's working directory (``--cwd``: one for all, or one per bot), resolved."""
    if cwd and len(cwd) not in (1, bots):
        raise fail(f"--cwd was given {len(cwd)} times: give one for all bots or one per bot ({bots})")
    for d in cwd or []:
        if not d.is_dir():
            raise fail(f"--cwd {d}: no such directory")
    return [(cwd[i] if len(cwd) > 1 else cwd[0]).resolve() if cwd else None for i in range(bots)]


def entrants_of(bots: list[str], names: list[str] | None, cwds: list[Path | None], env: dict[str, str], sandbox: bool) -> list[BotJob]:
    """The bots of the match: each command resolved, each with a name of its own."""
    entrants = []
    taken: set[str] = set()
    for i, command in enumerate(bots):
        try:
            argv = resolve_command(command, cwds[i])
        except BotError as exc:
            raise fail(str(exc)) from None
        display = names[i] if names else distinct_name(command, taken)
        if display in taken:
            raise fail(f"two bots are named {display!r}; give distinct --name values")
        taken.add(display)
        entrants.append(BotJob(name=display, argv=argv, cwd=None if cwds[i] is None else str(cwds[i]), env=env, sandbox=sandbox))
    return entrants


#: The fields of a bot's own clock (``--tc``), as a league file's ``[clock]`` names them.
CLOCK_FIELDS = ("startup", "move", "bank", "increment")


def with_clocks(entrants: list[BotJob], items: list[str] | None, match_tc: ClockJob) -> list[BotJob]:
    """The bots with the clocks ``--tc`` gives them (``NAME: move=0.5 bank=30``, or ``2: …`` by
    number from 1): each field it names replaces the match's for that bot, and ``bank=none``
    takes the match's bank away; a bot given no ``--tc`` plays on the match's clock."""
    given: dict[int, ClockJob] = {}
    names = [e.name for e in entrants]
    for item in items or []:
        who, fields = _clock_owner(item, names)
        if who in given:
            raise fail(f"--tc {item!r}: {names[who]} has a clock already (give one --tc per bot)")
        values: dict[str, Any] = {f: getattr(match_tc, f) for f in CLOCK_FIELDS}
        for word in fields.split():
            key, sep, value = word.partition("=")
            if not sep or key not in CLOCK_FIELDS:
                raise fail(f"--tc {item!r}: {word!r} is not one of {', '.join(f + '=SECONDS' for f in CLOCK_FIELDS)}")
            if key == "bank" and value.lower() == "none":
                values[key] = None
                continue
            try:
                values[key] = float(value)
            except ValueError:
                raise fail(f"--tc {item!r}: {key}={value!r} is not a number of seconds") from None
        if not fields.split():
            raise fail(f"--tc {item!r}: give the bot's clock after its name, e.g. --tc \"{names[who]}: move=0.5 bank=30\"")
        given[who] = bounded(values, ClockJob, f"--tc {names[who]}")
    return [msgspec.structs.replace(e, tc=given[i]) if i in given else e for i, e in enumerate(entrants)]


def _clock_owner(item: str, names: list[str]) -> tuple[int, str]:
    """The bot a ``--tc`` is for (its index) and the fields after its name: the longest bot name
    that the item starts with, followed by a colon, or the bot's number from 1."""
    owners = [i for i, n in enumerate(names) if item.startswith(n + ":")]
    if owners:
        who = max(owners, key=lambda i: len(names[i]))
        return who, item[len(names[who]) + 1:]
    head, sep, rest = item.partition(":")
    if sep and head.strip().isdigit() and 1 <= int(head) <= len(names):
        return int(head) - 1, rest
    raise fail(f"--tc {item!r}: write it as \"NAME: move=0.5 bank=30\", NAME one of {', '.join(names)} (or the bot's number from 1)")


def log_path_of(log: Path | None, overwrite: bool, json_path: Path | None, v: Variant, seed: int, deals_file: Path | None, *,
                kind: str = "match", hint: str = " (without --log every match gets a log of its own)") -> Path:
    """Where the match log goes: ``--log`` (an existing one only with ``--overwrite``), or a
    fresh name under ``referee-logs/`` (``<kind>-<game>-<seed>.jsonl``, the seed as the result prints it and
    ``--seed`` takes it), claimed now."""
    for option_name, path in (("--log", log), ("--json", json_path)):
        if path is not None and path.is_dir():
            raise fail(f"{option_name} {path} is a folder; give a file name")
    if log is None:
        return claim(Path("referee-logs") / f"{kind}-{v.id}-{seed_text(seed) if deals_file is None else deals_file.stem}.jsonl")
    if log.exists() and not overwrite:
        raise fail(f"--log {log} exists; add --overwrite to replace it{hint}")
    return log


def _interrupted_result(exc: BaseException, spec) -> tuple[MatchResult, BaseException]:
    """The finished pairs of a match a signal stopped (Ctrl-C, SIGTERM, SIGHUP: the bots are
    ended and the log closed); a match stopped before it had any says so and exits 130."""
    stopped = first_of(exc, Terminated)
    partial = getattr(stopped, "result", None)
    if stopped is None or not isinstance(partial, MatchResult):
        err.print(f"interrupted; the log so far is in {spec.log_path}", markup=False, highlight=False)
        raise typer.Exit(X.INTERRUPTED) from None
    return partial, stopped


def play_watched(spec: MatchSpec, *, quiet: bool, live: bool | None, sandbox: bool, claimed: Path | None,
                 lanes: int = 1) -> tuple[MatchResult, BaseException | None]:
    """Play the match with a progress bar and the running score on a terminal; its result, and
    what stopped it (Ctrl-C, SIGTERM, SIGHUP) if it was stopped: then the result is its
    finished pairs'.  ``claimed``: the log, when its name was claimed for this match (dropped
    if the match never began); ``lanes``: segments played at once (``-j``)."""
    n_orient = len(orientations(spec.variant, spec.players, spec.options, len(spec.bots)))
    total = (spec.deals or 0) * (spec.games or 1) * n_orient if not spec.variant.to_target else (spec.games or 1) * n_orient
    bar = progress_bar(total, quiet)
    task = None

    def progress(desc: str, advance: int) -> None:
        if bar is not None and task is not None:
            bar.update(task, description=desc, advance=advance)

    show_live = live if live is not None else err.is_terminal and not quiet

    def on_board(now: MatchResult) -> None:
        if show_live:
            say(err, score_line(now))

    try:
        if bar is not None:
            with bar:
                task = bar.add_task("starting bots", total=total)
                return trio.run(functools.partial(run_match, spec, progress, on_board, lanes=lanes)), None
        return trio.run(functools.partial(run_match, spec, progress, on_board, lanes=lanes)), None
    except BotStartError as exc:
        raise fail(f"a bot could not be started: {exc}" + (f"\n{SANDBOX_HINT}" if sandbox else ""), X.BOT_START) from None
    except (BadDeal, LogError) as exc:
        if claimed is not None:
            _drop_if_empty(claimed)  # the name was claimed for this match, which never began
        raise fail(str(exc)) from None
    except BaseException as exc:
        if not interrupted(exc):
            raise
        # Ctrl-C, SIGTERM, SIGHUP: the bots are ended and the log closed; the finished pairs are the result.
        return _interrupted_result(exc, spec)


def show_result(result: MatchResult, *, quiet: bool, full: bool, json_path: Path | None, seed: int | None, log_path: Path) -> None:
    """Write ``--json`` and print the result (:func:`print_result`)."""
    summary = result.summary()
    if json_path is not None:
        try:
            write_json_whole(json_path, result)
        except OSError as exc:
            raise fail(f"cannot write {json_path}: {exc.strerror or exc}") from None
    print_result(result, summary, quiet=quiet, full=full, seed=seed, log_path=log_path, json_path=json_path)


@app.command(epilog="Example: referee play sample_bots/greedy_bot.py --variant draw --seat 1\n\n" + EPILOG)
def play(
    bots: Annotated[list[str], typer.Argument(help="The bots you play against: a path (.py and .js run with python and node) or a quoted command line.", show_default=False)],
    variant_id: Annotated[str, typer.Option("--variant", "-v", help="The game: " + ", ".join(variant_names(refereed=True)) + ".", rich_help_panel=GAME_PANEL)] = "sport",
    seat: Annotated[int, typer.Option(help="Your seat in the first seating (from 0); every seating of the same deals follows.", rich_help_panel=GAME_PANEL)] = 0,
    deals: Annotated[Optional[int], typer.Option(help="Deals per game, for games of fixed deals (sport: a multiple of 4, default 12; mexican_train: always 7).", rich_help_panel=GAME_PANEL)] = None,
    games: Annotated[Optional[int], typer.Option(help="Whole games per seating (default 1).", rich_help_panel=GAME_PANEL)] = None,
    deal_limit: Annotated[Optional[int], typer.Option(help="End every game after this many deals, drawn if no one has won it (a short game to try a bot).", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    seed: Annotated[Optional[str], typer.Option(help="Seed of the deal stream (same seed, same deals).  Default: a fresh secret seed, printed with the result.", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    deals_file: Annotated[Optional[Path], typer.Option("--deals-file", help="Play the deals of this file instead of seeded ones.", rich_help_panel=GAME_PANEL)] = None,
    option: Annotated[Optional[list[str]], typer.Option("--option", "-o", help="A game option as name=value (repeat); see `referee variants`.", rich_help_panel=GAME_PANEL)] = None,
    players: Annotated[Optional[int], typer.Option(help="Seats at the table (default: the game's usual count, or one per player).", rich_help_panel=GAME_PANEL)] = None,
    you: Annotated[Optional[str], typer.Option("--name", "-n", help="Your name on the page, in the log and the result (default: your login name).", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    clock: Annotated[Optional[float], typer.Option(help="Seconds you have for each move (default: no clock; the log says a day).", rich_help_panel=TC_PANEL, show_default=False)] = None,
    startup_time: Annotated[float, typer.Option(help="Seconds a bot has to answer hello.", rich_help_panel=TC_PANEL)] = 10.0,
    move_time: Annotated[float, typer.Option(help="Seconds a bot has for each move.", rich_help_panel=TC_PANEL)] = 5.0,
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Run every bot under bubblewrap (see `referee match --help`).", rich_help_panel=LIMITS_PANEL)] = False,
    grace: Annotated[float, typer.Option(help="Seconds the match waits for a closed page to come back (or the first page to open) before it ends, interrupted.", rich_help_panel=OUTPUT_PANEL)] = 300.0,
    no_open: Annotated[bool, typer.Option("--no-open", help="Do not open a browser: only print the table's address.", rich_help_panel=OUTPUT_PANEL)] = False,
    log: Annotated[Optional[Path], typer.Option(help="Where to write the match log (default: referee-logs/play-<variant>-<seed>.jsonl, or -2, -3… if taken).", rich_help_panel=OUTPUT_PANEL)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the --log file (and its stderr files) if it exists.", rich_help_panel=OUTPUT_PANEL)] = False,
) -> None:
    """Play against bots yourself, in your browser: a duplicate match like `referee match`'s, with you in one seat.

    The table is served on 127.0.0.1 only, at an address with a secret token, printed here.  You
    play every seating of the same deals; the match is logged (and verifies) as any match.
    """
    from referee.conversation.clock import MAX_SECONDS
    from referee.matches.spec import MatchSpec
    from referee.play.seat import Person

    if not bots:
        raise fail("give at least one bot to play against")
    v, players, opts, deal_list, deals, games = game_setup(variant_id, players, option, deals_file, deals, games, len(bots) + 1)
    you = player_checks(v, players, seat, deal_limit, login_name() if you is None else you, grace, clock)
    check_sandbox(sandbox, DEFAULT_PROCESSES)
    try:
        tc = TimeControl(startup=startup_time, move=move_time)
    except ValueError as exc:
        raise fail(str(exc)) from None
    yours = TimeControl(startup=startup_time, move=MAX_SECONDS if clock is None else clock)
    seed_value = seed_option(seed)
    me = orientations(v, players, opts, len(bots) + 1)[0][seat]  # the bot index the first seating puts in your seat
    entrants = opponents(bots, you, sandbox)
    person_bot = Bot(you, [], tc=yours)
    entrants.insert(me, person_bot)
    log_path = log_path_of(log, overwrite, None, v, seed_value, deals_file, kind="play", hint="")
    spec = MatchSpec(v, entrants, players, opts, deals=deals, games=games, seed=seed_value, deal_file=deal_list,
                     deal_file_name=str(deals_file) if deals_file else None, deal_file_sha256=file_sha256(deals_file) if deals_file else None,
                     tc=tc, log_path=log_path, stderr_dir=stderr_dir_of(log_path), deal_limit=deal_limit)
    person = Person(you, me, clocked=clock is not None)
    result, stopped = play_in_browser(spec, person, person_bot, grace=grace, no_open=no_open, sandbox=sandbox,
                                      claimed=None if log else log_path)
    with result, held_signals():
        print_result(result, result.summary(), quiet=False, full=False, seed=seed_value if deals_file is None else None, log_path=log_path,
                     json_path=None)
    if stopped is not None:
        say(err, f"interrupted ({stopped}); the log so far is in {log_path}")
        raise typer.Exit(X.INTERRUPTED)


def player_checks(v: Variant, players: int, seat: int, deal_limit: int | None, you: str, grace: float, clock: float | None) -> str:
    """``referee play``'s own options, checked: the person's seat and name, the deal limit, the
    grace period and the person's clock; the person's name."""
    from referee.conversation.clock import MAX_SECONDS

    if not 0 <= seat < players:
        raise fail(f"--seat {seat}: {v.id} with {players} players has seats 0 to {players - 1}")
    if deal_limit is not None and deal_limit < 1:
        raise fail("--deal-limit must be at least 1")
    if not 0 < len(you) <= MAX_NAME or not you.isprintable() or not you.strip():
        raise fail(f"--name {you[:MAX_NAME]!r}: a name is 1 to {MAX_NAME} printable characters, not all spaces")
    if not 0 < grace <= MAX_SECONDS:
        raise fail(f"--grace must be more than 0 and at most {MAX_SECONDS} seconds (a day)")
    if clock is not None and not 0 < clock <= MAX_SECONDS:
        raise fail(f"--clock must be more than 0 and at most {MAX_SECONDS} seconds (a day)")
    return you


def opponents(bots: list[str], you: str, sandbox: bool) -> list[Bot]:
    """The bots the person plays against: each command resolved, each with a name of its own."""

    taken = {you}
    entrants = []
    for command in bots:
        try:
            argv = resolve_command(command, None)
        except BotError as exc:
            raise fail(str(exc)) from None
        display = distinct_name(command, taken)
        taken.add(display)
        entrants.append(Bot(display, argv, Confinement(sandbox=sandbox, processes=DEFAULT_PROCESSES)))
    return entrants


def play_in_browser(spec: MatchSpec, person: Person, person_bot: Bot, *, grace: float, no_open: bool, sandbox: bool,
                    claimed: Path | None) -> tuple[MatchResult, BaseException | None]:
    """Serve the table and play the match (:func:`referee.play.run.play_match`); its result, and
    what stopped it, as :func:`play_watched`."""
    from referee.play.run import Abandoned, play_match

    def announce(url: str, opened: bool) -> None:
        where = "; your browser should show it" if opened else ("" if no_open else "; open it in your browser (none could be opened from here)")
        say(err, f"Your table is at {url}{where}.  Ctrl-C ends the match.")

    try:
        return trio.run(lambda: play_match(spec, person, person_bot, grace=grace, announce=announce, open_browser=not no_open)), None
    except BaseException as exc:
        if (problem := first_of(exc, BotStartError)) is not None:
            raise fail(f"a bot could not be started: {problem}" + (f"\n{SANDBOX_HINT}" if sandbox else ""), X.BOT_START) from None
        if (problem := first_of(exc, BadDeal) or first_of(exc, LogError)) is not None:
            if claimed is not None:
                _drop_if_empty(claimed)
            raise fail(str(problem)) from None
        if (problem := first_of(exc, Abandoned)) is not None:
            say(err, f"interrupted: {problem}; the log so far is in {spec.log_path}")
            raise typer.Exit(X.INTERRUPTED) from None
        if not interrupted(exc):
            raise
        return _interrupted_result(exc, spec)


def login_name() -> str:
    """The person's login name (``referee play``'s default name for them), or ``person``."""
    import getpass

    try:
        name = getpass.getuser()
    except (OSError, KeyError):
        return "person"
    return name if 0 < len(name) <= MAX_NAME and name.isprintable() else "person"


def game_setup(variant_id: str, players: int | None, option: list[str] | None, deals_file: Path | None, deals: int | None,
               games: int | None, bots: int, test: SprtSpec | None = None) -> tuple[Variant, int, dict[str, Any], list[Deal] | None, int | None, int | None]:
    """The game of a match from the command line (``match``, ``play``), checked: the variant, the
    seats, the options, the deal file's deals, the deals and games, for ``bots`` bots (and
    ``test``, ``--sprt``'s, whose minimum the match's length must reach)."""
    v, players, opts = game_of(variant_id, players, option, bots)
    deal_list, deals, games = length_of(v, players, opts, deals, games, deals_file, test)
    try:
        orientations(v, players, opts, bots)
    except RulesError as exc:
        raise fail(str(exc)) from None
    return v, players, opts, deal_list, deals, games


def print_result(result, summary, *, quiet: bool, full: bool, seed: int | None, log_path: Path, json_path: Path | None) -> None:
    """A match's result on stdout as ``referee match`` prints it: the verdict alone (``quiet``),
    or the report, the seed that deals the match again (``None``: the deals came from a file)
    and where the log is."""
    try:  # after SIGHUP the terminal may be gone: the --json file and the log have the result
        if quiet:
            say(out, verdict_line(summary))
        else:
            render(summary, result.deals, result.games, out, limit=None if full else TABLE_ROWS, hints=fault_hints(result))
            if seed is not None:
                out.print(f"seed: {seed_text(seed)}   (--seed {seed_text(seed)} plays these deals again)", style="dim",
                          markup=False, soft_wrap=True)
            out.print(f"log: {log_path}" + (f"   result: {json_path}" if json_path else ""), style="dim", markup=False, soft_wrap=True)
    except OSError:
        pass


def fault_hints(result) -> list[str | None]:
    """A hint for each fault of the result, in its order: the fault's own, or its kind's."""
    from referee.check import KIND_HINTS

    return [f.hint or KIND_HINTS.get(f.kind) for e in result.entries for f in e.faults]


def say(console: Console, line: str) -> None:
    """One line as it is (never markup), unwrapped; nothing when the terminal is gone (SIGHUP)."""
    try:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    except OSError:
        pass


@contextmanager
def held_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP are ignored in the body (the result of a match is written and
    printed whole); the handlers before are back after."""
    import signal
    import threading

    from referee.signals import STOP_SIGNALS

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def write_json_whole(path: Path, result) -> None:
    """``--json``, written beside its place and moved there when whole: a reader never sees half
    a result, and an earlier file stays until the new one is complete.

    Raises:
        OSError: it cannot be written.
    """
    from referee.matches.results import write_json

    part = path.with_name(f".{path.name}.part")
    try:
        write_json(part, result)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def _drop_if_empty(path: Path) -> None:
    try:
        if path.stat().st_size == 0:
            path.unlink()
    except OSError:
        pass


def interrupted(exc: BaseException) -> bool:
    """Ctrl-C, SIGTERM or SIGHUP, possibly wrapped in trio's exception groups."""
    from referee.signals import Terminated

    if isinstance(exc, (KeyboardInterrupt, Terminated)):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(interrupted(e) for e in exc.exceptions)
    return False


def first_of(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``exc`` itself or the first ``kind`` inside it (trio wraps errors of concurrent tasks
    in exception groups)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := first_of(inner, kind)) is not None:
                return found
    return None


def checked(run_check, *args):
    """``trio.run(run_check, *args)``; Ctrl-C, SIGTERM and a log that cannot be written end the
    command with their exit code and one line."""
    try:
        return trio.run(run_check, *args)
    except BaseException as exc:
        if interrupted(exc):
            err.print("interrupted")
            raise typer.Exit(X.INTERRUPTED) from None
        if (log_error := first_of(exc, LogError)) is not None:
            raise fail(f"{log_error}; the check was stopped") from None
        raise


#: After a sandboxed bot failed to start: the sandbox is a likely cause.
SANDBOX_HINT = ("the sandbox may be why: a bot there sees only the system, its own folder, its --cwd and the paths its command "
                f"line names, under a memory cap (--memory-mb, default {DEFAULT_MEMORY_MB} MiB); try it without --sandbox, or check "
                "those paths and the cap (referee check --sandbox BOT says more)")


def isolation_of(value: str) -> Isolation:
    """``--isolation``'s value, or a one-line error naming the choices."""
    for choice in ISOLATIONS:
        if value == choice:
            return choice
    raise fail(f"--isolation {value!r}: give one of {', '.join(ISOLATIONS)}")


def check_sandbox(wanted: bool, max_processes: int) -> None:
    """Refuse a sandbox that cannot be had (no bwrap) or a cap out of its bounds, before anything runs."""
    bounded(max_processes, Processes, "--max-processes")
    if wanted:
        try:
            find_bwrap()
        except SandboxUnavailable as exc:
            raise fail(str(exc)) from None


def parse_env(items: list[str] | None) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise fail(f"--env {item!r}: write it as NAME=VALUE")
        env[key] = value
    return env


@app.command(epilog="Example: referee check mybot.py --variant kozel --deals 8\n\n"
             "Exit codes: 0 PASS, 5 FAIL (the report says why), 2 usage, 3 the bot could not be started at all, 130 interrupted.")
def check(
    bot: Annotated[str, typer.Argument(help="The bot: a path (.py and .js run with python and node) or a quoted command line.", show_default=False)],
    deals: Annotated[int, typer.Option(help="Deals per game in each seating.", rich_help_panel=GAME_PANEL)] = 4,
    variant_id: Annotated[Optional[str], typer.Option("--variant", "-v", help="Check only this game: " + ", ".join(variant_names(refereed=True)) + ".", rich_help_panel=GAME_PANEL)] = None,
    seed: Annotated[Optional[str], typer.Option(help="Seed of the deals (and of the random sample bots).  Default: a fresh secret seed, printed in the report.", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    move_time: Annotated[float, typer.Option(help="Seconds the bot has for each move.", rich_help_panel=TC_PANEL)] = 5.0,
    startup_time: Annotated[float, typer.Option(help="Seconds the bot has to answer hello.", rich_help_panel=TC_PANEL)] = 10.0,
    time_margin: Annotated[float, typer.Option(help="Milliseconds an answer may be read late and still count (the overrun is logged).", rich_help_panel=TC_PANEL)] = 0.0,
    log_dir: Annotated[Optional[Path], typer.Option(help="Where the logs and stderr files go (default: referee-logs/check-<bot>, or -2, -3… if taken).", rich_help_panel=OUTPUT_PANEL)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Write into --log-dir even if it holds files (an earlier check's are replaced).", rich_help_panel=OUTPUT_PANEL)] = False,
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Run the bot in the sandbox leagues use; if it fails, check it without too and say whether the sandbox is why.", rich_help_panel=LIMITS_PANEL)] = False,
    cwd: Annotated[Optional[Path], typer.Option(help="The bot's working directory (relative paths on its command line are taken from it).", rich_help_panel=LIMITS_PANEL)] = None,
    memory_mb: Annotated[Optional[int], typer.Option(help=f"Memory cap of the bot's processes, in MiB: its address space, default none; in the sandbox its memory and its /tmp, default {DEFAULT_MEMORY_MB}.", rich_help_panel=LIMITS_PANEL, show_default=False)] = None,
    concurrency: Annotated[Optional[int], typer.Option("--concurrency", "-j", help="Games checked at once after the first (default: the cores, at most 3).", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    isolation: Annotated[str, typer.Option(help="strict: only the process whose turn it is runs, as in a league by default (see `referee match --help`).", rich_help_panel=LIMITS_PANEL)] = "concurrent",
) -> None:
    """Check a bot against the protocol: a few deals of every game against the sample bots, then everything it got wrong, and PASS or FAIL."""
    from referee.check import CheckOptions, missing_samples, run_check, setups
    from referee.check import render as render_check

    if missing := missing_samples():
        raise fail(f"the check plays against the sample bots, and {', '.join(missing)} is missing")
    if variant_id is not None:
        try:
            refereed_variant(variant_id)
        except RulesError as exc:
            raise fail(str(exc)) from None
    if deals < 1:
        raise fail("--deals must be at least 1")
    if concurrency is not None and concurrency < 1:
        raise fail(f"--concurrency (-j): at least 1, not {concurrency}")
    check_sandbox(sandbox, DEFAULT_PROCESSES)
    tc = bounded({"startup": startup_time, "move": move_time, "bank": None, "increment": 0.0,
                  "margin": bounded(time_margin, MarginMs, "--time-margin") / 1000}, ClockJob,
                 {"startup": "--startup-time", "move": "--move-time"}).time_control()
    bounded(memory_mb, MemoryMb | None, "--memory-mb")
    if cwd is not None:
        if not cwd.is_dir():
            raise fail(f"--cwd {cwd}: no such directory")
        cwd = cwd.resolve()
    try:
        argv = resolve_command(bot, cwd)
    except BotError as exc:
        raise fail(str(exc)) from None
    name = bot_name(bot)
    if log_dir is None:
        log_dir = claim(Path("referee-logs") / f"check-{name}", directory=True)
    elif log_dir.is_dir() and any(log_dir.iterdir()) and not overwrite:
        raise fail(f"--log-dir {log_dir} holds files already; add --overwrite to write over them (without --log-dir every check gets a folder of its own)")
    elif log_dir.exists() and not log_dir.is_dir():
        raise fail(f"--log-dir {log_dir} is not a folder")
    opts = CheckOptions(deals=deals, tc=tc, seed=seed_option(seed), only=variant_id, log_dir=log_dir, sandbox=sandbox, cwd=cwd, memory_mb=memory_mb,
                        isolation=isolation_of(isolation), **({} if concurrency is None else {"jobs": concurrency}))
    warn_short_seed(seed, opts.seed, "in the report")
    total = len(setups(variant_id))
    bar = progress_bar(total, False)

    def progress(game) -> None:
        if bar is not None:
            bar.update(task, description=game.setup.title, advance=1)

    if bar is not None:
        with bar:
            task = bar.add_task("checking", total=total)
            report = checked(run_check, bot, argv, name, opts, progress)
    else:
        report = checked(run_check, bot, argv, name, opts)
    for line in render_check(report):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if sandbox and not report.passed:
        from dataclasses import replace

        from referee.check import sandbox_verdict

        err.print("checking again without the sandbox, to see whether it is the cause…")
        plain = checked(run_check, bot, argv, name, replace(opts, sandbox=False, log_dir=opts.log_dir / "without-sandbox"))
        out.print("")
        for line in sandbox_verdict(report, plain):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
    if report.not_started is not None:
        raise typer.Exit(X.BOT_START)  # the report's last line says so: one verdict, not an error besides
    if not report.passed:
        raise typer.Exit(X.CHECK_FAILED)


@app.command()
def replay(
    log: Annotated[Path, typer.Argument(help="A match log written by `referee match`.")],
    game: Annotated[Optional[int], typer.Option(help="Only this game (from 1).")] = None,
    deal: Annotated[Optional[int], typer.Option(help="Only this deal of each game (from 1).")] = None,
    orientation: Annotated[Optional[int], typer.Option(help="Only this orientation (from 0).")] = None,
) -> None:
    """Print deals move by move: hands, every tile as \\[a|b], the line of play, and the scores."""
    from referee.logs.replay import Broken, fold, replay_lines

    check_log_path(log)
    try:
        for line in replay_lines(log, game, deal, orientation):
            for part in fold(line, out.width):  # broken between tiles, never inside one
                out.print(part, highlight=False, markup=False, soft_wrap=True)
    except Broken as exc:
        raise fail(f"cannot replay {exc}") from None
    except OSError as exc:
        raise fail(f"cannot read {log}: {exc.strerror or exc}") from None


@app.command()
def verify(log: Annotated[Path, typer.Argument(help="A match log written by `referee match`.")]) -> None:
    """Play the log's match again with the referee itself (every deal from its seed or deal file, every line each bot wrote, at the time it was read) and compare every line of the log with what the referee writes; say whether it is consistent (a cut log is incomplete)."""
    from referee.logs.records import Damaged, header_of
    from referee.logs.verify import Incomplete, Inconsistent
    from referee.logs.verify import verify as verify_log

    check_log_path(log)
    try:
        counts = verify_log(log)
    except Incomplete as exc:
        err.print(Text("INCOMPLETE: ", style="bold red") + Text(str(exc)), highlight=False, soft_wrap=True)
        raise typer.Exit(X.INCONSISTENT) from None
    except Inconsistent as exc:
        err.print(Text("INCONSISTENT: ", style="bold red") + Text(str(exc)), highlight=False, soft_wrap=True)
        raise typer.Exit(X.INCONSISTENT) from None
    except OSError as exc:
        raise fail(f"cannot read {log}: {exc.strerror or exc}") from None
    except Damaged as exc:
        raise fail(f"not a match log: {exc}") from None
    if header_of(log).format < 2:
        out.print(f"consistent: {counts.games} games, {counts.deals} deals, {counts.plays} plays and {counts.turns_checked} legal-move lists "
                  f"re-played, {counts.faults} faults — each deal, score and fault, and the result, agrees with the engine "
                  "(a log of format 1, checked as it was when written)", soft_wrap=True, highlight=False)
    else:
        out.print(f"consistent: {counts.games} games, {counts.deals} deals, {counts.plays} plays, {counts.faults} faults — all {counts.lines} lines "
                  "are what the referee writes when it plays the match again: every message to a bot, every line read, every move, fault, "
                  "score and the result", soft_wrap=True, highlight=False)
    if counts.stopped is not None:
        out.print(counts.stopped, highlight=False, soft_wrap=True)


@app.command(epilog="Examples: referee report referee-logs/match-sport-1.jsonl -O site/   ·   referee report tournaments/example.toml -O site/\n\n" + EPILOG)
def report(
    source: Annotated[Path, typer.Argument(help="A match log written by `referee match`, or a league file (.toml).", show_default=False)],
    output: Annotated[Optional[Path], typer.Option("--output", "-O", help="The folder to write the pages into (created if missing).", show_default=False)] = None,
    db: Annotated[Optional[Path], typer.Option("--db", help="League only: the results database (default: the league file's).")] = None,
    old_o: Annotated[Optional[str], typer.Option("-o", hidden=True)] = None,
) -> None:
    """Write a static web site: a league's standings, ratings and cross-table, every match, and a replay of every deal."""
    from referee.web.data import NotALog
    from referee.web.site import report_log

    if old_o is not None:  # -o was the output folder here once; it is a game option everywhere
        raise fail(f"-o is --option (a game option) in every command; write the folder as -O {old_o} or --output {old_o}")
    if output is None:
        raise fail("give the folder to write the pages into: -O DIR (or --output DIR)")
    if source.is_dir():
        raise fail(f"{source} is a folder; give a match log or a league file (.toml)")
    if not source.is_file():
        raise fail(f"{source}: no such file")
    if output.exists() and not output.is_dir():
        raise fail(f"{output} exists and is not a folder")
    try:
        writer = REPORT_WRITERS.get(source.suffix)
        if writer is not None:
            where = writer(source, db, output)
        else:
            match = report_log(source, output)
            where = f"{sum(1 for d in match['deals'] if d['slug'])} deals"
            if match["problem"]:
                err.print(f"warning: {source}: {match['problem']}", highlight=False, soft_wrap=True, markup=False)
    except NotALog as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(f"cannot write the report into {output}: {exc.strerror or exc}") from None
    out.print(f"wrote {output / 'index.html'} ({where})", highlight=False, soft_wrap=True)


def check_log_path(log: Path) -> None:
    if log.is_dir():
        raise fail(f"{log} is a folder; give a match log (a .jsonl file `referee match` wrote)")
    if not log.is_file():
        raise fail(f"{log}: no such file")


@deals_app.command("generate")
def deals_generate(
    variant_id: Annotated[str, typer.Option("--variant", "-v", help="The game the deals are for.")],
    seed: Annotated[Optional[str], typer.Option(help="Seed of the deal stream: decimal, or hexadecimal with 0x.  Default: a fresh secret seed, printed.", show_default=False)] = None,
    count: Annotated[int, typer.Option(help="How many deals.")] = 12,
    players: Annotated[Optional[int], typer.Option(help="Seats (default: the game's usual count).")] = None,
    option: Annotated[Optional[list[str]], typer.Option("--option", "-o", help="Game options that change the deal (name=value).")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-O", help="Write here instead of stdout.")] = None,
) -> None:
    """Write deals from a seed: one JSON object per line, every hand in seat order, then the bazaar or sleeping tiles."""
    from referee.engine.deal import deal_from_seed
    from referee.engine.shuffle import BLAKE2B

    try:
        v = variant(variant_id)
        shape = v.shape(players, parse_options(option))
    except RulesError as exc:
        raise fail(str(exc)) from None
    seed_value = seed_option(seed)
    if count < 1:
        raise fail("--count must be at least 1")
    if count > STREAM_DEALS:
        raise fail(f"--count {count}: the deal stream of a seed holds 2**64 deals")
    if output is not None and output.is_dir():
        raise fail(f"--output {output} is a folder; give a file name")
    # Every line is as long as the first, but for the digits of its index.
    need = count * (len(format_deal_line(deal_from_seed(seed_value, 0, shape, BLAKE2B), shape, 0)) + len(str(count - 1)))
    free = _free_bytes(output)
    if free is not None and need > free:
        raise fail(f"--count {count}: the deals need about {_size(need)}, and {output or 'standard output'} "
                   f"has {_size(free)} free")
    try:
        sink = sys.stdout if output is None else open(output, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror or exc}") from None
    bar = progress_bar(count, False)
    written = 0
    try:
        with sink if output is not None else _nothing(), bar or _nothing():
            task = bar.add_task(f"{v.id} deals", total=count) if bar is not None else None
            # Streamed a block at a time: nothing grows with the count, and a reader sees deals at once.
            while written < count:
                block = range(written, min(count, written + DEALS_PER_WRITE))
                sink.write("".join(format_deal_line(deal_from_seed(seed_value, i, shape, BLAKE2B), shape, i) + "\n" for i in block))
                written += len(block)
                if bar is not None and task is not None:
                    bar.update(task, completed=written)
    except BrokenPipeError:  # the reader stopped reading (`| head`): as quiet as a shell tool
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that the exit flush cannot fail
        return
    except OSError as exc:
        raise fail(f"cannot write {output or 'standard output'}: {exc.strerror or exc} (after {written} deals)") from None
    if output is not None or seed is None:
        err.print(f"wrote {count} {v.id} deals (seed {seed_text(seed_value)}) to {output or 'standard output'}", markup=False, highlight=False)


#: Deals a seed's stream holds (referee.engine.shuffle).
STREAM_DEALS = 1 << 64
#: Deals formatted and written at once by ``deals generate``.
DEALS_PER_WRITE = 1000


class _nothing:
    """A context manager that does nothing (``contextlib.nullcontext`` without the import)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _free_bytes(output: Path | None) -> int | None:
    """Free bytes where ``output`` goes (standard output when ``None``, if it is a file); ``None``
    when that cannot be known (a pipe, a terminal)."""
    try:
        if output is None:
            fd = sys.stdout.fileno()
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            st = os.fstatvfs(fd)
        else:
            st = os.statvfs(output.parent if str(output.parent) else Path("."))
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None
    return st.f_bavail * st.f_frsize


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return ""


@deals_app.command("show")
def deals_show(
    path: Annotated[Path, typer.Argument(help="A deal file.")],
    variant_id: Annotated[str, typer.Option("--variant", "-v", help="Check the deals against this game.")] = "sport",
    players: Annotated[Optional[int], typer.Option(help="Seats (default: the game's usual count).")] = None,
) -> None:
    """Print a deal file for people, checking every line."""
    from referee.engine.tiles import PIPS, tile_text

    try:
        v = variant(variant_id)
        shape = v.shape(players)
    except RulesError as exc:
        raise fail(str(exc)) from None
    for i, deal in enumerate(load_deal_file(path, shape)):
        out.print(f"deal {i + 1}", style="bold")
        for s, hand in enumerate(deal.hands):
            out.print(f"  seat {s}: " + " ".join(tile_text(t) for t in hand) + f"   ({sum(PIPS[t] for t in hand)} pips)", highlight=False)
        if deal.undealt:
            out.print(f"  {shape.undealt}: " + " ".join(tile_text(t) for t in deal.undealt), highlight=False)


@app.command()
def variants() -> None:
    """List the games, their seats and their options."""
    from rich.table import Table

    t = Table(pad_edge=False)
    t.add_column("variant")
    t.add_column("game")
    t.add_column("players")
    t.add_column("scored")
    t.add_column("options (default first)")
    for vid in variant_names():
        v = variant(vid)
        opts = "\n".join(f"{o.name} = {' | '.join(_show(c) for c in o.choices)}" for o in v.options) or "—"
        scored = ("penalties" if v.sense < 0 else "points") + (", to a target" if v.to_target else ", fixed deals")
        title = v.title if v.refereed else f"{v.title} (rules engine only: not refereed yet)"
        t.add_row(v.id, title, ", ".join(map(str, v.players)), scored, opts)
    out.print(t)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


@app.command()
def schema(check: Annotated[bool, typer.Option(help="Only check that protocol/schema.json is up to date.")] = False) -> None:
    """Print the protocol's JSON Schema (generated from the message structs)."""
    from protocol.schema import render

    text = render()
    if check:
        path = Path(__file__).resolve().parent.parent / "protocol" / "schema.json"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            raise fail(f"{path} is out of date; regenerate it with `python -m protocol.schema`", X.INCONSISTENT)
        out.print("protocol/schema.json is up to date")
        return
    sys.stdout.write(text)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(X.INTERRUPTED)


_add_commands()

if __name__ == "__main__":
    main()

