"""Random-playout throughput of our rules engine against two Python domino engines.

    python -m bench.engine [--seconds S] [--seed N] [--only WORDS] [--against DIR]

Every engine plays whole 4-player deals (sport and kozel in partnership, 7 tiles each, no
bazaar) with uniformly random legal moves from a seeded :class:`random.Random`, for about ``S`` seconds of CPU time after
a short warm-up, all in the same process.  The engines take turns in rounds of a quarter of a
second, so a busy spell of a shared machine slows every engine alike and the ratios stay fair:

* **ours, sport** / **ours, kozel** — the realistic path a referee takes: the documented
  seeded shuffle (``deal_from_seed``), ``Game.start``, ``legal_plays`` + ``apply`` until the
  deal is terminal, ``Game.finish`` (scoring, records, game-over check).  A new game begins
  whenever one ends; kozel's void deals (redeals) are started, cost time and are not counted.
* **OpenSpiel ``python_team_dominoes``** — dealing through its 28 chance nodes (outcomes
  sampled uniformly from ``chance_outcomes()``), then ``legal_actions`` + ``apply_action``
  until terminal, then ``returns()``.
* **dominoes (PyPI)** — ``dominoes.Game.new`` (its own shuffle, from the global
  :mod:`random`, seeded here), then ``valid_moves`` + ``make_move`` until ``result`` is set.

* **ours, osel / telephone / muggins** — the same path for the cross games, 4 players (osel and
  telephone in pairs, muggins alone with a bazaar of 8).  A move is one decision, so osel's
  extra doubles and ``stop`` each count as one.  No other engine plays these games: the rows
  show what the cross costs next to the line, and are left out of the ratio table.
* **ours, sea_kozel / general / blitz** — the same path for the line games whose turns hold
  several tiles or a decision, 4 players (sea_kozel and general in pairs, blitz alone): two
  doubles at once, a ``stop``, sea_kozel's hundred and write-off decisions and each tile of a
  blitz chain count as one move each.  Also left out of the ratio table.
* **ours, mexican_train** — the same path for the trains, 4 players, rounds 6-6 down to 0-0 in
  turn (a new game after seven); a cover of a double is a move of its own.  Left out of the
  ratio table.
* **ours, kolbasa** — the same path for the sausage, 2 players, whole games to the goat; a move
  is the choice of a place for the tile turned up (turning up and tails are automatic, not
  moves).  Left out of the ratio table.

* **search, sport / kozel: sample** — what a search bot does before each playout
  (``referee.engine.sampling``): a deal consistent with what the seat to move knows, drawn by
  the position's ``Sampler`` (built once, as a search builds one a decision) and replayed to that
  seat's decision by ``replay``, from positions part-way through random deals (a pool of 64,
  taken in turn).  One sample counts as one deal and one move.
* **search, sport / kozel: playout** — one playout from such a sampled state: ``copy``, random
  legal moves to the deal's end, and ``Game.finish`` on ``fork_game`` of the table game (the
  scoring a search reads).  Its moves are the playout's moves.  These rows are a table of their
  own: µs per sample and per playout are what a decision's search spends, many times over.

A *move* is a player's decision; chance nodes, forced leads and automatic passes are not moves.
``µs/move`` is the whole time (dealing and scoring included) divided by the moves.  Nothing
here asserts anything: it prints figures for the machine it runs on.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from referee.engine import TERMINAL, deal_from_seed, variant

#: A deal player: plays one whole deal and returns the number of player moves made.
DealFn = Callable[[], int]


@dataclass
class Row:
    engine: str
    deals: int = 0
    moves: int = 0
    seconds: float = 0.0
    skipped: str | None = None
    rounds: list[float] = field(default_factory=list)  # deals/s of each round

    @property
    def spread(self) -> float:
        """The relative standard deviation of the rounds' deals/s: how noisy the machine was."""
        if len(self.rounds) < 2:
            return 0.0
        return statistics.stdev(self.rounds) / statistics.mean(self.rounds)

    @property
    def deals_per_s(self) -> float:
        return self.deals / self.seconds

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.seconds

    @property
    def us_per_move(self) -> float:
        return self.seconds / self.moves * 1e6


# -- the engines ---------------------------------------------------------------------------


