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
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.clock import TimeControl
from referee.engine import variant as find_variant
from referee.engine.errors import RulesError
from referee.engine.game import Variant
from referee.errors import BotError
from referee.match import match_length, orientations
from referee.process import resolve_command

ROUND_ROBIN = "round-robin"
GAUNTLET = "gauntlet"
SCHEDULES = (ROUND_ROBIN, GAUNTLET)

#: Bot names become parts of file names, so they are kept plain.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$")

TOP_KEYS = ("name", "seed", "schedule", "gauntlet", "max_faults", "max_line", "memory_mb", "cpu_seconds", "database", "logs",
            "game", "clock", "points", "bot")
GAME_KEYS = ("variant", "players", "deals", "games", "options")
CLOCK_KEYS = ("startup", "move", "bank", "increment")
POINTS_KEYS = ("win", "draw", "loss")
BOT_KEYS = ("name", "command", "cwd", "env")


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

    def identity(self) -> dict[str, Any]:
        """What must not change once the bot has results (as written, so moving the league's
        directory keeps it)."""
        return {"command": self.command, "cwd": self.cwd, "env": dict(sorted(self.env.items()))}


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
    seed: int
    tc: TimeControl
    max_faults: int
    max_line: int
    memory_mb: int | None
    cpu_seconds: int | None
    schedule: str
    gauntlet: str | None
    points: Points
    db_path: Path
    logs_dir: Path
    orientations: int = field(default=2)

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
            "options": dict(sorted(self.options.items())),
            "deals": self.deals,
            "games": self.games,
            "seed": self.seed,
            "clock": {"startup": self.tc.startup, "move": self.tc.move, "bank": self.tc.bank, "increment": self.tc.increment},
            "max_faults": self.max_faults,
            "max_line": self.max_line,
            "memory_mb": self.memory_mb,
            "cpu_seconds": self.cpu_seconds,
        }

    def pairings(self) -> list[tuple[str, str]]:
        """Every match of the schedule, each as ``(a, b)`` with ``a < b`` (so a pairing is the
        same whatever the order of the bots in the file, and bot ``a`` always takes the first
        orientation).  Round robin lists the pairings of each bot with those before it in the
        file, so a bot added at the end only adds pairings at the end."""
        names = [b.name for b in self.bots]
        if self.schedule == GAUNTLET:
            assert self.gauntlet is not None
            return [pair(self.gauntlet, other) for other in names if other != self.gauntlet]
        return [pair(names[i], names[j]) for j in range(len(names)) for i in range(j)]

    def describe(self) -> str:
        amount = f"{self.deals} deals" if self.deals is not None else f"{self.games} game{'s' if self.games != 1 else ''}"
        sched = "round robin" if self.schedule == ROUND_ROBIN else f"gauntlet of {self.gauntlet}"
        return f"{self.variant.id}, {self.players} players, {amount} per orientation, seed {self.seed}, {sched}, {len(self.bots)} bots"


def pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def load_league(path: Path, db: Path | None = None) -> League:
    """Read and check a league file; resolve every bot's command.

    Args:
      path: the TOML file.
      db: the database to use instead of the file's (or the default ``<stem>.db`` beside it);
        the logs then go beside it, in ``<db stem>-logs/``.

    Raises:
      LeagueError: naming the file and the key for every problem: unreadable file, TOML syntax,
        an unknown key, a value of the wrong type, an unknown game or option, a deal count the
        game refuses, duplicate bot names, a missing or unrunnable command, a gauntlet naming
        an unknown bot.
    """
    where = str(path)

    def bad(message: str) -> LeagueError:
        return LeagueError(f"{where}: {message}")

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise bad("no such file") from None
    except IsADirectoryError:
        raise bad("is a directory, not a league file") from None
    except OSError as exc:
        raise bad(exc.strerror or str(exc)) from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise bad("not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise bad(f"TOML syntax error: {exc}") from None

    base = path.resolve().parent
    _known(doc, TOP_KEYS, "", bad)

    # -- the game --
    game = _table(doc, "game", bad)
    _known(game, GAME_KEYS, "game.", bad)
    vid = _get(game, "variant", str, "game.variant", bad, "sport")
    try:
        v = find_variant(vid)
    except RulesError as exc:
        raise bad(f"game.variant: {exc}") from None
    players = _get(game, "players", int, "game.players", bad, v.default_players if v.default_players in v.players else 2)
    given_options = _table(game, "options", bad, "game.options")
    try:
        options = v.resolve_options(players, given_options)
    except RulesError as exc:
        key = "game.players" if "played by" in str(exc) else "game.options"
        raise bad(f"{key}: {exc}") from None
    deals = _get(game, "deals", int, "game.deals", bad, None)
    games = _get(game, "games", int, "game.games", bad, None)
    try:
        deals, games = match_length(v, deals, games, ("game.deals", "game.games"))
    except RulesError as exc:
        raise bad(str(exc)) from None
    try:
        v.new_game(players, options, deals)
    except RulesError as exc:
        raise bad(f"game.deals: {exc}") from None
    try:
        n_orient = len(orientations(v, players, options, 2))
    except RulesError as exc:
        raise bad(f"game.players: league matches are between two bots, and {exc}") from None

    # -- clocks and limits --
    clock = _table(doc, "clock", bad)
    _known(clock, CLOCK_KEYS, "clock.", bad)
    tc_args = {}
    for key in CLOCK_KEYS:
        if key in clock:
            tc_args[key] = _get(clock, key, float, f"clock.{key}", bad, None)
    try:
        tc = TimeControl(**tc_args)
    except ValueError as exc:
        raise bad(f"clock: {exc}") from None
    seed = _get(doc, "seed", int, "seed", bad, 1)
    max_faults = _get(doc, "max_faults", int, "max_faults", bad, 3)
    if max_faults < 1:
        raise bad("max_faults: must be at least 1")
    max_line = _get(doc, "max_line", int, "max_line", bad, 65536)
    if max_line < 256:
        raise bad("max_line: must be at least 256 bytes")
    memory_mb = _get(doc, "memory_mb", int, "memory_mb", bad, None)
    cpu_seconds = _get(doc, "cpu_seconds", int, "cpu_seconds", bad, None)
    for key, value in (("memory_mb", memory_mb), ("cpu_seconds", cpu_seconds)):
        if value is not None and value <= 0:
            raise bad(f"{key}: must be positive")

    pts = _table(doc, "points", bad)
    _known(pts, POINTS_KEYS, "points.", bad)
    points = Points(**{k: _get(pts, k, float, f"points.{k}", bad, getattr(Points, k)) for k in POINTS_KEYS})

    # -- bots --
    entries = doc.get("bot", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise bad("bot: write each bot as a [[bot]] table")
    bots: list[BotEntry] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries, start=1):
        label = f"bot #{i}"
        _known(entry, BOT_KEYS, f"{label}: ", bad)
        if "name" not in entry:
            raise bad(f"{label}: missing 'name'")
        name = _get(entry, "name", str, f"{label}.name", bad, None)
        if not NAME_RE.match(name):
            raise bad(f"{label}.name: {name!r} is not a plain name (letters, digits, '.', '_', '+', '-'; at most 40 characters)")
        if name in seen:
            raise bad(f"{label}.name: two bots are named {name!r}")
        seen.add(name)
        label = f"bot {name!r}"
        if "command" not in entry:
            raise bad(f"{label}: missing 'command'")
        command = entry["command"]
        if not (isinstance(command, str) or (isinstance(command, list) and command and all(isinstance(w, str) for w in command))):
            raise bad(f"{label}.command: expected a command line (a string) or a list of words")
        cwd = _get(entry, "cwd", str, f"{label}.cwd", bad, None)
        workdir = base if cwd is None else (base / Path(cwd).expanduser()).resolve()
        if not workdir.is_dir():
            raise bad(f"{label}.cwd: {cwd!r} is not a directory")
        env_in = _table(entry, "env", bad, f"{label}.env")
        env = {}
        for key, value in env_in.items():
            if isinstance(value, bool):
                value = "1" if value else "0"
            if not isinstance(value, (str, int, float)):
                raise bad(f"{label}.env.{key}: expected a string or a number")
            env[key] = str(value)
        try:
            argv = resolve_command(command, workdir)
        except BotError as exc:
            raise bad(f"{label}.command: {exc}") from None
        bots.append(BotEntry(name, command, cwd, env, argv, workdir))
    if len(bots) < 2:
        raise bad(f"bot: a league needs at least two bots ([[bot]] tables), found {len(bots)}")

    # -- schedule --
    schedule = _get(doc, "schedule", str, "schedule", bad, None)
    gauntlet = _get(doc, "gauntlet", str, "gauntlet", bad, None)
    if schedule is None:
        schedule = GAUNTLET if gauntlet is not None else ROUND_ROBIN
    schedule = schedule.strip().lower().replace("_", "-").replace(" ", "-")
    if schedule == "roundrobin":
        schedule = ROUND_ROBIN
    if schedule not in SCHEDULES:
        raise bad(f"schedule: {schedule!r} is not a schedule; choose {' or '.join(SCHEDULES)}")
    if schedule == GAUNTLET:
        if gauntlet is None:
            raise bad("gauntlet: a gauntlet schedule needs gauntlet = \"<the bot that plays all the others>\"")
        if gauntlet not in seen:
            raise bad(f"gauntlet: no bot is named {gauntlet!r} (bots: {', '.join(b.name for b in bots)})")
    elif gauntlet is not None:
        raise bad("gauntlet: given, but schedule is round-robin; remove one of them")

    # -- where results go --
    league_name = _get(doc, "name", str, "name", bad, path.stem)
    if db is None:
        db_key = _get(doc, "database", str, "database", bad, None)
        db_path = base / db_key if db_key else base / f"{path.stem}.db"
        logs_key = _get(doc, "logs", str, "logs", bad, None)
        logs_dir = base / logs_key if logs_key else db_path.with_name(f"{db_path.stem}-logs")
    else:
        db_path = db.resolve()
        logs_dir = db_path.with_name(f"{db_path.stem}-logs")

    return League(path=path, name=league_name, bots=bots, variant=v, players=players, options=options, deals=deals,
                  games=games, seed=seed, tc=tc, max_faults=max_faults, max_line=max_line, memory_mb=memory_mb,
                  cpu_seconds=cpu_seconds, schedule=schedule, gauntlet=gauntlet, points=points, db_path=db_path,
                  logs_dir=logs_dir, orientations=n_orient)


# -- checking helpers ---------------------------------------------------------------------------


def _known(table: dict, keys: tuple[str, ...], prefix: str, bad) -> None:
    for key in table:
        if key not in keys:
            raise bad(f"{prefix}{key}: unknown key (known here: {', '.join(keys)})")


def _table(doc: dict, key: str, bad, label: str | None = None) -> dict:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise bad(f"{label or key}: expected a table ([{label or key}] or {{ ... }})")
    return value


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string"}


def _get(table: dict, key: str, kind: type, label: str, bad, default: Any) -> Any:
    if key not in table:
        return default
    value = table[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise bad(f"{label}: expected {_TYPE_NAMES[kind]}, got {value!r}")
    if kind is float and not math.isfinite(value):
        raise bad(f"{label}: expected a finite number, got {value!r}")
    if kind is str and not value.strip():
        raise bad(f"{label}: must not be empty")
    return value
