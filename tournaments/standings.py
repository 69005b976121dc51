"""The standings of a league, computed from the stored tables, and their formats.

Only the tables of the league's schedule count (a bot removed from the file, or tables outside
a gauntlet or an older balanced design, stay in the database but not in the table).

**Every table is a set of head-to-head results.**  At a table of N bots each bot finishes ahead
of, level with or behind each of the N − 1 others (its place is its paired margin against them:
:mod:`referee.stats.figures`).  Match points are ``win`` for every bot it finished ahead of, ``draw``
for every one level with it and ``loss`` for every one ahead of it (the file's ``[points]``):
with two bots, win, draw or loss of the match, as always.

Columns, two bots a table: rank, bot, matches, won/drawn/lost, match points, points for and
against and their difference, the rating with its 95% interval (:mod:`tournaments.ratings`),
the places the rating allows, and the fault counts by kind (:mod:`referee.conversation.faults`).  Tables of
N > 2 bots have, instead of won/drawn/lost, the times the bot finished 1st, 2nd, … (bots level
share the better place), its mean place and its match points per table, each with a 95%
interval (Student's t over its tables); ``against`` is then the mean of what the others at its
tables wrote.  A Swiss league adds the byes and the Buchholz score, a knockout the stage each
bot reached.

*Points for* are what the bot's side wrote over its tables (every rotation), *against* what its
opponents wrote.  ``diff`` is ``for − against`` in the game's sense: in penalty games (kozel)
what a side writes counts against it, so ``diff = against − for`` and a positive difference is
good in every game.

Order (:func:`rank_rule`): match points, then the difference, then the rating, then the name;
bots level on points and difference share a rank.  A Swiss league puts the Buchholz score (the
match points of every bot met, once per meeting) after the points and the seed (the file's
order) last; a knockout ranks by the stage reached, then the place at the table that put the
bot out.  Beside it, every bot gets the *places* its rating allows: ``[1 + the bots whose 95%
rating interval lies wholly above its own, n − those wholly below]``
(:func:`referee.stats.figures.rank_ranges`); bots whose intervals overlap are statistically tied and
share places.  In a gauntlet the ratings are relative to the gauntlet bot.

:func:`standings` computes the figures as data; the ``to_*`` functions and :func:`rich_table`
only format them (the web page reuses the same data).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from referee.conversation import faults as F
from referee.stats.figures import rank_ranges
from referee.stats.means import estimate, signed
from tournaments import ratings
from tournaments.config import GAUNTLET, KNOCKOUT, SWISS, League
from tournaments.schedule import Knockout, Schedule, State, TableKey
from tournaments.store import Store, TableRow

FORMATS = ("table", "csv", "json", "markdown")


@dataclass
class Row:
    rank: int
    bot: str
    matches: int = 0
    won: int = 0  # two bots: matches; more: the bots it finished ahead of, over its tables
    drawn: int = 0
    lost: int = 0
    points: float = 0.0
    pts_for: int = 0
    pts_against: float = 0
    diff: float = 0
    boards: int = 0
    rating: float = 0.0
    rating_low: float = 0.0
    rating_high: float = 0.0
    place_low: int = 0  # the places its rating allows (see the module docstring)
    place_high: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    finishes: list[int] = field(default_factory=list)  # tables of N: times placed 1st, 2nd, …
    finish: float | None = None  # mean place at its tables, with its 95% interval
    finish_low: float | None = None
    finish_high: float | None = None
    per_table: float | None = None  # mean match points per table, with its 95% interval
    per_table_low: float | None = None
    per_table_high: float | None = None
    byes: int = 0  # Swiss
    buchholz: float = 0.0  # Swiss: the match points of every bot met, once per meeting
    stage: str = ""  # knockout: "won", "final", "round 2", …
    seed: int = 0  # its place in the file (1 first)


@dataclass
class Standings:
    league: League
    rows: list[Row]
    pairings: int  # tables known in the schedule
    done: int
    failed: int
    method: str = ratings.METHOD
    reference: str | None = None  # the bot ratings are relative to (a gauntlet's), or None: the mean
    rule: str = ""  # what orders the table, in words
    head_to_head: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    expected: int = 0  # tables the whole schedule will have, as far as known now

    @property
    def pending(self) -> int:
        return self.pairings - self.done - self.failed

    @property
    def n(self) -> int:
        return self.league.per_table


def state_of(league: League, store: Store | None) -> State:
    """What the league's schedule needs of ``store`` (:class:`tournaments.schedule.State`)."""
    if store is None:
        return State()
    return State(draws=store.draws(), places=store.places(), design=store.design(),
                 standing=lambda: [r.bot for r in standings(league, store).rows])


