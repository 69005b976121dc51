"""``referee match``: a duplicate match between bots, its progress, its result and its log.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import msgspec
import trio
import typer

from referee.base import exitcodes as X
from referee.base.cluster import Address, ClusterUnavailable, parse_address
from referee.base.errors import BotError, BotStartError, LogError
from referee.bots.sandbox import DEFAULT_MEMORY_MB, DEFAULT_PROCESSES
from referee.bots.spawn import resolve_command
from referee.commands.app import EPILOG, TABLE_ROWS, app
from referee.commands.options import (
    GAME_PANEL,
    LIMITS_PANEL,
    OUTPUT_PANEL,
    SANDBOX_HINT,
    STATS_PANEL,
    TC_PANEL,
    bounded,
    check_sandbox,
    distinct_name,
    drop_if_empty,
    file_sha256,
    game_setup,
    interrupted_result,
    isolation_of,
    log_path_of,
    print_result,
    seed_option,
    warn_short_seed,
)
from referee.commands.shared import err, fail, held_signals, interrupted, progress_bar, say
from referee.conversation.log import stderr_dir_of
from referee.engine import variant_names
from referee.engine.core.deal import Deal, DealShape, format_deal_line
from referee.engine.core.errors import BadDeal
from referee.engine.core.shuffle import BLAKE2B_GAMES
from referee.matches.deal_order import DEAL_ORDERS, order_problem, played_order
from referee.matches.job import (
    MAX_EVENT,
    MAX_NAME,
    BotJob,
    BotName,
    ClockJob,
    Confidence,
    EventName,
    GameJob,
    LimitsJob,
    MarginMs,
    MatchJob,
    within,
)
from referee.matches.live import rating_line, score_line
from referee.matches.match import orientations, run_match
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec
from referee.matches.watch import watching
from referee.stats.sprt import SprtSpec, is_sprt_word, parse_sprt

if TYPE_CHECKING:
    from referee.matches.cluster import ClusterSegments


@app.command(epilog="Example: referee match sample_bots/greedy_bot.py sample_bots/random_bot.py --variant sport --deals 12\n\n" + EPILOG)
def match(
    bots: Annotated[list[str], typer.Argument(help="Bots: a path (.py and .js run with python and node) or a quoted command line.", show_default=False)],
    variant_id: Annotated[str, typer.Option("--variant", "-v", help="The game: " + ", ".join(variant_names(refereed=True)) + ".", rich_help_panel=GAME_PANEL)] = "sport",
    deals: Annotated[Optional[int], typer.Option(help="Deals per game, for games of fixed deals (sport: a multiple of 4, default 12; mexican_train: always 7).", rich_help_panel=GAME_PANEL)] = None,
    games: Annotated[Optional[int], typer.Option(help="Whole games per orientation (default 1); for mexican_train, seven rounds each.", rich_help_panel=GAME_PANEL)] = None,
    seed: Annotated[Optional[str], typer.Option(help="Seed of the deal stream (same seed, same deals): decimal, or hexadecimal with 0x.  Default: a fresh secret seed, printed with the result.", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    deals_file: Annotated[Optional[Path], typer.Option("--deals-file", help="Play the deals of this file instead of seeded ones (without --deals or --games: all of them).", rich_help_panel=GAME_PANEL)] = None,
    deals_order: Annotated[str, typer.Option("--deals-order", help="The order the --deals-file is played in: sequential, or random (shuffled by --seed: the same seed, the same order, as a league's deals_order).", rich_help_panel=GAME_PANEL)] = "sequential",
    deals_start: Annotated[int, typer.Option("--deals-start", help="The --deals-file's first deal played, from 1 (the rest follow, then the file's first).", rich_help_panel=GAME_PANEL)] = 1,
    option: Annotated[Optional[list[str]], typer.Option("--option", "-o", help="A game option as name=value (repeat); see `referee variants`.", rich_help_panel=GAME_PANEL)] = None,
    players: Annotated[Optional[int], typer.Option(help="Seats at the table (default: the game's usual count, or one per bot).", rich_help_panel=GAME_PANEL)] = None,
    name: Annotated[Optional[list[str]], typer.Option("--name", "-n", help="Display names, one per bot in order.", rich_help_panel=GAME_PANEL)] = None,
    event: Annotated[Optional[str], typer.Option("--event", help="The event the match belongs to (fastchess's -event): kept in the log's header and shown in the reports.", rich_help_panel=OUTPUT_PANEL, show_default=False)] = None,
    startup_time: Annotated[float, typer.Option(help="Seconds a bot has to answer hello.", rich_help_panel=TC_PANEL)] = 10.0,
    move_time: Annotated[float, typer.Option(help="Seconds a bot has for each move.", rich_help_panel=TC_PANEL)] = 5.0,
    bank: Annotated[Optional[float], typer.Option(help="A time bank per bot for each game in each seating, in seconds (chess-clock style).", rich_help_panel=TC_PANEL)] = None,
    increment: Annotated[float, typer.Option(help="Seconds added to the bank after every move.", rich_help_panel=TC_PANEL)] = 0.0,
    bot_tc: Annotated[Optional[list[str]], typer.Option("--tc", help='One bot\'s own clock, as "NAME: move=0.5 bank=30 increment=0.1 startup=5" (repeat, once per bot; NAME as the result names it, or the bot\'s number from 1); what it leaves out is the match\'s (--move-time, --bank…).', rich_help_panel=TC_PANEL, show_default=False)] = None,
    time_margin: Annotated[float, typer.Option(help="Milliseconds an answer may be read late and still count (cutechess-cli's timemargin): the overrun is logged and charged to the bank (PROTOCOL.md, \"Limits\").", rich_help_panel=TC_PANEL)] = 0.0,
    max_faults: Annotated[int, typer.Option(help="Faults after which a bot forfeits the rest of the match.", rich_help_panel=LIMITS_PANEL)] = 3,
    max_line: Annotated[int, typer.Option(help="Longest line accepted from a bot, in bytes.", rich_help_panel=LIMITS_PANEL)] = 65536,
    memory_mb: Annotated[Optional[int], typer.Option(help=f"Memory cap per bot process, in MiB: its address space (RLIMIT_AS), default none; in the sandbox its memory and its /tmp, default {DEFAULT_MEMORY_MB} (PROTOCOL.md).", rich_help_panel=LIMITS_PANEL, show_default=False)] = None,
    cpu_seconds: Annotated[Optional[int], typer.Option(help="CPU-time limit per bot process (RLIMIT_CPU), in seconds.", rich_help_panel=LIMITS_PANEL)] = None,
    cwd: Annotated[Optional[list[Path]], typer.Option(help="Working directory of the bots: one for all, or one per bot in order.", rich_help_panel=LIMITS_PANEL)] = None,
    env: Annotated[Optional[list[str]], typer.Option(help="An environment variable NAME=VALUE for every bot, or \"BOT: NAME=VALUE\" for one (BOT as the result names it, or its number from 1; as a league bot's env); repeat.  Bots get only a few of the referee's own (PROTOCOL.md).", rich_help_panel=LIMITS_PANEL)] = None,
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Run every bot under bubblewrap: no network, no other processes, its own directory read-only, a private /tmp (PROTOCOL.md).", rich_help_panel=LIMITS_PANEL)] = False,
    max_processes: Annotated[int, typer.Option(help="In the sandbox: processes and threads a bot may have at once.", rich_help_panel=LIMITS_PANEL)] = DEFAULT_PROCESSES,
    isolation: Annotated[str, typer.Option(help="strict: only the process whose turn it is runs, every other one of the match is frozen (no thinking on the opponent's time); concurrent: all run (PROTOCOL.md, Fair play).", rich_help_panel=LIMITS_PANEL)] = "concurrent",
    log: Annotated[Optional[Path], typer.Option(help="Where to write the JSON-lines match log (default: referee-logs/match-<variant>-<seed>.jsonl, or -2, -3… if taken).", rich_help_panel=OUTPUT_PANEL)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the --log file (and its stderr files) if it exists.", rich_help_panel=OUTPUT_PANEL)] = False,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Also write the result as a JSON object to this file.", rich_help_panel=OUTPUT_PANEL)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the verdict, in one line (with --sprt, the test's decision first; no running score).", rich_help_panel=OUTPUT_PANEL)] = False,
    live: Annotated[Optional[bool], typer.Option("--live/--no-live", help="The running score after every pair, on stderr (default: on a terminal, unless -q).", show_default=False, rich_help_panel=OUTPUT_PANEL)] = None,
    rating_interval: Annotated[Optional[int], typer.Option("--rating-interval", help="Every N pairs, the Elo and LOS so far in one line on stderr (fastchess's -ratinginterval).", rich_help_panel=OUTPUT_PANEL, show_default=False)] = None,
    full: Annotated[bool, typer.Option("--full", help=f"Print the whole deals and games tables, however long (past {TABLE_ROWS} rows: the first and last rows and a count).", rich_help_panel=OUTPUT_PANEL)] = False,
    confidence: Annotated[float, typer.Option(help="Confidence level of the intervals; a winner is named only when significant at it.", rich_help_panel=STATS_PANEL)] = 0.95,
    sprt: Annotated[Optional[list[str]], typer.Option(help='Stop as soon as a sequential test decides: "margin0=0 margin1=3" (mean points per pair) or "elo0=0 elo1=50" (logistic Elo of the pairs; model=normalized: their normalized Elo, as fastchess), with alpha=, beta= (0.05 each) and min_pairs= (10: nothing is decided before); --deals/--games is then the budget.', rich_help_panel=STATS_PANEL)] = None,
    concurrency: Annotated[Optional[int], typer.Option("--concurrency", "-j", help="Segments played at once (default 1), each a game in one seating with processes of its own (one core each is about right).  Same result and log whatever N.  A game of fixed deals has as many segments as seatings (2 for two bots): more lanes than that need --games.  With --cluster: segments in flight on it (default: its workers).", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    cluster: Annotated[Optional[str], typer.Option("--cluster", help="Play the segments on a Dask cluster: local:N for N worker processes here, or a scheduler's address (tcp://host:8786); the log and the result are made here, the same as without it.  Bots must be at the same paths on every worker.  Needs pip install 'referee\\[cluster]'.", rich_help_panel=GAME_PANEL, show_default=False)] = None,
) -> None:
    """Play a duplicate match: every deal in every orientation, so luck cancels and the margin means skill."""
    confidence = bounded(confidence, Confidence, "--confidence")
    if concurrency is not None and concurrency < 1:
        raise fail(f"--concurrency (-j): at least 1, not {concurrency}")
    if rating_interval is not None and rating_interval < 1:
        raise fail(f"--rating-interval: at least 1 pair, not {rating_interval}")
    address = cluster_address(cluster)
    bots, test = sprt_test(bots, sprt)
    v, players, opts, deal_list, deals, games = game_setup(variant_id, players, option, deals_file, deals, games, len(bots), test)
    names = names_of(name, len(bots))
    event = event_of(event)
    cwds = cwds_of(cwd, len(bots))
    check_sandbox(sandbox, max_processes)
    tc = bounded({"startup": startup_time, "move": move_time, "bank": bank, "increment": increment,
                  "margin": bounded(time_margin, MarginMs, "--time-margin") / 1000}, ClockJob,
                 {"startup": "--startup-time", "move": "--move-time", "bank": "--bank", "increment": "--increment"})
    limits = bounded({"max_faults": max_faults, "max_line": max_line, "memory_mb": memory_mb, "cpu_seconds": cpu_seconds,
                      "max_processes": max_processes, "isolation": isolation_of(isolation)}, LimitsJob,
                     {"max_faults": "--max-faults", "max_line": "--max-line", "memory_mb": "--memory-mb", "cpu_seconds": "--cpu-seconds",
                      "max_processes": "--max-processes", "isolation": "--isolation"})
    seed_value = seed_option(seed)
    entrants = with_clocks(with_envs(entrants_of(bots, names, cwds, sandbox), env), bot_tc, tc)
    log_path = log_path_of(log, overwrite, json_path, v, seed_value, deals_file)
    deals_file, deal_list = deals_in_order(deals_file, deal_list, deals_order, deals_start, v.shape(players, opts), seed_value, log_path, overwrite)
    job = MatchJob(game=GameJob(variant=v.id, players=players, options=opts, deals=deals, games=games), tc=tc, limits=limits,
                   seed=seed_value, deals_from=BLAKE2B_GAMES, bots=entrants, log=str(log_path), stderr_dir=str(stderr_dir_of(log_path)), hidden=[],
                   confidence=confidence, sprt=test, deals_file=str(deals_file) if deals_file else None,
                   deals_file_sha256=file_sha256(deals_file) if deals_file else None, event=event)
    spec = job.spec(deal_list)
    warn_short_seed(None if deals_file else seed, seed_value)
    if not quiet and address is None:
        lanes_notice(spec, concurrency)
    with ExitStack() as held:
        on = None if address is None else held.enter_context(cluster_for(address, concurrency, quiet=quiet, claimed=None if log else log_path))
        result, stopped = play_watched(spec, quiet=quiet, live=live, sandbox=sandbox, claimed=None if log else log_path,
                                       lanes=(concurrency or 1) if on is None else on.lanes, cluster=on, rating_interval=rating_interval)
        with result, held_signals():  # a second Ctrl-C does not cut the result short
            show_result(result, quiet=quiet, full=full, json_path=json_path, seed=None if deals_file and deals_order != "random" else seed_value,
                        log_path=log_path)
    if stopped is not None:
        pairs = result.tally.count
        say(err, f"interrupted after {pairs} pair{'' if pairs == 1 else 's'} ({stopped}); the log so far is in {log_path}"
                 + (f", the result in {json_path}" if json_path else ""))
        raise typer.Exit(X.INTERRUPTED)


def cluster_address(text: str | None) -> Address | None:
    """``--cluster``'s address, or a one-line error (exit 2)."""
    if text is None:
        return None
    try:
        return parse_address(text)
    except ClusterUnavailable as exc:
        raise fail(str(exc)) from None


