"""``verify`` for logs of format 1 (written before round 3), kept as it was then.

A format-1 log was made by a referee whose processes played every orientation and whose ``in``
records kept lines as text; it cannot be played again by today's referee (:mod:`referee.audit.verify`),
so this module re-plays it through the engine as ``verify`` did when it was written: every deal
regenerated from the seed (``splitmix64``) or the deal file, every move, score and fault (its kind
checked against the line it was for where the log keeps it), the result rebuilt.  It reads the
log's records as plain JSON objects, the format-1 shape; nothing else in the referee does.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Generator
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from protocol import messages as m
from referee.audit.inconsistency import Counts, Incomplete, Inconsistent, older_ties, stop_text
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.conversation import faults as F
from referee.conversation.log import special_record
from referee.conversation.players import Entry
from referee.engine import TERMINAL, IllegalPlay, variant
from referee.engine.core.deal import Deal, parse_deal_lines
from referee.engine.core.errors import BadDeal, RulesError
from referee.engine.core.game import Game, Variant
from referee.engine.core.shuffle import SPLITMIX64
from referee.engine.core.state import DealState
from referee.engine.core.tiles import parse_tile
from referee.matches.match import DealStream, opening_moves, orientations
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec
from referee.records import records as R
from referee.sides import side_for
from referee.stats.figures import alike
from referee.stats.sprt import SprtSpec, sprt_state


def read_log(path: Path) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """The records of a format-1 log as JSON objects, with their line numbers.

    Raises:
        Incomplete: a last line without its newline, once the lines before it are read.
        Inconsistent: a line that is not a JSON object, naming it.
    """
    bounds = R.Bounds()
    for number, raw in enumerate(R.log_lines(path, bounds), start=1):
        if not raw.endswith(b"\n"):
            raise Incomplete(f"{path}: incomplete: line {number} is cut short (a cut log); "
                             f"consistent up to line {number - 1}", number - 1)
        if not raw.strip():
            continue
        if m.too_deep(raw):
            raise R.Damaged(f"{path}: line {number} is JSON nested deeper than {m.MAX_DEPTH} levels")
        try:
            rec = json.loads(raw)
        except ValueError:
            raise R.Damaged(f"{path}: line {number} is not JSON") from None
        if not isinstance(rec, dict) or "k" not in rec:
            raise R.Damaged(f"{path}: line {number} is not a log record")
        if number == 1 and rec["k"] == "match":
            try:
                header = R.decode(raw, path, number)
            except R.Damaged:
                pass  # a header of format 1 the records of today cannot type: the line bound only
            else:
                if isinstance(header, R.Header):
                    bounds.fit(header)
        yield number, rec


@dataclass
class LogWalker:
    """Re-plays a format-1 log: regenerates every deal from the seed or deal file, checks the
    order of records (no game, deal or result twice, none missing, a deal's stream index where
    the match driver takes it), checks each fault's kind against the line that caused it,
    rebuilds the match result from the deals and faults, and wants the log complete."""

    path: Path
    header: dict[str, Any] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    stop: dict[str, Any] | None = None  # the ``stop`` record of a match an SPRT ended early
    entries: list[Entry] = field(default_factory=list)

    # One function of 225 lines, complexity 73, on purpose: this is the format-1 verifier as it
    # verified those logs when they were written (the module's docstring); it is frozen, and a
    # split would be a rewrite of code whose only job is to stay what it was.
    def walk(self) -> Counts:  # noqa: C901 - frozen with format 1 (see above)
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
        result: MatchResult | None = None
        deals: DealStream | None = None
        next_stream: dict[tuple[int, int], int] = {}
        cursor: dict[int, int] = {}
        seen_result = False
        number = 0
        with closing(read_log(self.path)) as records, ExitStack() as owned:
            while True:
                try:
                    number, rec = next(records)
                except StopIteration:
                    break
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
                        opening = _opening(rec.get("opening", []))
                    except ValueError as exc:
                        raise fail(str(exc)) from None
                    result, deals = self._rebuild(rec, v, fail)
                    owned.enter_context(result)
                    continue
                if v is None:
                    raise fail("the log does not start with a match header")
                if kind in ("game", "deal") and self.stop is not None:
                    raise fail("play goes on after the match stopped")
                if kind == "game":
                    key = (rec["game"], rec["orientation"])
                    if key in games:
                        raise fail(f"game {key[0]} in orientation {key[1]} starts twice")
                    if rec["seating"] != self.header["orientations"][key[1]]:
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
                    if True:
                        assert deals is not None
                        expected = self._stream_index(v, key, rec, next_stream, cursor)
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
                    mine_special = None if special is None else msgspec.to_builtins(special_record(special))
                    if mine_special != rec.get("special"):
                        raise fail(f"the log says the deal's special state is {rec.get('special')!r}, the engine says {mine_special!r}")
                    last_in.clear()
                    asked.clear()
                    if state is not None:
                        self.counts.deals += 1
                elif kind == "out":
                    if state is None or state.end is not None:
                        continue
                    for msg in rec["msgs"]:
                        if msg.get("type") == "turn":
                            if rec["seat"] != state.turn:
                                raise fail(f"a turn was sent to seat {rec['seat']} but seat {state.turn} is to move")
                            wire = side_for(state)
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
                    else:
                        sent = _decoded(raw)
                        if not isinstance(sent, m.Play) or _key(sent) != _key(msg):
                            raise fail(f"the play {rec['tile']} {rec['end']} is not what seat {seat} sent ({raw})")
                    try:
                        state.push(side_for(state).engine_play(state, msg), seat)
                    except IllegalPlay as exc:
                        raise fail(f"illegal play by seat {seat}: {exc}") from None
                    self.counts.plays += 1
                elif kind in ("fault", "forfeited_deal"):
                    if key is not None and key in staged:
                        staged[key].clear()  # as the table does: the game has left the opening's line
                    if kind == "fault":
                        self.counts.faults += 1
                        if True:
                            assert result is not None
                            seat = rec["seat"]
                            evidence = None if "charged" in rec else last_in.get(seat)
                            turn = asked.pop(seat, None)
                            late = turn is not None and evidence is not None and (in_t[seat] - turn[0]) * 1000 > turn[1] - 1
                            self._fault(result, rec, state, evidence, turn is not None, late, fail)
                    if state is not None:  # as the table does, even a deal over at its start (a fish)
                        state.forfeit(rec.get("charged", rec["seat"]))
                elif kind == "deal_end":
                    if state is None:
                        raise fail("a deal end without a deal")
                    if state.to_move() != TERMINAL:
                        raise fail(f"the log ends the deal but the engine has seat {state.turn} to move")
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
                elif kind == "result":
                    if state is not None:
                        raise fail("the result comes in the middle of a deal")
                    seen_result = True
                    if result is not None:
                        self._check_result(result, rec, fail)
        if v is None:
            raise Inconsistent(f"{self.path}: no match header")
        if not seen_result:
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
                         deals_from=SPLITMIX64,
                         deal_file=deal_list, deal_file_name=header.get("deals_file"),
                         confidence=header.get("confidence", 0.95),
                         sprt=None if sprt is None else msgspec.convert(sprt, SprtSpec))
        seatings = [tuple(s) for s in header["orientations"]]
        if seatings != orientations(v, players, options, len(spec.bots)):
            raise fail("the header's orientations are not the ones this match plays")
        self.entries = [Entry(bot, i, TimeControl()) for i, bot in enumerate(spec.bots)]
        return MatchResult(spec, seatings, self.entries), DealStream(shape, spec.seed, deal_list, spec.deal_file_name, SPLITMIX64)

    @staticmethod
    def _stream_index(v: Variant, key: tuple[int, int], rec: dict[str, Any], next_stream: dict[tuple[int, int], int],
                      cursor: dict[int, int]) -> int:
        """The stream index the match driver takes for this deal: deal ``k`` of a fixed-deal
        game; in games to a target, game ``g`` starts in every orientation where the longest
        orientation of game ``g - 1`` stopped, and takes the stream in order (redeals too)."""
        if not v.to_target:
            return rec["deal"]
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
            self.entries[index].hello = hello

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
                        legal = side_for(state).engine_play(state, sent) in state.legal_plays()
                    except IllegalPlay:
                        legal = False
                    if legal:
                        raise fail(f"a fault, but seat {rec['seat']}'s answer {line} is legal")
            if kind != want:
                raise fail(f"the fault is {kind!r}, but the line it was for ({F.cut(line, 80)}) makes it {want!r}")
        fault = F.Fault(kind, rec["bot"], rec["seat"], rec["game"], rec["deal"], rec.get("detail", ""), rec.get("line"))
        self.entries[names.index(rec["bot"])].faults.append(fault)

    @staticmethod
    def _check_result(result: MatchResult, rec: dict[str, Any], fail: Callable[[str], Inconsistent]) -> None:
        """The log's result record against the one rebuilt from its deals, games and faults."""
        if result.spec.sprt is not None:
            result.sprt = sprt_state(result.spec.sprt, result.tally)
        mine = _without_field_elo(msgspec.json.decode(msgspec.json.encode(result.summary())))
        theirs = _without_field_elo({k: v for k, v in rec.items() if k != "k"})
        _unbounded(mine, theirs)
        older_ties(mine, theirs)
        keys = [k for k in dict.fromkeys([*mine, *theirs]) if mine.get(k) != theirs.get(k)]
        if keys:
            k = keys[0]
            raise fail(f"the result differs from the one the deals and faults give: {k}: log {_short(theirs.get(k))}, "
                       f"rebuilt {_short(mine.get(k))}" + (f" (and {', '.join(keys[1:])})" if keys[1:] else ""))