#: The games of ours measured; only the line games are compared with the other engines.
LINE_GAMES = ("sport", "kozel")
CROSS_GAMES = ("osel", "telephone", "muggins")
#: The line games with turns of several tiles (issue 12): not compared with other engines either.
KOZEL_FAMILY = ("sea_kozel", "general", "blitz")
#: The layout games of issue 17: not compared with other engines either.
TRAINS = ("mexican_train", "kolbasa")
#: The games whose search primitives (a sample, a playout) are measured (issue 26).
SEARCHED = ("sport", "kozel")


def ours(name: str, seed: int, engine: Any = None) -> DealFn:
    """Whole deals of our ``name`` game for 4 players (sport and kozel both play in pairs), or
    the game's usual count where 4 cannot play (kolbasa: 2).  ``engine``: another checkout's
    ``referee.engine`` (``--against``), measured the same way."""
    v = (engine.variant if engine is not None else variant)(name)
    dealt = engine.deal_from_seed if engine is not None else deal_from_seed
    seats = 4 if 4 in v.players else v.default_players  # kolbasa is for two
    shape = v.shape(seats)
    rng = random.Random(seed)
    choice = rng.choice
    game = v.new_game(seats)
    index = 0

    def one() -> int:
        nonlocal game, index
        while True:
            if game.outcome() is not None:
                game = v.new_game(seats)
            state = game.start(dealt(seed, index, shape))
            index += 1
            if state is not None:
                break
        moves = 0
        while state.to_move() != TERMINAL:
            state.apply(choice(state.legal_plays()))
            moves += 1
        game.finish(state)
        return moves

    return one


def positions(name: str, seed: int, count: int = 64) -> list[tuple[Any, Any, Any]]:
    """``count`` decisions part-way through random deals of ``name`` (4 players): for each, what
    the seat to move knows, the table game for it, and one state sampled at it."""
    from referee.engine.core.view import seen_by
    from referee.engine.sampling import Knowledge, sample_state, table_game

    v = variant(name)
    rng = random.Random(seed)
    out: list[tuple[Any, Any, Any]] = []
    index = 0
    while len(out) < count:
        game = v.new_game(4)
        deal = deal_from_seed(seed, index, v.shape(4))
        index += 1
        state = game.start(deal)
        if state is None:
            continue
        for _ in range(rng.randrange(2, 16)):
            if state.to_move() == TERMINAL:
                break
            state.apply(rng.choice(state.legal_plays()))
        if state.to_move() == TERMINAL:
            continue
        seat = state.to_move()
        k = Knowledge(variant=name, players=4, seat=seat, leader=state.leader, hand=tuple(deal.hands[seat]),
                      history=tuple(seen_by(e, seat) for e in state.history), options=dict(game.options),
                      legal=tuple(state.legal_plays()))
        table = table_game(k)
        sampled = sample_state(k, rng, table)
        assert sampled is not None, "the true deal agrees with the seat's knowledge, so a sample exists"
        out.append((k, table, sampled))
    return out


def sampling(name: str, seed: int) -> DealFn:
    """One deal drawn and replayed to the seat's decision, from a pool of positions in turn, each
    with its Sampler (built once, as a search builds one a decision)."""
    from referee.engine.sampling import Sampler, replay

    pool = [(k, table, Sampler(k, table)) for k, table, _ in positions(name, seed)]
    rng = random.Random(seed)
    index = 0

    def one() -> int:
        nonlocal index
        k, table, sampler = pool[index % len(pool)]
        index += 1
        deal = sampler.deal(rng)
        assert deal is not None and replay(k, deal, table) is not None
        return 1

    return one


def playout(name: str, seed: int) -> DealFn:
    """One random playout from a sampled state to the deal's end, scored on a forked game."""
    from referee.engine.sampling import fork_game

    pool = positions(name, seed)
    rng = random.Random(seed)
    choice = rng.choice
    index = 0

    def one() -> int:
        nonlocal index
        _, table, sampled = pool[index % len(pool)]
        index += 1
        state = sampled.copy()
        moves = 0
        while state.to_move() != TERMINAL:
            state.apply(choice(state.legal_plays()))
            moves += 1
        fork_game(table).finish(state)
        return moves

    return one


def openspiel(seed: int) -> DealFn:
    import open_spiel.python.games  # noqa: F401  (registers the python_* games)
    import pyspiel

    game = pyspiel.load_game("python_team_dominoes")
    rng = random.Random(seed)
    choice = rng.choice

    def one() -> int:
        state = game.new_initial_state()
        moves = 0
        while not state.is_terminal():
            if state.is_chance_node():
                action, _ = choice(state.chance_outcomes())  # uniform: every outcome has p = 1/n
            else:
                action = choice(state.legal_actions())
                moves += 1
            state.apply_action(action)
        state.returns()
        return moves

    return one


