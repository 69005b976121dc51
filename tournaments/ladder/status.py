"""``referee ladder table`` and ``referee ladder status``: the ladder as data, in every format.

:func:`settled_tables` reads what the store holds of every table chosen (the outcome the
ratings take, who forfeited); :func:`standings` fits the ratings to them and gives the order
with its separated/tied marks; :func:`status` adds the tables in play (since when, which run
holds the ladder), the tables per bot and an ETA to certification.  ``to_*`` only format.
Every reader here opens the database as ``league status`` does (a read never writes), so both
commands work from any shell while a host runs.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tournaments.ladder import store as LS
from tournaments.ladder.config import Ladder
from tournaments.ladder.rating import Outcome, Ratings
from tournaments.ladder.store import Chosen
from tournaments.status import duration, held_by, when
from tournaments.store import Store


@dataclass(frozen=True)
class Settled:
    """A chosen table the store holds: its outcome (``None``: it failed), the bots that forfeited
    at it, the deals it played, its log, its error."""

    table: Chosen
    outcome: Outcome | None
    forfeits: frozenset[str]
    deals: int
    seconds: float | None
    log: str | None
    error: str | None


def outcome_of(table: Chosen, margins: Sequence[Sequence[float]], deals: int) -> Outcome:
    """The outcome of ``table`` from every bot's paired margin on every board (as the store keeps
    them, ``[board][seat]``, seats in the order of ``table.key.bots``): each bot's mean margin a
    deal, as exact fractions of the stored numbers, summing to 0, weighed by the ``deals`` the
    table played (every seating of every board, as ``matches.deals`` counts them)."""
    names = table.key.bots
    boards = len(margins)
    means = [sum((Fraction(row[i]) for row in margins), Fraction(0)) / max(1, boards) for i in range(len(names))]
    drift = sum(means, Fraction(0)) / len(names)  # rounding of the stored means: spread evenly
    return Outcome(table=table.number, deal_set=table.deal_set, bots=tuple(names), margins=tuple(m - drift for m in means),
                   deals=deals)


def blamed(table: Chosen, error: str | None) -> frozenset[str]:
    """The bots a failed table counts against: those its error names as not started."""
    first = (error or "").splitlines()[0] if error else ""
    if "could not be started" not in first:
        return frozenset()
    return frozenset(b for b in table.bots if f"'{b}'" in first or f"{b}:" in first or f" {b} " in first)


def settled_tables(store: Store, chosen: dict[int, Chosen], max_faults: int) -> list[Settled]:
    """Every chosen table the store holds (done or failed), in table order."""
    rows = {t.key: t for t in store.tables()}
    margins = store.boards(rows)
    faults: Counter[tuple[int, str]] = Counter()
    for r, bot in store.conn.execute("SELECT round, bot FROM faults JOIN matches USING (round, bots, leg) WHERE status = 'done'"):
        faults[(r, bot)] += 1
    extra = {r: (d, s) for r, d, s in store.conn.execute("SELECT round, deals, seconds FROM matches")}
    out = []
    for n in sorted(chosen):
        table = chosen[n]
        row = rows.get(table.key)
        if row is None:
            continue
        deals, seconds = extra.get(n, (0, None))
        if row.status == "done":
            out.append(Settled(table, outcome_of(table, margins.get(table.key, []), deals or 0),
                               frozenset(b for b in table.bots if faults[(n, b)] >= max_faults), deals or 0, seconds, row.log, None))
        else:
            out.append(Settled(table, None, blamed(table, row.error), 0, seconds, row.log, row.error))
    return out


def fit(ladder: Ladder, store: Store | None) -> tuple[Ratings, list[LS.Entry], list[Settled], dict[int, Chosen]]:
    """The ratings over every stored outcome, with the entries, the settled tables and every chosen one."""
    ratings = Ratings(ladder.resolution)
    if store is None:
        return ratings, [], [], {}
    entries = LS.entries(store)
    chosen = LS.chosen(store)
    settled = settled_tables(store, chosen, ladder.league.max_faults)
    entered = set()
    for e in entries:
        if e.active_from is not None:
            ratings.add_bot(e.name)
            entered.add(e.name)
    for s in settled:
        if s.outcome is not None:
            for b in s.outcome.bots:
                if b not in entered:
                    ratings.add_bot(b)
                    entered.add(b)
            ratings.add(s.outcome)
    return ratings, entries, settled, chosen


#: The games whose club rating ``ladder table`` adds (seed 002 is Kozel's: penalties to a hundred).
CLUB_VARIANTS = ("kozel",)


def club(ladder: Ladder, store: Store | None, settled: Sequence[Settled]) -> dict[str, tuple[int, int]] | None:
    """Seed 002's club rating (:mod:`tournaments.ladder.club`) of every bot over the games of the
    stored tables, with its games: ``None`` for a game that is not Kozel.  A game one of whose
    deals ended by a player's timeout counts as cut short by it (the player out gains nothing)."""
    from tournaments.ladder.club import ClubRating

    if ladder.league.variant.id not in CLUB_VARIANTS or store is None:
        return None
    rating = ClubRating()
    numbers = [s.table.number for s in settled if s.outcome is not None]
    for (text,) in store.conn.execute(f"SELECT result FROM matches WHERE status = 'done' AND round IN ({','.join('?' * len(numbers))}) "
                                      "ORDER BY round", numbers):
        result = json.loads(text)
        names = [b["name"] for b in result["bots"]]
        timeouts = {(f["game"], f["deal"]): f["bot"] for f in result["faults"] if f["kind"] == "timeout"}
        for game in result["game_results"]:
            out = next((timeouts[(d["game"], d["deal"])] for d in result["deals"]
                        if d["game"] == game["game"] and d["end"] == "fault" and (d["game"], d["deal"]) in timeouts), None)
            rating.add_game(dict(zip(names, game["points"])), out)
    return {name: (rating.totals[name], rating.games[name]) for name in rating.totals}


