"""A match's result as data: the structs the log's ``result`` record, ``--json`` and a league's
store share (docs/result-json.md).  :mod:`referee.matches.results` builds them as a match is played.

* :class:`DealResult` and :class:`GameResult`: one played deal and one finished game (``deals``
  and ``game_results`` of ``--json``).
* :class:`MatchSummary`: everything else the result says (totals, margins, faults, ranking,
  verdict, SPRT): the log's ``result`` record, and what the printed report, the web report and a
  league's store and standings read.  :class:`MatchJson` is the summary with the deal and game
  lists: ``--json`` and a league's stored result.

Bots are indexes into the match's bots, or their names where the JSON names them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from referee.stats.figures import Standing
from referee.stats.means import MeanRecord
from referee.stats.sprt import SprtState


class DealResult(msgspec.Struct):
    """One played deal of the match, as ``--json`` gives it under ``deals``
    (docs/result-json.md).  Bots are indexes into the match's bots."""

    game: int
    orientation: int
    deal: int
    stream: int  # the deal's index in the deal stream (the same deal in every orientation)
    leader: int  # the seat that led
    leader_bot: str
    lead_tile: str | None  # a forced lead
    end: str  # "domino", "fish" or "fault"
    by: int  # the seat that went out, fished or faulted
    by_bot: str
    wrote: list[int]  # per side
    totals: list[int]  # per side, after the deal
    points: list[int]  # per bot: what its side wrote
    net: list[int]  # per bot: points times the game's sense (penalties count against)
    won_by: list[int]  # bots whose side won the deal
    notes: list[str]


class GameResult(msgspec.Struct):
    """One finished game of the match (``game_results`` in ``--json``)."""

    game: int
    orientation: int
    deals: int  # deals played (void ones not counted)
    totals: list[int]  # per side
    points: list[int]  # per bot: its side's total
    winners: list[int]  # sides
    losers: list[int]  # sides
    dry: list[int]  # sides with a dry win
    won_by: list[int]  # bots
    lost_by: list[int]  # bots
    dry_bots: list[int]
    reason: str


class BotHello(msgspec.Struct):
    """What a bot said of itself in its ``hello``."""

    name: str
    version: str
    author: str


class BotEntry(msgspec.Struct):
    name: str
    command: list[str]
    hello: BotHello | None  # null: the bot never said hello


class BotTotals(msgspec.Struct):
    """One bot's totals over the match (``totals`` in ``--json``)."""

    bot: str
    points: int  # what its sides wrote
    net: float  # points times the game's sense
    games_won: int
    games_drawn: int
    games_lost: int
    deals_won: int
    faults: dict[str, int]  # kind -> count


class Margins(msgspec.Struct):
    """A bot's margin per paired unit, and the same plays read as if unpaired."""

    paired: MeanRecord
    unpaired: MeanRecord


class FaultRecord(msgspec.Struct):
    """A fault as results give it (:class:`referee.conversation.faults.Fault` without its hint)."""

    kind: str
    bot: str
    seat: int
    game: int
    deal: int
    detail: str
    line: str | None


class Ranking(msgspec.Struct):
    rule: str
    class_labels: list[str]
    standings: list[Standing]  # in ranking order


class MatchSummary(msgspec.Struct, kw_only=True):
    """The result of a match without its deal and game lists: the log's ``result`` record."""

    variant: str
    players: int
    options: dict[str, Any]
    seed: int | None  # null: the deals came from a file
    deals_file: str | None
    deals_per_game: int | None
    games: int | None
    sense: int  # +1: points count for a side; -1: penalties count against it
    unit: str  # the paired unit: "deal" or "game"
    bots: list[BotEntry]
    orientations: list[list[int]]  # [orientation][seat]: the bot index
    totals: list[BotTotals]
    margin: dict[str, Margins]  # bot name -> its margin against the field (two bots: the first only)
    faults: list[FaultRecord]
    confidence: float
    ranking: Ranking
    ahead: str | None
    significant: bool
    winner: str | None
    sprt: SprtState | None
    stopped_by: str | None  # "sprt" when the test stopped the match
    interrupted: bool

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.bots]


class MatchJson(MatchSummary, kw_only=True):
    """The whole result: the summary with every deal and game (``--json``; a league stores it)."""

    deals: list[DealResult]
    game_results: list[GameResult]


class MatchRecord(msgspec.Struct):
    """What a league's match process hands the league for one match: the whole result, and the
    first bot's paired margin on every board (the ratings' input)."""

    result: MatchJson
    boards: list[float]


#: The order of ``--json``'s keys: the summary's, with the two lists after ``orientations``.
JSON_KEYS = (*MatchSummary.__struct_fields__[:MatchSummary.__struct_fields__.index("orientations") + 1],
             "deals", "game_results",
             *MatchSummary.__struct_fields__[MatchSummary.__struct_fields__.index("orientations") + 1:])
