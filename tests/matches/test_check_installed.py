"""``referee check`` from a plain install, as the README's quick start makes one (``pip install .``):
the wheel holds the sample bots the check plays against, so it works outside the checkout."""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
from support.commands import cli, one_line_error

ROOT = Path(__file__).resolve().parents[2]
#: What a wheel is built from (the packages and what pyproject.toml names), without the tests.
SOURCES = ("pyproject.toml", "README.md", "referee", "protocol", "tournaments", "sample_bots")


def _run(argv: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)


@pytest.mark.slow  # builds a wheel, makes a venv and runs a check
def test_check_works_from_an_installed_wheel_outside_the_checkout(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "referee-logs"))
        else:
            shutil.copy2(ROOT / name, source / name)
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", source], tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = (tmp_path / "dist").glob("referee-*.whl")
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    put = _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel], tmp_path)
    assert put.returncode == 0, put.stdout + put.stderr
    # The dependencies from this environment's site-packages, after the venv's own (a .pth line is
    # a plain path: the editable install's own .pth there is not read, so the checkout stays out).
    [own] = [Path(p) for p in _run([python, "-c", "import site; print(*site.getsitepackages())"], tmp_path).stdout.split()]
    (own / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")

    where = _run([python, "-c", "import referee.matches.check as c; print(c.SAMPLE_DIR)"], tmp_path)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the wheel's package, not the checkout

    away = tmp_path / "elsewhere"
    away.mkdir()
    shutil.copy2(ROOT / "sample_bots" / "first_bot.py", away / "first_bot.py")
    run = _run([venv / "bin" / "referee", "check", "first_bot.py", "--variant", "block", "--seed", "1"], away)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.rstrip().splitlines()[-1].startswith("PASS"), run.stdout


def test_missing_sample_bots_are_named_in_one_line_of_english(tmp_path, monkeypatch):
    import referee.matches.check as C

    monkeypatch.setattr(C, "SAMPLE_DIR", tmp_path)
    line = one_line_error(cli("check", str(ROOT / "sample_bots" / "first_bot.py")), code=2)
    names = [str(tmp_path / s) for s in C.SAMPLES]
    assert f"{names[0]}, {names[1]} and {names[2]} are missing: reinstall referee" in line, line
    (tmp_path / "greedy_bot.py").write_text("")
    (tmp_path / "random_bot.py").write_text("")
    line = one_line_error(cli("check", str(ROOT / "sample_bots" / "first_bot.py")), code=2)
    assert f"and {names[2]} is missing" in line, line
