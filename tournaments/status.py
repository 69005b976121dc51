"""``referee league status``: what is done, failed, given up and pending, in every format.

:func:`status` gathers it as data, one item per table of the schedule known now (and one per
bye, Swiss or knockout), and a knockout's bracket (:func:`bracket`); ``to_lines`` (the default, for people), :func:`to_csv`, :func:`to_json` and
:func:`to_markdown` only format it.
"""

from __future__ import annotations

import csv
import io
import json
import time
from typing import Any

from tournaments.config import KNOCKOUT, SWISS, League
from tournaments.schedule import Knockout, State, TableKey
from tournaments.standings import state_of
from tournaments.store import MAX_ATTEMPTS, Store, run_alive

STATES = ("done", "in play", "failed", "given up", "pending")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 < 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _first_line(text: str | None) -> str:
    lines = (text or "").splitlines()
    return lines[0] if lines else "unknown"


def cut_short(runs: int, longest: float | None) -> str:
    """The warning of a league that does not advance: runs cut short before any table ended."""
    if runs < 2:
        return ""
    took = f" (the longest stored match took {longest:.0f} s)" if longest is not None else ""
    return (f"; the last {runs} runs all ended before a match finished: a run stopped before a match ends loses it, so a "
            f"league interrupted more often than its longest match lasts never advances{took}")


def bracket(league: League, state: State) -> list[dict[str, Any]]:
    """A knockout's rounds drawn so far, in bracket order: each slot's bots, whether it is a bye,
    and the bot it sends on (``None`` while its table is still to be decided).  Other schedules
    have none."""
    if league.schedule != KNOCKOUT:
        return []
    schedule = league.plan()
    assert isinstance(schedule, Knockout)
    rounds = []
    for r in sorted(state.draws):
        slots = [{"bots": list(slot), "bye": len(slot) == 1, "on": schedule.winner(state, r, slot)[0]} for slot in state.draws[r]]
        rounds.append({"round": r, "final": len(slots) == 1 and not slots[0]["bye"], "slots": slots})
    return rounds


def bracket_lines(rounds: list[dict[str, Any]]) -> list[str]:
    """The bracket in words, a line a round: ``round 1: greedy (bye); first vs twin: twin goes on``."""
    out = []
    for r in rounds:
        words = []
        for slot in r["slots"]:
            if slot["bye"]:
                words.append(f"{slot['bots'][0]} (bye)")
            else:
                on = slot["on"]
                words.append(" vs ".join(slot["bots"]) + (": to play" if on is None else f": {on} {'won' if r['final'] else 'goes on'}"))
        out.append(f"  {'final' if r['final'] else 'round ' + str(r['round'])}: {'; '.join(words)}")
    return out


