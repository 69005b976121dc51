"""``referee report``: the web report of a log, a folder of logs or a league.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from referee.commands.app import EPILOG, REPORT_WRITERS, app
from referee.commands.shared import err, fail, out


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
