"""League files: read a league from TOML, check every key before any match starts.

The format is documented, with a full example, in ``tournaments/README.md``.  Every problem is
a :class:`LeagueError` whose message is one line naming the file and the key, so the CLI can
print it as is and exit with code 2.

Relative paths in the file (a bot's ``command`` and ``cwd``, ``database``, ``logs``) are taken
from the directory holding the file, so a league runs the same wherever it is started from.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from protocol.messages import MAX_DEPTH, too_deep
from referee.base.clock import TimeControl
from referee.base.errors import BotError
from referee.base.seeds import parse_seed, seed_text
from referee.bots.sandbox import DEFAULT_PROCESSES, absolute_words
from referee.bots.spawn import resolve_command
from referee.engine import refereed_variant as find_variant
from referee.engine.core.deal import Deal
from referee.engine.core.errors import RulesError
from referee.engine.core.game import Variant
from referee.engine.core.shuffle import BLAKE2B_GAMES, Derivation
from referee.matches.deal_order import DEAL_ORDERS, played_order
from referee.matches.job import CpuSeconds, Deals, Games, MaxFaults, MaxLine, MemoryMb, MoveSeconds, Processes, Seconds, bound_problem
from referee.matches.match import match_length, orientations
from referee.matches.spec import Isolation
from tournaments.schedule import Fixed, Knockout, Schedule, State, Swiss, TableKey, knockout_sizes, max_swiss_rounds

ROUND_ROBIN = "round-robin"
GAUNTLET = "gauntlet"
SWISS = "swiss"
KNOCKOUT = "knockout"
SCHEDULES = (ROUND_ROBIN, GAUNTLET, SWISS, KNOCKOUT)

#: Bot names become parts of file names, so they are kept plain.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$")

#: Bounds of the numbers of a league file: beyond them a value is a typo, not a wish, and would
#: only fail later, inside every match (a clock of 1e308 s overflows the referee's timers, a
#: memory limit beyond 2**63 bytes cannot be set).  A match's settings have theirs in their
#: types (:mod:`referee.matches.job`), the same for ``referee match``; these are the league's own.
MAX_POINTS = 1e6  # match points, either sign
MAX_ROUNDS = 1000  # Swiss rounds
MAX_TABLES = 100_000  # tables per bot of a balanced design


class LeagueError(Exception):
    """A league file (or its database) that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Points:
    """Match points for a won, drawn and lost match."""

    win: float = 2
    draw: float = 1
    loss: float = 0

    def of(self, score: float) -> float:
        """Points for a match score of 1 (won), 0.5 (drawn) or 0 (lost)."""
        return self.win if score == 1 else self.draw if score == 0.5 else self.loss


@dataclass(frozen=True)
class BotEntry:
    """A bot of the league: what the file says, and what runs."""

    name: str
    command: str | list[str]  # as written in the file
    cwd: str | None  # as written in the file
    env: dict[str, str]
    argv: list[str]  # resolved: absolute program or interpreter + script
    workdir: Path  # where the bot runs: its cwd, or the league file's directory
    sandbox: bool = True  # runs under bubblewrap (the league's setting unless the bot's own says otherwise)
    #: the bot's own clock (its ``clock`` table over the league's ``[clock]``); ``None``: the league's
    tc: TimeControl | None = None

    def identity(self) -> dict[str, Any]:
        """What must not change once the bot has results (as written, so moving the league's
        directory keeps it); a clock of its own is part of it (absent: as before bots had one)."""
        own = {} if self.tc is None else {"clock": {"startup": self.tc.startup, "move": self.tc.move, "bank": self.tc.bank,
                                                    "increment": self.tc.increment}}
        return {"command": self.command, "cwd": self.cwd, "env": dict(sorted(self.env.items())), **own}




@dataclass(frozen=True)
class DealsBook:
    """A league's deal file (``[game] deals_file``): its deals, read and checked, and the order
    every table plays them in.  Every table plays the same deals, so results compare across
    tables as a duplicate match's seatings do."""

    path: Path
    sha256: str
    deals: tuple[Deal, ...]
    order: str  # one of DEAL_ORDERS (referee.matches.deal_order)
    start: int  # the first deal played, from 1 (sequential: the rest follow, then the file's first)
    per_block: int = 1  # deals that must stay together and in order (mexican_train: the 7 rounds of a game)

    def played(self, seed: int) -> list[Deal]:
        """Every deal of the file, in the order the tables play them: from :attr:`start`, wrapping
        round to the file's first (``sequential``), or that order shuffled by ``seed``
        (``random``, in whole blocks of :attr:`per_block`)."""
        return played_order(self.deals, self.order, self.start, seed, self.sha256, self.per_block)


