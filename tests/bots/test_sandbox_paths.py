"""A bot given as "interpreter + relative script" starts in the sandbox (issue 33 item 1).

PROTOCOL.md ("The bot's process"): relative paths on a bot's command line are taken from its
``--cwd``, else from the referee's directory (a league's bot: from its ``cwd``, else the league
file's directory), and a sandboxed bot runs in its ``--cwd``, else in its own directory.  Each
form below is played in a sandboxed match, from the bot's folder (``perl bot.pl``), from the
folder above it (``perl bots/bot.pl``) and through ``..`` with ``--cwd``; then by ``check`` and
in a league run from another directory.  Every test passes ``--seed``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from support import needs_bwrap
from support.commands import cli

from tests.bots.test_sandbox_fairplay import folder

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"
FIRST = SAMPLES / "first_bot.py"

pytestmark = [needs_bwrap, pytest.mark.slow]  # real bot processes

PERL_BOT = """\
# The first legal play, in Perl (JSON::PP is in Perl's core).
use strict; use warnings; use JSON::PP;
$| = 1;
while (my $line = <STDIN>) {
    my $msg = decode_json($line);
    if ($msg->{type} eq 'hello') { print encode_json({type => 'hello', name => 'perl_first', protocol => 1}), "\\n"; }
    elsif ($msg->{type} eq 'turn') { print encode_json({%{$msg->{legal}[0]}, type => 'play'}), "\\n"; }
    elsif ($msg->{type} eq 'match_end') { last; }
}
"""
#: A shell script that runs the Perl bot beside it: found from the script's own path ($0).
SH_BOT = 'exec perl "$(dirname "$0")/inner.pl"\n'


def make_bot(form: str, where: Path) -> str:
    """The bot of ``form`` written into ``where``; the file its interpreter is given."""
    folder(where)
    if form == "python3":
        shutil.copy(FIRST, where / "bot.py")
        return "bot.py"
    if form == "node":
        shutil.copy(SAMPLES / "random_bot.js", where / "bot.js")
        return "bot.js"
    (where / "inner.pl").write_text(PERL_BOT)
    if form == "perl":
        (where / "bot.pl").write_text(PERL_BOT)
        return "bot.pl"
    (where / "bot.sh").write_text(SH_BOT)
    return "bot.sh"


FORMS = ["python3", "perl", "sh", "node"]


def needs(form: str) -> None:
    if shutil.which(form) is None:
        pytest.skip(f"{form} is not installed here")


def match(*args: str) -> tuple[int, str]:
    r = cli("match", *args, "--sandbox", "--variant", "sport", "--deals", "4", "--seed", "11", "-q")
    return r.exit_code, r.output


def test_the_sample_bots_readme_example_plays_in_the_sandbox(tmp_path, monkeypatch):
    """sample_bots/README.md's own command line, from the repository's folder, with the sandbox."""
    monkeypatch.chdir(ROOT)
    r = cli("match", "python3 sample_bots/random_bot.py 7", "sample_bots/greedy_bot.py", "--variant", "block",
                                 "--games", "1", "--sandbox", "--seed", "5", "--log", str(tmp_path / "m.jsonl"), "-q")
    assert r.exit_code == 0, r.output
    assert "can't open file" not in r.output


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("place", ["its own folder", "the folder above", "--cwd and ..", "a sibling folder and .."])
def test_an_interpreter_and_a_relative_script_play_in_the_sandbox(tmp_path, monkeypatch, form, place):
    needs(form)
    home = folder(tmp_path / "home")
    script = make_bot(form, home / "bots")
    log = ["--log", str(tmp_path / "m.jsonl")]
    if place == "its own folder":
        monkeypatch.chdir(home / "bots")
        code, out = match(f"{form} {script}", str(FIRST), *log)
    elif place == "the folder above":
        monkeypatch.chdir(home)
        code, out = match(f"{form} bots/{script}", str(FIRST), *log)
    elif place == "a sibling folder and ..":  # issue 40 §3: bwrap could not chdir to home/tests/../bots
        monkeypatch.chdir(folder(home / "tests"))
        code, out = match(f"{form} ../bots/{script}", str(FIRST), *log)
    else:
        other = folder(home / "other")
        monkeypatch.chdir(tmp_path)  # neither the bot's folder nor its --cwd
        code, out = match(f"{form} ../bots/{script}", str(FIRST), "--cwd", str(other), "--cwd", str(SAMPLES), *log)
    assert code == 0, out


def test_a_relative_data_folder_on_the_command_line_is_shown(tmp_path, monkeypatch):
    """A relative path that is not the script (a data folder the bot opens) is shown too, and
    given to the bot so that it leads there from the bot's own directory."""
    from tests.bots.test_sandbox_fairplay import DATA_BOT

    home = folder(tmp_path / "home")
    folder(home / "code")
    (home / "code" / "data_bot.py").write_text(DATA_BOT)
    folder(home / "data")
    (home / "data" / "book.txt").write_text("6-6 first\n")
    monkeypatch.chdir(home)
    code, out = match("python3 code/data_bot.py data", str(FIRST), "--log", str(tmp_path / "m.jsonl"))
    assert code == 0, out


