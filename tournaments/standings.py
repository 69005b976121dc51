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

Order (:data:`RANK_RULE`): match points, then the difference, then the rating, then the name;
bots level on points and difference share a rank.  Beside it, every bot gets the *places* its
rating allows: ``[1 + the bots whose 95% rating interval lies wholly above its own, n − those
wholly below]`` (:func:`referee.stats.rank_ranges`); bots whose intervals overlap are
statistically tied and share places.  In a gauntlet the ratings are relative to the gauntlet bot.

:func:`standings` computes the figures as data; the ``to_*`` functions and :func:`rich_table`
only format them (the web page reuses the same data).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from referee import faults as F
from referee.stats import rank_ranges, signed
from tournaments import ratings
from tournaments.config import GAUNTLET, League
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
    place_low: int = 0  # the places its rating allows (see the module docstring)
    place_high: int = 0
    faults: dict[str, int] = field(default_factory=dict)


@dataclass
class Standings:
    league: League
    rows: list[Row]
    pairings: int
    done: int
    failed: int
    method: str = ratings.METHOD
    reference: str | None = None  # the bot ratings are relative to (a gauntlet's), or None: the mean
    rule: str = ""  # what orders the table, in words

    @property
    def pending(self) -> int:
        return self.pairings - self.done - self.failed