def table_points(league: League, row: TableRow, bot: str) -> float:
    """The match points of ``bot`` at a done table: win, draw or loss against each other bot."""
    me = row.seat(bot).place
    p = league.points
    return sum(p.win if me < s.place else p.draw if me == s.place else p.loss for s in row.seats if s.bot != bot)


def bye_points(league: League) -> float:
    """A Swiss bye scores as a table at which the bot finished level with every other bot: at
    tables of N a round can have up to N − 1 byes, and a bye should neither lift a bot nor sink
    it (with the default points, a draw is a table's mean)."""
    return league.points.draw * (league.per_table - 1)


def standings(league: League, store: Store | None) -> Standings:
    schedule = league.plan()
    state = state_of(league, store)
    keys = schedule.plan(state).tables
    wanted = set(keys)
    names = [b.name for b in league.bots]
    n = league.per_table
    rows = {b: Row(0, b, faults=dict.fromkeys(F.KINDS, 0), finishes=[0] * n, seed=i + 1) for i, b in enumerate(names)}
    tables = [t for t in (store.tables() if store else []) if t.key in wanted]
    done = [t for t in tables if t.status == "done"]
    head = _count_tables(league, done, rows)
    if league.schedule == SWISS:  # byes and the Buchholz score
        for rnd in state.draws.values():
            for slot in rnd:
                if len(slot) == 1 and slot[0] in rows:
                    rows[slot[0]].byes += 1
                    rows[slot[0]].points += bye_points(league)
        for b, r in rows.items():
            r.buchholz = sum(rows[o].points * cell["meetings"] for o, cell in head[b].items() if o in rows)
    anchor = league.gauntlet if league.schedule == GAUNTLET else None
    _rate(rows, names, store.boards(wanted) if store else {}, anchor)
    for bot, counts in (store.fault_counts(wanted) if store else {}).items():
        if bot in rows:
            for kind, c in counts.items():
                rows[bot].faults[kind] = rows[bot].faults.get(kind, 0) + c
    order = _ranked(league, schedule, state, rows)
    return Standings(league, order, len(keys), len(done), sum(1 for t in tables if t.status == "failed"),
                     method=ratings.method(anchor, n), reference=anchor, rule=rank_rule(league),
                     head_to_head=head, expected=max(len(keys), schedule.expected(state)))


def _count_tables(league: League, done: list[TableRow], rows: dict[str, Row]) -> dict[str, dict[str, dict[str, int]]]:
    """Every finished table counted into its bots' rows (meetings won, drawn and lost, finishes,
    points, table points); the head-to-head counts, by bot and opponent."""
    n = league.per_table
    sense = league.variant.sense
    places: dict[str, list[float]] = {b: [] for b in rows}
    per_table: dict[str, list[float]] = {b: [] for b in rows}
    head: dict[str, dict[str, dict[str, int]]] = {a: {} for a in rows}
    for t in done:
        for s in t.seats:
            if s.bot not in rows:
                continue
            r = rows[s.bot]
            others = [o for o in t.seats if o.bot != s.bot]
            r.matches += 1
            ahead = sum(1 for o in others if s.place < o.place)
            level = sum(1 for o in others if s.place == o.place)
            behind = len(others) - ahead - level
            r.won += ahead
            r.drawn += level
            r.lost += behind
            r.finishes[min(s.place, n) - 1] += 1
            pts = table_points(league, t, s.bot)
            r.points += pts
            per_table[s.bot].append(pts)
            places[s.bot].append(float(s.place))
            r.pts_for += s.points
            against = sum(o.points for o in others) / len(others)
            r.pts_against += int(against) if n == 2 else against
            r.diff += sense * (s.points - against)
            for o in others:
                cell = head[s.bot].setdefault(o.bot, {"won": 0, "drawn": 0, "lost": 0, "meetings": 0})
                cell["meetings"] += 1
                cell["won" if s.place < o.place else "drawn" if s.place == o.place else "lost"] += 1
    if n == 2:
        for r in rows.values():
            r.pts_against, r.diff = int(r.pts_against), int(r.diff)
    else:
        for b, r in rows.items():
            _interval(r, "finish", places[b])
            _interval(r, "per_table", per_table[b])
            r.diff = round(r.diff, 6)
    return head