@pytest.mark.parametrize("form", ["python3", "perl"])
def test_check_passes_an_interpreter_and_a_relative_script_in_the_sandbox(tmp_path, monkeypatch, form):
    home = folder(tmp_path / "home")
    script = make_bot(form, home / "bots")
    other = folder(home / "other")
    monkeypatch.chdir(tmp_path)
    r = cli("check", f"{form} ../bots/{script}", "--cwd", str(other), "--sandbox", "--variant", "sport",
                                 "--deals", "1", "--seed", "3", "--log-dir", str(tmp_path / "check"))
    assert r.exit_code == 0, r.output
    monkeypatch.chdir(home)
    r = cli("check", f"{form} bots/{script}", "--sandbox", "--variant", "sport", "--deals", "1", "--seed", "3",
                                 "--log-dir", str(tmp_path / "check2"))
    assert r.exit_code == 0, r.output


def league(home: Path, commands: dict[str, str]) -> Path:
    lines = ["seed = 7", "[game]", 'variant = "sport"', "deals = 4", "[clock]", "startup = 30.0", "move = 10.0"]
    for name, command in commands.items():
        lines += ["[[bot]]", f'name = "{name}"', f'command = "{command}"']
    path = home / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_league_plays_interpreters_and_relative_scripts_in_the_sandbox(tmp_path, monkeypatch):
    """The league's relative paths are its file's directory's, wherever `league run` is started."""
    home = folder(tmp_path / "home")
    perl = make_bot("perl", home / "perl")
    python = make_bot("python3", home / "py")
    path = league(home, {"perl": f"perl perl/{perl}", "py": f"python3 ./py/../py/{python}"})
    monkeypatch.chdir(tmp_path)
    r = cli("league", "run", str(path), "-q")
    assert r.exit_code == 0, r.output
    table = cli("league", "table", str(path), "--format", "json")
    assert table.exit_code == 0, table.output
    rows = [v for v in json.loads(table.output).values() if isinstance(v, list) and v and "bot" in v[0]][0]
    assert {r["bot"] for r in rows} == {"perl", "py"}, rows
    assert all(r[k] == 0 for r in rows for k in ("timeout", "illegal", "bad_output", "out_of_turn", "crash", "startup")), rows


def test_a_league_names_the_sandbox_when_a_bot_fails_only_there(tmp_path, monkeypatch):
    home = folder(tmp_path / "home")
    elsewhere = folder(tmp_path / "elsewhere")
    (elsewhere / "book.txt").write_text("x")
    (folder(home / "code") / "bot.py").write_text(f"open({str(elsewhere / 'book.txt')!r}).read()\n" + FIRST.read_text())
    shutil.copy(FIRST, home / "code" / "first.py")
    path = league(home, {"reader": f"{sys.executable} code/bot.py", "first": "code/first.py"})
    monkeypatch.chdir(tmp_path)
    r = cli("league", "run", str(path), "-q")
    assert "sandbox" in r.output, r.output


def _verdict(output: str) -> list[str]:
    """What ``check --sandbox`` says after checking again without the sandbox, less its last
    line (where the logs are)."""
    return output.partition("to see whether it is the cause…\n")[2].strip().splitlines()[:-1]


