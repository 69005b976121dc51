"""BotProcess against real, hostile child processes (``python -c`` snippets).

Deadlines here only catch hangs; no test asserts how long anything took.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
import textwrap
import time
import tracemalloc
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from support import alive

import referee.bots.spawn as spawn_module
from referee.base.errors import BotExited, BotNotFound, LineTooLong, RefereeError
from referee.bots.process import BotProcess
from referee.bots.spawn import Confinement, bot_name, describe_exit, resolve_command

HANG = 20  # seconds after which a step counts as hung


def bot_argv(snippet: str) -> list[str]:
    """argv running ``snippet`` as a bot, unbuffered so every write reaches the pipe at once."""
    return [sys.executable, "-u", "-c", textwrap.dedent(snippet)]


@asynccontextmanager
async def running(snippet: str, tmp_path: Path, **kwargs):
    kwargs.setdefault("stderr_path", tmp_path / "stderr.log")
    async with trio.open_nursery() as nursery:
        bot = await BotProcess.start(nursery, bot_argv(snippet), name="testbot", **kwargs)
        async with bot:
            yield bot


async def wait_dead(pid: int) -> None:
    with trio.fail_after(HANG):
        while alive(pid):
            await trio.sleep(0.01)


ECHO = """
    import sys
    while line := sys.stdin.buffer.readline():
        sys.stdout.buffer.write(line)
"""

SILENT = """
    import time
    print("ready", flush=True)
    time.sleep(600)
"""


# -- reading and writing lines -----------------------------------------------------------------


async def test_echo_round_trip(tmp_path):
    async with running(ECHO, tmp_path) as bot:
        with trio.fail_after(HANG):
            for i in range(300):
                await bot.send(b'{"n": %d}\n' % i)
                assert await bot.read_line() == b'{"n": %d}' % i
            lines = [b"line %d " % i + b"x" * (i % 97) for i in range(3000)]
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot.send, b"".join(line + b"\n" for line in lines))
                assert [await bot.read_line() for _ in lines] == lines
        assert bot.returncode is None
        await bot.close()
        assert bot.returncode == 0
        assert "exited with code 0" in repr(bot)


async def test_partial_writes_and_crlf(tmp_path):
    snippet = """
        import sys, time
        for piece in [b"hel", b"lo\\nwor", b"ld\\r", b"\\n", b"\\r\\n", b"a\\rb\\n", b"\\n", b"last\\r\\n"]:
            sys.stdout.buffer.write(piece)
            time.sleep(0.02)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            assert [await bot.read_line() for _ in range(6)] == [b"hello", b"world", b"", b"a\rb", b"", b"last"]
            with pytest.raises(BotExited) as info:
                await bot.read_line()
            assert info.value.returncode == 0


async def test_max_line_counts_the_newline(tmp_path):
    snippet = """
        import sys
        out = sys.stdout.buffer
        out.write(b"a" * 99 + b"\\n")
        out.write(b"b" * 98 + b"\\r\\n")
        out.write(b"c" * 100 + b"\\n")
        out.write(b"after\\n")
        out.write(b"d" * 99 + b"\\r\\n")
        out.write(b"end\\n")
        sys.stdin.read()
    """
    async with running(snippet, tmp_path, max_line=100) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == b"a" * 99
            assert await bot.read_line() == b"b" * 98
            with pytest.raises(LineTooLong) as info:
                await bot.read_line()
            assert info.value.prefix == b"c" * 100
            assert info.value.limit == 100
            assert "'testbot'" in str(info.value) and "100 bytes" in str(info.value)
            # the rest of the overlong line is skipped
            assert await bot.read_line() == b"after"
            # the \r counts too: 99 + 2 bytes is over
            with pytest.raises(LineTooLong):
                await bot.read_line()
            assert await bot.read_line() == b"end"


