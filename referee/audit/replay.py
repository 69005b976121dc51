"""Reading match logs back for people: :class:`Replayer` re-plays a log's games through the
engine, record by record, and ``referee replay`` (:func:`replay_lines`) prints deals move by move.

A :class:`Replayer` reads the typed records of :mod:`referee.records.records` (both formats), rebuilds
every game from the recorded deals and accepted plays, and calls one method per record kind
(``on_header``, ``on_deal``, ``on_play``…) and :meth:`Replayer.on_event` for each event the
engine makes, with the deal's state; a reader of logs overrides the ones it needs (the text
replay below, the web report's documents in :mod:`referee.web.data`, ``referee check``).  It
only re-plays what the log says: whether the log is what the referee wrote is ``verify``'s
question (:mod:`referee.audit.verify`), which plays the match again with the referee itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from rich.cells import cell_len

from protocol import messages as m
from referee.engine import IllegalPlay, variant
from referee.engine.core.deal import Deal
from referee.engine.core.errors import RulesError
from referee.engine.core.game import Game, Variant
from referee.engine.core.line import Event
from referee.engine.core.state import DealState
from referee.engine.core.tiles import parse_tile, tile_text
from referee.records import records as R
from referee.sides import side_for


class Broken(ValueError):
    """The log cannot be re-played from some line on: the message names the file and the line."""


class Oversized(Broken):
    """The log is larger than the match its header describes could write (a line, the whole, or
    empty lines in bulk: :class:`referee.records.records.Bounds`): read no further, and show
    nothing of it."""


class Replayer:
    """Re-plays a log through the engine; override the ``on_*`` methods to read it.

    While it runs, :attr:`header` is the match's header, :attr:`variant` its game,
    :attr:`seating` the bot in each seat of the game being played, and :attr:`state` the deal in
    play (``None`` between deals).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: R.Header | None = None
        self.variant: Variant | None = None
        self.names: list[str] = []
        self.games: dict[tuple[int, int], Game] = {}
        self.seatings: dict[tuple[int, int], list[int]] = {}
        self.seating: list[int] = []
        self.state: DealState | None = None
        self.key: tuple[int, int] | None = None
        self.number = 0  # the line being read
        self._shown = 0  # events of the deal in play given to on_event

    # -- reading --

    def run(self) -> None:
        """Read the whole log.

        Raises:
            OSError: the file cannot be read.
            Broken: a line that is not a record, or that the engine cannot re-play (the deals
                before it have been read).
        """
        try:
            for number, rec, _ in R.read_records(self.path):
                self.number = number
                try:
                    self.take(rec)
                except (RulesError, ValueError, IndexError, KeyError) as exc:
                    if isinstance(exc, Broken):
                        raise
                    # a record of the right shape that no deal can hold (a seat past the table…)
                    raise self.fail(f"the engine cannot re-play it ({type(exc).__name__}: {exc})") from None
        except R.TooLarge as exc:
            raise Oversized(str(exc)) from None
        except R.Damaged as exc:
            raise Broken(str(exc)) from None
        if self.header is None:
            raise Broken(f"{self.path}: no match header: is this a match log?")

    def fail(self, message: str) -> Broken:
        return Broken(f"{self.path}: line {self.number}: {message}")

    def take(self, rec: R.Record) -> None:
        """One record: the engine's part, then its method."""
        if isinstance(rec, R.Header):
            if self.header is not None:
                raise self.fail("a second match header")
            from referee.matches.match import orientations
            try:
                self.variant = variant(rec.variant)
                seatings = orientations(self.variant, rec.players, rec.options, len(rec.bots))
            except RulesError as exc:
                raise self.fail(str(exc)) from None
            if [list(s) for s in seatings] != rec.orientations:
                raise self.fail(f"the seatings {rec.orientations} are not those of {rec.variant} with {rec.players} players "
                                f"and {len(rec.bots)} bots")
            self.header = rec
            self.names = [b.name for b in rec.bots]
            self.on_header(rec)
            return
        if self.header is None or self.variant is None:
            raise self.fail("the log does not start with a match header")
        if isinstance(rec, R.Game):
            self._game(rec)
        elif isinstance(rec, R.Deal):
            self._deal(rec)
        elif isinstance(rec, R.Play):
            self._play(rec)
        elif isinstance(rec, (R.Fault, R.ForfeitedDeal)):
            if self.state is not None and self.state.end is None:
                self.state.forfeit(rec.charged if isinstance(rec, R.Fault) and rec.charged is not None else rec.seat)
            self.on_fault(rec) if isinstance(rec, R.Fault) else self.on_forfeited_deal(rec)
            self._events(None)
        elif isinstance(rec, R.DealEnd):
            self._deal_end(rec)
        elif isinstance(rec, R.GameEnd):
            self.on_game_end(rec)
        elif isinstance(rec, R.Hello):
            self.on_hello(rec)
        elif isinstance(rec, R.Out):
            self.on_out(rec)
        elif isinstance(rec, R.In):
            self.on_in(rec)
        elif isinstance(rec, R.Forfeit):
            self.on_forfeit(rec)
        elif isinstance(rec, R.Sprt):
            self.on_sprt(rec)
        elif isinstance(rec, R.Stop):
            self.on_stop(rec)
        elif isinstance(rec, R.Result):
            self.on_result(rec)

    def _game(self, rec: R.Game) -> None:
        assert self.header is not None and self.variant is not None
        key = (rec.game, rec.orientation)
        if key in self.games:
            raise self.fail(f"game {rec.game} in orientation {rec.orientation} starts twice")
        h = self.header
        game = self.variant.new_game(h.players, h.options, h.deals)
        if h.deal_limit is not None:
            game.deal_limit = h.deal_limit
        self.games[key] = game
        self.seatings[key] = list(rec.seating)
        self.on_game(rec)

    def _deal(self, rec: R.Deal) -> None:
        if self.state is not None:
            raise self.fail("a deal starts before the last one ended")
        key = (rec.game, rec.orientation)
        game = self.games.get(key)
        if game is None:
            raise self.fail("a deal of a game that never started")
        try:
            deal = Deal(tuple(tuple(parse_tile(t) for t in h) for h in rec.hands), tuple(parse_tile(t) for t in rec.undealt))
            state = game.start(deal)
        except (RulesError, ValueError, RuntimeError) as exc:
            raise self.fail(f"the engine cannot start this deal: {exc}") from None
        self.key = key
        self.seating = self.seatings[key]
        self.state = state
        self._shown = 0
        self.on_deal(rec, state)
        self._events(None)

    def _play(self, rec: R.Play) -> None:
        state = self.state
        if state is None:
            raise self.fail("a play outside a deal")
        msg = m.Play(rec.tile, rec.end, **{k: v for k in m.PLAY_EXTRAS if (v := getattr(rec, k)) not in (None, False)})
        try:
            state.push(side_for(state).engine_play(state, msg), rec.seat)
        except IllegalPlay as exc:
            raise self.fail(f"illegal play by seat {rec.seat}: {exc}") from None
        self.on_play(rec, state)
        self._events(rec)

    def _deal_end(self, rec: R.DealEnd) -> None:
        state = self.state
        if state is None:
            raise self.fail("a deal end without a deal")
        self._events(None)
        assert self.key is not None
        if state.end is not None:
            self.games[self.key].finish(state)
        self.on_deal_end(rec, state)
        self.state = None

    def _events(self, play: R.Play | None) -> None:
        state = self.state
        if state is None:
            return
        history = state.history
        while self._shown < len(history):
            self._shown += 1
            self.on_event(history[self._shown - 1], play, state)

    def who(self, seat: int) -> str:
        """The bot in ``seat`` of the game being played."""
        return self.names[self.seating[seat]] if 0 <= seat < len(self.seating) else f"seat {seat}"

    # -- what a reader overrides (each does nothing here) --

    def on_header(self, rec: R.Header) -> None: ...
    def on_hello(self, rec: R.Hello) -> None: ...
    def on_game(self, rec: R.Game) -> None: ...
    def on_deal(self, rec: R.Deal, state: DealState | None) -> None:
        """A deal starts (``state`` is ``None`` for a void deal, redealt)."""
    def on_event(self, event: Event, play: R.Play | None, state: DealState) -> None:
        """An event of the deal in play, as the engine made it (``play``: the play that made it,
        if a bot's)."""
    def on_out(self, rec: R.Out) -> None: ...
    def on_in(self, rec: R.In) -> None: ...
    def on_play(self, rec: R.Play, state: DealState) -> None: ...
    def on_fault(self, rec: R.Fault) -> None: ...
    def on_forfeited_deal(self, rec: R.ForfeitedDeal) -> None: ...
    def on_forfeit(self, rec: R.Forfeit) -> None: ...
    def on_deal_end(self, rec: R.DealEnd, state: DealState) -> None: ...
    def on_game_end(self, rec: R.GameEnd) -> None: ...
    def on_sprt(self, rec: R.Sprt) -> None: ...
    def on_stop(self, rec: R.Stop) -> None: ...
    def on_result(self, rec: R.Result) -> None: ...


