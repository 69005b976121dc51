"""A bot that plays correctly (always ``legal[0]``) and tries to pass its hand to the other
processes of its bot through the kernel, and to learn theirs, the way issue 32 found it could:
in a duplicate match the process of a later seating holds the hand the opponent held in an
earlier one, so the earlier process's hand of the same deal is the opponent's hand now; in a
pair game its partner is another process of the same bot.  Used by tests/bots/test_sandbox_channels.py.

    spy.py CHANNEL FOLDER

FOLDER holds one empty file per deal and tile, ``g<game>d<deal>_<a>_<b>`` (the test makes them:
the bot's own files, which every process of it is shown).  At each ``deal`` the process
publishes its hand of that deal, and at each ``turn`` it looks for what the others published
for the same deal, tiles of its own hand left out:

  flock    it holds ``flock(LOCK_EX)`` on the files of its tiles; it tests each file with
           ``LOCK_EX|LOCK_NB`` on a descriptor of its own (EWOULDBLOCK: another process holds it)
  posix    the same with a record lock (``fcntl(F_SETLK, F_RDLCK)``; ``F_GETLK`` tests)
  ofd      the same with an open file description lock (``F_OFD_SETLK``; ``F_OFD_GETLK``)
  inotify  a thread opens the files of its tiles again and again (every 20 ms) while it waits;
           it watches FOLDER for ``IN_OPEN`` and reads what it was told at each turn
  sysv     a System V semaphore set per tile, keyed by the file's name (``semget(IPC_CREAT)``);
           ``semget(key, 0, 0)`` tests
  mqueue   a POSIX message queue per tile, ``/<file name>`` (``mq_open(O_CREAT)``); opening it
           without O_CREAT tests
  userns   at its first turn, ``unshare(CLONE_NEWUSER)`` (no hand is passed: a new user
           namespace is where a bot could make itself root and mount what it likes)

Every attempt reports one line on stderr: ``attack CHANNEL: SUCCEEDED (<key>: learned [...])``
when another process's tiles were found, ``attack CHANNEL: refused (<why>)`` otherwise (the
call failed, or nothing was found), and ``spy CHANNEL published <key> <n>`` once per deal.
"""

import ctypes
import fcntl
import json
import os
import struct
import sys
import threading
import time
import zlib

channel, folder = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
held = []  # descriptors holding locks: kept open for the life of the process
mine = {}  # key -> set of file names of its own tiles
watcher = None  # the inotify descriptor
seen = set()  # file names another process opened (inotify)
failed = set()  # channels whose setup failed, reported once


def report(ok, detail):
    print(f"attack {channel}: {'SUCCEEDED' if ok else 'refused'} ({detail})", file=sys.stderr, flush=True)


def fail_once(what, exc):
    if what not in failed:
        failed.add(what)
        report(False, f"{what}: {exc}")


def names(key, hand):
    return {f"{key}_{min(t)}_{max(t)}" for t in hand}


def path(name):
    return os.path.join(folder, name)


def ipc_key(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# -- the channels ----------------------------------------------------------------------------

F_OFD_GETLK, F_OFD_SETLK = 36, 37


def lock_struct(kind):
    # struct flock on 64-bit Linux: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid
    return struct.pack("hhqqi4x", kind, 0, 0, 0, 0)


def publish(key, hand):
    own = names(key, hand)
    mine[key] = own
    for name in sorted(own):
        try:
            if not os.path.exists(path(name)):
                continue
            if channel in ("flock", "posix", "ofd"):
                fd = os.open(path(name), os.O_RDONLY)
                held.append(fd)
                if channel == "flock":
                    fcntl.flock(fd, fcntl.LOCK_EX)
                else:
                    fcntl.fcntl(fd, fcntl.F_SETLK if channel == "posix" else F_OFD_SETLK, lock_struct(fcntl.F_RDLCK))
            elif channel == "sysv":
                if libc.semget(ipc_key(name), 1, 0o1000 | 0o600) < 0:
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            elif channel == "mqueue":
                if libc.mq_open(f"/{name}".encode(), os.O_CREAT | os.O_RDONLY, 0o600, None) < 0:
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        except OSError as exc:
            fail_once(f"publish {channel}", exc)
            return
    print(f"spy {channel} published {key} {len(own)}", file=sys.stderr, flush=True)


def held_by_another(name):
    try:
        if channel == "flock":
            fd = os.open(path(name), os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            finally:
                os.close(fd)
            return False
        if channel in ("posix", "ofd"):
            fd = os.open(path(name), os.O_RDONLY)
            try:
                got = fcntl.fcntl(fd, fcntl.F_GETLK if channel == "posix" else F_OFD_GETLK, lock_struct(fcntl.F_WRLCK))
            finally:
                os.close(fd)
            return struct.unpack("hhqqi4x", got)[0] != fcntl.F_UNLCK
        if channel == "sysv":
            return libc.semget(ipc_key(name), 0, 0) >= 0
        if channel == "mqueue":
            mq = libc.mq_open(f"/{name}".encode(), os.O_RDONLY)
            return mq >= 0
        if channel == "inotify":
            return name in seen
    except OSError as exc:
        fail_once(f"test {channel}", exc)
    return False


def start_inotify():
    global watcher
    fd = libc.inotify_init1(os.O_NONBLOCK)
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"inotify_init1: {os.strerror(ctypes.get_errno())}")
    if libc.inotify_add_watch(fd, folder.encode(), 0x20) < 0:  # IN_OPEN
        raise OSError(ctypes.get_errno(), f"inotify_add_watch: {os.strerror(ctypes.get_errno())}")
    watcher = fd

    def republish():
        while True:
            for own in list(mine.values()):
                for name in own:
                    try:
                        os.close(os.open(path(name), os.O_RDONLY))
                    except OSError:
                        pass
            time.sleep(0.02)

    threading.Thread(target=republish, daemon=True).start()


def drain_inotify():
    opened_by_me = set().union(*mine.values()) if mine else set()
    while True:
        try:
            data = os.read(watcher, 65536)
        except BlockingIOError:
            return
        i = 0
        while i < len(data):
            _wd, _mask, _cookie, size = struct.unpack_from("iIII", data, i)
            name = data[i + 16:i + 16 + size].rstrip(b"\0").decode()
            i += 16 + size
            if name not in opened_by_me:
                seen.add(name)


def probe(key, hand):
    own = names(key, hand) | mine.get(key, set())
    if channel == "inotify" and watcher is not None:
        drain_inotify()
    learned = sorted(n.split("_", 1)[1] for n in os.listdir(folder) if n.startswith(key + "_") and n not in own
                     and held_by_another(n))
    if learned:
        report(True, f"{key}: learned {learned}")
    else:
        report(False, f"{key}: nothing")


def try_userns():
    if libc.unshare(0x10000000) == 0:
        report(True, "unshare(CLONE_NEWUSER) returned 0: a user namespace of its own")
    else:
        report(False, f"unshare(CLONE_NEWUSER): {os.strerror(ctypes.get_errno())}")


# -- the game ----------------------------------------------------------------------------------

if channel == "inotify":
    try:
        start_inotify()
    except OSError as exc:
        fail_once("inotify", exc)
key = None
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        print(json.dumps({"type": "hello", "name": "spy", "protocol": 1}), flush=True)
    elif kind == "deal":
        key = f"g{msg.get('game_number', 0)}d{msg.get('deal_number', 0)}"
        publish(key, msg["hand"])
    elif kind == "turn":
        if channel == "userns":
            if not failed:
                failed.add("tried")
                try_userns()
        else:
            probe(key, msg["hand"])
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif kind == "match_end":
        break
