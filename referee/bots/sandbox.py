"""The sandbox: what a bot's command becomes when it runs under bubblewrap, and the environment
every bot gets, sandboxed or not.

It owns the bwrap command line (the namespaces, the filesystem a bot sees, what is hidden from
it, the caps on processes and on memory kept outside a process's address space), the
unprivileged uid a sandboxed bot runs as when the referee is root, and the clean environment.
It spawns nothing: :mod:`referee.bots.spawn` runs the :class:`Spawn` it returns.  What a bot may
expect is written down in PROTOCOL.md ("The bot's process").

Two ways of running, told apart by the referee's own uid:

* **as root** each sandboxed bot process gets a uid of its own (:data:`UID_BASE` and up, one
  per live process of the referee, distinct across referees on the machine since it is made
  from the referee's pid); bwrap then runs as that user in a user namespace;
* **as an ordinary user** every bot runs as the referee's own uid, mapped into a user
  namespace of its own; the PID namespace is what keeps it from seeing or signalling the
  referee and the other bots.

Either way a sandboxed bot has its own PID, network, IPC, UTS and user namespaces, and sees a
filesystem made of read-only parts: the system directories, the Python that runs ``.py`` bots
and the referee's own packages (``referee``, ``protocol``: a Python bot may import them), its
own directory and working directory, the files and folders its command line names; and one
writable place, a private ``/tmp`` whose size is taken out of its memory cap (see
:func:`tmp_mb`).  Inside the places it is shown, the referee's files (logs, stderr logs, deal
files, league databases) and the other bots' files and folders are hidden.  Every path is
compared after resolving symlinks, and a folder is mounted at its real path (with the links
that lead to it made again inside), so no second name reaches a hidden file.  What is the bot's
own (its directory, working directory and named paths) it sees as a private copy made for each
process (:class:`_Copies`), so no two processes share a page of it; no procfs file can be read
(a /proc of constant files, or for a wrapper the real one closed by Landlock:
:mod:`referee.bots.confine`), /dev has no terminal, and a seccomp filter refuses what would
tell the page cache or move a counter of the whole machine (PROTOCOL.md, "Fair play"); its
``sysinfo()`` the referee answers with constants (:mod:`referee.bots.sysinfo`).
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import stat
import struct
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.base.errors import RefereeError
from referee.bots.confine import landlock_abi

__all__ = ["BWRAP", "DEFAULT_MEMORY_MB", "INSTALL", "SandboxUnavailable", "Spawn", "absolute_words", "address_space_mb", "bot_environment",
           "bot_files", "bot_home", "find_bwrap", "hidden_from", "named_paths", "referee_files", "sandboxed", "shared_pipe_allowance",
           "tmp_mb"]

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
#: The devices of the sandbox's /dev (no terminal: see :func:`sandboxed`).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
#: Processes (threads count too) a sandboxed bot may have at once, the sandbox's init included.
DEFAULT_PROCESSES = 64
#: The memory cap of a sandboxed bot process when none is given, in MiB: the private /tmp
#: included.  Measured: python, node (random_bot.js) and C bots run well under it either way
#: (a node process reserves about 700 MiB of address space at start); a JVM runs under it
#: where the cap is a memory cgroup, but where it is an address-space limit a JVM reserves
#: ~4 GiB at start (its heap, 1 GiB of class space, 240 MiB of code cache) and needs flags
#: (``-Xmx``, ``-XX:CompressedClassSpaceSize``...) or a larger cap (PROTOCOL.md).
DEFAULT_MEMORY_MB = 1024
#: Size of the private /tmp at most, in MiB (less under a small cap: see :func:`tmp_mb`).
TMP_MB = 256
#: The referee's default folder of logs (``referee match`` and ``referee check`` without
#: ``--log``/``--log-dir``): hidden as a whole wherever a bot could see it.
LOGS_DIR = "referee-logs"
#: The search for the referee's files in a bot's folders looks this deep and through this many
#: entries at most, per process start (a folder of the referee's files is never entered).
SCAN_DEPTH = 3
SCAN_ENTRIES = 5000
#: Sandboxed bots of a referee running as root get uids from here on: UID_BASE + 64 × the
#: referee's pid + a slot, so two referees never hand out the same uid.
UID_BASE = 1 << 30
_SLOTS = 64
#: Places a command line may name that are never shown, nor anything in them: the sandbox's
#: own, and /run (its sockets would reach the machine's services).
_NEVER_SHOWN = ("/proc", "/dev", "/sys", "/run", "/var/run")
#: Folders a command line may name that are never shown, for what they hold: everything
#: ("/"), the private /tmp's place, the folders holding those of _NEVER_SHOWN.
_NEVER_WHOLE = ("/", "/tmp", "/var")
#: Options whose value is a list of paths, relative ones taken from the working directory (a
#: JVM's class and module paths); other words count only as absolute paths.
_PATH_OPTIONS = frozenset(("-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path",
                           "-Djava.class.path", "-Djava.library.path"))


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


#: The user's pipe-buffer allowance: past it, an ordinary user's new pipes are made small.
PIPE_USER_PAGES_SOFT = Path("/proc/sys/fs/pipe-user-pages-soft")


def shared_pipe_allowance(euid: int | None = None, setting: Path = PIPE_USER_PAGES_SOFT) -> str | None:
    """What a host running bots as an ordinary user should know: the kernel counts the pipe-buffer
    allowance per user, whatever the namespaces, so the sandboxed bots of one ordinary user can
    signal through it (PROTOCOL.md, "Fair play"); ``None`` as root (each bot its own uid), where
    the allowance is off (``0``), or where the setting cannot be read."""
    if (os.geteuid() if euid is None else euid) == 0:
        return None
    try:
        pages = int(setting.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if pages == 0:
        return None
    return (f"note: run as an ordinary user, the bots share the user's pipe-buffer allowance ({setting.name} = {pages}), "
            "a channel of about 10 bits a second between them; `sysctl fs.pipe-user-pages-soft=0` (as root) closes it "
            "(PROTOCOL.md, \"Fair play\")")


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


# -- memory ----------------------------------------------------------------------------------


def tmp_mb(memory_mb: int) -> int:
    """The size of the private /tmp of a bot whose memory cap is ``memory_mb``: an eighth of
    it, at most :data:`TMP_MB`.  It is part of the cap, not added to it (see
    :func:`address_space_mb`)."""
    return max(1, min(TMP_MB, memory_mb // 8))


def address_space_mb(memory_mb: int) -> int:
    """The address-space limit (``RLIMIT_AS``) of a sandboxed bot process whose memory cap is
    ``memory_mb``, where no memory cgroup holds the cap: what the private /tmp does not take.

    Why split the cap rather than count /tmp in it some other way: without a cgroup the kernel
    counts a process's memory only as its address space, and files in a tmpfs are in nobody's
    address space.  So the tmpfs gets a fixed size and the address space the rest, and the
    two together never exceed the cap.  (With a memory cgroup the kernel charges the tmpfs's
    pages to the cgroup of the process that wrote them, and the cgroup's limit is the whole
    cap: /tmp keeps the same size, and anything it holds leaves that much less for the rest.)
    """
    return max(1, memory_mb - tmp_mb(memory_mb))


# -- paths -----------------------------------------------------------------------------------


def absolute_words(argv: Sequence[str], cwd: Path | None = None) -> list[str]:
    """``argv`` with each word after the first that is a relative path to an existing file or
    folder, taken from ``cwd`` (the referee's working directory when None), made absolute
    (a ``..`` is kept, to be taken after the links as the kernel does): ``python3 bots/x.py``
    from the folder holding ``bots`` is
    ``python3 /that/folder/bots/x.py``.  Options (words beginning with ``-``) are left as they
    are.  In the sandbox a bot's working directory is its own directory, not the one its
    relative paths were written from, and it is shown only what its command line names: so
    the bot is given the absolute paths (PROTOCOL.md, "The bot's process")."""
    base = Path(cwd).absolute() if cwd is not None else Path.cwd()
    out = list(argv[:1])
    for word in argv[1:]:
        if word and not word.startswith(("-", "/")):
            path = base / word
            try:
                if path.is_file() or path.is_dir():
                    word = str(path)
            except OSError:
                pass
        out.append(word)
    return out


def bot_files(argv: Sequence[str], cwd: Path | None = None) -> list[Path]:
    """The bot's own file named on its command line, as a list of none or one: the first word
    that is a path to an existing file outside the system directories and this Python's
    installation (the program itself, or the script or jar an interpreter runs), a relative
    one taken from ``cwd`` (see :func:`absolute_words`).  Its directory is the bot's own
    directory."""
    for word in absolute_words(argv, cwd):
        if not word.startswith("/"):
            continue
        path = Path(word)
        if path.is_file() and not _runtime(path):
            return [path]
    return []


def named_paths(argv: Sequence[str], cwd: Path | None = None) -> list[Path]:
    """The files and folders a bot's command line names, besides the system's and this
    Python's: every word (or the value after the ``=`` of an ``--option=value`` word, or each
    part of a ``:``-separated list) that is an absolute path to a file or folder that exists,
    and the parts of a class or module path (``java -cp classes:lib/* Main``) taken from ``cwd``
    (the referee's working directory when None) when relative.  A JVM's ``DIR/*`` is ``DIR``.
    Never ``/``, ``/tmp`` or ``/var``, nor anything in ``/proc``, ``/dev``, ``/sys`` or ``/run``.

    The paths are absolute and as written (not resolved)."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    argv = absolute_words(argv, cwd)
    found: list[Path] = []
    for i, word in enumerate(argv):
        relative = i > 0 and argv[i - 1] in _PATH_OPTIONS
        value = word
        if word.startswith("-") and "=" in word:
            option, _, value = word.partition("=")
            relative = relative or option in _PATH_OPTIONS
        for piece in value.split(os.pathsep):
            if piece.endswith("/*"):
                piece = piece[:-2] or "/"
            if not piece or not (piece.startswith("/") or relative):
                continue
            path = Path(os.path.normpath(base / piece)) if relative and not piece.startswith("/") else Path(piece)
            try:
                if not (path.is_file() or path.is_dir()) or _runtime(path) or str(_real(path)) in _NEVER_WHOLE or any(
                        _under(p, Path(d)) for p in (path, _real(path)) for d in _NEVER_SHOWN):
                    continue
            except OSError:
                continue
            if path not in found:
                found.append(path)
    return found


def bot_home(argv: Sequence[str], cwd: Path | None) -> list[Path]:
    """A bot's own places: its own file (see :func:`bot_files`) and the directory holding it,
    and its working directory; for a bot without a file of its own (``java -cp DIR Main``)
    the first folder its command line names stands for that directory."""
    own = bot_files(argv, cwd)
    home = [*own, *(f.parent for f in own)]
    if cwd is not None:
        home.append(Path(cwd).absolute())
    if not own:
        home += [p for p in named_paths(argv, cwd) if p.is_dir()][:1]
    return home


def hidden_from(own: Iterable[tuple[Sequence[str], Path | None]], others: Iterable[tuple[Sequence[str], Path | None]],
                hidden: Iterable[Path] = ()) -> list[Path]:
    """What sandboxed bots must not see: ``hidden`` (the referee's files: logs, the deal file,
    a league's database...), and the places of the bots ``others``: their homes
    (:func:`bot_home`) unless they are also the home of one of the bots ``own`` (two bots may
    live in one folder), and what their command lines name (:func:`named_paths`) unless one
    of ``own`` has it as its home or names it too (a library two bots share).  Naming another
    bot's home on a command line does not make it one's own.  Each bot is ``(argv, cwd)``;
    paths are compared after resolving symlinks.

    A bot's places are worked out once per bot (:func:`bot_places`), not once per match: a
    league of N bots asks this of every match, about every other bot."""
    own_places = [bot_places(tuple(argv), cwd) for argv, cwd in own]
    homes = frozenset().union(*(p.homes_real for p in own_places))
    named = homes.union(*(p.named_real for p in own_places))
    out = list(hidden)
    seen = set(out)
    for argv, cwd in others:
        places = bot_places(tuple(argv), cwd)
        for p, real in zip(places.homes, places.homes_real_list, strict=True):
            if real not in homes and p not in seen:
                out.append(p)
                seen.add(p)
        for p, real in zip(places.named, places.named_real_list, strict=True):
            if real not in named and p not in seen:
                out.append(p)
                seen.add(p)
    return out


@dataclass(frozen=True)
class BotPlaces:
    """A bot's homes (:func:`bot_home`) and named paths (:func:`named_paths`), as written and
    resolved."""

    homes: tuple[Path, ...]
    named: tuple[Path, ...]
    homes_real_list: tuple[Path, ...]
    named_real_list: tuple[Path, ...]

    @property
    def homes_real(self) -> frozenset[Path]:
        return frozenset(self.homes_real_list)

    @property
    def named_real(self) -> frozenset[Path]:
        return frozenset(self.named_real_list)


@functools.lru_cache(maxsize=4096)
def bot_places(argv: tuple[str, ...], cwd: Path | None) -> BotPlaces:
    """A bot's places, looked up once (the files and folders of a bot's command are taken to
    stay where they are while the referee runs)."""
    homes = tuple(bot_home(argv, cwd))
    named = tuple(named_paths(argv, cwd))
    return BotPlaces(homes, named, tuple(_real(p) for p in homes), tuple(_real(p) for p in named))


def referee_files(folders: Iterable[Path]) -> list[Path]:
    """The referee's files inside ``folders``, found by name and by their first bytes: folders
    named ``referee-logs``; stderr folders (``X.stderr``) with the log beside each (``X.*``);
    match logs and deal files (``.jsonl``/``.json`` files beginning like one, ``.jsonl.gz`` gzip files); league databases
    (SQLite files holding a league's ``matches`` and ``boards`` tables) with their journals.

    Looks at most :data:`SCAN_DEPTH` folders down and through :data:`SCAN_ENTRIES` entries in
    all, without following links; the folders it returns are not entered."""
    found: list[Path] = []
    budget = SCAN_ENTRIES
    queue = deque((Path(f), 0) for f in folders)
    seen: set[Path] = set()
    while queue and budget > 0:
        folder, depth = queue.popleft()
        if folder in seen:
            continue
        seen.add(folder)
        stems: list[str] = []
        files: list[os.DirEntry[str]] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    budget -= 1
                    if budget < 0:
                        break
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name == LOGS_DIR or entry.name.endswith(".stderr"):
                                found.append(Path(entry.path))
                                stems.append(entry.name.removesuffix(".stderr"))
                            elif depth < SCAN_DEPTH:
                                queue.append((Path(entry.path), depth + 1))
                        elif entry.is_file(follow_symlinks=False):
                            files.append(entry)
                    except OSError:
                        continue
        except OSError:
            continue
        for entry in files:
            name = entry.name
            if any(name == s or name.startswith(s + ".") for s in stems) or name.endswith(".stderr.log") or _sniff(entry.path):
                found.append(Path(entry.path))
        for entry in files:  # a database's journals, beside it
            if Path(entry.path) in found and _is_sqlite(entry.path):
                found += [Path(entry.path + s) for s in ("-wal", "-shm", "-journal") if os.path.exists(entry.path + s)]
    return found


def _sniff(path: str) -> bool:
    """Whether the file at ``path`` begins like a match log, a deal file or a league database."""
    name = path.rsplit("/", 1)[-1].lower()  # a log named M.JSONL.GZ is a log as much as m.jsonl.gz
    if name.endswith((".jsonl", ".json")):
        head = _head(path, 16)
        return head.startswith((b'{"k":"match"', b'{"deal":'))
    if name.endswith(".jsonl.gz"):  # a compressed match log (referee.conversation.log.GzipSink)
        return _head(path, 2) == b"\x1f\x8b"
    if _is_sqlite(path):
        # the schema is on the first pages, or in the write-ahead log until a checkpoint
        head = _head(path, 1 << 15) + _head(path + "-wal", 1 << 16)
        return b"matches" in head and b"boards" in head
    return False


def _is_sqlite(path: str) -> bool:
    return _head(path, 16) == b"SQLite format 3\x00"


def _head(path: str, n: int) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def _under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _python_dirs() -> list[str]:
    """Where this Python lives (a venv and the installation it is made from): .py bots run with
    it, so the sandbox shows it."""
    dirs = []
    for d in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        if d and d not in dirs and not any(d == s or d.startswith(s + "/") for s in SYSTEM_DIRS):
            dirs.append(d)
    return dirs


def _package_dirs() -> list[Path]:
    """The folders of the referee's packages a Python bot may import (``referee``,
    ``protocol``): in site-packages, or in the repository of an editable install, where they
    are shown without the repository around them."""
    import protocol
    import referee

    return [Path(referee.__file__).parent, Path(protocol.__file__).parent]


@functools.cache
def _system_dirs() -> tuple[Path, ...]:
    """The system directories that exist, resolved (``/bin`` may be ``/usr/bin``)."""
    return tuple(dict.fromkeys(_real(Path(d)) for d in SYSTEM_DIRS if os.path.isdir(d)))


@functools.cache
def _runtime_roots() -> tuple[str, ...]:
    """The system directories and this Python's, as written and resolved."""
    dirs = [*SYSTEM_DIRS, *_python_dirs()]
    return tuple(dict.fromkeys([*dirs, *(os.path.realpath(d) for d in dirs)]))


def _runtime(path: Path) -> bool:
    """Whether ``path`` lies in the system directories or this Python's, which every sandbox shows."""
    roots = _runtime_roots()
    return any(p == r or p.startswith(r + "/") for p in (str(path), os.path.realpath(path)) for r in roots)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _walk(path: Path) -> tuple[Path, list[tuple[Path, str]]]:
    """``path`` resolved as the kernel would (``..`` after a link goes up from its target),
    and the links met on the way: ``(where the link is, with its folder resolved; its
    target)``.  A path looping through links is returned as far as it got."""
    links: list[tuple[Path, str]] = []
    parts = list(Path(path).absolute().parts[1:])
    current = Path("/")
    while parts and len(links) < 40:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            current = current.parent
            continue
        step = current / name
        if step.is_symlink():
            target = os.readlink(step)
            links.append((step, target))
            if target.startswith("/"):
                current = Path("/")
            parts = [*Path(target).parts[1 if target.startswith("/") else 0:], *parts]
        else:
            current = step
    return current, links


# -- private copies ----------------------------------------------------------------------------

#: What the private copies of one sandboxed process may hold at most: bytes stored (a sparse
#: file counts what it holds, not its length) and entries (files, folders, links).
COPY_MB = 64
COPY_ENTRIES = 10000
_COPY_PREFIX = "referee-copy-"


class _Copies:
    """The private copies of one process's own files and folders, made in a folder of their own
    (:func:`copy_root`): each gets new inodes, so no page of them is in the cache for anyone but
    this process.  What is hidden inside them is copied as an empty file or folder (to be covered
    as before).  At most :data:`COPY_MB` MiB and :data:`COPY_ENTRIES` entries in all."""

    def __init__(self, hidden: Iterable[Path]) -> None:
        self.hidden = {str(_real(p)) for p in hidden}
        self.folder: Path | None = None
        self.bytes = 0
        self.entries = 0

    def of(self, source: Path) -> Path:
        """A private copy of the real path ``source`` (a file or a folder), to show at its place."""
        if self.folder is None:
            root = copy_root()
            _sweep_copies(root)
            self.folder = Path(tempfile.mkdtemp(prefix=f"{_COPY_PREFIX}{os.getpid()}-", dir=root))
            self.folder.chmod(0o755)  # as root the bot runs as a user of its own
        target = self.folder / str(self.entries)
        try:
            self._copy(str(source), str(target), str(source))
        except OSError as e:
            raise SandboxUnavailable(f"cannot copy {source} for the bot ({e.strerror or e})") from None
        return target

    def _count(self, source: str, stored: int) -> None:
        self.entries += 1
        self.bytes += stored
        if self.bytes > COPY_MB << 20 or self.entries > COPY_ENTRIES:
            raise SandboxUnavailable(
                f"the sandbox gives each process of a bot a copy of its own files, at most {COPY_MB} MiB and {COPY_ENTRIES} "
                f"entries, and {source} holds more: keep the bot in a folder of its own, without what it does not need")

    def _copy(self, source: str, target: str, top: str, st: os.stat_result | None = None) -> None:
        # paths as strings: a folder of thousands of files spends its time in pathlib otherwise
        if st is None:
            st = os.lstat(source)
        hidden = source in self.hidden and source != top
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISDIR(st.st_mode):
            self._count(top, 0)
            os.mkdir(target, 0o700)
            if not hidden:
                with os.scandir(source) as entries:
                    for entry in entries:
                        self._copy(entry.path, f"{target}/{entry.name}", top, entry.stat(follow_symlinks=False))
            os.chmod(target, 0o755 if hidden else mode)
        elif stat.S_ISLNK(st.st_mode):
            self._count(top, 0)
            os.symlink(os.readlink(source), target)
        elif stat.S_ISREG(st.st_mode):
            empty = hidden or st.st_size == 0
            self._count(top, 0 if empty else min(st.st_size, st.st_blocks * 512))
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                if not empty:
                    _copy_file(source, out, st.st_size, sparse=st.st_blocks * 512 < st.st_size)
                os.fchmod(out, 0o644 if hidden else mode)
            finally:
                os.close(out)
        # fifos, sockets and devices are not copied


def _copy_file(source: str, out: int, size: int, *, sparse: bool) -> None:
    """Copy a file's data into ``out``; a sparse file's holes are left holes (it costs what it holds)."""
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        at = 0
        while at < size:
            if sparse:
                try:
                    start = os.lseek(src, at, os.SEEK_DATA)
                except OSError:  # ENXIO: only a hole is left
                    break
                end = os.lseek(src, start, os.SEEK_HOLE)
            else:
                start, end = at, size
            os.lseek(out, start, os.SEEK_SET)
            while start < end:
                sent = os.sendfile(out, src, start, end - start)
                if sent == 0:
                    end = start  # the file shrank meanwhile
                    break
                start += sent
            at = max(end, at + 1) if sparse else size
        if sparse:
            os.ftruncate(out, size)
    finally:
        os.close(src)


@functools.cache
def copy_root() -> Path:
    """Where private copies are made: ``/dev/shm`` (memory) where the referee may write there,
    else the system's temporary folder."""
    shm = Path("/dev/shm")
    return shm if os.access(shm, os.W_OK | os.X_OK) else Path(tempfile.gettempdir())


def remove_copies(folder: Path | None) -> None:
    """Remove a process's private copies (:attr:`Spawn.copies`)."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _sweep_copies(root: Path) -> None:
    """Remove the copies left by referees that are gone (killed before they could clean up)."""
    try:
        names = [n for n in os.listdir(root) if n.startswith(_COPY_PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(_COPY_PREFIX):].split("-")[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(root / name, ignore_errors=True)


# -- the spawn -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spawn:
    """How to spawn a bot: the argv (bwrap's, in the sandbox), its whole environment, the
    working directory of the spawn, the uid the bot runs as in the sandbox when the referee is
    root (to give back with ``UIDS.give_back`` once every process of it is gone), and
    descriptors the spawn must inherit (the seccomp program bwrap reads), which the caller
    closes once the process is spawned (or failed to be)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path | None
    uid: int | None = None
    pass_fds: tuple[int, ...] = ()
    #: the folder holding the process's private copies of its own files (:func:`private_copies`),
    #: to remove with :func:`remove_copies` once every process of it is gone
    copies: Path | None = None

    def close_fds(self) -> None:
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass


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
    memory_mb: int = DEFAULT_MEMORY_MB,
    address_space: bool = True,
) -> Spawn:
    """The :class:`Spawn` that runs ``argv`` in the sandbox.

    Args:
      argv: the bot's command (absolute program, as from :func:`referee.bots.spawn.resolve_command`).
      cwd: the bot's working directory as the organiser gave it, or None: the directory of its
        first own file (see :func:`bot_files`), else the folder its relative class path is
        taken from, else the first folder its command line names.  It is shown read-only.
      env: variables the match or league gives the bot (on top of :func:`bot_environment`).
      processes: the cap on processes and threads in the sandbox (``RLIMIT_NPROC``, counted in
        the sandbox's own user namespace; the sandbox's init counts as one).
      hidden: files and directories the bot must not see even when they lie inside a
        directory it is shown (the match log, the stderr logs, the deal file, the league
        database, other bots' files: see :func:`hidden_from`): a directory is covered with an
        empty read-only tmpfs, a file with ``/dev/null`` (which cannot be opened there: bwrap
        mounts it ``nodev``).  Paths that do not exist are skipped.  Besides these, the
        referee's files in the bot's folders (:func:`referee_files`) and the ``referee-logs``
        folder of the referee's working directory are hidden.  A hidden folder holding the
        bot's own directory hides all but that; what the command line names stays hidden
        when it is hidden or lies in a hidden folder; the bot's own file, directory and
        working directory are never hidden.
      memory_mb: the bot's memory cap: its private /tmp gets :func:`tmp_mb` of it.
      address_space: the cap is an address-space limit (no memory cgroup holds it): then
        ``memfd_create`` and System V shared memory, whose pages are in no address space,
        fail with ENOSYS (a seccomp filter, on x86-64 and arm64).

    Raises:
      SandboxUnavailable: bwrap is not installed, or no uid is free.
    """
    bwrap = find_bwrap()
    for tool in (PRLIMIT, SETPRIV):
        if not os.access(tool, os.X_OK):
            raise SandboxUnavailable(f"the sandbox needs {tool} (Debian package util-linux), which is missing")
    argv = absolute_words(argv, cwd)
    own_files = bot_files(argv)
    named = named_paths(argv, cwd)
    home = bot_home(argv, cwd)
    if cwd is not None:
        workdir: Path | None = cwd
    elif own_files:
        workdir = own_files[0].parent
    elif _relative_path_option(argv):
        workdir = Path.cwd()  # where its relative class path leads from (a folder of the sandbox's own)
    else:
        workdir = next((p for p in named if p.is_dir()), None)
    own = [p for p in home if p not in named]  # a JVM's first class folder stays a named path
    runtime: list[Path] = [Path(d) for d in _python_dirs()] + _package_dirs()
    program = Path(argv[0])
    for p in (program, _real(program)):
        if p.is_absolute() and p not in own_files and not _runtime(p):
            # an interpreter installed outside the system directories (node from nvm...): its tree
            runtime.append(p.parent.parent if p.parent.name == "bin" else p.parent)
    hide = [*hidden, Path.cwd() / LOGS_DIR, *referee_files(_real(p) for p in [*own, *named] if p.is_dir())]

    root = os.geteuid() == 0
    if root:
        _check_readable([*own, *named])
    copies = _Copies(hide)
    try:
        layout = _layout(own + runtime, named, hide, copies, shared=runtime)
    except BaseException:
        remove_copies(copies.folder)
        raise
    program_bytes = seccomp_program(address_space=address_space)
    pass_fds: tuple[int, ...] = (_pipe_with(program_bytes),) if program_bytes else ()
    closed_proc = _landlock() and _wrapper(argv)
    if not closed_proc:
        meminfo = _pipe_with(_meminfo(memory_mb))
        pass_fds += (meminfo,)
    try:
        uid = UIDS.take() if root else None
    except SandboxUnavailable:
        Spawn([], {}, None, None, pass_fds, copies.folder).close_fds()
        remove_copies(copies.folder)
        raise
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
    # /dev holds the devices a program reads and writes, and no terminal (a pty's allocation
    # moves a count of the whole machine's).  Every file of a procfs tells what is in the page
    # cache or moves with the whole machine: where Landlock is to be had, /proc is the bot's own
    # PID namespace's, none of whose files it may open (confine.py runs first); elsewhere it is
    # no procfs but a few constant files (PROTOCOL.md, "Fair play").
    args += ["--tmpfs", "/dev", *(a for d in DEVICES for a in ("--dev-bind", d, d)), "--dir", "/dev/shm"]
    if closed_proc:
        args += ["--proc", "/proc"]
    else:
        args += ["--tmpfs", "/proc", "--dir", "/proc/self", "--symlink", str(_executable(argv)), "/proc/self/exe",
                 "--ro-bind-data", str(meminfo), "/proc/meminfo", "--remount-ro", "/proc"]
    args += ["--perms", "1777", "--size", str(tmp_mb(memory_mb) << 20), "--tmpfs", "/tmp"]
    args += layout
    # Nothing but /tmp is writable: not the root bwrap builds, nor the folders it makes for
    # the parents of what is shown, nor /dev (whose shm folder would be a tmpfs outside the cap).
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    if program_bytes:
        args += ["--seccomp", str(pass_fds[0])]
    if workdir is not None:
        args += ["--chdir", str(workdir)]
    # The cap is set inside, where it counts this bot's processes only: those of its own uid,
    # or those in its own user namespace (not every process of the referee's user).
    args += ["--", *(_CONFINE if closed_proc else ()), PRLIMIT, f"--nproc={processes}:{processes}", "--"]
    if uid is not None:
        args += [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]
    return Spawn([*args, *argv], bot_environment(env, sandboxed=True), None, uid, pass_fds, copies.folder)


#: The sandbox's first program where Landlock closes /proc (:mod:`referee.bots.confine`).
_CONFINE = (os.path.realpath(sys.executable), "-S", "-I", "-B", str(Path(__file__).with_name("confine.py")), "--")


#: Programs that run other programs, as a bot's first word: a shell or ``env``.
_WRAPPERS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox", "env", "exec", "nice", "timeout", "stdbuf"))


def _wrapper(argv: Sequence[str]) -> bool:
    """Whether a bot's command is a wrapper (a shell, ``env``, a ``#!`` script): the program it
    ends up running is not the one it starts, so a constant ``/proc/self/exe`` would name the
    wrong one (and a JVM's launcher behind ``sh -c 'exec java …'`` would not find its libraries).
    Such a bot gets the real /proc closed by Landlock, which costs it a Python's start (measured
    40–80 ms a process on a loaded 2-CPU machine); any other gets the constant /proc."""
    program = _real(Path(argv[0]))
    return program.name in _WRAPPERS or Path(argv[0]).name in _WRAPPERS or _head(str(program), 2) == b"#!"


@functools.cache
def _landlock() -> bool:
    """Whether /proc is closed with Landlock (this kernel has it), rather than replaced."""
    return landlock_abi() > 0


def _meminfo(memory_mb: int) -> bytes:
    """The sandbox's /proc/meminfo: the bot's memory cap as the whole memory, all of it free,
    whatever the machine does."""
    kb = memory_mb << 10
    return "".join(f"{name}:{value:>16} kB\n" for name, value in (
        ("MemTotal", kb), ("MemFree", kb), ("MemAvailable", kb), ("Buffers", 0), ("Cached", 0), ("SwapCached", 0),
        ("SwapTotal", 0), ("SwapFree", 0), ("Mlocked", 0), ("Shmem", 0))).encode()


def _executable(argv: Sequence[str]) -> Path:
    """The program a bot's first process runs, as ``/proc/self/exe`` names it (the loader
    finds a program's ``$ORIGIN`` libraries through it, as a JVM's launcher does): the real
    path of the command's program, or of the interpreter its ``#!`` line names."""
    program = _real(Path(argv[0]))
    head = _head(str(program), 256)
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if words:
            found = shutil.which(words[1]) if Path(words[0]).name == "env" and len(words) > 1 else words[0]
            if found:
                return _real(Path(found))
    return program


def _relative_path_option(argv: Sequence[str]) -> bool:
    """Whether the command has a relative class or module path (taken from the working directory)."""
    for i, word in enumerate(argv[1:], 1):
        value = word.partition("=")[2] if word.startswith("-") and "=" in word and word.partition("=")[0] in _PATH_OPTIONS else (
            word if argv[i - 1] in _PATH_OPTIONS else None)
        if value is not None and any(piece and not piece.startswith("/") for piece in value.split(os.pathsep)):
            return True
    return False


_SHOW, _HIDE, _PRIVATE, _LINK = "show", "hide", "private", "link"


def _layout(own: list[Path], named: list[Path], hidden: list[Path], copies: _Copies | None = None,
            shared: Iterable[Path] = ()) -> list[str]:
    """The bwrap arguments that show ``own`` and ``named`` read-only and hide ``hidden``.

    Every path is taken at its real place (links resolved), and mounted there; the links met
    on the way to a shown path are made again inside, where the sandbox would not already
    have them, so the path as written still leads to it.  The deepest rule wins (a path is
    seen as its nearest ruled ancestor says), except that ``named`` paths never show what
    ``hidden`` hides, on the path itself or above it; on one path, ``own`` beats ``hidden``.
    With ``copies``, what is shown is a private copy of it (:class:`_Copies`), except what lies
    in ``shared`` (the runtime every bot runs with).
    """
    shared_real = [_real(p) for p in shared]
    rules, links = _rules(own, named, hidden)
    state: dict[Path, str] = {Path("/tmp"): _PRIVATE, **dict.fromkeys(_system_dirs(), _SHOW)}
    args: list[str] = []
    masks: list[Path] = []

    def nearest(p: Path) -> tuple[Path | None, str | None]:
        for a in p.parents:
            if a in state:
                return a, state[a]
        return None, None

    def parents(p: Path, above: Path | None) -> None:
        for d in reversed(p.parents[:-1]):  # from the top down, "/" left out
            if (above is None or d.is_relative_to(above) and d != above) and d not in state:
                state[d] = state.get(d, "")  # made: a plain folder of the sandbox's own
                args.extend(["--perms", "0755", "--dir", str(d)])

    for p in sorted({*rules, *links}, key=lambda q: (len(q.parts), str(q))):
        above, seen = nearest(p)
        if p in links and p not in rules:
            if seen != _SHOW:
                parents(p, above)
                args.extend(["--symlink", links[p], str(p)])
            state[p] = _LINK
            continue
        # A rule is recorded where the sandbox has the path: a hidden path out of sight anyway
        # leaves no folder behind, and what is shown below it gets its parents made.
        if rules[p] == _SHOW:
            if seen == _SHOW:
                state[p] = _SHOW
            elif p.exists():
                parents(p, above)
                private = copies is not None and not any(_under(p, r) for r in shared_real)
                args.extend(["--ro-bind", str(copies.of(p) if copies is not None and private else p), str(p)])
                state[p] = _SHOW
        elif seen == _SHOW:
            if p.is_dir():
                args.extend(["--perms", "0755", "--tmpfs", str(p)])
                masks.append(p)
                state[p] = _HIDE
            elif p.is_file():
                args.extend(["--ro-bind", "/dev/null", str(p)])
    for m in masks:
        args.extend(["--remount-ro", str(m)])
    return args


def _rules(own: list[Path], named: list[Path], hidden: list[Path]) -> tuple[dict[Path, str], dict[Path, str]]:
    """What :func:`_layout` does with each real path (shown or hidden), and the links met on the
    way to the shown ones (where each points)."""
    rules: dict[Path, str] = {}
    links: dict[Path, str] = {}
    for paths, rule in ((hidden, _HIDE), (own, _SHOW)):
        for p in paths:
            real, met = _walk(Path(p))
            rules[real] = rule
            if rule == _SHOW:
                links.update(met)
    for p in named:
        # What a command line names is shown unless it is hidden, or lies in a hidden folder
        # (another bot's) more closely than in a folder of the bot's own.
        real, met = _walk(Path(p))
        ruled = next((rules[a] for a in (real, *real.parents) if a in rules), None)
        if ruled != _HIDE:
            rules.setdefault(real, _SHOW)
            links.update(met)
    return rules, links


def _check_readable(paths: list[Path]) -> None:
    """As root the bot runs as a user of its own, who can use only what everyone may: say so
    before the spawn rather than let the bot die of 'Permission denied'."""
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # a missing cwd is reported by the spawn
        need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & need != need:
            raise SandboxUnavailable(f"in the sandbox the bot runs as an unprivileged user, and {path} is not readable "
                                     f"by other users: chmod a+rX {path} (or run the bot without the sandbox)")


# -- seccomp -----------------------------------------------------------------------------------

#: An entry of the filter: (system call number, argument tested or None, how: ``"eq"`` its low 32
#: bits equal ``value``, ``"set"`` they have a bit of ``value`` set, ``"nonnull"`` the whole
#: argument (a pointer) is not 0; the errno the call then
#: returns, 0 being a success that does nothing).
_Rule = tuple[int, int | None, str, int, int]
#: System call numbers of the machine's counters: io_setup, the mlocks, getrusage, (wait4,
#: waitid), and calls refused whole (move_pages, migrate_pages, perf_event_open, bpf, syslog).
_Counters = tuple[int, tuple[int, ...], int, tuple[int, int], tuple[int, ...]]
_ENOSYS, _ENOLCK, _EPERM, _EOPNOTSUPP, _EINVAL, _DONE = 38, 37, 1, 95, 22, 0
_CLONE_NEWUSER = 0x10000000
#: fcntl commands that take a lock on a file (classic, 64-bit and open-file-description locks):
#: they succeed and do nothing, as flock does, so a program that locks its own files for itself
#: (the JVM's perf data, SQLite) runs as before while no lock is ever seen by another process;
#: the commands that test for a lock (F_GETLK and its kin) fail with ENOLCK; and those that take
#: a lease or ask for notifications on a folder.
_LOCK_COMMANDS = (6, 7, 13, 14, 37, 38)
_LOCK_TESTS = (5, 12, 36)
_LEASE_COMMANDS = (1024, 1025, 1026)


def _shared_state(flock: int, fcntl: int, inotify: tuple[int, ...], fanotify: tuple[int, ...], unshare: int, clone: int,
                  keys: tuple[int, ...], mincore: int, madvise: int, rw2: tuple[int, int], fadvise: int,
                  counters: _Counters) -> list[_Rule]:
    """The rules that close what two processes of a match could share through the kernel:
    locks, leases and notifications on the files they both see, watches (inotify, fanotify),
    user namespaces, the kernel's keyrings, io_uring, the calls that tell or drop the page
    cache of a shared file, and the machine's counters (PROTOCOL.md, "Fair play")."""
    io_setup, mlocks, getrusage, (wait4, waitid), refused = counters
    return [
        (io_setup, None, "eq", 0, _ENOSYS),  # Linux AIO: aio-nr counts the whole machine's; RWF_NOWAIT in an iocb tells the cache
        *((nr, None, "eq", 0, _EPERM) for nr in mlocks),  # Mlocked counts the whole machine's (as without RLIMIT_MEMLOCK)
        # a process's fault counts, blocks read, context switches and peak RSS tell which pages
        # of a file were cached: its own, and a child's through wait4/waitid
        (getrusage, None, "eq", 0, _ENOSYS),
        (wait4, 3, "nonnull", 0, _EPERM),
        (waitid, 4, "nonnull", 0, _EPERM),
        # move_pages tells which pages are present; perf events count faults; bpf, syslog: the machine's
        *((nr, None, "eq", 0, _ENOSYS) for nr in refused),
        (flock, None, "eq", 0, _DONE),
        *((fcntl, 1, "eq", cmd, _DONE) for cmd in _LOCK_COMMANDS),
        *((fcntl, 1, "eq", cmd, _ENOLCK) for cmd in _LOCK_TESTS),
        *((fcntl, 1, "eq", cmd, _EINVAL) for cmd in _LEASE_COMMANDS),
        *((nr, None, "eq", 0, _ENOSYS) for nr in (*inotify, *fanotify, *keys, 425, 426, 427, 451)),  # io_uring; cachestat
        (unshare, 0, "set", _CLONE_NEWUSER, _EPERM),
        (clone, 0, "set", _CLONE_NEWUSER, _EPERM),
        (435, None, "eq", 0, _ENOSYS),  # clone3: its flags are in memory the filter cannot read (libc falls back to clone)
        (mincore, None, "eq", 0, _ENOSYS),
        (madvise, 2, "eq", 20, _DONE),  # MADV_COLD and MADV_PAGEOUT: would drop a shared file's pages
        (madvise, 2, "eq", 21, _DONE),
        *((nr, 5, "set", 0x8, _EOPNOTSUPP) for nr in rw2),  # preadv2/pwritev2 with RWF_NOWAIT: tells what is cached
        (fadvise, 3, "eq", 4, _DONE),  # POSIX_FADV_DONTNEED
    ]


#: Per machine: (audit arch, rules of every sandbox, rules of a sandbox whose memory cap is an
#: address-space limit: memfd_create, shmget, memfd_secret fail with ENOSYS) for its native
#: ABI, and the audit arches of its other ABIs, refused whole (every call fails with ENOSYS:
#: 32-bit programs do not run in the sandbox, and no 64-bit one can reach a call by their
#: numbers).  On x86-64 the x32 ABI, numbered from 2^30, is refused whole too.
_SECCOMP: dict[str, tuple[int, list[_Rule], list[_Rule], tuple[int, ...]]] = {
    "x86_64": (0xC000003E,
               _shared_state(73, 72, (253, 254, 294), (300, 301), 272, 56, (248, 249, 250), 27, 28, (327, 328), 221,
                             (206, (149, 151, 325), 98, (61, 247), (279, 256, 298, 321, 103))),
               [(nr, None, "eq", 0, _ENOSYS) for nr in (319, 29, 447)], (0x40000003,)),
    "aarch64": (0xC00000B7,
                _shared_state(32, 25, (26, 27), (262, 263), 97, 220, (217, 218, 219), 232, 233, (286, 287), 223,
                              (0, (228, 230, 284), 165, (260, 95), (239, 238, 241, 280, 116))),
                [(nr, None, "eq", 0, _ENOSYS) for nr in (279, 194, 447)], (0x40000028,)),
}


def seccomp_program(machine: str | None = None, *, address_space: bool = True) -> bytes:
    """The classic BPF program (as bwrap's ``--seccomp`` reads it) of the sandbox's filter on
    ``machine`` (this one by default): what :data:`_SECCOMP` refuses, with memfd_create and
    System V shared memory refused too when ``address_space`` (they fail with ENOSYS, as on a
    kernel without them, and runtimes fall back to files in /tmp); empty on a machine it does
    not know."""
    known = _SECCOMP.get(machine or platform.machine())
    if known is None:
        return b""
    arch, rules, memory_rules, refused_abis = known
    ld_w_abs, ja, jeq, jge, jset, ret = 0x20, 0x05, 0x15, 0x35, 0x45, 0x06
    allow = 0x7FFF0000

    def errno(e: int) -> int:
        return 0x00050000 | e

    native: list[tuple[int, int, int, int]] = [(ld_w_abs, 0, 0, 0)]
    if arch == 0xC000003E:
        native += [(jge, 0, 1, 0x40000000), (ret, 0, 0, errno(_ENOSYS))]  # x32
    for nr, arg, how, value, answer in [*rules, *(memory_rules if address_space else [])]:
        if arg is None:
            native += [(ld_w_abs, 0, 0, 0), (jeq, 0, 1, nr), (ret, 0, 0, errno(answer))]
        elif how == "nonnull":  # either half of the 64-bit argument (little-endian) has a bit set
            native += [(ld_w_abs, 0, 0, 0), (jeq, 0, 5, nr), (ld_w_abs, 0, 0, 16 + 8 * arg), (jset, 2, 0, 0xFFFFFFFF),
                       (ld_w_abs, 0, 0, 20 + 8 * arg), (jset, 0, 1, 0xFFFFFFFF), (ret, 0, 0, errno(answer))]
        else:
            native += [(ld_w_abs, 0, 0, 0), (jeq, 0, 3, nr), (ld_w_abs, 0, 0, 16 + 8 * arg),
                       (jset if how == "set" else jeq, 0, 1, value), (ret, 0, 0, errno(answer))]
    native.append((ret, 0, 0, allow))
    # the native ABI's block is longer than a conditional jump reaches: "ja" jumps over it
    program: list[tuple[int, int, int, int]] = [(ld_w_abs, 0, 0, 4), (jeq, 1, 0, arch), (ja, 0, 0, len(native)), *native]
    for other in refused_abis:
        program += [(jeq, 0, 1, other), (ret, 0, 0, errno(_ENOSYS))]
    program.append((ret, 0, 0, allow))  # an ABI the machine does not have
    return b"".join(struct.pack("=HBBI", *insn) for insn in program)


def _pipe_with(data: bytes) -> int:
    """The read end of a pipe holding ``data`` (its write end closed); inheritable."""
    r, w = os.pipe()
    try:
        os.write(w, data)  # a few hundred bytes: a pipe holds far more
    finally:
        os.close(w)
    os.set_inheritable(r, True)
    return r
