"""The JSON documents behind the match and deal pages, built from match logs.

Every page of a report is drawn from exactly one document (see :mod:`referee.web`): a *deal*
document per played deal (the replay), a *match* document per log (and a *league* document per
league, which :mod:`tournaments.report` makes).  Documents hold data only (names, tiles as ``"a-b"``, numbers, the log's own notes);
how they look is the templates' and scripts' business.

Logs are read through a :class:`referee.replay.Replayer`, which re-plays every move through the
engine, so a replay shows the deal as the engine saw it: the hands after each event come from
the engine's own events (placements, draws, passes), never from a second reading of the rules.
A log that stops early (a match cut short, a killed process) or breaks at some line gives every
deal before that point, the deal in progress marked ``cut``, and the reason in ``problem``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from referee import records as R
from referee.engine import variant
from referee.engine.errors import RulesError
from referee.engine.kolbasa import KolbasaDeal
from referee.engine.layout import KNIFE, Sausage, place_name
from referee.engine.line import Cut, Declared, Drew, Event, Passed, Placed, Scored, Tailed, Turned
from referee.engine.state import DealState
from referee.engine.tiles import OTHER, parse_tile, tile_name
from referee.engine.trains import TrainDeal
from referee.replay import Broken, Replayer, trains_at
from referee.results import MatchSummary
from referee.seeds import seed_text

#: The layout renderer (in ``static/replay.js``) that draws each game's table: ``line`` unless
#: named here.  ``cross`` draws ``up`` and ``down`` as columns through the first open double;
#: ``trains`` a row per train from the station; ``sausage`` kolbasa's two lines from the start.
LAYOUTS: dict[str, str] = {"osel": "cross", "telephone": "cross", "muggins": "cross", "mexican_train": "trains",
                           "kolbasa": "sausage"}
DEFAULT_LAYOUT = "line"


#: Declarations (sea_kozel, RULES.md §6 SK-7 and SK-12) in words.
DECLARATIONS = {"hundred": "6-6 led for a hundred", "write_off": "writes the fish off", "decline": "declines the fish"}


class NotALog(ValueError):
    """The file is not a match log at all (no header); one line for the command line."""


def layout_of(variant_id: str) -> str:
    return LAYOUTS.get(variant_id, DEFAULT_LAYOUT)


def deal_slug(game: int, orientation: int, deal: int) -> str:
    """The file name (without suffix) of a deal's replay: game and deal from 1, orientation from 0,
    as ``referee replay`` numbers them."""
    return f"g{game + 1}-o{orientation}-d{deal + 1}"


def safe_name(text: str) -> str:
    """A file-name-safe form of a name (league bots may be called anything)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._") or "x"


def _sorted_names(mask_tiles: set[int]) -> list[str]:
    return [tile_name(t) for t in sorted(mask_tiles)]


@dataclass
class _Deal:
    """A deal being collected: its document, and the hands as the events change them."""

    doc: dict[str, Any]
    hands: list[set[int]]
    bazaar: list[int]  # undealt tiles in order (drawn from the front when the game draws)
    drawn: int = 0
    scores: list[int] = field(default_factory=list)
    events: int = 0  # the engine events of this deal so far
    #: what the step's table shows beyond its placements (``step.table``): the trains' markers and
    #: open double, or kolbasa's sausage as the engine's own layout lays it
    table: dict[str, Any] | None = None
    rows: list[list[int]] | None = None  # kolbasa: each row left to right (hands has them as sets)
    sausage: Sausage | None = None
    up: int | None = None  # kolbasa: the tile turned up and waiting for its place


@dataclass
class MatchData:
    """What :func:`read_match` gives: the match document and one document per played deal."""

    match: dict[str, Any]
    deals: list[dict[str, Any]]