def dominoes_pkg(seed: int) -> DealFn:
    import dominoes

    random.seed(seed)  # Game.new shuffles with the global generator
    rng = random.Random(seed)
    choice = rng.choice
    index = 0

    def one() -> int:
        nonlocal index
        g = dominoes.Game.new(starting_player=index % 4)
        index += 1
        moves = 0
        while g.result is None:
            g.make_move(*choice(g.valid_moves))
            moves += 1
        return moves

    return one


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _missing(dist: str, exc: Exception) -> str:
    if isinstance(exc, ImportError) and _version(dist) is None:
        return f"{dist} not installed (pip install -e '.[bench]')"
    return f"{dist} does not import: {type(exc).__name__}: {exc}"


def other_engine(checkout: Path) -> Any:
    """Another checkout's rules engine, imported under a name of its own (``_against_engine``):
    the engine's modules import each other relatively, so both engines live in one process."""
    root = checkout / "referee" / "engine"
    spec = importlib.util.spec_from_file_location("_against_engine", root / "__init__.py", submodule_search_locations=[str(root)])
    if spec is None or spec.loader is None or not root.is_dir():
        raise SystemExit(f"--against {checkout}: no referee/engine package there")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def engines(seed: int, against: Any = None) -> list[tuple[str, Callable[[], DealFn] | None, str | None]]:
    """(label, factory or None, why it is skipped) for every engine, in table order; with
    ``against`` (another checkout's engine) a ``before`` row beside each of ours."""
    out: list[tuple[str, Callable[[], DealFn] | None, str | None]] = []
    for name in LINE_GAMES + CROSS_GAMES + KOZEL_FAMILY + TRAINS:
        out.append((f"ours, {name}", functools.partial(ours, name, seed), None))
        if against is not None:
            out.append((f"before, {name}", functools.partial(ours, name, seed, against), None))
    for name in SEARCHED:
        out.append((f"search, {name}: sample", functools.partial(sampling, name, seed), None))
        out.append((f"search, {name}: playout", functools.partial(playout, name, seed), None))
    try:
        import open_spiel.python.games  # noqa: F401
        import pyspiel  # noqa: F401

        out.append(("OpenSpiel python_team_dominoes", lambda: openspiel(seed), None))
    except Exception as exc:  # absent, or a wheel that does not load here
        out.append(("OpenSpiel python_team_dominoes", None, _missing("open_spiel", exc)))
    try:
        import dominoes  # noqa: F401

        out.append(("dominoes (PyPI)", lambda: dominoes_pkg(seed), None))
    except Exception as exc:
        out.append(("dominoes (PyPI)", None, _missing("dominoes", exc)))
    return out


# -- measuring -----------------------------------------------------------------------------

#: Each engine is measured in rounds of about this many seconds, the engines taking turns, so a
#: slow spell of a shared machine falls on every engine alike and the ratios stay fair.
ROUND = 0.25


def measure(players: list[tuple[Row, DealFn]], seconds: float, warmup: float) -> None:
    """Run every deal player for about ``seconds`` of CPU time, in interleaved rounds, after
    ``warmup`` seconds each; add the deals, moves and time to its row."""
    clock = time.process_time  # CPU time of this process: other processes' load does not count
    for _, one in players:
        stop = clock() + warmup
        while clock() < stop:
            one()
    rounds = max(1, round(seconds / ROUND))
    for _ in range(rounds):
        for row, one in players:
            deals = moves = 0
            start = clock()
            stop = start + seconds / rounds
            while True:
                moves += one()
                deals += 1
                now = clock()
                if now >= stop:
                    break
            row.deals += deals
            row.moves += moves
            row.seconds += now - start
            row.rounds.append(deals / (now - start))


# -- printing ------------------------------------------------------------------------------