SIGNS = {"separated": ">", "tied": "=", "open": "?"}


def _finite(x: float) -> float | None:
    """A bound of an interval as JSON can hold it: ``None`` while it is infinite (too few tables)."""
    return round(x, 3) if math.isfinite(x) else None


def standings(ladder: Ladder, store: Store | None) -> dict[str, Any]:
    """The standings as data: every rated bot best first, with its interval, tables, deals, state,
    and the mark between it and the next one."""
    ratings, entries, settled, _ = fit(ladder, store)
    rows = ratings.standings()
    marks = ratings.marks()
    clubbed = club(ladder, store, settled)
    state = {e.name: e.state for e in entries}
    forfeits = Counter(b for s in settled for b in s.forfeits)
    out = []
    for i, r in enumerate(rows):
        mark = marks[i].verdict if i < len(marks) else None
        out.append({"rank": i + 1, "bot": r.name, "rating": round(r.rating, 3), "low": _finite(r.lo), "high": _finite(r.hi),
                    "tables": r.tables, "deals": r.deals, "forfeits": forfeits[r.name], "state": state.get(r.name, "?"),
                    "mark": mark, **({} if clubbed is None else {"club": clubbed.get(r.name, (0, 0))[0]})})
    return {"ladder": ladder.name, "game": ladder.describe(), "resolution": ladder.resolution,
            "certified": bool(rows) and len(rows) >= 2 and ratings.certified(), "rows": rows and out or [],
            "open": sum(1 for m in marks if m.verdict == "open"), "club": clubbed is not None}


def eta(ratings: Ratings, resolution: float, deals_a_second: float | None) -> tuple[int | None, float | None]:
    """Deals still needed to certify the order, and the seconds they take at ``deals_a_second``:
    an estimate (``None`` while some interval is not finite yet).  An open mark between two bots whose intervals are ``h`` wide (the two
    together) closes when ``h`` shrinks below their difference (separated) or the resolution
    (tied), and ``h`` shrinks as one over the square root of the deals played."""
    rows = {r.name: r for r in ratings.standings()}
    need = 0.0
    marks = ratings.marks()
    if not marks:
        return None, None
    for m in marks:
        if m.verdict != "open":
            continue
        u, lo = rows[m.upper], rows[m.lower]
        h = math.hypot((u.hi - u.lo) / 2, (lo.hi - lo.lo) / 2)
        if not math.isfinite(h):  # too few tables for an interval yet: no estimate
            return None, None
        target = max(abs(u.rating - lo.rating), resolution)
        deals = max(1, u.deals + lo.deals)
        need += deals * max(0.0, (h / target) ** 2 - 1)
    deals_needed = int(math.ceil(need))
    if deals_a_second is None or deals_a_second <= 0:
        return deals_needed, None
    return deals_needed, round(need / deals_a_second, 1)


