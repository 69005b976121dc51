"""The README's quick start, held to what CI runs and to what the suite needs: its test command is
``.ci/run``'s last line byte for byte, and the extras that line installs bring every package a test
module imports (a fresh clone that follows the README collects every module)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What the tests import from this repository: the packages at its root, tests/ and its folders, and
#: the sample bots (tests/sample_bots/test_search_bot.py imports search_bot.py).
LOCAL = ({p.name for p in ROOT.iterdir() if p.is_dir()} | {p.stem for p in (ROOT / "tests").iterdir()}
         | {p.stem for p in (ROOT / "sample_bots").glob("*.py")})


def _quick_start() -> list[str]:
    """The lines of the README's quick-start block."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Quick start\n\n```sh\n(.*?)^```", readme, re.M | re.S)
    assert block is not None, "README.md has no quick-start block"
    return block.group(1).splitlines()


def _test_command() -> str:
    [line] = [line for line in _quick_start() if "pytest" in line]
    return line


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> tuple[str, set[str]]:
    """A requirement's distribution and its extras: ``"referee[rl]>=1"`` -> ``("referee", {"rl"})``."""
    match = re.match(r"\s*([A-Za-z0-9._-]+)\s*(?:\[([^\]]*)\])?", requirement)
    assert match is not None, requirement
    return _norm(match.group(1)), {e.strip() for e in (match.group(2) or "").split(",") if e.strip()}


def _installed_by(extras: set[str]) -> set[str]:
    """The distributions ``pip install '.[EXTRAS]'`` asks for by name: the dependencies and each
    extra's, following the extras that name this project's own (``referee[rl]``)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    own = _norm(project["name"])
    names = {_requirement_name(r)[0] for r in project["dependencies"]}
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        assert extra in project["optional-dependencies"], f"no extra {extra!r} in pyproject.toml"
        for requirement in project["optional-dependencies"][extra]:
            name, more = _requirement_name(requirement)
            if name == own:
                todo += more
            else:
                names.add(name)
    return names


def _extras_of(command: str) -> set[str]:
    match = re.search(r"pip install (?:-e )?'?\.\[([^\]]*)\]'?", command)
    assert match is not None, f"no `pip install '.[...]'` in {command!r}"
    return {e.strip() for e in match.group(1).split(",")}


def _imported_at_load(path: Path) -> set[str]:
    """The top-level names a test module imports as it loads (imports in functions, and those
    guarded by a ``try``, may be optional: ``pytest.importorskip`` and the like)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_ci_runs_the_readme_test_command_as_written_and_nothing_after_it():
    command = _test_command()
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]
    assert ci[-1] == command, f".ci/run ends with {ci[-1]!r}, the README says {command!r}"
    assert sum(line == command for line in ci) == 1


def test_the_readme_test_command_installs_what_every_test_module_imports():
    installed = _installed_by(_extras_of(_test_command()))
    # The packages the learning environments', the cluster's and the browser's tests import.
    for needed in ("numpy", "pettingzoo", "gymnasium", "open-spiel", "shimmy", "dask", "playwright", "hypothesis", "pytest"):
        assert needed in installed, f"the README's test command does not install {needed}"
    provides = packages_distributions()
    unmet = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for name in _imported_at_load(path) - LOCAL - set(sys.stdlib_module_names) - {p.stem for p in path.parent.glob("*.py")}:
            if not {_norm(d) for d in provides.get(name, [])} & installed:
                unmet.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert not unmet, f"imported by tests and not installed by {_test_command()!r}: {unmet}"


def test_the_test_extra_brings_the_learning_environments():
    """The README's plain `.[test]`: the regression of issue 40, where tests/envs could not be
    imported after the README's command because numpy came only with `[rl]`."""
    assert _installed_by({"rl"}) <= _installed_by({"test"})


def test_the_sandbox_tests_find_bubblewrap_on_path_as_the_referee_does(tmp_path, monkeypatch):
    """Not only at /usr/bin/bwrap: a bwrap found on PATH runs the sandbox's tests, as it runs the
    sandbox (issue 40: 114 tests skipped where the referee would have found it)."""
    import support

    from referee.bots import sandbox as S

    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setattr(S, "BWRAP", str(tmp_path / "not-here" / "bwrap"))
    monkeypatch.setenv("PATH", str(fake.parent))
    assert support.bwrap() == S.find_bwrap() == str(fake)
    monkeypatch.setenv("PATH", str(tmp_path / "not-here"))
    assert support.bwrap() is None
