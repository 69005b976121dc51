"""The ladder's web page: the standings with their marks, the tables in play, the recent tables
with their replays and each bot's history, rewritten by the host after every table.

The match pages, the templates and the assets are :mod:`referee.web`'s (as a league's report,
:mod:`tournaments.report`); the document is the data of ``ladder table`` and ``ladder status``
(:mod:`tournaments.ladder.status`), so the page and the commands show the same figures.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from referee.web.data import NotALog
from referee.web.site import copy_assets, dump_doc, write_atomic, write_match, write_page
from tournaments.ladder import status as T
from tournaments.ladder.config import Ladder
from tournaments.ladder.host import table_stem
from tournaments.status import duration, when
from tournaments.store import Store

#: Tables shown (with their replays) in "Recent tables".
RECENT = 40
#: Tables of a bot's history with a link to their replay (the older ones are listed without).
REPLAYS = 200


def report_ladder(ladder: Ladder, store: Store | None, out: Path, *, poll: bool = True) -> dict[str, Any]:
    """Write the ladder's page into ``out`` (and the match pages of its recent tables, each
    written once); ``version.js`` last, so a polling page reloads once everything is in place."""
    copy_assets(out)
    ratings, entries, settled, _ = T.fit(ladder, store)
    newest = sorted(settled, key=lambda s: -s.table.number)
    problems: list[str] = []
    hrefs: dict[int, str] = {}
    for s in newest[:REPLAYS]:
        if not s.log:
            continue
        log = ladder.league.db_path.parent / s.log
        if not log.is_file():
            continue
        folder = table_stem(s.table.number)
        try:
            write_match(log, out / "tables" / folder, "../../", up={"href": "../../index.html", "label": ladder.name}, force=False)
        except NotALog as exc:
            problems.append(str(exc))
            continue
        hrefs[s.table.number] = f"tables/{folder}/index.html"
    status = T.status(ladder, store)
    for p in status["in_play"]:
        p["since_text"] = f"{when(p['since'])} ({duration(p['seconds'])})"
    recent = []
    for s in newest[:RECENT]:
        margins = [float(m) for m in s.outcome.margins] if s.outcome is not None else []
        recent.append({"table": s.table.number, "bots": list(s.table.key.bots), "deal_set": s.table.deal_set, "margins": margins,
                       "failed": None if s.outcome is not None else (s.error or "").split("\n")[0], "href": hrefs.get(s.table.number)})
    history = []
    for e in entries:
        rows, total, count = [], 0.0, 0
        for s in settled:
            if s.outcome is None or e.name not in s.outcome.bots:
                continue
            i = s.outcome.bots.index(e.name)
            total, count = total + float(s.outcome.margins[i]), count + 1
            rows.append({"table": s.table.number, "against": [b for b in s.outcome.bots if b != e.name],
                         "margin": float(s.outcome.margins[i]), "mean": total / count, "href": hrefs.get(s.table.number)})
        history.append({"bot": e.name, "state": e.state, "joined": e.active_from, "why": e.suspended_why, "tables": rows[::-1]})
    doc = {"kind": "ladder", "ladder": ladder.name, "game": ladder.describe(), "standings": T.standings(ladder, store),
           "status": status, "recent": recent, "history": history, "problems": problems}
    write_page(out / "index.html", "ladder.html", doc, "", up=None, poll=poll)
    version = hashlib.sha256(dump_doc(doc).encode()).hexdigest()[:16]
    write_atomic(out / "version.js", f'window.refereeVersion && window.refereeVersion("{version}");\n')
    return doc
