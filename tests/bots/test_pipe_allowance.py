"""The pipe-buffer allowance (PROTOCOL.md, "Fair play": not closed as an ordinary user): a host
that runs sandboxed bots as an ordinary user is told, once, as a league or ladder begins to play,
that its bots still share it and how to close it; root's bots (a uid each) and a host that set
``fs.pipe-user-pages-soft`` to 0 are told nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from referee.bots.sandbox import PIPE_USER_PAGES_SOFT, SETPRIV, shared_pipe_allowance
from tests.bots.test_sandbox_channels import place, user, user_python  # noqa: F401 - fixtures
from tests.support import needs_bwrap

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"


def setting(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pipe-user-pages-soft"
    path.write_text(text)
    return path


def test_an_ordinary_user_with_the_allowance_on_is_told_how_to_close_it(tmp_path):
    note = shared_pipe_allowance(1000, setting(tmp_path, "16384\n"))
    assert note is not None and "\n" not in note
    assert "16384" in note and "sysctl fs.pipe-user-pages-soft=0" in note and "Fair play" in note


@pytest.mark.parametrize(("euid", "text"), [(0, "16384\n"), (1000, "0\n"), (1000, ""), (1000, "many\n")])
def test_root_an_allowance_turned_off_or_unreadable_gives_no_note(tmp_path, euid, text):
    assert shared_pipe_allowance(euid, setting(tmp_path, text)) is None


def test_a_missing_setting_gives_no_note(tmp_path):
    assert shared_pipe_allowance(1000, tmp_path / "absent") is None


def _machine_allowance() -> int:
    try:
        return int(PIPE_USER_PAGES_SOFT.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pytest.skip("this kernel has no fs.pipe-user-pages-soft to read")


def _as_user(user: tuple[int, int], place: Path, *argv: str) -> subprocess.CompletedProcess:  # noqa: F811
    python, path = user_python(), [str(ROOT), sysconfig.get_paths()["purelib"]]
    uid, gid = user
    return subprocess.run([SETPRIV, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", python, "-m", "referee", *argv],
                          capture_output=True, text=True, cwd=place, timeout=300, stdin=subprocess.DEVNULL,
                          env={"PATH": os.environ["PATH"], "HOME": str(place), "PYTHONPATH": os.pathsep.join(path)}, check=False)


def _host_file(place: Path, name: str, sandbox: bool) -> Path:  # noqa: F811
    for script in ("first_bot.py", "greedy_bot.py"):
        shutil.copy(SAMPLES / script, place / script)
        (place / script).chmod(0o644)
    path = place / f"{name}.toml"
    path.write_text(f'name = "{name}"\nseed = 1234567890123456789012\nisolation = "concurrent"\nsandbox = {str(sandbox).lower()}\n\n'
                    '[game]\nvariant = "block"\ngames = 1\n\n'
                    f'[[bot]]\nname = "first"\ncommand = "{place / "first_bot.py"}"\n\n'
                    f'[[bot]]\nname = "greedy"\ncommand = "{place / "greedy_bot.py"}"\n')
    path.chmod(0o644)
    return path


@needs_bwrap
@pytest.mark.slow  # real bot processes, as an ordinary user
@pytest.mark.parametrize("command", ["league", "ladder"])
def test_a_host_run_by_an_ordinary_user_says_once_what_its_sandboxed_bots_share(place, user, command):  # noqa: F811
    if user is None:
        pytest.skip("the tests run as an ordinary user: the note is tested through shared_pipe_allowance above")
    on = _machine_allowance() != 0
    for sandbox in (True, False):
        path = _host_file(place, f"{command}-{sandbox}", sandbox)
        run = ["league", "run", str(path), "-q"] if command == "league" else ["ladder", "run", str(path), "--max-deals", "2", "-q"]
        done = _as_user(user, place, *run)
        assert done.returncode == 0, done.stdout + done.stderr
        told = done.stderr.count("pipe-buffer allowance")
        assert told == (1 if sandbox and on else 0), done.stderr
