"""Bots written from the protocol's pages alone (PROTOCOL.md and docs/protocol/), played through the real referee.

* The 20-line bot of "Your first bot in 20 lines", taken from the core page as printed, plays
  mexican_train and kolbasa without a fault: an entry of ``turn.legal`` sent whole carries the
  ``train`` or the ``place`` (kolbasa's entries have no ``end``).
* ``tests/doc_bots/mexican_train_reader.py`` and ``tests/doc_bots/kolbasa_reader.py``, each
  written from its game's page only (docs/protocol/mexican_train.md, docs/protocol/kolbasa.md), follow the table from the events, work out their own
  legal moves from the section's words, check every ``turn`` against them and play moves they
  build themselves (no ``end``, the halves in either order).  Their stderr names each difference;
  the deals must have made them meet what the section describes (a hanging double, a marker
  train, a drawn tile, a double of their own to cover; knives, cuts, inserted doubles, tails),
  so those paragraphs were tested.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import msgspec
import pytest
import trio
from support import protocol_page

from referee.audit.verify import verify
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.spawn import resolve_command
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"
READERS = Path(__file__).resolve().parents[1] / "doc_bots"


def twenty_line_bot(tmp_path: Path) -> Path:
    """The bot of PROTOCOL.md's "Your first bot in 20 lines", written to a file as printed."""
    text = protocol_page("core")
    section = text[text.index("## Your first bot in 20 lines"):]
    code = re.search(r"^```python\n(.*?)^```", section, re.M | re.S)
    assert code is not None, "PROTOCOL.md's first bot should be a ```python block"
    path = tmp_path / "first.py"
    path.write_text(code.group(1), encoding="utf-8")
    return path


def play(game: str, players: int, candidate: list[str], tmp_path: Path, seed: int = 11) -> tuple[dict, str]:
    """A match of ``game`` (mexican_train: its seven rounds in every rotation) with the candidate
    and random_bot.py in the other seats; the result and the candidate's stderr.  The log verifies."""
    v = variant(game)
    others = [Bot(f"random{i}", [sys.executable, str(SAMPLES / "random_bot.py"), str(seed + i)]) for i in range(1, players)]
    spec = MatchSpec(v, [Bot("candidate", candidate), *others], players, v.resolve_options(players),
                     deals=None if v.to_target else v.game.default_deals, games=1 if v.to_target else None,
                     seed=seed, tc=TimeControl(startup=20, move=10), log_path=tmp_path / "m.jsonl",
                     stderr_dir=tmp_path / "err")
    data = msgspec.to_builtins(trio.run(run_match, spec).whole())
    assert verify(tmp_path / "m.jsonl").plays > 0
    stderr = "".join(p.read_text(encoding="utf-8") for p in sorted((tmp_path / "err").glob("candidate*")))
    return data, stderr


def seen(stderr: str) -> Counter[str]:
    """What the reader bot met, added up over its processes (one per orientation): each ends by
    writing ``SAW {...}`` to stderr."""
    total: Counter[str] = Counter()
    for part in stderr.split("SAW ")[1:]:
        total.update(json.loads(part.splitlines()[0]))
    return total


@pytest.mark.parametrize("game, players", [("mexican_train", 2), ("mexican_train", 4), ("kolbasa", 2)])
def test_the_twenty_line_bot_plays_mexican_train_and_kolbasa_without_a_fault(game, players, tmp_path):
    data, _ = play(game, players, resolve_command(str(twenty_line_bot(tmp_path))), tmp_path)
    assert data["faults"] == [] and not data["interrupted"]
    if game == "mexican_train":
        assert len(data["deals"]) == 7 * players  # seven rounds in every rotation
    else:
        assert {d["orientation"] for d in data["deals"]} == {0, 1}  # a game to the goat, both orientations


@pytest.mark.parametrize("players, seed", [(2, 9), (3, 9), (4, 9)])
def test_a_mexican_train_bot_from_the_section_agrees_with_every_turn(players, seed, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_SEED", str(seed))
    data, stderr = play("mexican_train", players, [sys.executable, str(READERS / "mexican_train_reader.py")], tmp_path, seed)
    assert data["faults"] == [] and not data["interrupted"]
    assert "MISMATCH" not in stderr, stderr[:3000]
    saw = seen(stderr)
    assert saw["turns"] > 100
    for what in ("hanging_double", "marker_train_played", "drawn_tile_turn", "own_double_to_cover"):
        assert saw[what] > 0, f"the deals never made the reader meet {what}: {saw}"


@pytest.mark.parametrize("seed", [10, 11])
def test_a_kolbasa_bot_from_the_section_agrees_with_every_turn(seed, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_SEED", str(seed))
    data, stderr = play("kolbasa", 2, [sys.executable, str(READERS / "kolbasa_reader.py")], tmp_path, seed)
    assert data["faults"] == [] and not data["interrupted"]
    assert "MISMATCH" not in stderr, stderr[:3000]
    saw = seen(stderr)
    assert saw["turns"] > 40 and saw["deals"] >= 2  # a game to the goat in both orientations
    for what in ("knives", "cuts_into_my_row", "inserted", "tailed"):
        assert saw[what] > 0, f"the deals never made the reader meet {what}: {saw}"


DEAL_LOGGER = '''import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "deals", "protocol": 1}), flush=True)
    elif msg["type"] == "deal":
        print("DEAL", json.dumps([msg["game_number"], msg["deal_number"], msg["seat"]]), file=sys.stderr, flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
'''


@pytest.mark.parametrize("game, players", [("mexican_train", 3), ("kolbasa", 2)])
def test_a_process_meets_the_seatings_as_game_number_says(game, players, tmp_path):
    """PROTOCOL.md's ``game_number``: every seating has a process of its own, which sees every deal
    of its seating once, in order, at one seat, all with one game_number (a game of a fixed
    length, or a game to a target alike)."""
    script = tmp_path / "deals.py"
    script.write_text(DEAL_LOGGER, encoding="utf-8")
    _, stderr = play(game, players, [sys.executable, str(script)], tmp_path)
    deals = [tuple(json.loads(line[5:])) for line in stderr.splitlines() if line.startswith("DEAL ")]
    assert {g for g, _, _ in deals} == {0}
    if game == "mexican_train":
        assert [d for _, d, _ in deals] == list(range(7)) * players  # the candidate's processes, one after the other
        blocks = [{s for _, _, s in deals[7 * i:7 * i + 7]} for i in range(players)]
        assert all(len(b) == 1 for b in blocks) and len(set.union(*blocks)) == players  # one seat each, all different
    else:
        seats = [s for _, _, s in deals]
        assert seats == sorted(seats) and set(seats) == {0, 1}  # every deal at seat 0, then every deal at seat 1
        assert [d for _, d, s in deals if s == 0] == list(range(seats.count(0)))
