"""What the tests share, one place for every helper more than one test file needs.

This module: tiles by name, whether a process is still alive, bubblewrap as the referee finds it, the protocol's pages (PROTOCOL.md
and docs/protocol/) and their worked transcripts, a log's records, and random masked play of a PettingZoo environment.  :mod:`support.commands`:
the command line in this process and as a real one, and what a refused command looks like.
(``tests/helpers.py`` is this module under its old name.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.bots.sandbox import SandboxUnavailable, find_bwrap
from referee.engine import parse_tile

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_MD = ROOT / "PROTOCOL.md"
#: The protocol's pages by name: "core" is PROTOCOL.md, each family's is docs/protocol/NAME.md.
PROTOCOL_PAGES = {"core": PROTOCOL_MD, **{p.stem: p for p in sorted((ROOT / "docs" / "protocol").glob("*.md"))}}
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)


def bwrap() -> str | None:
    """bubblewrap where the referee finds it (:func:`referee.bots.sandbox.find_bwrap`: its usual
    place, else ``PATH``), or ``None``: the sandbox's tests run wherever the sandbox works."""
    try:
        return find_bwrap()
    except SandboxUnavailable:
        return None


#: The mark of a test that needs the sandbox.
needs_bwrap = pytest.mark.skipif(bwrap() is None, reason="bubblewrap is not installed (apt-get install bubblewrap)")


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
    edit a log line by line (the referee itself reads :mod:`referee.records.records`' types)."""
    import json

    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if raw.strip():
                yield number, json.loads(raw)


def strip_timings(obj):
    """A record without the fields that depend on the wall clock (see referee.records.records)."""
    from referee.records.records import strip_timings as strip

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


def end_deal(game, left: dict[int, tuple[str, ...]], reason: str, seat: int, deal, arrange=None):
    """Start ``game``'s next deal from ``deal`` and end it at once, by ``reason`` (``"domino"``,
    ``"fish"``) of ``seat``, with ``left[s]`` (tile names) in each seat's hand: the record
    ``finish`` returns, once its totals are checked to be the old ones plus what it wrote.
    ``arrange(state)`` sets what else a game scores on before the deal is finished."""
    from referee.engine import TERMINAL, DealEnd

    state = game.start(deal)
    assert state is not None, "a void deal"
    before = list(game.totals)
    state.hands = [mask(left.get(s, ())) for s in range(game.players)]
    state.end = DealEnd(reason, seat)
    state.turn = TERMINAL
    if arrange is not None:
        arrange(state)
    rec = game.finish(state)
    assert [b + w for b, w in zip(before, rec.wrote)] == list(rec.totals)
    return rec