@contextmanager
def cluster_for(address: Address, lanes: int | None, *, quiet: bool, claimed: Path | None) -> Iterator[ClusterSegments]:
    """A match's segments on the cluster at ``address`` for the block, the workers counted on
    stderr; one line (exit 2) if it cannot be reached, the log's claimed name given back."""
    from referee.matches.cluster import on_cluster

    with ExitStack() as stack:
        try:
            on = stack.enter_context(on_cluster(address, lanes))
        except ClusterUnavailable as exc:
            if claimed is not None:
                drop_if_empty(claimed)
            raise fail(str(exc)) from None
        if not quiet:
            say(err, f"cluster {address}: {on.workers} worker{'s' if on.workers != 1 else ''} connected, {on.lanes} segment{'s' if on.lanes != 1 else ''} at once")
        yield on


def sprt_test(bots: list[str], sprt: list[str] | None) -> tuple[list[str], SprtSpec | None]:
    """``--sprt``'s test, and the bots without its settings (given unquoted, the settings after
    the first land among the bots: ``--sprt elo0=0 elo1=20 alpha=0.05``)."""
    if sprt is None:
        return bots, None
    sprt = [*sprt, *(b for b in bots if is_sprt_word(b))]
    bots = [b for b in bots if not is_sprt_word(b)]
    try:
        test = parse_sprt(sprt)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if len(bots) != 2:
        raise fail(f"--sprt tests one bot against another: give 2 bots, not {len(bots)}")
    return bots, test