@dataclass(frozen=True)
class League:
    path: Path
    name: str
    bots: list[BotEntry]
    variant: Variant
    players: int
    options: dict[str, Any]
    deals: int | None
    games: int | None
    #: the deal stream's seed: the file's, or, when the file gives none, the secret one kept in
    #: the database (:func:`tournaments.store.Store.secret_seed`; ``None`` until it is drawn)
    seed: int | None
    tc: TimeControl
    max_faults: int
    max_line: int
    memory_mb: int | None
    cpu_seconds: int | None
    sandbox: bool  # the league's own setting (each bot's is in BotEntry.sandbox)
    max_processes: int
    schedule: str
    gauntlet: str | None
    points: Points
    db_path: Path
    logs_dir: Path
    orientations: int = field(default=2)
    per_table: int = 2  # bots at each table ([game] bots)
    rounds: int | None = None  # Swiss rounds
    tables: int | None = None  # tables per bot of a balanced design (round robin, gauntlet)
    #: how the deals come from the seed (:mod:`referee.engine.core.shuffle`): the keyed ``blake2b``,
    #: or ``splitmix64`` for a league whose database was played before deals were keyed
    #: (:meth:`tournaments.store.Store.secret_seed`), so its new tables deal what its old ones did
    deals_from: Derivation = BLAKE2B_GAMES
    #: the deal file every table plays (``[game] deals_file``, cutechess-cli's ``-openings``), read
    book: DealsBook | None = None
    #: the file's ``compress_logs``: each table's log is written gzip-compressed as it is played
    #: (``<table>.jsonl.gz``; every reader of logs reads it as it is)
    compress_logs: bool = False

    @property
    def log_suffix(self) -> str:
        """How the names of the league's match logs end."""
        return ".jsonl.gz" if self.compress_logs else ".jsonl"
    #: only the process on turn runs (the league's default), or all of them (PROTOCOL.md, "Fair play")
    isolation: Isolation = "strict"

    def bot(self, name: str) -> BotEntry:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    def settings(self) -> dict[str, Any]:
        """Everything that decides how a match is played: results stored under other settings
        are not comparable with new ones.  (Match points are not here: the standings apply
        them when they are printed.)"""
        return {
            "variant": self.variant.id,
            "players": self.players,
            **({"bots": self.per_table} if self.per_table != 2 else {}),  # absent: 2, as before tables of N
            "options": dict(sorted(self.options.items())),
            "deals": self.deals,
            "games": self.games,
            "seed": self.seed,
            "clock": {"startup": self.tc.startup, "move": self.tc.move, "bank": self.tc.bank, "increment": self.tc.increment,
                      **({"margin": self.tc.margin} if self.tc.margin else {})},  # absent: none, as before margins
            "max_faults": self.max_faults,
            "max_line": self.max_line,
            "memory_mb": self.memory_mb,
            "cpu_seconds": self.cpu_seconds,
            # absent without a deal file, as before leagues had one
            **({} if self.book is None else {"deals_file": {"sha256": self.book.sha256, "order": self.book.order, "start": self.book.start}}),
        }

    def plan(self) -> Schedule:
        """The league's schedule (:mod:`tournaments.schedule`): the bots in the file's order, which
        is also their seed in a Swiss or knockout schedule."""
        names = [b.name for b in self.bots]
        if self.schedule == SWISS:
            assert self.rounds is not None
            return Swiss(names, self.per_table, self.rounds)
        if self.schedule == KNOCKOUT:
            return Knockout(names, self.per_table)
        # before its first run a league without a seed of its own has none yet: what status shows
        # of a balanced design is then drawn from 0 (the run draws it from the secret seed)
        return Fixed(self.schedule, names, self.per_table, self.seed or 0, anchor=self.gauntlet if self.schedule == GAUNTLET else None,
                     tables=self.tables)

    def pairings(self) -> list[TableKey]:
        """The tables of a round robin or gauntlet, in order (a bot added at the end of a complete
        design only adds tables at the end; a balanced design is drawn afresh)."""
        return self.plan().plan(State()).tables

    @property
    def unit(self) -> str:
        """What the league plays: ``pairing`` (two bots a table) or ``table``."""
        return "pairing" if self.per_table == 2 else "table"

    def describe(self, schedule: Schedule | None = None) -> str:
        """The league in a line; ``schedule``: its schedule as planned from the store (a design
        grown by bots added says so), else as the file alone gives it."""
        games = f"{self.games} game{'s' if self.games != 1 else ''}"
        amount = games if self.deals is None else f"{self.deals} deals" if self.games is None else f"{games} of {self.deals} deals"
        sched = (schedule or self.plan()).describe()
        tables = f", {self.per_table} bots a table" if self.per_table != 2 else ""
        seed = "a secret seed" if self.seed is None else f"seed {seed_text(self.seed)}"
        text = f"{self.variant.id}, {self.players} players{tables}, {amount} per orientation, {seed}, {sched}, {len(self.bots)} bots"
        unsandboxed = [b.name for b in self.bots if not b.sandbox]
        if len(unsandboxed) == len(self.bots):
            text += ", NO SANDBOX (sandbox = false)"
        elif unsandboxed:
            text += f", NO SANDBOX for {', '.join(unsandboxed)}"
        return text