async def test_ten_megabyte_line_is_not_buffered(tmp_path):
    snippet = """
        import sys
        sys.stdout.buffer.write(b"x" * (10 << 20))
        sys.stdout.buffer.write(b"\\nok\\n")
        sys.stdin.read()
    """
    max_line = 1000
    async with running(snippet, tmp_path, max_line=max_line) as bot:
        tracemalloc.start()
        try:
            with trio.fail_after(HANG):
                with pytest.raises(LineTooLong) as info:
                    await bot.read_line()
                assert len(bot._out.buf) <= max_line
                assert info.value.prefix == b"x" * 200
                assert "\n" not in str(info.value)
                assert await bot.read_line() == b"ok"
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(bot._out.buf) <= max_line
        assert peak < 2 << 20, f"reading a 10 MB line peaked at {peak} bytes"


async def test_endless_line_stays_cancellable(tmp_path):
    snippet = """
        import os
        block = b"y" * 65536
        while True:
            os.write(1, block)
    """
    async with running(snippet, tmp_path, max_line=1000) as bot:
        with trio.fail_after(HANG), pytest.raises(LineTooLong):
            await bot.read_line()
        with trio.move_on_after(0.3) as scope:
            await bot.read_line()
        assert scope.cancelled_caught


async def test_ready_lines_returns_while_a_bot_spams(tmp_path):
    snippet = """
        import os
        block = b"spam\\n" * 10000
        while True:
            os.write(1, block)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            for _ in range(3):
                assert len(bot.ready_lines()) <= (2 << 20) // 5  # about 1 MiB a call
                await trio.sleep(0.01)
            assert await bot.read_line() == b"spam"


async def test_ready_lines_sees_unsolicited_output(tmp_path):
    snippet = """
        import sys
        out = sys.stdout.buffer
        out.write(b"a\\nb\\n")
        sys.stdin.buffer.readline()
        out.write(b"c\\n")
        out.write(b"d\\r\\n")
        out.write(b"partial")
        sys.stdin.buffer.readline()
        out.write(b"-end\\n")
        for i in range(1000):
            out.write(b"spam %d\\n" % i)
        sys.stdin.read()
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == b"a"
            assert bot.ready_lines() == [b"b"]
            assert bot.ready_lines() == []
            await bot.send(b"go\n")
            seen: list[bytes] = []
            while len(seen) < 2:
                seen += bot.ready_lines()
                await trio.sleep(0.01)
            assert seen == [b"c", b"d"]
            await bot.send(b"go\n")
            assert await bot.read_line() == b"partial-end"
            seen = []
            while len(seen) < 1000:
                seen += bot.ready_lines()
                await trio.sleep(0.01)
            assert seen == [b"spam %d" % i for i in range(1000)]


async def test_ready_lines_reports_an_overlong_line_after_the_good_ones(tmp_path):
    snippet = """
        import sys
        sys.stdout.buffer.write(b"ready\\n")
        sys.stdin.buffer.readline()
        sys.stdout.buffer.write(b"fine\\n" + b"w" * 500 + b"\\nnext\\n")
        sys.stdin.read()
    """
    async with running(snippet, tmp_path, max_line=100) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == b"ready"
            await bot.send(b"go\n")
            seen: list[bytes] = []
            while not seen:
                seen = bot.ready_lines()
                await trio.sleep(0.01)
            assert seen == [b"fine"]
            with pytest.raises(LineTooLong) as info:
                while True:
                    bot.ready_lines()
                    await trio.sleep(0.01)
            assert info.value.prefix == b"w" * 100
            assert await bot.read_line() == b"next"


async def test_ready_lines_after_exit_does_not_raise(tmp_path):
    async with running("print('x'); print('y')", tmp_path) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == b"x"
            with pytest.raises(BotExited):
                while True:
                    await bot.read_line()
            assert bot.ready_lines() == []