def names_of(names: list[str] | None, bots: int) -> list[str] | None:
    """The ``--name`` values, checked: one per bot, printable, not all spaces, within the bound
    of a bot's name (it names the bot's stderr files and every table and line of the result)."""
    if names and len(names) != bots:
        raise fail(f"--name was given {len(names)} times for {bots} bots")
    for display in names or []:
        if not within(display, BotName) or not display.isprintable() or not display.strip():
            shown = repr(display) if len(display) <= MAX_NAME else repr(display[:MAX_NAME]) + f"… ({len(display):,} characters)"
            raise fail(f"--name {shown}: a bot's name is 1 to {MAX_NAME} printable characters, not all spaces")
    return names


def event_of(event: str | None) -> str | None:
    """``--event``, checked: printable, not all spaces, within the header's bound."""
    if event is not None and (not within(event, EventName) or not event.isprintable() or not event.strip()):
        shown = repr(event) if len(event) <= MAX_EVENT else repr(event[:MAX_EVENT]) + f"… ({len(event):,} characters)"
        raise fail(f"--event {shown}: an event's name is 1 to {MAX_EVENT} printable characters, not all spaces")
    return event


def cwds_of(cwd: list[Path] | None, bots: int) -> list[Path | None]:
    """Each bot's working directory (``--cwd``: one for all, or one per bot), resolved."""
    if cwd and len(cwd) not in (1, bots):
        raise fail(f"--cwd was given {len(cwd)} times: give one for all bots or one per bot ({bots})")
    for d in cwd or []:
        if not d.is_dir():
            raise fail(f"--cwd {d}: no such directory")
    return [(cwd[i] if len(cwd) > 1 else cwd[0]).resolve() if cwd else None for i in range(bots)]


