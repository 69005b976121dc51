"""League results in SQLite (standard library :mod:`sqlite3`): one transaction per finished match.

Tables (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`):

``meta(key, value)``
    ``settings``: the league settings the results were played under, as canonical JSON
    (:meth:`League.settings`); ``created``: when the database was made (a timing field);
    ``cut_runs``: runs in a row that ended before storing any match (:meth:`Store.cut_runs`).
``bots(name, identity)``
    each bot's command, cwd and env as written in the league file (JSON), fixed once it has
    a stored match.
``matches(bot_a, bot_b, ...)``
    one row per finished pairing, keyed by the two names (``bot_a < bot_b``).  ``status`` is
    ``done`` (a result) or ``failed`` (no result: ``error`` says why, ``attempts`` counts the
    matches cut short in a row; the pairing is played again by the next run until
    :data:`MAX_ATTEMPTS`).  A done row holds bot A's score (1, ½, 0) and the winner, each
    side's written points and net points (points × the game's sense), the boards (paired
    units) and games won by each, the deal plays, the log file (relative to the database's
    directory), the whole result (:class:`referee.results.MatchJson`) as JSON, and the timing fields
    ``started``, ``finished`` (Unix time) and ``seconds``.
``boards(bot_a, bot_b, board, margin_a)``
    bot A's paired margin on every board of a done match (the input of the ratings).
``faults(bot_a, bot_b, n, bot, kind, game, deal, seat, detail, line)``
    every fault of a done match, in order.

A match is written only when it is complete, in one transaction, so a crash or ``kill -9``
leaves either the whole match or nothing.  Rows never depend on the order matches finished
in: two runs of the same league with deterministic bots give equal tables apart from the
timing fields (:data:`TIMING_COLUMNS`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import msgspec

from referee.results import MatchRecord
from tournaments.config import League, LeagueError

SCHEMA_VERSION = 2
TIMING_COLUMNS = frozenset(("started", "finished", "seconds"))
TIMING_META = frozenset(("created", "cut_runs"))
TABLES = ("meta", "bots", "matches", "boards", "faults")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name     TEXT PRIMARY KEY,
    identity TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    bot_a       TEXT NOT NULL,
    bot_b       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    error       TEXT,
    score_a     REAL,
    winner      TEXT,
    points_a    INTEGER,
    points_b    INTEGER,
    net_a       REAL,
    net_b       REAL,
    boards      INTEGER,
    boards_a    INTEGER,
    boards_b    INTEGER,
    games       INTEGER,
    games_a     INTEGER,
    games_b     INTEGER,
    deals       INTEGER,
    log         TEXT,
    result      TEXT,
    started     REAL,
    finished    REAL,
    seconds     REAL,
    attempts    INTEGER,
    PRIMARY KEY (bot_a, bot_b),
    CHECK (bot_a < bot_b)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS boards (
    bot_a    TEXT NOT NULL,
    bot_b    TEXT NOT NULL,
    board    INTEGER NOT NULL,
    margin_a REAL NOT NULL,
    PRIMARY KEY (bot_a, bot_b, board),
    FOREIGN KEY (bot_a, bot_b) REFERENCES matches ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS faults (
    bot_a  TEXT NOT NULL,
    bot_b  TEXT NOT NULL,
    n      INTEGER NOT NULL,
    bot    TEXT NOT NULL,
    kind   TEXT NOT NULL,
    game   INTEGER,
    deal   INTEGER,
    seat   INTEGER,
    detail TEXT,
    line   TEXT,
    PRIMARY KEY (bot_a, bot_b, n),
    FOREIGN KEY (bot_a, bot_b) REFERENCES matches ON DELETE CASCADE
) WITHOUT ROWID;
"""


@dataclass
class MatchRow:
    """A stored match, as the standings and the status read it."""

    bot_a: str
    bot_b: str
    status: str
    error: str | None
    score_a: float | None
    points_a: int | None
    points_b: int | None
    net_a: float | None
    net_b: float | None
    log: str | None
    attempts: int | None = None

    @property
    def pair(self) -> tuple[str, str]:
        return (self.bot_a, self.bot_b)


@dataclass
class Finished:
    """A match the runner finished: a result, or a failure."""

    bot_a: str
    bot_b: str
    started: float
    finished: float
    log: str | None
    record: MatchRecord | None = None  # the match process's: the whole result and bot A's margin per board
    error: str | None = None
    counts: bool = True  # a failed attempt that counts towards MAX_ATTEMPTS (not a bot that could not start)