async def test_send_large_message(tmp_path):
    snippet = """
        import sys
        data = sys.stdin.buffer.read(1 << 20)
        print(len(data))
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            await bot.send(b"z" * (1 << 20))
            assert await bot.read_line() == b"1048576"


# -- bots that do not cooperate ----------------------------------------------------------------


async def test_bot_that_never_answers(tmp_path):
    async with running(SILENT, tmp_path) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == b"ready"
        with trio.move_on_after(0.5) as scope:
            await bot.read_line()
        assert scope.cancelled_caught
        with trio.fail_after(HANG):
            await bot.kill()
        assert bot.returncode == -signal.SIGKILL
        assert "killed by the referee" in repr(bot)
        assert not alive(bot.pid)


async def test_bot_that_never_reads_stdin(tmp_path):
    async with running(SILENT, tmp_path) as bot:
        with trio.move_on_after(0.5) as scope:
            await bot.send(b"q" * (1 << 20))
        assert scope.cancelled_caught
        with trio.fail_after(HANG):
            await bot.kill()


async def test_bot_that_exits_at_once(tmp_path):
    snippet = """
        import sys
        print("bad config: no such option", file=sys.stderr)
        sys.exit(3)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG), pytest.raises(BotExited) as info:
            await bot.read_line()
    error = info.value
    assert error.returncode == 3
    assert "bad config: no such option" in error.stderr_tail
    assert str(error) == "bot 'testbot' exited with code 3; last stderr line: bad config: no such option"
    assert isinstance(error, RefereeError)
    assert "bad config" in (tmp_path / "stderr.log").read_text()


async def test_bot_that_crashes_at_startup(tmp_path):
    async with running("import nothing_by_this_name", tmp_path) as bot:
        with trio.fail_after(HANG), pytest.raises(BotExited) as info:
            await bot.read_line()
        assert info.value.returncode == 1
        assert "Traceback" in info.value.stderr_tail
        assert "ModuleNotFoundError" in str(info.value)
        assert "\n" not in str(info.value)
        # every later call says the same
        with pytest.raises(BotExited):
            await bot.read_line()
        with trio.fail_after(HANG), pytest.raises(BotExited):
            await bot.send(b"hello\n" * 10000)


async def test_bot_killed_by_a_signal(tmp_path):
    snippet = """
        import os, signal
        os.kill(os.getpid(), signal.SIGSEGV)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG), pytest.raises(BotExited) as info:
            await bot.read_line()
        assert info.value.returncode == -signal.SIGSEGV
        assert "killed by SIGSEGV (crashed: segmentation fault)" in str(info.value)
        assert "SIGSEGV" in repr(bot)


async def test_bot_that_ignores_sigterm(tmp_path):
    snippet = """
        import signal, time
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        print("ready", flush=True)
        while True:
            time.sleep(1)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == b"ready"
            await bot.kill()
        assert bot.returncode == -signal.SIGKILL


@pytest.mark.parametrize("setsid", [False, True], ids=["same-group", "setsid"])
@pytest.mark.parametrize("parent_exits", [True, False], ids=["parent-exits", "parent-stays"])
async def test_grandchild_holding_stdout_is_killed(tmp_path, setsid, parent_exits):
    # the child says it is ready (after setsid) on a pipe of its own; then the parent prints
    # its pid, so the child cannot be killed by the parent's exit before it has left the group
    child = f"import os, sys, time\nif {setsid}: os.setsid()\nos.write(int(sys.argv[1]), b'ok')\ntime.sleep(600)"
    snippet = f"""
        import os, subprocess, sys, time
        r, w = os.pipe()
        child = subprocess.Popen([sys.executable, "-c", {child!r}, str(w)], pass_fds=[w])
        os.read(r, 2)
        print(child.pid, flush=True)
        if not {parent_exits}:
            time.sleep(600)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            grandchild = int(await bot.read_line())
        if parent_exits:
            # once the bot has exited, what it left holding its pipes is killed: the stream
            # ends and the exit is reported, with no kill() and no deadline
            with trio.fail_after(HANG), pytest.raises(BotExited) as info:
                await bot.read_line()
            assert info.value.returncode == 0
            await wait_dead(grandchild)
        else:
            # the grandchild keeps stdout open, so there is no EOF
            with trio.move_on_after(0.3):
                await bot.read_line()
            assert alive(grandchild)
        with trio.fail_after(HANG):
            await bot.kill()
        await wait_dead(grandchild)
        assert not alive(bot.pid)


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "no-cgroup"])
async def test_a_setsid_grandchild_holding_only_stdin_is_killed_when_the_bot_is_closed(tmp_path, monkeypatch, cgroups):
    # Polling cannot see who holds a pipe whose end the referee has closed (stdin, once the bot
    # is closed): without a cgroup to empty, only the /proc scan finds this one, and it reads
    # only processes that started no earlier than the bot, which a grandchild did.
    if not cgroups:
        monkeypatch.setattr(spawn_module.BotCgroup, "create", classmethod(lambda cls, memory_mb=None: None))
    child = "import os, sys, time\nos.setsid()\nos.close(1)\nos.close(2)\nos.write(int(sys.argv[1]), b'ok')\ntime.sleep(600)"
    snippet = f"""
        import os, subprocess, sys
        r, w = os.pipe()
        child = subprocess.Popen([sys.executable, "-c", {child!r}, str(w)], pass_fds=[w])
        os.read(r, 2)
        print(child.pid, flush=True)
        sys.stdin.read()
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            grandchild = int(await bot.read_line())
            assert alive(grandchild)
            await bot.close()
        await wait_dead(grandchild)
        assert not alive(bot.pid)


