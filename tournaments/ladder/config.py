"""Ladder files: a league file's settings, a ``[ladder]`` table, and the bots it starts with.

A ladder file is read as a league file is (:mod:`tournaments.config`: the same keys for the game,
the clock, the limits, the sandbox, the database and the logs, checked the same way, every
problem one line naming the file and the key), except that a ladder has no schedule (the
matchmaking chooses every table), plays no deal file (table *k* of a pairing plays deal set
*k* of the ladder's own seed sequence), and may start with no bot at all: bots join with
``referee ladder add``.  Its own table::

    [ladder]
    resolution = 1.0     # points a deal: neighbours closer than this count as tied
    floor = 10           # tables every bot plays before the matchmaking only follows uncertainty
    suspend_after = 3    # tables in a row at which a bot forfeited (or could not start): suspended
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

import msgspec
from msgspec import Meta

from referee.base.clock import TimeControl
from tournaments.config import (
    NAME_RE,
    BotEntry,
    ClockTable,
    League,
    LeagueError,
    LeagueFile,
    Points,
    _bot,
    _game,
    _places,
    _read,
    _seed,
    _Table,
    _text,
)

#: Tables chosen ahead of the outcomes they may use: table ``n`` is chosen from the outcomes of
#: the tables before ``n - LAG`` only (the host waits while one of those is in play), so what is
#: chosen depends neither on ``-j`` (at most ``LAG``) nor on timing nor on a kill and restart.
LAG = 8

#: An entry's name: a league bot's name, with ``@N`` for a further version (``greedy@2``).
ENTRY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}(@[1-9][0-9]{0,5})?$")


class LadderTable(_Table):
    resolution: Annotated[float, Meta(gt=0, le=1e6)] = 1.0
    floor: Annotated[int, Meta(ge=0, le=100_000)] = 10
    suspend_after: Annotated[int, Meta(ge=1, le=1000)] = 3


class LadderFile(LeagueFile):
    ladder: LadderTable = msgspec.field(default_factory=LadderTable)


@dataclass(frozen=True)
class Ladder:
    """A ladder as its file gives it: the league settings its tables are played under (with the
    file's bots), and its own."""

    league: League
    resolution: float
    floor: int
    suspend_after: int

    @property
    def path(self) -> Path:
        return self.league.path

    @property
    def name(self) -> str:
        return self.league.name

    def describe(self) -> str:
        lg = self.league
        games = f"{lg.games} game{'s' if lg.games != 1 else ''}"
        amount = games if lg.deals is None else f"{lg.deals} deals" if lg.games is None else f"{games} of {lg.deals} deals"
        sandbox = "" if lg.sandbox else ", NO SANDBOX (sandbox = false)"
        return (f"{lg.variant.id}, {lg.players} players, {lg.per_table} bots a table, {amount} per orientation, "
                f"resolution {self.resolution:g} point{'' if self.resolution == 1 else 's'} a deal{sandbox}")


def load_ladder(path: Path, db: Path | None = None) -> Ladder:
    """Read and check a ladder file; resolve the commands of the bots it names.

    Raises:
      LeagueError: one line naming the file and the key (as :func:`tournaments.config.load_league`),
        and a key a ladder does not take (``schedule``, ``gauntlet``, ``rounds``, ``tables``,
        ``game.deals_file``).
    """
    where = str(path)

    def bad(message: str) -> LeagueError:
        return LeagueError(f"{where}: {message}")

    doc: LadderFile = _read(path, bad, LadderFile)
    for key in ("schedule", "gauntlet", "rounds", "tables"):
        if getattr(doc, key) is not None:
            raise bad(f"{key}: a ladder has no schedule (its matchmaking chooses every table); remove it")
    if doc.game.deals_file is not None:
        raise bad("game.deals_file: a ladder deals from its own seed sequence (table k of a pairing plays deal set k); remove it")
    base = path.resolve().parent
    v, players, options, deals, games, per_table, n_orient = _game(doc.game, bad)
    tc = TimeControl(**{key: value for key in ClockTable.__struct_fields__ if (value := getattr(doc.clock, key)) is not None})
    bots: list[BotEntry] = []
    for i, entry in enumerate(doc.bot, start=1):
        bots.append(_bot(i, entry, bots, base, doc.sandbox, bad, tc))
    db_path, logs_dir = _places(doc, path, base, db, bad)
    name = path.stem if doc.name is None else _text(doc.name, "name", bad)
    league = League(path=path, name=name, bots=bots, variant=v, players=players, options=options, deals=deals, games=games,
                    seed=_seed(doc.seed, bad), tc=tc, max_faults=doc.max_faults, max_line=doc.max_line, memory_mb=doc.memory_mb,
                    cpu_seconds=doc.cpu_seconds, sandbox=doc.sandbox, max_processes=doc.max_processes, schedule="ladder",
                    gauntlet=None, points=Points(doc.points.win, doc.points.draw, doc.points.loss), db_path=db_path,
                    logs_dir=logs_dir, orientations=n_orient, per_table=per_table, compress_logs=doc.compress_logs,
                    isolation=doc.isolation)
    return Ladder(league, doc.ladder.resolution, doc.ladder.floor, doc.ladder.suspend_after)


def entry_problem(name: str) -> str | None:
    """Why ``name`` cannot name an entry (``None``: it can)."""
    if not ENTRY_RE.match(name):
        return (f"{name!r} is not a plain name (letters, digits, '.', '_', '+', '-', at most 40 characters, then @N for a "
                f"further version)")
    return None


def with_bots(ladder: Ladder, bots: list[BotEntry]) -> Ladder:
    """``ladder`` whose league holds ``bots`` (the entries of its database) instead of the file's."""
    return replace(ladder, league=replace(ladder.league, bots=bots))


__all__ = ["LAG", "NAME_RE", "Ladder", "LadderFile", "entry_problem", "load_ladder", "with_bots"]
