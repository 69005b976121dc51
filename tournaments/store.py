"""League results in SQLite (standard library :mod:`sqlite3`): one transaction per finished table.

Tables (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`), every table of the league keyed by its
round, its bots and its leg (:class:`tournaments.schedule.TableKey`; ``bots`` is the names in
alphabetical order joined by commas):

``meta(key, value)``
    ``settings``: the league settings the results were played under, as canonical JSON
    (:meth:`League.settings`); ``created``: when the database was made (a timing field);
    ``cut_runs``: runs in a row that ended before storing any table (:meth:`Store.cut_runs`);
    ``design``: a round robin's or gauntlet's balanced design, once drawn (JSON);
    ``schedule``: the kind of schedule whose rounds ``draws`` holds.
``bots(name, identity)``
    each bot's command, cwd and env as written in the league file (JSON), fixed once it has
    a stored table.
``matches(round, bots, leg, ...)``
    one row per finished table.  ``status`` is ``done`` (a result) or ``failed`` (no result:
    ``error`` says why, ``attempts`` counts the matches cut short in a row; the table is played
    again by the next run until :data:`MAX_ATTEMPTS`).  A done row holds the bot placed first
    alone (``winner``, NULL when the first place is shared), the boards (paired units), games
    and deal plays, the log file (relative to the database's directory), the whole result
    (:class:`referee.records.summary.MatchJson`) as JSON, and the timing fields ``started``,
    ``finished`` (Unix time) and ``seconds``.
``seats(round, bots, leg, seat, bot, place, score, points, net, boards_won, games_won)``
    every bot of a done table: its place (1 the best paired margin; bots level share it), its
    score (the bots it finished ahead of, a level one counting half, over ``N − 1``: 1, ½, 0
    for two bots), the points its sides wrote and its net points (points × the game's sense),
    the boards on which its margin was above 0, and the games it won.
``boards(round, bots, leg, board, seat, margin)``
    every bot's paired margin on every board of a done table (the input of the ratings).
``faults(round, bots, leg, n, bot, kind, game, deal, seat, detail, line)``
    every fault of a done table, in order.
``draws(round, slot, bots)``
    the rounds of a Swiss or knockout schedule as they were drawn: each slot a table, or one
    bot (a bye).
``in_play(round, bots, leg, since, run)``
    the tables being played now: since when (Unix time) and by which run (:func:`this_run`;
    ``meta 'run'`` describes the run that holds the database).  A table's row goes in the
    transaction that stores it; a run starting clears the rows a killed one left.  Made beside
    the others by any run (a database of an older run gets it then); not in :data:`TABLES`,
    since it holds nothing once a run has ended.

A table is written only when it is complete, in one transaction, so a crash or ``kill -9``
leaves either the whole table or nothing.  Rows never depend on the order tables finished in:
two runs of the same league with deterministic bots give equal tables apart from the timing
fields (:data:`TIMING_COLUMNS`).

**Older databases** (version 1 and 2, from before tables of N bots: ``matches`` keyed by
``bot_a < bot_b`` with A's and B's columns, ``boards.margin_a``) are upgraded in one
transaction when a run opens them (:func:`_upgrade`), and in a copy in memory when ``status``,
``table`` or a report reads them, so a read never writes.  An upgraded database holds exactly
what this version stores for the same matches.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import msgspec

from referee.base.seeds import fresh_seed
from referee.engine.core.shuffle import BLAKE2B, BLAKE2B_GAMES, DERIVATIONS, SPLITMIX64
from tournaments.config import League, LeagueError
from tournaments.schedule import TableKey

if TYPE_CHECKING:
    from tournaments.wire import TableRecord

SCHEMA_VERSION = 3
TIMING_COLUMNS = frozenset(("started", "finished", "seconds"))
TIMING_META = frozenset(("created", "cut_runs", "run"))
TABLES = ("meta", "bots", "matches", "seats", "boards", "faults", "draws")
#: The key of a table in every table that describes one.
KEY = "round, bots, leg"

SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE bots (
    name     TEXT PRIMARY KEY,
    identity TEXT NOT NULL
);
CREATE TABLE matches (
    round    INTEGER NOT NULL,
    bots     TEXT NOT NULL,
    leg      INTEGER NOT NULL,
    status   TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    error    TEXT,
    winner   TEXT,
    boards   INTEGER,
    games    INTEGER,
    deals    INTEGER,
    log      TEXT,
    result   TEXT,
    started  REAL,
    finished REAL,
    seconds  REAL,
    attempts INTEGER,
    PRIMARY KEY (round, bots, leg)
) WITHOUT ROWID;
CREATE TABLE seats (
    round      INTEGER NOT NULL,
    bots       TEXT NOT NULL,
    leg        INTEGER NOT NULL,
    seat       INTEGER NOT NULL,
    bot        TEXT NOT NULL,
    place      INTEGER NOT NULL,
    score      REAL NOT NULL,
    points     INTEGER NOT NULL,
    net        REAL NOT NULL,
    boards_won INTEGER NOT NULL,
    games_won  INTEGER NOT NULL,
    PRIMARY KEY (round, bots, leg, seat),
    FOREIGN KEY (round, bots, leg) REFERENCES matches ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE boards (
    round  INTEGER NOT NULL,
    bots   TEXT NOT NULL,
    leg    INTEGER NOT NULL,
    board  INTEGER NOT NULL,
    seat   INTEGER NOT NULL,
    margin REAL NOT NULL,
    PRIMARY KEY (round, bots, leg, board, seat),
    FOREIGN KEY (round, bots, leg) REFERENCES matches ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE faults (
    round  INTEGER NOT NULL,
    bots   TEXT NOT NULL,
    leg    INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    bot    TEXT NOT NULL,
    kind   TEXT NOT NULL,
    game   INTEGER,
    deal   INTEGER,
    seat   INTEGER,
    detail TEXT,
    line   TEXT,
    PRIMARY KEY (round, bots, leg, n),
    FOREIGN KEY (round, bots, leg) REFERENCES matches ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE draws (
    round INTEGER NOT NULL,
    slot  INTEGER NOT NULL,
    bots  TEXT NOT NULL,
    PRIMARY KEY (round, slot)
) WITHOUT ROWID;
"""