def _rate(rows: dict[str, Row], names: list[str], boards: dict[TableKey, list[list[float]]], anchor: str | None) -> None:
    """The ratings, from the finishing order of every board, and the places they allow."""
    orders = []
    for key, margins_of_boards in boards.items():
        for margins in margins_of_boards:
            orders.append((_order(key, margins), 1.0))
            for b in key.bots:
                if b in rows:
                    rows[b].boards += 1
    fitted = ratings.fit_orders(names, orders, anchor=anchor)
    for b, r in rows.items():
        r.rating, r.rating_low, r.rating_high = fitted[b].rating, fitted[b].low, fitted[b].high
    listed = list(rows.values())
    ranges = rank_ranges(len(listed), lambda a, b: listed[a].rating_low > listed[b].rating_high)
    for r, (low, high) in zip(listed, ranges):
        r.place_low, r.place_high = low, high


def _ranked(league: League, schedule: Schedule, state: State, rows: dict[str, Row]) -> list[Row]:
    """The rows in the league's order, each with its rank (level rows share one)."""
    level_on: Callable[[Row], tuple]
    if league.schedule == KNOCKOUT:
        assert isinstance(schedule, Knockout)
        out = schedule.eliminated(state)
        final = max(state.draws, default=0)
        for b, r in rows.items():
            if b in out:
                went, _ = out[b]
                r.stage = "won" if went > final else "final" if went == final and len(state.draws[final]) == 1 else f"round {went}"

        def stage(r: Row) -> tuple:
            if r.bot not in out:  # still in: ahead of every bot out, level with the others still in
                return (-(final + 1), 0)
            went, place = out[r.bot]
            return (-went, place)

        order = sorted(rows.values(), key=lambda r: (stage(r), -r.points, -r.rating, r.seed))
        level_on = stage
    elif league.schedule == SWISS:
        order = sorted(rows.values(), key=lambda r: (-r.points, -r.buchholz, -r.diff, -r.rating, r.seed))

        def level_on(r: Row) -> tuple:
            return (r.points, r.buchholz, r.diff)
    else:
        order = sorted(rows.values(), key=lambda r: (-r.points, -r.diff, -r.rating, r.bot))

        def level_on(r: Row) -> tuple:
            return (r.points, r.diff)
    for i, r in enumerate(order):
        r.rank = order[i - 1].rank if i and level_on(r) == level_on(order[i - 1]) else i + 1
    return order


def _order(key: TableKey, margins: list[float]) -> list[list[str]]:
    """A board's finishing order: the bots from the best margin down, equal margins sharing a place."""
    seats = sorted(zip(margins, key.bots), key=lambda x: -x[0])
    groups: list[list[str]] = []
    last = None
    for margin, bot in seats:
        if groups and margin == last:
            groups[-1].append(bot)
        else:
            groups.append([bot])
        last = margin
    return groups


def _interval(r: Row, name: str, values: list[float]) -> None:
    """``name``, ``name_low``, ``name_high``: the mean of ``values`` with its 95% interval
    (``None`` ends with fewer than two tables)."""
    if not values:
        return
    est = estimate(values)
    setattr(r, name, round(est.mean, 4))
    finite = math.isfinite(est.half)
    setattr(r, f"{name}_low", round(est.low, 4) if finite else None)
    setattr(r, f"{name}_high", round(est.high, 4) if finite else None)