def entrants_of(bots: list[str], names: list[str] | None, cwds: list[Path | None], sandbox: bool) -> list[BotJob]:
    """The bots of the match: each command resolved, each with a name of its own (and nothing
    added to its environment yet: :func:`with_envs`)."""
    entrants = []
    taken: set[str] = set()
    for i, command in enumerate(bots):
        try:
            argv = resolve_command(command, cwds[i])
        except BotError as exc:
            raise fail(str(exc)) from None
        display = names[i] if names else distinct_name(command, taken)
        if display in taken:
            raise fail(f"two bots are named {display!r}; give distinct --name values")
        taken.add(display)
        entrants.append(BotJob(name=display, argv=argv, cwd=None if cwds[i] is None else str(cwds[i]), env={}, sandbox=sandbox))
    return entrants


#: The fields of a bot's own clock (``--tc``), as a league file's ``[clock]`` names them.
CLOCK_FIELDS = ("startup", "move", "bank", "increment")


def with_clocks(entrants: list[BotJob], items: list[str] | None, match_tc: ClockJob) -> list[BotJob]:
    """The bots with the clocks ``--tc`` gives them (``NAME: move=0.5 bank=30``, or ``2: …`` by
    number from 1): each field it names replaces the match's for that bot, and ``bank=none``
    takes the match's bank away; a bot given no ``--tc`` plays on the match's clock."""
    given: dict[int, ClockJob] = {}
    names = [e.name for e in entrants]
    for item in items or []:
        who, fields = _clock_owner(item, names)
        if who in given:
            raise fail(f"--tc {item!r}: {names[who]} has a clock already (give one --tc per bot)")
        values: dict[str, Any] = {f: getattr(match_tc, f) for f in CLOCK_FIELDS}
        for word in fields.split():
            key, sep, value = word.partition("=")
            if not sep or key not in CLOCK_FIELDS:
                raise fail(f"--tc {item!r}: {word!r} is not one of {', '.join(f + '=SECONDS' for f in CLOCK_FIELDS)}")
            if key == "bank" and value.lower() == "none":
                values[key] = None
                continue
            try:
                values[key] = float(value)
            except ValueError:
                raise fail(f"--tc {item!r}: {key}={value!r} is not a number of seconds") from None
        if not fields.split():
            raise fail(f"--tc {item!r}: give the bot's clock after its name, e.g. --tc \"{names[who]}: move=0.5 bank=30\"")
        given[who] = bounded(values, ClockJob, f"--tc {names[who]}")
    return [msgspec.structs.replace(e, tc=given[i]) if i in given else e for i, e in enumerate(entrants)]


