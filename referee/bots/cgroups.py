"""Per-bot control groups, where the machine lets the referee make them.

A bot process joins a cgroup of its own before it runs its command, and every process it
starts stays in that cgroup whatever it does (``setsid()``, double forks): ending the seat
kills every member, so nothing a bot started outlives it.  In the sandbox a memory cgroup also
holds the bot's memory limit, so that running out ends in a kill the referee can put a name to
("out of memory") instead of a failed allocation.

cgroup v2 (the unified hierarchy, pure or beside v1) is used for tracking when the referee may
write there; else a v1 hierarchy.  Memory comes from v2 when its controller is enabled for the
referee's cgroup, else from the v1 ``memory`` hierarchy.  The referee's own cgroup is never
changed.  When nothing is writable (an ordinary user without a delegated cgroup) there is no
cgroup: the bot's process group and the holders of its pipes are all that is killed.

Cgroups left by a referee that died without cleaning up (``kill -9``) are emptied and removed
by the next referee that makes one beside them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time
from pathlib import Path

import trio

__all__ = ["BotCgroup", "freezer_missing"]

_PREFIX = "referee-bot-"


def _mounts() -> dict[str, Path]:
    """Mount points by hierarchy: ``"2"`` for the unified one, else each v1 controller name."""
    found: dict[str, Path] = {}
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, extra = left.split(), right.split()
        if len(fields) < 5 or len(extra) < 3:
            continue
        if extra[0] == "cgroup2":
            found.setdefault("2", Path(fields[4]))
        elif extra[0] == "cgroup":
            for option in extra[2].split(","):
                found.setdefault(option, Path(fields[4]))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup path by hierarchy key (as in :func:`_mounts`)."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return paths
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            paths["2"] = path
        else:
            for c in controllers.split(","):
                paths[c] = path
    return paths


def _parent_dir(key: str, mounts: dict[str, Path], own: dict[str, str]) -> Path | None:
    """The directory where bot cgroups of this hierarchy go (beside nothing: under our own
    cgroup), if the referee may make them there."""
    if key not in mounts or key not in own:
        return None
    d = mounts[key] / own[key].lstrip("/")
    return d if os.access(d, os.W_OK | os.X_OK) and (d / "cgroup.procs").exists() else None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _pids(d: Path) -> list[int]:
    return [int(x) for x in _read(d / "cgroup.procs").split()]


class BotCgroup:
    """The cgroups of one bot process: one for tracking (always), one for memory (when a limit
    is asked for and the machine has a memory controller the referee may use)."""

    def __init__(self, dirs: list[Path], memory: Path | None, memory_mb: int | None) -> None:
        self.dirs = dirs
        self.memory = memory
        self.memory_mb = memory_mb if memory is not None else None
        # The freezer's control files, opened on the first freeze and kept: strict isolation
        # freezes and thaws twice a move, and opening the file each time cost ten times the write.
        self._freezers: list[tuple[int, bytes, bytes]] | None = None

    @classmethod
    def create(cls, memory_mb: int | None = None) -> BotCgroup | None:
        """Make the cgroups of a new bot process, or return None where the machine allows none."""
        mounts, own = _mounts(), _own_paths()
        track = _parent_dir("2", mounts, own)
        v1_track = None if track is not None else next(
            (p for k in ("freezer", "pids", "memory", "cpu") if (p := _parent_dir(k, mounts, own)) is not None), None)
        memory_parent = None
        if memory_mb is not None:
            if track is not None and "memory" in _read(track / "cgroup.subtree_control").split():
                memory_parent = track
            else:
                memory_parent = _parent_dir("memory", mounts, own)
        parents = [p for p in (track or v1_track, memory_parent) if p is not None]
        if not parents:
            return None
        name = f"{_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
        dirs: list[Path] = []
        for parent in dict.fromkeys(parents):
            _sweep(parent)
            d = parent / name
            try:
                d.mkdir()
            except OSError:
                cls(dirs, None, None).remove()
                return None
            dirs.append(d)
        memory = None if memory_parent is None else memory_parent / name
        group = cls(dirs, memory, memory_mb)
        if memory is not None and memory_mb is not None and not group._limit_memory(memory, memory_mb << 20):
            group.memory = None
            group.memory_mb = None
        return group

    def _limit_memory(self, d: Path, limit: int) -> bool:
        files = (("memory.max", str(limit)), ("memory.swap.max", "0")) if (d / "memory.max").exists() else (
            ("memory.limit_in_bytes", str(limit)), ("memory.memsw.limit_in_bytes", str(limit)))
        for i, (name, value) in enumerate(files):
            try:
                (d / name).write_text(value)
            except OSError:
                if i == 0:
                    return False  # the limit itself; the swap one is optional
        return True

    def join_files(self) -> list[int]:
        """Descriptors of the ``cgroup.procs`` files, opened now (in the referee): the new
        process writes ``0`` to each before it drops privileges (see :func:`join`)."""
        fds = []
        for d in self.dirs:
            try:
                fds.append(os.open(d / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
            except OSError:
                continue
        return fds

    def oom_kills(self) -> int:
        """How many processes the kernel killed for going over the memory limit."""
        if self.memory is None:
            return 0
        for name in ("memory.events", "memory.oom_control"):
            for line in _read(self.memory / name).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def freeze(self, frozen: bool) -> bool:
        """Freeze every process in the cgroups (none of them runs until thawed), or thaw them:
        cgroup v2's ``cgroup.freeze``, else v1's ``freezer.state`` where the tracking cgroup
        is in the freezer hierarchy.  Whether it could (False: no freezer here).  The kernel
        finishes freezing a moment later; a frozen process still dies of SIGKILL in v2, and in
        v1 once thawed."""
        if self._freezers is None:
            self._freezers = self._open_freezers()
        done = False
        for fd, freeze, thaw in self._freezers:
            try:
                os.write(fd, freeze if frozen else thaw)
            except OSError:
                continue
            done = True
        return done

    def _open_freezers(self) -> list[tuple[int, bytes, bytes]]:
        """Each cgroup's freezer file, open for writing (close-on-exec, so no bot inherits it),
        with what freezes and what thaws it."""
        found = []
        for d in self.dirs:
            for name, freeze, thaw in (("cgroup.freeze", b"1", b"0"), ("freezer.state", b"FROZEN", b"THAWED")):
                try:
                    found.append((os.open(d / name, os.O_WRONLY | os.O_CLOEXEC), freeze, thaw))
                except OSError:
                    continue
                break
        return found

    def _close_freezers(self) -> None:
        for fd, _, _ in self._freezers or ():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._freezers = []

    def kill(self) -> None:
        """SIGKILL every process in the cgroups (one pass: call again until :meth:`empty`, since
        a process may fork between the listing and the kill)."""
        for d in self.dirs:
            _kill_all(d)

    def empty(self) -> bool:
        """Whether no process is left in the cgroups."""
        return not any(_pids(d) for d in self.dirs)

    async def drain(self, wait: float) -> int:
        """Kill every process left in the cgroup (daemons included), wait up to ``wait`` seconds
        for them to go, and remove it; the processes the kernel killed in it for memory."""
        with trio.move_on_after(wait):
            delay = 0.001
            while not self.empty():
                self.kill()
                await trio.sleep(delay)
                delay = min(delay * 2, 0.05)
        self.remove()
        return self.oom_kills()

    def remove(self) -> None:
        """Remove the cgroups (one still holding a dying process is left to the next sweep)."""
        self._close_freezers()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()
        self.dirs = []


def join(fds: list[int]) -> None:
    """In the new process, before ``exec``: move itself into the cgroups."""
    for fd in fds:
        os.write(fd, b"0")


def _kill_all(d: Path) -> None:
    try:
        (d / "cgroup.kill").write_text("1")  # v2, Linux 5.14 and later: all at once
        return
    except OSError:
        pass
    for pid in _pids(d):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _sweep(parent: Path) -> None:
    """Remove cgroups left by referees that are gone (killed before they could clean up)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for d in entries:
        if not d.name.startswith(_PREFIX) or not d.is_dir():
            continue
        pid = d.name[len(_PREFIX):].split("-")[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            _kill_all(d)
            with contextlib.suppress(OSError):
                d.rmdir()  # fails while the killed are still dying: the next sweep takes it


#: Why ``--isolation strict`` cannot be had, when it cannot.
STRICT_NEEDS = ("--isolation strict freezes each bot's processes in a cgroup, and this referee {}: run it as root, or in a "
                "delegated cgroup v2 subtree (systemd-run --user --scope -p Delegate=yes referee ...), or play concurrent")


@functools.cache
def freezer_missing() -> str | None:
    """Why strict isolation cannot be had here (one line), or None: the referee makes a cgroup
    and opens its freezer, as each bot's would be.  Strict is refused rather than weakened to a
    SIGSTOP of a process tree, which a ``setsid`` daemon with its descriptors closed escapes."""
    group = BotCgroup.create()
    if group is None:
        return STRICT_NEEDS.format("may make no cgroup")
    try:
        found = group.freeze(False)  # a thaw of an empty cgroup: its freezer opened, and closed by remove()
    finally:
        group.remove()
    return None if found else STRICT_NEEDS.format("has cgroups without a freezer")