class MatchReader(Replayer):
    """Reads a match log into its page documents (:func:`read_match`)."""

    def __init__(self, log: Path) -> None:
        super().__init__(log)
        self.deals: list[dict[str, Any]] = []
        self.summary: list[dict[str, Any]] = []
        self.game_ends: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []
        self.totals_by_key: dict[tuple[int, int], list[int]] = {}
        self.result: R.Result | None = None
        self.cur: _Deal | None = None
        self.sides: list[tuple[int, ...]] = []
        self.side_names: list[str] = []

    def step(self, kind: str, seat: int | None, text: str, **extra: Any) -> None:
        d = self.cur
        assert d is not None
        d.doc["steps"].append({
            "kind": kind, "seat": seat, "text": text,
            "hands": [[tile_name(t) for t in r] for r in d.rows] if d.rows is not None else [_sorted_names(h) for h in d.hands],
            "bazaar": len(d.bazaar) - d.drawn,
            "scores": list(d.scores),
            **({} if d.table is None else {"table": d.table}),
            **({} if d.rows is None else {"up": None if d.up is None else tile_name(d.up)}),
            **extra,
        })

    def on_header(self, rec: R.Header) -> None:
        g = variant(rec.variant).new_game(rec.players, rec.options, rec.deals)
        self.sides.extend(g.sides)
        self.side_names.extend(g.side_name(s) for s in range(len(g.sides)))

    def on_deal(self, rec: R.Deal, state: DealState | None) -> None:
        header = self.header
        assert header is not None
        key = (rec.game, rec.orientation)
        before = self.totals_by_key.get(key, [0] * len(self.sides))
        entry: dict[str, Any] = {"game": rec.game, "orientation": key[1], "deal": rec.deal, "stream": rec.stream,
                                 "void": rec.void, "slug": None}
        self.summary.append(entry)
        if state is None:  # void: redealt, nothing to replay
            self.cur = None
            return
        entry["slug"] = deal_slug(rec.game, key[1], rec.deal)
        seating = self.seating
        entry.update(leader=state.leader, leader_bot=self.names[seating[state.leader]],
                     lead_tile=tile_name(state.lead_tile) if state.lead_tile is not None else None)
        hands = [{parse_tile(t) for t in h} for h in rec.hands]
        undealt = [parse_tile(t) for t in rec.undealt]
        doc = {
            "kind": "deal", "variant": header.variant, "title": variant(header.variant).title,
            "layout": layout_of(header.variant), "players": header.players,
            "game": rec.game, "orientation": key[1], "deal": rec.deal, "stream": rec.stream,
            "slug": entry["slug"],
            "seats": [{"seat": s, "bot": self.names[b], "side": _side_of(self.sides, s)} for s, b in enumerate(seating)],
            "sides": self.side_names,
            "hands": [_sorted_names(h) for h in hands],
            "undealt": [tile_name(t) for t in undealt],
            "undealt_kind": "bazaar" if state.bazaar else "sleeping",
            "leader": state.leader,
            "before": list(before),
            "steps": [], "result": None, "cut": False,
        }
        cur = self.cur = _Deal(doc, hands, undealt if state.bazaar else [], scores=list(before))
        if isinstance(state, TrainDeal):
            doc["table"] = {"trains": [{"name": name, "label": "the Mexican train" if e == state.n else f"{doc['seats'][e]['bot']} (seat {e})"}
                                        for e, name in enumerate(state.layout.names)]}
            doc["station"] = tile_name(state.station)
            cur.table = {"markers": [], "open": None, "hangs": False}
        elif isinstance(state, KolbasaDeal):
            doc["rows"] = True  # hands are rows of face-down tiles, in order
            cur.rows = [[parse_tile(t) for t in h] for h in rec.hands]
            cur.sausage = Sausage()
            cur.table = _sausage_doc(cur.sausage)
        self.deals.append(doc)
        self.step("deal", None, "the deal")

    def on_fault(self, rec: R.Fault) -> None:
        self.faults.append({k: v for k, v in msgspec.to_builtins(rec).items() if k != "k"})
        if self.cur is not None and self.cur.doc["result"] is None:
            self.step("fault", rec.seat, f"{self.who(rec.seat)} faults: {rec.kind}", fault={"kind": rec.kind, "detail": rec.detail,
                                                                                        "line": rec.line})

    def on_forfeited_deal(self, rec: R.ForfeitedDeal) -> None:
        if self.cur is not None and self.cur.doc["result"] is None:
            self.step("forfeit", rec.seat, f"{self.who(rec.seat)} has forfeited the match: the deal is lost")

    def on_deal_end(self, rec: R.DealEnd, state: DealState) -> None:
        key = (rec.game, rec.orientation)
        self.totals_by_key[key] = list(rec.totals)
        entry = self.summary[-1]
        entry.update(end=rec.reason, by=rec.seat, wrote=rec.wrote, totals=rec.totals, notes=rec.notes)
        cur = self.cur
        if cur is not None:
            cur.scores = list(rec.totals)
            res = {"reason": rec.reason, "seat": rec.seat, "values": rec.values, "wrote": rec.wrote, "totals": rec.totals,
                   "notes": rec.notes}
            cur.doc["result"] = res
            by = self.who(rec.seat) if rec.seat is not None else "nobody"
            self.step("end", rec.seat, _end_text(rec.reason, by), result=res)
            entry["by_bot"] = by
            self.cur = None

    def on_game_end(self, rec: R.GameEnd) -> None:
        self.game_ends.append({k: v for k, v in msgspec.to_builtins(rec).items() if k != "k"})

    def on_result(self, rec: R.Result) -> None:
        self.result = rec

    def on_event(self, e: Event, play: R.Play | None, state: DealState) -> None:
        d = self.cur
        if d is None:
            return
        step, who = self.step, self.who
        d.events += 1
        ms = play.ms if play is not None else None
        if isinstance(state, TrainDeal):
            # The text replay's reading of the markers and the open double, so both agree.
            _, markers, open_train, hangs = trains_at(state, d.events)
            names = state.layout.names
            d.table = {"markers": [names[s] for s in range(state.n) if markers >> s & 1],
                       "open": names[open_train] if open_train >= 0 else None, "hangs": hangs}
        if type(e) is Placed:
            d.hands[e.seat].discard(e.tile)
            closed = getattr(e, "closed", False)  # a double laid face down (osel)
            if isinstance(state, TrainDeal) and e.end is None:  # the station double: nobody's tile
                step("station", None, f"{tile_name(e.tile)} on the station", tile=tile_name(e.tile), end=None)
                return
            end: str | None
            if isinstance(state, TrainDeal):
                end, text = _train_placement(e, state, who)
            elif isinstance(state, KolbasaDeal):
                end, text = _sausage_placement(e, d, who)
            else:
                end = None if e.end is None else state.layout.names[e.end]
                text = (f"{who(e.seat)} {'leads' if end is None else 'plays'} {tile_name(e.tile)}{'' if end is None else f' on the {end}'}"
                        + (" face down (closed)" if closed else "") + (" (forced)" if e.forced else ""))
            step("place", e.seat, text,
                 tile=tile_name(e.tile), end=end, forced=e.forced, closed=closed, ms=ms)
        elif type(e) is Drew:
            got = list(e.tiles)
            d.drawn += e.count
            d.hands[e.seat].update(got)
            step("draw", e.seat, f"{who(e.seat)} draws {e.count}", tiles=[tile_name(t) for t in got])
        elif type(e) is Passed:
            if isinstance(state, TrainDeal):
                hanging = d.table["open"] if d.table and d.table["hangs"] else None
                step("pass", e.seat, f"{who(e.seat)} knocks: a marker goes on its train"
                     + (f"; the double on {_train_words(state, state.layout.names.index(hanging))} hangs" if hanging else ""))
            else:
                step("pass", e.seat, f"{who(e.seat)} knocks (passes)")
        elif type(e) is Scored:
            # Points written during play (telephone, muggins).
            side = _side_of(self.sides, e.seat)
            wrote = [0] * len(self.sides)
            wrote[side] = e.points
            d.scores[side] += e.points
            step("score", e.seat, f"{who(e.seat)} writes {e.points} (the ends count {e.count})", wrote=wrote)
        elif type(e) is Declared:
            step("declare", e.seat, f"{who(e.seat)} declares: {DECLARATIONS.get(e.what, e.what)}")
        elif type(e) is Turned and d.rows is not None:
            d.up = e.tile
            step("turn", e.seat, f"{who(e.seat)} turns up {tile_name(e.tile)}", tile=tile_name(e.tile))
        elif type(e) is Tailed and d.rows is not None:
            row = d.rows[e.seat]
            row.remove(e.tile)
            row.insert(0, e.tile)
            d.up = None
            step("tail", e.seat, f"{tile_name(e.tile)} fits nowhere: face down to the left end of {who(e.seat)}'s row", tile=tile_name(e.tile))
        elif type(e) is Cut and d.rows is not None and d.sausage is not None:
            d.rows[e.to][:0] = e.tiles
            d.hands[e.to].update(e.tiles)
            d.table = _sausage_doc(d.sausage)
            step("cut", e.seat, f"{who(e.seat)}'s knife cuts the sausage: {len(e.tiles)} tiles go face down to the left end of "
                 f"{who(e.to)}'s row", tiles=[tile_name(t) for t in e.tiles], to=e.to)
        else:  # an event this page does not know yet still gets its step, so the counter stays true
            seat = getattr(e, "seat", None)
            step(type(e).__name__.lower(), seat, f"{who(seat) if seat is not None else 'the referee'}: {e}")



