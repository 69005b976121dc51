"""Bot processes: how a command becomes a running bot, and everything the referee does to it.

This module owns the bot's process and its three pipes.  It resolves the command line, spawns
the bot in its own process group under a :class:`Confinement` (limits, environment, and
optionally the sandbox of :mod:`referee.sandbox`) and, where the machine allows, in a cgroup of
its own (:mod:`referee.cgroups`), splits its stdout into
lines of bounded length, copies its stderr to a capped log file (keeping the last lines for
error messages), and, on every way out, kills the bot and anything it left behind holding its
pipes, reaps it and closes every descriptor.  It knows nothing of the protocol: lines are bytes.

No function takes a timeout: callers put trio cancel scopes around :meth:`BotProcess.read_line`
and :meth:`BotProcess.send`.  Only one task may read (or write) a given bot at a time.
"""

from __future__ import annotations

import array
import ctypes
import fcntl
import os
import re
import resource
import select
import shlex
import shutil
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, final

import trio

from .cgroups import BotCgroup, join
from .errors import BotExited, BotNotFound, LineTooLong
from .sandbox import (
    DEFAULT_MEMORY_MB,
    DEFAULT_PROCESSES,
    UIDS,
    SandboxUnavailable,
    Spawn,
    address_space_mb,
    bot_environment,
    sandboxed,
)

__all__ = ["BotProcess", "Confinement", "describe_exit", "resolve_command"]

_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _prctl = None

_CHUNK = 1 << 16  # bytes per read syscall
_PREFIX = 200  # bytes of an overlong line kept for the error
_TAIL_BYTES = 8192  # stderr bytes kept to build stderr_tail()
_TAIL_LINES = 20
_BUDGET = 1 << 20  # bytes read without yielding, so a flooding bot cannot starve other tasks
_UNREAD_READS = 4  # at close, how many reads of up to _BUDGET bytes look for lines nobody read
_EXIT_WAIT = 0.5  # after EOF on stdout, how long to wait for the exit status
_REAP_WAIT = 5.0  # after SIGKILL, how long to wait for the kernel to let the process go


# -- command resolution ------------------------------------------------------------------------


class _Child:
    """A bot's process, spawned from the referee's own thread and awaited through a pidfd.

    ``trio.lowlevel.open_process`` spawns from a worker thread, and ``PR_SET_PDEATHSIG`` fires
    when the *thread* that spawned a child ends: trio retires idle worker threads after a few
    seconds, which would kill every bot mid-match.  Spawning here (a fork and exec, a few
    milliseconds with the loop blocked) ties the signal to the thread that runs the referee.
    """

    def __init__(self, argv: list[str], **popen_options) -> None:
        self._popen = subprocess.Popen(argv, **popen_options)
        self.pid = self._popen.pid
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except OSError:  # no pidfds (old kernel): wait() polls instead
            self._pidfd = -1
        self._lock = trio.Lock()

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
        return self._popen.returncode


