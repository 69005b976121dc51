"""How a match builds its result in flat memory; the result's typed values are
:mod:`referee.records.summary`'s (:class:`DealResult`, :class:`GameResult`, :class:`MatchSummary`,
:class:`MatchJson`).

* :class:`MatchResult`: built by the match driver (and by ``verify`` from a log) deal by deal
  and game by game.  It keeps running totals and the running figures of the finished boards
  (:class:`referee.stats.figures.Boards`); the deal and game results and every board's nets go to
  unnamed temporary files as they are made and are read back as streams, so a match's memory
  does not grow with its deals (``python -m bench.memory``).

Bots are indexes into the match's bots, or their names where the JSON names them.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from referee.base.errors import LogError
from referee.engine.core.game import DealRecord, Game, GameOutcome
from referee.engine.core.tiles import tile_name
from referee.records.summary import (
    JSON_KEYS,
    BotEntry,
    BotHello,
    BotTotals,
    DealResult,
    FaultRecord,
    GameResult,
    Margins,
    MatchJson,
    MatchRecord,
    MatchSummary,
    Ranking,
)
from referee.stats.figures import Boards, board_margins, figures
from referee.stats.sprt import SprtState

if TYPE_CHECKING:
    from referee.conversation.players import Entry
    from referee.matches.spec import MatchSpec


T = TypeVar("T")
#: Bytes of JSON lines a :class:`Spool` keeps in memory before it moves them to a file.
SPOOL_MEMORY = 1 << 16
_encoder = msgspec.json.Encoder()


class Spool(Generic[T]):
    """Values of one type kept as JSON lines and read back in order, any number of times: in
    memory up to :data:`SPOOL_MEMORY` bytes, then in an unnamed temporary file (in ``folder``, or
    the system's temporary folder) that is gone when the spool is closed or the process ends.

    Raises (from :meth:`append`):
        LogError: the file cannot be made or written (a full disk).
    """

    def __init__(self, kind: type[T], folder: Path | None) -> None:
        self._decoder = msgspec.json.Decoder(kind)
        self._folder = folder
        self._memory = bytearray()
        self._file: IO[bytes] | None = None
        self.count = 0

    def append(self, value: T) -> None:
        line = _encoder.encode(value) + b"\n"
        try:
            if self._file is not None:
                self._file.write(line)
            elif len(self._memory) + len(line) <= SPOOL_MEMORY:
                self._memory += line
            else:
                self._file = tempfile.TemporaryFile(dir=self._folder)
                self._file.write(self._memory + line)
                self._memory = bytearray()
        except OSError as exc:
            raise LogError(f"cannot write the match's results in {self._folder or tempfile.gettempdir()}: "
                           f"{exc.strerror or exc}") from None
        self.count += 1

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[T]:
        if self._file is None:
            for line in bytes(self._memory).splitlines():
                yield self._decoder.decode(line)
            return
        self._file.flush()
        fd, offset, rest = self._file.fileno(), 0, b""
        # pread: independent of the write position, so reading never disturbs appending.
        while chunk := os.pread(fd, 1 << 16, offset):
            offset += len(chunk)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                yield self._decoder.decode(line)

    def close(self) -> None:
        self._memory = bytearray()
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass
class _Unit:
    """A paired unit (a deal in sport, a game elsewhere) whose orientations are not all played."""

    net: dict[int, list[int]] = field(default_factory=dict)  # orientation -> net per bot


@dataclass
class MatchResult:
    """A match's result as it is played: running totals, the finished boards' figures, and the
    deal, game and board streams (see the module docstring).  :meth:`close` ends the streams."""

    spec: MatchSpec
    seatings: list[tuple[int, ...]]
    #: each bot's part in the match (its faults, its hello), in the order of ``spec.bots``
    entries: list[Entry]
    interrupted: bool = False
    sprt: SprtState | None = None  # the test after the last finished board
    stopped_by: str | None = None  # "sprt" when the test stopped the match

    def __post_init__(self) -> None:
        k = len(self.spec.bots)
        folder = None if self.spec.log_path is None else self.spec.log_path.parent
        self.deals: Spool[DealResult] = Spool(DealResult, folder)
        self.games: Spool[GameResult] = Spool(GameResult, folder)
        self._boards: Spool[list[list[float]]] = Spool(list[list[float]], folder)
        self.tally = Boards(k, len(self.seatings))
        self._open: dict[int, _Unit] = {}
        self._points = [0] * k
        self._net = [0.0] * k
        self._deals_won = [0] * k
        self._games = [[0, 0, 0] for _ in range(k)]  # won, drawn, lost

    def close(self) -> None:
        for spool in (self.deals, self.games, self._boards):
            spool.close()

    def __enter__(self) -> MatchResult:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- recording, deal by deal and game by game (the match driver and ``verify``) --------

    def add_deal(self, rec: DealRecord, game: Game, o: int, g: int, stream_index: int) -> None:
        """Record a finished deal of game ``g`` in orientation ``o``.

        Raises:
            LogError: the deal's result cannot be written to its temporary file.
        """
        spec, v = self.spec, self.spec.variant
        seating = self.seatings[o]
        k = len(spec.bots)
        points = [0] * k
        for side, seats in enumerate(game.sides):
            for seat in seats[:1]:
                points[seating[seat]] += rec.wrote[side]
        net = [v.sense * p for p in points]
        won_by = sorted({seating[s] for s in game.sides[rec.winner]}) if rec.winner is not None else []
        assert rec.end is not None
        self.deals.append(DealResult(
            game=g, orientation=o, deal=rec.number, stream=stream_index,
            leader=rec.leader, leader_bot=spec.bots[seating[rec.leader]].name,
            lead_tile=None if rec.lead_tile is None else tile_name(rec.lead_tile),
            end=rec.end.reason, by=rec.end.seat, by_bot=spec.bots[seating[rec.end.seat]].name,
            wrote=list(rec.wrote), totals=list(rec.totals), points=points, net=net, won_by=won_by,
            notes=list(rec.notes),
        ))
        for i in range(k):
            self._points[i] += points[i]
            self._net[i] += net[i]
        for i in won_by:
            self._deals_won[i] += 1
        if not v.to_target:
            self._played(stream_index, o, net)  # the deal's board: the same stream deal in every orientation

    def add_game(self, outcome: GameOutcome, game: Game, o: int, g: int, deals: int) -> None:
        """Record the outcome of game ``g`` in orientation ``o``.

        Raises:
            LogError: the game's result cannot be written to its temporary file.
        """
        spec, v = self.spec, self.spec.variant
        seating = self.seatings[o]
        k = len(spec.bots)
        sides_of = [{game.side_of[s] for s in range(spec.players) if seating[s] == b} for b in range(k)]
        verdicts = outcome.verdicts(sides_of, v.sense)
        won = [x > 0 for x in verdicts]
        lost = [x < 0 for x in verdicts]
        points = [0] * k
        counted = outcome.score or outcome.totals  # sea_kozel's outright wins count as reaching 125
        for side, seats in enumerate(game.sides):
            points[seating[seats[0]]] += counted[side]
        self.games.append(GameResult(
            game=g, orientation=o, deals=deals, totals=list(outcome.totals), points=points,
            winners=list(outcome.winners), losers=list(outcome.losers), dry=list(outcome.dry),
            won_by=[b for b in range(k) if won[b]], lost_by=[b for b in range(k) if lost[b]],
            dry_bots=sorted({seating[s] for side in outcome.dry for s in game.sides[side]}),
            reason=outcome.reason,
        ))
        for b in range(k):
            self._games[b][0 if won[b] else 2 if lost[b] else 1] += 1
        if v.to_target:
            self._played(g, o, [v.sense * p for p in points])

    def _played(self, unit: int, o: int, net: list[int]) -> None:
        """Orientation ``o`` of a paired unit is played; a unit played in every orientation is a
        finished board, folded into the figures and streamed."""
        u = self._open.setdefault(unit, _Unit())
        u.net[o] = net
        n = len(self.seatings)
        if len(u.net) == n:
            del self._open[unit]
            board: list[list[float]] = [list(map(float, u.net[i])) for i in range(n)]
            self.tally.add(board)
            self._boards.append(board)

    # -- derived figures -----------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.spec.bots]

    def boards(self) -> Iterator[list[list[float]]]:
        """The finished boards, in order: ``[orientation][bot]`` nets (see :mod:`referee.stats.figures`)."""
        return iter(self._boards)

    def unit_margins(self, bot: int) -> Iterator[float]:
        """Per finished board: the bot's net less the others' mean, averaged over orientations."""
        for board in self._boards:
            row = board_margins(board, bot)
            yield sum(row) / len(row)

    def bot_totals(self) -> list[BotTotals]:
        return [BotTotals(bot=name, points=self._points[i], net=self._net[i] + 0.0, games_won=self._games[i][0],
                          games_drawn=self._games[i][1], games_lost=self._games[i][2], deals_won=self._deals_won[i],
                          faults=dict(Counter(f.kind for f in self.entries[i].faults)))
                for i, name in enumerate(self.names)]

    def summary(self) -> MatchSummary:
        """The result without its deal and game lists (the log's ``result`` record)."""
        spec = self.spec
        k = len(spec.bots)
        margins = {}
        for i, name in enumerate(self.names):
            margins[name] = Margins(paired=self.tally.margin[i].estimate(spec.confidence).record(),
                                    unpaired=self.tally.plays[i].estimate(spec.confidence).record())
            if k == 2:
                break
        unit = "game" if spec.variant.to_target else "deal"
        fig = figures(self.tally, self.names, spec.confidence, unit)
        return MatchSummary(
            variant=spec.variant.id, players=spec.players, options=spec.options,
            seed=spec.seed if spec.deal_file is None else None, deals_file=spec.deal_file_name,
            deals_per_game=spec.deals, games=spec.games, sense=spec.variant.sense, unit=unit,
            bots=[BotEntry(e.bot.name, e.bot.argv, _hello(e)) for e in self.entries],
            orientations=[list(s) for s in self.seatings],
            totals=self.bot_totals(), margin=margins,
            faults=[FaultRecord(f.kind, f.bot, f.seat, f.game, f.deal, f.detail, f.line) for e in self.entries for f in e.faults],
            confidence=spec.confidence, ranking=Ranking(fig.rule, fig.class_labels, fig.standings),
            ahead=fig.ahead, significant=fig.significant, winner=fig.winner,
            sprt=self.sprt, stopped_by=self.stopped_by, interrupted=self.interrupted,
        )

    def whole(self) -> MatchJson:
        """The summary with every deal and game, in memory (for tests and small matches; the
        CLI and a league stream them instead: :func:`write_json`, :func:`encode_record`)."""
        s = self.summary()
        return MatchJson(**{f: getattr(s, f) for f in MatchSummary.__struct_fields__}, deals=list(self.deals),
                         game_results=list(self.games))


def _hello(entry: Entry) -> BotHello | None:
    if entry.hello is None:
        return None
    return BotHello(entry.hello.name, entry.hello.version, entry.hello.author)


# -- writing a result without holding it ------------------------------------------------------


def _items(name: str, values: Iterable[Any], indent: str) -> Iterator[str]:
    """``"name": [...]`` as ``json.dumps(..., indent=2)`` writes it at ``indent``, one value at a time."""
    import json

    inner = indent + "  "
    first = True
    for v in values:
        yield (f'{indent}"{name}": [\n' if first else ",\n") + inner + json.dumps(
            msgspec.to_builtins(v), indent=2, ensure_ascii=False).replace("\n", "\n" + inner)
        first = False
    yield f'{indent}"{name}": []' if first else f"\n{indent}]"


def json_chunks(summary: MatchSummary, deals: Iterable[DealResult], games: Iterable[GameResult]) -> Iterator[str]:
    """``--json``: exactly ``json.dumps(whole, indent=2, ensure_ascii=False) + "\\n"`` for the
    whole result, in pieces, never holding more than one deal or game."""
    import json

    top = msgspec.to_builtins(summary)
    yield "{\n"
    for n, key in enumerate(JSON_KEYS):
        if n:
            yield ",\n"
        if key == "deals":
            yield from _items(key, deals, "  ")
        elif key == "game_results":
            yield from _items(key, games, "  ")
        else:
            yield f"  {json.dumps(key)}: " + json.dumps(top[key], indent=2, ensure_ascii=False).replace("\n", "\n  ")
    yield "\n}\n"


def write_json(path: Path, result: MatchResult) -> None:
    """Write ``--json`` for ``result`` to ``path``, streaming its deals and games.

    Raises:
        OSError: the file cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for chunk in json_chunks(result.summary(), result.deals, result.games):
            f.write(chunk)


def encode_record(result: MatchResult, first: bytes = b"") -> Iterator[bytes]:
    """A league match process's result line (:class:`MatchRecord` as compact JSON, no newline,
    with ``first`` as its first members), in pieces: the deals, games and boards are streamed."""
    def listed(values: Iterable[Any]) -> Iterator[bytes]:
        yield b"["
        for n, v in enumerate(values):
            yield (b"," if n else b"") + _encoder.encode(v)
        yield b"]"

    summary = _encoder.encode(result.summary())
    yield b"{" + first + b'"result":' + summary[:-1] + b',"deals":'
    yield from listed(result.deals)
    yield b',"game_results":'
    yield from listed(result.games)
    yield b'},"boards":'
    yield from listed(result.unit_margins(0))
    yield b"}"


def record_of(result: MatchResult) -> MatchRecord:
    """The :class:`MatchRecord` of a match, in memory: exactly what :func:`encode_record` sends."""
    return msgspec.json.decode(b"".join(encode_record(result)), type=MatchRecord)
