"""A league's web report: the league page's document and the folder with every match's pages.

The match and deal pages, the templates and the assets are :mod:`referee.web`'s; this module adds
what only a league knows (standings, the cross-table, the schedule) on top of them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from referee.conversation import faults as F
from referee.web.data import NotALog, safe_name
from referee.web.site import copy_assets, dump_doc, write_atomic, write_match, write_page
from tournaments import standings as S
from tournaments.config import KNOCKOUT
from tournaments.schedule import TableKey
from tournaments.status import bracket


def report_league(league: Any, store: Any, out: Path, *, poll: bool = True) -> dict[str, Any]:
    """A report folder for a league: the league page, and the pages of every stored table whose
    log is there (a table's pages are rewritten only when its log changed).  ``version.js`` is
    written last, so a polling league page reloads once everything it links to is in place."""
    copy_assets(out)
    hrefs: dict[TableKey, str] = {}
    wanted = set(league.plan().plan(S.state_of(league, store)).tables)
    problems: list[str] = []
    for t in store.tables() if store is not None else []:
        if t.key not in wanted or not t.log:
            continue
        log = league.db_path.parent / t.log
        if not log.is_file():
            continue
        folder = safe_name(t.key.stem)
        try:
            write_match(log, out / "matches" / folder, "../../", up={"href": "../../index.html", "label": league.name}, force=False)
        except NotALog as exc:
            problems.append(str(exc))
            continue
        hrefs[t.key] = f"matches/{folder}/index.html"
    doc = league_doc(league, store, hrefs)
    doc["problems"] = problems
    write_page(out / "index.html", "league.html", doc, "", up=None, poll=poll)
    version = hashlib.sha256(dump_doc(doc).encode()).hexdigest()[:16]
    write_atomic(out / "version.js", f'window.refereeVersion && window.refereeVersion("{version}");\n')
    return doc


def league_doc(league: Any, store: Any, match_href: dict[TableKey, str]) -> dict[str, Any]:
    """The league page's document: the standings exactly as ``referee league table --format json``
    gives them, the cross-table, and every stored table of the schedule.

    ``match_href`` maps a table to its match page (tables without a log have none).  Two bots a
    table: ``cross[a][b]`` is a's last match against b, as before tables of N.  Tables of N (and
    Swiss and knockout leagues): ``tables`` lists every table with its bots' places and points,
    and ``head_to_head[a][b]`` counts the tables a finished ahead of, level with and behind b.
    """
    s = S.standings(league, store)
    doc = json.loads(S.to_json(s))
    keys = league.plan().plan(S.state_of(league, store)).tables
    wanted = set(keys)
    rows = [t for t in (store.tables() if store is not None else []) if t.key in wanted]
    matches = []
    tables = []
    cross: dict[str, dict[str, dict[str, Any]]] = {b.name: {} for b in league.bots}
    for t in rows:
        href = match_href.get(t.key)
        seats = {x.bot: x for x in t.seats}
        a, b = t.key.bots[0], t.key.bots[-1]
        score_a = seats[a].score if t.status == "done" else None
        matches.append({"a": a, "b": b, "status": t.status, "score_a": score_a,
                        "points_a": seats[a].points if a in seats else None, "points_b": seats[b].points if b in seats else None,
                        "error": t.error, "href": href})
        tables.append({"label": t.key.label, "round": t.key.round, "bots": list(t.key.bots), "status": t.status, "error": t.error,
                       "href": href, "places": {x.bot: x.place for x in t.seats}, "points": {x.bot: x.points for x in t.seats}})
        if t.status != "done" or len(t.key.bots) != 2:
            continue
        for me, other in ((a, b), (b, a)):
            cross[me][other] = {"score": seats[me].score, "for": seats[me].points, "against": seats[other].points, "href": href}
    done = {t.key for t in rows}
    pending = [{"a": k.bots[0], "b": k.bots[-1], "label": k.label} for k in keys if k not in done]
    # The table's cells as `referee league table` prints them, so both show the same figures.
    doc["table"] = {"headers": S.text_headers(s), "rows": [S._cells(r, s) for r in s.rows]}
    doc.update(kind="league", sense=league.variant.sense, fault_kinds=list(F.KINDS),
               bots=[b.name for b in league.bots], cross=cross, matches=matches, pending=pending,
               footnotes=S.footnotes(s), tables_of_n=s.n > 2 or league.schedule in ("swiss", "knockout"), tables=tables,
               unit=league.unit)
    if doc["tables_of_n"]:
        doc["head_to_head"] = s.head_to_head
    # A knockout's bracket, with its byes, as `league status` gives it.
    doc["bracket"] = bracket(league, S.state_of(league, store))
    doc["leader"] = leader(s)
    return doc


def leader(s: S.Standings) -> dict[str, Any] | None:
    """Who heads the standings, in the words the page's card gives them: a knockout's champion,
    the winner of a league whose every table is played (or the bots that share first place), or
    the bots that lead a league still going; ``None`` before any table."""
    if not s.rows or not s.done:
        return None
    champion = [r.bot for r in s.rows if r.stage == "won"]
    if champion:
        return {"bots": champion, "label": "won the knockout"}
    first = [r.bot for r in s.rows if r.rank == s.rows[0].rank]
    if s.done >= max(s.pairings, s.expected) and not s.failed and s.league.schedule != KNOCKOUT:
        return {"bots": first, "label": "won the league" if len(first) == 1 else "share first place"}
    return {"bots": first, "label": "leads the table" if len(first) == 1 else "lead the table"}