def read_match(log: Path) -> MatchData:
    """Read a match log into its page documents.

    Raises:
        NotALog: the file cannot be read, or is not a match log (no header record).
    """
    reader = MatchReader(log)
    problem = None
    try:
        reader.run()
    except OSError as exc:
        raise NotALog(f"{log}: {exc.strerror or exc}") from None
    except (Broken, RulesError) as exc:
        if reader.header is None:
            raise NotALog(str(exc)) from None  # it names the file and the line
        problem = str(exc)
    header = reader.header
    assert header is not None
    names = reader.names
    if reader.cur is not None:
        reader.cur.doc["cut"] = True
        problem = problem or "the log stops in the middle of a deal"
    result = reader.result
    if result is None and problem is None:
        problem = "the log has no result: the match was cut short"
    match: dict[str, Any] = {
        "kind": "match", "variant": header.variant, "title": variant(header.variant).title, "layout": layout_of(header.variant),
        "players": header.players, "options": header.options, "seed": None if header.seed is None else seed_text(header.seed),
        "deals_file": header.deals_file,
        "bots": [{"name": n, "hello": None} for n in names],
        "orientations": header.orientations,
        "sides": reader.side_names, "sense": variant(header.variant).sense,
        "result": None if result is None else {k: v for k, v in msgspec.to_builtins(result).items() if k != "k"},
        "points": _points_so_far(reader.summary, reader.seatings, reader.sides, len(names)),
        "deals": reader.summary, "games": reader.game_ends,
        "faults": reader.faults,
        "problem": problem,
    }
    if result is not None:
        match["verdict"] = verdict(result)
        for bot, b in zip(match["bots"], result.bots):
            bot["hello"] = None if b.hello is None else msgspec.to_builtins(b.hello)
    for d in reader.deals:
        d["match_title"] = " vs ".join(names)
    _link_neighbours(reader.deals)
    return MatchData(match, reader.deals)


