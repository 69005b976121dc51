"""The sandbox: what a bot's command becomes when it runs under bubblewrap, and the environment
every bot gets, sandboxed or not.

It owns the bwrap command line (the namespaces, the filesystem a bot sees, what is hidden from
it, the cap on processes), the unprivileged uid a sandboxed bot runs as when the referee is
root, and the clean environment.  It spawns nothing: :mod:`referee.process` runs the
:class:`Spawn` it returns.  What a bot may expect is written down in PROTOCOL.md ("The bot's
process").

Two ways of running, told apart by the referee's own uid:

* **as root** each sandboxed bot process gets a uid of its own (:data:`UID_BASE` and up, one
  per live process of the referee, distinct across referees on the machine since it is made
  from the referee's pid); bwrap then runs as that user in a user namespace;
* **as an ordinary user** every bot runs as the referee's own uid, mapped into a user
  namespace of its own; the PID namespace is what keeps it from seeing or signalling the
  referee and the other bots.

Either way a sandboxed bot has its own PID, network, IPC, UTS and user namespaces, a read-only
view of the system directories, of its own directory and of its interpreter, a private ``/tmp``,
and nothing else of the machine's files.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.errors import RefereeError

__all__ = ["BWRAP", "INSTALL", "SandboxUnavailable", "Spawn", "bot_environment", "bot_files", "find_bwrap", "sandboxed"]

BWRAP = "/usr/bin/bwrap"
PRLIMIT = "/usr/bin/prlimit"
SETPRIV = "/usr/bin/setpriv"
INSTALL = "apt-get install bubblewrap"

#: Variables a bot inherits from the referee without the sandbox; nothing else of the
#: referee's environment reaches it (``--env`` and league files add more).
SAFE_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_COLLATE", "TZ", "TMPDIR")
#: PATH inside the sandbox.
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
#: The system directories a sandboxed bot sees, read-only (when they exist and are not links).
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Processes (threads count too) a sandboxed bot may have at once, the sandbox's init included.
DEFAULT_PROCESSES = 64
#: Size of the private /tmp, in MiB.
TMP_MB = 256
#: Sandboxed bots of a referee running as root get uids from here on: UID_BASE + 64 × the
#: referee's pid + a slot, so two referees never hand out the same uid.
UID_BASE = 1 << 30
_SLOTS = 64


class SandboxUnavailable(RefereeError):
    """The sandbox was asked for and cannot be had (no bwrap, too many bots at once)."""


def find_bwrap() -> str:
    """The path of bwrap.

    Raises:
      SandboxUnavailable: it is not installed (the message names the install command).
    """
    found = BWRAP if os.access(BWRAP, os.X_OK) else shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(f"the sandbox needs bubblewrap ({BWRAP}), which is not installed: {INSTALL}")
    return found


def bot_environment(extra: Mapping[str, str] | None, *, sandboxed: bool, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a bot: a few safe variables, then ``extra`` (the match's or the
    league's) on top.

    Without the sandbox the safe variables are :data:`SAFE_ENV`, taken from ``base`` (default:
    the referee's environment).  In the sandbox they are made afresh: ``PATH`` =
    :data:`SANDBOX_PATH`, ``HOME`` and ``TMPDIR`` = ``/tmp``, and ``LANG`` (the referee's, or
    ``C.UTF-8``).
    """
    if base is None:
        base = os.environ
    if sandboxed:
        env = {"PATH": SANDBOX_PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": base.get("LANG") or "C.UTF-8"}
    else:
        env = {k: base[k] for k in SAFE_ENV if k in base}
    env.update(extra or {})
    return env


def bot_files(argv: Sequence[str]) -> list[Path]:
    """The bot's own file named on its command line, as a list of none or one: the first word
    that is an absolute path to an existing file outside the system directories and this
    Python's installation (the program itself, or the script or jar an interpreter runs).
    Its directory is the bot's own directory."""
    system = [Path(d) for d in SYSTEM_DIRS] + [Path(p) for p in _python_dirs()]
    for word in argv:
        if not word.startswith("/"):
            continue
        path = Path(word)
        if path.is_file() and not any(path == d or d in path.parents for d in system):
            return [path]
    return []


def _python_dirs() -> list[str]:
    """Where this Python lives (a venv and the installation it is made from): .py bots run with
    it, so the sandbox shows it."""
    dirs = []
    for d in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        if d and d not in dirs and not any(d == s or d.startswith(s + "/") for s in SYSTEM_DIRS):
            dirs.append(d)
    return dirs


@dataclass(frozen=True)
class Spawn:
    """How to spawn a bot: the argv (bwrap's, in the sandbox), its whole environment, the
    working directory of the spawn, and the uid the bot runs as in the sandbox when the
    referee is root (to give back with ``UIDS.give_back`` once every process of it is gone)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path | None
    uid: int | None = None


class _Uids:
    """The uids of this referee's live sandboxed processes (root only)."""

    def __init__(self) -> None:
        self._taken: set[int] = set()
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            free = next((i for i in range(_SLOTS) if i not in self._taken), None)
            if free is None:
                raise SandboxUnavailable(f"more than {_SLOTS} sandboxed bot processes at once in one referee")
            self._taken.add(free)
        return UID_BASE + _SLOTS * os.getpid() + free

    def give_back(self, uid: int) -> None:
        with self._lock:
            self._taken.discard((uid - UID_BASE) % _SLOTS)


UIDS = _Uids()


def sandboxed(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: dict[str, str] | None,
    processes: int = DEFAULT_PROCESSES,
    hidden: Iterable[Path] = (),
) -> Spawn:
    """The :class:`Spawn` that runs ``argv`` in the sandbox.

    Args:
      argv: the bot's command (absolute program, as from :func:`referee.process.resolve_command`).
      cwd: the bot's working directory as the organiser gave it, or None: the directory of its
        first own file (see :func:`bot_files`).  Either is shown to the bot read-only.
      env: variables the match or league gives the bot (on top of :func:`bot_environment`).
      processes: the cap on processes and threads in the sandbox (``RLIMIT_NPROC``, counted in
        the sandbox's own user namespace; the sandbox's init counts as one).
      hidden: files and directories the bot must not see even when they lie inside a
        directory it is shown (the match log, the stderr logs, the deal file, the league
        database, other bots' files): a directory is covered with an empty read-only tmpfs, a
        file with ``/dev/null`` (which cannot be opened there: bwrap mounts it ``nodev``).
        Paths that do not exist are skipped.

    Raises:
      SandboxUnavailable: bwrap is not installed, or no uid is free.
    """
    bwrap = find_bwrap()
    for tool in (PRLIMIT, SETPRIV):
        if not os.access(tool, os.X_OK):
            raise SandboxUnavailable(f"the sandbox needs {tool} (Debian package util-linux), which is missing")
    own = bot_files(argv)
    shown: list[Path] = [f.parent for f in own]
    workdir = cwd if cwd is not None else (shown[0] if shown else None)
    if workdir is not None:
        shown.append(workdir)
    for python_dir in _python_dirs():
        shown.append(Path(python_dir))
    program = Path(argv[0])
    if program.is_absolute() and program not in own and not any(program.is_relative_to(d) for d in SYSTEM_DIRS):
        # an interpreter installed outside the system directories (node from nvm...): its tree
        shown.append(program.parent.parent if program.parent.name == "bin" else program.parent)

    root = os.geteuid() == 0
    if root:
        _check_readable(own, [d for d in shown if d not in own])
    uid = UIDS.take() if root else None
    # As root, bwrap runs privileged (so it can show the bot a directory under /root, say) and
    # the bot drops to its own uid inside; otherwise bwrap makes a user namespace.
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "bot"]
    if uid is None:
        args += ["--unshare-user", "--disable-userns"]
    for system_dir in SYSTEM_DIRS:
        if os.path.islink(system_dir):
            args += ["--symlink", os.readlink(system_dir), system_dir]
        elif os.path.isdir(system_dir):
            args += ["--ro-bind", system_dir, system_dir]
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(TMP_MB << 20), "--tmpfs", "/tmp"]
    made: set[Path] = set()
    for d in _outermost(shown):
        # bwrap would make the directories above it private to root: the bot could not get by
        for parent in reversed(d.parents[:-1]):
            if parent not in made:
                made.add(parent)
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(d), str(d)]
    for h in _outermost(Path(p).absolute() for p in hidden):
        if not any(h == d or h.is_relative_to(d) for d in shown) or any(d.is_relative_to(h) and d != h for d in shown):
            continue  # not visible anyway (or hiding it would hide the bot itself)
        if h.is_dir() and not h.is_symlink():
            args += ["--tmpfs", str(h), "--remount-ro", str(h)]
        elif h.is_file():
            args += ["--ro-bind", "/dev/null", str(h)]
    if workdir is not None:
        args += ["--chdir", str(workdir)]
    # The cap is set inside, where it counts this bot's processes only: those of its own uid,
    # or those in its own user namespace (not every process of the referee's user).
    args += ["--", PRLIMIT, f"--nproc={processes}:{processes}", "--"]
    if uid is not None:
        args += [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]
    return Spawn([*args, *argv], bot_environment(env, sandboxed=True), None, uid)


def _check_readable(files: list[Path], dirs: list[Path]) -> None:
    """As root the bot runs as a user of its own, who can use only what everyone may: say so
    before the spawn rather than let the bot die of 'Permission denied'."""
    for path in [*dirs, *files]:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # a missing cwd is reported by the spawn
        need = stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0)
        if mode & need != need:
            raise SandboxUnavailable(f"in the sandbox the bot runs as an unprivileged user, and {path} is not readable "
                                     f"by other users: chmod a+rX {path} (or run the bot without the sandbox)")


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """The paths with those inside another one left out, in a stable order."""
    unique = sorted(set(paths), key=lambda p: (len(p.parts), str(p)))
    kept: list[Path] = []
    for p in unique:
        if not any(p == k or p.is_relative_to(k) for k in kept):
            kept.append(p)
    return kept