IN_PLAY = """
CREATE TABLE IF NOT EXISTS in_play (
    round INTEGER NOT NULL,
    bots  TEXT NOT NULL,
    leg   INTEGER NOT NULL,
    since REAL NOT NULL,
    run   TEXT NOT NULL,
    PRIMARY KEY (round, bots, leg)
) WITHOUT ROWID
"""


@dataclass(frozen=True)
class Playing:
    """A table in play: since when (Unix time), and the run that plays it."""

    key: TableKey
    since: float
    run: str


def _start_ticks(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc/PID/stat``), ``None`` if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def this_run() -> dict[str, Any]:
    """This process as the run that holds a database: its id (``host:pid``), and what tells,
    from another shell, whether it still runs (the process's start time)."""
    import socket

    host, pid = socket.gethostname(), os.getpid()
    return {"id": f"{host}:{pid}", "host": host, "pid": pid, "since": round(time.time(), 3), "ticks": _start_ticks(pid)}


def run_alive(run: dict[str, Any] | None) -> bool:
    """Whether ``run`` (:func:`this_run` of some process) still runs: the same process on this
    host (a run on another host sharing the folder cannot be told: it counts as alive)."""
    import socket

    if not isinstance(run, dict):
        return False
    if run.get("host") != socket.gethostname():
        return True
    pid = run.get("pid")
    return isinstance(pid, int) and _start_ticks(pid) == run.get("ticks")


def key_of(row: Iterable[Any]) -> TableKey:
    """The :class:`TableKey` of a row that starts with ``round, bots, leg``."""
    r, bots, leg = list(row)[:3]
    return TableKey(r, tuple(bots.split(",")), leg)


@dataclass
class Seat:
    """One bot of a done table."""

    bot: str
    place: int
    score: float
    points: int
    net: float
    boards_won: int = 0
    games_won: int = 0


@dataclass
class TableRow:
    """A stored table, as the standings and the status read it."""

    key: TableKey
    status: str
    error: str | None
    winner: str | None
    log: str | None
    attempts: int | None = None
    seats: list[Seat] = field(default_factory=list)  # done tables: in the order of key.bots

    def seat(self, bot: str) -> Seat:
        return next(s for s in self.seats if s.bot == bot)


@dataclass
class Finished:
    """A table the runner finished: a result, or a failure."""

    key: TableKey
    started: float
    finished: float
    log: str | None
    record: TableRecord | None = None  # the match process's: the whole result and every bot's margin per board
    error: str | None = None
    counts: bool = True  # a failed attempt that counts towards MAX_ATTEMPTS (not a bot that could not start)


#: A table whose match was cut short (its process crashed, hung or was stopped) this many times
#: in a row is not played again by later runs, only by ``league run --retry``.
MAX_ATTEMPTS = 3


class StoreError(LeagueError):
    """The database cannot be read or written (read-only, full disk, damaged); the message is
    one line, and nothing stored before was lost."""


