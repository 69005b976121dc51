"""The ladder's database: the league's store (:mod:`tournaments.store`), and the ladder's tables.

One SQLite file holds everything, so a host copies it as it is.  Beside the league's tables
(``matches``, ``seats``, ``boards``, ``faults`` hold the ladder's finished tables, keyed by
``round`` = the ladder's table number, the bots in alphabetical order and ``leg`` 0;
``in_play`` the tables being played, since when, and by which run), the ladder keeps:

``ladder_entries(name, seq, bot, origin, added, checked, active_from, retire_asked, retired_from, suspended_from, suspended_why)``
    every bot that entered, in the order it joined (``seq``): what runs (``bot``: its command
    as given, resolved, its folder and environment, as JSON), where it came from (``file`` or
    ``add``), when it was added (a timing field), the check it passed (``checked``), and the
    table numbers from which it plays (``active_from``, set by the host at the first table it
    chooses after the entry appears), from which it no longer does (``retired_from``, after
    ``ladder retire`` asked for it at ``retire_asked``; ``suspended_from``, after it faulted at
    too many tables in a row, with why).
``ladder_tables(number, bots, deal_set)``
    every table chosen: its bots in seating order and its deal set (the k-th table of the same
    bots plays deal set k).  A table is chosen once, in one transaction with its ``in_play``
    row; a run killed before it stored the result plays the same table again.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tournaments.config import BotEntry
from tournaments.schedule import TableKey
from tournaments.store import TIMING_COLUMNS, TIMING_META, Store, StoreError, db_error
from tournaments.store import dump as league_dump

LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_entries (
    name           TEXT PRIMARY KEY,
    seq            INTEGER NOT NULL UNIQUE,
    bot            TEXT NOT NULL,
    origin         TEXT NOT NULL CHECK (origin IN ('file', 'add')),
    added          REAL,
    checked        TEXT,
    active_from    INTEGER,
    retire_asked   REAL,
    retired_from   INTEGER,
    suspended_from INTEGER,
    suspended_why  TEXT
);
CREATE TABLE IF NOT EXISTS ladder_tables (
    number   INTEGER PRIMARY KEY,
    bots     TEXT NOT NULL,
    deal_set INTEGER NOT NULL
);
"""
LADDER_TABLES = ("ladder_entries", "ladder_tables")
#: Columns of the ladder's tables that say when, not what.
LADDER_TIMING = frozenset(("added", "retire_asked"))


@dataclass(frozen=True)
class Entry:
    """A bot of the ladder, as the database holds it."""

    name: str
    seq: int
    bot: BotEntry
    origin: str
    checked: str | None
    active_from: int | None
    retire_asked: float | None
    retired_from: int | None
    suspended_from: int | None
    suspended_why: str | None

    def plays_at(self, number: int) -> bool:
        """Whether the matchmaking may seat it at table ``number``."""
        return (self.active_from is not None and self.active_from <= number
                and (self.retired_from is None or number < self.retired_from)
                and (self.suspended_from is None or number < self.suspended_from))

    @property
    def state(self) -> str:
        """``waiting`` (for the host to take it in), ``active``, ``retired`` or ``suspended``."""
        if self.retired_from is not None:
            return "retired"
        if self.suspended_from is not None:
            return "suspended"
        if self.retire_asked is not None:
            return "retiring"
        return "active" if self.active_from is not None else "waiting"


@dataclass(frozen=True)
class Chosen:
    """A table the host chose: its number, its bots in seating order, its deal set."""

    number: int
    bots: tuple[str, ...]
    deal_set: int

    @property
    def key(self) -> TableKey:
        """Its key in the league's tables: ``round`` is the table number."""
        return TableKey.of(self.bots, self.number)


def ensure_schema(store: Store) -> None:
    """Make the ladder's tables beside the league's (nothing when they are there)."""
    try:
        with store.transaction("write"):
            for statement in LADDER_SCHEMA.split(";"):
                if statement.strip():
                    store.conn.execute(statement)
    except sqlite3.Error as exc:
        raise db_error(store.path, exc, "write") from None


def _bot_json(bot: BotEntry) -> str:
    return json.dumps({"command": bot.command, "cwd": bot.cwd, "env": dict(sorted(bot.env.items())), "argv": bot.argv,
                       "workdir": str(bot.workdir), "sandbox": bot.sandbox}, sort_keys=True)


def _bot_of(name: str, text: str, path: Path) -> BotEntry:
    try:
        d = json.loads(text)
        return BotEntry(name, d["command"], d["cwd"], dict(d["env"]), list(d["argv"]), Path(d["workdir"]), bool(d["sandbox"]))
    except (ValueError, KeyError, TypeError):
        raise StoreError(f"{path}: the entry {name!r} cannot be read (edited by hand?): retire it and add it again "
                         f"under a new name") from None