def status(ladder: Ladder, store: Store | None) -> dict[str, Any]:
    """Everything ``ladder status`` says, as data."""
    ratings, entries, settled, chosen = fit(ladder, store)
    holder = held_by(store)
    now = time.time()
    playing: list[dict[str, Any]] = []
    if store is not None and holder is not None:
        by_round = {c.key: c for c in chosen.values()}
        for p in store.in_play():
            c = by_round.get(p.key)
            if c is not None:
                playing.append({"table": c.number, "bots": list(c.bots), "deal_set": c.deal_set, "since": p.since,
                                "seconds": round(max(0.0, now - p.since), 1), "run": p.run})
    done = [s for s in settled if s.outcome is not None]
    per_bot: Counter[str] = Counter(b for s in done for b in s.table.bots)
    deals_bot: Counter[str] = Counter()
    for s in done:
        for b in s.table.bots:
            deals_bot[b] += s.deals
    lanes = max(1, len(playing))
    seconds = sum(s.seconds or 0.0 for s in done[-50:])
    rate = sum(s.deals for s in done[-50:]) / seconds * lanes if seconds > 0 else None
    deals_needed, eta_seconds = eta(ratings, ladder.resolution, rate)
    marks = ratings.marks()
    certified = len(marks) >= 1 and ratings.certified()
    in_play_by = Counter(b for p in playing for b in p["bots"])
    return {
        "ladder": ladder.name, "game": ladder.describe(), "database": str(ladder.league.db_path),
        "created": store is not None, "run": holder,
        "tables": {"chosen": len(chosen), "done": len(done), "failed": len(settled) - len(done), "in_play": len(playing)},
        "deals": sum(s.deals for s in done),
        "in_play": playing,
        "entries": [{"name": e.name, "state": e.state, "origin": e.origin, "active_from": e.active_from,
                     "retired_from": e.retired_from, "suspended_from": e.suspended_from, "suspended_why": e.suspended_why,
                     "tables": per_bot[e.name], "deals": deals_bot[e.name], "in_play": in_play_by[e.name]} for e in entries],
        "certified": certified, "open_marks": sum(1 for m in marks if m.verdict == "open"),
        "eta": {"deals": deals_needed, "seconds": eta_seconds},
    }


# -- formats -----------------------------------------------------------------------------------


def status_lines(data: dict[str, Any]) -> list[str]:
    t = data["tables"]
    run = data["run"]
    out = [f"{data['ladder']}: {data['game']}",
           f"database: {data['database']}" + ("" if data["created"] else " (not created yet)"),
           f"run: {run['id']} since {when(run['since'])}" if run else "run: none is running (referee ladder run starts one)",
           f"tables: {t['done']} done, {t['in_play']} in play, {t['failed']} failed; {data['deals']} deals"]
    if data["certified"]:
        out.append("order: certified (every two neighbours separated or tied)")
    elif data["eta"]["deals"] is not None:
        e = data["eta"]
        left = f"about {e['deals']} more deals" + (f", {duration(e['seconds'])} at the pace so far" if e["seconds"] is not None else "")
        out.append(f"order: {data['open_marks']} mark{'s' if data['open_marks'] != 1 else ''} open; certified in {left} (an estimate)")
    for p in data["in_play"]:
        out.append(f"  in play  table {p['table']}: {' vs '.join(p['bots'])} (deal set {p['deal_set']}), since {when(p['since'])} "
                   f"({duration(p['seconds'])}), by run {p['run']}")
    for e in data["entries"]:
        since = (f"from table {e['active_from']}" if e["active_from"] is not None else "joins at the next table")
        extra = (f"; retired from table {e['retired_from']}" if e["retired_from"] is not None else
                 f"; suspended from table {e['suspended_from']}: {e['suspended_why']}" if e["suspended_from"] is not None else "")
        out.append(f"  {e['state']:<9} {e['name']}: {e['tables']} table{'s' if e['tables'] != 1 else ''}, {e['deals']} deals, "
                   f"{since}{extra}")
    return out


