"""A league's web report: the league page's document and the folder with every match's pages.

The match and deal pages, the templates and the assets are :mod:`referee.web`'s; this module adds
what only a league knows (standings, the cross-table, the schedule) on top of them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from referee import faults as F
from referee.web.data import NotALog
from referee.web.site import copy_assets, dump_doc, match_folder, write_atomic, write_match, write_page
from tournaments import standings as S


def report_league(league: Any, store: Any, out: Path, *, poll: bool = True) -> dict[str, Any]:
    """A report folder for a league: the league page, and the pages of every stored match whose
    log is there (a match's pages are rewritten only when its log changed).  ``version.js`` is
    written last, so a polling league page reloads once everything it links to is in place."""
    copy_assets(out)
    hrefs: dict[tuple[str, str], str] = {}
    wanted = set(league.pairings())
    problems: list[str] = []
    for m in store.matches() if store is not None else []:
        if m.pair not in wanted or not m.log:
            continue
        log = league.db_path.parent / m.log
        if not log.is_file():
            continue
        folder = match_folder(m.pair)
        try:
            write_match(log, out / "matches" / folder, "../../", up={"href": "../../index.html", "label": league.name}, force=False)
        except NotALog as exc:
            problems.append(str(exc))
            continue
        hrefs[m.pair] = f"matches/{folder}/index.html"
    doc = league_doc(league, store, hrefs)
    doc["problems"] = problems
    write_page(out / "index.html", "league.html", doc, "", up=None, poll=poll)
    version = hashlib.sha256(dump_doc(doc).encode()).hexdigest()[:16]
    write_atomic(out / "version.js", f'window.refereeVersion && window.refereeVersion("{version}");\n')
    return doc


def league_doc(league: Any, store: Any, match_href: dict[tuple[str, str], str]) -> dict[str, Any]:
    """The league page's document: the standings exactly as ``referee league table --format json``
    gives them, the cross-table, and every stored match of the schedule.

    ``match_href`` maps a pairing to its match page (pairings without a log have none).
    """
    s = S.standings(league, store)
    doc = json.loads(S.to_json(s))
    wanted = set(league.pairings())
    rows = [m for m in (store.matches() if store is not None else []) if m.pair in wanted]
    matches = []
    cross: dict[str, dict[str, dict[str, Any]]] = {b.name: {} for b in league.bots}
    for m in rows:
        href = match_href.get(m.pair)
        matches.append({"a": m.bot_a, "b": m.bot_b, "status": m.status, "score_a": m.score_a,
                        "points_a": m.points_a, "points_b": m.points_b, "error": m.error, "href": href})
        if m.status != "done":
            continue
        assert m.score_a is not None
        for me, other, score, pf, pa in ((m.bot_a, m.bot_b, m.score_a, m.points_a, m.points_b),
                                         (m.bot_b, m.bot_a, 1.0 - m.score_a, m.points_b, m.points_a)):
            cross[me][other] = {"score": score, "for": pf, "against": pa, "href": href}
    done = {m.pair for m in rows}
    pending = [{"a": a, "b": b} for a, b in league.pairings() if (a, b) not in done]
    # The table's cells as `referee league table` prints them, so both show the same figures.
    doc["table"] = {"headers": S.TEXT_HEADERS, "rows": [S._cells(r) for r in s.rows]}
    doc.update(kind="league", sense=league.variant.sense, fault_kinds=list(F.KINDS),
               bots=[b.name for b in league.bots], cross=cross, matches=matches, pending=pending,
               footnotes=S.footnotes(s))
    return doc