def _clock_owner(item: str, names: list[str]) -> tuple[int, str]:
    """The bot a ``--tc`` is for (its index) and the fields after its name: the longest bot name
    that the item starts with, followed by a colon, or the bot's number from 1."""
    found = _owner(item, names)
    if found is None:
        raise fail(f"--tc {item!r}: write it as \"NAME: move=0.5 bank=30\", NAME one of {', '.join(names)} (or the bot's number from 1)")
    return found


def _owner(item: str, names: list[str]) -> tuple[int, str] | None:
    """The bot an item of a per-bot option is for and the rest of it, or ``None``: the longest
    bot name that the item starts with, followed by a colon, or the bot's number from 1."""
    owners = [i for i, n in enumerate(names) if item.startswith(n + ":")]
    if owners:
        who = max(owners, key=lambda i: len(names[i]))
        return who, item[len(names[who]) + 1:]
    head, sep, rest = item.partition(":")
    if sep and head.strip().isdigit() and 1 <= int(head) <= len(names):
        return int(head) - 1, rest
    return None


def with_envs(entrants: list[BotJob], items: list[str] | None) -> list[BotJob]:
    """The bots with ``--env``'s variables: ``NAME=VALUE`` for every bot, ``BOT: NAME=VALUE``
    (``BOT`` a bot's name, or its number from 1) for one, which wins over an every-bot value of
    the same name whatever their order."""
    shared: dict[str, str] = {}
    own: list[dict[str, str]] = [{} for _ in entrants]
    names = [e.name for e in entrants]
    for item in items or []:
        found = _owner(item, names)
        assignment = item if found is None else found[1].strip()
        key, sep, value = assignment.partition("=")
        if found is None and ":" in key:
            raise fail(f"--env {item!r}: write it as NAME=VALUE, or \"BOT: NAME=VALUE\" with BOT one of {', '.join(names)} "
                       "(or the bot's number from 1)")
        if not sep or not key or any(c in key for c in " \0") or "\0" in value:
            raise fail(f"--env {item!r}: write it as NAME=VALUE" + ("" if found is None else f" after {names[found[0]]}:"))
        (shared if found is None else own[found[0]])[key] = value
    return [msgspec.structs.replace(e, env={**shared, **own[i]}) if shared or own[i] else e for i, e in enumerate(entrants)]