_ENTRY_COLUMNS = "name, seq, bot, origin, checked, active_from, retire_asked, retired_from, suspended_from, suspended_why"


def entries(store: Store) -> list[Entry]:
    """Every entry, in the order they joined (a database without the ladder's tables: none)."""
    try:
        rows = store.conn.execute(f"SELECT {_ENTRY_COLUMNS} FROM ladder_entries ORDER BY seq").fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    return [Entry(r[0], r[1], _bot_of(r[0], r[2], store.path), *r[3:]) for r in rows]


def enter(store: Store, bot: BotEntry, origin: str, checked: str | None) -> None:
    """Add ``bot`` as the newest entry (the host takes it in at the next table it chooses).

    Raises:
        StoreError: the name is taken (by a bot still there or gone), or the database cannot be written.
    """
    with store.transaction("write"):
        if store.conn.execute("SELECT 1 FROM ladder_entries WHERE name = ?", (bot.name,)).fetchone() is not None:
            raise StoreError(f"{store.path}: the ladder has an entry named {bot.name!r} already")
        seq = store.conn.execute("SELECT coalesce(MAX(seq), -1) + 1 FROM ladder_entries").fetchone()[0]
        store.conn.execute("INSERT INTO ladder_entries (name, seq, bot, origin, added, checked) VALUES (?, ?, ?, ?, ?, ?)",
                           (bot.name, seq, _bot_json(bot), origin, round(time.time(), 3), checked))


def ask_retire(store: Store, name: str) -> None:
    """Ask the host to retire ``name`` at the next table it chooses."""
    with store.transaction("write"):
        store.conn.execute("UPDATE ladder_entries SET retire_asked = ? WHERE name = ? AND retire_asked IS NULL",
                           (round(time.time(), 3), name))


def take_in(store: Store, number: int) -> list[str]:
    """What the host does before it chooses table ``number``: entries waiting are active from
    it, entries asked to retire are retired from it.  Returns the names that changed.  (One read
    when nothing changed: the host asks before every table.)"""
    pending = store.conn.execute("SELECT 1 FROM ladder_entries WHERE (active_from IS NULL OR retire_asked IS NOT NULL) "
                                 "AND retired_from IS NULL LIMIT 1").fetchone()
    if pending is None:
        return []
    with store.transaction("write"):
        new = [r[0] for r in store.conn.execute("SELECT name FROM ladder_entries WHERE active_from IS NULL AND retired_from IS NULL "
                                                "ORDER BY seq")]
        gone = [r[0] for r in store.conn.execute("SELECT name FROM ladder_entries WHERE retire_asked IS NOT NULL "
                                                 "AND retired_from IS NULL ORDER BY seq")]
        store.conn.execute("UPDATE ladder_entries SET active_from = ? WHERE active_from IS NULL AND retire_asked IS NULL",
                           (number,))
        store.conn.execute("UPDATE ladder_entries SET retired_from = ? WHERE retire_asked IS NOT NULL AND retired_from IS NULL",
                           (number,))
    return new + gone


def suspend(store: Store, name: str, number: int, why: str) -> None:
    with store.transaction("write"):
        store.conn.execute("UPDATE ladder_entries SET suspended_from = ?, suspended_why = ? WHERE name = ? AND suspended_from IS NULL",
                           (number, why, name))


def chosen(store: Store) -> dict[int, Chosen]:
    """Every table chosen so far, by number."""
    try:
        rows = store.conn.execute("SELECT number, bots, deal_set FROM ladder_tables ORDER BY number").fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise
    return {n: Chosen(n, tuple(bots.split(",")), k) for n, bots, k in rows}


def choose(store: Store, table: Chosen, run: str) -> None:
    """Store a table just chosen, in play by ``run`` from now (one transaction)."""
    key = table.key
    with store.transaction("write"):
        store.conn.execute("INSERT INTO ladder_tables VALUES (?, ?, ?)", (table.number, ",".join(table.bots), table.deal_set))
        store.conn.execute("INSERT OR REPLACE INTO in_play VALUES (?, ?, ?, ?, ?)", (key.round, key.text, key.leg, time.time(), run))


def dump(path: Path, *, timings: bool = False) -> dict[str, list[tuple]]:
    """The league's tables (:func:`tournaments.store.dump`) and the ladder's, in key order,
    without the timing fields unless ``timings``: two hosts of the same ladder with deterministic
    bots give equal dumps, killed or not."""
    out = league_dump(path, timings=timings)
    conn = sqlite3.connect(path)
    try:
        for table in LADDER_TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            keep = [c for c in cols if timings or (c not in TIMING_COLUMNS and c not in LADDER_TIMING)]
            out[table] = conn.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY 1").fetchall()
        if not timings:
            out["meta"] = [r for r in out["meta"] if r[0] not in TIMING_META]
        return out
    finally:
        conn.close()


def meta_json(store: Store, key: str) -> Any:
    text = store.meta(key)
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return None
