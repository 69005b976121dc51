"""The guard rails as tests of the suite: ``ruff check .`` (lint and import order) and ``mypy``
(types, strict for the engine and the protocol), with the settings of ``pyproject.toml``.  They
are tests so that the README's one test command, which ``.ci/run`` runs as written, runs them too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # mypy reads the whole code base (about 30 s on a fresh clone)


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def test_ruff_finds_nothing():
    run = _run("ruff", "check", ".")
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_finds_nothing():
    run = _run("mypy")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout, run.stdout
