"""What every command line of the project shares (``tournaments`` too): the two consoles, a
failure as one line on stderr and its exit, a line said as it is, the progress bar, and
telling an interruption from an error inside trio's exception groups.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from referee.base import exitcodes as X
from referee.base.console import Console

out = Console()
err = Console(stderr=True)


def fail(message: str, code: int = X.USAGE) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise.  ``message`` is printed as it is,
    never read as rich markup: it may quote a bot's stderr, name or output."""
    err.print(Text("error: ", style="bold red") + Text(message), highlight=False, soft_wrap=True)
    return typer.Exit(code)


def progress_bar(total: int | None, quiet: bool) -> Progress | None:
    if quiet or not err.is_terminal:
        return None
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True)


def say(console: Console, line: str) -> None:
    """One line as it is (never markup), unwrapped; nothing when the terminal is gone (SIGHUP)."""
    try:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    except OSError:
        pass


@contextmanager
def held_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP are ignored in the body (the result of a match is written and
    printed whole); the handlers before are back after."""
    import signal
    import threading

    from referee.base.signals import STOP_SIGNALS

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def interrupted(exc: BaseException) -> bool:
    """Ctrl-C, SIGTERM or SIGHUP, possibly wrapped in trio's exception groups."""
    from referee.base.signals import Terminated

    if isinstance(exc, (KeyboardInterrupt, Terminated)):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(interrupted(e) for e in exc.exceptions)
    return False


def first_of(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``exc`` itself or the first ``kind`` inside it (trio wraps errors of concurrent tasks
    in exception groups)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := first_of(inner, kind)) is not None:
                return found
    return None