def verdict(summary: MatchSummary) -> dict[str, Any]:
    """The match's verdict and figures in the words ``referee match`` prints them
    (:mod:`referee.report`), so the page and the terminal never disagree."""
    from rich.text import Text

    from referee.report import figures_text, margin_text, verdict_text

    out: dict[str, Any] = {"margin": margin_text(summary).plain.strip().splitlines(),
                           "verdict": verdict_text(summary).plain.strip().splitlines()}
    figures = figures_text(summary)
    if isinstance(figures, Text):
        out["figures"] = figures.plain.strip().splitlines()
    else:
        out["ranking"] = msgspec.to_builtins(summary.ranking)
    return out


def _train_words(state: TrainDeal, e: int) -> str:
    return "the Mexican train" if e == state.n else f"seat {e}'s train"


def _train_placement(e: Placed, state: TrainDeal, who: Callable[[int], str]) -> tuple[str, str]:
    """A mexican_train placement's train name and words."""
    assert e.end is not None  # the station is its own step
    return state.layout.names[e.end], f"{who(e.seat)} plays {tile_name(e.tile)} on {_train_words(state, e.end)}"


def _sausage_doc(s: Sausage) -> dict[str, Any]:
    """kolbasa's table as the engine's layout has it: the start (top half first) and each line
    outward, tiles as ``[near, far]``."""
    return {"start": None if s.start[0] < 0 else list(s.start), "top": [list(t) for t in s.lines[0]],
            "bottom": [list(t) for t in s.lines[1]]}


