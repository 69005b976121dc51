"""``referee check``: a bot played against the sample bots in every seating and game, and the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import trio
import typer

from referee.base import exitcodes as X
from referee.base.errors import BotError, LogError
from referee.bots.sandbox import DEFAULT_MEMORY_MB, DEFAULT_PROCESSES
from referee.bots.spawn import bot_name, resolve_command
from referee.commands.app import app
from referee.commands.options import GAME_PANEL, LIMITS_PANEL, OUTPUT_PANEL, TC_PANEL, bounded, check_sandbox, claim, isolation_of, seed_option, warn_short_seed
from referee.commands.shared import err, fail, first_of, interrupted, out, progress_bar
from referee.engine import refereed_variant, variant_names
from referee.engine.core.errors import RulesError
from referee.matches.job import ClockJob, MarginMs, MemoryMb


def checked(run_check, *args):
    """``trio.run(run_check, *args)``; Ctrl-C, SIGTERM and a log that cannot be written end the
    command with their exit code and one line."""
    try:
        return trio.run(run_check, *args)
    except BaseException as exc:
        if interrupted(exc):
            err.print("interrupted")
            raise typer.Exit(X.INTERRUPTED) from None
        if (log_error := first_of(exc, LogError)) is not None:
            raise fail(f"{log_error}; the check was stopped") from None
        raise


@app.command(epilog="Example: referee check mybot.py --variant kozel --deals 8\n\n"
             "Exit codes: 0 PASS, 5 FAIL (the report says why), 2 usage, 3 the bot could not be started at all, 130 interrupted.")
def check(
    bot: Annotated[str, typer.Argument(help="The bot: a path (.py and .js run with python and node) or a quoted command line.", show_default=False)],
    deals: Annotated[int, typer.Option(help="Deals per game in each seating.", rich_help_panel=GAME_PANEL)] = 4,
    variant_id: Annotated[Optional[str], typer.Option("--variant", "-v", help="Check only this game: " + ", ".join(variant_names(refereed=True)) + ".", rich_help_panel=GAME_PANEL)] = None,
    seed: Annotated[Optional[str], typer.Option(help="Seed of the deals (and of the random sample bots).  Default: a fresh secret seed, printed in the report.", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    move_time: Annotated[float, typer.Option(help="Seconds the bot has for each move.", rich_help_panel=TC_PANEL)] = 5.0,
    startup_time: Annotated[float, typer.Option(help="Seconds the bot has to answer hello.", rich_help_panel=TC_PANEL)] = 10.0,
    time_margin: Annotated[float, typer.Option(help="Milliseconds an answer may be read late and still count (the overrun is logged).", rich_help_panel=TC_PANEL)] = 0.0,
    log_dir: Annotated[Optional[Path], typer.Option(help="Where the logs and stderr files go (default: referee-logs/check-<bot>, or -2, -3… if taken).", rich_help_panel=OUTPUT_PANEL)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Write into --log-dir even if it holds files (an earlier check's are replaced).", rich_help_panel=OUTPUT_PANEL)] = False,
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Run the bot in the sandbox leagues use; if it fails, check it without too and say whether the sandbox is why.", rich_help_panel=LIMITS_PANEL)] = False,
    cwd: Annotated[Optional[Path], typer.Option(help="The bot's working directory (relative paths on its command line are taken from it).", rich_help_panel=LIMITS_PANEL)] = None,
    memory_mb: Annotated[Optional[int], typer.Option(help=f"Memory cap of the bot's processes, in MiB: its address space, default none; in the sandbox its memory and its /tmp, default {DEFAULT_MEMORY_MB}.", rich_help_panel=LIMITS_PANEL, show_default=False)] = None,
    concurrency: Annotated[Optional[int], typer.Option("--concurrency", "-j", help="Games checked at once after the first (default: the cores, at most 3).", rich_help_panel=GAME_PANEL, show_default=False)] = None,
    isolation: Annotated[str, typer.Option(help="strict: only the process whose turn it is runs, as in a league by default (see `referee match --help`).", rich_help_panel=LIMITS_PANEL)] = "concurrent",
) -> None:
    """Check a bot against the protocol: a few deals of every game against the sample bots, then everything it got wrong, and PASS or FAIL."""
    from referee.matches.check import CheckOptions, missing_samples, run_check, setups
    from referee.matches.check import render as render_check

    if missing := missing_samples():
        are = "is" if len(missing) == 1 else "are"
        listed = ", ".join(missing[:-1]) + (" and " if len(missing) > 1 else "") + missing[-1]
        raise fail(f"the check plays against the sample bots, and {listed} {are} missing: reinstall referee")
    if variant_id is not None:
        try:
            refereed_variant(variant_id)
        except RulesError as exc:
            raise fail(str(exc)) from None
    if deals < 1:
        raise fail("--deals must be at least 1")
    if concurrency is not None and concurrency < 1:
        raise fail(f"--concurrency (-j): at least 1, not {concurrency}")
    check_sandbox(sandbox, DEFAULT_PROCESSES)
    tc = bounded({"startup": startup_time, "move": move_time, "bank": None, "increment": 0.0,
                  "margin": bounded(time_margin, MarginMs, "--time-margin") / 1000}, ClockJob,
                 {"startup": "--startup-time", "move": "--move-time"}).time_control()
    bounded(memory_mb, MemoryMb | None, "--memory-mb")
    if cwd is not None:
        if not cwd.is_dir():
            raise fail(f"--cwd {cwd}: no such directory")
        cwd = cwd.resolve()
    try:
        argv = resolve_command(bot, cwd)
    except BotError as exc:
        raise fail(str(exc)) from None
    name = bot_name(bot)
    if log_dir is None:
        log_dir = claim(Path("referee-logs") / f"check-{name}", directory=True)
    elif log_dir.is_dir() and any(log_dir.iterdir()) and not overwrite:
        raise fail(f"--log-dir {log_dir} holds files already; add --overwrite to write over them (without --log-dir every check gets a folder of its own)")
    elif log_dir.exists() and not log_dir.is_dir():
        raise fail(f"--log-dir {log_dir} is not a folder")
    opts = CheckOptions(deals=deals, tc=tc, seed=seed_option(seed), only=variant_id, log_dir=log_dir, sandbox=sandbox, cwd=cwd, env=None, memory_mb=memory_mb,
                        isolation=isolation_of(isolation), **({} if concurrency is None else {"jobs": concurrency}))
    warn_short_seed(seed, opts.seed, "in the report")
    total = len(setups(variant_id))
    bar = progress_bar(total, False)

    def progress(game) -> None:
        if bar is not None:
            bar.update(task, description=game.setup.title, advance=1)

    if bar is not None:
        with bar:
            task = bar.add_task("checking", total=total)
            report = checked(run_check, bot, argv, name, opts, progress)
    else:
        report = checked(run_check, bot, argv, name, opts)
    for line in render_check(report):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if sandbox and not report.passed:
        from dataclasses import replace

        from referee.matches.check import sandbox_verdict

        err.print("checking again without the sandbox, to see whether it is the cause…")
        plain = checked(run_check, bot, argv, name, replace(opts, sandbox=False, log_dir=opts.log_dir / "without-sandbox"))
        out.print("")
        for line in sandbox_verdict(report, plain):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
    if report.not_started is not None:
        raise typer.Exit(X.BOT_START)  # the report's last line says so: one verdict, not an error besides
    if not report.passed:
        raise typer.Exit(X.CHECK_FAILED)