def db_error(path: Path, exc: sqlite3.Error, doing: str) -> StoreError:
    """The one-line error for an SQLite failure while ``doing`` (read, write) the database."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "readonly" in text:
        why = "it is read-only (make it writable, or give a copy with --db)"
    elif "full" in text:
        why = f"the disk is full ({text}); free some space and run again"
    elif "disk I/O error" in text:
        why = (f"the disk cannot be read or written ({text}): it may be full, or failing; free some space (or check the "
               f"disk) and run again")
    elif "malformed" in text or "not a database" in text:
        why = f"it is damaged ({text}); restore it from a backup, or start again with another --db"
    else:
        why = text
    return StoreError(f"{path}: cannot {doing} the database: {why}")


_TABLE_COLUMNS = f"{KEY}, status, error, winner, log, attempts"


class Store:
    """An open league database.  Use :func:`open_store` (or ``with``) and :meth:`close` it."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    # -- settings and bots -----------------------------------------------------------------

    def check(self, league: League, *, adopt: bool) -> None:
        """Refuse a league whose settings, or a bot whose command, differ from those of the
        stored results (a database without finished tables takes new settings), and a Swiss or
        knockout league whose bots or schedule differ from those of its drawn rounds.  With
        ``adopt``, record the settings and bots (in one transaction).

        Raises:
            LeagueError: one line naming the first difference.
        """
        where = f"{league.path}"
        stored = self.meta("settings")
        settings = league.settings()
        played = self.bots_with_results()
        if stored is not None and not played:
            stored = None  # nothing finished yet: the settings may still change
        if stored is not None:
            old = self._stored_json(stored, "the settings (meta 'settings')")
            old.setdefault("bots", 2)  # written before tables of N: two bots a table
            diff = _first_difference(old, {"bots": 2, **settings})
            if diff is not None:
                key, was, now = diff
                raise LeagueError(
                    f"{where}: {key} is {_show(now)} but the results in {self.path.name} were played with {_show(was)}; "
                    f"old and new results would not be comparable (restore the setting, or use another database with --db)"
                )
        known = dict(self.conn.execute("SELECT name, identity FROM bots"))
        for bot in league.bots:
            identity = json.dumps(bot.identity(), sort_keys=True)
            if bot.name in played and bot.name in known and known[bot.name] != identity:
                old = self._stored_json(known[bot.name], f"bot {bot.name!r} (bots)")
                key, was, now = _first_difference(old, bot.identity()) or ("command", None, None)
                raise LeagueError(
                    f"{where}: bot {bot.name!r}: {key} is {_show(now)} but its stored matches were played with {_show(was)}; "
                    f"enter the new version under a new name (or use another database with --db)"
                )
        draws = self.draws()
        if draws:
            kind = self.meta("schedule")
            if kind is not None and kind != league.schedule:
                raise LeagueError(f"{where}: schedule is {league.schedule!r} but {self.path.name} holds the rounds of a {kind} "
                                  f"schedule already drawn; restore it, or use another database with --db")
            drawn = {b for slots in draws.values() for slot in slots for b in slot}
            names = {b.name for b in league.bots}
            if drawn != names:
                added, gone = sorted(names - drawn), sorted(drawn - names)
                change = "; ".join(x for x in (f"added {', '.join(added)}" if added else "",
                                                f"removed {', '.join(gone)}" if gone else "") if x)
                raise LeagueError(f"{where}: the bots of a {kind or league.schedule} league are fixed once its first round is drawn "
                                  f"({change}); restore them, or start another league with --db")
            if league.rounds is not None and max(draws) > league.rounds:
                raise LeagueError(f"{where}: rounds is {league.rounds} but {max(draws)} rounds are drawn already; "
                                  f"rounds can grow, not shrink")
        if not adopt:
            return
        with self.transaction("write"):
            if stored is None:
                if self.meta("settings") != json.dumps(settings, sort_keys=True):
                    self.conn.execute("DELETE FROM matches WHERE status = 'failed'")  # tried under other settings
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('settings', ?)", (json.dumps(settings, sort_keys=True),))
                self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (f"{time.time():.3f}",))
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('league', ?)", (league.name,))
            for bot in league.bots:
                if bot.name not in played:
                    self.conn.execute("INSERT OR REPLACE INTO bots VALUES (?, ?)", (bot.name, json.dumps(bot.identity(), sort_keys=True)))

    def _stored_json(self, text: str, what: str) -> Any:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise StoreError(f"{self.path}: {what} cannot be read (edited by hand?): delete that row and the next run "
                             f"takes the league file's")
        return value

    def secret_seed(self, league: League, *, create: bool) -> League:
        """``league`` with its deal stream's seed: the file's, or, when the file gives none, the
        secret one this database keeps (``meta 'seed'``, hexadecimal), drawn from the operating
        system at the first run (``create``) and the same at every run after, so a league killed
        and resumed deals the same deals.  A reading command before the first run gets the
        league as it is (no seed yet).

        Raises:
            StoreError: the stored seed cannot be read (edited by hand?).
        """
        league = self._derivation(league, create=create)
        if league.seed is not None:
            return league
        text = self.meta("seed")
        if text is None:
            if not create:
                return league
            text = f"{fresh_seed():x}"
            with self.transaction("write"):
                self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('seed', ?)", (text,))
            text = self.meta("seed") or text
        try:
            seed = int(text, 16)
        except ValueError:
            raise StoreError(f"{self.path}: the league's secret seed (meta 'seed') cannot be read (edited by hand?)") from None
        return replace(league, seed=seed)

    def _derivation(self, league: League, *, create: bool) -> League:
        """``league`` with the derivation its deals come from (``meta 'deals_from'``): a database
        that holds finished tables and names none was played before deals were keyed, and goes
        on with ``splitmix64`` so that every pairing of the league plays the same deals; one
        that holds finished tables and a seed was keyed before games were, and goes on with
        ``blake2b``; a new one is ``blake2b-games``.  The first run (``create``) writes it down.

        Raises:
            StoreError: a derivation this version does not know (edited by hand?).
        """
        text = self.meta("deals_from")
        if text is None:
            played = self.conn.execute("SELECT 1 FROM matches WHERE status = 'done' LIMIT 1").fetchone() is not None
            text = (SPLITMIX64 if self.meta("seed") is None else BLAKE2B) if played else BLAKE2B_GAMES
            if create:
                with self.transaction("write"):
                    self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('deals_from', ?)", (text,))
                text = self.meta("deals_from") or text
        known = next((d for d in DERIVATIONS if d == text), None)
        if known is None:
            raise StoreError(f"{self.path}: the league's deal derivation (meta 'deals_from') is {text!r}, which this version "
                             f"does not know (edited by hand?)")
        return replace(league, deals_from=known)

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def bots_with_results(self) -> set[str]:
        rows = self.conn.execute("SELECT bot FROM seats JOIN matches USING (round, bots, leg) WHERE status = 'done'")
        return {name for (name,) in rows}

    # -- the schedule ------------------------------------------------------------------------

    def draws(self) -> dict[int, list[list[str]]]:
        """The rounds drawn so far: round → its slots in order (one bot: a bye)."""
        out: dict[int, list[list[str]]] = {}
        for r, _slot, bots in self.conn.execute("SELECT round, slot, bots FROM draws ORDER BY round, slot"):
            out.setdefault(r, []).append(bots.split(","))
        return out

    def save_draw(self, kind: str, round_: int, slots: list[list[str]]) -> None:
        """Store a round just drawn (in one transaction, with the kind of schedule)."""
        with self.transaction("write"):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('schedule', ?)", (kind,))
            self.conn.execute("DELETE FROM draws WHERE round = ?", (round_,))
            self.conn.executemany("INSERT INTO draws VALUES (?, ?, ?)", [(round_, i, ",".join(slot)) for i, slot in enumerate(slots)])

    def design(self) -> dict[str, Any] | None:
        """The balanced design a run stored (``None``: none, or unreadable: it is drawn again)."""
        text = self.meta("design")
        try:
            value = json.loads(text) if text is not None else None
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def save_design(self, design: dict[str, Any]) -> None:
        with self.transaction("write"):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('design', ?)", (json.dumps(design, sort_keys=True),))

    # -- tables ----------------------------------------------------------------------------

    def tables(self) -> list[TableRow]:
        """Every stored table (done tables with their seats), in key order."""
        rows = {}
        for row in self.conn.execute(f"SELECT {_TABLE_COLUMNS} FROM matches ORDER BY round, bots, leg"):
            key = key_of(row)
            rows[key] = TableRow(key, *row[3:])
        for row in self.conn.execute(f"SELECT {KEY}, bot, place, score, points, net, boards_won, games_won FROM seats "
                                     f"ORDER BY round, bots, leg, seat"):
            table = rows.get(key_of(row))
            if table is not None and table.status == "done":
                table.seats.append(Seat(*row[3:]))
        # a done table whose seats were deleted by hand counts as not played (the next run plays it)
        return [t for t in rows.values() if t.status != "done" or sorted(s.bot for s in t.seats) == list(t.key.bots)]

    def places(self) -> dict[TableKey, dict[str, int]]:
        """Each bot's place at every done table."""
        return {t.key: {s.bot: s.place for s in t.seats} for t in self.tables() if t.status == "done"}

    def given_up(self) -> dict[TableKey, str]:
        """Tables cut short :data:`MAX_ATTEMPTS` times in a row, with the last reason: later
        runs leave them alone (``league run --retry`` plays them again)."""
        rows = self.conn.execute(f"SELECT {KEY}, error FROM matches WHERE status = 'failed' AND attempts >= ?", (MAX_ATTEMPTS,))
        return {key_of(row): row[3] or "" for row in rows}

    def retry(self) -> None:
        """Forget the failed attempts: every failed table is played again."""
        with self.transaction("write"):
            self.conn.execute("DELETE FROM matches WHERE status = 'failed'")

    def begin_run(self) -> None:
        """Count this run as cut short until it stores a table or ends (see :meth:`cut_runs`)."""
        with self.transaction("write"):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('cut_runs', ?)", (str(self.cut_runs() + 1),))

    def end_run(self) -> None:
        with self.transaction("write"):
            self.conn.execute("DELETE FROM meta WHERE key = 'cut_runs'")

    def cut_runs(self) -> int:
        """Runs in a row that were interrupted or killed before they stored any table."""
        value = self.meta("cut_runs")
        return int(value) if value is not None and value.isdigit() else 0

    def longest_match(self) -> float | None:
        """Seconds the longest stored table took (``None`` before the first)."""
        return self.conn.execute("SELECT MAX(seconds) FROM matches WHERE status = 'done'").fetchone()[0]

    def done(self) -> set[TableKey]:
        return {t.key for t in self.tables() if t.status == "done"}

    def boards(self, keys: Iterable[TableKey]) -> dict[TableKey, list[list[float]]]:
        """Every bot's margin on every board (``[board][seat]``) of the done tables among ``keys``."""
        wanted = set(keys)
        out: dict[TableKey, list[list[float]]] = {}
        for row in self.conn.execute(f"SELECT {KEY}, board, seat, margin FROM boards JOIN matches USING (round, bots, leg) "
                                     f"WHERE status = 'done' ORDER BY round, bots, leg, board, seat"):
            key = key_of(row)
            if key in wanted:
                board, seat, margin = row[3:]
                rows = out.setdefault(key, [])
                if seat == 0 or not rows:
                    rows.append([])
                rows[-1].append(margin)
        return out

    def fault_counts(self, keys: Iterable[TableKey]) -> dict[str, dict[str, int]]:
        """bot -> fault kind -> count, over the done tables among ``keys``."""
        wanted = set(keys)
        out: dict[str, dict[str, int]] = {}
        for row in self.conn.execute(
            f"SELECT {KEY}, bot, kind, COUNT(*) FROM faults JOIN matches USING (round, bots, leg) "
            "WHERE status = 'done' GROUP BY round, bots, leg, bot, kind"
        ):
            if key_of(row) in wanted:
                bot, kind, count = row[3:]
                per = out.setdefault(bot, {})
                per[kind] = per.get(kind, 0) + count
        return out

    def record(self, m: Finished) -> None:
        """Store a finished table (replacing a failed attempt), in one transaction.

        Raises:
            StoreError: the database cannot be written (nothing of this table is stored).
        """
        key = (m.key.round, m.key.text, m.key.leg)
        timing = (m.started, m.finished, round(m.finished - m.started, 3))
        with self.transaction("write"):
            row = self.conn.execute(f"SELECT attempts FROM matches WHERE {_WHERE} AND status = 'failed'", key).fetchone()
            # Seats, boards and faults too: rows deleted by hand (with foreign keys off) may have
            # left them behind, and the new ones would collide with them.
            for table in ("faults", "boards", "seats", "matches"):
                self.conn.execute(f"DELETE FROM {table} WHERE {_WHERE}", key)
            self.conn.execute("DELETE FROM meta WHERE key = 'cut_runs'")  # this run got somewhere
            self.conn.execute(f"DELETE FROM in_play WHERE {_WHERE}", key)
            if m.record is None:
                attempts = (row[0] or 0 if row else 0) + (1 if m.counts else 0)
                self.conn.execute(
                    "INSERT INTO matches (round, bots, leg, status, error, log, started, finished, seconds, attempts) "
                    "VALUES (?, ?, ?, 'failed', ?, ?, ?, ?, ?, ?)",
                    (*key, m.error, m.log, *timing, attempts),
                )
                return
            result = m.record.result
            names = list(m.key.bots)
            if result.names != names:
                raise ValueError(f"the result is for {result.names}, not {names}")
            margins = m.record.margins
            if any(len(board) != len(names) for board in margins) or len(margins) != len(m.record.boards):
                raise ValueError(f"the result's margins are not one per bot on every board of {m.key.label}")
            place = {s.bot: s.place for s in result.ranking.standings}
            # A table goes to the bot ahead on the paired margin, significant or not: match points
            # count every table, and the ratings' intervals say how sure the table is.
            self.conn.execute(
                "INSERT INTO matches VALUES (?, ?, ?, 'done', NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                (*key, result.ahead, len(margins), len(result.game_results), len(result.deals), m.log,
                 json.dumps(msgspec.to_builtins(result), sort_keys=True, ensure_ascii=False), *timing),
            )
            n = len(names)
            seats = []
            for i, (name, totals) in enumerate(zip(names, result.totals)):
                ahead_of = sum(1 for other in names if place[other] > place[name])
                level = sum(1 for other in names if other != name and place[other] == place[name])
                score = (ahead_of + level / 2) / (n - 1)
                seats.append((*key, i, name, place[name], score, totals.points, totals.net,
                              sum(1 for board in margins if board[i] > 0), totals.games_won))
            self.conn.executemany("INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", seats)
            self.conn.executemany("INSERT INTO boards VALUES (?, ?, ?, ?, ?, ?)",
                                  [(*key, b, i, x) for b, board in enumerate(margins) for i, x in enumerate(board)])
            self.conn.executemany(
                "INSERT INTO faults VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, k, f.bot, f.kind, f.game, f.deal, f.seat, f.detail, f.line) for k, f in enumerate(result.faults)],
            )

    # -- tables in play ----------------------------------------------------------------------

    def begin_runs(self, run: dict[str, Any]) -> None:
        """A run takes the database (holding its lock): it is named in ``meta 'run'``, and the
        tables a killed run left in play are forgotten (nothing of them was stored)."""
        with self.transaction("write"):
            self.conn.execute("DELETE FROM in_play")
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('run', ?)", (json.dumps(run, sort_keys=True),))

    def playing(self, key: TableKey, run: str, since: float | None = None) -> None:
        """Note ``key`` as in play by ``run`` from now (or ``since``)."""
        with self.transaction("write"):
            self.conn.execute("INSERT OR REPLACE INTO in_play VALUES (?, ?, ?, ?, ?)",
                              (key.round, key.text, key.leg, time.time() if since is None else since, run))

    def not_playing(self, keys: Iterable[TableKey]) -> None:
        """Forget ``keys`` as in play (abandoned: stopped before they ended)."""
        with self.transaction("write"):
            self.conn.executemany(f"DELETE FROM in_play WHERE {_WHERE}", [(k.round, k.text, k.leg) for k in keys])

    def in_play(self) -> list[Playing]:
        """The tables in play, as the runs noted them (a database older than the table: none)."""
        try:
            rows = self.conn.execute(f"SELECT {KEY}, since, run FROM in_play ORDER BY since, round, bots, leg").fetchall()
        except sqlite3.OperationalError:
            return []
        return [Playing(key_of(r), r[3], r[4]) for r in rows]

    def run(self) -> dict[str, Any] | None:
        """The last run that held the database (:func:`this_run`), or ``None``."""
        text = self.meta("run")
        try:
            value = json.loads(text) if text is not None else None
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def pace(self, last: int = 50) -> float | None:
        """Seconds of play per stored table over the last ``last`` done ones (``None`` before any)."""
        row = self.conn.execute("SELECT AVG(seconds) FROM (SELECT seconds FROM matches WHERE status = 'done' "
                                "ORDER BY finished DESC LIMIT ?)", (last,)).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def transaction(self, doing: str = "write") -> _Transaction:
        """``with store.transaction():`` commits at the end of the block or rolls back; an SQLite
        error becomes a one-line :class:`StoreError`."""
        return _Transaction(self.conn, self.path, doing)


