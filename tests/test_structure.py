"""The arrows between packages point one way: tournaments → referee → engine, and ``protocol`` is
shared.  Read from the source with ``ast`` (every import, at the top or inside a function), so a
late import added to dodge a cycle fails here too."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: package (folder) -> top-level names of this project it must never import
FORBIDDEN = {
    "referee": {"tournaments", "bench"},
    "protocol": {"referee", "tournaments", "bench"},
    "tournaments": {"bench"},
}
#: the engine is pure: the rest of the referee, processes, clocks and the network are out of reach
ENGINE_FORBIDDEN = {"tournaments", "bench", "protocol", "trio", "subprocess", "socket", "time", "asyncio"}


def imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute module name ``path`` imports, with its line (relative imports resolved).
    Each file is parsed once a session (the checks below read the whole tree several times)."""
    return _imports(path, ROOT, path.stat().st_mtime_ns)


@functools.cache
def _imports(path: Path, root: Path, _mtime: int) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = path.relative_to(root).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return found


def wrong_arrows(package: str, forbidden: set[str], exempt: str | None = None) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if exempt and exempt in path.relative_to(ROOT).parts:
            continue
        for line, module in imports(path):
            if module.split(".")[0] in forbidden:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_arrows_point_one_way(package: str) -> None:
    assert wrong_arrows(package, FORBIDDEN[package]) == []


def test_the_engine_imports_nothing_above_it() -> None:
    bad = wrong_arrows("referee/engine", ENGINE_FORBIDDEN)
    for path in sorted((ROOT / "referee/engine").rglob("*.py")):
        for line, module in imports(path):
            if module.startswith("referee.") and not module.startswith("referee.engine"):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert bad == []


def test_errors_come_from_the_errors_modules() -> None:
    """Code above the referee catches its errors from ``referee.base.errors``, never from the module
    that happens to raise them (``referee.conversation.table``, ``referee.bots.process``)."""
    bad = []
    for path in sorted((ROOT / "tournaments").rglob("*.py")):
        for line, module in imports(path):
            name = module.rsplit(".", 1)[-1]
            raisers = ("referee.conversation.table.", "referee.bots.process.", "referee.matches.match.")
            if module.startswith(raisers) and name.endswith(("Error", "Exited", "NotFound")):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert bad == []


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself can fail: a late import of tournaments inside a function is caught."""
    (tmp_path / "referee").mkdir()
    (tmp_path / "referee" / "x.py").write_text("def f():\n    from tournaments import cli\n    from . import y\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert wrong_arrows("referee", {"tournaments"}) == ["referee/x.py:2 imports tournaments", "referee/x.py:2 imports tournaments.cli"]


# -- floors, and no circles (issue 24 item 4) ------------------------------------------------------

#: The floors, lowest first, one table by folder: a module is on its folder's floor and imports
#: from its own floor or below, never above.  0 the engine and ``protocol`` (shared by the referee
#: and bots); 1 the referee at the table: the ground (errors, seeds, signals, the clock's values),
#: what a match writes down and the statistics over it, bots and their processes, the
#: conversation and its log writer, each game's side; 2 the match: the match runner and its
#: result, check, replay and verify, the reports, ``play``, the learning environments and the
#: command line; 3 ``tournaments``; 4 ``bench``.  Every folder is named here: a new one is placed on purpose.
FLOORS = {
    "protocol": 0, "referee.engine": 0, "referee.engine.core": 0, "referee.engine.games": 0,
    "referee.base": 1, "referee.records": 1, "referee.stats": 1, "referee.bots": 1, "referee.conversation": 1, "referee.sides": 1,
    "referee": 2, "referee.matches": 2, "referee.audit": 2, "referee.web": 2, "referee.play": 2, "referee.envs": 2, "referee.commands": 2,
    "tournaments": 3, "tournaments.ladder": 3,
    "bench": 4,
}
PACKAGES = ("protocol", "referee", "tournaments", "bench")


def folder_of(module: str) -> str:
    """The folder a module is in: a package (its ``__init__``) is in its own."""
    return module if (ROOT / module.replace(".", "/")).is_dir() else module.rpartition(".")[0]


def floor_of(module: str) -> int:
    return FLOORS[folder_of(module)]


def module_graph() -> dict[str, dict[str, int]]:
    """The :func:`project_graph` of ``ROOT`` (a test may point ``ROOT`` at a tree of its own)."""
    return project_graph(ROOT)


@functools.cache
def project_graph(root: Path) -> dict[str, dict[str, int]]:
    """Every module of the project and the modules of the project it imports (at the top, in a
    function or under ``TYPE_CHECKING``: a circle of types is a circle still), with a line."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if not all(part.isidentifier() for part in parts):
                continue  # no module: a script shipped as data (referee/matches/sample-bots/, check's opponents)
            modules[".".join(parts).removesuffix(".__init__")] = path
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        graph[name] = {}
        for line, imported in _imports(path, root, path.stat().st_mtime_ns):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            # a package's own __init__ is imported with each of its modules: no arrow of its own
            if imported and imported != name and not name.startswith(imported + "."):
                graph[name].setdefault(imported, line)
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The import circles: the strongly connected sets of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    assert circles(module_graph()) == []


