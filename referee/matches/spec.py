"""A match's settings as the match runner takes them: :class:`MatchSpec`, built by the command
line and by a league's match process (from a :class:`referee.matches.job.MatchJob`), read by the match,
its result and verify."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.seeds import fresh_seed
from referee.bots.bot import Bot
from referee.engine.core.deal import Deal
from referee.engine.core.game import Game, Variant
from referee.engine.core.shuffle import BLAKE2B_GAMES, Derivation
from referee.stats.sprt import SprtSpec

#: How the processes of a match share the machine (see :attr:`MatchSpec.isolation`).
Isolation = Literal["concurrent", "strict"]
ISOLATIONS: tuple[Isolation, ...] = ("concurrent", "strict")


@dataclass
class MatchSpec:
    """Everything a match needs; built by the CLI or a league."""

    variant: Variant
    bots: list[Bot]
    players: int
    options: dict[str, Any]
    deals: int | None = None  # fixed-deal games: deals per orientation
    games: int | None = None  # games to a target: games per orientation
    #: the seed of the deal stream: a fresh secret one unless given
    seed: int = field(default_factory=fresh_seed)
    #: how deals come from the seed (:mod:`referee.engine.core.shuffle`)
    deals_from: Derivation = BLAKE2B_GAMES
    deal_file: list[Deal] | None = None
    deal_file_name: str | None = None
    #: the deal file's SHA-256 (hex), written in the header so that verify knows the file
    deal_file_sha256: str | None = None
    tc: TimeControl = field(default_factory=TimeControl)
    max_faults: int = 3
    max_line: int = 65536
    log_path: Path | None = None
    stderr_dir: Path = Path("referee-logs")
    confidence: float = 0.95  # the level of the intervals and of the winner's significance
    sprt: SprtSpec | None = None  # stop as soon as this test decides (two bots)
    #: besides the log, the stderr logs and the deal file: what no sandboxed bot may see
    hidden: tuple[Path, ...] = ()
    #: a game still going after this many played deals ends drawn (``referee check`` keeps its
    #: games short); ``None``: the engine's own limit (games to a target) or none
    deal_limit: int | None = None
    #: a staged opening: ``(seat, play)`` moves the referee makes itself at the start of every
    #: game, in every orientation, before any bot is asked (``referee check`` stages a position
    #: where a bot must make a given decision; see :mod:`referee.matches.staging`)
    opening: list[tuple[int, m.Play]] = field(default_factory=list)
    #: ``"strict"``: only the process whose turn it is runs, every other one of the match is
    #: frozen (PROTOCOL.md, "Fair play"); ``"concurrent"``: every process runs as it likes
    isolation: Isolation = "concurrent"
    #: the event the match belongs to (``--event``): kept in the log's header, shown in reports
    event: str | None = None

    def new_game(self) -> Game:
        """A game of the match, as every segment starts one (and the ledger keeps one for its sides)."""
        game = self.variant.new_game(self.players, self.options, self.deals)
        game.keep_records = False  # memory flat in the number of deals (bench.memory)
        if self.deal_limit is not None:
            game.deal_limit = self.deal_limit
        return game