def special_text(sp: R.SpecialRecord, names: list[str], seating: list[int], players: int) -> str:
    """A sea_kozel special state for people: "for a hundred: pair A", "eggs (24 waiting), deal 2 of 3"."""
    side = sp.side
    whose = ""
    if side is not None:
        seats = [s for s in range(players) if (s % 2 if players == 4 else s) == side]
        whose = (("pair A" if side == 0 else "pair B") if players == 4 else f"seat {side}") + \
            f" ({', '.join(sorted({names[seating[s]] for s in seats}))})"
    if sp.kind == "hundred":
        return f"this deal is for a hundred for {whose}"
    if sp.kind == "write_off":
        return f"{whose} is writing off its fish, deal {sp.deal} of {sp.of}"
    return f"eggs ({sp.total} waiting), deal {sp.deal} of {sp.of}"


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


class TextReplay(Replayer):
    """``referee replay``: the deals of a log (those selected), move by move, as lines of text."""

    def __init__(self, path: Path, game: int | None = None, deal: int | None = None, orientation: int | None = None) -> None:
        super().__init__(path)
        self.want = (game, deal, orientation)
        self.out: list[str] = []
        self.selected = False
        self.events = 0  # events of the deal in play so far

    def on_header(self, rec: R.Header) -> None:
        opts = ", ".join(f"{k}={v}" for k, v in rec.options.items())
        self.out.append(f"{rec.variant}, {rec.players} players" + (f" ({opts})" if opts else "") + ", bots: " + ", ".join(self.names))
        if rec.opening:
            self.out.append(f"staged: the referee makes the first {len(rec.opening)} moves of every game itself (marked \"staged\")")

    def on_deal(self, rec: R.Deal, state: DealState | None) -> None:
        game, deal, orientation = self.want
        self.selected = ((game is None or rec.game + 1 == game) and (deal is None or rec.deal + 1 == deal)
                         and (orientation is None or rec.orientation == orientation))
        self.events = 0
        if not self.selected:
            return
        out = self.out
        out.append("")
        out.append(f"== game {rec.game + 1}, orientation {rec.orientation}, deal {rec.deal + 1} (stream {rec.stream})"
                   + (f" — void: {rec.void}, redealt" if rec.void else ""))
        if state is not None:
            out.extend(side_for(state).replay_deal(state))
        for s, hand in enumerate(rec.hands):
            out.append(f"   {self.seat_text(s):<24} " + " ".join(tile_text(parse_tile(t)) for t in hand))
        if rec.undealt:
            out.append(f"   {'undealt':<24} " + " ".join(tile_text(parse_tile(t)) for t in rec.undealt))
        if rec.special is not None:
            out.append(f"   special: {special_text(rec.special, self.names, self.seating, len(rec.hands))}")

    def seat_text(self, s: int) -> str:
        return f"seat {s} ({self.who(s)})"

    def on_event(self, e: Event, play: R.Play | None, state: DealState) -> None:
        if not self.selected:
            return
        # The events of the deal so far, this one included: counted, because equal events (a
        # seat's second knock) would make history.index() find the first.
        self.events += 1
        # what the play took, or that the referee made it (a staged opening)
        ms = "" if play is None else " (staged)" if play.staged else f"  {play.ms:.1f} ms" if play.ms is not None else ""
        self.out.extend(side_for(state).replay_event(e, state, self.events, self.seat_text, ms))

    def on_play(self, rec: R.Play, state: DealState) -> None:
        if self.selected and rec.stop:
            self.out.append(f"   {self.seat_text(rec.seat)} stops")

    def on_fault(self, rec: R.Fault) -> None:
        if self.selected and self.state is not None:
            self.out.append(f"   FAULT {self.seat_text(rec.seat)}: {rec.kind}: {rec.detail}")

    def on_deal_end(self, rec: R.DealEnd, state: DealState) -> None:
        if not self.selected:
            return
        out = self.out
        out.extend(side_for(state).replay_deal_end(state))
        how = {"domino": "goes out", "fish": "is the fisherman", "fault": "faulted"}.get(rec.reason, rec.reason)
        rule = f" (rule: {rec.rule})" if rec.rule else ""
        out.append(f"   -- {rec.reason}: {self.seat_text(rec.seat) if rec.seat is not None else 'nobody'} {how}{rule}")
        out.append(f"   hand values {rec.values}; wrote {rec.wrote}; totals {rec.totals}")
        for note in rec.notes:
            out.append(f"      {note}")


def replay_lines(path: Path, game: int | None = None, deal: int | None = None, orientation: int | None = None) -> Iterator[str]:
    """The deals of a log, move by move, as text.

    Raises:
        OSError: the file cannot be read.
        Broken: see :meth:`Replayer.run`.
    """
    reader = TextReplay(path, game, deal, orientation)
    reader.run()
    yield from reader.out