async def test_killing_one_bot_leaves_the_others_alone(tmp_path):
    escaper = """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); print('up', flush=True); time.sleep(600)"])
        time.sleep(600)
    """
    async with trio.open_nursery() as nursery:
        others = [
            await BotProcess.start(nursery, bot_argv(ECHO), name=f"echo{i}", stderr_path=tmp_path / f"{i}.log")
            for i in range(3)
        ]
        try:
            with trio.fail_after(HANG):
                async with running(escaper, tmp_path) as bot:
                    assert await bot.read_line() == b"up"
                for other in others:
                    await other.send(b"still here\n")
                    assert await other.read_line() == b"still here"
        finally:
            for other in others:
                await other.kill()


async def test_stderr_flood_is_capped(tmp_path):
    snippet = """
        import os, sys
        block = (b"x" * 1023 + b"\\n") * 1024
        for _ in range(200):
            os.write(2, block)
        print("flood over", file=sys.stderr)
        print("done")
        sys.stdin.read()
    """
    cap = 1 << 20
    log = tmp_path / "flood.log"
    log.write_bytes(b"earlier run\n")
    async with running(snippet, tmp_path, stderr_path=log, stderr_cap=cap) as bot:
        with trio.fail_after(60):
            assert await bot.read_line() == b"done"
        await bot.kill()
        assert bot.stderr_tail().endswith("flood over")
        assert len(bot.stderr_tail().splitlines()) <= 20
    content = log.read_bytes()
    assert content.startswith(b"earlier run\nxxx")
    assert len(content) <= len(b"earlier run\n") + cap + 200
    assert content.count(b"[referee: stderr cut") == 1


async def test_read_line_wakes_up_when_killed(tmp_path):
    async with running(SILENT, tmp_path) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == b"ready"
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot.kill)
                with pytest.raises(BotExited) as info:
                    await bot.read_line()
        assert "killed by the referee" in str(info.value)
        with pytest.raises(BotExited):
            await bot.send(b"x\n")
        assert bot.ready_lines() == []
        await bot.kill()  # again: nothing to do


# -- ending politely ---------------------------------------------------------------------------


