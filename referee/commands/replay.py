"""``referee replay``: a match log shown deal by deal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from referee.commands.app import app
from referee.commands.options import check_log_path
from referee.commands.shared import fail, out


@app.command()
def replay(
    log: Annotated[Path, typer.Argument(help="A match log written by `referee match`.")],
    game: Annotated[Optional[int], typer.Option(help="Only this game (from 1).")] = None,
    deal: Annotated[Optional[int], typer.Option(help="Only this deal of each game (from 1).")] = None,
    orientation: Annotated[Optional[int], typer.Option(help="Only this orientation (from 0).")] = None,
) -> None:
    """Print deals move by move: hands, every tile as \\[a|b], the line of play, and the scores."""
    from referee.audit.replay import Broken, fold, replay_lines

    check_log_path(log)
    try:
        for line in replay_lines(log, game, deal, orientation):
            for part in fold(line, out.width):  # broken between tiles, never inside one
                out.print(part, highlight=False, markup=False, soft_wrap=True)
    except Broken as exc:
        raise fail(f"cannot replay {exc}") from None
    except OSError as exc:
        raise fail(f"cannot read {log}: {exc.strerror or exc}") from None
