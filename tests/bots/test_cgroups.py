"""A bot's cgroup freezer (strict isolation freezes and thaws twice a move): it freezes and
thaws for real, opens its control file once and keeps it, never lends it to a bot, and lets it
go with the cgroup."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from referee.bots.cgroups import BotCgroup, join

pytestmark = pytest.mark.slow  # a real process in a real cgroup


def _group() -> BotCgroup:
    group = BotCgroup.create()
    if group is None:
        pytest.skip("no cgroup the referee may write to")
    return group


def _frozen(group: BotCgroup) -> bool:
    d = group.dirs[0]
    events = d / "cgroup.events"
    if events.exists():
        return "frozen 1" in events.read_text().splitlines()
    return (d / "freezer.state").read_text().strip() == "FROZEN"


def _wait_for(what, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.005)
    return what()


def _open_in(group: BotCgroup) -> list[int]:
    """This process's descriptors open on a file of the group's cgroups."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
        if any(target.startswith(f"{d}/") for d in group.dirs):
            found.append(int(name))
    return found


def test_the_freezer_file_is_opened_once_kept_from_bots_and_closed_with_the_cgroup(monkeypatch):
    group = _group()
    fds = group.join_files()
    child = subprocess.Popen(["sleep", "30"], preexec_fn=lambda: join(fds))
    for fd in fds:
        os.close(fd)
    dirs = list(group.dirs)
    assert _open_in(group) == []
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (opened.append(str(path)), real_open(path, *a, **k))[1])
    try:
        for _ in range(50):
            if not group.freeze(True):
                pytest.skip("no freezer in this cgroup")
            group.freeze(False)
        assert len(opened) == len(group.dirs)  # once per cgroup, not twice a move
        kept = _open_in(group)
        assert len(kept) == len(group.dirs)
        for fd in kept:
            assert not os.get_inheritable(fd)  # a bot started later does not get it

        assert group.freeze(True)
        assert _wait_for(lambda: _frozen(group)), "the kept file froze nothing"
        assert group.freeze(False)
        assert _wait_for(lambda: not _frozen(group)), "the kept file thawed nothing"
    finally:
        child.kill()
        child.wait()
        group.remove()
    group.dirs = dirs
    assert _open_in(group) == []  # removing the cgroup lets its files go
    group.dirs = []
    assert not group.freeze(True)  # and a removed cgroup has no freezer left to write