async def test_close_lets_the_bot_exit(tmp_path):
    snippet = """
        import sys
        sys.stdin.read()
        print("bye", file=sys.stderr)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            await bot.close()
        assert bot.returncode == 0
        assert bot.stderr_tail() == "bye"


async def test_close_kills_a_bot_that_stays(tmp_path):
    async with running(SILENT, tmp_path) as bot:
        with trio.fail_after(HANG):
            unread = await bot.close(grace=0.2)
        assert bot.returncode == -signal.SIGKILL
        assert unread == [b"ready"]  # written before the kill, never read


async def test_close_returns_every_line_the_bot_wrote_unread_up_to_its_exit(tmp_path):
    """What ``referee check`` reports as output nobody asked for: read once the bot has exited,
    so nothing depends on how long anyone waited; an overlong line comes back as its start."""
    snippet = """
        import sys
        print("first", flush=True)
        sys.stdin.read()
        print("on the way out")
        print("x" * 300)
        sys.stdout.write("no newline")
    """
    async with running(snippet, tmp_path, max_line=100) as bot:
        assert await bot.read_line() == b"first"
        with trio.fail_after(HANG):
            unread = await bot.close()
        assert bot.returncode == 0
        assert unread[0] == b"on the way out" and unread[1].startswith(b"x" * 60) and len(unread) == 2


# -- starting ----------------------------------------------------------------------------------


async def test_spawn_failure_raises_bot_not_found_and_leaks_nothing(tmp_path):
    script = tmp_path / "bot"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotNotFound, match=r"^bot 'b': cannot start \(its interpreter /no/such/interpreter "
                           r"\(from its #! line\) does not exist\)$"):
            await BotProcess.start(nursery, [str(script)], name="b", stderr_path=tmp_path / "b.log")
        with pytest.raises(BotNotFound, match="No such file") as info:
            await BotProcess.start(
                nursery, bot_argv("pass"), name="b", stderr_path=tmp_path / "b.log", confinement=Confinement(cwd=tmp_path / "nope")
            )
        assert "interpreter" not in str(info.value) and "loader" not in str(info.value)


def test_no_public_constructor():
    with pytest.raises(TypeError, match="BotProcess.start"):
        BotProcess(None, None, "x", 0, 0, None, None)


async def test_sandbox_cwd_and_env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    snippet = """
        import os
        print(os.getcwd())
        print(os.environ["BOT_SEED"])
        print(bool(os.environ.get("PATH")))
    """
    confinement = Confinement(cwd=home, env={"BOT_SEED": "42"})
    async with running(snippet, tmp_path, confinement=confinement) as bot:
        with trio.fail_after(HANG):
            assert await bot.read_line() == os.fsencode(home)
            assert await bot.read_line() == b"42"
            assert await bot.read_line() == b"True"


async def test_sandbox_memory_limit(tmp_path):
    snippet = """
        block = bytearray(1 << 30)
        print("allocated")
    """
    async with running(snippet, tmp_path, confinement=Confinement(memory_mb=256)) as bot:
        with trio.fail_after(HANG), pytest.raises(BotExited) as info:
            await bot.read_line()
        assert info.value.returncode != 0
        assert "MemoryError" in info.value.stderr_tail


@pytest.mark.slow
async def test_sandbox_cpu_limit(tmp_path):
    async with running("while True: pass", tmp_path, confinement=Confinement(cpu_seconds=1)) as bot:
        with trio.fail_after(HANG), pytest.raises(BotExited) as info:
            await bot.read_line()
        assert info.value.returncode in (-signal.SIGXCPU, -signal.SIGKILL)


def test_sandbox_rejects_nonsense():
    with pytest.raises(ValueError, match="memory_mb"):
        Confinement(memory_mb=0)


# -- resolving commands ------------------------------------------------------------------------


def test_resolve_python_script(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "b.py").write_text("")
    assert resolve_command("bots/b.py --seed 3", cwd=tmp_path) == [sys.executable, str(tmp_path / "bots" / "b.py"), "--seed", "3"]
    assert resolve_command(["bots/b.py"], cwd=tmp_path) == [sys.executable, str(tmp_path / "bots" / "b.py")]


def test_resolve_missing_script(tmp_path):
    with pytest.raises(BotNotFound) as info:
        resolve_command("foo/bar.py", cwd=tmp_path)
    assert str(info.value) == "bot 'foo/bar.py': no such file"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_resolve_js_script(tmp_path):
    (tmp_path / "b.js").write_text("")
    assert resolve_command("b.js", cwd=tmp_path) == [shutil.which("node"), str(tmp_path / "b.js")]


def test_resolve_js_without_node(tmp_path, monkeypatch):
    (tmp_path / "b.js").write_text("")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(BotNotFound) as info:
        resolve_command("b.js", cwd=tmp_path)
    assert str(info.value) == "bot 'b.js': 'node' is not on PATH"


def test_resolve_executable(tmp_path):
    exe = tmp_path / "x"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o644)
    with pytest.raises(BotNotFound) as info:
        resolve_command("./x", cwd=tmp_path)
    assert str(info.value) == "bot './x': not executable (chmod +x?)"
    exe.chmod(0o755)
    assert resolve_command("./x arg", cwd=tmp_path) == [str(exe), "arg"]
    with pytest.raises(BotNotFound, match="not a file"):
        resolve_command(str(tmp_path))
    with pytest.raises(BotNotFound, match=r"did you mean './x'\?"):
        resolve_command("x", cwd=tmp_path)


def test_resolve_program_on_path():
    assert resolve_command("sh -c 'echo hi'") == [shutil.which("sh"), "-c", "echo hi"]
    with pytest.raises(BotNotFound, match=r"^bot 'no-such-bot-xyz': 'no-such-bot-xyz' is not on PATH$"):
        resolve_command("no-such-bot-xyz")


@pytest.mark.parametrize("command", ["", "   ", [], "'unbalanced"])
def test_resolve_nonsense(command):
    with pytest.raises(BotNotFound):
        resolve_command(command)


@pytest.mark.parametrize(("shebang", "words"), [
    ("#!/no/such/python3\n", "its interpreter /no/such/python3 (from its #! line) does not exist"),
    ("#!/usr/bin/env no-such-interpreter-xyz -u\n", "its #! line runs 'no-such-interpreter-xyz' through env, and"),
])
def test_resolve_a_script_whose_interpreter_is_missing(tmp_path, shebang, words):
    """The kernel says "No such file" for the script itself; the message says what is missing."""
    script = tmp_path / "bot.sh"
    script.write_text(shebang + "echo hi\n")
    script.chmod(0o755)
    with pytest.raises(BotNotFound) as info:
        resolve_command(str(script))
    assert words in str(info.value)
    assert "no such file" not in str(info.value)


async def test_sigkill_from_someone_else_is_not_called_out_of_memory(tmp_path):
    snippet = """
        import os, signal
        os.kill(os.getpid(), signal.SIGKILL)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG), pytest.raises(BotExited) as info:
            await bot.read_line()
    assert info.value.returncode == -signal.SIGKILL
    assert str(info.value) == "bot 'testbot' killed by SIGKILL"


