"""Shared test setup: every test is checked for processes and file descriptors it left behind.

Processes are found four ways: children of this process (zombies included: an unreaped child is
a leak too); live processes carrying this session's marker in their environment, which every
descendant inherits unless the referee gave it a clean one (bots get one); and live processes of
a bot of a referee that is ours (this process, or a referee command it ran, which carries the
marker): those in the bot's cgroup (referee.bots.cgroups, named after the referee's pid), which
holds every descendant of a bot, even one that called setsid() to leave its bot's process
group, and those running as one of the referee's sandbox uids (referee.bots.sandbox, as root).
"""

from __future__ import annotations

import os
import re
import signal
import time
import uuid

import pytest
from hypothesis import settings

from referee.bots.sandbox import UID_BASE

# Hypothesis's deadline is about speed, which no test here is about (a loaded machine made some
# examples slow once and flaky): none.
settings.register_profile("referee", deadline=None)
settings.load_profile("referee")

_MARKER_NAME = "REFEREE_TEST_SESSION"
_MARKER = f"{os.getpid()}-{uuid.uuid4().hex}"
os.environ[_MARKER_NAME] = _MARKER
_MARKER_ENTRY = f"{_MARKER_NAME}={_MARKER}".encode()

_CGROUP_NAME = re.compile(rb"/referee-bot-(\d+)-")
_GRACE = 3.0  # seconds for killed processes to finish dying before a leak is reported


def _our_processes() -> dict[int, str]:
    """pid -> short description of every process that is ours, other than this one."""
    me = os.getpid()
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        close = stat.rindex(b")")
        comm = stat[stat.index(b"(") + 1 : close].decode(errors="replace")
        state, ppid = stat[close + 2 :].split()[:2]
        if int(ppid) == me:
            found[pid] = f"{pid} ({comm}, child, state {state.decode()})"
            continue
        if state == b"Z":  # an orphan that is dead already: its reaper is not us
            continue
        if _marked(pid):
            found[pid] = f"{pid} ({comm}, descendant, state {state.decode()})"
            continue
        try:
            with open(f"/proc/{pid}/cgroup", "rb") as f:
                referees = {int(m) for m in _CGROUP_NAME.findall(f.read())}
            with open(f"/proc/{pid}/status", "rb") as f:
                uid = int(f.read().split(b"\nUid:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if uid >= UID_BASE:
            referees.add((uid - UID_BASE) // 64)
        if any(r == me or _marked(r) for r in referees):
            found[pid] = f"{pid} ({comm}, a bot's, state {state.decode()})"
    return found


def _marked(pid: int) -> bool:
    """Whether the live process ``pid`` carries this session's marker."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return _MARKER_ENTRY in f.read()
    except OSError:
        return False


def _open_fds() -> dict[int, str]:
    """fd -> what it points to, for this process (the descriptor used to list is left out, and the
    referee's run-queue clock, which keeps one ``schedstat`` open per thread that has played a
    match: referee.base.runqueue)."""
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if not target.endswith("/schedstat"):
            fds[int(name)] = target
    return fds


@pytest.fixture(autouse=True)
def no_leaks():
    """Fail a test that leaves a process alive or a file descriptor open."""
    processes_before = _our_processes().keys()
    fds_before = _open_fds()
    yield
    deadline = time.monotonic() + _GRACE
    while (left := {p: d for p, d in _our_processes().items() if p not in processes_before}) and time.monotonic() < deadline:
        time.sleep(0.01)
    leaked_fds = {fd: target for fd, target in _open_fds().items() if fds_before.get(fd) != target}
    for pid in left:  # clean up so that later tests start clean
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(pid, os.WNOHANG)
        except OSError:
            pass
    problems = []
    if left:
        problems.append("processes left alive: " + ", ".join(left.values()))
    if leaked_fds:
        problems.append("file descriptors left open: " + ", ".join(f"{fd} -> {t}" for fd, t in sorted(leaked_fds.items())))
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)


# -- every genuine log of the test suite verifies (issue 22) ---------------------------------------


@pytest.fixture(autouse=True)
def every_log_the_referee_writes_verifies(request):
    """Each match log the referee writes in this process during a test, left as it wrote it, is
    played again by ``referee verify`` after the test: consistent, or (a match stopped by a
    signal, a full disk, a bot that never started) incomplete, never inconsistent.  A test that
    edits a log writes another file, or changes this one (then its bytes differ and it is left
    alone); ``@pytest.mark.logs_unverified`` opts a test out, saying why."""
    import hashlib

    from referee.conversation.log import MatchLog

    written: list[tuple[object, str]] = []
    real_close = MatchLog.close

    def digest_of(path) -> str:
        with open(path, "rb") as f:  # streamed: a long match's log is not read into memory at once
            return hashlib.file_digest(f, "sha256").hexdigest()

    def close(self) -> None:
        had_file = self._file is not None
        real_close(self)
        if had_file and self.path is not None:
            try:
                written.append((self.path, digest_of(self.path)))
            except OSError:
                pass

    # A patch of its own, not the test's monkeypatch: the test's patches (a late clock, say) are
    # undone before this fixture's teardown, so the logs are verified by the referee as it is.
    patch = pytest.MonkeyPatch()
    patch.setattr(MatchLog, "close", close)
    try:
        yield
    finally:
        patch.undo()
    if request.node.get_closest_marker("logs_unverified") is not None:
        return
    from referee.audit.verify import Incomplete, Inconsistent, verify
    from referee.records.records import Damaged, header_of

    for path, digest in written:
        try:
            if digest_of(path) != digest or header_of(path).format < 2:
                continue
        except (OSError, Damaged):
            continue
        try:
            verify(path)
        except Incomplete:
            pass
        except Inconsistent as exc:
            pytest.fail(f"a log the referee wrote in this test does not verify: {exc}", pytrace=False)
