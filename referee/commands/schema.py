"""``referee schema``: the protocol's JSON schema.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from referee.base import exitcodes as X
from referee.commands.app import app
from referee.commands.shared import fail, out


@app.command()
def schema(check: Annotated[bool, typer.Option(help="Only check that protocol/schema.json is up to date.")] = False) -> None:
    """Print the protocol's JSON Schema (generated from the message structs)."""
    from protocol.schema import render

    text = render()
    if check:
        path = Path(__file__).resolve().parents[2] / "protocol" / "schema.json"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            raise fail(f"{path} is out of date; regenerate it with `python -m protocol.schema`", X.INCONSISTENT)
        out.print("protocol/schema.json is up to date")
        return
    sys.stdout.write(text)