RANK_RULE = ("ranked by match points, then the points difference (diff), then the rating, then the name; "
             "bots level on points and diff share a rank")


def rank_rule(league: League) -> str:
    if league.schedule == SWISS:
        return ("ranked by match points, then the Buchholz score (Bh: the match points of every bot met, once per meeting), "
                "then the points difference (diff), then the rating, then the seed (the file's order); bots level on points, "
                "Bh and diff share a rank")
    if league.schedule == KNOCKOUT:
        return ("ranked by the stage reached in the bracket, then by the place at the table that put the bot out, then match "
                "points, then the rating, then the seed; bots out at the same stage and place share a rank")
    return RANK_RULE


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

HEADERS = ["rank", "bot", "matches", "won", "drawn", "lost", "points", "for", "against", "diff", "rating", "rating_low", "rating_high",
           "place_low", "place_high", *F.KINDS]

TEXT_HEADERS = ["#", "bot", "M", "W", "D", "L", "pts", "for", "agst", "diff", "rating", "places", "faults"]

_ORDINALS = ["1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th"]


def legend(s: Standings) -> list[tuple[str, str, str]]:
    """The columns of these standings: :data:`LEGEND` for two bots a table, with the columns of
    tables of N, Swiss and knockout where they apply."""
    out = list(LEGEND)
    if s.n > 2:
        out[2] = ("T", "matches", "tables played")
        out[3:3] = [
            ("finishes", ", ".join(f"finish_{i + 1}" for i in range(s.n)),
             f"the times the bot finished {'/'.join(_ORDINALS[: s.n])} at its tables (bots level on the paired margin share the "
             f"better place)"),
            ("place", "finish, finish_low, finish_high", "its mean place at its tables ± a 95% interval (Student's t over its tables)"),
        ]
        out.insert(6, ("pts/T", "points_per_table, points_per_table_low, points_per_table_high",
                       "match points per table ± a 95% interval (Student's t over its tables)"))
        out[out.index(next(c for c in out if c[0] == "for agst"))] = (
            "for agst", "for, against", "points written by the bot, and the mean of what the others at its tables wrote, over its tables")
        out[out.index(next(c for c in out if c[0] == "rating"))] = (
            "rating", "rating, rating_low, rating_high", "Plackett–Luce rating on the Elo scale ± its 95% interval")
    if s.league.schedule == SWISS:
        at = [c[0] for c in out].index("pts") + 1
        out[at:at] = [("byes", "byes", "rounds the bot sat out (a bye scores as a table at which it finished level with every other bot)"),
                      ("Bh", "buchholz", "Buchholz: the match points of every bot it met, once per meeting")]
    if s.league.schedule == KNOCKOUT:
        out.insert(2, ("stage", "stage", "how far the bot went: won, final, or the round it went out in (empty: still in)"))
    return out


def headers(s: Standings) -> list[str]:
    """The csv and json keys of a row, in order."""
    return [k.strip() for _, keys, _ in legend(s) for k in keys.split(",")]


def text_headers(s: Standings) -> list[str]:
    """The printed table's headers, in order."""
    return [h for h, _, _ in legend(s) for h in h.split()]


# -- formats ------------------------------------------------------------------------------------


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _flat(s: Standings, r: Row) -> dict[str, Any]:
    values = {"rank": r.rank, "bot": r.bot, "matches": r.matches, "won": r.won, "drawn": r.drawn, "lost": r.lost,
              "points": r.points, "for": r.pts_for, "against": r.pts_against, "diff": r.diff,
              "rating": round(r.rating, 1) + 0.0, "rating_low": round(r.rating_low, 1) + 0.0,  # + 0.0: never -0.0
              "rating_high": round(r.rating_high, 1) + 0.0,
              "place_low": r.place_low, "place_high": r.place_high,
              "finish": r.finish, "finish_low": r.finish_low, "finish_high": r.finish_high,
              "points_per_table": r.per_table, "points_per_table_low": r.per_table_low, "points_per_table_high": r.per_table_high,
              "byes": r.byes, "buchholz": r.buchholz, "stage": r.stage,
              **{f"finish_{i + 1}": c for i, c in enumerate(r.finishes)},
              **{k: r.faults.get(k, 0) for k in F.KINDS}}
    return {k: values[k] for k in headers(s)}


