"""How a command becomes a bot's process: the command line resolved and checked, the process
spawned in its own session and process group under a :class:`Confinement` (limits, environment,
and optionally the sandbox of :mod:`referee.bots.sandbox`) and, where the machine allows, in a cgroup
of its own (:mod:`referee.bots.cgroups`), with three fresh pipes; and how an exit status reads in
words (:func:`describe_exit`).

:func:`spawn` gives the running child with the referee's ends of its pipes; what the referee then
does with them, and how it ends the bot, is :class:`referee.bots.process.BotProcess`'s.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

import trio

from referee.base.errors import BotNotFound
from referee.bots import sysinfo
from referee.bots.cgroups import BotCgroup, join
from referee.bots.sandbox import (
    DEFAULT_MEMORY_MB,
    DEFAULT_PROCESSES,
    UIDS,
    SandboxUnavailable,
    Spawn,
    address_space_mb,
    bot_environment,
    remove_copies,
    sandboxed,
)

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _prctl = None


# -- command resolution ------------------------------------------------------------------------


class Child:
    """A bot's process, spawned by the referee's spawning thread and awaited through a pidfd.

    ``PR_SET_PDEATHSIG`` fires when the *thread* that spawned a child ends, so a bot cannot be
    spawned from one of trio's worker threads, which are retired after a few idle seconds (every
    bot would die mid-match).  Nor from the referee's own loop: the child's set-up (cgroup,
    limits, the death signal) makes a spawn a fork and not a vfork, and the parent waits for the
    child's exec, a few milliseconds in which a table playing beside it could not be served.  So
    every spawn runs on one thread of the referee's that never ends (:func:`_spawning_thread`);
    the loop is held only while the fork copies the referee's page tables.
    """

    def __init__(self, popen: subprocess.Popen) -> None:
        self._popen = popen
        self.pid = popen.pid
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except OSError:  # no pidfds (old kernel): wait() polls instead
            self._pidfd = -1
        self._lock = trio.Lock()

    @classmethod
    async def start(cls, argv: list[str], **popen_options) -> Child:
        """Spawn ``argv`` (``subprocess.Popen``'s options) on the spawning thread.  Not
        cancellable once begun: the process is returned, to be owned and ended by the caller."""
        def run() -> subprocess.Popen:
            popen = subprocess.Popen(argv, **popen_options)
            _bots.add(popen.pid)  # on the spawning thread, where orphans are swept: never taken for one
            return popen

        return cls(await _on_spawning_thread(run))

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        """Wait for the exit and reap it; several tasks may wait at once."""
        async with self._lock:  # one task at a time may wait on the pidfd
            while self._popen.poll() is None:
                if self._pidfd >= 0:
                    await trio.lowlevel.wait_readable(self._pidfd)
                else:
                    await trio.sleep(0.01)
            if self._pidfd >= 0:
                trio.lowlevel.notify_closing(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = -1
        _bots.discard(self.pid)
        return self._popen.returncode


#: The pids of the bots' own processes this referee spawned and has not reaped.
_bots: set[int] = set()
#: The live bots whose leftovers the referee reaps itself (:func:`adopt_orphans`).
_reaping = 0


def adopt_orphans() -> None:
    """Make the referee a child subreaper while a bot that no cgroup holds lives: a process such
    a bot leaves behind when it exits (a ``setsid`` daemon with its descriptors closed) becomes
    the referee's child, not init's, so :func:`end_orphans` can find and kill it.  Undone by
    :func:`release_orphans` when the last such bot is gone (a subreaper adopts every orphan of
    every program it ever started, for as long as it is one)."""
    global _reaping
    _reaping += 1
    if _reaping == 1 and _prctl is not None:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)


async def end_orphans() -> None:
    """Kill and reap the processes bots left behind that came to the referee (:func:`adopt_orphans`):
    its children in a session not its own (every bot runs in a session of its own, and so does
    whatever it starts) that are not a bot's own process."""
    if _reaping:
        await _on_spawning_thread(_end_orphans)


async def release_orphans() -> None:
    """A bot that :func:`adopt_orphans` counted is gone: its leftovers are ended, and the referee
    stops being a subreaper when it was the last."""
    global _reaping
    await end_orphans()
    _reaping = max(0, _reaping - 1)
    if _reaping == 0 and _prctl is not None:
        _prctl(_PR_SET_CHILD_SUBREAPER, 0)


def _end_orphans() -> None:
    session = os.getsid(0)
    for _ in range(8):  # an orphan may fork between the listing and the kill: look again
        found = [pid for pid in _children(os.getpid()) if pid not in _bots and _session(pid) not in (None, session)]
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in found:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)  # SIGKILLed: it ends at once


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def _session(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rpartition(b")")[2].split()[3])
    except (OSError, ValueError, IndexError):
        return None


