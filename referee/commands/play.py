"""``referee play``: a person against bots in the browser.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import trio
import typer

from referee.base import exitcodes as X
from referee.base.clock import TimeControl
from referee.base.errors import BotError, BotStartError, LogError
from referee.bots.bot import Bot
from referee.bots.sandbox import DEFAULT_PROCESSES
from referee.bots.spawn import Confinement, resolve_command
from referee.commands.app import EPILOG, app
from referee.commands.options import (
    GAME_PANEL,
    LIMITS_PANEL,
    OUTPUT_PANEL,
    SANDBOX_HINT,
    TC_PANEL,
    check_sandbox,
    distinct_name,
    drop_if_empty,
    file_sha256,
    game_setup,
    interrupted_result,
    log_path_of,
    print_result,
    seed_option,
)
from referee.commands.shared import err, fail, first_of, held_signals, interrupted, say
from referee.conversation.log import stderr_dir_of
from referee.engine import variant_names
from referee.engine.core.errors import BadDeal
from referee.engine.core.game import Variant
from referee.matches.job import MAX_NAME
from referee.matches.match import orientations
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec

if TYPE_CHECKING:
    from referee.play.seat import Person


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

    The table is served on 127.0.0.1 only, at an address with a secret token, printed here.  You play every seating of the same deals; the match is logged (and verifies) as any match.
    """
    from referee.base.clock import MAX_SECONDS
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
    from referee.base.clock import MAX_SECONDS

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
                drop_if_empty(claimed)
            raise fail(str(problem)) from None
        if (problem := first_of(exc, Abandoned)) is not None:
            say(err, f"interrupted: {problem}; the log so far is in {spec.log_path}")
            raise typer.Exit(X.INTERRUPTED) from None
        if not interrupted(exc):
            raise
        return interrupted_result(exc, spec)


def login_name() -> str:
    """The person's login name (``referee play``'s default name for them), or ``person``."""
    import getpass

    try:
        name = getpass.getuser()
    except (OSError, KeyError):
        return "person"
    return name if 0 < len(name) <= MAX_NAME and name.isprintable() else "person"