def _faults_text(r: Row) -> str:
    return ", ".join(f"{k} {c}" for k, c in r.faults.items() if c) or "—"


def footnotes(s: Standings) -> list[str]:
    p = s.league.points
    unit = f"{s.league.unit}s"
    total = f"{s.done} of {s.pairings} {unit} played" if s.expected <= s.pairings else (
        f"{s.done} of {s.pairings} {unit} drawn so far played ({s.expected} in all)")
    lines = [total + (f", {s.failed} failed" if s.failed else "") +
             (f", {s.pending} pending" if s.pending else "") + f"; match points: win {_num(p.win)}, draw {_num(p.draw)}, loss {_num(p.loss)}"
             + (" against each other bot at the table" if s.n > 2 else ""),
             f"{s.rule}", f"rating: {s.method}"]
    if s.league.variant.sense < 0:
        lines.append("for/against: penalties written; diff = against − for (positive is good)")
    if not_separated(s):
        lines.append(f"no place is separated: every bot's 95% rating interval allows other places, so this order is not "
                     f"significant yet (more deals, or more {unit}, would tell the bots apart)")
    return lines


def not_separated(s: Standings) -> bool:
    """Whether the league has results and no bot's place is pinned down by its rating interval
    (each could be in another place): then the order of the table means nothing yet."""
    played = [r for r in s.rows if r.place_low]
    return bool(played) and s.done > 0 and all(r.place_low != r.place_high for r in played)


def legend_lines(s: Standings | None = None) -> list[str]:
    """One line per column of the table."""
    return [f"{header}: {meaning}" for header, _, meaning in (legend(s) if s is not None else LEGEND)]


def to_csv(s: Standings) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, headers(s), lineterminator="\n")
    w.writeheader()
    for r in s.rows:
        flat = _flat(s, r)
        flat["points"] = _num(r.points)
        if "against" in flat:
            flat["against"] = _num(r.pts_against)
            flat["diff"] = _num(r.diff)
        w.writerow(flat)
    return buf.getvalue()


def to_json(s: Standings) -> str:
    lg = s.league
    data: dict[str, Any] = {
        "league": lg.name,
        "game": lg.describe(),
        "points": asdict(lg.points),
        "pairings": {"total": s.pairings, "done": s.done, "failed": s.failed, "pending": s.pending},
        "rating_method": s.method,
        "rating_reference": s.reference,
        "rank_rule": s.rule,
        "legend": [{"column": header, "keys": [k.strip() for k in keys.split(",")], "meaning": meaning} for header, keys, meaning in legend(s)],
        "standings": [_flat(s, r) for r in s.rows],
    }
    if s.n > 2 or lg.schedule in (SWISS, KNOCKOUT):
        data["bots_per_table"] = s.n
        data["schedule"] = {"kind": lg.schedule, "tables": s.expected}
        data["head_to_head"] = {a: dict(sorted(cells.items())) for a, cells in s.head_to_head.items()}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _mean_text(mean: float | None, low: float | None, high: float | None) -> str:
    if mean is None:
        return "—"
    if low is None or high is None:
        return f"{mean:.2f}"
    return f"{mean:.2f} ± {(high - low) / 2:.2f}"


def _cells(r: Row, s: Standings | None = None) -> list[str]:
    values = {"#": str(r.rank), "bot": r.bot, "M": str(r.matches), "T": str(r.matches), "W": str(r.won), "D": str(r.drawn),
              "L": str(r.lost), "pts": _num(r.points), "for": str(r.pts_for), "agst": _num(round(r.pts_against, 1)),
              "diff": f"{r.diff:+d}" if isinstance(r.diff, int) else f"{r.diff:+.1f}", "rating": _rating_text(r),
              "places": _places_text(r), "faults": _faults_text(r),
              "place": _mean_text(r.finish, r.finish_low, r.finish_high),
              "pts/T": _mean_text(r.per_table, r.per_table_low, r.per_table_high),
              "byes": str(r.byes), "Bh": _num(r.buchholz), "stage": r.stage or "in",
              "finishes": "/".join(map(str, r.finishes))}
    return [values[h] for h in (text_headers(s) if s is not None else TEXT_HEADERS)]