#: A pairing whose match was cut short (its process crashed, hung or was stopped) this many times
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
    elif "malformed" in text or "not a database" in text:
        why = f"it is damaged ({text}); restore it from a backup, or start again with another --db"
    else:
        why = text
    return StoreError(f"{path}: cannot {doing} the database: {why}")


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
        stored results (a database without finished matches takes new settings).  With
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
            diff = _first_difference(old, settings)
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

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def bots_with_results(self) -> set[str]:
        rows = self.conn.execute("SELECT bot_a, bot_b FROM matches WHERE status = 'done'")
        return {name for pair in rows for name in pair}

    # -- matches ---------------------------------------------------------------------------

    def matches(self) -> list[MatchRow]:
        rows = self.conn.execute(
            "SELECT bot_a, bot_b, status, error, score_a, points_a, points_b, net_a, net_b, log, attempts FROM matches ORDER BY bot_a, bot_b"
        )
        return [MatchRow(*row) for row in rows]

    def given_up(self) -> dict[tuple[str, str], str]:
        """Pairings cut short :data:`MAX_ATTEMPTS` times in a row, with the last reason: later
        runs leave them alone (``league run --retry`` plays them again)."""
        rows = self.conn.execute("SELECT bot_a, bot_b, error FROM matches WHERE status = 'failed' AND attempts >= ?", (MAX_ATTEMPTS,))
        return {(a, b): error or "" for a, b, error in rows}

    def retry(self) -> None:
        """Forget the failed attempts: every failed pairing is played again."""
        with self.transaction("write"):
            self.conn.execute("DELETE FROM matches WHERE status = 'failed'")

    def begin_run(self) -> None:
        """Count this run as cut short until it stores a match or ends (see :meth:`cut_runs`)."""
        with self.transaction("write"):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('cut_runs', ?)", (str(self.cut_runs() + 1),))

    def end_run(self) -> None:
        with self.transaction("write"):
            self.conn.execute("DELETE FROM meta WHERE key = 'cut_runs'")

    def cut_runs(self) -> int:
        """Runs in a row that were interrupted or killed before they stored any match."""
        value = self.meta("cut_runs")
        return int(value) if value is not None and value.isdigit() else 0

    def longest_match(self) -> float | None:
        """Seconds the longest stored match took (``None`` before the first)."""
        return self.conn.execute("SELECT MAX(seconds) FROM matches WHERE status = 'done'").fetchone()[0]

    def done(self) -> set[tuple[str, str]]:
        return {(a, b) for a, b in self.conn.execute("SELECT bot_a, bot_b FROM matches WHERE status = 'done'")}

    def boards(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[float]]:
        wanted = set(pairs)
        out: dict[tuple[str, str], list[float]] = {}
        for a, b, margin in self.conn.execute(
            "SELECT bot_a, bot_b, margin_a FROM boards JOIN matches USING (bot_a, bot_b) WHERE status = 'done' ORDER BY bot_a, bot_b, board"
        ):
            if (a, b) in wanted:
                out.setdefault((a, b), []).append(margin)
        return out

    def fault_counts(self, pairs: Iterable[tuple[str, str]]) -> dict[str, dict[str, int]]:
        """bot -> fault kind -> count, over the done matches of ``pairs``."""
        wanted = set(pairs)
        out: dict[str, dict[str, int]] = {}
        for a, b, bot, kind, count in self.conn.execute(
            "SELECT bot_a, bot_b, bot, kind, COUNT(*) FROM faults JOIN matches USING (bot_a, bot_b) "
            "WHERE status = 'done' GROUP BY bot_a, bot_b, bot, kind"
        ):
            if (a, b) in wanted:
                per = out.setdefault(bot, {})
                per[kind] = per.get(kind, 0) + count
        return out

    def record(self, m: Finished) -> None:
        """Store a finished match (replacing a failed attempt), in one transaction.

        Raises:
            StoreError: the database cannot be written (nothing of this match is stored).
        """
        key = (m.bot_a, m.bot_b)
        timing = (m.started, m.finished, round(m.finished - m.started, 3))
        with self.transaction("write"):
            row = self.conn.execute("SELECT attempts FROM matches WHERE bot_a = ? AND bot_b = ? AND status = 'failed'", key).fetchone()
            # Boards and faults too: rows deleted by hand (with foreign keys off) may have left
            # them behind, and the new ones would collide with them.
            for table in ("faults", "boards", "matches"):
                self.conn.execute(f"DELETE FROM {table} WHERE bot_a = ? AND bot_b = ?", key)
            self.conn.execute("DELETE FROM meta WHERE key = 'cut_runs'")  # this run got somewhere
            if m.record is None:
                attempts = (row[0] or 0 if row else 0) + (1 if m.counts else 0)
                self.conn.execute(
                    "INSERT INTO matches (bot_a, bot_b, status, error, log, started, finished, seconds, attempts) "
                    "VALUES (?, ?, 'failed', ?, ?, ?, ?, ?, ?)",
                    (*key, m.error, m.log, *timing, attempts),
                )
                return
            result = m.record.result
            if result.names != [m.bot_a, m.bot_b]:
                raise ValueError(f"the result is for {result.names}, not {list(key)}")
            a, b = result.totals
            boards = m.record.boards
            # A league match goes to the bot ahead on the paired margin, significant or not: match
            # points count every match, and the ratings' intervals say how sure the table is.
            winner = result.ahead
            score_a = 0.5 if winner is None else 1.0 if winner == m.bot_a else 0.0
            self.conn.execute(
                f"INSERT INTO matches VALUES (?, ?, 'done', NULL, {', '.join('?' * 18)}, NULL)",
                (*key, score_a, winner, a.points, b.points, a.net, b.net,
                 len(boards), sum(1 for x in boards if x > 0), sum(1 for x in boards if x < 0),
                 len(result.game_results), a.games_won, b.games_won, len(result.deals), m.log,
                 json.dumps(msgspec.to_builtins(result), sort_keys=True, ensure_ascii=False), *timing),
            )
            self.conn.executemany("INSERT INTO boards VALUES (?, ?, ?, ?)", [(*key, i, x) for i, x in enumerate(boards)])
            self.conn.executemany(
                "INSERT INTO faults VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, n, f.bot, f.kind, f.game, f.deal, f.seat, f.detail, f.line) for n, f in enumerate(result.faults)],
            )

    def transaction(self, doing: str = "write") -> _Transaction:
        """``with store.transaction():`` commits at the end of the block or rolls back; an SQLite
        error becomes a one-line :class:`StoreError`."""
        return _Transaction(self.conn, self.path, doing)


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
    ``create`` is false.  Without ``create``, a database in a read-only folder is opened
    read-only (SQLite cannot make its WAL index there).

    Raises:
        LeagueError: the file is not a league database, or cannot be opened; a
          :class:`StoreError` when it is damaged, or read-only and ``create`` is given.
    """
    if not create and not path.exists():
        return None
    if create and path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        raise StoreError(f"{path}: cannot write the database: it is read-only (make it writable, or give a copy with --db)")
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
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


def _checked(conn: sqlite3.Connection, path: Path, create: bool) -> Store | None:
    """The store of ``conn`` once its pages and schema are checked (made or upgraded if need be)."""
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        _check_pages(conn, path)
        if version == SCHEMA_VERSION:
            _check_rows(conn, path)
        if version == 0 and _unmade(conn):
            if not create:
                conn.close()
                return None
            _make_schema(conn)
        elif version == 1 and "matches" in _tables(conn):
            _upgrade_from_1(conn, path)
        elif version != SCHEMA_VERSION or "matches" not in _tables(conn):
            raise LeagueError(f"{path}: not a league database of this version (user_version {version})")
    except UnicodeDecodeError:  # SQLite's message quotes the damaged bytes of a page
        conn.close()
        raise StoreError(f"{path}: the database is damaged (its schema cannot be read); it was left as it is: restore it "
                         f"from a backup, or start again with another --db") from None
    except sqlite3.DatabaseError as exc:
        conn.close()
        if "unable to open" in str(exc) and not create:
            raise
        if "malformed" in str(exc) or "readonly" in str(exc) or "full" in str(exc):
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


#: Columns the standings compute with: a value of another type (edited by hand) is refused.
_NUMBERS = {
    "matches": ("score_a", "points_a", "points_b", "net_a", "net_b", "boards", "boards_a", "boards_b", "games",
                "games_a", "games_b", "deals"),
    "boards": ("board", "margin_a"),
}


def _check_rows(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse done rows whose numbers are not numbers (SQLite stores whatever it is given)."""
    for table, columns in _NUMBERS.items():
        where = " OR ".join(f"typeof({c}) NOT IN ('integer', 'real')" for c in columns)
        done = " AND status = 'done'" if table == "matches" else ""
        row = conn.execute(f"SELECT bot_a, bot_b FROM {table} WHERE ({where}){done} LIMIT 1").fetchone()
        if row is not None:
            raise StoreError(f"{path}: the {table} of {row[0]} vs {row[1]} hold values that are not numbers (edited by hand?): "
                             f"delete that match (DELETE FROM matches WHERE bot_a = '{row[0]}' AND bot_b = '{row[1]}') "
                             f"and the next run plays it again")


def _upgrade_from_1(conn: sqlite3.Connection, path: Path) -> None:
    """Version 1 had no ``matches.attempts`` (failed pairings were played again for ever)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ALTER TABLE matches ADD COLUMN attempts INTEGER")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise db_error(path, exc, "upgrade") from None


def _make_schema(conn: sqlite3.Connection) -> None:
    """Make every table and set ``user_version`` in one transaction: a process killed at any
    moment leaves either the whole schema or an empty database, which the next run makes again.
    (``executescript`` would commit before it starts and after every statement.)"""
    conn.execute("PRAGMA journal_mode = WAL")  # cannot change inside a transaction; harmless alone
    conn.execute("BEGIN IMMEDIATE")
    try:
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
            rows = conn.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY 1, 2" + (", 3" if len(keep) > 2 else "")).fetchall()
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


_SETTING_KEYS = {"variant": "game.variant", "players": "game.players", "deals": "game.deals", "games": "game.games"}


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
