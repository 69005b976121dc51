"""The ladder host's overhead per table at 50, 200 and 1,000 bots: ``python -m bench.ladder_host``.

Everything a host does for one table besides playing it, on its own code path
(:class:`tournaments.ladder.host.Host`), with no process started: the **choice** (reading the
entries for adds and retires, the suspension rule, feeding the ratings the outcomes the choice may
see, :meth:`Matchmaker.choose`, storing the chosen table with its ``in_play`` row), the
**storage** of the finished table (:meth:`Store.record` of a whole result, one transaction, and
the host's own bookkeeping) and the **rating refit** (the time spent in the ratings: the choice's
``Ratings.fit``, which folds the new outcomes into the incremental solve; the look for
certification of ``--until certified``, ``Ratings.certified``, and any exact solve it calls
for), each in CPU time
(what grows with the field), and the wall time of the whole, which adds the waits for the disk at
every commit (the same at every size; a shared disk makes it noisy).  The exact solve that
replaces the incremental one every ``max(REFIT_EVERY, k)`` outcomes is timed once per field and
printed beside, amortised (it falls in none of the measured tables at 1,000 bots), and so is the
refit's mean (over the tables after the first, which folds in the warm-up's outcomes), which
counts what the median leaves out: the ratings' pending updates applied every ``FOLD_BLOCK``
tables, and an exact solve the look for certification calls for when a mark is near its threshold.

Each field is a fresh database of ``N`` entries that has played ``floor × N / 2`` tables already
(every bot past the matchmaking's floor), results drawn in-process: bots of known strengths
(spread 10 points a deal) and 20 points of noise a deal, each table a stub result of 8 deals
(:func:`stub_record`, the shape a match process hands the host).  Then ``--tables`` tables are
chosen and stored one after the other, and the median of each part is printed, with its ratio to
the smallest field: flat (or logarithmic) is what the ladder promises.  Nothing is asserted.

``--cluster ADDRESS`` (``local:2``: a local Dask cluster of two workers) measures the same fields
again through the host's cluster path, :meth:`Host.play` with
:func:`tournaments.ladder.host.on_cluster`: each table a task submitted to the cluster that plays
nothing (:func:`stub_task`, in :func:`tournaments.cluster.play_match`'s place, returns the stub
result drawn by the host), its result awaited in a thread, its log written and stored; the
"task + storage" column is the host's CPU for that (the Dask client's thread included), the wall
time adds the task's round trip.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import trio

FIELDS = (50, 200, 1000)
DEALS = 8  # deals a stub table plays (4 a seating, two seatings: a sport table of the tests)


def stub_record(names: list[str], margin: float, deals: int = DEALS) -> Any:
    """A whole result of a table of two bots (:class:`tournaments.worker.TableRecord`) as a match
    process would hand it, with ``names[0]``'s paired margin ``margin`` on every board, built
    in-process (the deals themselves are not played)."""
    from tournaments.wire import TableRecord

    boards = deals // 2
    mean = {"mean": margin, "ci95": None, "n": boards, "sd": 0.0, "ci": None, "confidence": 0.95}
    other = {**mean, "mean": -margin}
    first = 1 if margin >= 0 else 2
    standing = [{"bot": n, "place": p, "places": [p, p], "margin": m, "los": None, "classes": [], "score": None, "elo": None,
                 "elo_ci": None} for n, p, m in ((names[0], first, mean), (names[1], 3 - first, other))]
    deal = {"game": 0, "orientation": 0, "deal": 0, "stream": 0, "leader": 0, "leader_bot": names[0], "lead_tile": None,
            "end": "domino", "by": 0, "by_bot": names[0], "wrote": [10, 0], "totals": [10, 0], "points": [10, 0], "net": [10, 0],
            "won_by": [0], "notes": []}
    result = {
        "variant": "sport", "players": 4, "options": {}, "seed": 1, "deals_file": None, "deals_per_game": deals // 2, "games": None,
        "sense": 1, "unit": "deal", "bots": [{"name": n, "command": ["bot"], "hello": None} for n in names],
        "orientations": [[0, 1, 0, 1], [1, 0, 1, 0]], "deals": [deal] * deals, "game_results": [],
        "totals": [{"bot": n, "points": 100, "net": 100.0, "games_won": 0, "games_drawn": 0, "games_lost": 0, "deals_won": 1,
                    "faults": {}} for n in names],
        "margin": {names[0]: {"paired": mean, "unpaired": mean}}, "faults": [], "confidence": 0.95,
        "ranking": {"rule": "paired margin", "class_labels": [], "standings": standing},
        "ahead": names[0] if margin > 0 else names[1] if margin < 0 else None, "significant": False,
        "winner": None, "sprt": None, "stopped_by": None, "interrupted": False,
    }
    return msgspec.convert({"result": result, "boards": [margin] * boards, "margins": [[margin, -margin]] * boards}, TableRecord)


class Field:
    """A ladder of ``n`` entries in a fresh database, and the host that runs it (no process)."""

    def __init__(self, n: int, folder: Path, seed: int = 1) -> None:
        from tournaments.config import BotEntry
        from tournaments.ladder import store as LS
        from tournaments.ladder.config import load_ladder
        from tournaments.ladder.host import Host, QuietHost
        from tournaments.store import open_store

        path = folder / "ladder.toml"
        path.write_text(f"seed = {seed}\nsandbox = false\n[game]\nvariant = \"sport\"\ndeals = 4\n[ladder]\nfloor = 4\n", encoding="utf-8")
        self.ladder = load_ladder(path)
        store = open_store(self.ladder.league.db_path, create=True)
        assert store is not None
        self.store = store
        LS.ensure_schema(store)
        rng = random.Random(f"bench-ladder-host:{n}:{seed}")
        self.strength = {f"bot{i:04d}": rng.gauss(0, 10) for i in range(n)}
        for name in self.strength:
            LS.enter(store, BotEntry(name, ["bot"], None, {}, [sys.executable, "-c", "pass"], folder, False), "add", "bench")
        LS.take_in(store, 0)
        self.rng = rng
        self.host = Host(self.ladder, store, QuietHost(), max_deals=None, until_certified=True)
        self.n = n

    def result(self, table) -> Any:
        a, b = table.key.bots
        noise = self.rng.gauss(0, 20 / (DEALS / 2) ** 0.5)  # 20 points a deal, over the table's boards
        return stub_record([a, b], round((self.strength[a] - self.strength[b]) / 2 + noise, 2))

    def store_table(self, table, record) -> None:
        from tournaments.ladder.status import outcome_of
        from tournaments.store import Finished

        now = time.time()
        self.store.record(Finished(table.key, now, now, None, record))
        self.host._settle(table, outcome_of(table, record.margins, len(record.result.deals)), set(), len(record.result.deals))

    def warm(self, floor: int) -> None:
        """``floor × n / 2`` tables already played: every bot at ``floor`` tables (stored as the host stores them)."""
        from tournaments.ladder import store as LS
        from tournaments.ladder.store import Chosen

        names = list(self.strength)
        number = 0
        for r in range(1, floor // 2 + 1):
            for i in range(self.n):
                seated = tuple(sorted((names[i], names[(i + r) % self.n])))
                table = Chosen(number, seated, self.host.together[seated])
                LS.choose(self.store, table, self.host.run_id)
                self.host.chosen[number] = table
                self.host.together[seated] += 1
                self.host.played.update(seated)
                for b in seated:
                    self.host.last_seated[b] = number
                self.store_table(table, self.result(table))
                number += 1
        self.host.refresh()

    def close(self) -> None:
        self.store.close()


class _Spent(list[float]):
    """CPU seconds of the calls timed, the outermost only (a timed call inside another is in it)."""

    depth = 0


def _timed_function(inner: Callable[..., Any], spent: _Spent) -> Callable[..., Any]:
    """``inner``, counting the CPU time each call takes into ``spent``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        spent.depth += 1
        t0 = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent.depth -= 1
            if not spent.depth:
                spent.append(time.process_time() - t0)

    return wrapper


