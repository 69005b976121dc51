"""``referee verify``: a match log played again and compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from referee.base import exitcodes as X
from referee.commands.app import app
from referee.commands.options import check_log_path
from referee.commands.shared import err, fail, out


@app.command()
def verify(log: Annotated[Path, typer.Argument(help="A match log written by `referee match`.")]) -> None:
    """Play the log's match again with the referee itself (every deal from its seed or deal file, every line each bot wrote, at the time it was read) and compare every line of the log with what the referee writes; say whether it is consistent (a cut log is incomplete)."""
    from referee.audit.verify import Incomplete, Inconsistent
    from referee.audit.verify import verify as verify_log
    from referee.records.records import Damaged, header_of

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
        raise fail(deal_file_words(log) or f"not a match log: {exc}") from None
    header = header_of(log)
    games = games_text(counts.games, len(header.orientations))
    if header.format < 2:
        out.print(f"consistent: {games}, {counts.deals} deals, {counts.plays} plays and {counts.turns_checked} legal-move lists "
                  f"re-played, {counts.faults} faults — each deal, score and fault, and the result, agrees with the engine "
                  "(a log of format 1, checked as it was when written)", soft_wrap=True, highlight=False)
    else:
        out.print(f"consistent: {games}, {counts.deals} deals, {counts.plays} plays, {counts.faults} faults — all {counts.lines} lines "
                  "are what the referee writes when it plays the match again: every message to a bot, every line read, every move, fault, "
                  "score and the result", soft_wrap=True, highlight=False)
    if counts.stopped is not None:
        out.print(counts.stopped, highlight=False, soft_wrap=True)


def games_text(games: int, orientations: int) -> str:
    """The games played, as a match counts them: "1 game in each of 2 orientations" (a one-game
    match plays its game once per orientation; "2 games" read as a match of two)."""
    if orientations > 1 and games % orientations == 0:
        per = games // orientations
        return f"{per} game{'' if per == 1 else 's'} in each of {orientations} orientations"
    return f"{games} game{'' if games == 1 else 's'} over {orientations} orientation{'' if orientations == 1 else 's'}"


def deal_file_words(path: Path) -> str | None:
    """When ``path`` is a deal file (its first line a deal: ``hands`` and no record kind ``k``),
    the one line that says so; else ``None``."""
    import json

    from protocol.messages import too_deep

    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 20)
        if too_deep(first):  # no deal is nested deeply, and json's parser recurses
            return None
        obj = json.loads(first)
    except (OSError, ValueError):
        return None
    if isinstance(obj, dict) and "hands" in obj and "k" not in obj:
        return (f"{path} is a deal file (one deal a line, as `referee deals generate` writes), not a match log: "
                "verify the log of a match that played it (`referee match --deals-file`)")
    return None