STATUS_CSV = ["name", "state", "origin", "active_from", "retired_from", "suspended_from", "tables", "deals", "in_play", "suspended_why"]


def status_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, STATUS_CSV, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for e in data["entries"]:
        w.writerow({k: "" if v is None else v for k, v in e.items()})
    return buf.getvalue()


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def status_markdown(data: dict[str, Any]) -> str:
    lines = [f"**{_md(data['ladder'])}**: {_md(data['game'])}", "", *(_md(x) for x in status_lines(data)[2:5]), ""]
    if data["in_play"]:
        lines += ["| table | bots | deal set | since | by run |", "|---:|---|---:|---|---|"]
        lines += [f"| {p['table']} | {_md(' vs '.join(p['bots']))} | {p['deal_set']} | {when(p['since'])} ({duration(p['seconds'])}) "
                  f"| {_md(p['run'])} |" for p in data["in_play"]]
        lines.append("")
    lines += ["| bot | state | tables | deals | in play | from table |", "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {_md(e['name'])} | {e['state']} | {e['tables']} | {e['deals']} | {e['in_play']} | "
              f"{'' if e['active_from'] is None else e['active_from']} |" for e in data["entries"]]
    return "\n".join(lines) + "\n"


TABLE_HEADERS = ["rank", "bot", "rating", "95% interval", "tables", "deals", "forfeits", "state", "next"]


def _headers(data: dict[str, Any]) -> list[str]:
    return TABLE_HEADERS + (["club"] if data.get("club") else [])


def _row(r: dict[str, Any]) -> list[str]:
    return _cells(r) + ([str(r["club"])] if "club" in r else [])


def _cells(r: dict[str, Any]) -> list[str]:
    interval = "[?]" if r["low"] is None or r["high"] is None else f"[{r['low']:+.2f}, {r['high']:+.2f}]"
    return [str(r["rank"]), r["bot"], f"{r['rating']:+.2f}", interval, str(r["tables"]),
            str(r["deals"]), str(r["forfeits"]), r["state"], "" if r["mark"] is None else f"{SIGNS[r['mark']]} {r['mark']}"]


def table_note(data: dict[str, Any]) -> str:
    club_note = "; club: seed 002's club rating over the games played (Kozel)" if data.get("club") else ""
    return (f"ratings: points a deal over the field's mean, 95% intervals; next: the mark to the bot below (> separated, = tied "
            f"within {data['resolution']:g} a deal, ? open); order {'certified' if data['certified'] else 'not certified yet'}"
            + club_note)


def table_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rank", "bot", "rating", "low", "high", "tables", "deals", "forfeits", "state", "mark"]
               + (["club"] if data.get("club") else []))
    for r in data["rows"]:
        w.writerow([r["rank"], r["bot"], r["rating"], r["low"], r["high"], r["tables"], r["deals"], r["forfeits"], r["state"],
                    r["mark"] or "", *([r["club"]] if "club" in r else [])])
    return buf.getvalue()


def table_markdown(data: dict[str, Any]) -> str:
    heads = _headers(data)
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" if h in ("bot", "state", "next") else "---:" for h in heads) + "|"]
    lines += ["| " + " | ".join(_md(c) for c in _row(r)) + " |" for r in data["rows"]]
    return "\n".join([*lines, "", table_note(data)]) + "\n"


def rich_table(data: dict[str, Any]):
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    title = f"{data['ladder']}: {data['game']}"
    t = Table(title=escape(title), title_justify="left", header_style="bold", pad_edge=False, box=box.SIMPLE_HEAD,
              collapse_padding=True)
    for h in _headers(data):
        t.add_column(h, justify="left" if h in ("bot", "state", "next") else "right", no_wrap=True)
    for r in data["rows"]:
        t.add_row(*(escape(c) for c in _row(r)))
    t.caption = escape(table_note(data))
    t.caption_justify = "left"
    return t


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
