"""The ``referee`` typer app, its ``deals`` group, the commands other packages add through the
``referee.commands`` entry point, and :func:`main`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import typer

from referee.base import exitcodes as X
from referee.commands.shared import err

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


#: ``referee report FILE`` for files another package knows, by suffix (``.toml``: a league).
#: A writer makes the report folder and returns what it wrote, in words ("3 of 6 pairings played").
ReportWriter = Callable[[Path, Optional[Path], Path], str]
REPORT_WRITERS: dict[str, ReportWriter] = {}

#: The entry point group through which packages built on the referee add their commands: each
#: entry is a function called with the app and :data:`REPORT_WRITERS` (``tournaments`` adds
#: ``league``).  The arrow stays one way: the referee never imports them by name.
COMMANDS_GROUP = "referee.commands"


def add_commands() -> None:
    from importlib.metadata import entry_points

    for entry in entry_points(group=COMMANDS_GROUP):
        entry.load()(app, REPORT_WRITERS)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(X.INTERRUPTED)