def deals_in_order(deals_file: Path | None, deal_list: list[Deal] | None, order: str, start: int, shape: DealShape, seed: int,
                   log_path: Path, overwrite: bool) -> tuple[Path | None, list[Deal] | None]:
    """The deal file the match plays and its deals: ``--deals-file`` as it is, or, with
    ``--deals-order random`` or a ``--deals-start``, its deals in that order
    (:func:`referee.matches.deal_order.played_order`, shuffled by the match's seed) written
    beside the log (``m.deals.jsonl`` for ``m.jsonl``), so that the log's header names the deals
    as played and ``verify`` plays them again."""
    if order not in DEAL_ORDERS:
        raise fail(f"--deals-order {order!r}: one of {', '.join(DEAL_ORDERS)}")
    if order == "sequential" and start == 1:
        return deals_file, deal_list
    if deals_file is None or deal_list is None:
        raise fail("--deals-order and --deals-start go with --deals-file (the file of deals to play)")
    per_block = 7 if shape.station else 1
    if (problem := order_problem(len(deal_list), start, per_block)) is not None:
        raise fail(f"--deals-start: {problem}" if problem.startswith(str(start)) else f"--deals-file {deals_file}: {problem}")
    played = played_order(deal_list, order, start, seed, file_sha256(deals_file), per_block)
    path = log_path.with_name(log_path.name.removesuffix(".gz").removesuffix(".jsonl") + ".deals.jsonl")
    if path.resolve() == deals_file.resolve():
        raise fail(f"--deals-file {deals_file} is where the deals as played go (beside --log): give another --log")
    if path.exists() and not overwrite:
        raise fail(f"{path} exists (the deals as played go beside the log); add --overwrite to replace it")
    part = path.with_name(f".{path.name}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text("".join(format_deal_line(d, shape, i) + "\n" for i, d in enumerate(played)), encoding="utf-8")
        os.replace(part, path)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise fail(f"cannot write {path}: {exc.strerror or exc}") from None
    return path, played


def lanes_notice(spec: MatchSpec, lanes: int | None) -> None:
    """A notice on stderr when ``-j`` asks for more lanes than the match has segments (a game in
    one seating each): the lanes past them would stay idle."""
    seatings = len(orientations(spec.variant, spec.players, spec.options, len(spec.bots)))
    segments = (spec.games or 1) * seatings
    if lanes is None or lanes <= segments:
        return
    games = spec.games or 1
    what = (f"a game in each of its {seatings} seatings" if games == 1 else f"{games} games in each of its {seatings} seatings")
    more = "; --games N gives it N times as many" if not spec.variant.to_target or games == 1 else ""
    say(err, f"note: -j {lanes} asks for more lanes than the match has segments: {segments} ({what}), so {segments} play at once{more}")


def play_watched(spec: MatchSpec, *, quiet: bool, live: bool | None, sandbox: bool, claimed: Path | None,
                 lanes: int = 1, cluster: ClusterSegments | None = None,
                 rating_interval: int | None = None) -> tuple[MatchResult, BaseException | None]:
    """Play the match with a progress bar and the running score on a terminal; its result, and
    what stopped it (Ctrl-C, SIGTERM, SIGHUP) if it was stopped: then the result is its
    finished pairs'.  ``claimed``: the log, when its name was claimed for this match (dropped
    if the match never began); ``lanes``: segments played at once (``-j``), on ``cluster`` if
    given (``--cluster``); ``rating_interval``: every so many pairs, the Elo and LOS so far."""
    n_orient = len(orientations(spec.variant, spec.players, spec.options, len(spec.bots)))
    total = (spec.deals or 0) * (spec.games or 1) * n_orient if not spec.variant.to_target else (spec.games or 1) * n_orient
    bar = progress_bar(total, quiet)
    task = None

    def progress(desc: str, advance: int) -> None:
        if bar is not None and task is not None:
            bar.update(task, description=desc, advance=advance)

    show_live = live if live is not None else err.is_terminal and not quiet

    def on_board(now: MatchResult) -> None:
        if show_live:
            say(err, score_line(now))
        if rating_interval and now.tally.count % rating_interval == 0:
            say(err, rating_line(now))

    try:
        if bar is not None:
            with bar:
                task = bar.add_task("starting bots", total=total)
                return trio.run(functools.partial(run_match, spec, watch=watching(progress, on_board), lanes=lanes, cluster=cluster)), None
        return trio.run(functools.partial(run_match, spec, watch=watching(progress, on_board), lanes=lanes, cluster=cluster)), None
    except BotStartError as exc:
        raise fail(f"a bot could not be started: {exc}" + (f"\n{SANDBOX_HINT}" if sandbox else ""), X.BOT_START) from None
    except (BadDeal, LogError, ClusterUnavailable) as exc:
        if claimed is not None:
            drop_if_empty(claimed)  # the name was claimed for this match, which never began
        raise fail(str(exc)) from None
    except BaseException as exc:
        if not interrupted(exc):
            raise
        # Ctrl-C, SIGTERM, SIGHUP: the bots are ended and the log closed; the finished pairs are the result.
        return interrupted_result(exc, spec)


def show_result(result: MatchResult, *, quiet: bool, full: bool, json_path: Path | None, seed: int | None, log_path: Path) -> None:
    """Write ``--json`` and print the result (:func:`print_result`)."""
    summary = result.summary()
    if json_path is not None:
        try:
            write_json_whole(json_path, result)
        except OSError as exc:
            raise fail(f"cannot write {json_path}: {exc.strerror or exc}") from None
    print_result(result, summary, quiet=quiet, full=full, seed=seed, log_path=log_path, json_path=json_path)


def write_json_whole(path: Path, result) -> None:
    """``--json``, written beside its place and moved there when whole: a reader never sees half
    a result, and an earlier file stays until the new one is complete.

    Raises:
        OSError: it cannot be written.
    """
    from referee.matches.results import write_json

    part = path.with_name(f".{path.name}.part")
    try:
        write_json(part, result)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