_WHERE = "round = ? AND bots = ? AND leg = ?"


class _Transaction:
    def __init__(self, conn: sqlite3.Connection, path: Path, doing: str) -> None:
        self.conn = conn
        self.path = path
        self.doing = doing

    def __enter__(self) -> None:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise db_error(self.path, exc, self.doing) from None

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.conn.execute("COMMIT")
                return
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.Error as error:
            if self.conn.in_transaction:
                try:
                    self.conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise db_error(self.path, error, self.doing) from None
        if isinstance(exc, sqlite3.Error):
            raise db_error(self.path, exc, self.doing) from None


def open_store(path: Path, *, create: bool) -> Store | None:
    """Open (or, with ``create``, make) a league database; ``None`` when it does not exist and
    ``create`` is false.  Without ``create``, a database that this process cannot write (a
    read-only file or folder) is opened read-only without leaving files beside it, and a
    database of an older version is upgraded in a copy in memory (a read never writes).  With
    ``create``, an index file (``-shm``) left read-only by such a reader is made writable again.

    Raises:
        LeagueError: the file is not a league database, or cannot be opened; a
          :class:`StoreError` when it is damaged, or read-only and ``create`` is given.
    """
    if not create and not path.exists():
        return None
    if create and path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        raise StoreError(f"{path}: cannot write the database: it is read-only (make it writable, or give a copy with --db)")
    if create:
        _writable_sidecars(path)
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        if not create and not os.access(path, os.W_OK) and not _has_wal(path):
            # Nothing but the file to read: read it as it is, without making a read-only index file
            # (-shm) beside it that would keep a later run from writing.
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, isolation_level=None)
        else:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    except (sqlite3.Error, OSError) as exc:
        raise LeagueError(f"{path}: cannot open the database: {exc}") from None
    try:
        return _checked(conn, path, create)
    except sqlite3.OperationalError as exc:
        if create or "unable to open" not in str(exc) or os.access(path.parent, os.W_OK):
            raise
    # Reading a WAL database in a read-only folder: nothing can change it meanwhile.
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, isolation_level=None)
    return _checked(conn, path, create)