T = TypeVar("T")
_spawn_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None
_spawner_lock = threading.Lock()


def _spawning_thread() -> None:
    while True:
        _spawn_jobs.get()()


async def _on_spawning_thread(fn: Callable[[], T]) -> T:
    """``fn()`` run on the spawning thread (started on first use, a daemon that lives as long as
    the referee), its result or exception handed back to this trio task."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = threading.Thread(target=_spawning_thread, name="referee-spawn", daemon=True)
            _spawner.start()
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()
    outcome: list = []

    def job() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as e:  # handed back to the task, raised there
            outcome.append((False, e))
        token.run_sync_soon(done.set)

    _spawn_jobs.put(job)
    with trio.CancelScope(shield=True):  # a process begun must reach its owner, to be ended
        await done.wait()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def resolve_command(command: str | Sequence[str], cwd: Path | None = None) -> list[str]:
    """The argv that runs a bot, checked before anything is spawned.

    Args:
      command: a command line (split like a POSIX shell would, without running one) or an argv.
        A first word ending in ``.py`` runs with this Python, one ending in ``.js`` with
        ``node``; a first word containing ``/`` must be an executable file; any other must be a
        program on ``PATH``.
      cwd: the directory relative paths are taken from (default: the current directory).

    Returns:
      The argv, with the program (or the script) as an absolute path when it is a file, and
      each later word that is a path through ``..`` to an existing file or folder made absolute
      with the ``..`` taken as the kernel takes it (``node ../bots/bot.js`` run from ``/a/tests``
      is ``node /a/bots/bot.js``): a sandboxed bot is shown its own folder but not the one its
      path went up from, so no path it is given or run in may pass through that one.

    Raises:
      BotNotFound: the command is empty or cannot be split, the file does not exist or is not
        executable, the program is not on ``PATH``, or ``node`` is needed and missing.
    """
    shown = command if isinstance(command, str) else shlex.join(command)

    def fail(reason: str) -> BotNotFound:
        return BotNotFound(f"bot {shown!r}: {reason}", bot=shown)

    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise fail(f"cannot split the command line ({e})") from None
    else:
        argv = list(command)
    if not argv or not argv[0]:
        raise fail("empty command")
    base = Path.cwd() if cwd is None else Path(cwd)
    first, rest = argv[0], [_through_parent(word, base) for word in argv[1:]]
    path = base / os.path.expanduser(first)

    if first.endswith((".py", ".js")):
        if not path.is_file():
            raise fail("no such file" if not path.exists() else "not a file")
        if first.endswith(".py"):
            return [sys.executable, str(path.resolve()), *rest]
        node = shutil.which("node")
        if node is None:
            raise fail("'node' is not on PATH")
        return [node, str(path.resolve()), *rest]

    if "/" in first:
        if not path.exists():
            raise fail("no such file")
        if not path.is_file():
            raise fail("not a file")
        if not os.access(path, os.X_OK):
            raise fail("not executable (chmod +x?)")
        if (missing := missing_interpreter(path)) is not None:
            raise fail(missing)
        return [str(path.resolve()), *rest]

    found = shutil.which(first)
    if found is None:
        hint = f" (did you mean './{first}'?)" if (base / first).is_file() else ""
        raise fail(f"{first!r} is not on PATH{hint}")
    return [found, *rest]


def _through_parent(word: str, base: Path) -> str:
    """``word`` itself, or when it is a path through ``..`` to an existing file or folder (taken
    from ``base`` when relative), that path made absolute with its folder resolved as the kernel
    resolves it (``..`` after a link goes up from the link's target); the file's own name is
    kept, a link or not."""
    if word.startswith("-") or ".." not in Path(word).parts:
        return word
    path = base / os.path.expanduser(word)
    try:
        if not path.exists():
            return word
    except OSError:
        return word
    if path.name in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(path.parent), path.name)


#: Programs that run a bot kept in another file (an interpreter, a VM, a wrapper): a bot run by
#: one is named after what it runs, so that ``java -jar a.jar`` and ``java -jar b.jar`` are a and b.
_RUNNER = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|java|perl|ruby|tclsh|wish|jimsh|bash|sh|dash|zsh|ksh|php|lua|luajit|rscript"
    r"|julia|dotnet|mono|guile|racket|sbcl|swipl|escript|elixir|runghc|runhaskell|scala|kotlin|groovy|env|nice|stdbuf)"
    r"[\d.]*(\.exe)?",
    re.IGNORECASE,
)
#: Runner options whose value is the next word (and does not name the bot).
_OPTION_VALUES = frozenset(("-cp", "-classpath", "--class-path", "-p", "--module-path", "-I", "-X", "-W", "-o", "-i"))


def bot_name(command: str | Sequence[str]) -> str:
    """A display name for a bot, from its command line: the stem of the program, or of the file
    or module an interpreter runs (``python3 -u bot.py``, ``java -jar bot.jar``, ``perl bot.pl``,
    ``python -m bot``: each is ``bot``).  Never empty."""
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
    else:
        words = list(command)
    i = 0
    while i < len(words) and _RUNNER.fullmatch(Path(words[i]).name):
        i += 1
        while i < len(words) and (words[i].startswith("-") or "=" in words[i]):
            option = words[i]
            i += 1
            if option in ("-jar", "-m") and i < len(words):
                return Path(words[i]).stem if option == "-jar" else words[i]
            if option in _OPTION_VALUES:
                i += 1
    word = words[i] if i < len(words) else (words[0] if words else "")
    return Path(word).stem or "bot"


def missing_interpreter(path: Path) -> str | None:
    """What is missing when the script ``path`` names, on its ``#!`` line, an interpreter that
    does not exist (the kernel then says "No such file" as if the script itself were missing),
    or ``None``."""
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return "its #! line names no interpreter"
    interpreter = words[0]
    if not os.path.isfile(interpreter):
        return f"its interpreter {interpreter} (from its #! line) does not exist"
    if not os.access(interpreter, os.X_OK):
        return f"its interpreter {interpreter} (from its #! line) is not executable"
    if Path(interpreter).name == "env":
        program = next((w for w in words[1:] if not w.startswith("-")), None)
        if program is not None and "=" not in program and shutil.which(program) is None:
            return f"its #! line runs {program!r} through env, and {program!r} is not on PATH"
    return None


def oom_kills() -> int | None:
    """How many processes the kernel has killed for lack of memory since it booted (the
    ``oom_kill`` line of /proc/vmstat, which counts cgroup limits too), or ``None``."""
    try:
        with open("/proc/vmstat", "rb") as f:
            for line in f:
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


# -- exit statuses -----------------------------------------------------------------------------

_SIGNAL_HINTS = {
    signal.SIGXCPU: "CPU time limit",
    signal.SIGSEGV: "crashed: segmentation fault",
    signal.SIGBUS: "crashed: bus error",
    signal.SIGILL: "illegal instruction: built for another CPU?",
    signal.SIGFPE: "crashed: arithmetic error",
    signal.SIGABRT: "aborted",
    signal.SIGPIPE: "wrote to a closed pipe",
}


def describe_exit(returncode: int | None, why_killed: str | None = None) -> str:
    """How a process ended, in words: ``exited with code 3``, ``killed by SIGSEGV (crashed: ...)``.

    ``returncode`` follows :attr:`subprocess.Popen.returncode`: negative for a signal, ``None``
    while the process runs.  A SIGKILL can come from anyone, so it gets a hint only from the
    caller, who may know (``why_killed``: the kernel ran out of memory meanwhile, a CPU limit).
    """
    if returncode is None:
        return "is still running"
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        sig = signal.Signals(-returncode)
    except ValueError:
        return f"killed by signal {-returncode}"
    hint = why_killed if sig == signal.SIGKILL else _SIGNAL_HINTS.get(sig)
    return f"killed by {sig.name} ({hint})" if hint else f"killed by {sig.name}"


# -- confinement ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Confinement:
    """Where, under which limits and how shut in a bot runs.  Every field is optional.

    ``memory_mb`` caps the address space (``RLIMIT_AS``: virtual memory, so runtimes that
    reserve a lot up front, such as node or the JVM, need a generous value); in the sandbox it
    defaults to :data:`~referee.bots.sandbox.DEFAULT_MEMORY_MB` and counts the private /tmp too:
    where the machine has a memory cgroup the referee may use, it caps the memory the bot uses
    (its /tmp included: the kernel charges a tmpfs's pages to the cgroup), and going over it
    reads "out of memory"; elsewhere /tmp takes a fixed part of it and the address space the
    rest (:func:`~referee.bots.sandbox.address_space_mb`).  ``cpu_seconds`` caps CPU time
    (``RLIMIT_CPU``: SIGXCPU at the limit, SIGKILL a second later).  ``cwd`` is the bot's
    working directory, and ``env`` holds variables added to the few every bot gets
    (:func:`referee.bots.sandbox.bot_environment`).  ``sandbox`` runs the bot under bubblewrap
    (:mod:`referee.bots.sandbox`), where ``processes`` caps its processes and threads.
    """

    memory_mb: int | None = None
    cpu_seconds: int | None = None
    cwd: Path | None = None
    env: dict[str, str] | None = None
    sandbox: bool = False
    processes: int = DEFAULT_PROCESSES

    def __post_init__(self) -> None:
        for name, unit in (("memory_mb", "MiB"), ("cpu_seconds", "seconds")):
            value = getattr(self, name)
            if value is not None and not 0 < value < 1 << 31:
                raise ValueError(f"{name} must be a whole number of {unit} from 1 to {(1 << 31) - 1}, not {value!r}")
        if self.processes < 2:
            raise ValueError(f"processes must be at least 2 (the sandbox's init counts as one), not {self.processes!r}")

    @property
    def memory_limit(self) -> int | None:
        """The memory cap in MiB: ``memory_mb``, else the sandbox's default, else none."""
        if self.memory_mb is not None:
            return self.memory_mb
        return DEFAULT_MEMORY_MB if self.sandbox else None

    def _rlimits(self, address_space: bool = True) -> list[tuple[int, tuple[int, int]]]:
        """The limits to set in the child, computed in the parent (the child only calls
        setrlimit).  An unprivileged process cannot raise a hard limit, so stay under it."""
        wanted = []
        limit = self.memory_limit
        if limit is not None and address_space:
            if self.sandbox:
                limit = address_space_mb(limit)  # the private /tmp has the rest
            wanted.append((resource.RLIMIT_AS, limit << 20, limit << 20))
        if self.cpu_seconds is not None:
            wanted.append((resource.RLIMIT_CPU, self.cpu_seconds, self.cpu_seconds + 1))
        limits = []
        for which, soft, hard in wanted:
            _, current_hard = resource.getrlimit(which)
            if current_hard != resource.RLIM_INFINITY:
                soft, hard = min(soft, current_hard), min(hard, current_hard)
            limits.append((which, (soft, hard)))
        return limits


# -- spawning ----------------------------------------------------------------------------------


@dataclass
class Spawned:
    """A bot's process just started: the child, the referee's ends of its pipes (non-blocking;
    the child's ends are closed here), the file its stderr is copied to, and what the process
    holds that must be given back when it ends (its cgroup, the sandbox's uid, its private
    copies of its files)."""

    child: Child
    stdin: int
    stdout: int
    stderr: int
    log: IO[bytes]
    cgroup: BotCgroup | None
    uid: int | None
    memory_mb: int | None
    copies: Path | None = None
    #: the referee reaps what it leaves behind (no cgroup, no sandbox): see :func:`adopt_orphans`
    reaps: bool = False
    #: its sysinfo() is answered by the referee: the token to :func:`referee.bots.sysinfo.forget` it by
    sysinfo: int | None = None


async def spawn(argv: Sequence[str], *, name: str, stderr_path: Path, confinement: Confinement,
                hidden: Sequence[Path] = ()) -> Spawned:
    """Spawn a bot in its own session and process group, confined as ``confinement`` says, its
    stderr to be copied to ``stderr_path`` (opened for appending; its folder must exist).

    Raises:
      BotNotFound: the spawn failed (no such program, not executable, bad interpreter, missing
        working directory, a limit that could not be set), or the sandbox cannot run it (no
        bwrap, files it could not read as its own user).
      OSError: the stderr log cannot be opened.
    """
    conf = confinement
    memory_mb = conf.memory_limit
    # made on the spawning thread too: a cgroup's mkdir takes the kernel a millisecond or more
    cgroup = await _on_spawning_thread(lambda: BotCgroup.create(memory_mb if conf.sandbox else None))
    address_space = cgroup is None or cgroup.memory is None
    if conf.sandbox:
        assert memory_mb is not None
        try:
            plan = sandboxed(argv, cwd=conf.cwd, env=conf.env, processes=conf.processes, hidden=hidden,
                             memory_mb=memory_mb, address_space=address_space)
        except SandboxUnavailable as e:
            if cgroup is not None:
                cgroup.remove()
            raise BotNotFound(f"bot {name!r}: cannot start in the sandbox: {e}", bot=name) from None
    else:
        plan = Spawn(list(argv), bot_environment(conf.env, sandboxed=False), conf.cwd)
    options: dict = {"start_new_session": True, "env": plan.env}
    if plan.cwd is not None:
        options["cwd"] = plan.cwd
    if plan.pass_fds:
        options["pass_fds"] = plan.pass_fds
    limits = conf._rlimits(address_space=address_space)
    referee_pid = os.getpid()
    uid = plan.uid
    join_fds = cgroup.join_files() if cgroup is not None else []
    # Without a cgroup and without the sandbox (whose PID namespace dies with the bot), what the
    # bot leaves behind is found by parentage: the bot is a subreaper while it lives (its tree
    # holds its daemons) and the referee once it is gone.
    reaps = cgroup is None and not conf.sandbox
    # A sandboxed bot's sysinfo() is answered by the referee (referee.bots.sysinfo): the child
    # installs the filter and sends its listener back over this pair.
    notify = sysinfo.Channel(on=conf.sandbox and sysinfo.supported(plan.argv[0]), memory_mb=memory_mb or 0)

    def child_setup() -> None:
        join(join_fds)  # first: every process the bot starts stays in its cgroup
        for which, values in limits:
            resource.setrlimit(which, values)
        notify.install()
        # Die with the referee, even if it is killed with SIGKILL and cannot clean up.
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if reaps:
                _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # kept across exec
            if os.getppid() != referee_pid:  # the referee died before prctl took effect
                os._exit(1)

    options["preexec_fn"] = child_setup

    def release() -> None:
        notify.close()
        plan.close_fds()
        for fd in join_fds:
            os.close(fd)
        if cgroup is not None:
            cgroup.kill()
            cgroup.remove()
        if uid is not None:
            UIDS.give_back(uid)
        remove_copies(plan.copies)

    with ExitStack() as on_fail:
        on_fail.callback(release)
        if reaps:
            adopt_orphans()
            on_fail.callback(_unadopt)
        log = open(stderr_path, "ab", buffering=0)  # noqa: SIM115 - closed by the bot's kill()
        on_fail.callback(log.close)
        # The child gets its own copies of its ends; ours must go, or EOF never arrives.
        with ExitStack() as child_ends:
            in_w, in_r = _pipe(child_ends, on_fail, ours_writes=True)
            out_r, out_w = _pipe(child_ends, on_fail, ours_writes=False)
            err_r, err_w = _pipe(child_ends, on_fail, ours_writes=False)
            try:
                child = await Child.start(plan.argv, stdin=in_r, stdout=out_w, stderr=err_w, **options)
            except (OSError, subprocess.SubprocessError) as e:
                reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
                if isinstance(e, FileNotFoundError) and e.filename == argv[0] and os.path.isfile(argv[0]):
                    # The file is there: what is missing is what runs it.
                    reason = missing_interpreter(Path(argv[0])) or (
                        f"{argv[0]} exists, but the loader it needs does not (built for another system?)")
                raise BotNotFound(f"bot {name!r}: cannot start ({reason})", bot=name) from e
        answered = notify.take()
        on_fail.pop_all()

    notify.close()
    plan.close_fds()
    for fd in join_fds:
        os.close(fd)
    return Spawned(child, in_w, out_r, err_r, log, cgroup, uid, memory_mb, plan.copies, reaps, answered)


def _unadopt() -> None:
    """A spawn that counted itself in :func:`adopt_orphans` failed: nothing of it is left to reap."""
    global _reaping
    _reaping = max(0, _reaping - 1)
    if _reaping == 0 and _prctl is not None:
        _prctl(_PR_SET_CHILD_SUBREAPER, 0)


def _pipe(child_ends: ExitStack, on_fail: ExitStack, *, ours_writes: bool) -> tuple[int, int]:
    """A pipe as (our end, non-blocking; the child's end), each registered for closing."""
    r, w = os.pipe()
    ours, theirs = (w, r) if ours_writes else (r, w)
    child_ends.callback(os.close, theirs)
    on_fail.callback(os.close, ours)
    os.set_blocking(ours, False)
    return ours, theirs