# -- the file as written: msgspec decodes the TOML into these, naming the key of every wrong type --


class _Table(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class GameTable(_Table):
    variant: str = "sport"
    players: int | None = None
    bots: int | None = None
    deals: Deals | None = None
    games: Games | None = None
    options: dict[str, Any] = {}
    deals_file: str | None = None  # every table plays these deals (relative: to the league file)
    deals_order: str = "sequential"  # or "random": shuffled by the league's seed
    deals_start: Annotated[int, Meta(ge=1)] = 1  # the file's first deal played, from 1


class ClockTable(_Table):
    startup: Seconds | None = None
    move: MoveSeconds | None = None
    bank: Seconds | None = None
    increment: Seconds | None = None
    margin: Seconds | None = None  # seconds, as every key here (the command line's --time-margin is in ms)


PointsValue = Annotated[float, Meta(ge=-MAX_POINTS, le=MAX_POINTS)]


class PointsTable(_Table):
    win: PointsValue = Points.win
    draw: PointsValue = Points.draw
    loss: PointsValue = Points.loss


class BotTable(_Table):
    name: str
    command: str | list[str]
    cwd: str | None = None
    env: dict[str, Any] = {}
    sandbox: bool | None = None  # default: the league's
    clock: ClockTable | None = None  # default: the league's; what it leaves out is the league's


class LeagueFile(_Table):
    name: str | None = None
    seed: int | str | None = None  # a number, or a string for one past TOML's 64 bits ("0x…")
    schedule: str | None = None
    gauntlet: str | None = None
    rounds: int | None = None
    tables: int | None = None
    max_faults: MaxFaults = 3
    max_line: MaxLine = 65536
    memory_mb: MemoryMb | None = None
    cpu_seconds: CpuSeconds | None = None
    sandbox: bool = True
    max_processes: Processes = DEFAULT_PROCESSES
    isolation: Isolation = "strict"
    database: str | None = None
    logs: str | None = None
    compress_logs: bool = False
    game: GameTable = msgspec.field(default_factory=GameTable)
    clock: ClockTable = msgspec.field(default_factory=ClockTable)
    points: PointsTable = msgspec.field(default_factory=PointsTable)
    bot: list[BotTable] = []





def _seed(value: int | str | None, bad: Callable[[str], LeagueError]) -> int | None:
    """The file's ``seed``: a whole number from 0, as a TOML integer or a string (decimal, or
    hexadecimal with 0x: a secret one is longer than TOML's integers); ``None`` when absent."""
    if value is None:
        return None
    try:
        return parse_seed(str(value))
    except ValueError as exc:
        raise bad(f"seed: {exc}") from None


def load_league(path: Path, db: Path | None = None) -> League:
    """Read and check a league file; resolve every bot's command.

    Args:
      path: the TOML file.
      db: the database to use instead of the file's (or the default ``<stem>.db`` beside it);
        the logs then go beside it, in ``<db stem>-logs/``.

    Raises:
      LeagueError: naming the file and the key for every problem: unreadable file, TOML syntax,
        an unknown key, a value of the wrong type, a number out of bounds or not finite, text
        with a NUL byte, an environment variable that cannot be one, an unknown game or option,
        a deal count the game refuses, duplicate bot names, a missing or unrunnable command, a
        gauntlet naming an unknown bot.
    """
    where = str(path)

    def bad(message: str) -> LeagueError:
        return LeagueError(f"{where}: {message}")

    doc = _read(path, bad)
    base = path.resolve().parent
    v, players, options, deals, games, per_table, n_orient = _game(doc.game, bad)
    # clocks and limits: their bounds are their types'
    tc = TimeControl(**{key: value for key in ClockTable.__struct_fields__ if (value := getattr(doc.clock, key)) is not None})
    seed = _seed(doc.seed, bad)
    points = Points(doc.points.win, doc.points.draw, doc.points.loss)
    bots: list[BotEntry] = []
    for i, entry in enumerate(doc.bot, start=1):
        bots.append(_bot(i, entry, bots, base, doc.sandbox, bad, tc))
    if len(bots) < max(2, per_table):
        raise bad(f"bot: a league of tables of {per_table} needs at least {max(2, per_table)} bots ([[bot]] tables), found {len(bots)}"
                  if per_table > 2 else f"bot: a league needs at least two bots ([[bot]] tables), found {len(bots)}")
    schedule, gauntlet = _schedule(doc, bots, bad)
    rounds, tables = _rounds_and_tables(doc, schedule, len(bots), per_table, bad)
    league_name = path.stem if doc.name is None else _text(doc.name, "name", bad)
    db_path, logs_dir = _places(doc, path, base, db, bad)
    book = _book(doc.game, base, v, players, options, deals, games, bad)
    return League(path=path, name=league_name, bots=bots, variant=v, players=players, options=options, deals=deals,
                  games=games, seed=seed, tc=tc, max_faults=doc.max_faults, max_line=doc.max_line, memory_mb=doc.memory_mb,
                  cpu_seconds=doc.cpu_seconds, sandbox=doc.sandbox, max_processes=doc.max_processes, schedule=schedule,
                  gauntlet=gauntlet, points=points, db_path=db_path,
                  logs_dir=logs_dir, orientations=n_orient, per_table=per_table, rounds=rounds, tables=tables, book=book,
                  compress_logs=doc.compress_logs, isolation=doc.isolation)


Bad = Callable[[str], LeagueError]


def _read(path: Path, bad: Bad, kind: type[LeagueFile] = LeagueFile) -> Any:
    """The file, read and decoded into its types (whose bounds it must keep): a league file, or
    ``kind`` (a ladder's file adds its own table, :mod:`tournaments.ladder.config`)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise bad("no such file") from None
    except IsADirectoryError:
        raise bad("is a directory, not a league file") from None
    except OSError as exc:
        raise bad(exc.strerror or str(exc)) from None
    except ValueError as exc:  # a NUL byte in the path
        raise bad(str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("not UTF-8 text") from None
    try:
        return msgspec.toml.decode(text, type=kind)
    except msgspec.ValidationError as exc:
        raise bad(_explain(exc, text)) from None
    except msgspec.DecodeError as exc:
        raise bad(f"TOML syntax error: {exc}") from None
    except RecursionError:
        raise bad("TOML syntax error: nested too deeply") from None


def _game(game: GameTable, bad: Bad) -> tuple[Variant, int, dict[str, Any], int | None, int | None, int, int]:
    """``[game]``: the variant, seats, options, deals and games, bots per table and orientations."""
    vid = _text(game.variant, "game.variant", bad)
    try:
        v = find_variant(vid)
    except RulesError as exc:
        raise bad(f"game.variant: {exc}") from None
    players = game.players if game.players is not None else v.default_players if v.default_players in v.players else 2
    try:
        options = v.resolve_options(players, game.options)
    except RulesError as exc:
        key = "game.players" if "played by" in str(exc) else "game.options"
        raise bad(f"{key}: {exc}") from None
    try:
        deals, games = match_length(v, game.deals, game.games, ("game.deals", "game.games"))
    except RulesError as exc:
        raise bad(str(exc)) from None
    try:
        v.new_game(players, options, deals)
    except RulesError as exc:
        raise bad(f"game.deals: {exc}") from None
    per_table = 2 if game.bots is None else game.bots
    if per_table < 2:
        raise bad(f"game.bots: a table takes at least 2 bots, not {per_table}")
    try:
        n_orient = len(orientations(v, players, options, per_table))
    except RulesError as exc:
        hint = f" (set bots = {players} in [game])" if game.bots is None and players > 2 else ""
        raise bad(f"game.bots: {exc}{hint}") from None
    return v, players, options, deals, games, per_table, n_orient


def _book(game: GameTable, base: Path, v: Variant, players: int, options: dict[str, Any], deals: int | None, games: int | None,
          bad: Bad) -> DealsBook | None:
    """``[game] deals_file``, read and checked: every deal valid for the game, enough of them for a
    match, an order and a start it has."""
    if game.deals_file is None:
        if game.deals_order != "sequential" or game.deals_start != 1:
            raise bad("game.deals_order and game.deals_start go with game.deals_file (the deal file every table plays)")
        return None
    import hashlib

    from referee.engine.core.deal import parse_deal_lines
    from referee.engine.core.errors import BadDeal

    name = _text(game.deals_file, "game.deals_file", bad)
    path = (base / Path(name).expanduser()).resolve()
    if game.deals_order not in DEAL_ORDERS:
        raise bad(f"game.deals_order: {game.deals_order!r} is not one of {', '.join(DEAL_ORDERS)}")
    try:
        data = path.read_bytes()
        lines = data.decode("utf-8").splitlines()
        if any(too_deep(line.encode()) for line in lines):
            raise BadDeal(f"JSON nested deeper than {MAX_DEPTH} levels")
        found = parse_deal_lines(lines, v.shape(players, options))
    except IsADirectoryError:
        raise bad(f"game.deals_file: {name} is a folder; give a file of deals (`referee deals generate` writes one)") from None
    except OSError as exc:
        raise bad(f"game.deals_file: {name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise bad(f"game.deals_file: {name}: not UTF-8 text") from None
    except BadDeal as exc:
        raise bad(f"game.deals_file: {name}: {exc}") from None
    if not found:
        raise bad(f"game.deals_file: {name} holds no deal")
    per_block = 7 if v.shape(players, options).station else 1  # a station game's rounds stay in order
    if game.deals_start > len(found):
        raise bad(f"game.deals_start: {game.deals_start} is past the file's last deal ({len(found)})")
    if (game.deals_start - 1) % per_block or len(found) % per_block:
        raise bad(f"game.deals_file: {v.id} plays its deals {per_block} at a time (a game's rounds): the file must hold whole games "
                  f"and deals_start must begin one (1, {per_block + 1}, …)")
    needed = (deals or 0) * (games or 1) if not v.to_target else 0
    if len(found) < needed:
        raise bad(f"game.deals_file: {name} holds {len(found)} deals, and a match plays {needed} in each orientation")
    return DealsBook(path, hashlib.sha256(data).hexdigest(), tuple(found), game.deals_order, game.deals_start, per_block)


def _bot(i: int, entry: BotTable, before: list[BotEntry], base: Path, sandbox: bool, bad: Bad, league_tc: TimeControl) -> BotEntry:
    """The ``i``-th ``[[bot]]`` (from 1), after the bots ``before`` it: its name, command, folder,
    environment and clock (over ``league_tc``), checked, and its command resolved."""
    name = entry.name
    if not NAME_RE.match(name):
        raise bad(f"bot #{i}.name: {name!r} is not a plain name (letters, digits, '.', '_', '+', '-'; at most 40 characters)")
    if any(b.name == name for b in before):
        raise bad(f"bot #{i}.name: two bots are named {name!r}")
    label = f"bot {name!r}"
    command = entry.command
    words = [command] if isinstance(command, str) else command
    if not words:
        raise bad(f"{label}.command: expected a command line (a string) or a list of words")
    for word in words:
        _no_nul(word, f"{label}.command", bad)
    cwd = entry.cwd
    if cwd is not None:
        _text(cwd, f"{label}.cwd", bad)
    workdir = base if cwd is None else (base / Path(cwd).expanduser()).resolve()
    if not workdir.is_dir():
        raise bad(f"{label}.cwd: {cwd!r} is not a directory")
    env = {}
    for key, value in entry.env.items():
        if not key or "=" in key or "\0" in key:
            raise bad(f"{label}.env: {key!r} cannot name an environment variable (empty, or with '=' or a NUL byte)")
        if isinstance(value, bool):
            value = "1" if value else "0"
        if not isinstance(value, (str, int, float)):
            raise bad(f"{label}.env.{key}: expected a string or a number")
        env[key] = _no_nul(str(value), f"{label}.env.{key}", bad)
    try:
        argv = resolve_command(command, workdir)
    except BotError as exc:
        raise bad(f"{label}.command: {exc}") from None
    own = None
    if entry.clock is not None:
        given = {key: value for key in ClockTable.__struct_fields__ if (value := getattr(entry.clock, key)) is not None}
        own = TimeControl(**{"startup": league_tc.startup, "move": league_tc.move, "bank": league_tc.bank,
                             "increment": league_tc.increment, "margin": league_tc.margin, **given})
    sandbox = sandbox if entry.sandbox is None else entry.sandbox
    if sandbox:  # it runs in its own directory: its relative paths are the league file's (or its cwd's)
        argv = absolute_words(argv, workdir)
    return BotEntry(name, command, cwd, env, argv, workdir, sandbox, own)


def _schedule(doc: LeagueFile, bots: list[BotEntry], bad: Bad) -> tuple[str, str | None]:
    """The schedule, by its canonical name, and the gauntlet's bot."""
    schedule = None if doc.schedule is None else _text(doc.schedule, "schedule", bad)
    gauntlet = None if doc.gauntlet is None else _text(doc.gauntlet, "gauntlet", bad)
    if schedule is None:
        schedule = GAUNTLET if gauntlet is not None else ROUND_ROBIN
    schedule = schedule.strip().lower().replace("_", "-").replace(" ", "-")
    if schedule == "roundrobin":
        schedule = ROUND_ROBIN
    if schedule not in SCHEDULES:
        raise bad(f"schedule: {schedule!r} is not a schedule; choose {', '.join(SCHEDULES[:-1])} or {SCHEDULES[-1]}")
    if schedule == GAUNTLET:
        if gauntlet is None:
            raise bad("gauntlet: a gauntlet schedule needs gauntlet = \"<the bot that plays all the others>\"")
        if all(b.name != gauntlet for b in bots):
            raise bad(f"gauntlet: no bot is named {gauntlet!r} (bots: {', '.join(b.name for b in bots)})")
    elif gauntlet is not None:
        raise bad(f"gauntlet: given, but schedule is {schedule}; remove one of them")
    return schedule, gauntlet


def _rounds_and_tables(doc: LeagueFile, schedule: str, n: int, per_table: int, bad: Bad) -> tuple[int | None, int | None]:
    """A Swiss league's rounds, and the tables per bot of a balanced design, for ``n`` bots; a
    knockout's sizes are checked here too."""
    rounds = doc.rounds
    if schedule == SWISS:
        most = max_swiss_rounds(n, per_table)
        if rounds is None:
            rounds = min(most, max(1, math.ceil(math.log2(n))))
        if rounds < 1:
            raise bad("rounds: a Swiss league plays at least 1 round")
        if rounds > most:
            raise bad(f"rounds: {rounds} rounds of {n} bots at tables of {per_table} would seat bots together again after every "
                      f"bot has met every other; at most {most}")
    elif rounds is not None:
        raise bad(f"rounds: only a Swiss schedule has rounds (schedule is {schedule})")
    tables = doc.tables
    if tables is not None:
        if schedule not in (ROUND_ROBIN, GAUNTLET):
            raise bad(f"tables: only a round robin or a gauntlet takes tables per bot (schedule is {schedule})")
        if tables < 1:
            raise bad("tables: every bot sits at 1 table at least")
        _at_most(tables, MAX_TABLES, "tables", bad)
        members, k = (n - 1, per_table - 1) if schedule == GAUNTLET else (n, per_table)
        if (members * tables) % k:
            fit = [t for t in range(max(1, tables - k), tables + k + 1) if (members * t) % k == 0][:2]
            raise bad(f"tables: {members} bots at {tables} tables of {k}{' besides the gauntlet bot' if schedule == GAUNTLET else ''} "
                      f"leave a table short; try {' or '.join(map(str, fit))}")
    if schedule == KNOCKOUT and (why := knockout_sizes(n, per_table)) is not None:
        raise bad(f"schedule: {why}")
    return rounds, tables


def _places(doc: LeagueFile, path: Path, base: Path, db: Path | None, bad: Bad) -> tuple[Path, Path]:
    """Where results go: the database and the logs' folder."""
    if db is not None:
        db_path = db.resolve()
        return db_path, db_path.with_name(f"{db_path.stem}-logs")
    db_key = None if doc.database is None else _text(doc.database, "database", bad)
    db_path = base / db_key if db_key else base / f"{path.stem}.db"
    logs_key = None if doc.logs is None else _text(doc.logs, "logs", bad)
    return db_path, base / logs_key if logs_key else db_path.with_name(f"{db_path.stem}-logs")


# -- checking helpers ---------------------------------------------------------------------------


def _no_nul(value: str, label: str, bad) -> str:
    if "\0" in value:
        raise bad(f"{label}: contains a NUL byte")
    return value


def _text(value: str, label: str, bad) -> str:
    if not value.strip():
        raise bad(f"{label}: must not be empty")
    return _no_nul(value, label, bad)


def _at_most(value: int | None, most: int, label: str, bad) -> None:
    if value is not None and value > most:
        raise bad(f"{label}: {value} is more than this tool accepts (at most {most})")


#: What the tables of the file may hold, by where they are (for "unknown key" messages).
_TABLES: dict[str, type[msgspec.Struct]] = {"": LeagueFile, "game": GameTable, "clock": ClockTable,
                                             "points": PointsTable, "bot": BotTable}
_KINDS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
          "array": "a list", "object": "a table"}