def test_every_folder_has_a_floor() -> None:
    assert sorted({folder_of(name) for name in module_graph()}) == sorted(FLOORS)


def folder_levels(graph: dict[str, dict[str, int]]) -> dict[str, int]:
    """Each folder's level: 0 for one that imports no other folder of the project, else one more
    than the highest level among those it imports (the longest chain of folders below it)."""
    below: dict[str, set[str]] = {}
    for a, edges in graph.items():
        below.setdefault(folder_of(a), set()).update(folder_of(b) for b in edges if folder_of(b) != folder_of(a))
    levels: dict[str, int] = {}

    def level(folder: str) -> int:
        if folder not in levels:
            levels[folder] = 1 + max((level(b) for b in below[folder]), default=-1)
        return levels[folder]

    for folder in below:
        level(folder)
    return levels


#: A row of the README's layout table: the folder, and its level and floor.
_LAYOUT_ROW = re.compile(r"^\| `([\w/]+)/` (?:\(top\) )?\|.*\| (\d+) \((\d) \w+\) \|$", re.M)


def test_the_readme_pictures_the_folders_as_they_stand() -> None:
    """The layout table gives every folder its level (from the imports as they are) and its
    floor (the rule, :data:`FLOORS`), and the text counts the levels."""
    levels = folder_levels(module_graph())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = {m[1].replace("/", "."): (int(m[2]), int(m[3])) for m in _LAYOUT_ROW.finditer(readme)}
    assert shown == {folder: (level, FLOORS[folder]) for folder, level in levels.items()}
    assert f"the folders stand on {max(levels.values()) + 1} *levels*" in " ".join(readme.split())


def folders_importing_each_other(graph: dict[str, dict[str, int]]) -> list[tuple[str, str]]:
    """The pairs of folders each of which imports a module of the other (every import counted,
    late and ``TYPE_CHECKING`` ones too): no circle of modules, but a folder that cannot be read
    without the other."""
    arrows = {(folder_of(a), folder_of(b)) for a, edges in graph.items() for b in edges}
    return sorted((a, b) for a, b in arrows if a < b and (b, a) in arrows)


def test_no_two_folders_import_each_other() -> None:
    assert folders_importing_each_other(module_graph()) == []


