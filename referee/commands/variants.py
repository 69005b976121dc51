"""``referee variants``: the games and their options.
"""

from __future__ import annotations

from typing import Any

from referee.commands.app import app
from referee.commands.shared import out
from referee.engine import variant, variant_names


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