def _rating_text(r: Row) -> str:
    if r.rating_low == r.rating_high:
        return f"{signed(r.rating)} (ref.)"  # the gauntlet bot: the reference, no interval
    return f"{signed(r.rating)} ± {(r.rating_high - r.rating_low) / 2:.0f}"


def _places_text(r: Row) -> str:
    return str(r.place_low) if r.place_low == r.place_high else f"{r.place_low}–{r.place_high}"


def cross_lines(s: Standings) -> list[str]:
    """The head-to-head cross-table as markdown: each row bot's tables ahead–level–behind the
    column bot (tables of N, Swiss and knockout leagues)."""
    names = [r.bot for r in s.rows]
    lines = ["| head to head (ahead–level–behind) | " + " | ".join(names) + " |",
             "|---|" + "|".join(":---:" for _ in names) + "|"]
    for a in names:
        cells = []
        for b in names:
            c = s.head_to_head.get(a, {}).get(b)
            cells.append("" if a == b else "·" if c is None else f"{c['won']}–{c['drawn']}–{c['lost']}")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    return lines


def _shows_cross(s: Standings) -> bool:
    return s.n > 2 or s.league.schedule in (SWISS, KNOCKOUT)


def to_markdown(s: Standings, legend: bool = True) -> str:
    """The standings as a markdown table, its footnotes, the cross-table where there is one, and
    the columns' legend (unless ``legend`` is false: ``league table --no-legend``)."""
    heads = text_headers(s)
    lines = ["| " + " | ".join(heads) + " |",
             "|" + "|".join("---:" if h not in ("bot", "faults", "stage") else "---" for h in heads) + "|"]
    for r in s.rows:
        lines.append("| " + " | ".join(_cells(r, s)) + " |")
    lines.append("")
    lines.extend(footnotes(s))
    if _shows_cross(s):
        lines.append("")
        lines.extend(cross_lines(s))
    if legend:
        lines.append("")
        lines.extend(legend_lines(s))
    return "\n".join(lines) + "\n"


def rich_table(s: Standings, legend: bool = True):
    """The standings for a terminal: a rich table (its caption the footnotes and, unless
    ``legend`` is false, the columns' legend), with the head-to-head cross-table below it for
    tables of N, Swiss and knockout leagues (a rich ``Group``)."""
    from rich import box
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table

    from referee.matches.report import detached

    title = f"{s.league.name}: {s.league.describe()}"
    t = Table(title=escape(title), title_justify="left", header_style="bold", pad_edge=False, box=box.SIMPLE_HEAD, collapse_padding=True,
              min_width=len(title))
    for h in text_headers(s):
        t.add_column(h, justify="left" if h in ("bot", "faults", "stage") else "right", no_wrap=h not in ("faults", "place", "pts/T"),
                     min_width=6 if h == "faults" else None)
    for r in s.rows:  # names are the league file's: never read as rich markup
        t.add_row(*(escape(c) for c in _cells(r, s)))
    t.caption = escape("\n".join([*footnotes(s), *(legend_lines(s) if legend else [])])) or None
    t.caption_justify = "left"
    if not _shows_cross(s):
        return detached(t)
    names = [r.bot for r in s.rows]
    cross = Table(title="head to head: tables finished ahead–level–behind the column's bot", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False, collapse_padding=True)
    cross.add_column("")
    for b in names:
        cross.add_column(escape(b), justify="center")
    for a in names:
        cells = []
        for b in names:
            c = s.head_to_head.get(a, {}).get(b)
            cells.append("" if a == b else "·" if c is None else f"{c['won']}–{c['drawn']}–{c['lost']}")
        cross.add_row(escape(a), *cells)
    return Group(detached(t), cross)