def _has_wal(path: Path) -> bool:
    """Whether the database has a write-ahead log with frames in it (commits not yet in the file)."""
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def _writable_sidecars(path: Path) -> None:
    """Make a database's ``-shm`` and ``-wal`` files writable when the database is.

    SQLite makes them with the database file's mode: a reader of a read-only database (mode
    0444) leaves a read-only ``-shm``, and once the database is writable again SQLite would
    still refuse to write it ("attempt to write a readonly database").  The run holds the
    league's lock, so no other run uses them; the ``-shm`` is an index SQLite rebuilds from the
    log, so one that cannot be made writable is removed."""
    if not path.exists() or not os.access(path, os.W_OK):
        return
    mode = path.stat().st_mode & 0o777
    for suffix in ("-shm", "-wal"):
        side = path.with_name(path.name + suffix)
        if not side.exists() or os.access(side, os.W_OK):
            continue
        try:
            side.chmod(mode | 0o600)
        except OSError:
            if suffix == "-shm":
                try:
                    side.unlink()
                except OSError:
                    pass


def _checked(conn: sqlite3.Connection, path: Path, create: bool) -> Store | None:
    """The store of ``conn`` once its pages and schema are checked (made or upgraded if need be)."""
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        _check_pages(conn, path)
        if version == 0 and _unmade(conn):
            if not create:
                conn.close()
                return None
            _make_schema(conn)
        elif version in (1, 2) and "matches" in _tables(conn):
            if create:
                _upgrade(conn, path, version)
            else:
                memory = sqlite3.connect(":memory:", isolation_level=None)
                conn.backup(memory)
                conn.close()
                conn = memory
                conn.execute("PRAGMA foreign_keys = ON")
                _upgrade(conn, path, version)
        elif version != SCHEMA_VERSION or "matches" not in _tables(conn):
            raise LeagueError(f"{path}: not a league database of this version (user_version {version})")
        _check_rows(conn, path)
        if create:
            conn.execute(IN_PLAY)
    except UnicodeDecodeError:  # SQLite's message quotes the damaged bytes of a page
        conn.close()
        raise StoreError(f"{path}: the database is damaged (its schema cannot be read); it was left as it is: restore it "
                         f"from a backup, or start again with another --db") from None
    except sqlite3.DatabaseError as exc:
        conn.close()
        if "unable to open" in str(exc) and not create:
            raise
        if any(word in str(exc) for word in ("malformed", "readonly", "full", "disk I/O error")):
            raise db_error(path, exc, "open") from None
        raise LeagueError(f"{path}: not a league database ({exc})") from None
    except LeagueError:
        conn.close()
        raise
    return Store(conn, path)


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _unmade(conn: sqlite3.Connection) -> bool:
    """Whether the database holds no league yet: no tables, or only empty tables of ours that
    an older version, killed while making its schema, left behind (it made them one by one)."""
    tables = _tables(conn)
    if not tables <= set(TABLES):
        return False
    return all(conn.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is None for t in tables)