def status(league: League, store: Store | None) -> dict[str, Any]:
    """Everything ``league status`` says, as data."""
    state = state_of(league, store)
    schedule = league.plan()
    keys = schedule.plan(state).tables
    rows = {t.key: t for t in store.tables()} if store is not None else {}
    holder = held_by(store)
    playing = {p.key: p for p in store.in_play()} if store is not None and holder is not None else {}
    now = time.time()
    items: list[dict[str, Any]] = []
    for key in keys:
        t = rows.get(key)
        item: dict[str, Any] = {"round": key.round, "bots": list(key.bots), "leg": key.leg, "label": key.label}
        if key in playing and (t is None or t.status != "done"):
            p = playing[key]
            item.update(status="in play", since=p.since, seconds=round(max(0.0, now - p.since), 1), run=p.run)
        elif t is None:
            item["status"] = "pending"
        elif t.status == "done":
            item.update(status="done", winner=t.winner, places={s.bot: s.place for s in t.seats},
                        points={s.bot: s.points for s in t.seats})
        else:
            item.update(status="given up" if (t.attempts or 0) >= MAX_ATTEMPTS else "failed", error=_first_line(t.error),
                        attempts=t.attempts or 0)
        items.append(item)
    byes = [{"round": r, "bot": slot[0]} for r, slots in sorted(state.draws.items()) for slot in slots if len(slot) == 1]
    counts = {s: sum(1 for i in items if i["status"] == s) for s in STATES}
    data: dict[str, Any] = {
        "league": league.name, "game": league.describe(schedule), "database": str(league.db_path),
        "created": store is not None or league.db_path.exists(), "unit": league.unit,
        "counts": {"total": len(items), **counts}, "expected": max(len(items), schedule.expected(state)),
        "tables": items, "byes": byes,
        "outside": sum(1 for k in rows if k not in set(keys)),
    }
    if league.schedule in (SWISS, KNOCKOUT):
        data["rounds"] = {"drawn": max(state.draws, default=0), "of": league.rounds if league.schedule == SWISS else None}
        if league.schedule == KNOCKOUT:
            plan = schedule.plan(state)
            final = max(state.draws, default=0)
            champion = [b for b, (r, _) in schedule.eliminated(state).items() if r > final] if plan.finished else []  # type: ignore[attr-defined]  # a knockout's schedule, by league.schedule
            data["champion"] = champion[0] if champion else None
            data["bracket"] = bracket(league, state)
    runs = store.cut_runs() if store is not None else 0
    longest = store.longest_match() if store is not None else None
    left = counts["pending"] + counts["failed"]
    data["run"] = holder
    data["eta"] = eta(left + counts["in play"], store.pace() if store is not None else None,
                      [i["seconds"] for i in items if i["status"] == "in play"])
    data["warning"] = (f"warning{cut_short(runs, longest)}; let a run go on longer".replace("warning; ", "warning: ")
                       if runs >= 2 and left else None)
    return data


def held_by(store: Store | None) -> dict[str, Any] | None:
    """The run that holds the database now (its id, since when), or ``None`` when none runs."""
    run = store.run() if store is not None else None
    if run is None or not run_alive(run):
        return None
    return {"id": run.get("id"), "since": run.get("since")}


def eta(left: int, pace: float | None, playing: list[float]) -> float | None:
    """Seconds until ``left`` tables (those in play among them, ``playing`` their seconds so far)
    are played, at ``pace`` seconds a table, as many at once as are in play now; ``None``
    before any table has a time (or when none is left: 0)."""
    if left <= 0:
        return 0.0
    if pace is None:
        return None
    lanes = max(1, len(playing))
    work = left * pace - sum(min(s, pace) for s in playing)
    return round(max(0.0, work) / lanes, 1)


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 5 s``, ``2 h 10 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def when(stamp: float) -> str:
    """A Unix time as the local clock shows it: ``14:03:27``."""
    return time.strftime("%H:%M:%S", time.localtime(stamp))


def _result(item: dict[str, Any]) -> str:
    """A done table's result in words: ``greedy won``, ``drawn``, ``a 1st, b 2nd, c 2nd``."""
    places = item["places"]
    if len(places) == 2:
        return f"{item['winner']} won" if item["winner"] else "drawn"
    return ", ".join(f"{b} {_ordinal(p)}" for b, p in sorted(places.items(), key=lambda x: (x[1], x[0])))


def _points(item: dict[str, Any]) -> str:
    points = [item["points"][b] for b in item["bots"]]
    return "–".join(map(str, points)) if len(points) == 2 else ", ".join(map(str, points))


def _note(item: dict[str, Any]) -> str:
    if item["status"] == "given up":
        return f"cut short {item['attempts']} times, last: {item['error']} (not played again; `league run --retry` does)"
    if item["status"] == "failed":
        return item["error"] + (f" (attempt {item['attempts']} of {MAX_ATTEMPTS})" if item["attempts"] else "")
    if item["status"] == "in play":
        return f"since {when(item['since'])} ({duration(item['seconds'])}), by run {item['run']}"
    return ""


def run_line(run: dict[str, Any] | None, seconds: float | None, left: int) -> str:
    """Which run holds the database and since when, and how long what is left should take."""
    held = f"run: {run['id']} since {when(run['since'])}" if run else "run: none is running"
    if not left:
        return held + "; nothing left to play"
    return held + (f"; about {duration(seconds)} left at the pace so far" if seconds is not None else "; no time to go on yet")


