"""The referee's command line as the tests run it: in this process (:func:`cli`, typer's test
runner) or as a real process (:func:`referee`), and what a refused command must look like
(:func:`one_line_error`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from referee.commands import app

#: The one runner of the command line in this process: every test goes through :func:`cli`.
_RUNNER = CliRunner()


def cli(*args: object, env: dict[str, str] | None = None):
    """``referee ARGS`` in this process (each argument as text; ``env``: variables set for the
    run); an exception the command did not turn into an exit is raised here, with its traceback,
    instead of hidden in the result."""
    result = _RUNNER.invoke(app, [str(a) for a in args], env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def referee(*args: str | Path, cwd: Path | None = None, timeout: float = 300, check: bool = False,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m referee ARGS`` as a real process, its input closed and its output kept as text
    (``env``: added to this process's environment)."""
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, check=check, stdin=subprocess.DEVNULL, env=None if env is None else {**os.environ, **env})


def one_line_error(result, *words: str, code: int | None = None) -> str:
    """The stderr of a refused command: one ``error:`` line, no traceback, containing ``words``
    (and the exit code ``code`` when one is given); the line."""
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]
