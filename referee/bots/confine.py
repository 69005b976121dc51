"""The first program of a sandboxed bot, run by bwrap before the bot's own: it forbids reading or
writing any file under /proc with Landlock, then runs the rest of its command line.

    python -S -I confine.py -- COMMAND...

Every file of a procfs either tells which pages of a file are cached (``pagemap``, ``statm``,
``status``, ``smaps``, ``stat``'s fault counts, ``io``...) or moves with the whole machine
(``meminfo``, ``sys/``, ``stat``, ``loadavg``...), while what runtimes need of /proc is its links
(``/proc/self/exe``, through which the loader finds a program's ``$ORIGIN`` libraries) and its
listings, which Landlock does not govern.  So the bot keeps a real /proc of its own PID namespace
whose files cannot be opened (PROTOCOL.md, "Fair play").  The rule holds for every process the
bot starts, and cannot be undone.

It imports nothing of the referee (it runs with ``-S -I``, in the sandbox) and fails closed: if
Landlock cannot be had, the bot does not run (the referee checks first, :func:`landlock_abi`).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_PATH_BENEATH = 1
_VERSION = 1
_WRITE_FILE, _READ_FILE = 1 << 1, 1 << 2
_NO_NEW_PRIVS = 38


def landlock_abi() -> int:
    """The Landlock ABI version of this kernel, 0 where it has none (or it is not enabled)."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_CREATE_RULESET, None, 0, _VERSION)
    return max(0, version)


def forbid_proc() -> None:
    """Forbid this process and all it starts to open a file under /proc for reading or writing;
    everything else of the sandbox's root stays as it is.

    Raises:
      OSError: Landlock refused (the caller must not run the bot then).
    """
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> int:
        if result < 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")
        return result

    handled = _READ_FILE | _WRITE_FILE
    attr = struct.pack("=Q", handled)
    ruleset = check(libc.syscall(_CREATE_RULESET, attr, len(attr), 0), "landlock_create_ruleset")
    try:
        for name in sorted(os.listdir("/")):
            if name == "proc":
                continue
            try:
                fd = os.open("/" + name, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = struct.pack("=Qi", handled, fd)
                check(libc.syscall(_ADD_RULE, ruleset, _PATH_BENEATH, rule, 0), f"landlock_add_rule /{name}")
            finally:
                os.close(fd)
        check(libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        check(libc.syscall(_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def main(argv: list[str]) -> None:
    command = argv[1:]
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("confine: no command", file=sys.stderr)
        sys.exit(126)
    try:
        forbid_proc()
    except OSError as e:
        print(f"the sandbox cannot close /proc ({e.strerror}): the bot is not run", file=sys.stderr)
        sys.exit(126)
    try:
        os.execv(command[0], command)
    except OSError as e:
        print(f"confine: {command[0]}: {e.strerror}", file=sys.stderr)
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv)
