"""Reading match logs back: ``verify`` re-plays every move and score through the engine, and
``replay`` prints deals move by move for people.

Both walk the log with :class:`LogWalker`, which rebuilds every game from the recorded deals and
accepted plays and compares what the engine says with what the log says at each step.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from rich.cells import cell_len

from protocol import messages as m
from referee import faults as F
from referee.engine import TERMINAL, IllegalPlay, variant
from referee.engine.cross import CrossDeal, arms
from referee.engine.deal import Deal, parse_deal_lines
from referee.engine.errors import BadDeal, RulesError
from referee.engine.game import Game, Variant
from referee.engine.kolbasa import KolbasaDeal
from referee.engine.layout import DOWN, LEFT, RIGHT, UP
from referee.engine.line import END_NAMES, STOP, Declared, Drew, Passed, Placed, Scored, line_of
from referee.engine.state import DealState
from referee.engine.tiles import IS_DOUBLE, parse_tile, tile_text
from referee.engine.trains import TrainDeal
from referee.log import CutShort, read_log, special_record
from referee.match import DealStream, MatchSpec, opening_moves, orientations
from referee.replay_kolbasa import event_lines as kolbasa_event_lines
from referee.results import MatchResult
from referee.stats import SprtSpec, sprt_state
from referee.table import Bot
from referee.wire import wire_for


class Inconsistent(Exception):
    """The log disagrees with the engine; the message names the line."""


class Incomplete(Inconsistent):
    """The log stops before the match's result (cut, or an interrupted match); everything up to
    ``consistent_to`` (a line number) agrees with the engine."""

    def __init__(self, message: str, consistent_to: int) -> None:
        super().__init__(message)
        self.consistent_to = consistent_to


@dataclass
class Counts:
    games: int = 0
    deals: int = 0
    plays: int = 0
    faults: int = 0
    turns_checked: int = 0


@dataclass
class LogWalker:
    """Re-plays a log.  With ``strict`` (``verify``) it also regenerates every deal from the seed
    or deal file, checks the order of records (no game, deal or result twice, none missing, a
    deal's stream index where the match driver takes it), checks each fault's kind against the
    line that caused it, rebuilds the match result from the deals and faults, and wants the log
    complete; without it (``replay``) it only re-plays what is there."""

    path: Path
    on_event: Callable[[str, dict[str, Any], DealState | None], None] | None = None
    header: dict[str, Any] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    stop: dict[str, Any] | None = None  # the ``stop`` record of a match an SPRT ended early
    strict: bool = False

    def walk(self) -> Counts:
        games: dict[tuple[int, int], Game] = {}
        staged: dict[tuple[int, int], deque[tuple[int, m.Play]]] = {}  # each game's opening moves not yet made
        opening: list[tuple[int, m.Play]] = []
        seatings: dict[tuple[int, int], list[int]] = {}
        ended: set[tuple[int, int]] = set()
        state: DealState | None = None
        key: tuple[int, int] | None = None
        stream_index = 0
        last_in: dict[int, str] = {}
        in_t: dict[int, float] = {}  # when that line was read (the log's clock)
        asked: dict[int, tuple[float, int]] = {}  # seat -> (t, time_ms) of a turn not yet answered
        v = None
        shown = 0
        result: MatchResult | None = None
        deals: DealStream | None = None
        next_stream: dict[tuple[int, int], int] = {}
        cursor: dict[int, int] = {}
        seen_result = False
        number = 0
        with closing(read_log(self.path, cut_ok=self.strict)) as records, ExitStack() as owned:
            while True:
                try:
                    number, rec = next(records)
                except StopIteration:
                    break
                except CutShort as exc:
                    raise Incomplete(f"{self.path}: incomplete: line {exc.number} is cut short (a cut log); "
                                     f"consistent up to line {exc.number - 1}", exc.number - 1) from None
                kind = rec["k"]

                def fail(msg: str) -> Inconsistent:
                    return Inconsistent(f"{self.path}: line {number} ({kind}): {msg}")  # noqa: B023  (called in this iteration only)

                if seen_result:
                    raise fail("a record after the match's result")
                if kind == "match":
                    if v is not None:
                        raise fail("a second match header")
                    self.header = rec
                    try:
                        v = variant(rec["variant"])
                    except RulesError as exc:
                        raise fail(str(exc)) from None
                    try:
                        opening = opening_moves(rec.get("opening", []))
                    except ValueError as exc:
                        raise fail(str(exc)) from None
                    if self.strict:
                        result, deals = self._rebuild(rec, v, fail)
                        owned.enter_context(result)
                    self._emit("match", rec, None)
                    continue
                if v is None:
                    raise fail("the log does not start with a match header")
                if kind in ("game", "deal") and self.stop is not None:
                    raise fail("play goes on after the match stopped")
                if kind == "game":
                    key = (rec["game"], rec["orientation"])
                    if key in games:
                        raise fail(f"game {key[0]} in orientation {key[1]} starts twice")
                    if self.strict and rec["seating"] != self.header["orientations"][key[1]]:
                        raise fail(f"the seating {rec['seating']} is not orientation {key[1]} of the header")
                    games[key] = v.new_game(self.header["players"], self.header["options"], self.header["deals"])
                    staged[key] = deque(opening)
                    limit = self.header.get("deal_limit")
                    if limit is not None:
                        if type(limit) is not int or limit < 1:
                            raise fail(f"the header's deal_limit {limit!r} is not a number of deals")
                        games[key].deal_limit = limit
                    seatings[key] = rec["seating"]
                    self.counts.games += 1
                    self._emit("game", rec, None)
                elif kind == "deal":
                    if state is not None:
                        raise fail("a deal starts before the last one ended")
                    key = (rec["game"], rec.get("orientation", 0))
                    game = games.get(key)
                    if game is None:
                        raise fail("a deal of a game that never started")
                    if key in ended:
                        raise fail("a deal of a game that has ended")
                    if rec["deal"] != game.next_number:
                        raise fail(f"deal {rec['deal']} comes where the engine is at deal {game.next_number}")
                    deal = Deal(tuple(tuple(parse_tile(t) for t in h) for h in rec["hands"]), tuple(parse_tile(t) for t in rec["undealt"]))
                    stream_index = rec["stream"]
                    if self.strict:
                        assert deals is not None
                        expected = self._stream_index(v, key, rec, next_stream, cursor, self.header["deals"])
                        if stream_index != expected:
                            raise fail(f"the deal is stream deal {stream_index}; the match takes stream deal {expected} here")
                        try:
                            dealt = deals[stream_index]
                        except BadDeal as exc:
                            raise fail(str(exc)) from None
                        if dealt != deal:
                            raise fail(f"the hands are not stream deal {stream_index} of "
                                       + (f"seed {self.header['seed']}" if deals.deals is None else f"the deal file {deals.name}"))
                    try:
                        state = game.start(deal)
                    except (RulesError, ValueError, RuntimeError) as exc:
                        raise fail(f"the engine cannot start this deal: {exc}") from None
                    void = game.records[-1].void if state is None else None
                    if void != rec.get("void"):
                        raise fail(f"the log says void={rec.get('void')!r}, the engine says {void!r}")
                    special = game.special() if state is not None else None
                    mine_special = None if special is None else special_record(special)
                    if mine_special != rec.get("special"):
                        raise fail(f"the log says the deal's special state is {rec.get('special')!r}, the engine says {mine_special!r}")
                    shown = len(state.history) if state is not None else 0
                    last_in.clear()
                    asked.clear()
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
                            wire = wire_for(state)
                            want = [_option(msgspec.to_builtins(wire.play_option(state, p))) for p in state.legal_plays()]
                            got = [_option(x) for x in msg["legal"]]
                            if got != want:
                                raise fail(f"the turn lists legal plays {got}, the engine has {want}")
                            self.counts.turns_checked += 1
                            last_in.pop(rec["seat"], None)
                            asked[rec["seat"]] = (rec.get("t", 0.0), msg.get("time_ms", 0))
                elif kind == "in":
                    last_in[rec["seat"]] = rec["line"]
                    in_t[rec["seat"]] = rec.get("t", 0.0)
                elif kind == "hello":
                    if result is not None:
                        self._hello(result, rec)
                elif kind == "play":
                    if state is None:
                        raise fail("a play outside a deal")
                    seat = rec["seat"]
                    msg = m.Play(None if rec["tile"] is None else tuple(rec["tile"]), rec["end"],
                                 **{k: rec[k] for k in m.PLAY_EXTRAS if k in rec})
                    raw = last_in.pop(seat, None)
                    asked.pop(seat, None)
                    assert key is not None  # set with the state
                    left = staged[key]
                    if rec.get("staged"):  # made by the referee from the header's opening, no bot asked
                        if not left:
                            raise fail("a staged play beyond the header's opening")
                        staged_seat, staged_move = left.popleft()
                        if (staged_seat, _key(staged_move)) != (seat, _key(msg)):
                            raise fail(f"the staged play {rec['tile']} {rec['end']} by seat {seat} is not the opening's next move")
                    elif left:
                        raise fail(f"seat {seat} was asked for a play before the staged opening was over")
                    elif raw is not None or self.strict:
                        sent = _decoded(raw)
                        if not isinstance(sent, m.Play) or _key(sent) != _key(msg):
                            raise fail(f"the play {rec['tile']} {rec['end']} is not what seat {seat} sent ({raw})")
                    try:
                        played = state.push(wire_for(state).engine_play(state, msg), seat)
                    except IllegalPlay as exc:
                        raise fail(f"illegal play by seat {seat}: {exc}") from None
                    self.counts.plays += 1
                    shown = self._emit_history(state, shown, rec)
                    if played == STOP:
                        self._emit("stop", rec, state)
                elif kind in ("fault", "forfeited_deal"):
                    if key is not None and key in staged:
                        staged[key].clear()  # as the table does: the game has left the opening's line
                    if kind == "fault":
                        self.counts.faults += 1
                        if self.strict:
                            assert result is not None
                            seat = rec["seat"]
                            evidence = None if "charged" in rec else last_in.get(seat)
                            turn = asked.pop(seat, None)
                            late = turn is not None and evidence is not None and (in_t[seat] - turn[0]) * 1000 > turn[1] - 1
                            self._fault(result, rec, state, evidence, turn is not None, late, fail)
                    if state is not None:  # as the table does, even a deal over at its start (a fish)
                        state.forfeit(rec.get("charged", rec["seat"]))
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
                    if r.rule is not None or "rule" in rec:
                        mine["rule"] = r.rule
                    theirs = {k: rec.get(k) for k in mine}
                    if mine != theirs:
                        diff = ", ".join(f"{k}: log {theirs[k]} engine {mine[k]}" for k in mine if mine[k] != theirs[k])
                        raise fail(f"the deal's result differs ({diff})")
                    if result is not None:
                        result.add_deal(r, game, key[1], key[0], stream_index)
                    self._emit("deal_end", rec, state)
                    state = None
                elif kind == "stop":
                    if state is not None:
                        raise fail("the match stops in the middle of a deal")
                    self.stop = rec
                    if result is not None:
                        result.stopped_by = rec.get("reason")
                elif kind == "game_end":
                    gkey = (rec["game"], rec.get("orientation", 0))
                    if gkey not in games:
                        raise fail("the end of a game that never started")
                    if gkey in ended:
                        raise fail(f"game {gkey[0]} in orientation {gkey[1]} ends twice")
                    if state is not None:
                        raise fail("a game ends in the middle of a deal")
                    outcome = games[gkey].outcome()
                    if outcome is None:
                        raise fail("the log ends a game the engine says is not over")
                    if list(outcome.totals) != rec["totals"] or list(outcome.winners) != rec["winners"] or list(outcome.losers) != rec["losers"]:
                        raise fail(f"the game's result differs: log {rec['totals']} winners {rec['winners']}, "
                                   f"engine {list(outcome.totals)} winners {list(outcome.winners)}")
                    ended.add(gkey)
                    if result is not None:
                        result.add_game(outcome, games[gkey], gkey[1], gkey[0], games[gkey].played)
                    self._emit("game_end", rec, None)
                elif kind == "result":
                    if state is not None:
                        raise fail("the result comes in the middle of a deal")
                    seen_result = True
                    if result is not None:
                        self._check_result(result, rec, fail)
        if v is None:
            raise Inconsistent(f"{self.path}: no match header")
        if self.strict and not seen_result:
            where = "in the middle of a deal" if state is not None else "before the match's result"
            raise Incomplete(f"{self.path}: incomplete: the log stops {where} (a cut log, or an interrupted match); "
                             f"consistent up to line {number}", number)
        if state is not None:
            raise Inconsistent(f"{self.path}: the log stops in the middle of a deal")
        return self.counts

    # -- verify's own checks ---------------------------------------------------------------------

    def _rebuild(self, header: dict[str, Any], v: Variant, fail: Callable[[str], Inconsistent]) -> tuple[MatchResult, DealStream]:
        """An empty :class:`MatchResult` for the header's match, and its deal stream."""
        players, options = header["players"], header["options"]
        shape = v.shape(players, options)
        deal_list = None
        if header.get("deals_file") is not None:
            name = header["deals_file"]
            try:
                text = Path(name).read_text(encoding="utf-8")
                if any(m.too_deep(line.encode()) for line in text.splitlines()):
                    raise BadDeal(f"nested deeper than {m.MAX_DEPTH} levels")
                deal_list = parse_deal_lines(text.splitlines(), shape)
            except (OSError, UnicodeDecodeError, BadDeal) as exc:
                raise fail(f"cannot regenerate the deals: the deal file {name}: {getattr(exc, 'strerror', None) or exc}") from None
        elif not isinstance(header.get("seed"), int):
            raise fail("the header names neither a seed nor a deal file")
        sprt = header.get("sprt")
        spec = MatchSpec(v, [Bot(b["name"], list(b["command"])) for b in header["bots"]], players, options,
                         deals=header["deals"], games=header["games"], seed=header["seed"] if deal_list is None else 1,
                         deal_file=deal_list, deal_file_name=header.get("deals_file"),
                         confidence=header.get("confidence", 0.95),
                         sprt=None if sprt is None else msgspec.convert(sprt, SprtSpec))
        seatings = [tuple(s) for s in header["orientations"]]
        if seatings != orientations(v, players, options, len(spec.bots)):
            raise fail("the header's orientations are not the ones this match plays")
        return MatchResult(spec, seatings), DealStream(shape, spec.seed, deal_list, spec.deal_file_name)

    @staticmethod
    def _stream_index(v: Variant, key: tuple[int, int], rec: dict[str, Any], next_stream: dict[tuple[int, int], int],
                      cursor: dict[int, int], per_game: int | None) -> int:
        """The stream index the match driver takes for this deal: deal ``k`` of fixed-deal game
        ``g`` is ``g * per_game + k``; in games to a target, game ``g`` starts in every
        orientation where the longest orientation of game ``g - 1`` stopped, and takes the stream
        in order (redeals too)."""
        if not v.to_target:
            return key[0] * (per_game or 0) + rec["deal"]
        g = key[0]
        if key not in next_stream:
            if g not in cursor:
                cursor[g] = max((i for (gg, _), i in next_stream.items() if gg == g - 1), default=0)
            next_stream[key] = cursor[g]
        want = next_stream[key]
        next_stream[key] = want + 1
        return want

    def _hello(self, result: MatchResult, rec: dict[str, Any]) -> None:
        """A start that shook hands gives the bot its hello (the last one counts, as in a match)."""
        label = rec.get("bot", "")
        names = [b.name for b in result.spec.bots]
        index = names.index(label) if label in names else names.index(label.rpartition("#")[0]) if label.rpartition("#")[0] in names else None
        hello = _decoded(rec.get("line"))
        limit = self.header.get("time_control", {}).get("startup")
        if (index is not None and isinstance(hello, m.BotHello) and hello.protocol == m.PROTOCOL_VERSION
                and (limit is None or rec.get("ms", 0) <= limit * 1000)):
            result.spec.bots[index].hello = hello

    def _fault(self, result: MatchResult, rec: dict[str, Any], state: DealState | None, line: str | None, asked: bool,
               late: bool, fail: Callable[[str], Inconsistent]) -> None:
        """Record a fault for the rebuilt result, after checking its kind against the line that
        caused it, where the log holds that line whole (``asked``: a turn was waiting for it;
        ``late``: it was read after the turn's time, by the log's clock)."""
        kind = rec.get("kind")
        if kind not in F.KINDS:
            raise fail(f"{kind!r} is not a kind of fault")
        names = [b.name for b in result.spec.bots]
        if rec.get("bot") not in names:
            raise fail(f"a fault of {rec.get('bot')!r}, who is not in the match")
        if line is not None and not _cut(line):
            sent = _decoded(line)
            if asked and late:
                want = F.TIMEOUT
            elif sent is None:
                want = F.BAD_OUTPUT
            elif not asked or isinstance(sent, m.BotHello):
                want = F.OUT_OF_TURN
            else:
                want = F.ILLEGAL
                if state is not None and state.end is None:
                    try:
                        legal = wire_for(state).engine_play(state, sent) in state.legal_plays()
                    except IllegalPlay:
                        legal = False
                    if legal:
                        raise fail(f"a fault, but seat {rec['seat']}'s answer {line} is legal")
            if kind != want:
                raise fail(f"the fault is {kind!r}, but the line it was for ({F.cut(line, 80)}) makes it {want!r}")
        fault = F.Fault(kind, rec["bot"], rec["seat"], rec["game"], rec["deal"], rec.get("detail", ""), rec.get("line"))
        result.spec.bots[names.index(rec["bot"])].faults.append(fault)

    @staticmethod
    def _check_result(result: MatchResult, rec: dict[str, Any], fail: Callable[[str], Inconsistent]) -> None:
        """The log's result record against the one rebuilt from its deals, games and faults."""
        if result.spec.sprt is not None:
            result.sprt = sprt_state(result.spec.sprt, result.tally)
        mine = msgspec.json.decode(msgspec.json.encode(result.summary()))
        theirs = {k: v for k, v in rec.items() if k != "k"}
        keys = [k for k in dict.fromkeys([*mine, *theirs]) if mine.get(k) != theirs.get(k)]
        if keys:
            k = keys[0]
            raise fail(f"the result differs from the one the deals and faults give: {k}: log {_short(theirs.get(k))}, "
                       f"rebuilt {_short(mine.get(k))}" + (f" (and {', '.join(keys[1:])})" if keys[1:] else ""))

    def _emit(self, kind: str, rec: dict[str, Any], state: DealState | None) -> None:
        if self.on_event is not None:
            self.on_event(kind, rec, state)

    def _emit_history(self, state: DealState, shown: int, rec: dict | None) -> int:
        if self.on_event is not None:
            for event in state.history[shown:]:
                self.on_event("event", {"event": event, "play": rec}, state)
        return len(state.history)


def verify(path: Path) -> Counts:
    """Re-play a whole log and rebuild its result; raise :class:`Inconsistent` at the first
    disagreement, :class:`Incomplete` when it stops before the result."""
    return LogWalker(path, strict=True).walk()


DECLARED_TEXT = {"hundred": "declares a hundred, leading 6-6", "write_off": "writes off the fish",
                 "decline": "declines to write off the fish"}


def special_text(sp: dict[str, Any], names: list[str], seating: list[int], rec: dict[str, Any]) -> str:
    """A sea_kozel special state for people: "for a hundred: pair A", "eggs (24 waiting), deal 2 of 3"."""
    players = len(rec["hands"])
    side = sp.get("side")
    whose = ""
    if side is not None:
        seats = [s for s in range(players) if (s % 2 if players == 4 else s) == side]
        whose = (("pair A" if side == 0 else "pair B") if players == 4 else f"seat {side}") + \
            f" ({', '.join(sorted({names[seating[s]] for s in seats}))})"
    if sp["kind"] == "hundred":
        return f"this deal is for a hundred for {whose}"
    if sp["kind"] == "write_off":
        return f"{whose} is writing off its fish, deal {sp['deal']} of {sp['of']}"
    return f"eggs ({sp['total']} waiting), deal {sp['deal']} of {sp['of']}"


def _option(x: dict) -> dict:
    return {**x, "tile": None if x["tile"] is None else list(x["tile"])}


def _key(msg: m.Play) -> tuple:
    """What identifies a play: the tile (either order), the end, and the fields only some games use
    (closed, stop, a declaration…; unset and false are the same)."""
    return (None if msg.tile is None else sorted(msg.tile), msg.end,
            *(None if (v := getattr(msg, k)) is m.UNSET or v is False else v for k in m.PLAY_EXTRAS))


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


def trains_at(state: TrainDeal, upto: int) -> tuple[list[int], int, int, bool]:
    """After the first ``upto`` events: the tiles on each train, the markers (a bitmask of
    seats), the train with an uncovered double (or -1) and whether that double hangs (its
    player passed, MT-8)."""
    laid = [0] * (state.n + 1)
    markers = 0
    open_train = -1
    hangs = False
    for e in state.history[:upto]:
        if type(e) is Passed:
            markers |= 1 << e.seat
            hangs = open_train >= 0
        elif type(e) is Placed and e.end is not None:
            laid[e.end] += 1
            if e.end == e.seat:
                markers &= ~(1 << e.seat)
            open_train = e.end if IS_DOUBLE[e.tile] else -1
            hangs = False
    return laid, markers, open_train, hangs


def trains_text(state: TrainDeal, upto: int, trains: list[int] | None = None) -> list[str]:
    """mexican_train's trains after the first ``upto`` events, one line each (``trains``: only
    those), tiles outward from the station: ``seat1    [5|6][6|6]  marker, open double``."""
    laid, markers, open_train, hangs = trains_at(state, upto)
    lines = []
    for t in range(state.n + 1) if trains is None else trains:
        tiles = "".join(f"[{near}|{far}]" for near, far in state.layout.tiles[t][:laid[t]]) or "-"
        notes = (["marker"] if markers >> t & 1 else []) + ([f"{'hanging' if hangs else 'open'} double"] if t == open_train else [])
        lines.append(f"{state.train_name(t):<8} {tiles}" + (f"  ({', '.join(notes)})" if notes else ""))
    return lines


def _decoded(line: str | None) -> m.FromBotMessage | None:
    """A logged line as a message from a bot, or ``None``."""
    if line is None:
        return None
    try:
        return m.decode_from_bot(line.encode())
    except msgspec.DecodeError:
        return None


def _cut(line: str) -> bool:
    """Whether a logged line was cut short (see :func:`referee.faults.cut`)."""
    return line.endswith(" chars)") and "… (" in line


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:80] + "…"


