"""The JSON documents behind the match and deal pages, built from match logs.

Every page of a report is drawn from exactly one document (see :mod:`referee.web`): a *deal*
document per played deal (the replay), a *match* document per log (and a *league* document per
league, which :mod:`tournaments.report` makes).  Documents hold data only (names, tiles as ``"a-b"``, numbers, the log's own notes);
how they look is the templates' and scripts' business.

Logs are read through a :class:`referee.audit.replay.Replayer`, which re-plays every move through the
engine, so a replay shows the deal as the engine saw it: the hands after each event come from
the engine's own events (placements, draws, passes), never from a second reading of the rules.
A log that stops early (a match cut short, a killed process) or breaks at some line gives every
deal before that point, the deal in progress marked ``cut``, and the reason in ``problem``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from referee.audit.replay import Broken, Oversized, Replayer
from referee.base.seeds import seed_text
from referee.engine import variant
from referee.engine.core.errors import RulesError
from referee.engine.core.line import Event
from referee.engine.core.state import DealState
from referee.engine.core.tiles import parse_tile, tile_name
from referee.records import records as R
from referee.records.summary import MatchSummary
from referee.sides import side_for, side_of
from referee.sides.base import DealSteps
from referee.sides.pages import DealPage, FaultNote, Result, Seat


class NotALog(ValueError):
    """The file is not a match log at all (no header); one line for the command line."""


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
class MatchData:
    """What :func:`read_match` gives: the match document and one document per played deal."""

    match: dict[str, Any]
    deals: list[dict[str, Any]]  # the deals' documents (:class:`~referee.sides.pages.DealPage`) as their pages get them


class MatchReader(Replayer):
    """Reads a match log into its page documents (:func:`read_match`)."""

    def __init__(self, log: Path) -> None:
        super().__init__(log)
        self.deals: list[DealPage] = []
        self.summary: list[dict[str, Any]] = []
        self.game_ends: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []
        self.totals_by_key: dict[tuple[int, int], list[int]] = {}
        self.result: R.Result | None = None
        self.cur: DealSteps | None = None
        self.sides: list[tuple[int, ...]] = []
        self.side_names: list[str] = []
        self.layout = "line"  # the web renderer of the game's table (its side's)

    def on_header(self, rec: R.Header) -> None:
        v = variant(rec.variant)
        g = v.new_game(rec.players, rec.options, rec.deals)
        self.sides.extend(g.sides)
        self.side_names.extend(g.side_name(s) for s in range(len(g.sides)))
        self.layout = side_of(v, rec.players, rec.options).layout

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
        side = side_for(state)
        entry.update(leader=state.leader, leader_bot=self.names[seating[state.leader]],
                     lead_tile=tile_name(state.lead_tile) if state.lead_tile is not None else None, lead_word=side.lead_word)
        hands = [{parse_tile(t) for t in h} for h in rec.hands]
        undealt = [parse_tile(t) for t in rec.undealt]
        doc = side.page(
            "deal", header.variant, variant(header.variant).title, side.layout, header.players,
            rec.game, key[1], rec.deal, rec.stream, entry["slug"],
            [Seat(s, self.names[b], _side_of(self.sides, s)) for s, b in enumerate(seating)],
            self.side_names,
            [_sorted_names(h) for h in hands],
            [tile_name(t) for t in undealt],
            "bazaar" if state.bazaar else "sleeping",
            state.leader,
            list(before),
            [],
        )
        cur = self.cur = DealSteps(doc, hands, undealt if state.bazaar else [], self.sides, scores=list(before))
        side.web_deal(cur, state, rec.hands)
        self.deals.append(doc)
        cur.step("deal", None, "the deal")

    def on_fault(self, rec: R.Fault) -> None:
        self.faults.append(msgspec.to_builtins(msgspec.structs.asdict(rec)))
        if self.cur is not None and self.cur.doc.result is None:
            self.cur.step("fault", rec.seat, f"{self.who(rec.seat)} faults: {rec.kind}", fault=FaultNote(rec.kind, rec.detail, rec.line))

    def on_forfeited_deal(self, rec: R.ForfeitedDeal) -> None:
        if self.cur is not None and self.cur.doc.result is None:
            self.cur.step("forfeit", rec.seat, f"{self.who(rec.seat)} has forfeited the match: the deal is lost")

    def on_deal_end(self, rec: R.DealEnd, state: DealState) -> None:
        key = (rec.game, rec.orientation)
        self.totals_by_key[key] = list(rec.totals)
        entry = self.summary[-1]
        entry.update(end=rec.reason, by=rec.seat, wrote=rec.wrote, totals=rec.totals, notes=rec.notes)
        cur = self.cur
        if cur is not None:
            cur.scores = list(rec.totals)
            res = Result(rec.reason, rec.seat, rec.values, rec.wrote, rec.totals, rec.notes)
            cur.doc.result = res
            by = self.who(rec.seat) if rec.seat is not None else "nobody"
            cur.step("end", rec.seat, _end_text(rec.reason, by), result=res)
            entry["by_bot"] = by
            self.cur = None

    def on_game_end(self, rec: R.GameEnd) -> None:
        row = {k: v for k, v in msgspec.to_builtins(rec).items() if k != "k"}
        row["result"] = f"{self.game_winners(rec)} — {rec.reason}"
        self.game_ends.append(row)

    def game_winners(self, rec: R.GameEnd) -> str:
        """Who won a game, by bot: "greedy_bot won", "a and b won", or "drawn"."""
        seating = self.seatings.get((rec.game, rec.orientation))
        if not rec.winners or seating is None:
            return "drawn"
        won = sorted({seating[seat] for side in rec.winners if side < len(self.sides) for seat in self.sides[side]})
        return " and ".join(self.names[b] for b in won) + " won" if won else "drawn"

    def on_result(self, rec: R.Result) -> None:
        self.result = rec

    def on_event(self, e: Event, play: R.Play | None, state: DealState) -> None:
        d = self.cur
        if d is None:
            return
        d.events += 1
        side_for(state).web_event(d, e, state, self.who, play.ms if play is not None else None)


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
    except Oversized as exc:
        raise NotALog(str(exc)) from None  # a log made to cost memory or time: no report of it
    except (Broken, RulesError) as exc:
        if reader.header is None:
            raise NotALog(str(exc)) from None  # it names the file and the line
        problem = str(exc)
    header = reader.header
    assert header is not None
    names = reader.names
    if reader.cur is not None:
        reader.cur.doc.cut = True
        problem = problem or "the log stops in the middle of a deal"
    result = reader.result
    if result is None and problem is None:
        problem = "the log has no result: the match was cut short"
    match: dict[str, Any] = {
        "kind": "match", "variant": header.variant, "title": variant(header.variant).title, "layout": reader.layout,
        "players": header.players, "options": header.options, "seed": None if header.seed is None else seed_text(header.seed),
        "deals_file": header.deals_file, "event": header.event,
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
        d.match_title = " vs ".join(names)
    _link_neighbours(reader.deals)
    return MatchData(match, [msgspec.to_builtins(d) for d in reader.deals])


def verdict(summary: MatchSummary) -> dict[str, Any]:
    """The match's verdict and figures in the words ``referee match`` prints them
    (:mod:`referee.matches.report`), so the page and the terminal never disagree."""
    from rich.text import Text

    from referee.matches.report import figures_text, margin_text, verdict_text

    out: dict[str, Any] = {"margin": margin_text(summary).plain.strip().splitlines(),
                           "verdict": [_labelled_los(line, summary) for line in verdict_text(summary).plain.strip().splitlines()]}
    figures = figures_text(summary)
    if isinstance(figures, Text):
        out["figures"] = figures.plain.strip().splitlines()
    else:
        out["ranking"] = msgspec.to_builtins(summary.ranking)
    return out


def _labelled_los(line: str, summary: MatchSummary) -> str:
    """A verdict line whose "(LOS 97.1%)" says what it is the chance of, as the figures' LOS
    line does: "(LOS, greedy_bot better than random_bot: 97.1%)" (the leader against the next place)."""
    rows = summary.ranking.standings
    if "(LOS " not in line or "(LOS —" in line or len(rows) < 2:  # "(LOS —, one pair)": no figure to label
        return line
    return line.replace("(LOS ", f"(LOS, {rows[0].bot} better than {rows[1].bot}: ", 1)


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


def _link_neighbours(deals: list[DealPage]) -> None:
    for i, d in enumerate(deals):
        d.prev = deals[i - 1].slug if i else None
        d.next = deals[i + 1].slug if i + 1 < len(deals) else None