def standings(league: League, store: Store | None) -> Standings:
    pairs = league.pairings()
    wanted = set(pairs)
    names = [b.name for b in league.bots]
    rows = {n: Row(0, n, faults=dict.fromkeys(F.KINDS, 0)) for n in names}
    matches = [m for m in (store.matches() if store else []) if m.pair in wanted]
    done = [m for m in matches if m.status == "done"]
    sense = league.variant.sense
    for m in done:
        assert m.score_a is not None and m.points_a is not None and m.points_b is not None
        for me, _other, score, pf, pa in ((m.bot_a, m.bot_b, m.score_a, m.points_a, m.points_b),
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
    anchor = league.gauntlet if league.schedule == GAUNTLET else None
    fitted = ratings.fit(names, outcomes, anchor=anchor)
    for n, r in rows.items():
        r.rating, r.rating_low, r.rating_high = fitted[n].rating, fitted[n].low, fitted[n].high
    listed = list(rows.values())
    places = rank_ranges(len(listed), lambda a, b: listed[a].rating_low > listed[b].rating_high)
    for r, (low, high) in zip(listed, places):
        r.place_low, r.place_high = low, high
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
    return Standings(league, order, len(pairs), len(done), sum(1 for m in matches if m.status == "failed"),
                     method=ratings.method(anchor), reference=anchor, rule=RANK_RULE)


RANK_RULE = ("ranked by match points, then the points difference (diff), then the rating, then the name; "
             "bots level on points and diff share a rank")

# Every column: (text header, csv/json keys, meaning).  The table and markdown print it as a legend,
# json carries it as "legend".
LEGEND = [
    ("#", "rank", "the place by the ranking rule"),
    ("bot", "bot", "the bot's name in the league file"),
    ("M W D L", "matches, won, drawn, lost", ("matches played, won, drawn, lost (a match goes to the bot ahead on the paired "
                                               "margin per board, significant or not)")),
    ("pts", "points", "match points ([points] of the league file)"),
    ("for agst", "for, against", "points written by the bot's side, and by its opponents, over its matches"),
    ("diff", "diff", "for − against in the game's sense (penalty games: against − for): positive is good"),
    ("rating", "rating, rating_low, rating_high", "Bradley–Terry rating on the Elo scale ± its 95% interval"),
    ("places", "place_low, place_high", ("the places the rating allows: bots whose 95% rating intervals overlap are "
                                        "statistically tied and share places")),
    ("faults", ", ".join(F.KINDS), "the bot's faults over its matches, by kind"),
]


# -- formats ------------------------------------------------------------------------------------

HEADERS = ["rank", "bot", "matches", "won", "drawn", "lost", "points", "for", "against", "diff", "rating", "rating_low", "rating_high",
           "place_low", "place_high", *F.KINDS]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _flat(r: Row) -> dict[str, Any]:
    return {"rank": r.rank, "bot": r.bot, "matches": r.matches, "won": r.won, "drawn": r.drawn, "lost": r.lost,
            "points": r.points, "for": r.pts_for, "against": r.pts_against, "diff": r.diff,
            "rating": round(r.rating, 1) + 0.0, "rating_low": round(r.rating_low, 1) + 0.0,  # + 0.0: never -0.0
            "rating_high": round(r.rating_high, 1) + 0.0,
            "place_low": r.place_low, "place_high": r.place_high,
            **{k: r.faults.get(k, 0) for k in F.KINDS}}


def _faults_text(r: Row) -> str:
    return ", ".join(f"{k} {c}" for k, c in r.faults.items() if c) or "—"


def footnotes(s: Standings) -> list[str]:
    p = s.league.points
    lines = [f"{s.done} of {s.pairings} pairings played" + (f", {s.failed} failed" if s.failed else "") +
             (f", {s.pending} pending" if s.pending else "") + f"; match points: win {_num(p.win)}, draw {_num(p.draw)}, loss {_num(p.loss)}",
             f"{s.rule}", f"rating: {s.method}"]
    if s.league.variant.sense < 0:
        lines.append("for/against: penalties written; diff = against − for (positive is good)")
    return lines


def legend_lines() -> list[str]:
    """One line per column of the table."""
    return [f"{header}: {meaning}" for header, _, meaning in LEGEND]


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
        "rating_reference": s.reference,
        "rank_rule": s.rule,
        "legend": [{"column": header, "keys": [k.strip() for k in keys.split(",")], "meaning": meaning} for header, keys, meaning in LEGEND],
        "standings": [_flat(r) for r in s.rows],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _cells(r: Row) -> list[str]:
    return [str(r.rank), r.bot, str(r.matches), str(r.won), str(r.drawn), str(r.lost), _num(r.points), str(r.pts_for),
            str(r.pts_against), f"{r.diff:+d}", _rating_text(r), _places_text(r), _faults_text(r)]


def _rating_text(r: Row) -> str:
    if r.rating_low == r.rating_high:
        return f"{signed(r.rating)} (ref.)"  # the gauntlet bot: the reference, no interval
    return f"{signed(r.rating)} ± {(r.rating_high - r.rating_low) / 2:.0f}"


def _places_text(r: Row) -> str:
    return str(r.place_low) if r.place_low == r.place_high else f"{r.place_low}–{r.place_high}"


TEXT_HEADERS = ["#", "bot", "M", "W", "D", "L", "pts", "for", "agst", "diff", "rating", "places", "faults"]


def to_markdown(s: Standings) -> str:
    lines = ["| " + " | ".join(TEXT_HEADERS) + " |",
             "|" + "|".join("---:" if h not in ("bot", "faults") else "---" for h in TEXT_HEADERS) + "|"]
    for r in s.rows:
        lines.append("| " + " | ".join(_cells(r)) + " |")
    lines.append("")
    lines.extend(footnotes(s))
    lines.append("")
    lines.extend(legend_lines())
    return "\n".join(lines) + "\n"


def rich_table(s: Standings):
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    title = f"{s.league.name}: {s.league.describe()}"
    t = Table(title=escape(title), title_justify="left", header_style="bold", pad_edge=False, box=box.SIMPLE_HEAD, collapse_padding=True,
              min_width=len(title))
    for h in TEXT_HEADERS:
        t.add_column(h, justify="left" if h in ("bot", "faults") else "right", no_wrap=h != "faults", min_width=6 if h == "faults" else None)
    for r in s.rows:  # names are the league file's: never read as rich markup
        t.add_row(*(escape(c) for c in _cells(r)))
    t.caption = escape("\n".join([*footnotes(s), *legend_lines()]))
    t.caption_justify = "left"
    return t
