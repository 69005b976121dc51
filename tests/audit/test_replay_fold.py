"""The text replay breaks long lines between tiles, never inside one (``[3|`` at the end of a
line and ``4]`` at the start of the next was rich wrapping a line of play as one long word)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from support.commands import cli

from referee.audit.replay import fold
from tests.matches.test_match import GREEDY, RANDOM, run

TILE = re.compile(r"\[\d[|#]\d\]|\{\d\|\d\}")
PIECE = re.compile(r"[\[{]|\d[|#]\d|[\]}]")


def no_tile_split(line: str) -> bool:
    """Every bracket, bar and hash of the line belongs to a whole tile."""
    return not PIECE.search(TILE.sub("", line))


tiles = st.builds(lambda a, b, closed, lead: ("{%d|%d}" if lead else "[%d#%d]" if closed else "[%d|%d]") % (a, b),
                  st.integers(0, 6), st.integers(0, 6), st.booleans(), st.booleans())
words = st.text(alphabet="abcdefghij():;,.0123456789", min_size=1, max_size=12)
runs = st.lists(tiles, min_size=1, max_size=30).map("".join)  # a line of play: tiles with no space between


@given(indent=st.integers(0, 8), parts=st.lists(st.one_of(runs, words), min_size=1, max_size=12), width=st.integers(12, 100))
def test_folded_lines_keep_every_tile_whole_fit_and_lose_nothing(indent, parts, width):
    line = " " * indent + " ".join(parts)
    folded = fold(line, width)
    assert "".join(line.split()) == "".join("".join(folded).split())
    for out in folded:
        assert no_tile_split(out), (line, folded)
        # too wide only when it is one piece that cannot be broken (a long word)
        pieces = [p for w in out.split() for p in re.split(r"(?<=[\]}])(?=[\[{])", w)]
        assert len(out) <= width or len(pieces) == 1, (out, width)
    assert folded[0].startswith(" " * indent)


def test_a_hand_continues_under_its_first_tile_and_a_short_line_is_left_alone():
    hand = "   seat 0 (a)   [0|1] [2|6] [5|5] [1|4] [0|3] [1|1] [2|3]"
    assert fold(hand, 80) == [hand]
    assert fold(hand, 36) == ["   seat 0 (a)   [0|1] [2|6] [5|5]", "                [1|4] [0|3] [1|1]", "                [2|3]"]
    assert fold("      [1|2][2|3]\n      up: -", 80) == ["      [1|2][2|3]", "      up: -"]


def test_replay_on_a_narrow_terminal_never_breaks_a_tile(tmp_path):
    """On a terminal the lines of play fold between tiles; off one they are whole."""
    log = tmp_path / "m.jsonl"
    assert run("match", GREEDY, RANDOM, "--variant", "osel", "--seed", "3", "--log", str(log)).exit_code == 0
    wide = run("replay", str(log), "--game", "1").output
    assert max(map(len, wide.splitlines())) > 40  # lines of play longer than the terminal below
    piped = cli("replay", str(log), "--game", "1", env={"COLUMNS": "40"})
    assert piped.output == wide  # into a file or a pipe nothing is folded, whatever COLUMNS says
    res = cli("replay", str(log), "--game", "1", env={"COLUMNS": "40", "FORCE_COLOR": "1"})  # a terminal
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    # a tile cut across two lines would be missing from the tiles found line by line
    assert [t for line in lines for t in TILE.findall(line)] == TILE.findall(wide)
    assert all(len(line) <= 40 for line in lines if line.startswith("      ") and TILE.search(line))  # the lines of play
    assert "".join(wide.split()) == "".join(res.output.split())
