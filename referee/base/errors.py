"""Errors the referee raises on purpose (the rules engine's own live in :mod:`referee.engine.core.errors`).

Every message is one line that names the bot and says what happened, so the CLI can print it
as is.  Messages are composed where the facts are known; these classes only carry them.
"""

from __future__ import annotations


class RefereeError(Exception):
    """Base of every error the referee raises on purpose."""


class BotError(RefereeError):
    """A bot could not be run or misbehaved at the process level.  ``bot`` is its name."""

    def __init__(self, message: str, *, bot: str) -> None:
        super().__init__(message)
        self.bot = bot


class BotNotFound(BotError):
    """The bot's command does not name something that can be run, or the spawn failed."""


class BotExited(BotError):
    """The bot's process is gone (or closed its pipes) while the referee still needed it.

    ``returncode`` is the exit status as in :attr:`subprocess.Popen.returncode` (negative for a
    signal), or ``None`` if the process was still running when it closed its stdout.
    ``stderr_tail`` holds the last lines the bot wrote to stderr.
    """

    def __init__(self, message: str, *, bot: str, returncode: int | None, stderr_tail: str) -> None:
        super().__init__(message, bot=bot)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class LineTooLong(BotError):
    """The bot wrote a line longer than the limit.  ``prefix`` holds its first 200 bytes, and
    ``evidence`` their text as a fault keeps it (given when the bytes are not at hand: a
    replayed log keeps only the text)."""

    def __init__(self, message: str, *, bot: str, prefix: bytes, limit: int, evidence: str | None = None) -> None:
        super().__init__(message, bot=bot)
        self.prefix = prefix
        self.limit = limit
        self.evidence = evidence if evidence is not None else prefix.decode("utf-8", "replace")


class BotStartError(Exception):
    """A bot could not be started at the beginning of a match (exit code 3); ``failures``: per
    process, its label, what happened and the tail of its stderr."""

    failures: list[tuple[str, str, str]] = []


class LogError(RefereeError):
    """A match log (or the folder of its stderr files) could not be created or written: a path
    that is a folder or not writable, a full disk.  The match was stopped; the message says
    where and why in one line."""