async def test_sigkill_while_the_kernel_killed_for_memory_says_so(tmp_path, monkeypatch):
    import referee.bots.process

    kills = iter([7, 8])  # /proc/vmstat's oom_kill at the start, and after the death
    monkeypatch.setattr(referee.bots.process, "oom_kills", lambda: next(kills))
    snippet = """
        import os, signal
        os.kill(os.getpid(), signal.SIGKILL)
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG), pytest.raises(BotExited) as info:
            await bot.read_line()
    assert "killed by SIGKILL (out of memory? the kernel killed a process for memory while it ran)" in str(info.value)


def test_describe_exit():
    assert describe_exit(None) == "is still running"
    assert describe_exit(0) == "exited with code 0"
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-signal.SIGKILL) == "killed by SIGKILL"  # by anyone: no guess
    assert describe_exit(-signal.SIGKILL, "out of memory?") == "killed by SIGKILL (out of memory?)"
    assert describe_exit(-signal.SIGXCPU) == "killed by SIGXCPU (CPU time limit)"
    assert describe_exit(-signal.SIGSEGV) == "killed by SIGSEGV (crashed: segmentation fault)"
    assert describe_exit(-signal.SIGUSR1) == "killed by SIGUSR1"


async def test_a_bot_outlives_the_threads_trio_retires(tmp_path, monkeypatch):
    """Bots die with the referee (PR_SET_PDEATHSIG), which the kernel ties to the spawning
    *thread*: spawned from one of trio's worker threads, a bot was killed when trio retired that
    thread after its idle timeout.  Shorten the timeout and check the bot lives on."""
    from trio._core import _thread_cache

    monkeypatch.setattr(_thread_cache, "IDLE_TIMEOUT", 0.05)
    await trio.to_thread.run_sync(lambda: None)  # a worker thread exists and will retire
    async with running("import time; time.sleep(30)", tmp_path) as bot:
        await trio.sleep(1.0)
        assert bot.returncode is None
        assert alive(bot.pid)


async def test_a_spawn_does_not_hold_the_loop(tmp_path, monkeypatch):
    """A spawn is a fork and exec whose parent waits for the exec: run on the loop, the tables
    playing beside it would stand still meanwhile.  Make the child's set-up slow (it joins its
    cgroup first, in the child) and count the loop's turns during the spawn."""
    real_join = spawn_module.join

    def slow_join(fds):
        time.sleep(0.5)  # in the child, between fork and exec
        real_join(fds)

    monkeypatch.setattr(spawn_module, "join", slow_join)
    ticks = 0

    async def tick():
        nonlocal ticks
        while True:
            await trio.sleep(0.01)
            ticks += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(tick)
        await trio.sleep(0.05)
        before = ticks
        async with running("import sys; sys.stdin.read()", tmp_path):
            during = ticks - before
        nursery.cancel_scope.cancel()
    assert during >= 10, f"the loop turned {during} times in a half-second spawn"


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("java -jar bot.jar --fast", "bot"),
        ("java -Xmx1g -cp out:lib/* Main", "Main"),
        ("perl perlbot.pl", "perlbot"),
        ("tclsh /bots/dombot.tcl", "dombot"),
        ("bash ./dombot.sh", "dombot"),
        ("/usr/bin/python3.11 -u first_bot.py 7", "first_bot"),
        ("python -m mybot", "mybot"),
        ("/usr/bin/env python3 bot.py", "bot"),
        ("env BOT_SEED=3 ./target/release/dombot", "dombot"),
        ("./dombot", "dombot"),
        ("dombot.js", "dombot"),
        (["/usr/bin/node", "/x/random_bot.js"], "random_bot"),
        ("java", "java"),
    ],
)
def test_bot_names_come_from_what_the_command_runs(command, name):
    """An interpreter or VM never names the bot (every Java bot used to be called java)."""
    assert bot_name(command) == name


