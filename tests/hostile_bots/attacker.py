"""A bot that plays correctly (always ``legal[0]``) and, at its first turn, attacks the referee,
the other bots and the league the way an adversary running as the organiser's user would.
Used by tests/bots/test_sandbox.py.

    attacker.py ATTACK [ARG ...]

It writes nothing anywhere but its pipes (and its /tmp, and what ``write``, ``write_own``
and ``note`` try): every attack reports on stderr, one line each,
``attack <name>: refused (<why>)`` or ``attack <name>: SUCCEEDED (<what>)``, so that the tests
read the outcome in the bot's stderr log (the sandbox shows the bot no writable place the
tests could read).

Attacks:
  read_log PATH        open the match log (the hands of the deal in play are there), and any
                       .jsonl file another process holds open
  kill_others          SIGKILL every other process it can see (the opponent), and kill(-1)
  write_others         write a play line into the stdout pipe of every other process it sees
  edit_db PATH         open the league database for writing and set every result to its favour
  signal PID...        probe each pid (the referee, its worker) with signal 0, SIGKILL the
                       last one (a stand-in of the referee's user), and SIGKILL its parent
  read_env NAME        look for the variable NAME in its environment and its parent's
  daemon TOKEN         leave a double-forked setsid() daemon sleeping for 600 s, with TOKEN as
                       the last word of its command line (it closes its pipes, so only the
                       sandbox or a cgroup can find it)
  write_own            write a file next to itself (what the sandbox refuses)
  network PORT         connect to PORT on the machine's loopback (where a test listens)
  read PATH...         open and read each file, list each folder (an empty folder counts as
                       refused: a hidden folder is an empty one), reporting each path
  write [PATH...]      create a file in each folder, reporting each; without paths, in /, /dev,
                       /dev/shm, /tmp, its own folder and every folder above it, every folder
                       above its interpreter's, and every folder it finds below / (a few
                       levels down, the system's folders left out)
  fill LIMIT           fill /tmp until it is full, then memfd_create files and System V shared
                       memory, then allocate (and touch) memory, 16 MiB at a time, reporting
                       the MiB it holds in all after every step, as ``holds N MiB``, until
                       something stops it or it holds LIMIT MiB
  note                 leave a note (a file named after a token of its own) in $TMPDIR, /tmp,
                       $HOME, /dev/shm and its folder at its first turn, and look there for a
                       note of another process at every later turn (its partner in a pair game)
"""

import json
import os
import signal
import socket
import sys

attack, args = sys.argv[1], sys.argv[2:]


def report(name, ok, detail):
    print(f"attack {name}: {'SUCCEEDED' if ok else 'refused'} ({detail})", file=sys.stderr, flush=True)


def others():
    """pids this process can see, other than itself and its ancestors."""
    mine = {os.getpid()}
    pid = os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
        mine.add(pid)
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in mine and int(p) != 1]


def read_log(path):
    try:
        with open(path) as f:
            text = f.read()
        report("read_log", True, f"read {len(text)} bytes of {path}")
    except OSError as e:
        report("read_log", False, e.strerror)
    for pid in others():
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}").endswith(".jsonl"):
                    report("read_log", True, f"pid {pid} holds a log open")
        except OSError:
            continue


def kill_others():
    victims = others()
    killed = []
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError:
            pass
    report("kill_others", bool(killed), f"saw {len(victims)} other processes, killed {killed}")
    child = os.fork()
    if child == 0:  # kill(-1) ends the caller too: from a child
        try:
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def write_others():
    written = []
    for pid in others():
        try:
            fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b'{"type": "play", "tile": [0, 0], "end": null}\n')
            os.close(fd)
            written.append(pid)
        except OSError:
            pass
    report("write_others", bool(written), f"wrote into the stdout of {written}")


def edit_db(path):
    import sqlite3
    try:
        os.stat(path)
    except OSError as e:
        report("edit_db", False, e.strerror)
        return
    try:
        con = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=1)
        con.execute("UPDATE matches SET result = result")
        con.commit()
        report("edit_db", True, "wrote to the database")
    except Exception as e:  # noqa: BLE001 - any way it fails is a refusal
        report("edit_db", False, str(e))


def signal_pids(pids):
    for pid in pids[:-1]:
        try:
            os.kill(pid, 0)
            report("signal", True, f"pid {pid} can be signalled")
        except OSError as e:
            report("signal", False, f"pid {pid}: {e.strerror}")
    try:
        os.kill(pids[-1], signal.SIGKILL)
        report("signal", True, f"killed pid {pids[-1]}")
    except OSError as e:
        report("signal", False, f"pid {pids[-1]}: {e.strerror}")
    parent = os.getppid()
    try:
        os.kill(parent, signal.SIGKILL)
        os.kill(parent, signal.SIGSTOP)
        report("signal", parent != 1, f"signalled its parent, pid {parent}")
    except OSError as e:
        report("signal", False, f"parent {parent}: {e.strerror}")


def read_env(name):
    found = name in os.environ
    try:
        with open(f"/proc/{os.getppid()}/environ", "rb") as f:
            found = found or name.encode() in f.read()
    except OSError:
        pass
    report("read_env", found, f"{name} {'found' if found else 'not found'}; the bot's environment: {sorted(os.environ)}")


def daemon(token):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", token])
        os._exit(0)
    report("daemon", True, "left a daemon; only the referee's cleanup can end it")


def write_own():
    # One file per process: the two processes of a pair game write at once, and a shared name
    # let one unlink the other's file (the second unlink failed, as if the write had).
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"attacker-was-here.{os.getpid()}")
    try:
        with open(path, "w") as f:
            f.write("x")
        os.unlink(path)
        report("write_own", True, f"wrote {path}")
    except OSError as e:
        report("write_own", False, e.strerror)
        raise SystemExit(f"attacker: cannot write next to myself: {e.strerror}") from None