_PATH_PART = re.compile(r"\.([A-Za-z0-9_-]+)|\[(\d+|\.\.\.)\]")


def _explain(exc: msgspec.ValidationError, text: str) -> str:
    """msgspec's message (``Expected `int`, got `str` - at `$.game.players```) in the words of
    this file: ``game.players: expected an integer, got 'x'``; bots are named by their name when
    it is a plain one, else by their number (``bot #2``)."""
    message, _, at = str(exc).partition(" - at `")
    parts: list[str | int] = []
    for key, index in _PATH_PART.findall(at.rstrip("`").removeprefix("$")):
        parts.append(key if key else int(index) if index.isdigit() else "...")
    doc: Any = msgspec.toml.decode(text)
    value: Any = doc
    for part in parts:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            value = None
            break
    table = "bot" if parts[:1] == ["bot"] and len(parts) >= 2 else ".".join(str(p) for p in parts)
    if parts[:1] == ["bot"] and len(parts) >= 2 and isinstance(parts[1], int):
        number = f"bot #{parts[1] + 1}"
        name = doc["bot"][parts[1]].get("name") if isinstance(doc["bot"][parts[1]], dict) else None
        label = f"bot {name!r}" if isinstance(name, str) and NAME_RE.match(name) else number
        key = ".".join([label, *map(str, parts[2:])])
    else:
        number = label = key = table
    if (problem := bound_problem(exc, LeagueFile, doc, key)) is not None:
        return problem
    if m := re.fullmatch(r"Object contains unknown field `(.*)`", message):
        known = ", ".join(_TABLES[table].__struct_fields__) if table in _TABLES else ""
        prefix = f"{number}: " if table == "bot" else f"{table}." if table else ""
        return f"{prefix}{m[1]}: unknown key" + (f" (known here: {known})" if known else "")
    if m := re.fullmatch(r"Object missing required field `(.*)`", message):
        return f"{number if m[1] == 'name' else label}: missing '{m[1]}'"
    if m := re.match(r"Expected `(.*?)`, got `(.*?)`", message):
        wanted = m[1].removesuffix(" | null")
        if parts[:1] == ["bot"] and len(parts) <= 2:
            return "bot: write each bot as a [[bot]] table"
        if "command" in parts:
            return f"{label}.command: expected a command line (a string) or a list of words"
        if wanted == "object":
            return f"{key}: expected a table ([{key}] or {{ ... }})"
        shown = f"{value!r}" if value is not None else f"{_KINDS.get(m[2], m[2])}"
        return f"{key}: expected {_KINDS.get(wanted, f'`{wanted}`')}, got {shown}"
    return f"{key or 'the file'}: {message[:1].lower()}{message[1:]}"