def search_table(rows: list[Row]) -> str:
    head = f"{'search primitive':<32}{'count':>9}{'per s':>11}{'µs each':>10}{'moves each':>12}{'± rounds':>10}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.skipped:
            lines.append(f"{r.engine:<32}  skipped: {r.skipped}")
            continue
        each = r.moves / r.deals if r.engine.endswith("playout") else 0.0
        lines.append(f"{r.engine:<32}{r.deals:>9,}{r.deals_per_s:>11,.0f}{r.seconds / r.deals * 1e6:>10.1f}"
                     f"{each:>12.2f}{r.spread:>9.0%} ")
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    head = f"{'engine':<32}{'deals':>9}{'deals/s':>11}{'moves/s':>11}{'µs/move':>10}{'moves/deal':>12}{'± rounds':>10}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.skipped:
            lines.append(f"{r.engine:<32}  skipped: {r.skipped}")
            continue
        lines.append(
            f"{r.engine:<32}{r.deals:>9,}{r.deals_per_s:>11,.0f}{r.moves_per_s:>11,.0f}"
            f"{r.us_per_move:>10.2f}{r.moves / r.deals:>12.2f}{r.spread:>9.0%} "
        )
    return "\n".join(lines)


def before_after(rows: list[Row]) -> str:
    """ours ÷ before for every game measured both ways (deals/s, the same run)."""
    by = {r.engine: r for r in rows if not r.skipped}
    lines = [f"{'ours / before':<24}{'deals/s':>10}", "-" * 34]
    for r in rows:
        if r.engine.startswith("ours, ") and f"before, {r.engine[6:]}" in by and not r.skipped:
            lines.append(f"{r.engine[6:]:<24}{r.deals_per_s / by['before, ' + r.engine[6:]].deals_per_s:>9.2f}×")
    return "\n".join(lines)


def ratios(rows: list[Row]) -> str:
    mine = [r for r in rows if r.engine.startswith("ours") and r.engine.split(", ")[1] in LINE_GAMES and not r.skipped]
    theirs = [r for r in rows if not r.engine.startswith(("ours", "search", "before"))]
    head = f"{'ours / theirs':<16}" + "".join(f"{r.engine:>34}" for r in theirs)
    lines = [head, "-" * len(head)]
    for m in mine:
        cells = []
        for t in theirs:
            if t.skipped:
                cells.append("not measured")
            else:
                d = m.deals_per_s / t.deals_per_s
                p = t.us_per_move / m.us_per_move
                cells.append(f"{d:.1f}× deals/s ({p:.1f}× per move)")
        lines.append(f"{m.engine:<16}" + "".join(f"{c:>34}" for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="CPU seconds measured per engine (default 5)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the deals and of the random players (default 1)")
    ap.add_argument("--only", default="", metavar="WORDS",
                    help="measure only the rows whose label contains one of these comma-separated words (e.g. sport,kozel,dominoes)")
    ap.add_argument("--against", type=Path, metavar="DIR",
                    help="another checkout (e.g. a git worktree of an older commit): its engine's rows, 'before', measured beside ours")
    args = ap.parse_args(argv)
    if args.seconds <= 0:
        ap.error("--seconds must be positive")
    warmup = min(1.0, max(0.2, args.seconds / 5))

    versions = ", ".join(f"{d} {_version(d) or 'absent'}" for d in ("open_spiel", "dominoes"))
    rounds = max(1, round(args.seconds / ROUND))
    print(f"Random legal playouts, 4 players, seed {args.seed}: ~{args.seconds:g} CPU s per engine "
          f"in {rounds} interleaved rounds, after a {warmup:g} s warm-up each")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}) on {platform.machine()}; {versions}")
    print()
    rows: list[Row] = []
    players: list[tuple[Row, DealFn]] = []
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    against = other_engine(args.against) if args.against is not None else None
    for label, factory, why in engines(args.seed, against):
        if only and not any(w in label for w in only):
            continue
        rows.append(Row(label, skipped=why))
        if factory is not None:
            players.append((rows[-1], factory()))
    print(f"  measuring {len(players)} engines for ~{args.seconds * len(players):g} s …", file=sys.stderr, flush=True)
    measure(players, args.seconds, warmup)
    searched = [r for r in rows if r.engine.startswith("search")]
    print(table([r for r in rows if not r.engine.startswith("search")]))
    print()
    if searched:
        print(search_table(searched))
        print()
    print(ratios(rows))
    print()
    if against is not None:
        print(before_after(rows))
        print()
    print("Times are CPU time of this process.  µs/move = the whole time of the deals (dealing and scoring")
    print("included) over the player moves; 'per move' = their µs/move over ours; '± rounds' = the spread")
    print("(relative standard deviation) of deals/s between rounds.  Issue targets: ≥10× OpenSpiel's")
    print("deals/s, and (issue 26) sport and kozel ≥2× the dominoes package's.  A search primitive's")
    print("'moves each' is a playout's moves (a sample makes none).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