def network(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        report("network", True, f"connected to port {port}")
    except OSError as e:
        report("network", False, f"port {port}: {e.strerror or e}")
        raise SystemExit(f"attacker: cannot reach my server: {e.strerror or e}") from None


def read_paths(paths):
    for path in paths:
        try:
            if os.path.isdir(path):
                names = os.listdir(path)
                report("read", bool(names), f"{path}: lists {sorted(names)[:8]}")
            else:
                with open(path, "rb") as f:
                    data = f.read()
                report("read", True, f"{path}: opened, read {len(data)} bytes")
        except OSError as e:
            report("read", False, f"{path}: {e.strerror}")


def write_paths(paths):
    if not paths:
        mine = os.path.dirname(os.path.abspath(__file__))
        paths = ["/", "/dev", "/dev/shm", "/tmp", mine]
        for start in (mine, os.path.dirname(sys.executable)):
            while start != "/":
                start = os.path.dirname(start)
                paths.append(start)
        # and every folder it can find, but in the system's folders, /proc, /sys and /tmp
        for top, dirs, _ in os.walk("/"):
            dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys", "/usr", "/etc", "/tmp", "/dev")]
            if top.count("/") >= 6 or len(paths) > 200:
                dirs[:] = []
            paths.append(top)
        paths = list(dict.fromkeys(paths))
    for path in paths:
        target = os.path.join(path, f"attacker-was-here.{os.getpid()}")
        try:
            with open(target, "w") as f:
                f.write("x")
            os.unlink(target)
            report("write", True, f"{path}: wrote {target}")
        except OSError as e:
            report("write", False, f"{path}: {e.strerror}")


def fill(limit):
    import ctypes
    mib, held = 1 << 20, {"tmp": 0, "memfd": 0, "shm": 0, "memory": 0}
    keep = []

    def room():
        return sum(held.values()) < limit

    def holds(what):
        print(f"attack fill: holds {sum(held.values())} MiB ({what}; {held})", file=sys.stderr, flush=True)

    try:
        with open("/tmp/fill", "wb") as f:
            while room():
                f.write(b"x" * mib)
                f.flush()
                held["tmp"] += 1
        holds("/tmp")
    except OSError as e:
        holds(f"/tmp: {e.strerror}")
    try:
        while room():
            fd = os.memfd_create("fill")
            keep.append(fd)
            for _ in range(16):
                os.write(fd, b"y" * mib)
                held["memfd"] += 1
            holds("memfd")
    except OSError as e:
        holds(f"memfd: {e.strerror}")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    while room():
        shmid = libc.shmget(0, 16 * mib, 0o1600)
        if shmid < 0:
            holds(f"shmget: {os.strerror(ctypes.get_errno())}")
            break
        address = libc.shmat(shmid, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            holds(f"shmat: {os.strerror(ctypes.get_errno())}")
            break
        ctypes.memset(address, 1, 16 * mib)
        libc.shmdt(ctypes.c_void_p(address))  # out of the address space, still in memory
        held["shm"] += 16
        holds("shm")
    try:
        while room():
            keep.append(bytearray(b"z" * (16 * mib)))
            held["memory"] += 16
            holds("memory")
    except MemoryError:
        holds("memory: MemoryError")
    report("fill", not room(), f"holds {sum(held.values())} MiB of the {limit} it tried")


NOTE = os.urandom(8).hex()


def note_places():
    return sorted({os.environ.get("TMPDIR", "/tmp"), "/tmp", os.environ.get("HOME", "/tmp"), "/dev/shm",
                   os.path.dirname(os.path.abspath(__file__))})


def leave_notes():
    for place in note_places():
        try:
            with open(os.path.join(place, f"note-{NOTE}"), "w") as f:
                f.write(NOTE)
            print(f"attack note: wrote in {place}", file=sys.stderr, flush=True)
        except OSError as e:
            print(f"attack note: cannot write in {place}: {e.strerror}", file=sys.stderr, flush=True)


def look_for_notes():
    found = []
    for place in note_places():
        try:
            found += [f"{place}/{n}" for n in os.listdir(place) if n.startswith("note-") and n != f"note-{NOTE}"]
        except OSError:
            continue
    return found


ATTACKS = {
    "read_log": lambda: read_log(args[0]),
    "kill_others": kill_others,
    "write_others": write_others,
    "edit_db": lambda: edit_db(args[0]),
    "signal": lambda: signal_pids([int(a) for a in args]),
    "read_env": lambda: read_env(args[0]),
    "daemon": lambda: daemon(args[0]),
    "write_own": write_own,
    "none": lambda: None,
    "network": lambda: network(int(args[0])),
    "read": lambda: read_paths(args),
    "write": lambda: write_paths(args),
    "fill": lambda: fill(int(args[0])),
    "note": leave_notes,
}
if attack in ("write_own", "network"):  # what a careless bot does at start-up
    ATTACKS[attack]()
    attack = "none"

done = False
noted = False
for raw in sys.stdin:
    msg = json.loads(raw)
    kind = msg.get("type")
    if kind == "hello":
        print(json.dumps({"type": "hello", "name": "attacker", "protocol": 1}), flush=True)
    elif kind == "turn":
        if not done:
            done = True
            ATTACKS[attack]()
        elif attack == "note" and not noted and (notes := look_for_notes()):
            noted = True
            report("note", True, f"found its partner's notes: {notes}")
        first = msg["legal"][0]
        print(json.dumps({"type": "play", "tile": first["tile"], "end": first["end"]}), flush=True)
    elif kind == "match_end":
        if attack == "note" and not noted:
            report("note", False, f"no other process's note in {note_places()}")
        break