def _timed(target: Any, name: str, spent: _Spent) -> None:
    """Count the time ``target.name(...)`` takes into ``spent``."""
    setattr(target, name, _timed_function(getattr(target, name), spent))


def stub_task(record: Any, job: Any, stall: float) -> dict[str, Any]:
    """What :func:`tournaments.cluster.play_match` returns, for a task that plays nothing: ``record``
    (drawn by the host), a one-line log, no stderr.  Bound with :func:`functools.partial` in its place."""
    return {"record": record, "error": None, "kind": None, "log": b"{}\n", "stderr": {}, "worker": "?", "started": 0.0,
            "finished": 0.0}


def measure(n: int, tables: int, folder: Path, client: Any = None) -> dict[str, float]:
    """Median seconds of each part of a table's overhead in a field of ``n`` bots (given a Dask
    ``client``, each table goes through the host's cluster path, a stub task on the cluster)."""
    from functools import partial

    import tournaments.cluster as TC
    from tournaments.ladder.host import on_cluster
    from tournaments.ladder.rating import REFIT_EVERY

    field = Field(n, folder)
    try:
        field.warm(4)
        host = field.host
        refits = _Spent()
        # the choice's fit, and the certification of every outcome: read off that fit with the outcomes it
        # does not count yet (at times, and when it is declared, an exact solve of them all)
        _timed(host.for_choice, "fit", refits)
        _timed(host.for_choice, "certified", refits)
        _timed(host.for_all, "exact", refits)
        choice, storage, refit, wall = [], [], [], []
        number = max(host.chosen) + 1
        host.league.logs_dir.mkdir(parents=True, exist_ok=True)
        cluster: Any = TC  # its play_match stands in for the task, during the measure
        play_match = TC.play_match

        async def run() -> None:
            nonlocal number
            for _ in range(tables):
                refits.clear()
                w0, t0 = time.perf_counter(), time.process_time()
                table = await host.next_table(number)
                t1 = time.process_time()
                assert table is not None
                if client is None:
                    field.store_table(table, field.result(table))
                else:  # the host's own path: a task submitted, its result awaited in a thread, stored
                    cluster.play_match = partial(stub_task, field.result(table))
                    await host.play(table, partial(on_cluster, client), 60.0)
                t2, w2 = time.process_time(), time.perf_counter()
                fitted = sum(refits)
                choice.append(t1 - t0 - fitted)
                storage.append(t2 - t1)
                refit.append(fitted)
                wall.append(w2 - w0)
                number += 1

        try:
            trio.run(run)
        finally:
            cluster.play_match = play_match
        # the exact solve that replaces the incremental state every max(REFIT_EVERY, k) outcomes
        t0 = time.process_time()
        host.for_choice._solve(host.for_choice._diag, host.for_choice._off, host.for_choice._rhs)
        solve = time.process_time() - t0
        return {"choice": statistics.median(choice), "storage": statistics.median(storage), "refit": statistics.median(refit),
                "wall": statistics.median(wall), "solve": solve, "every": max(REFIT_EVERY, n), "refit_mean": statistics.mean(refit[1:] or refit)}
    finally:
        field.close()