def to_lines(data: dict[str, Any]) -> list[str]:
    c = data["counts"]
    unit = data["unit"]
    out = [f"{data['league']}: {data['game']}",
           f"database: {data['database']}" + ("" if data["created"] else " (not created yet)"),
           f"{unit}s: {c['total']}: {c['done']} done, " + (f"{c['in play']} in play, " if c["in play"] else "")
           + f"{c['failed'] + c['given up']} failed, "
           f"{c['pending']} pending" + (f" (of {data['expected']} in all)" if data["expected"] > c["total"] else ""),
           run_line(data["run"], data["eta"], c["total"] - c["done"])]
    if "rounds" in data:
        r = data["rounds"]
        out.append(f"rounds: {r['drawn']}" + (f" of {r['of']}" if r["of"] is not None else "") + " drawn"
                   + (f"; champion: {data['champion']}" if data.get("champion") else ""))
        if data.get("bracket"):
            out += ["bracket:", *bracket_lines(data["bracket"])]
    for state in STATES:
        for item in data["tables"]:
            if item["status"] != state:
                continue
            head = f"  {state:<8} {item['label']}"
            if state == "done":
                sep = ": " if len(item["bots"]) == 2 else ": "
                out.append(f"{head}{sep}{_result(item)}{',' if len(item['bots']) == 2 else ';'} points {_points(item)}")
            elif state == "pending":
                out.append(head)
            else:
                out.append(f"{head}: {_note(item)}")
    for bye in data["byes"]:
        out.append(f"  bye      round {bye['round']}: {bye['bot']}")
    if data["warning"]:
        out.append(data["warning"])
    if data["outside"]:
        n = data["outside"]
        out.append(f"({n} stored {'match' if unit == 'pairing' else 'table'}{'es' if n != 1 and unit == 'pairing' else 's' if n != 1 else ''} "
                   f"outside the current schedule {'are' if n != 1 else 'is'} kept but not counted)")
    return out


CSV_HEADERS = ["round", "bots", "leg", "status", "result", "points", "attempts", "error", "since", "run"]


def _row(item: dict[str, Any]) -> dict[str, Any]:
    done = item["status"] == "done"
    return {"round": item["round"], "bots": " ".join(item["bots"]), "leg": item["leg"], "status": item["status"],
            "result": _result(item) if done else "", "points": _points(item) if done else "",
            "attempts": item.get("attempts", ""), "error": item.get("error", ""), "since": item.get("since", ""),
            "run": item.get("run", "")}


def to_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_HEADERS, lineterminator="\n")
    w.writeheader()
    for item in data["tables"]:
        w.writerow(_row(item))
    for bye in data["byes"]:
        w.writerow({"round": bye["round"], "bots": bye["bot"], "leg": 0, "status": "bye", "result": "", "points": "",
                    "attempts": "", "error": ""})
    return buf.getvalue()


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(data: dict[str, Any]) -> str:
    lines = [f"**{_md(data['league'])}**: {_md(data['game'])}", ""]
    lines += to_lines(data)[2:4] + ([to_lines(data)[4]] if "rounds" in data else []) + [""]
    if data.get("bracket"):
        lines += ["Bracket:", "", *(f"- {_md(line.strip())}" for line in bracket_lines(data["bracket"])), ""]
    lines += ["| round | table | status | result | points | note |", "|---:|---|---|---|---|---|"]
    for item in data["tables"]:
        done = item["status"] == "done"
        lines.append(f"| {item['round']} | {_md(TableKey(item['round'], tuple(item['bots']), item['leg']).label)} | {item['status']} | "
                     f"{_md(_result(item)) if done else ''} | {_points(item) if done else ''} | {_md(_note(item))} |")
    for bye in data["byes"]:
        lines.append(f"| {bye['round']} | {_md(bye['bot'])} | bye |  |  |  |")
    if data["warning"]:
        lines += ["", _md(data["warning"])]
    return "\n".join(lines) + "\n"