def _sausage_placement(e: Placed, d: _Deal, who: Callable[[int], str]) -> tuple[str | None, str]:
    """Lay a kolbasa placement on the deal's sausage (the engine's :class:`Sausage`) and take the
    tile from its row; its place name and words.  A knife's step shows it across its junction
    with the sausage still whole; the :class:`Cut` step after it shows the cut."""
    assert d.rows is not None and d.sausage is not None
    d.rows[e.seat].remove(e.tile)
    d.up = None
    name, t = tile_name(e.tile), e.end
    if t is not None and t >= KNIFE:
        i = t - KNIFE
        top = d.sausage.junction(0, i)
        d.table = {**_sausage_doc(d.sausage), "knife": {"at": i, "tile": [top, OTHER[e.tile][top]]}}
        d.sausage.lay(e.tile, t)
        return place_name(t), f"{who(e.seat)} lays {name} as a knife across junction {i}"
    d.sausage.lay(e.tile, t)
    d.table = _sausage_doc(d.sausage)
    if t is None:
        return None, f"{name}, the first tile of {who(e.seat)}'s row, is the start"
    if t < 100:
        return place_name(t), f"{who(e.seat)} lays {name} on the {place_name(t)} line"
    line, j = divmod(t - 100, 100)
    return place_name(t), f"{who(e.seat)} inserts {name} into the {('top', 'bottom')[line]} line at junction {j}"


def _side_of(sides: list[tuple[int, ...]], seat: int) -> int:
    for i, seats in enumerate(sides):
        if seat in seats:
            return i
    return seat


def _end_text(reason: str, bot: str) -> str:
    return {"domino": f"{bot} goes out", "fish": f"fish: the deal is blocked; {bot} placed last",
            "fault": f"{bot} faulted: the deal is lost"}.get(reason, f"{reason}: {bot}")


def _points_so_far(summary: list[dict[str, Any]], seatings: dict[tuple[int, int], list[int]],
                   sides: list[tuple[int, ...]], bots: int) -> list[int]:
    """What each bot's sides wrote over the finished deals (a cut log's only totals)."""
    points = [0] * bots
    for d in summary:
        if "wrote" not in d:
            continue
        seating = seatings.get((d["game"], d["orientation"]))
        if seating is None:
            continue
        for side, seats in enumerate(sides):
            for b in {seating[s] for s in seats}:
                points[b] += d["wrote"][side]
    return points


def _link_neighbours(deals: list[dict[str, Any]]) -> None:
    for i, d in enumerate(deals):
        d["prev"] = deals[i - 1]["slug"] if i else None
        d["next"] = deals[i + 1]["slug"] if i + 1 < len(deals) else None
