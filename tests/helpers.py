"""Small helpers shared by the tests: tiles by name, and whether a process is still alive."""

from __future__ import annotations

from referee.engine import parse_tile


def tiles(*names: str) -> tuple[int, ...]:
    """Tile ids from names like "3-5"."""
    return tuple(parse_tile(n) for n in names)


def mask(names) -> int:
    """The tile set of the named tiles."""
    m = 0
    for n in names:
        m |= 1 << parse_tile(n)
    return m


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"