#: Where a replay line may break: at a space, or between two tiles of a line of play
#: (``[1|2][2|3]``, a closed double ``[5#5]``, a cross's lead ``{4|4}``); never inside a tile.
_BREAKS = re.compile(r"(?<=[\]}])(?=[\[{])")
_TILE = re.compile(r"\[\d[|#]\d\]|\{\d\|\d\}")


def fold(text: str, width: int) -> list[str]:
    """A replay line (one or more physical lines) as lines of at most ``width`` cells, broken at
    spaces and between tiles, never inside a tile.  A continuation starts under the line's first
    tile (a hand's tiles stay in their column) when that is in the left half, else two further in
    than the line.  A piece wider than ``width`` by itself (a long name) stays whole on a line
    of its own."""
    out: list[str] = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[:len(line) - len(body)]
        first = _TILE.search(line)
        hang = " " * cell_len(line[:first.start()]) if first and cell_len(line[:first.start()]) <= width // 2 else indent + "  "
        cur, fresh = indent, True
        for word_match in re.finditer(r"(\s*)(\S+)", body):
            space, word = word_match.groups()
            for i, piece in enumerate(_BREAKS.split(word)):
                joined = cur + ("" if fresh or i else space) + piece
                if not fresh and cell_len(joined) > width:
                    out.append(cur)
                    cur = hang + piece
                else:
                    cur = joined
                fresh = False
        out.append(cur)
    return out


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
            if rec.get("opening"):
                out.append(f"staged: the referee makes the first {len(rec['opening'])} moves of every game itself (marked \"staged\")")
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
            if isinstance(state, KolbasaDeal):
                out.append("   the rows, left to right (the rightmost is turned up first):")
            for s, hand in enumerate(rec["hands"]):
                out.append(f"   {who(s):<24} " + " ".join(tile_text(parse_tile(t)) for t in hand))
            if rec["undealt"]:
                out.append(f"   {'undealt':<24} " + " ".join(tile_text(parse_tile(t)) for t in rec["undealt"]))
            current["who"] = who
            if rec.get("special"):
                out.append(f"   special: {special_text(rec['special'], names, seating, rec)}")
            if state is not None:
                for event in state.history:
                    on("event", {"event": event}, state)
            return
        if not selected:
            return
        who = current.get("who", lambda s: f"seat {s}")
        if kind == "event":
            e = rec["event"]
            # The events of the deal so far, this one included: counted, because equal events (a
            # seat's second knock) would make history.index() find the first.
            upto = current["events"] = current.get("events", 0) + 1
            play = rec.get("play") or {}
            # what the play took, or that the referee made it (a staged opening)
            ms = " (staged)" if play.get("staged") else f"  {play['ms']:.1f} ms" if play.get("ms") is not None else ""
            if isinstance(state, KolbasaDeal):
                out.extend(kolbasa_event_lines(e, who, state, ms))
            elif type(e) is Placed and isinstance(state, TrainDeal):
                if e.end is None:
                    out.append(f"   station {tile_text(e.tile)}; {who(e.seat)} starts")
                    return
                out.append(f"   {who(e.seat)} plays {tile_text(e.tile)} on {state.train_name(e.end)}{ms}")
                out.append(f"      {trains_text(state, upto, [e.end])[0]}")
            elif type(e) is Passed and isinstance(state, TrainDeal):
                _, _, open_train, _ = trains_at(state, upto)
                hangs = f"; the double on {state.train_name(open_train)} hangs" if open_train >= 0 else ""
                out.append(f"   {who(e.seat)} knocks: a marker goes on {state.train_name(e.seat)}{hangs}")
            elif type(e) is Placed:
                assert state is not None  # an event belongs to a deal
                where = "leads" if e.end is None else f"plays on the {END_NAMES[e.end]}"
                forced = " (forced)" if e.forced else ""
                closed = " closed" if e.closed else ""
                line = layout_text(state, upto)
                out.append(f"   {who(e.seat)} {where} {tile_text(e.tile)}{closed}{forced}{ms}")
                out.append(f"      {line}")
            elif type(e) is Scored:
                out.append(f"      the ends add up to {e.count}: {who(e.seat)} writes {e.points}")
            elif type(e) is Declared:
                out.append(f"   {who(e.seat)} {DECLARED_TEXT[e.what]}")
            elif type(e) is Drew:
                out.append(f"   {who(e.seat)} draws {e.count}: " + " ".join(tile_text(t) for t in e.tiles))
            elif type(e) is Passed:
                out.append(f"   {who(e.seat)} knocks")
        elif kind == "stop":
            out.append(f"   {who(rec['seat'])} stops")
        elif kind == "fault":
            out.append(f"   FAULT {who(rec['seat'])}: {rec['kind']}: {rec['detail']}")
        elif kind == "deal_end":
            if isinstance(state, TrainDeal):
                out.append("   the trains:")
                out.extend(f"      {line}" for line in trains_text(state, len(state.history)))
            how = {"domino": "goes out", "fish": "is the fisherman", "fault": "faulted"}[rec["reason"]]
            rule = f" (rule: {rec['rule']})" if rec.get("rule") else ""
            out.append(f"   -- {rec['reason']}: {who(rec['seat'])} {how}{rule}")
            out.append(f"   hand values {rec['values']}; wrote {rec['wrote']}; totals {rec['totals']}")
            for note in rec.get("notes", []):
                out.append(f"      {note}")

    LogWalker(path, on).walk()
    yield from out