def test_the_check_of_folders_importing_each_other_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two folders whose modules import each other's, with no circle of modules: the table
    imports the match's spec, and the match's runner the table."""
    for package in ("referee", "referee/conversation", "referee/matches"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "referee" / "conversation" / "table.py").write_text("from referee.matches.spec import Spec\n")
    (tmp_path / "referee" / "matches" / "spec.py").write_text("Spec = None\n")
    (tmp_path / "referee" / "matches" / "match.py").write_text("def f():\n    from referee.conversation import table\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    graph = module_graph()
    assert circles(graph) == []
    assert folders_importing_each_other(graph) == [("referee.conversation", "referee.matches")]


def test_no_import_runs_back_up_a_floor() -> None:
    graph = module_graph()
    up = [f"{a} (floor {floor_of(a)}):{line} imports {b} (floor {floor_of(b)})"
          for a, edges in graph.items() for b, line in edges.items() if floor_of(b) > floor_of(a)]
    assert up == []


#: Front doors: the packages of ``referee`` that people and programs enter by, on the match's
#: floor (2): the command line (whose shared helpers ``tournaments``' command line reuses), and
#: the learning environments (issue 35), which play the engine through the games' sides and start
#: bots as matches do; nothing of the referee imports them.
FRONT_DOORS = ("referee.commands", "referee.envs")
#: who may go through a front door: ``python -m referee``, the league's and the ladder's command
#: lines (the shared helpers of the referee's; the ladder's checks a newcomer as ``referee check``
#: does), and the benchmarks, which measure the environments
DOORMEN = ("referee.__main__", "tournaments.cli", "tournaments.ladder.cli", "bench")


def test_nothing_imports_a_front_door() -> None:
    graph = module_graph()
    assert all(floor_of(name) == 2 for name in graph if name.startswith(FRONT_DOORS))
    inward = [f"{a}:{line} imports {b}" for a, edges in graph.items() for b, line in edges.items()
              if b.startswith(FRONT_DOORS) and not a.startswith((*FRONT_DOORS, *DOORMEN))]
    assert inward == []


def test_the_checks_of_circles_and_floors_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A circle made only of a late import and a ``TYPE_CHECKING`` one is found, and so is an
    import from the table's floor up to the match's."""
    (tmp_path / "referee").mkdir()
    (tmp_path / "referee" / "__init__.py").write_text("")
    for package in ("conversation", "matches"):
        (tmp_path / "referee" / package).mkdir()
        (tmp_path / "referee" / package / "__init__.py").write_text("")
    (tmp_path / "referee" / "conversation" / "table.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from referee.matches.match import Spec\n")
    (tmp_path / "referee" / "matches" / "match.py").write_text("def f():\n    from referee.conversation import table\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    graph = module_graph()
    assert circles(graph) == [["referee.conversation.table", "referee.matches.match"]]
    assert [(a, b) for a, edges in graph.items() for b in edges if floor_of(b) > floor_of(a)] == [("referee.conversation.table", "referee.matches.match")]


@pytest.mark.parametrize(("game", "players", "options", "pairs"), [
    ("sport", 4, {}, True), ("kozel", 4, {}, True), ("kozel", 4, {"teams": "none"}, False), ("kozel", 3, {}, False),
    ("telephone", 4, {}, True), ("osel", 4, {}, True), ("draw", 4, {}, False),
])
def test_the_report_asks_the_game_whether_seats_play_in_pairs(game: str, players: int, options: dict, pairs: bool) -> None:
    """Pair play is the game's to say (``Variant.pair_play``), not a list of game ids in the report:
    telephone and osel in fours play in pairs as sport does."""
    from rich.console import Console

    from referee.bots.bot import Bot
    from referee.conversation.players import Entry
    from referee.engine import variant
    from referee.matches.match import orientations
    from referee.matches.report import deals_table
    from referee.matches.results import MatchResult
    from referee.matches.spec import MatchSpec

    v = variant(game)
    opts = v.resolve_options(players, options)
    bots = [Bot(name, [name]) for name in "abc"[: 2 if players % 2 == 0 else players]]
    spec = MatchSpec(v, bots, players, opts, games=1 if v.to_target else None, deals=None if v.to_target else 1)
    with MatchResult(spec, orientations(v, players, opts, len(bots)), [Entry(b, i, spec.tc) for i, b in enumerate(bots)]) as result:
        console = Console(width=200, record=True)
        console.print(deals_table(result.summary()))
    assert ("wrote seats 0+2 / 1+3" in console.export_text()) is pairs


# -- the tree's habits --------------------------------------------------------------------------------

#: The most suppressions of the type checker the tree may hold (issue 43): each is a known hole in
#: the types, said where it is.
MOST_IGNORES = 20
_IGNORE = re.compile(r"#\s*type:\s*ignore\b(\[[^\]]*\])?(.*)$")


def suppressions(root: Path) -> tuple[list[str], list[str]]:
    """Every ``type: ignore`` comment in ``root``'s Python files, and those of them with no reason
    (a comment after it that says why)."""
    found, bare = [], []
    for path in sorted(root.rglob("*.py")):
        if ".venv" in path.parts or "build" in path.parts:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if (m := _IGNORE.search(line)) is not None:
                where = f"{path.relative_to(root)}:{n}"
                found.append(where)
                if not re.match(r"\s+#\s*\w", m[2]):
                    bare.append(where)
    return found, bare


def test_few_suppressions_of_the_type_checker_each_with_its_reason(tmp_path: Path) -> None:
    found, bare = suppressions(ROOT)
    assert len(found) <= MOST_IGNORES, found
    assert bare == []
    ignore = "# type" + ": ignore[misc]"
    (tmp_path / "x.py").write_text(f"a = 1  {ignore}\nb = 2  {ignore}  # why\n")
    assert suppressions(tmp_path) == (["x.py:1", "x.py:2"], ["x.py:1"])


def test_the_tests_run_the_command_line_through_one_helper() -> None:
    """typer's test runner is made in tests/support/commands.py only (:func:`support.commands.cli`)."""
    made = [f"{path.relative_to(ROOT)}" for path in sorted((ROOT / "tests").rglob("*.py"))
            if "support" not in path.parts and "CliRunner" + "(" in path.read_text(encoding="utf-8")]
    assert made == []


# -- one signal policy (referee.base.signals) ---------------------------------------------------------


@pytest.fixture
def stop_handlers():
    """The stop signals' handlers put back after the test: after a stop they stay ignored."""
    import signal

    from referee.base.signals import STOP_SIGNALS

    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    yield
    for s, handler in before.items():
        signal.signal(s, handler)


@pytest.mark.parametrize("signals", [("SIGINT", "SIGINT"), ("SIGINT", "SIGTERM"), ("SIGTERM", "SIGHUP"), ("SIGHUP", "SIGINT")])
async def test_a_second_signal_cannot_cut_the_cleanup_short(signals: tuple[str, str], stop_handlers) -> None:
    """The first signal cancels the body; the second arrives while the body cleans up (shielded,
    as the match closes its table) and is only counted: the cleanup finishes, then Terminated."""
    import os
    import signal

    import trio

    from referee.base.signals import Terminated, cancel_on_signals

    seen: list[str] = []
    cleaned = False
    with pytest.raises(Terminated, match=f"terminated by {signals[0]}"):
        async with cancel_on_signals(lambda stop: seen.append(stop.name), raise_after=True) as stop:
            try:
                os.kill(os.getpid(), getattr(signal, signals[0]))
                await trio.sleep_forever()
            finally:
                with trio.CancelScope(shield=True):
                    os.kill(os.getpid(), getattr(signal, signals[1]))
                    with trio.fail_after(10):  # the cleanup goes on until the second signal was received
                        while stop.count < 2:
                            await trio.sleep(0.001)
                    cleaned = True
    assert cleaned and seen == [signals[0]] and stop.count == 2


AFTER_THE_CLEANUP = """\
import os, signal, sys, time
import trio
from referee.base.signals import Terminated, cancel_on_signals

async def run():
    async with cancel_on_signals(raise_after=True):
        os.kill(os.getpid(), signal.SIGINT)
        await trio.sleep_forever()

try:
    trio.run(run)
except Terminated:
    pass
os.kill(os.getpid(), getattr(signal, sys.argv[1]))  # after the receiver closed, before the exit
time.sleep(0.2)
print("exits as it chose", flush=True)
sys.exit(130)
"""


@pytest.mark.parametrize("second", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_second_signal_after_the_cleanup_does_not_kill_the_process(second: str) -> None:
    """A second signal that comes when the run has cleaned up and its receiver is closed (a
    loaded machine delays it that long) finds the stop signals ignored: the process still
    prints what it has and exits 130, instead of dying of the signal."""
    proc = subprocess.run([sys.executable, "-c", AFTER_THE_CLEANUP, second], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (130, "exits as it chose\n"), proc.stderr


async def test_without_a_signal_the_body_runs_to_its_end() -> None:
    import signal

    import trio

    from referee.base.signals import STOP_SIGNALS, cancel_on_signals

    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    async with cancel_on_signals(raise_after=True) as stop:
        await trio.sleep(0)
    assert stop.signal is None and stop.count == 0
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before  # the handlers are back as they were


# -- typed results -------------------------------------------------------------------------------


@pytest.mark.parametrize(("struct", "start", "end"), [("DealResult", "A **deal** entry", "A **game"), ("GameResult", "A **game", "\n\n")])
def test_result_entries_are_structs_whose_fields_the_docs_name_in_order(struct: str, start: str, end: str) -> None:
    """A deal's and a game's result are msgspec structs in the driver; ``--json`` gives their
    fields in declaration order, and docs/result-json.md names each of them in that order."""
    import re

    import msgspec

    import referee.matches.results as M

    cls = getattr(M, struct)
    fields = [f.name for f in msgspec.structs.fields(cls)]
    doc = (ROOT / "docs" / "result-json.md").read_text(encoding="utf-8")
    part = doc[doc.index(start):]
    part = part[: part.index(end, len(start))]
    named = [n for n in re.findall(r"`([a-z_]+)`", part) if n in fields]
    assert list(dict.fromkeys(named)) == fields


def test_importing_one_game_module_first_still_finds_every_game():
    """A game module imported on its own registers only itself; the registry must still load the
    others when a variant is first looked up (it used to see a non-empty registry and stop)."""
    code = ("import referee.engine.games.mexican_train\n"
            "from referee.engine import variant, variant_names\n"
            "variant('sport')\n"
            "print(len(variant_names()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert out.returncode == 0, out.stderr
    games = Path(ROOT, "referee", "engine", "games")
    assert int(out.stdout) == len([p for p in games.glob("*.py") if p.name != "__init__.py"])


# -- every game's side owns what people and bots see of it ----------------------------------------


def deal_classes() -> set[str]:
    """The engine's concrete deal-state classes: every class of the engine that makes moves
    (``legal_plays`` and ``push``), the :class:`DealState` protocol itself aside."""
    import importlib
    import inspect
    import pkgutil

    import referee.engine
    from referee.engine.core.state import DealState

    found = set()
    for info in pkgutil.walk_packages(referee.engine.__path__, "referee.engine."):
        for name, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass):
            if cls is not DealState and callable(getattr(cls, "legal_plays", None)) and callable(getattr(cls, "push", None)):
                found.add(name)
    return found


def names_used(path: Path, names: set[str]) -> list[str]:
    """Where ``path`` names one of ``names``: a name, an attribute or an imported name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    hits = []
    for node in ast.walk(tree):
        name = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None)
        if name in names:
            hits.append(f"{path.relative_to(ROOT)}:{node.lineno} names {name}")
        elif isinstance(node, ast.ImportFrom):
            hits += [f"{path.relative_to(ROOT)}:{node.lineno} imports {a.name}" for a in node.names if a.name in names]
    return hits


#: Above the engine, only the game side modules name a concrete deal class.  ``referee.audit.legacy``
#: (the frozen format-1 verifier) would be exempt too, but names none.
SIDES = ROOT / "referee" / "sides"


def test_nothing_above_the_engine_but_the_games_sides_names_a_deal_class() -> None:
    """Replay, verify, the web report, ``check``, staging, the table, leagues and benchmarks ask a
    deal's side (:func:`referee.sides.side_for`); a game on a new layout adds a side module and
    touches none of them."""
    names = deal_classes()
    assert {"LineDeal", "CrossDeal", "TrainDeal", "KolbasaDeal"} <= names
    bad = []
    for package in ("referee", "tournaments", "bench", "protocol"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if ROOT / "referee" / "engine" in path.parents or SIDES in path.parents:
                continue
            bad += names_used(path, names)
    assert bad == []


def test_the_check_of_deal_class_names_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "x.py").write_text("from referee.engine.core.trains import TrainDeal\nimport referee.engine.core.kolbasa as k\nk.KolbasaDeal\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert sorted(names_used(tmp_path / "x.py", {"TrainDeal", "KolbasaDeal"})) == ["x.py:1 imports TrainDeal", "x.py:3 names KolbasaDeal"]


def test_a_side_module_dropped_into_the_package_is_found(tmp_path: Path) -> None:
    """A game on a new layout adds its side module to ``referee/sides`` and edits nothing there
    or elsewhere: the package finds the module, and a deal state of the class it names (or of a
    subclass) gets its side; the line games' side stays everyone else's.  (In a fresh interpreter
    with the package's path widened to a folder holding the new module, so the tree is not
    touched.)"""
    (tmp_path / "toy_layout.py").write_text(
        "from referee.engine.core.line import LineDeal\n"
        "from referee.sides.base import GameSide\n"
        "class ToyDeal(LineDeal):\n    pass\n"
        "class ToySide(GameSide):\n    deals = ('toy_layout.ToyDeal',)\n    layout = 'toy'\n"
        "SIDE = ToySide()\n")
    code = ("import sys\n"
            f"sys.path.insert(0, {str(tmp_path)!r})\n"
            "import referee.sides as sides\n"
            f"sides.__path__.append({str(tmp_path)!r})\n"
            "import toy_layout\n"
            "from referee.engine.core.line import LineDeal\n"
            "class Sub(toy_layout.ToyDeal):\n    pass\n"
            "print(sides.side_for(object.__new__(toy_layout.ToyDeal)).layout, sides.side_for(object.__new__(Sub)).layout,\n"
            "      sides.side_for(object.__new__(LineDeal)).layout, len(sides.every_side()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    families = len([p for p in SIDES.glob("*.py") if "\nSIDE = " in p.read_text()])  # not base.py, pages.py
    assert out.stdout.split() == ["toy", "toy", "line", str(families + 1)]


# -- each family's knowledge behind its own files (issue 34 item 4) ------------------------------

#: the files of a family named ``x``: its deal state in ``referee/engine/core/x.py``, its side in
#: ``referee/sides/x.py``, and its table's renderer, named by the side's ``layout``, in this file
RENDERERS = ROOT / "referee" / "web" / "static" / "replay.js"


def test_a_family_is_its_engine_module_its_side_module_and_its_renderer() -> None:
    """Every family the registry's games fall into has exactly these files, named alike: a new
    layout adds ``referee/engine/core/x.py``, ``referee/sides/x.py`` and a renderer in
    ``replay.js``'s ``LAYOUTS``, and its games' modules in ``referee/engine/games``."""
    import re

    from referee.engine import variant, variant_names
    from referee.sides import every_side, side_of

    layouts = re.search(r"const LAYOUTS = \{([^}]*)\}", RENDERERS.read_text(encoding="utf-8"))
    assert layouts is not None
    renderers = dict(re.findall(r"(\w+): (\w+)", layouts.group(1)))
    families = {}
    for side in every_side():
        name = type(side).__module__.rpartition(".")[2]
        assert (SIDES / f"{name}.py").is_file()
        assert [d.rpartition(".")[0] for d in side.deals] == [f"referee.engine.core.{name}"], name
        assert (ROOT / "referee" / "engine" / "core" / f"{name}.py").is_file()
        assert side.layout in renderers and f"function {renderers[side.layout]}(" in RENDERERS.read_text(encoding="utf-8")
        families[name] = side
    used = set()
    for game in variant_names(refereed=True):
        v = variant(game)
        side = side_of(v, v.default_players, {})
        used.add(type(side).__module__.rpartition(".")[2])
    assert used == set(families) == {"line", "cross", "trains", "kolbasa"}


def game_id_branches(path: Path, ids: set[str]) -> list[str]:
    """Where ``path`` compares a game's id (an expression ending in ``id``, ``game``, ``variant``,
    ``vid``) with a game id written as a literal, or tests it against literals (``in (...)``)."""
    def literals(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ids:
            return [node.value]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [v for e in node.elts for v in literals(e)]
        if isinstance(node, ast.Dict):
            return [v for k in node.keys if k is not None for v in literals(k)]
        return []

    def names_a_game(node: ast.AST) -> bool:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        return name in ("id", "game", "variant", "vid", "variant_id")

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = [v for s in sides for v in literals(s)]
            if named and any(names_a_game(s) for s in sides):
                hits.append(f"{path.relative_to(ROOT)}:{node.lineno} branches on {', '.join(named)}")
    return hits


#: Files that may branch on a game's id: none outside the games' own files (their modules in
#: ``referee/engine/games``, their families' sides in ``referee/sides``).
GAME_ID_EXCEPTIONS: set[str] = set()


def test_nothing_but_a_games_own_files_branches_on_its_id() -> None:
    """The sampler, the bot library, the learning environments, the web report, the leagues and
    the sample bots ask the game (its hooks, its side), never compare its id with a name."""
    from referee.engine import variant_names

    ids = set(variant_names())
    bad = []
    for package in ("referee", "protocol", "tournaments", "sample_bots"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if ROOT / "referee" / "engine" / "games" in path.parents or SIDES in path.parents:
                continue
            if str(path.relative_to(ROOT)) not in GAME_ID_EXCEPTIONS:
                bad += game_id_branches(path, ids)
    assert bad == []


def test_the_check_of_game_id_branches_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "x.py").write_text("if k.variant == 'kolbasa':\n    pass\nok = step['kind'] == 'draw'\n"
                                   "if state.game in ('osel', 'telephone'):\n    pass\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert game_id_branches(tmp_path / "x.py", {"kolbasa", "draw", "osel", "telephone"}) == [
        "x.py:1 branches on kolbasa", "x.py:4 branches on osel, telephone"]