def test_check_names_a_relative_file_that_the_sandboxs_working_directory_lacks(tmp_path, monkeypatch):
    """Issue 33 item 1: a bot started from the folder above its own opens data/book.txt, there
    without the sandbox; in the sandbox it runs in its own directory, where there is none.  The
    check names the file, both directories and what to do, in whole."""
    home = folder(tmp_path / "home")
    folder(home / "data")
    (home / "data" / "book.txt").write_text("x")
    (folder(home / "code") / "bot.py").write_text('open("data/book.txt").read()\n' + FIRST.read_text())
    monkeypatch.chdir(home)
    r = cli("check", "python3 code/bot.py", "--sandbox", "--variant", "sport", "--deals", "1", "--seed", "3",
                                 "--log-dir", str(tmp_path / "check"))
    assert r.exit_code == 3, r.output
    assert _verdict(r.output) == [
        "It passes without the sandbox: it fails only because of the sandbox.",
        f"It could not open data/book.txt: a relative name is taken from the bot's working directory, which in the sandbox is "
        f"its own directory, {home / 'code'}, where there is no data/book.txt; without the sandbox it ran in this one, {home}, "
        f"which has {home / 'data' / 'book.txt'}.  Give --cwd {home} (a league: cwd), or have the bot open the file from its "
        "own directory."]


def test_check_names_a_relative_file_outside_what_the_sandbox_shows(tmp_path, monkeypatch):
    """The same file named ../data/book.txt from the bot's --cwd: it exists, but the sandbox does
    not show it, and the check says where the name leads."""
    home = folder(tmp_path / "home")
    folder(home / "data")
    (home / "data" / "book.txt").write_text("x")
    (folder(home / "code") / "bot.py").write_text('open("../data/book.txt").read()\n' + FIRST.read_text())
    monkeypatch.chdir(tmp_path)
    r = cli("check", "python3 bot.py", "--cwd", str(home / "code"), "--sandbox", "--variant", "sport",
                                 "--deals", "1", "--seed", "3", "--log-dir", str(tmp_path / "check"))
    assert r.exit_code == 3, r.output
    assert _verdict(r.output) == [
        "It passes without the sandbox: it fails only because of the sandbox.",
        f"It could not open ../data/book.txt, which from its working directory {home / 'code'} is {home / 'data' / 'book.txt'}: "
        "that file exists, but outside what the sandbox shows it (the system, the bot's own directory, its working "
        "directory, the paths its command line names, and an empty /tmp).  Keep it beside the bot, or name it (or its "
        "folder) on the bot's command line."]


def test_check_runs_a_script_named_through_dotdot_from_a_sibling_folder_in_the_sandbox(tmp_path, monkeypatch):
    """Issue 40 §3: ``cd tests && referee check "node ../sample_bots/random_bot.js" --sandbox``
    gave "bwrap: Can't chdir" and a hint to keep the file beside the bot, which it was."""
    needs("node")
    home = folder(tmp_path / "home")
    make_bot("node", home / "sample_bots")
    monkeypatch.chdir(folder(home / "tests"))
    r = cli("check", "node ../sample_bots/bot.js", "--sandbox", "--variant", "sport", "--deals", "1",
            "--seed", "3", "--log-dir", tmp_path / "check")
    assert r.exit_code == 0, r.output
    assert "Can't chdir" not in r.output


def test_a_file_shown_but_named_through_a_folder_the_sandbox_does_not_show_is_said_to_be_so(tmp_path):
    """The hint for a file the bot could not open names the ``..`` when the file itself is shown
    (it is in the bot's own folder) and only the way there is not."""
    from referee.matches.check import _missing_outside

    home = folder(tmp_path / "home")
    (folder(home / "bots") / "bot.py").write_text("")
    (home / "bots" / "book.txt").write_text("x")
    folder(home / "tests")
    name = f"{home}/tests/../bots/book.txt"
    lines = _missing_outside(f"FileNotFoundError: [Errno 2] No such file or directory: '{name}'",
                             ["python3", str(home / "bots" / "bot.py")], None)
    assert lines == [f"It could not open {name}: the sandbox shows that file, but the path goes up (..) from a folder it does "
                     f"not show, which the kernel must pass through.  Name it without .. ({home / 'bots' / 'book.txt'})."]