def _unbounded(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """A two-bot result where one bot won every play: written before its Elo had a one-sided
    bound, the log's interval is ``[null, null]`` (``null`` after one pair) where today's is ``[bound, null]`` (or
    ``[null, -bound]``); taken as the log has it (as :func:`referee.audit.verify._unbounded`)."""
    rows = [(m.get("ranking") or {}).get("standings") or [] for m in (mine, theirs)]
    two = len(mine.get("bots") or []) == 2
    for row, old in zip(*rows):
        if not (isinstance(row, dict) and isinstance(old, dict)):
            continue
        if (row.get("elo") is None and old.get("elo") is None
                and old.get("elo_ci") in (None, [None, None]) and isinstance(row.get("elo_ci"), list) and None in row["elo_ci"]):
            row["elo_ci"] = old["elo_ci"]
        elif (two and row.get("elo") == old.get("elo") and old.get("elo_ci") in (None, [old.get("elo")] * 2)
              and isinstance(row.get("classes"), list) and alike(row["classes"])):
            row["elo_ci"] = old["elo_ci"]  # every pair alike, logged before that had an exact bound: a point then


def _without_field_elo(summary: dict[str, Any]) -> dict[str, Any]:
    """A result without the Elo of a ranking of three bots or more: round 3 defined that column
    anew (the field's pooled spread, so that it follows the ranking), so a format-1 log's Elo
    of a 3-bot match is not what today's figures give; every other figure is compared."""
    ranking = summary.get("ranking")
    if isinstance(ranking, dict) and len(summary.get("bots") or []) > 2:
        for row in ranking.get("standings") or []:
            if isinstance(row, dict):
                row.pop("elo", None)
                row.pop("elo_ci", None)
    return summary


def verify(path: Path) -> Counts:
    """Re-play a whole log and rebuild its result; raise :class:`Inconsistent` at the first
    disagreement, :class:`Incomplete` when it stops before the result."""
    walker = LogWalker(path)
    try:
        counts = walker.walk()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a record of the wrong shape
        if isinstance(exc, R.Damaged):
            raise
        raise R.Damaged(f"{path}: a record of the wrong shape ({type(exc).__name__}: {exc})") from None
    if walker.stop is not None:
        counts.stopped = stop_text(walker.stop["pairs"], walker.stop["decision"], walker.stop["llr"])
    return counts


def _option(x: dict) -> dict:
    return {**x, "tile": None if x["tile"] is None else list(x["tile"])}


def _key(msg: m.Play) -> tuple:
    """What identifies a play: the tile (either order), the end, and the fields only some games use
    (closed, stop, a declaration…; unset and false are the same)."""
    return (None if msg.tile is None else sorted(msg.tile), msg.end,
            *(None if (v := getattr(msg, k)) is m.UNSET or v is False else v for k in m.PLAY_EXTRAS))


def _decoded(line: str | None) -> m.FromBotMessage | None:
    """A logged line as a message from a bot, or ``None``."""
    if line is None:
        return None
    try:
        return m.decode_from_bot(line.encode())
    except msgspec.DecodeError:
        return None


def _cut(line: str) -> bool:
    """Whether a logged line was cut short (see :func:`referee.conversation.faults.cut`)."""
    return line.endswith(" chars)") and "… (" in line


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:80] + "…"




def _opening(items: Any) -> list[tuple[int, m.Play]]:
    """A format-1 header's staged opening as moves.

    Raises:
        ValueError: it is not a list of moves (naming the first bad one).
    """
    if not isinstance(items, list):
        raise ValueError("the opening is not a list of moves")
    try:
        typed = msgspec.convert(items, list[R.OpeningMove])
    except msgspec.ValidationError as exc:
        raise ValueError(f"the opening is not a list of moves: {exc}") from None
    return opening_moves(typed)