def table(rows: dict[int, dict[str, float]], sizes: list[int], storage: str) -> None:
    base = rows[sizes[0]]
    parts = ("choice", "storage", "refit")
    print(f"{'bots':>6} {'choice':>15} {storage:>15} {'rating refit':>15} {'CPU total':>15} {'wall':>15}")
    for n in sizes:
        r = rows[n]
        cpu, base_cpu = sum(r[k] for k in parts), sum(base[k] for k in parts)

        def cell(x: float, b: float) -> str:
            return f"{x * 1000:7.2f} ×{x / b:5.1f}" if b > 0 else f"{x * 1000:7.2f}      "

        print(f"{n:>6} " + " ".join(f"{cell(r[k], base[k]):>15}" for k in parts) + f" {cell(cpu, base_cpu):>15} {cell(r['wall'], base['wall']):>15}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ladder_host", description=__doc__.split("\n\n")[0])
    ap.add_argument("--fields", default=",".join(map(str, FIELDS)), help="field sizes (default 50,200,1000)")
    ap.add_argument("--tables", type=int, default=100, help="tables measured in each field (default 100)")
    ap.add_argument("--cluster", metavar="ADDRESS", default=None,
                    help="also through the host's cluster path on this Dask cluster (local:N or a scheduler's address), "
                         "a stub task a table")
    args = ap.parse_args(argv)
    from tournaments.ladder.rating import FOLD_BLOCK

    sizes = [int(x) for x in args.fields.split(",")]
    load = os.getloadavg()[0]
    rows = {}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-ladder-host-") as tmp:
            rows[n] = measure(n, args.tables, Path(tmp))
        print(f"  {n} bots measured", file=sys.stderr, flush=True)
    cluster = {}
    if args.cluster is not None:
        from tournaments.cluster import connect, parse_address

        with connect(parse_address(args.cluster)) as client:
            for n in sizes:
                with tempfile.TemporaryDirectory(prefix="bench-ladder-host-") as tmp:
                    cluster[n] = measure(n, args.tables, Path(tmp), client)
                print(f"  {n} bots measured on --cluster {args.cluster}", file=sys.stderr, flush=True)
    print(f"per-table overhead of the ladder's host: median CPU ms over {args.tables} tables (× the {sizes[0]}-bot field's), "
          f"and the wall time with the database's commits; load average {load:.1f} on {os.cpu_count()} cores at the start")
    table(rows, sizes, "storage")
    for n in sizes:
        r = rows[n]
        print(f"  the exact solve of the ratings at {n} bots: {r['solve'] * 1000:.1f} ms every {int(r['every'])} tables "
              f"({r['solve'] / r['every'] * 1000:.2f} ms a table, beside the refit's median); the refit's mean "
              f"{r['refit_mean'] * 1000:.2f} ms (the median leaves out the ratings' updates applied every {FOLD_BLOCK} tables "
              f"and an exact solve certification calls for)")
    if cluster:
        print(f"the same through the host's --cluster {args.cluster} path (each table a task that plays nothing: submitted, "
              f"its result awaited in a thread, its log written, stored)")
        table(cluster, sizes, "task + storage")
    return 0


if __name__ == "__main__":
    sys.exit(main())