def resolve_command(command: str | Sequence[str], cwd: Path | None = None) -> list[str]:
    """The argv that runs a bot, checked before anything is spawned.

    Args:
      command: a command line (split like a POSIX shell would, without running one) or an argv.
        A first word ending in ``.py`` runs with this Python, one ending in ``.js`` with
        ``node``; a first word containing ``/`` must be an executable file; any other must be a
        program on ``PATH``.
      cwd: the directory relative paths are taken from (default: the current directory).

    Returns:
      The argv, with the program (or the script) as an absolute path when it is a file.

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
    first, rest = argv[0], argv[1:]
    base = Path.cwd() if cwd is None else Path(cwd)
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
    defaults to :data:`~referee.sandbox.DEFAULT_MEMORY_MB` and counts the private /tmp too:
    where the machine has a memory cgroup the referee may use, it caps the memory the bot uses
    (its /tmp included: the kernel charges a tmpfs's pages to the cgroup), and going over it
    reads "out of memory"; elsewhere /tmp takes a fixed part of it and the address space the
    rest (:func:`~referee.sandbox.address_space_mb`).  ``cpu_seconds`` caps CPU time
    (``RLIMIT_CPU``: SIGXCPU at the limit, SIGKILL a second later).  ``cwd`` is the bot's
    working directory, and ``env`` holds variables added to the few every bot gets
    (:func:`referee.sandbox.bot_environment`).  ``sandbox`` runs the bot under bubblewrap
    (:mod:`referee.sandbox`), where ``processes`` caps its processes and threads.
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


# -- the process -------------------------------------------------------------------------------

_PRIVATE = object()


@final
class BotProcess:
    """A running bot: its process group, its stdin and stdout as lines, its stderr as a log.

    Create one with :meth:`start`; end it with :meth:`close` (polite) or :meth:`kill`, which
    every exit path must reach (``async with`` does it).  Lines are bytes without the newline.
    """

    def __init__(
        self,
        token: object,
        process: trio.Process,
        name: str,
        stdin: int,
        stdout: int,
        stderr: int,
        log: IO[bytes],
        stderr_cap: int,
        max_line: int,
    ) -> None:
        if token is not _PRIVATE:
            raise TypeError("use 'await BotProcess.start(...)' to create a BotProcess")
        self._process = process
        self._name = name
        #: the referee's clock (trio's), read by the exchanges around each write and read
        self.now = trio.lowlevel.current_clock().current_time
        self._stdin = stdin
        self._stdout = stdout
        self._stdout_poll = select.poll()  # "anything to read?" without a failing read
        self._stdout_poll.register(stdout, select.POLLIN)
        self._stderr = stderr
        self._inodes = frozenset(f"pipe:[{os.fstat(fd).st_ino}]" for fd in (stdin, stdout, stderr))
        self._max_line = max_line
        self._buf = bytearray()
        self._scanned = 0  # self._buf[:self._scanned] holds no newline
        self._discarding = False  # skipping the rest of an overlong line
        self._eof = False
        self._log = log
        self._stderr_cap = stderr_cap
        self._stderr_written = 0
        self._tail = b""
        self._stderr_scope = trio.CancelScope()
        self._stderr_started = False
        self._stderr_done = trio.Event()
        self._watch_scope = trio.CancelScope()
        self._kill_started = False
        self._killed = trio.Event()
        self._killed_by_referee = False
        self._cgroup: BotCgroup | None = None
        self._uid: int | None = None
        self._sandboxed = False
        self._oom = 0  # processes killed for memory, read when the cgroup is removed
        self._memory_mb: int | None = None
        self._oom_at_start: int | None = None  # oom_kills() when it started
        self._cpu_limit: int | None = None  # the sandbox's CPU seconds

    @classmethod
    async def start(
        cls,
        nursery: trio.Nursery,
        argv: Sequence[str],
        *,
        name: str,
        stderr_path: Path,
        stderr_cap: int = 1 << 20,
        max_line: int = 65536,
        confinement: Confinement | None = None,
        hidden: Sequence[Path] = (),
    ) -> BotProcess:
        """Spawn a bot in its own session and process group.

        Args:
          nursery: where the task copying the bot's stderr runs; it ends with :meth:`kill`, so
            the nursery cannot close before the bot is killed.
          argv: the command, usually from :func:`resolve_command`.
          name: how errors name the bot.
          stderr_path: the bot's stderr is appended there (the file is created if missing).
          stderr_cap: at most this many bytes of stderr reach the file; the rest is read and
            dropped, with one note in the file.
          max_line: the longest line accepted on stdout, in bytes, newline included (the
            protocol's ``Limits.max_line``).
          confinement: limits, working directory, extra environment, sandbox.
          hidden: in the sandbox, files and directories the bot must not see (see
            :func:`referee.sandbox.sandboxed`).

        Raises:
          BotNotFound: the spawn failed (no such program, not executable, bad interpreter,
            missing working directory, a limit that could not be set), or the sandbox cannot
            run it (no bwrap, files it could not read as its own user).
          OSError: the stderr log cannot be opened.
        """
        if max_line < 1:
            raise ValueError(f"max_line must be positive, not {max_line!r}")
        if stderr_cap < 0:
            raise ValueError(f"stderr_cap must not be negative, not {stderr_cap!r}")
        conf = confinement or Confinement()
        stderr_path = Path(stderr_path)
        stderr_path.parent.mkdir(parents=True, exist_ok=True)  # before the sandbox, which hides it
        memory_mb = conf.memory_limit
        cgroup = BotCgroup.create(memory_mb if conf.sandbox else None)
        address_space = cgroup is None or cgroup.memory is None
        if conf.sandbox:
            assert memory_mb is not None
            try:
                spawn = sandboxed(argv, cwd=conf.cwd, env=conf.env, processes=conf.processes, hidden=hidden,
                                  memory_mb=memory_mb, address_space=address_space)
            except SandboxUnavailable as e:
                if cgroup is not None:
                    cgroup.remove()
                raise BotNotFound(f"bot {name!r}: cannot start in the sandbox: {e}", bot=name) from None
        else:
            spawn = Spawn(list(argv), bot_environment(conf.env, sandboxed=False), conf.cwd)
        options: dict = {"start_new_session": True, "env": spawn.env}
        if spawn.cwd is not None:
            options["cwd"] = spawn.cwd
        if spawn.pass_fds:
            options["pass_fds"] = spawn.pass_fds
        limits = conf._rlimits(address_space=address_space)
        referee_pid = os.getpid()
        uid = spawn.uid
        join_fds = cgroup.join_files() if cgroup is not None else []

        def child_setup() -> None:
            join(join_fds)  # first: every process the bot starts stays in its cgroup
            for which, values in limits:
                resource.setrlimit(which, values)
            # Die with the referee, even if it is killed with SIGKILL and cannot clean up.
            if _prctl is not None:
                _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != referee_pid:  # the referee died before prctl took effect
                    os._exit(1)

        options["preexec_fn"] = child_setup

        def release() -> None:
            spawn.close_fds()
            for fd in join_fds:
                os.close(fd)
            if cgroup is not None:
                cgroup.kill()
                cgroup.remove()
            if uid is not None:
                UIDS.give_back(uid)

        with ExitStack() as on_fail:
            on_fail.callback(release)
            log = open(stderr_path, "ab", buffering=0)  # noqa: SIM115 - closed by kill()
            on_fail.callback(log.close)
            # The child gets its own copies of its ends; ours must go, or EOF never arrives.
            with ExitStack() as child_ends:
                in_w, in_r = _pipe(child_ends, on_fail, ours_writes=True)
                out_r, out_w = _pipe(child_ends, on_fail, ours_writes=False)
                err_r, err_w = _pipe(child_ends, on_fail, ours_writes=False)
                await trio.lowlevel.checkpoint()
                oom_at_start = oom_kills()
                try:
                    process = _Child(spawn.argv, stdin=in_r, stdout=out_w, stderr=err_w, **options)
                except (OSError, subprocess.SubprocessError) as e:
                    reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
                    if isinstance(e, FileNotFoundError) and e.filename == argv[0] and os.path.isfile(argv[0]):
                        # The file is there: what is missing is what runs it.
                        reason = missing_interpreter(Path(argv[0])) or (
                            f"{argv[0]} exists, but the loader it needs does not (built for another system?)")
                    raise BotNotFound(f"bot {name!r}: cannot start ({reason})", bot=name) from e
            on_fail.pop_all()

        spawn.close_fds()
        for fd in join_fds:
            os.close(fd)
        bot = cls(_PRIVATE, process, name, in_w,  # type: ignore[arg-type]  # a _Child quacks as a trio Process
                  out_r, err_r, log, stderr_cap, max_line)
        bot._cgroup = cgroup
        bot._uid = uid
        bot._sandboxed = conf.sandbox
        bot._memory_mb = memory_mb
        bot._oom_at_start = oom_at_start
        bot._cpu_limit = conf.cpu_seconds
        try:
            await nursery.start(bot._copy_stderr)
            nursery.start_soon(bot._end_leftovers)
        except BaseException:
            await bot.kill()
            raise
        return bot

    # -- properties --

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status (negative for a signal), or ``None`` while the bot runs.

        In the sandbox the bot's status comes through bwrap, which reports a death by signal N
        as the exit code 128 + N: it is read back as the signal."""
        rc = self._process.returncode
        if self._sandboxed and rc is not None and 128 < rc < 128 + signal.NSIG:
            return 128 - rc
        return rc

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        rc = self.returncode
        if rc == -signal.SIGKILL and self._killed_by_referee:
            status = "killed by the referee"
        else:
            status = "running" if rc is None else describe_exit(rc)
        return f"<BotProcess {self._name!r} pid {self.pid}: {status}>"

    async def __aenter__(self) -> BotProcess:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.kill()

    # -- stdout --

    async def read_line(self) -> bytes:
        """The next line from the bot's stdout, without its ``\\n`` (or ``\\r\\n``).

        When a line is already buffered or in the pipe this costs at most one read syscall and
        does not yield to other tasks (it is the referee's hot path); it waits otherwise.

        Raises:
          LineTooLong: the line is longer than ``max_line`` bytes, newline included.  The rest
            of that line is skipped, so the next call returns the line after it.
          BotExited: the bot closed its stdout (it exited, or :meth:`kill` ran).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        skipped = 0
        while True:
            line = self._take_line()
            if line is not None:
                return line
            if len(self._buf) >= self._max_line:
                raise self._too_long()
            try:
                n = self._fill()
            except BlockingIOError:
                try:
                    await trio.lowlevel.wait_readable(self._stdout)
                except trio.ClosedResourceError:  # kill() ran meanwhile
                    raise await self._exited() from None
                continue
            if not n:
                raise await self._exited()
            if self._discarding:
                skipped += n
                if skipped >= _BUDGET:  # an endless line must not keep us from being cancelled
                    skipped = 0
                    await trio.lowlevel.checkpoint()

    def line_nowait(self) -> bytes | None:
        """The next line if it is buffered or in the pipe now (one read at most), else ``None``.

        Never waits and never raises for the bot's doing: whenever :meth:`read_line` would
        wait, raise or skip an overlong line, this returns ``None`` and leaves it all to
        :meth:`read_line` (what it read stays buffered).
        """
        line = self._take_line()
        if line is None and not self._discarding and len(self._buf) < self._max_line:
            try:
                if self._fill():
                    line = self._take_line()
            except BlockingIOError:
                pass
        return line

    def line_within(self, seconds: float) -> bytes | None:
        """Like :meth:`line_nowait`, but block the thread up to ``seconds`` for the line.

        This waits in ``poll(2)`` outside trio's event loop, so nothing else in the loop runs
        meanwhile; callers keep ``seconds`` short (about a millisecond).  It pays because a bot
        that answers at once is then read without a trip through the scheduler, which costs
        several times a pipe round trip.  Returns ``None`` when no whole line came in time, or
        whenever :meth:`read_line` would have something to report.
        """
        if not self._buf and self._stdout >= 0 and not self._eof and not self._discarding:
            # The usual turn: nothing buffered, and the answer is in the pipe as one whole line.
            # One read, and the line is that read (line_nowait's way costs five calls more).
            try:
                data = os.read(self._stdout, min(_CHUNK, self._max_line))
            except BlockingIOError:
                pass  # not yet: wait below
            else:
                n = len(data)
                if n and data.find(b"\n") == n - 1:
                    return data[:-2] if n > 1 and data[-2] == 13 else data[:-1]  # 13 is '\r'
                if not n:
                    self._eof = True  # read_line reports it
                    return None
                self._buf += data  # as _fill would have read it
        line = self.line_nowait()
        if line is not None or self._stdout < 0 or self._eof or self._discarding:
            return line
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self._stdout_poll.poll(max(1, int(left * 1000 + 0.999))):
                return None
            line = self.line_nowait()
            if line is not None or self._eof or self._discarding or len(self._buf) >= self._max_line:
                return line

    def ready_lines(self) -> list[bytes]:
        """Every complete line already buffered or readable right now; never waits.

        A line still incomplete stays buffered for :meth:`read_line`, and so does the end of
        the stream, which :meth:`read_line` reports.  Reads at most about 1 MiB per call, so a
        bot writing without pause cannot keep it busy.

        Raises:
          LineTooLong: the first line not yet returned is overlong (as in :meth:`read_line`).
            When complete lines come before it, they are returned and the next call raises.
        """
        # The usual answer, before every turn, is "nothing": a poll says so for a third of
        # the cost of a read that fails with EAGAIN (and the exception it raises).
        if not self._buf and self._stdout >= 0 and not self._eof and not self._stdout_poll.poll(0):
            return []
        lines = []
        budget = _BUDGET
        while True:
            line = self._take_line()
            if line is not None:
                lines.append(line)
                continue
            if len(self._buf) >= self._max_line:
                if lines:
                    return lines
                raise self._too_long()
            if budget <= 0:
                return lines
            try:
                n = self._fill()
            except BlockingIOError:
                return lines
            if not n:
                return lines
            budget -= n

    def _take_line(self) -> bytes | None:
        """Pop one complete line from the buffer, or ``None`` if there is none yet."""
        buf = self._buf
        i = buf.find(b"\n", self._scanned)
        if i < 0:
            self._scanned = len(buf)
            return None
        end = i - 1 if i and buf[i - 1] == 13 else i  # 13 is '\r'
        line = bytes(buf[:end])
        del buf[: i + 1]
        self._scanned = 0
        return line

    def _too_long(self) -> LineTooLong:
        """Drop the buffered start of an overlong line and skip the rest of it as it comes."""
        prefix = bytes(self._buf[:_PREFIX])
        self._buf.clear()
        self._scanned = 0
        self._discarding = True
        return LineTooLong(
            f"bot {self._name!r} wrote a line longer than {self._max_line} bytes, starting {prefix[:60]!r}",
            bot=self._name,
            prefix=prefix,
            limit=self._max_line,
        )

    def _fill(self) -> int:
        """One read from stdout into the buffer; the number of bytes read, 0 at end of stream.

        Reads at most what keeps the buffer within ``max_line``, which is enough since the
        buffer never holds a complete line when this is called.  Raises BlockingIOError when
        the pipe is empty.
        """
        if self._eof or self._stdout < 0:
            return 0
        data = os.read(self._stdout, min(_CHUNK, self._max_line - len(self._buf)))
        n = len(data)
        if not n:
            self._eof = True
        elif not self._discarding:
            self._buf += data
        elif (i := data.find(b"\n")) >= 0:
            self._discarding = False
            self._buf += data[i + 1 :]
        return n

    def unfinished_line(self) -> bytes:
        """What the bot has written after its last complete line and not ended yet (a line
        without its newline, or one still in its buffer half-flushed); the first 200 bytes."""
        return bytes(self._buf[:_PREFIX])

    # -- stdin --

    def unread_input(self) -> int | None:
        """Bytes written to the bot that it has not read yet (``None`` once stdin is closed).

        Tells a bot that read the referee's ``hello`` and stayed silent (its answer is stuck
        in an output buffer) from one that never read its input.
        """
        if self._stdin < 0:
            return None
        count = array.array("i", [0])
        try:
            fcntl.ioctl(self._stdin, termios.FIONREAD, count)
        except OSError:
            return None
        return count[0]


    async def send(self, data: bytes) -> None:
        """Write all of ``data`` to the bot's stdin, waiting while the pipe is full.

        A bot that does not read its stdin makes this wait forever: put a deadline around it.
        If cancelled, part of ``data`` may have been written.

        Raises:
          BotExited: the bot closed its stdin (usually by exiting), or :meth:`close` or
            :meth:`kill` ran.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        view = memoryview(data)
        while view:
            if self._stdin < 0:
                raise await self._exited()
            try:
                view = view[os.write(self._stdin, view) :]
            except BlockingIOError:
                try:
                    await trio.lowlevel.wait_writable(self._stdin)
                except trio.ClosedResourceError:
                    raise await self._exited() from None
            except BrokenPipeError:
                raise await self._exited() from None

    def write_nowait(self, data: bytes) -> int:
        """Write what of ``data`` the pipe takes now (one write at most); the bytes written.

        Never waits and never raises for the bot's doing: a full pipe, or a bot that closed
        its stdin, writes 0 bytes, and :meth:`send` of the rest reports it.
        """
        if self._stdin < 0:
            return 0
        try:
            return os.write(self._stdin, data)
        except (BlockingIOError, BrokenPipeError):
            return 0

    # -- stderr --

    async def _copy_stderr(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self._stderr_started = True
        task_status.started()
        try:
            with self._stderr_scope:
                while self._stderr >= 0 and not self._pump_stderr():
                    await trio.lowlevel.wait_readable(self._stderr)
        except trio.ClosedResourceError:
            pass
        finally:
            self._stderr_done.set()

    def _pump_stderr(self) -> bool:
        """Move what the stderr pipe holds now (up to a budget) to the log; True at EOF."""
        budget = _BUDGET
        while budget > 0 and self._stderr >= 0:
            try:
                chunk = os.read(self._stderr, _CHUNK)
            except BlockingIOError:
                return False
            if not chunk:
                return True
            budget -= len(chunk)
            self._record_stderr(chunk)
        return False

    def _record_stderr(self, chunk: bytes) -> None:
        written, cap = self._stderr_written, self._stderr_cap
        if written <= cap:  # cap + 1 means the note is written and the rest is dropped
            room = cap - written
            try:
                if room > 0:
                    self._log.write(chunk[:room])
                if len(chunk) > room:
                    self._log.write(f"\n[referee: stderr cut after {cap} bytes; the rest was discarded]\n".encode())
            except (OSError, ValueError):  # disk full, or closed: a bot must not crash the referee
                pass
            self._stderr_written = min(written + len(chunk), cap + 1)
        if len(chunk) >= _TAIL_BYTES:
            self._tail = chunk[-_TAIL_BYTES:]
        else:
            self._tail = (self._tail + chunk)[-_TAIL_BYTES:]

    def stderr_tail(self) -> str:
        """The last lines (about 20) the bot wrote to stderr."""
        lines = self._tail.decode("utf-8", "replace").splitlines()
        if len(self._tail) == _TAIL_BYTES and lines:
            lines = lines[1:]  # the first one is probably cut
        return "\n".join(lines[-_TAIL_LINES:])

    # -- endings --

    async def _exited(self) -> BotExited:
        """The error for a bot whose stdout or stdin is gone, with its exit status if it comes
        soon.  Shielded, so that a deadline falling now still reports the exit."""
        with trio.move_on_after(_EXIT_WAIT, shield=True):
            await self._process.wait()
        if self._stderr >= 0:
            self._pump_stderr()
        rc = self.returncode
        tail = self.stderr_tail()
        if rc is None:
            what = "closed its stdout" if self._eof else "closed its stdin"
        elif rc == -signal.SIGKILL and self._killed_by_referee:
            what = "was killed by the referee"
        elif rc == -signal.SIGKILL and (self._cgroup.oom_kills() if self._cgroup is not None else self._oom):
            what = f"was killed: out of memory (over its memory limit of {self._memory_mb} MiB)"
        else:
            what = describe_exit(rc, self._why_killed() if rc == -signal.SIGKILL else None)
        last = next((s.strip() for s in reversed(tail.splitlines()) if s.strip()), "")
        if last:
            what += f"; last stderr line: {last[:200]}"
        return BotExited(f"bot {self._name!r} {what}", bot=self._name, returncode=rc, stderr_tail=tail)

    def _why_killed(self) -> str | None:
        """Who plausibly sent the SIGKILL the referee did not send."""
        now = oom_kills()
        if now is not None and self._oom_at_start is not None and now > self._oom_at_start:
            return "out of memory? the kernel killed a process for memory while it ran"
        if self._cpu_limit is not None:
            return f"the CPU time limit of {self._cpu_limit} s?"
        return None

    async def close(self, grace: float = 1.0) -> list[bytes]:
        """End the bot politely: close its stdin, let it exit within ``grace`` seconds, then
        :meth:`kill` whatever is left (always, even if cancelled).

        Returns the complete lines it wrote that were never read, up to its exit (or up to the
        kill): what it said when nobody asked, which ``referee check`` reports.  An overlong
        line is given as its first bytes.
        """
        try:
            self._close_fd("_stdin")
            with trio.move_on_after(grace):
                await self._process.wait()
            return self._unread_lines()
        finally:
            await self.kill()

    def _unread_lines(self) -> list[bytes]:
        lines: list[bytes] = []
        for _ in range(_UNREAD_READS):  # a bot still running may write without end
            try:
                got = self.ready_lines()
            except LineTooLong as exc:
                got = [exc.prefix]
            if not got:
                break
            lines += got
        return lines

    async def kill(self) -> None:
        """SIGKILL the bot's process group and any process still holding its pipes, reap the
        bot, close every descriptor and stop copying stderr.  Idempotent, shielded from
        cancellation, and quick whatever the bot does (no SIGTERM grace)."""
        with trio.CancelScope(shield=True):
            if self._kill_started:
                await self._killed.wait()
                return
            self._kill_started = True
            self._watch_scope.cancel()
            try:
                if self.returncode is None:
                    self._killed_by_referee = True
                self._signal_group()
                with trio.move_on_after(_REAP_WAIT):
                    await self._process.wait()
                await self._end_cgroup()
                await self._kill_pipe_holders()
                if self._stderr >= 0:
                    self._pump_stderr()
            finally:
                self._stderr_scope.cancel()
                for attr in ("_stdin", "_stdout", "_stderr"):
                    self._close_fd(attr)
                if self._stderr_started:
                    await self._stderr_done.wait()
                self._log.close()
                self._killed.set()

    async def _end_cgroup(self) -> None:
        """Kill every process left in the bot's cgroup (daemons included), wait for them to go
        and remove the cgroup; then the bot's uid may serve another bot."""
        cgroup, self._cgroup = self._cgroup, None
        if cgroup is not None:
            with trio.move_on_after(_REAP_WAIT):
                delay = 0.001
                while not cgroup.empty():
                    cgroup.kill()
                    await trio.sleep(delay)
                    delay = min(delay * 2, 0.05)
            cgroup.remove()
            self._oom = cgroup.oom_kills()
        if self._uid is not None:
            UIDS.give_back(self._uid)
            self._uid = None

    async def _end_leftovers(self) -> None:
        """When the bot's own process exits, kill whatever it left holding its pipes: a child
        that inherited stdout would keep the pipe open, and the referee would wait for an end
        of stream that never comes (a timeout instead of the exit, with its code)."""
        with self._watch_scope:
            await self._process.wait()
            await self._kill_pipe_holders()

    def _signal_group(self) -> None:
        # Even when the leader is gone, members it left in the group are still to be killed.
        # (Once the group is empty its id could name a new group, but only after the pids wrap
        # around between the bot's exit and this call, which comes right after it.)
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _pipes_held(self) -> bool:
        """Whether any other process still holds the child ends of our open pipes (POLLHUP on
        a read end means no writer is left; POLLERR on a write end, no reader)."""
        poller = select.poll()
        gone = {}
        for fd, events, hangup in (
            (self._stdin, select.POLLOUT, select.POLLERR),
            (self._stdout, select.POLLIN, select.POLLHUP),
            (self._stderr, select.POLLIN, select.POLLHUP),
        ):
            if fd >= 0:
                poller.register(fd, events)
                gone[fd] = hangup
        revents = dict(poller.poll(0))
        return any(not revents.get(fd, 0) & hangup for fd, hangup in gone.items())

    async def _kill_pipe_holders(self) -> None:
        """Kill processes outside the group that kept the bot's pipes, e.g. a grandchild that
        called setsid().  The /proc scan runs only when polling shows a holder is left."""
        with trio.move_on_after(_REAP_WAIT):
            delay = 0.001
            # polling cannot see a holder of stdin once close() has closed our end
            scan = self._stdin < 0
            while scan or self._pipes_held():
                scan = False
                for pid in _pipe_holders(self._inodes):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                self._signal_group()
                await trio.sleep(delay)
                delay = min(delay * 2, 0.05)

    def _close_fd(self, attr: str) -> None:
        fd = getattr(self, attr)
        if fd >= 0:
            setattr(self, attr, -1)
            trio.lowlevel.notify_closing(fd)
            os.close(fd)


def _pipe(child_ends: ExitStack, on_fail: ExitStack, *, ours_writes: bool) -> tuple[int, int]:
    """A pipe as (our end, non-blocking; the child's end), each registered for closing."""
    r, w = os.pipe()
    ours, theirs = (w, r) if ours_writes else (r, w)
    child_ends.callback(os.close, theirs)
    on_fail.callback(os.close, ours)
    os.set_blocking(ours, False)
    return ours, theirs


def _pipe_holders(inodes: frozenset[str]) -> list[int]:
    """Processes holding any of the pipes named like ``pipe:[1234]``, except this process and
    its own children (the bot itself is reaped separately; another bot being spawned right now
    may briefly hold copies of our descriptors between fork and exec)."""
    me = os.getpid()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        fd_dir = f"/proc/{entry.name}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if link in inodes:
                if _parent(entry.name) != me:
                    found.append(int(entry.name))
                break
    return found


def _parent(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # the command name, in parentheses, may itself contain spaces and ')'
    return int(stat[stat.rindex(b")") + 2 :].split()[1])
