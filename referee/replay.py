"""Reading match logs back: ``verify`` re-plays every move and score through the engine, and
``replay`` prints deals move by move for people.

Both walk the log with :class:`LogWalker`, which rebuilds every game from the recorded deals and
accepted plays and compares what the engine says with what the log says at each step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from protocol import messages as m
from referee.engine import TERMINAL, IllegalPlay, variant
from referee.engine.cross import CrossDeal, arms
from referee.engine.deal import Deal
from referee.engine.errors import RulesError
from referee.engine.game import Game
from referee.engine.layout import DOWN, LEFT, RIGHT, UP
from referee.engine.line import END_NAMES, STOP, Drew, Passed, Placed, Scored, line_of
from referee.engine.state import DealState
from referee.engine.tiles import parse_tile, tile_text
from referee.log import read_log
from referee.wire import engine_play, play_option


class Inconsistent(Exception):
    """The log disagrees with the engine; the message names the line."""


@dataclass
class Counts:
    games: int = 0
    deals: int = 0
    plays: int = 0
    faults: int = 0
    turns_checked: int = 0


@dataclass
class LogWalker:
    path: Path
    on_event: Callable[[str, dict[str, Any], DealState | None], None] | None = None
    header: dict[str, Any] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    stop: dict[str, Any] | None = None  # the ``stop`` record of a match an SPRT ended early

    def walk(self) -> Counts:
        games: dict[tuple[int, int], Game] = {}
        seatings: dict[tuple[int, int], list[int]] = {}
        state: DealState | None = None
        key: tuple[int, int] | None = None
        last_in: dict[int, str] = {}
        v = None
        shown = 0
        for number, rec in read_log(self.path):
            kind = rec["k"]

            def fail(msg: str) -> Inconsistent:
                return Inconsistent(f"{self.path}: line {number} ({kind}): {msg}")  # noqa: B023  (called in this iteration only)

            if kind == "match":
                self.header = rec
                try:
                    v = variant(rec["variant"])
                except RulesError as exc:
                    raise fail(str(exc)) from None
                self._emit("match", rec, None)
                continue
            if v is None:
                raise fail("the log does not start with a match header")
            if kind in ("game", "deal") and self.stop is not None:
                raise fail("play goes on after the match stopped")
            if kind == "game":
                key = (rec["game"], rec["orientation"])
                games[key] = v.new_game(self.header["players"], self.header["options"], self.header["deals"])
                seatings[key] = rec["seating"]
                self.counts.games += 1
                self._emit("game", rec, None)
            elif kind == "deal":
                key = (rec["game"], rec.get("orientation", 0))
                game = games.get(key)
                if game is None:
                    raise fail("a deal of a game that never started")
                deal = Deal(tuple(tuple(parse_tile(t) for t in h) for h in rec["hands"]), tuple(parse_tile(t) for t in rec["undealt"]))
                try:
                    state = game.start(deal)
                except (RulesError, ValueError, RuntimeError) as exc:
                    raise fail(f"the engine cannot start this deal: {exc}") from None
                void = game.records[-1].void if state is None else None
                if void != rec.get("void"):
                    raise fail(f"the log says void={rec.get('void')!r}, the engine says {void!r}")
                shown = len(state.history) if state is not None else 0
                last_in.clear()
                if state is not None:
                    self.counts.deals += 1
                self._emit("deal", {**rec, "seating": seatings[key]}, state)
            elif kind == "out":
                if state is None or state.end is not None:
                    continue
                for msg in rec["msgs"]:
                    if msg.get("type") == "turn":
                        if rec["seat"] != state.turn:
                            raise fail(f"a turn was sent to seat {rec['seat']} but seat {state.turn} is to move")
                        want = [_option(msgspec.to_builtins(play_option(p))) for p in state.legal_plays()]
                        got = [_option(x) for x in msg["legal"]]
                        if got != want:
                            raise fail(f"the turn lists legal plays {got}, the engine has {want}")
                        self.counts.turns_checked += 1
            elif kind == "in":
                last_in[rec["seat"]] = rec["line"]
            elif kind == "play":
                if state is None:
                    raise fail("a play outside a deal")
                seat = rec["seat"]
                msg = m.Play(None if rec["tile"] is None else tuple(rec["tile"]), rec["end"],
                             closed=rec.get("closed", m.UNSET), stop=rec.get("stop", m.UNSET))
                raw = last_in.get(seat)
                if raw is not None:
                    try:
                        sent = m.decode_from_bot(raw.encode())
                    except msgspec.DecodeError:
                        sent = None
                    if not isinstance(sent, m.Play) or _key(sent) != _key(msg):
                        raise fail(f"the play {rec['tile']} {rec['end']} is not what seat {seat} sent ({raw})")
                try:
                    played = state.push(engine_play(msg), seat)
                except IllegalPlay as exc:
                    raise fail(f"illegal play by seat {seat}: {exc}") from None
                self.counts.plays += 1
                if played == STOP:
                    self._emit("stop", rec, state)
                shown = self._emit_history(state, shown, rec)
            elif kind in ("fault", "forfeited_deal"):
                if kind == "fault":
                    self.counts.faults += 1
                if state is not None and state.end is None:
                    state.forfeit(rec["seat"])
                self._emit(kind, rec, state)
            elif kind == "deal_end":
                if state is None:
                    raise fail("a deal end without a deal")
                if state.to_move() != TERMINAL:
                    raise fail(f"the log ends the deal but the engine has seat {state.turn} to move")
                shown = self._emit_history(state, shown, None)
                assert key is not None  # set with the state
                game = games[key]
                r = game.finish(state)
                assert r.end is not None
                mine = {"reason": r.end.reason, "seat": r.end.seat, "values": list(r.values), "wrote": list(r.wrote), "totals": list(r.totals)}
                theirs = {k: rec.get(k) for k in mine}
                if mine != theirs:
                    diff = ", ".join(f"{k}: log {theirs[k]} engine {mine[k]}" for k in mine if mine[k] != theirs[k])
                    raise fail(f"the deal's result differs ({diff})")
                self._emit("deal_end", rec, state)
                state = None
            elif kind == "stop":
                if state is not None:
                    raise fail("the match stops in the middle of a deal")
                self.stop = rec
            elif kind == "game_end":
                gkey = (rec["game"], rec.get("orientation", 0))
                outcome = games[gkey].outcome()
                if outcome is None:
                    raise fail("the log ends a game the engine says is not over")
                if list(outcome.totals) != rec["totals"] or list(outcome.winners) != rec["winners"] or list(outcome.losers) != rec["losers"]:
                    raise fail(f"the game's result differs: log {rec['totals']} winners {rec['winners']}, "
                               f"engine {list(outcome.totals)} winners {list(outcome.winners)}")
                self._emit("game_end", rec, None)
        if v is None:
            raise Inconsistent(f"{self.path}: no match header")
        if state is not None:
            raise Inconsistent(f"{self.path}: the log stops in the middle of a deal")
        return self.counts

    def _emit(self, kind: str, rec: dict[str, Any], state: DealState | None) -> None:
        if self.on_event is not None:
            self.on_event(kind, rec, state)

    def _emit_history(self, state: DealState, shown: int, rec: dict | None) -> int:
        if self.on_event is not None:
            for event in state.history[shown:]:
                self.on_event("event", {"event": event, "play": rec}, state)
        return len(state.history)


def _option(x: dict) -> dict:
    return {**x, "tile": None if x["tile"] is None else list(x["tile"])}


def _key(msg: m.Play) -> tuple:
    """What identifies a play: the tile (either order), the end, closed, stop."""
    return (None if msg.tile is None else sorted(msg.tile), msg.end, msg.closed is True, msg.stop is True)


def layout_text(state: DealState, upto: int) -> str:
    """The layout after the first ``upto`` events, as one line for people.

    A line: its tiles left to right.  A cross: the line left to right with the lead in braces,
    and once the cross has opened a second line with the ``up`` and ``down`` arms outward; a
    closed double is shown ``[5#5]``.
    """
    history = state.history[:upto]
    if not isinstance(state, CrossDeal):
        return "".join(f"[{a}|{b}]" for a, b in line_of(history))
    a = arms(history)

    def tile(near: int, far: int, closed: bool, outward: bool = True) -> str:
        x, y = (near, far) if outward else (far, near)
        return f"[{x}{'#' if closed else '|'}{y}]"

    lead = a.get(None)
    if not lead:
        return ""
    lo, hi, _ = lead[0]
    line = ("".join(tile(n, f, c, outward=False) for n, f, c in reversed(a.get(LEFT, [])))
            + f"{{{lo}|{hi}}}" + "".join(tile(n, f, c) for n, f, c in a.get(RIGHT, [])))
    if a.get(UP) or a.get(DOWN) or state.layout.opened:
        line += "\n      " + "   ".join(f"{name}: " + ("".join(tile(n, f, c) for n, f, c in a.get(e, [])) or "-")
                                       for e, name in ((UP, "up"), (DOWN, "down")))
    return line


def verify(path: Path) -> Counts:
    """Re-play a whole log; raise :class:`Inconsistent` at the first disagreement."""
    return LogWalker(path).walk()


def replay_lines(path: Path, game: int | None = None, deal: int | None = None, orientation: int | None = None) -> Iterator[str]:
    """The deals of a log, move by move, as text."""
    out: list[str] = []
    names: list[str] = []
    current: dict[str, Any] = {}
    selected = False

    def on(kind: str, rec: dict[str, Any], state: DealState | None) -> None:
        nonlocal selected
        if kind == "match":
            names.extend(b["name"] for b in rec["bots"])
            opts = ", ".join(f"{k}={v}" for k, v in rec["options"].items())
            out.append(f"{rec['variant']}, {rec['players']} players" + (f" ({opts})" if opts else "") + ", bots: " + ", ".join(names))
            return
        if kind == "deal":
            current.clear()
            current.update(rec)
            selected = ((game is None or rec["game"] + 1 == game) and (deal is None or rec["deal"] + 1 == deal)
                        and (orientation is None or rec.get("orientation", 0) == orientation))
            if not selected:
                return
            seating = rec["seating"]
            who = lambda s: f"seat {s} ({names[seating[s]]})"  # noqa: E731
            out.append("")
            out.append(f"== game {rec['game'] + 1}, orientation {rec.get('orientation', 0)}, deal {rec['deal'] + 1} (stream {rec['stream']})"
                       + (f" — void: {rec['void']}, redealt" if rec.get("void") else ""))
            for s, hand in enumerate(rec["hands"]):
                out.append(f"   {who(s):<24} " + " ".join(tile_text(parse_tile(t)) for t in hand))
            if rec["undealt"]:
                out.append(f"   {'undealt':<24} " + " ".join(tile_text(parse_tile(t)) for t in rec["undealt"]))
            current["who"] = who
            if state is not None:
                for event in state.history:
                    on("event", {"event": event}, state)
            return
        if not selected:
            return
        who = current.get("who", lambda s: f"seat {s}")
        if kind == "event":
            e = rec["event"]
            if type(e) is Placed:
                assert state is not None  # an event belongs to a deal
                where = "leads" if e.end is None else f"plays on the {END_NAMES[e.end]}"
                forced = " (forced)" if e.forced else ""
                closed = " closed" if e.closed else ""
                line = layout_text(state, state.history.index(e) + 1)
                ms = f"  {rec['play']['ms']:.1f} ms" if rec.get("play") and rec["play"].get("ms") is not None else ""
                out.append(f"   {who(e.seat)} {where} {tile_text(e.tile)}{closed}{forced}{ms}")
                out.append(f"      {line}")
            elif type(e) is Scored:
                out.append(f"      the ends add up to {e.count}: {who(e.seat)} writes {e.points}")
            elif type(e) is Drew:
                out.append(f"   {who(e.seat)} draws {e.count}: " + " ".join(tile_text(t) for t in e.tiles))
            elif type(e) is Passed:
                out.append(f"   {who(e.seat)} knocks")
        elif kind == "stop":
            out.append(f"   {who(rec['seat'])} stops")
        elif kind == "fault":
            out.append(f"   FAULT {who(rec['seat'])}: {rec['kind']}: {rec['detail']}")
        elif kind == "deal_end":
            how = {"domino": "goes out", "fish": "is the fisherman", "fault": "faulted"}[rec["reason"]]
            out.append(f"   -- {rec['reason']}: {who(rec['seat'])} {how}")
            out.append(f"   hand values {rec['values']}; wrote {rec['wrote']}; totals {rec['totals']}")
            for note in rec.get("notes", []):
                out.append(f"      {note}")

    LogWalker(path, on).walk()
    yield from out
