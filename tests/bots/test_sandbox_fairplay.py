"""Fair play in the sandbox: no bot sees a file that is not its own (issue 21), and a bot sees
what its command line names (issue 23) and the referee's packages (issue 26).

Every attack here is made by tests/hostile_bots/attacker.py from inside the sandbox, and read
back from its stderr log: each path it tries is reported ``refused`` or ``SUCCEEDED``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import trio
from support import needs_bwrap
from support.commands import cli

from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.spawn import Confinement
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

ROOT = Path(__file__).resolve().parents[2]
ATTACKER = Path(__file__).resolve().parents[1] / "hostile_bots" / "attacker.py"
FIRST = ROOT / "sample_bots" / "first_bot.py"
HANG = 90

pytestmark = [needs_bwrap, pytest.mark.slow]  # real bot processes


def folder(path: Path) -> Path:
    """A folder every user may read (the bot runs as another user when the referee is root;
    pytest's own folders are private to root)."""
    path.mkdir(parents=True, exist_ok=True)
    for p in (path, *path.parents):
        if p == Path("/tmp") or p == p.parent:
            break
        p.chmod(p.stat().st_mode | 0o755)
    return path


def bots_in(where: Path, *names: str) -> dict[str, Path]:
    """The attacker and copies of first_bot in ``where``, by name."""
    folder(where)
    out = {}
    for name in names:
        out[name] = where / f"{name}.py"
        shutil.copy(ATTACKER if name == "attacker" else FIRST, out[name])
    return out


def attacker(path: Path, *args: str | Path, cwd: Path | None = None) -> Bot:
    return Bot("attacker", [sys.executable, str(path), *map(str, args)], Confinement(sandbox=True, cwd=cwd))


def honest(path: Path, name: str = "honest") -> Bot:
    return Bot(name, [sys.executable, str(path)], Confinement(sandbox=True))


async def play(bots: list[Bot], log: Path, stderr_dir: Path | None = None, deal_file: str | None = None):
    spec = MatchSpec(variant("sport"), bots, 4, variant("sport").resolve_options(4), deals=4, seed=3,
                     tc=TimeControl(startup=30, move=10), log_path=log, stderr_dir=stderr_dir or log.with_name(log.stem + ".stderr"),
                     deal_file_name=deal_file)
    with trio.fail_after(HANG):
        return await run_match(spec)


def attack_lines(stderr_dir: Path, bot: str = "attacker") -> list[str]:
    return [line for p in sorted(stderr_dir.rglob(f"{bot}*.stderr.log")) for line in p.read_text(errors="replace").splitlines()
            if line.startswith("attack ")]


def assert_refused(lines: list[str], paths: list[Path]) -> None:
    """Every path was tried (by each process of the attacker) and refused."""
    assert lines, "the attacker never attacked"
    assert not [line for line in lines if "SUCCEEDED" in line], lines
    for p in paths:
        assert any(f"({p}:" in line for line in lines), (p, lines)


# -- other bots' files -------------------------------------------------------------------------


def test_a_league_bot_reads_no_other_league_bots_file(tmp_path):
    """Three bots in one folder (one in a folder below it): in every match the attacker plays,
    neither its opponent's files nor those of the bot it is not playing can be opened."""

    league = folder(tmp_path / "league")
    bots = bots_in(league / "bots", "attacker", "quiet")
    other = bots_in(league / "bots" / "third", "third")["third"]
    (other.parent / "book.txt").write_text("the third bot's opening book\n")
    targets = [bots["quiet"], other, other.parent / "book.txt", other.parent]
    command = [sys.executable, str(bots["attacker"]), "read", *map(str, targets)]
    text = "\n".join([
        "[game]", 'variant = "sport"', "deals = 4", "[clock]", "startup = 30.0", "move = 10.0",
        "[[bot]]", 'name = "attacker"', f"command = {json.dumps(command)}",
        "[[bot]]", 'name = "quiet"', f"command = {json.dumps(str(bots['quiet']))}",
        "[[bot]]", 'name = "third"', f"command = {json.dumps(str(other))}",
    ]) + "\n"
    path = league / "league.toml"
    path.write_text(text, encoding="utf-8")
    r = cli("league", "run", str(path), "-q")
    assert r.exit_code == 0, r.output
    logs = sorted((league / "league-logs").rglob("attacker*.stderr.log"))
    assert len({p.parent for p in logs}) == 2, logs  # it played both others
    assert_refused(attack_lines(league / "league-logs"), targets)


async def test_a_bot_named_on_the_command_line_of_another_stays_hidden(tmp_path):
    """Naming the opponent's program on one's own command line does not make it one's own."""
    bots = bots_in(tmp_path / "bots", "attacker", "quiet")
    log = tmp_path / "logs" / "m.jsonl"
    await play([attacker(bots["attacker"], "read", bots["quiet"], bots["quiet"].parent), honest(bots["quiet"])], log)
    lines = attack_lines(log.with_name("m.stderr"))
    assert_refused([x for x in lines if str(bots["quiet"]) + ":" in x], [bots["quiet"]])
    assert any(f"{bots['quiet'].parent}: lists" in x and "SUCCEEDED" in x for x in lines), lines  # its own folder it sees


# -- the referee's files -----------------------------------------------------------------------


@pytest.mark.parametrize("linked", ["log", "bots"])
async def test_a_log_reached_through_a_symlinked_folder_stays_hidden(tmp_path, linked):
    real = folder(tmp_path / "bots")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    bots_in(real, "attacker", "quiet")
    log = (link if linked == "log" else real) / "m.jsonl"
    where = real if linked == "log" else link  # the bots' commands name the other path
    targets = [real / "m.jsonl", real / "m.stderr", link / "m.jsonl"]
    await play([attacker(where / "attacker.py", "read", *targets), honest(where / "quiet.py")], log)
    assert (real / "m.jsonl").stat().st_size > 0
    assert_refused(attack_lines(real / "m.stderr"), targets)


async def test_an_earlier_matchs_files_in_the_bots_own_folder_are_hidden(tmp_path):
    bots = bots_in(tmp_path / "bots", "attacker", "quiet", "first")
    home = bots["attacker"].parent
    await play([honest(bots["first"], "first"), honest(bots["quiet"])], home / "m1.jsonl")
    shutil.copy(home / "m1.jsonl", home / "renamed.jsonl")  # a log without its stderr folder beside it
    shutil.copy(home / "m1.jsonl", folder(home / "archive" / "2024") / "m0.jsonl")  # two folders down
    r = subprocess.run([sys.executable, "-m", "referee", "deals", "generate", "--variant", "sport", "--seed", "3", "--count", "4"],
                       capture_output=True, text=True, cwd=tmp_path, check=True)
    (home / "deals.jsonl").write_text(r.stdout)
    (home / "notes.jsonl").write_text('{"mine": "a data file of the bot that looks like nothing of the referee\'s"}\n')
    from tournaments.store import open_store

    store = open_store(home / "spring.db", create=True)  # a league's database, open (its schema still in its journal)
    targets = [home / "m1.jsonl", home / "m1.stderr", home / "renamed.jsonl", home / "deals.jsonl", home / "archive" / "2024" / "m0.jsonl",
               home / "spring.db", home / "spring.db-wal"]
    log = tmp_path / "logs" / "m2.jsonl"
    try:
        await play([attacker(bots["attacker"], "read", *targets, home / "notes.jsonl"), honest(bots["quiet"])], log)
    finally:
        store.close()
    lines = attack_lines(log.with_name("m2.stderr"))
    assert_refused([x for x in lines if "notes.jsonl" not in x], targets)
    assert any("notes.jsonl: opened" in x for x in lines), lines  # the bot's own files stay its own


def test_the_default_logs_folder_is_hidden_as_a_whole(tmp_path, monkeypatch):
    """Bots in the folder the referee runs in: its referee-logs/ (earlier matches' logs, and
    whatever else is kept there) cannot be listed."""

    work = folder(tmp_path / "work")
    bots_in(work, "attacker", "quiet")
    monkeypatch.chdir(work)
    first = cli("match", "quiet.py", "quiet.py", "--name", "a", "--name", "b", "--deals", "4", "-q")
    assert first.exit_code == 0, first.output
    logs = work / "referee-logs"
    (logs / "notes.txt").write_text("the organiser's notes\n")
    targets = [logs, logs / "notes.txt", *sorted(logs.glob("*.jsonl"))]
    second = cli("match", f"attacker.py read {' '.join(map(str, targets))}", "quiet.py", "--sandbox",
                                      "--deals", "4", "--log", str(tmp_path / "m.jsonl"), "-q")
    assert second.exit_code == 0, second.output
    assert_refused(attack_lines(tmp_path / "m.stderr"), targets)


# -- what a bot's command line names (issue 23) ------------------------------------------------


DATA_BOT = """\
import json, os, sys
book = open(os.path.join(sys.argv[1], "book.txt")).read()  # a bot that cannot start without its data
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "data_bot", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
"""


async def test_a_python_bot_reads_the_data_folder_its_command_line_names(tmp_path):
    code = folder(tmp_path / "code")
    data = folder(tmp_path / "data")
    (code / "data_bot.py").write_text(DATA_BOT)
    (data / "book.txt").write_text("6-6 first\n")
    bot = Bot("data", [sys.executable, str(code / "data_bot.py"), str(data)], Confinement(sandbox=True))
    result = await play([bot, honest(FIRST)], tmp_path / "m.jsonl")
    assert result.entries[0].faults == [], [f.detail for f in result.entries[0].faults]
    assert len(result.deals) == 8


def test_check_runs_a_bot_in_its_cwd(tmp_path):
    """`referee check --cwd DIR`: the command's relative paths are DIR's, the bot runs there,
    and in the sandbox DIR is shown."""
    home = folder(tmp_path / "home")
    (home / "data_bot.py").write_text(DATA_BOT)
    folder(home / "data")
    (home / "data" / "book.txt").write_text("6-6 first\n")
    code, out = check("data_bot.py data", "--cwd", str(home), "--log-dir", str(tmp_path / "check"))
    assert code == 0, out
    code, out = check("data_bot.py data", "--cwd", str(tmp_path / "nowhere"), "--log-dir", str(tmp_path / "check2"))
    assert code == 2


async def test_two_bots_share_a_library_both_their_command_lines_name(tmp_path):
    data = folder(tmp_path / "shared")
    (data / "book.txt").write_text("6-6 first\n")
    bots = []
    for name in ("one", "two"):
        code = folder(tmp_path / name)
        (code / "data_bot.py").write_text(DATA_BOT)
        bots.append(Bot(name, [sys.executable, str(code / "data_bot.py"), str(data)], Confinement(sandbox=True)))
    result = await play(bots, tmp_path / "m.jsonl")
    assert [f.detail for e in result.entries for f in e.faults] == []
    assert len(result.deals) == 8


JAVA_BOT = """\
import java.io.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; System.out.flush()) {
            if (line.contains("\\"type\\":\\"hello\\"")) {
                System.out.println("{\\"type\\":\\"hello\\",\\"name\\":\\"java_first\\",\\"protocol\\":1}");
            } else if (line.contains("\\"type\\":\\"turn\\"")) {
                int i = line.indexOf('{', line.indexOf("\\"legal\\":[")), depth = 0, j = i;
                for (; j < line.length(); j++) {
                    if (line.charAt(j) == '{') depth++;
                    if (line.charAt(j) == '}' && --depth == 0) break;
                }
                System.out.println("{\\"type\\":\\"play\\"," + line.substring(i + 1, j + 1));
            } else if (line.contains("\\"type\\":\\"match_end\\"")) {
                break;
            }
        }
    }
}
"""


@pytest.fixture
def java_classes(tmp_path) -> Path:
    """A folder holding a compiled first-legal bot, Main."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no javac and java here (apt-get install default-jdk-headless)")
    classes = folder(tmp_path / "java" / "classes")
    (classes / "Main.java").write_text(JAVA_BOT)
    subprocess.run(["javac", "Main.java"], cwd=classes, check=True, timeout=HANG)
    for p in classes.iterdir():
        p.chmod(0o644)
    return classes


def check(*args: str) -> tuple[int, str]:

    result = cli("check", *args, "--sandbox", "--variant", "sport", "--deals", "1")
    return result.exit_code, result.stdout


@pytest.mark.slow
def test_a_java_bot_given_its_class_path_passes_the_check_in_the_sandbox(tmp_path, java_classes):
    code, out = check(f"java -cp {java_classes} Main", "--log-dir", str(tmp_path / "absolute"))
    assert code == 0, out
    # a relative class path, taken from --cwd
    code, out = check("java -cp classes Main", "--cwd", str(java_classes.parent), "--log-dir", str(tmp_path / "relative"))
    assert code == 0, out


@pytest.mark.slow
def test_check_says_a_java_bot_cannot_find_its_class_in_the_sandbox(tmp_path, java_classes):
    # Behind a shell the class path is one word of a script: the sandbox cannot see it named.
    code, out = check(f"sh -c 'exec java -cp {java_classes} Main'", "--log-dir", str(tmp_path / "check"))
    assert code == 3, out
    assert "ClassNotFoundException" in out
    assert "it fails only because of the sandbox" in out
    assert "it cannot find a class, module or library it loads" in out
    assert "Its stderr does not say why" not in out


def test_check_says_a_python_bot_cannot_find_its_module_in_the_sandbox(tmp_path):
    code_dir = folder(tmp_path / "code")
    lib = folder(tmp_path / "lib")
    (lib / "helper.py").write_text("")
    (code_dir / "bot.py").write_text(f"import sys\nsys.path.insert(0, {str(lib)!r})\nimport helper\n" + DATA_BOT.replace(
        'book = open(os.path.join(sys.argv[1], "book.txt")).read()', ""))
    code, out = check(str(code_dir / "bot.py"), "--log-dir", str(tmp_path / "check"))
    assert code == 3, out
    assert "ModuleNotFoundError" in out
    assert "it cannot find a class, module or library it loads" in out


def test_a_match_names_the_sandbox_when_a_sandboxed_bot_cannot_start(tmp_path):

    code_dir = folder(tmp_path / "code")
    (code_dir / "bot.py").write_text("import sys\nsys.path.insert(0, '/nowhere-else')\nopen(sys.argv[1]).read()\n")
    secret = folder(tmp_path / "elsewhere") / "book.txt"
    secret.write_text("x")
    r = cli("match", f"{code_dir / 'bot.py'} {secret.parent}/../elsewhere/book.txt", str(FIRST),
                                 "--sandbox", "--log", str(tmp_path / "m.jsonl"), "--deals", "4")
    assert r.exit_code == 3, r.output
    hint = [line for line in r.output.splitlines() if "the sandbox may be why" in line]
    assert len(hint) == 1 and "without --sandbox" in hint[0], r.output
    plain = cli("match", str(code_dir / "bot.py"), str(FIRST), "--log", str(tmp_path / "p.jsonl"), "--deals", "4")
    assert "the sandbox may be why" not in plain.output


# -- the referee's own packages (issue 26) -----------------------------------------------------


IMPORTER = """\
import os, sys
import referee.engine
from protocol.bot import run

probes = PROBES  # in the script, not on its command line: what a command line names, the bot sees


def choose(turn, state):
    while probes:
        path = probes.pop(0)
        try:
            if os.path.isdir(path):
                names = os.listdir(path)
                print(f"attack read: {'SUCCEEDED' if names else 'refused'} ({path}: lists {sorted(names)})")
            else:
                open(path, "rb").close()
                print(f"attack read: SUCCEEDED ({path}: opened)")
        except OSError as e:
            print(f"attack read: refused ({path}: {e.strerror})")
    return turn.legal[0].tile, turn.legal[0].end


run(choose, name="importer", version=referee.engine.__name__)
"""


async def test_a_sandboxed_python_bot_imports_the_referee_and_sees_nothing_else_of_its_repository(tmp_path):
    code = folder(tmp_path / "code")
    logs = ROOT / "referee-logs"
    made_logs = not logs.exists()
    sentinel = logs / f"sandbox-test-{uuid.uuid4().hex}.jsonl"
    folder(logs)
    sentinel.write_text('{"k":"match"}\n')
    try:
        targets = [logs, sentinel, ROOT / "tests", ROOT / "tests" / "bots" / "test_sandbox.py", ROOT / "pyproject.toml"]
        (code / "importer.py").write_text(IMPORTER.replace("PROBES", repr([*map(str, targets), str(ROOT)])))
        bot = Bot("importer", [sys.executable, str(code / "importer.py")], Confinement(sandbox=True))
        result = await play([bot, honest(FIRST)], tmp_path / "m.jsonl")
    finally:
        sentinel.unlink()
        if made_logs:
            shutil.rmtree(logs, ignore_errors=True)
    assert result.entries[0].faults == [], [f.detail for f in result.entries[0].faults]
    assert len(result.deals) == 8
    lines = attack_lines(tmp_path / "m.stderr", "importer")
    assert_refused([x for x in lines if f"({ROOT}:" not in x], targets)
    listing = [x for x in lines if f"({ROOT}:" in x]
    assert listing, lines
    shown = set(json.loads(listing[0].split("lists ", 1)[1].rstrip(")").replace("'", '"')))
    assert {"referee", "protocol"} <= shown and not shown & {"tests", "referee-logs", "pyproject.toml", "sample_bots"}, shown
