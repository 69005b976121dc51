"""A running bot: :class:`BotProcess` owns a bot's process (from :func:`referee.bots.spawn.spawn`)
and its three pipes, each through its own holder, and every way the bot ends.

Its stdout is a :class:`~referee.bots.reader.LineReader` (lines of bounded length), its stdin a
:class:`~referee.bots.pipes.PipeWriter`, its stderr a :class:`~referee.bots.pipes.StderrCopy` (a capped
log file, the last lines kept for error messages).  On every way out it kills the bot and
anything it left behind holding its pipes, reaps it and closes every descriptor.  It knows
nothing of the protocol: lines are bytes.

No function takes a timeout: callers put trio cancel scopes around :meth:`BotProcess.read_line`
and :meth:`BotProcess.send`.  Only one task may read (or write) a given bot at a time.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import final

import trio

from referee.base.errors import BotExited, LineTooLong
from referee.bots import sysinfo
from referee.bots.pipes import Closed, PipeWriter, StderrCopy, end_holders, started
from referee.bots.reader import LineReader
from referee.bots.sandbox import UIDS, remove_copies
from referee.bots.spawn import Confinement, Spawned, describe_exit, end_orphans, oom_kills, release_orphans, spawn

_UNREAD_READS = 4  # at close, how many reads of up to BUDGET bytes look for lines nobody read
_EXIT_WAIT = 0.5  # after EOF on stdout, how long to wait for the exit status
_REAP_WAIT = 5.0  # after SIGKILL, how long to wait for the kernel to let the process go
_PRIVATE = object()


@final
class BotProcess:
    """A running bot: its process group, its stdin and stdout as lines, its stderr as a log.

    Create one with :meth:`start`; end it with :meth:`close` (polite) or :meth:`kill`, which
    every exit path must reach (``async with`` does it).  Lines are bytes without the newline.

    The turn's calls go straight to the pipes' holders: :meth:`line_nowait`,
    :meth:`line_within`, :meth:`ready_lines` and :meth:`unfinished_line` are its stdout's
    (:class:`~referee.bots.reader.LineReader`), :meth:`write_nowait` its stdin's
    (:meth:`PipeWriter.write_nowait <referee.bots.pipes.PipeWriter.write_nowait>`).
    """

    line_nowait: Callable[[], bytes | None]
    line_within: Callable[[float], bytes | None]
    ready_lines: Callable[[], list[bytes]]
    unfinished_line: Callable[[], bytes]
    write_nowait: Callable[[bytes], int]

    def __init__(self, token: object, spawned: Spawned, name: str, stderr_cap: int, max_line: int, confinement: Confinement,
                 oom_at_start: int | None) -> None:
        if token is not _PRIVATE:
            raise TypeError("use 'await BotProcess.start(...)' to create a BotProcess")
        self._process = spawned.child
        self._name = name
        #: the referee's clock (trio's), read by the exchanges around each write and read
        self.now = trio.lowlevel.current_clock().current_time
        self._in = PipeWriter(spawned.stdin)
        self._out = out = LineReader(spawned.stdout, max_line, name)
        self._err = StderrCopy(spawned.stderr, spawned.log, stderr_cap)
        self._inodes = frozenset(f"pipe:[{os.fstat(fd).st_ino}]" for fd in (spawned.stdin, spawned.stdout, spawned.stderr))
        self._started = started(spawned.child.pid)  # what holds its pipes started no earlier
        self._holders_gone = False  # looked for once the bot had exited: none is left
        self.line_nowait = out.line_nowait
        self.line_within = out.line_within
        self.ready_lines = out.ready_lines
        self.unfinished_line = out.unfinished_line
        self.write_nowait = self._in.write_nowait
        self._watch_scope = trio.CancelScope()
        self._kill_started = False
        self._killed = trio.Event()
        self._killed_by_referee = False
        self._cgroup = spawned.cgroup
        self._uid = spawned.uid
        self._copies = spawned.copies
        self._sysinfo = spawned.sysinfo
        self._reaps = spawned.reaps
        self._sandboxed = confinement.sandbox
        self._oom = 0  # processes killed for memory, read when the cgroup is removed
        self._memory_mb = spawned.memory_mb
        self._oom_at_start = oom_at_start  # oom_kills() when it started
        self._cpu_limit = confinement.cpu_seconds
        self._paused = False
        self._frozen_by = ""

    @classmethod
    async def start(cls, nursery: trio.Nursery, argv: Sequence[str], *, name: str, stderr_path: Path, stderr_cap: int = 1 << 20,
                    max_line: int = 65536, confinement: Confinement | None = None, hidden: Sequence[Path] = ()) -> BotProcess:
        """Spawn a bot (:func:`referee.bots.spawn.spawn`) and start copying its stderr.

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
            :func:`referee.bots.sandbox.sandboxed`).

        Raises:
          BotNotFound: the spawn failed, or the sandbox cannot run it (see :func:`spawn`).
          OSError: the stderr log cannot be opened.
        """
        if max_line < 1:
            raise ValueError(f"max_line must be positive, not {max_line!r}")
        if stderr_cap < 0:
            raise ValueError(f"stderr_cap must not be negative, not {stderr_cap!r}")
        conf = confinement or Confinement()
        stderr_path = Path(stderr_path)
        stderr_path.parent.mkdir(parents=True, exist_ok=True)  # before the sandbox, which hides it
        oom_at_start = oom_kills()
        spawned = await spawn(argv, name=name, stderr_path=stderr_path, confinement=conf, hidden=hidden)
        bot = cls(_PRIVATE, spawned, name, stderr_cap, max_line, conf, oom_at_start)
        try:
            await nursery.start(bot._err.run)
            nursery.start_soon(bot._end_leftovers)
        except BaseException:
            await bot.kill()
            raise
        return bot

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

    # -- its pipes --

    async def read_line(self) -> bytes:
        """The next line from the bot's stdout (:meth:`LineReader.read_line
        <referee.bots.reader.LineReader.read_line>`).

        Raises:
          LineTooLong: the line is longer than ``max_line`` bytes, newline included.  The rest
            of that line is skipped, so the next call returns the line after it.
          BotExited: the bot closed its stdout (it exited, or :meth:`kill` ran).
        """
        line = await self._out.read_line()
        if line is None:
            raise await self._exited()
        return line

    async def send(self, data: bytes) -> None:
        """Write all of ``data`` to the bot's stdin, waiting while the pipe is full.

        A bot that does not read its stdin makes this wait forever: put a deadline around it.
        If cancelled, part of ``data`` may have been written.

        Raises:
          BotExited: the bot closed its stdin (usually by exiting), or :meth:`close` or
            :meth:`kill` ran.
        """
        try:
            await self._in.send(data)
        except Closed:
            raise await self._exited() from None

    def unread_input(self) -> int | None:
        """Bytes written to the bot that it has not read yet (``None`` once stdin is closed).

        Tells a bot that read the referee's ``hello`` and stayed silent (its answer is stuck
        in an output buffer) from one that never read its input.
        """
        return self._in.unread()

    def stderr_tail(self) -> str:
        """The last lines (about 20) the bot wrote to stderr."""
        return self._err.tail()

    # -- strict isolation --

    def pause(self) -> None:
        """Freeze every process of the bot, so that none runs until :meth:`resume` (strict
        isolation: PROTOCOL.md, "Fair play").  Its cgroup's freezer where it has a cgroup with
        one, else SIGSTOP to every process of its tree (in the sandbox its processes are not
        in its process group: bwrap starts a session of its own).  Lines written to it wait in
        the pipe.  Idempotent."""
        if self._paused or self.returncode is not None:
            return
        self._paused = True
        if self._cgroup is not None and self._cgroup.freeze(True):
            self._frozen_by = "cgroup"
            return
        self._frozen_by = "signal"
        self._signal_tree(signal.SIGSTOP)

    def resume(self) -> None:
        """Let the bot run again after :meth:`pause` (a no-op when it is not paused)."""
        if not self._paused:
            return
        self._paused = False
        if self._frozen_by == "cgroup" and self._cgroup is not None:
            self._cgroup.freeze(False)
        else:
            self._signal_tree(signal.SIGCONT)

    def _signal_tree(self, sig: int) -> None:
        """Send ``sig`` to the bot's process and every process below it, twice over (a process
        forked between the listing and the signal is found the second time)."""
        for _ in range(2):
            for pid in _tree(self._process.pid):
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass

    # -- endings --

    async def _exited(self) -> BotExited:
        """The error for a bot whose stdout or stdin is gone, with its exit status if it comes
        soon.  Shielded, so that a deadline falling now still reports the exit."""
        with trio.move_on_after(_EXIT_WAIT, shield=True):
            await self._process.wait()
        if self._err.fd >= 0:
            self._err.pump()
        rc = self.returncode
        tail = self.stderr_tail()
        if rc is None:
            what = "closed its stdout" if self._out.eof else "closed its stdin"
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
            self._in.close()
            with trio.move_on_after(grace):
                await self._process.wait()
            return self._unread_lines()
        finally:
            await self.kill()

    def _unread_lines(self) -> list[bytes]:
        lines: list[bytes] = []
        for _ in range(_UNREAD_READS):  # a bot still running may write without end
            try:
                got = self._out.ready_lines()
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
                if self._reaps:
                    self._signal_tree(signal.SIGKILL)  # its daemons too: it is their subreaper
                self._signal_group()
                if self._cgroup is not None:
                    self._cgroup.kill()  # a process frozen in a v1 cgroup dies once thawed: killed first
                self.resume()
                with trio.move_on_after(_REAP_WAIT):
                    await self._process.wait()
                await self._end_cgroup()
                await self._kill_pipe_holders()
                if self._reaps:
                    self._reaps = False
                    await release_orphans()
            finally:
                self._in.close()
                self._out.close()
                await self._err.stop()
                self._killed.set()

    async def _end_cgroup(self) -> None:
        """Empty and remove the bot's cgroup; then the bot's uid may serve another bot."""
        cgroup, self._cgroup = self._cgroup, None
        if cgroup is not None:
            self._oom = await cgroup.drain(_REAP_WAIT)
        if self._uid is not None:
            UIDS.give_back(self._uid)
            self._uid = None
        copies, self._copies = self._copies, None
        remove_copies(copies)
        answered, self._sysinfo = self._sysinfo, None
        sysinfo.forget(answered)

    async def _end_leftovers(self) -> None:
        """When the bot's own process exits, kill whatever it left holding its pipes: a child
        that inherited stdout would keep the pipe open, and the referee would wait for an end
        of stream that never comes (a timeout instead of the exit, with its code)."""
        with self._watch_scope:
            await self._process.wait()
            await self._kill_pipe_holders()
            await end_orphans()

    def _signal_group(self) -> None:
        # Even when the leader is gone, members it left in the group are still to be killed.
        # (Once the group is empty its id could name a new group, but only after the pids wrap
        # around between the bot's exit and this call, which comes right after it.)
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    async def _kill_pipe_holders(self) -> None:
        # Once the bot has exited and no process holds its pipes, none can come to hold them: a
        # holder is made only by a holder's fork.  So the exit's look spares the kill's.
        if self._holders_gone:
            return
        exited = self._process.returncode is not None
        gone = await end_holders((self._in, self._out, self._err), self._inodes, self._signal_group, _REAP_WAIT, self._started)
        self._holders_gone = exited and gone


def _tree(pid: int) -> list[int]:
    """``pid`` and every process below it (from /proc's ``children`` lists of each thread)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(c) for c in f.read().split() if int(c) not in out]
            except (OSError, ValueError):
                continue
    return out
