"""The options several commands read the same way: game, deals and their files, seeds, bots and
their clocks, sandbox limits, logs and the help panels they are listed under.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import typer

from protocol.messages import MAX_DEPTH, too_deep
from referee.base import exitcodes as X
from referee.base.seeds import seed_text
from referee.base.signals import Terminated
from referee.bots.cgroups import freezer_missing
from referee.bots.sandbox import DEFAULT_MEMORY_MB, SandboxUnavailable, find_bwrap
from referee.bots.spawn import bot_name
from referee.commands.app import TABLE_ROWS
from referee.commands.shared import err, fail, first_of, out, say
from referee.conversation.log import fresh_path
from referee.engine import refereed_variant
from referee.engine.core.deal import Deal, parse_deal_lines
from referee.engine.core.errors import BadDeal, RulesError
from referee.engine.core.game import Variant
from referee.matches.job import Deals, Games, Processes, bound_problem
from referee.matches.match import deals_needed, match_length, orientations
from referee.matches.report import render, verdict_line
from referee.matches.results import MatchResult
from referee.matches.spec import ISOLATIONS, Isolation
from referee.stats.sprt import SprtSpec


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"game option {item!r}: write it as name=value, e.g. -o rule13=hang")
        options[key.strip()] = value.strip()
    return options


def load_deal_file(path: Path, shape) -> list:
    if path.is_dir():
        raise fail(f"deal file {path} is a folder; give a file of deals (`referee deals generate` writes one)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise fail(f"deal file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise fail(f"deal file {path}: not UTF-8 text") from None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if too_deep(line.encode()):
            raise fail(f"deal file {path}: line {number}: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return parse_deal_lines(lines, shape)
    except BadDeal as exc:
        raise fail(f"deal file {path}: {exc}") from None


def seed_option(text: str | None) -> int:
    """``--seed`` as a number, or a fresh secret seed when it is not given."""
    from referee.base.seeds import fresh_seed, parse_seed

    if text is None:
        return fresh_seed()
    try:
        return parse_seed(text)
    except ValueError as exc:
        raise fail(f"--seed: {exc}") from None


def warn_short_seed(typed: str | None, seed: int, printed: str = "with the result") -> None:
    """Warn, in one line as ``league run`` does, when the ``--seed`` typed is short enough to find."""
    from referee.base.seeds import guessable, short_seed_warning

    if typed is not None and guessable(seed):
        say(err, short_seed_warning(seed, f"leave out --seed: the referee draws a secret one and prints it {printed}"))


def file_sha256(path: Path) -> str:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise fail(f"deal file {path}: {exc.strerror or exc}") from None


def file_length(v, players: int, opts: dict[str, Any], count: int) -> tuple[int, int | None]:
    """``--deals-file`` alone, in a game of fixed deals: the deals and games that play every
    deal of the file (one game of them all, or, where the rules fix a game's length as
    mexican_train's seven rounds, as many whole games as the file holds)."""
    try:
        v.new_game(players, opts, count)
        return count, None
    except RulesError as exc:
        per_game = v.game.default_deals
        if per_game and count > per_game and count % per_game == 0:
            return per_game, count // per_game
        fits = next((n for n in (per_game or 0, *range(count - 1, max(0, count - 64), -1)) if 0 < n < count and _accepts(v, players, opts, n)), None)
        hint = "" if fits is None else f"; give --deals {fits} to play its first {fits}"
        raise fail(f"the deal file holds {count} deals, and {exc}{hint}") from None


def _accepts(v, players: int, opts: dict[str, Any], deals: int) -> bool:
    try:
        v.new_game(players, opts, deals)
    except RulesError:
        return False
    return True


def distinct_name(command: str, taken: set[str]) -> str:
    """The bot's name from its command (:func:`referee.bots.spawn.bot_name`), numbered ``_2``,
    ``_3``… when another bot of the match has it already."""
    stem = bot_name(command)
    name, k = stem, 2
    while name in taken:
        name, k = f"{stem}_{k}", k + 1
    return name


def claim(path: Path, *, directory: bool = False) -> Path:
    """A fresh log (or folder) at ``path`` or numbered beside it (:func:`referee.conversation.log.fresh_path`)."""
    try:
        return fresh_path(path, directory=directory)
    except OSError as exc:
        raise fail(f"cannot create {path}: {exc.strerror or exc}") from None


TC_PANEL = "Time control"
LIMITS_PANEL = "Limits and sandbox"
OUTPUT_PANEL = "Output"
GAME_PANEL = "Game"
STATS_PANEL = "Statistics"


def bounded(value: Any, kind: Any, names: str | dict[str, str]) -> Any:
    """``value`` converted to ``kind`` (a type of :mod:`referee.matches.job`, whose bounds it checks), or
    a one-line error naming the option (``names``: the option, or the options by field)."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise fail(bound_problem(exc, kind, value, names) or f"{names if isinstance(names, str) else 'an option'}: {exc}") from None


def game_of(variant_id: str, players: int | None, option: list[str] | None, bots: int) -> tuple[Variant, int, dict[str, Any]]:
    """The game, its seats (default: the game's usual count, or one per bot) and its options."""
    try:
        v = refereed_variant(variant_id)
    except RulesError as exc:
        raise fail(str(exc)) from None
    if players is None:
        players = v.default_players if bots <= 2 and v.default_players in v.players else bots
    try:
        return v, players, v.resolve_options(players, parse_options(option))
    except RulesError as exc:
        raise fail(str(exc)) from None


def length_of(v: Variant, players: int, opts: dict[str, Any], deals: int | None, games: int | None, deals_file: Path | None,
              test: SprtSpec | None) -> tuple[list[Deal] | None, int | None, int | None]:
    """The deal file's deals, the deals per game and the games per orientation; what the game,
    the deal file and the SPRT's minimum refuse is refused here."""
    deal_list = load_deal_file(deals_file, v.shape(players, opts)) if deals_file else None
    if deal_list is not None and deals is None and games is None and not v.to_target:
        deals, games = file_length(v, players, opts, len(deal_list))
    try:
        deals, games = match_length(v, deals, games)
    except RulesError as exc:
        raise fail(str(exc)) from None
    deals, games = bounded(deals, Deals | None, "--deals"), bounded(games, Games | None, "--games")
    budget = games if v.to_target else deals
    if test is not None and budget is not None and budget < test.min_pairs:
        raise fail(f"--sprt cannot decide within {budget} pairs: it decides nothing before min_pairs={test.min_pairs}; "
                   f"give more {'--games' if v.to_target else '--deals'} or a smaller min_pairs")
    if deal_list is not None and not v.to_target and len(deal_list) < (deals or 0) * (games or 1):
        raise fail(f"the deal file holds {len(deal_list)} deals; {deals_needed(deals or 0, games)}")
    try:
        v.new_game(players, opts, deals)  # checks the deal count (sport: a multiple of 4)
    except RulesError as exc:
        per_game = v.game.default_deals
        hint = (f"; for {deals} deals, give --games {deals // per_game} ({per_game} deals each)"
                if deals and per_game and games is None and deals > per_game and deals % per_game == 0 else "")
        raise fail(f"{exc}{hint}") from None
    return deal_list, deals, games


def log_path_of(log: Path | None, overwrite: bool, json_path: Path | None, v: Variant, seed: int, deals_file: Path | None, *,
                kind: str = "match", hint: str = " (without --log every match gets a log of its own)") -> Path:
    """Where the match log goes: ``--log`` (an existing one only with ``--overwrite``), or a
    fresh name under ``referee-logs/`` (``<kind>-<game>-<seed>.jsonl``, the seed as the result prints it and
    ``--seed`` takes it), claimed now."""
    for option_name, path in (("--log", log), ("--json", json_path)):
        if path is not None and path.is_dir():
            raise fail(f"{option_name} {path} is a folder; give a file name")
    if log is None:
        return claim(Path("referee-logs") / f"{kind}-{v.id}-{seed_text(seed) if deals_file is None else deals_file.stem}.jsonl")
    if log.exists() and not overwrite:
        raise fail(f"--log {log} exists; add --overwrite to replace it{hint}")
    return log


def interrupted_result(exc: BaseException, spec) -> tuple[MatchResult, BaseException]:
    """The finished pairs of a match a signal stopped (Ctrl-C, SIGTERM, SIGHUP: the bots are
    ended and the log closed); a match stopped before it had any says so and exits 130."""
    stopped = first_of(exc, Terminated)
    partial = getattr(stopped, "result", None)
    if stopped is None or not isinstance(partial, MatchResult):
        err.print(f"interrupted; the log so far is in {spec.log_path}", markup=False, highlight=False)
        raise typer.Exit(X.INTERRUPTED) from None
    return partial, stopped


def game_setup(variant_id: str, players: int | None, option: list[str] | None, deals_file: Path | None, deals: int | None,
               games: int | None, bots: int, test: SprtSpec | None = None) -> tuple[Variant, int, dict[str, Any], list[Deal] | None, int | None, int | None]:
    """The game of a match from the command line (``match``, ``play``), checked: the variant, the
    seats, the options, the deal file's deals, the deals and games, for ``bots`` bots (and
    ``test``, ``--sprt``'s, whose minimum the match's length must reach)."""
    v, players, opts = game_of(variant_id, players, option, bots)
    deal_list, deals, games = length_of(v, players, opts, deals, games, deals_file, test)
    try:
        orientations(v, players, opts, bots)
    except RulesError as exc:
        raise fail(str(exc)) from None
    return v, players, opts, deal_list, deals, games


def print_result(result, summary, *, quiet: bool, full: bool, seed: int | None, log_path: Path, json_path: Path | None) -> None:
    """A match's result on stdout as ``referee match`` prints it: the verdict alone (``quiet``),
    or the report, the seed that deals the match again (``None``: the deals came from a file)
    and where the log is."""
    try:  # after SIGHUP the terminal may be gone: the --json file and the log have the result
        if quiet:
            say(out, verdict_line(summary))
        else:
            render(summary, result.deals, result.games, out, limit=None if full else TABLE_ROWS, hints=fault_hints(result),
                   event=result.spec.event)
            if seed is not None:
                out.print(f"seed: {seed_text(seed)}   (--seed {seed_text(seed)} plays these deals again)", style="dim",
                          markup=False, soft_wrap=True)
            out.print(f"log: {log_path}" + (f"   result: {json_path}" if json_path else ""), style="dim", markup=False, soft_wrap=True)
    except OSError:
        pass


def fault_hints(result) -> list[str | None]:
    """A hint for each fault of the result, in its order: the fault's own, or its kind's."""
    from referee.matches.check import KIND_HINTS

    return [f.hint or KIND_HINTS.get(f.kind) for e in result.entries for f in e.faults]


def drop_if_empty(path: Path) -> None:
    try:
        if path.stat().st_size == 0:
            path.unlink()
    except OSError:
        pass


#: After a sandboxed bot failed to start: the sandbox is a likely cause.
SANDBOX_HINT = ("the sandbox may be why: a bot there sees only the system, its own folder, its --cwd and the paths its command "
                f"line names, under a memory cap (--memory-mb, default {DEFAULT_MEMORY_MB} MiB); try it without --sandbox, or check "
                "those paths and the cap (referee check --sandbox BOT says more)")


def isolation_of(value: str) -> Isolation:
    """``--isolation``'s value, or a one-line error naming the choices."""
    for choice in ISOLATIONS:
        if value == choice:
            if choice == "strict" and (why := freezer_missing()) is not None:
                raise fail(why)
            return choice
    raise fail(f"--isolation {value!r}: give one of {', '.join(ISOLATIONS)}")


def check_sandbox(wanted: bool, max_processes: int) -> None:
    """Refuse a sandbox that cannot be had (no bwrap) or a cap out of its bounds, before anything runs."""
    bounded(max_processes, Processes, "--max-processes")
    if wanted:
        try:
            find_bwrap()
        except SandboxUnavailable as exc:
            raise fail(str(exc)) from None


def check_log_path(log: Path) -> None:
    if log.is_dir():
        raise fail(f"{log} is a folder; give a match log (a .jsonl file `referee match` wrote)")
    if not log.is_file():
        raise fail(f"{log}: no such file")
