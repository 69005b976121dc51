"""The standings of a league, computed from the stored matches, and their formats.

Only the pairings of the league file's current schedule count (a bot removed from the file, or
pairings outside a gauntlet, stay in the database but not in the table).

Columns: rank, bot, matches, won/drawn/lost, match points (the file's ``[points]``), points
for and against and their difference, the rating with its 95% interval
(:mod:`tournaments.ratings`), and the fault counts by kind (:mod:`referee.faults`).

*Points for* are what the bot's side wrote over its matches (both orientations), *against*
what its opponents wrote.  ``diff`` is ``for − against`` in the game's sense: in penalty games
(kozel) what a side writes counts against it, so ``diff = against − for`` and a positive
difference is good in every game.

Order: match points, then the difference, then the rating, then the name; bots level on
points and difference share a rank.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from referee import faults as F
from tournaments import ratings
from tournaments.config import League
from tournaments.store import Store

FORMATS = ("table", "csv", "json", "markdown")


@dataclass
class Row:
    rank: int
    bot: str
    matches: int = 0
    won: int = 0
    drawn: int = 0
    lost: int = 0
    points: float = 0.0
    pts_for: int = 0
    pts_against: int = 0
    diff: int = 0
    boards: int = 0
    rating: float = 0.0
    rating_low: float = 0.0
    rating_high: float = 0.0
    faults: dict[str, int] = field(default_factory=dict)


@dataclass
class Standings:
    league: League
    rows: list[Row]
    pairings: int
    done: int
    failed: int
    method: str = ratings.METHOD

    @property
    def pending(self) -> int:
        return self.pairings - self.done - self.failed


def standings(league: League, store: Store | None) -> Standings:
    pairs = league.pairings()
    wanted = set(pairs)
    names = [b.name for b in league.bots]
    rows = {n: Row(0, n, faults={k: 0 for k in F.KINDS}) for n in names}
    matches = [m for m in (store.matches() if store else []) if m.pair in wanted]
    done = [m for m in matches if m.status == "done"]
    sense = league.variant.sense
    for m in done:
        assert m.score_a is not None and m.points_a is not None and m.points_b is not None
        for me, other, score, pf, pa in ((m.bot_a, m.bot_b, m.score_a, m.points_a, m.points_b),
                                         (m.bot_b, m.bot_a, 1.0 - m.score_a, m.points_b, m.points_a)):
            r = rows[me]
            r.matches += 1
            if score == 1.0:
                r.won += 1
            elif score == 0.0:
                r.lost += 1
            else:
                r.drawn += 1
            r.points += league.points.of(score)
            r.pts_for += pf
            r.pts_against += pa
            r.diff += sense * (pf - pa)
    outcomes = []
    for (a, b), margins in (store.boards(wanted) if store else {}).items():
        for x in margins:
            outcomes.append((a, b, 1.0 if x > 0 else 0.0 if x < 0 else 0.5))
            rows[a].boards += 1
            rows[b].boards += 1
    fitted = ratings.fit(names, outcomes)
    for n, r in rows.items():
        r.rating, r.rating_low, r.rating_high = fitted[n].rating, fitted[n].low, fitted[n].high
    for bot, counts in (store.fault_counts(wanted) if store else {}).items():
        if bot in rows:
            for kind, c in counts.items():
                rows[bot].faults[kind] = rows[bot].faults.get(kind, 0) + c
    order = sorted(rows.values(), key=lambda r: (-r.points, -r.diff, -r.rating, r.bot))
    for i, r in enumerate(order):
        if i and (r.points, r.diff) == (order[i - 1].points, order[i - 1].diff):
            r.rank = order[i - 1].rank
        else:
            r.rank = i + 1
    return Standings(league, order, len(pairs), len(done), sum(1 for m in matches if m.status == "failed"))


# -- formats ------------------------------------------------------------------------------------

HEADERS = ["rank", "bot", "matches", "won", "drawn", "lost", "points", "for", "against", "diff", "rating", "rating_low", "rating_high",
           *F.KINDS]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _flat(r: Row) -> dict[str, Any]:
    return {"rank": r.rank, "bot": r.bot, "matches": r.matches, "won": r.won, "drawn": r.drawn, "lost": r.lost,
            "points": r.points, "for": r.pts_for, "against": r.pts_against, "diff": r.diff,
            "rating": round(r.rating, 1), "rating_low": round(r.rating_low, 1), "rating_high": round(r.rating_high, 1),
            **{k: r.faults.get(k, 0) for k in F.KINDS}}


def _faults_text(r: Row) -> str:
    return ", ".join(f"{k} {c}" for k, c in r.faults.items() if c) or "—"


def footnotes(s: Standings) -> list[str]:
    p = s.league.points
    lines = [f"{s.done} of {s.pairings} pairings played" + (f", {s.failed} failed" if s.failed else "") +
             (f", {s.pending} pending" if s.pending else "") + f"; match points: win {_num(p.win)}, draw {_num(p.draw)}, loss {_num(p.loss)}",
             f"rating: {s.method}"]
    if s.league.variant.sense < 0:
        lines.append("for/against: penalties written; diff = against − for (positive is good)")
    return lines


def to_csv(s: Standings) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, HEADERS, lineterminator="\n")
    w.writeheader()
    for r in s.rows:
        flat = _flat(r)
        flat["points"] = _num(r.points)
        w.writerow(flat)
    return buf.getvalue()


def to_json(s: Standings) -> str:
    lg = s.league
    data = {
        "league": lg.name,
        "game": lg.describe(),
        "points": asdict(lg.points),
        "pairings": {"total": s.pairings, "done": s.done, "failed": s.failed, "pending": s.pending},
        "rating_method": s.method,
        "standings": [_flat(r) for r in s.rows],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _cells(r: Row) -> list[str]:
    return [str(r.rank), r.bot, str(r.matches), str(r.won), str(r.drawn), str(r.lost), _num(r.points), str(r.pts_for),
            str(r.pts_against), f"{r.diff:+d}", f"{r.rating:+.0f} ± {r.rating_high - r.rating:.0f}", _faults_text(r)]


TEXT_HEADERS = ["#", "bot", "M", "W", "D", "L", "pts", "for", "agst", "diff", "rating", "faults"]


def to_markdown(s: Standings) -> str:
    lines = ["| " + " | ".join(TEXT_HEADERS) + " |",
             "|" + "|".join("---:" if h not in ("bot", "faults") else "---" for h in TEXT_HEADERS) + "|"]
    for r in s.rows:
        lines.append("| " + " | ".join(_cells(r)) + " |")
    lines.append("")
    lines.extend(footnotes(s))
    return "\n".join(lines) + "\n"


def rich_table(s: Standings):
    from rich import box
    from rich.table import Table

    t = Table(title=f"{s.league.name}: {s.league.describe()}", title_justify="left", header_style="bold", pad_edge=False,
              box=box.SIMPLE_HEAD)
    for h in TEXT_HEADERS:
        t.add_column(h, justify="left" if h in ("bot", "faults") else "right", no_wrap=h != "faults", min_width=6 if h == "faults" else None)
    for r in s.rows:
        t.add_row(*_cells(r))
    t.caption = "\n".join(footnotes(s))
    t.caption_justify = "left"
    return t