def _check_pages(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a damaged database before anything reads or writes it (``PRAGMA quick_check``
    reads every page: milliseconds for a league's few megabytes)."""
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        first = " ".join(str(problems[0]).split())
        raise StoreError(f"{path}: the database is damaged ({first}); it was left as it is: restore it from a backup, "
                         f"or start again with another --db")


#: Bounds of what the standings compute with, per table and column: a value outside them (edited
#: by hand, or damaged) is refused.  Points and margins beyond 10¹⁵ are no score a game can give.
_BIG = 1e15
_CHECKS = {
    "seats": [
        ("place", "typeof(place) = 'integer' AND place >= 1 AND place <= length(bots) - length(replace(bots, ',', '')) + 1"),
        ("score", "typeof(score) IN ('integer', 'real') AND score >= 0 AND score <= 1"),
        ("points", f"typeof(points) = 'integer' AND abs(points) <= {_BIG:.0f}"),
        ("net", f"typeof(net) IN ('integer', 'real') AND abs(net) <= {_BIG:.0f}"),
        ("boards_won", "typeof(boards_won) = 'integer' AND boards_won >= 0"),
        ("games_won", "typeof(games_won) = 'integer' AND games_won >= 0"),
        ("seat", "typeof(seat) = 'integer' AND seat >= 0 AND seat <= length(bots) - length(replace(bots, ',', ''))"),
    ],
    "boards": [
        ("margin", f"typeof(margin) IN ('integer', 'real') AND abs(margin) <= {_BIG:.0f}"),
        ("board", "typeof(board) = 'integer' AND board >= 0"),
        ("seat", "typeof(seat) = 'integer' AND seat >= 0"),
    ],
    "matches": [
        (c, f"typeof({c}) = 'integer' AND {c} >= 0") for c in ("boards", "games", "deals")
    ],
    "draws": [("slot", "typeof(slot) = 'integer'"), ("round", "typeof(round) = 'integer' AND round >= 1")],
}


def _check_rows(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse rows of done tables whose values are not what this version writes (SQLite stores
    whatever it is given): a number that is not one, or out of bounds (a score of 1e308)."""
    for table, checks in _CHECKS.items():
        for column, ok in checks:
            if table == "draws":
                sql = f"SELECT round, slot, bots FROM draws WHERE NOT ({ok}) LIMIT 1"
            else:
                done = "" if table == "matches" else " JOIN matches USING (round, bots, leg)"
                sql = f"SELECT {KEY}, {column} FROM {table}{done} WHERE status = 'done' AND NOT coalesce({ok}, 0) LIMIT 1"
            row = conn.execute(sql).fetchone()
            if row is None:
                continue
            if table == "draws":
                raise StoreError(f"{path}: the draws of round {row[0]} hold values that are not what a run writes (edited by hand?): "
                                 f"delete that round (DELETE FROM draws WHERE round = {row[0]}) and the next run draws it again")
            key = key_of(row)
            raise StoreError(f"{path}: the {table} of {key.label} hold a {column} of {row[3]!r}, which no table can have (edited by "
                             f"hand?): delete that table (DELETE FROM matches WHERE round = {key.round} AND bots = '{key.text}' "
                             f"AND leg = {key.leg}) and the next run plays it again")


#: The tables of versions 1 and 2, whose rows :func:`_upgrade` carries over.
_OLD = ("matches", "boards", "faults")


def _upgrade(conn: sqlite3.Connection, path: Path, version: int) -> None:
    """Bring a database of version 1 or 2 (tables of two bots, ``bot_a < bot_b``) to this
    version in one transaction: every match becomes the table ``(0, 'a,b', 0)`` with a seat per
    bot (A's columns and B's), both bots' margins on every board (B's is −A's), its faults, and
    its attempts (version 1 had none).  Rows left without their match by hand are dropped.

    Raises:
        StoreError: the database cannot be written, or holds values no table can have (it is
          left as it was).
    """
    tables = _tables(conn)
    _check_old_rows(conn, path, tables)
    attempts = "attempts" if version >= 2 else "NULL"
    key = "0, bot_a || ',' || bot_b, 0"
    try:
        conn.execute("PRAGMA foreign_keys = OFF")  # the tables are rebuilt (SQLite's ALTER TABLE cannot change a key)
        conn.execute("BEGIN IMMEDIATE")
        for statement in SCHEMA.split(";"):
            if statement.strip() and ("CREATE TABLE meta" not in statement and "CREATE TABLE bots" not in statement):
                conn.execute(statement.replace("CREATE TABLE ", "CREATE TABLE new_", 1))
        conn.execute(f"INSERT INTO new_matches SELECT {key}, status, error, winner, boards, games, deals, log, result, "
                     f"started, finished, seconds, {attempts} FROM matches")
        for seat, bot, score, points, net, boards, games, place in (
            (0, "bot_a", "score_a", "points_a", "net_a", "boards_a", "games_a", "CASE WHEN score_a < 0.5 THEN 2 ELSE 1 END"),
            (1, "bot_b", "1.0 - score_a", "points_b", "net_b", "boards_b", "games_b", "CASE WHEN score_a > 0.5 THEN 2 ELSE 1 END"),
        ):
            conn.execute(f"INSERT INTO new_seats SELECT {key}, {seat}, {bot}, {place}, {score}, {points}, {net}, {boards}, {games} "
                         f"FROM matches WHERE status = 'done'")
        if "boards" in tables:
            for seat, margin in ((0, "margin_a"), (1, "-margin_a")):
                conn.execute(f"INSERT INTO new_boards SELECT {key}, board, {seat}, {margin} FROM boards "
                             f"WHERE EXISTS (SELECT 1 FROM matches m WHERE m.bot_a = boards.bot_a AND m.bot_b = boards.bot_b "
                             f"AND m.status = 'done')")
        if "faults" in tables:
            conn.execute(f"INSERT INTO new_faults SELECT {key}, n, bot, kind, game, deal, seat, detail, line FROM faults "
                         f"WHERE EXISTS (SELECT 1 FROM matches m WHERE m.bot_a = faults.bot_a AND m.bot_b = faults.bot_b "
                         f"AND m.status = 'done')")
        for old in ("faults", "boards", "matches"):
            if old in tables:
                conn.execute(f"DROP TABLE {old}")
        for new in TABLES[2:]:
            conn.execute(f"ALTER TABLE new_{new} RENAME TO {new}")
        if conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
            raise sqlite3.IntegrityError("rows without their match after the upgrade")
        _check_rows(conn, path)  # values no table can have: refused before anything is changed
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except StoreError:
        conn.execute("ROLLBACK")
        raise
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if "no such column" in str(exc) or "IntegrityError" in type(exc).__name__:
            raise LeagueError(f"{path}: not a league database of version {version} ({exc})") from None
        raise db_error(path, exc, "upgrade") from None
    finally:
        conn.execute("PRAGMA foreign_keys = ON")


def _check_old_rows(conn: sqlite3.Connection, path: Path, tables: set[str]) -> None:
    """Refuse, before upgrading, done rows of version 1 or 2 whose numbers are not numbers."""
    columns = {"matches": ("score_a", "points_a", "points_b", "net_a", "net_b", "boards", "boards_a", "boards_b", "games",
                           "games_a", "games_b", "deals"),
               "boards": ("board", "margin_a")}
    for table, cols in columns.items():
        if table not in tables:
            continue
        where = " OR ".join(f"typeof({c}) NOT IN ('integer', 'real')" for c in cols)
        done = " AND status = 'done'" if table == "matches" else ""
        try:
            row = conn.execute(f"SELECT bot_a, bot_b FROM {table} WHERE ({where}){done} LIMIT 1").fetchone()
        except sqlite3.OperationalError as exc:
            raise LeagueError(f"{path}: not a league database of this version ({exc})") from None
        if row is not None:
            raise StoreError(f"{path}: the {table} of {row[0]} vs {row[1]} hold values that are not numbers (edited by hand?): "
                             f"delete that match (DELETE FROM matches WHERE bot_a = '{row[0]}' AND bot_b = '{row[1]}') "
                             f"and the next run plays it again")


def _make_schema(conn: sqlite3.Connection) -> None:
    """Make every table and set ``user_version`` in one transaction: a process killed at any
    moment leaves either the whole schema or an empty database, which the next run makes again.
    Empty tables an older version left (it made them one by one) are made again.
    (``executescript`` would commit before it starts and after every statement.)"""
    conn.execute("PRAGMA journal_mode = WAL")  # cannot change inside a transaction; harmless alone
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in reversed(TABLES):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def dump(path: Path, *, timings: bool = False) -> dict[str, list[tuple]]:
    """Every table's rows in key order, without the timing fields unless ``timings``: two runs of
    a league with deterministic bots give equal dumps."""
    conn = sqlite3.connect(path)
    try:
        out: dict[str, list[tuple]] = {}
        for table in TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            keep = [c for c in cols if timings or c not in TIMING_COLUMNS]
            rows = conn.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY {', '.join(str(i + 1) for i in range(min(len(keep), 5)))}").fetchall()
            if table == "meta" and not timings:
                rows = [r for r in rows if r[0] not in TIMING_META]
            out[table] = rows
        return out
    finally:
        conn.close()


def _first_difference(old: Any, new: Any, prefix: str = "") -> tuple[str, Any, Any] | None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            diff = _first_difference(old.get(key), new.get(key), f"{prefix}{key}" if not prefix else f"{prefix}.{key}")
            if diff is not None:
                return diff
        return None
    if old != new:
        return (_setting_key(prefix), old, new)
    return None


_SETTING_KEYS = {"variant": "game.variant", "players": "game.players", "bots": "game.bots", "deals": "game.deals", "games": "game.games"}


def _setting_key(key: str) -> str:
    if key.startswith("options."):
        return "game." + key
    return _SETTING_KEYS.get(key, key)


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return "on" if value else "off"
    return repr(value) if isinstance(value, str) else json.dumps(value) if isinstance(value, (list, dict)) else str(value)