async def test_line_within_takes_each_shape_of_output_as_read_line_would(tmp_path):
    """A whole line alone in the pipe (the turn's fast path), with \\r\\n, two lines in one write, a
    line in two writes, nothing within the wait, and the end of the stream."""
    snippet = """
        import sys, time
        out = sys.stdout.buffer
        for cmd in sys.stdin.buffer:
            cmd = cmd.strip()
            if cmd == b"one":
                out.write(b'{"a": 1}\\n')
            elif cmd == b"crlf":
                out.write(b'{"b": 2}\\r\\n')
            elif cmd == b"two":
                out.write(b'{"c": 3}\\n{"d": 4}\\n')
            elif cmd == b"halves":
                out.write(b'{"e": '); out.flush(); time.sleep(0.05); out.write(b'5}\\n')
            elif cmd == b"bye":
                break
            out.flush()
    """
    async with running(snippet, tmp_path) as bot:
        with trio.fail_after(HANG):
            for cmd, lines in [(b"one", [b'{"a": 1}']), (b"crlf", [b'{"b": 2}']), (b"two", [b'{"c": 3}', b'{"d": 4}']),
                               (b"halves", [b'{"e": 5}'])]:
                await bot.send(cmd + b"\n")
                got = []
                readable(bot)  # the bot has written: line_within finds it in the pipe at once
                while len(got) < len(lines):
                    line = bot.line_within(1.0)
                    got.append(line if line is not None else await bot.read_line())
                assert got == lines, cmd
            assert bot.line_within(0.01) is None  # nothing said
            await bot.send(b"bye\n")
            readable(bot)
            assert bot.line_within(1.0) is None  # the end of the stream, which read_line reports
            with pytest.raises(BotExited):
                await bot.read_line()


def readable(bot: BotProcess) -> None:
    """Wait (blocking, at most HANG seconds) until the bot's stdout has something to read."""
    assert select.select([bot._out.fd], [], [], HANG)[0]
