"""Small helpers shared by the tests: tiles by name, whether a process is still alive, the
protocol's pages (PROTOCOL.md and docs/protocol/) and their worked transcripts, and random masked
play of a PettingZoo environment."""

from __future__ import annotations

import re
from pathlib import Path

from referee.engine import parse_tile

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_MD = ROOT / "PROTOCOL.md"
#: The protocol's pages by name: "core" is PROTOCOL.md, each family's is docs/protocol/NAME.md.
PROTOCOL_PAGES = {"core": PROTOCOL_MD, **{p.stem: p for p in sorted((ROOT / "docs" / "protocol").glob("*.md"))}}
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)


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


def protocol_page(page: str = "core") -> str:
    """The text of one page of the protocol: ``"core"`` (PROTOCOL.md) or a family's
    (``"line"``, ``"cross"``, ``"sea_kozel"``, ``"mexican_train"``, ``"kolbasa"``)."""
    return PROTOCOL_PAGES[page].read_text(encoding="utf-8")


def protocol_pages() -> dict[str, str]:
    """Every page of the protocol by name, the core page first."""
    return {name: protocol_page(name) for name in PROTOCOL_PAGES}


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """Every fenced block of a Markdown text as (info string, body)."""
    return [(info.strip(), body) for info, body in _FENCE.findall(text)]


def transcript_block(page: str, name: str) -> list[str]:
    """The ``< ``/``> `` lines of the one block marked ```text ``name`` on the protocol's ``page``."""
    blocks = [body for info, body in fenced_blocks(protocol_page(page)) if info.split()[1:] == [name]]
    assert len(blocks) == 1, f"{PROTOCOL_PAGES[page].name} should hold one block marked ```text {name}"
    return [line for line in blocks[0].splitlines() if line[:2] in ("< ", "> ")]


def read_log(path: Path):
    """A log's records as plain JSON objects with their line numbers, for tests that look at or
    edit a log line by line (the referee itself reads :mod:`referee.logs.records`' types)."""
    import json

    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if raw.strip():
                yield number, json.loads(raw)


def strip_timings(obj):
    """A record without the fields that depend on the wall clock (see referee.logs.records)."""
    from referee.logs.records import strip_timings as strip

    return strip(obj)


def random_play(env, seed: int, moves: int = 10**6) -> int:
    """Play uniformly random masked moves (the mask in ``info``, as our environments and Shimmy's
    give it) from ``reset(seed)``; how many were made."""
    import numpy as np

    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    made = 0
    for _agent in env.agent_iter(moves):
        _, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        made += 1
    return made
