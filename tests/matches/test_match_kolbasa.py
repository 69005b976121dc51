"""kolbasa through the whole referee: games to the goat in both orientations from one deal stream,
reproducible logs that verify, deal files listing the rows, replay drawing the two lines, a log
edited to move a tile to another place that no longer verifies, and issue 17's worked examples
played at the table (the places offered, the cut's order, the rows a seat is then told)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import read_log, strip_timings, tiles
from support.commands import cli

from referee.audit.verify import Inconsistent, verify
from referee.engine import Deal, deal_from_seed, variant
from referee.engine.core.shuffle import BLAKE2B
from referee.engine.core.tiles import PIPS, parse_tile
from referee.web.data import read_match
from tests.conversation.test_wire_kolbasa import play_kolbasa
from tests.matches.test_match_cross import GREEDY, RANDOM, match, run

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run


def test_same_seed_same_log_games_to_the_goat_in_both_orientations(tmp_path):
    result, log1 = match(tmp_path, RANDOM, GREEDY, "--variant", "kolbasa", "--seed", "4", "--games", "2", name="a")
    _, log2 = match(tmp_path, RANDOM, GREEDY, "--variant", "kolbasa", "--seed", "4", "--games", "2", name="b")
    assert [strip_timings(r) for _, r in read_log(log1)] == [strip_timings(r) for _, r in read_log(log2)]
    counts = verify(log1)
    assert counts.plays > 50 and counts.turns_checked == counts.plays
    assert result["faults"] == []
    games = [r for _, r in read_log(log1) if r["k"] == "game_end"]
    assert len(games) == 4  # two games, each in both orientations
    assert all(g["losers"] and all(g["totals"][s] >= 101 for s in g["losers"]) for g in games)
    # Both orientations of a game start from the same point of the deal stream.
    first = {(r["game"], r["orientation"]): r["stream"] for _, r in read_log(log1) if r["k"] == "deal" and r["deal"] == 0}
    assert first[(0, 0)] == first[(0, 1)] == 0 and first[(1, 0)] == first[(1, 1)] > 0
    plays = [r for _, r in read_log(log1) if r["k"] == "play"]
    assert all(r["end"] is None and r["place"] and r["as"].endswith(r["place"]) for r in plays)
    assert any(r["place"].startswith("knife:") for r in plays)


def test_a_deal_file_lists_the_rows_and_is_played_in_both_orientations(tmp_path):
    deals = tmp_path / "deals.jsonl"
    res = run("deals", "generate", "--variant", "kolbasa", "--seed", "2", "--count", "30", "--output", str(deals))
    assert res.exit_code == 0, res.output
    first = json.loads(deals.read_text().splitlines()[0])
    shape = variant("kolbasa").shape()
    # KB-8: each row left to right, as dealt; nothing sleeps.
    assert [[parse_tile(t) for t in row] for row in first["hands"]] == [list(r) for r in deal_from_seed(2, 0, shape, BLAKE2B).hands]
    assert [len(r) for r in first["hands"]] == [14, 14] and first["sleeping"] == []
    result, log = match(tmp_path, RANDOM, GREEDY, "--variant", "kolbasa", "--deals-file", str(deals), "--games", "1")
    assert {d["orientation"] for d in result["deals"]} == {0, 1}
    assert verify(log).plays > 0


@pytest.mark.parametrize("edit, message", [
    (lambda o: {**o, "hands": [o["hands"][0][:-1], o["hands"][1]]}, "seat 0 holds 13 tiles, this game deals 14"),
    (lambda o: {**o, "hands": [o["hands"][0], o["hands"][0]]}, "appears twice"),
    (lambda o: {**o, "sleeping": ["0-0"]}, "1 tiles sleeping, this game with 2 players leaves 0"),
])
def test_a_bad_deal_file_is_one_line(tmp_path, edit, message):
    deals = tmp_path / "deals.jsonl"
    assert run("deals", "generate", "--variant", "kolbasa", "--seed", "2", "--count", "1", "--output", str(deals)).exit_code == 0
    deals.write_text(json.dumps(edit(json.loads(deals.read_text()))) + "\n")
    res = run("match", GREEDY, RANDOM, "--variant", "kolbasa", "--deals-file", str(deals), "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1, res.output


def test_replay_draws_the_two_lines_and_the_rows(tmp_path):
    _, log = match(tmp_path, RANDOM, GREEDY, "--variant", "kolbasa", "--seed", "4", "--games", "1")
    text = cli("replay", str(log), env={"COLUMNS": "400"}).output
    for needle in ("the rows, left to right", "turns up", "laid as the start (automatic)", "top    {", "bottom {",
                   "rows: seat 0 has", "fits nowhere", "as a knife at position", "it cuts"):
        assert needle in text, needle
    # Every drawing of the layout has both lines, the start one column across them.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("top    {"):
            assert lines[i + 1].strip().startswith("bottom {")


def _move_a_play(log: Path, out: Path) -> None:
    """Move the first play that had a choice to another of its places, in the record and in the
    bot's line alike."""
    lines = log.read_text().splitlines()
    legal = None
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["k"] == "out":
            turns = [msg for msg in rec["msgs"] if msg["type"] == "turn"]
            legal = turns[-1]["legal"] if turns else legal
        elif rec["k"] == "play" and legal is not None and len(legal) > 1:
            other = next(o["place"] for o in legal if o["place"] != rec["place"])
            rec["place"] = other
            lines[i] = json.dumps(rec)
            sent = json.loads(lines[i - 1])
            msg = json.loads(sent["line"])
            msg["place"] = other
            sent["line"] = json.dumps(msg)
            lines[i - 1] = json.dumps(sent)
            break
    else:
        pytest.fail("no play with a choice in the log")
    out.write_text("\n".join(lines) + "\n")


def test_a_log_edited_to_move_a_tile_to_another_place_fails_verify(tmp_path):
    _, log = match(tmp_path, RANDOM, GREEDY, "--variant", "kolbasa", "--seed", "4", "--games", "1")
    edited = tmp_path / "edited.jsonl"
    _move_a_play(log, edited)
    with pytest.raises(Inconsistent):
        verify(edited)


def test_the_web_data_keeps_the_rows_through_cuts(tmp_path):
    """``referee report``'s documents: each placement names its place, and a cut moves its tiles
    into the opponent's row, so the rows at the end are what each seat wrote from."""
    _, log = match(tmp_path, RANDOM, GREEDY, "--variant", "kolbasa", "--seed", "4", "--games", "1")
    data = read_match(log)
    assert data.deals
    for doc in data.deals:
        places = [s["end"] for s in doc["steps"] if s["kind"] == "place"]
        assert places[0] is None and all(p and p.split(":")[0] in ("top", "bottom", "knife") for p in places[1:])
        last = doc["steps"][-1]
        assert last["kind"] == "end"
        assert [sum(PIPS[parse_tile(t)] for t in h) for h in last["hands"]] == doc["result"]["values"]
    assert any(s["kind"] == "cut" for doc in data.deals for s in doc["steps"])


# -- issue 17's worked examples, at the table --------------------------------------------------


class Script:
    """Stands in for the bots' random generator: answers each turn with the entry whose place is
    next in ``places`` (the two seats' turns in the order they come), then with the first."""

    def __init__(self, places: list[str]) -> None:
        self.places = list(places)

    def choice(self, legal: list[dict]) -> dict:
        if not self.places:
            return legal[0]
        want = self.places.pop(0)
        picked = [o for o in legal if o["place"] == want]
        assert picked, f"the script wants {want}, the turn offers {legal}"
        return picked[0]


def turn_for(seen: list[dict], tile: list[int]) -> dict:
    """The turn that offered ``tile``."""
    return next(t for t in turns(seen) if t["legal"][0]["tile"] == tile)


def scripted(monkeypatch, tmp_path: Path, deal: Deal, places: list[str]) -> list[list[dict]]:
    """Play ``deal`` at the table, both seats answering from ``places`` in turn order; every
    message each seat received."""
    bots, _ = play_kolbasa(monkeypatch, tmp_path, 0, [deal], Script(places))
    seen = [[json.loads(x) for x in bytes(b.received).splitlines()] for b in bots]
    return sorted(seen, key=lambda msgs: next(x["seat"] for x in msgs if x["type"] == "deal"))  # by seat (they start at once)


def turns(seen: list[dict]) -> list[dict]:
    return [x for x in seen if x["type"] == "turn"]


def test_003_knife_at_the_table(monkeypatch, tmp_path):
    """Two lines of three tiles from the start 2-3, ending in 5 (top) and 0 (bottom): seat 1's 5-0
    may go on either end or across as a knife at 3; the knife cuts the start and both lines, in
    KB-5's order, into the left of seat 0's row, and both seats are told so."""
    deal = Deal((tiles("5-5", "0-4", "1-4", "1-3", "2-3"), tiles("3-3", "0-5", "5-6", "4-6", "2-4")), ())
    seen = scripted(monkeypatch, tmp_path, deal, ["top", "bottom", "top", "bottom", "top", "bottom", "knife:3"])
    s0, s1 = seen
    knife_turn = turn_for(s1, [0, 5])
    assert knife_turn["legal"] == [{"tile": [0, 5], "place": "top"}, {"tile": [0, 5], "place": "bottom"},
                                   {"tile": [0, 5], "place": "knife:3"}]
    assert knife_turn["lines"] == {"start": [2, 3], "top": [[2, 4], [4, 6], [6, 5]], "bottom": [[3, 1], [1, 4], [4, 0]]}
    sausage = [[2, 3], [2, 4], [4, 6], [5, 6], [1, 3], [1, 4], [0, 4]]
    cut = {"type": "cut", "seat": 1, "to": 0, "tiles": sausage}
    assert cut in s0 and cut in s1
    # Seat 0 is told its row: the sausage at the left (public), then 5-5 turned up and waiting.
    after = turn_for(s0, [5, 5])
    assert after["rows"][0] == [*sausage, [5, 5]] and after["lines"] == {"start": [5, 0], "top": [], "bottom": []}
    assert after["counts"] == [8, 1]


def test_a_knife_at_the_first_junction_with_lines_of_unequal_length_at_the_table(monkeypatch, tmp_path):
    deal = Deal((tiles("5-5", "0-4", "1-4", "1-3", "2-3"), tiles("3-3", "0-5", "5-6", "4-6", "2-4")), ())
    seen = scripted(monkeypatch, tmp_path, deal, ["top", "bottom", "top", "knife:1"])
    s0, s1 = seen
    knife_turn = turn_for(s0, [1, 4])
    assert knife_turn["lines"] == {"start": [2, 3], "top": [[2, 4], [4, 6]], "bottom": [[3, 1]]}
    assert [o["place"] for o in knife_turn["legal"]] == ["bottom", "knife:1"]
    assert {"type": "cut", "seat": 0, "to": 1, "tiles": [[2, 3], [2, 4], [1, 3]]} in s1
    assert {"type": "placed", "seat": 0, "tile": [1, 4], "forced": False, "place": "knife:1"} in s1


def test_003_inserted_double_renews_the_junctions_at_the_table(monkeypatch, tmp_path):
    """Start 0-1; top 0-6 6-2, bottom 1-5 5-3.  Seat 1's 1-1 has one place, junction 0 of the
    bottom line; once inserted, every seat is told the bottom line 1-1 1-5 5-3."""
    deal = Deal((tiles("4-4", "3-5", "1-5", "0-1"), tiles("2-2", "1-1", "2-6", "0-6")), ())
    seen = scripted(monkeypatch, tmp_path, deal, ["top", "bottom", "top", "bottom", "bottom:0"])
    s0, s1 = seen
    insert_turn = turn_for(s1, [1, 1])
    assert insert_turn["legal"] == [{"tile": [1, 1], "place": "bottom:0"}]
    assert {"type": "placed", "seat": 1, "tile": [1, 1], "forced": False, "place": "bottom:0"} in s0
    later = [t for t in turns(s0) + turns(s1) if t["lines"]["bottom"][:1] == [[1, 1]]]
    assert later and later[0]["lines"]["bottom"] == [[1, 1], [1, 5], [5, 3]]


@pytest.mark.parametrize("answer, detail", [
    ('{"type": "play", "tile": first["tile"], "end": "left"}', 'kolbasa names a "place", not an end'),
    ('{"type": "play", "tile": first["tile"], "place": "knife:0"}', "knife:0 is not a place for"),
    ('{"type": "play", "tile": first["tile"], "place": "middle"}', "'middle' is not a place"),
    ('{"type": "play", "tile": [6, 6] if first["tile"] != [6, 6] else [0, 0], "place": first["place"]}', "the tile turned up is"),
])
def test_a_wrong_place_is_an_illegal_move_that_says_why_and_the_log_verifies(tmp_path, answer, detail):
    bot = tmp_path / "wrong.py"
    bot.write_text("import json, sys\n"
                   "for line in sys.stdin:\n"
                   "    msg = json.loads(line)\n"
                   "    if msg['type'] == 'hello':\n"
                   "        print(json.dumps({'type': 'hello', 'name': 'wrong', 'protocol': 1}), flush=True)\n"
                   "    elif msg['type'] == 'turn':\n"
                   "        first = msg['legal'][0]\n"
                   f"        print(json.dumps({answer}), flush=True)\n"
                   "    elif msg['type'] == 'match_end':\n"
                   "        break\n")
    result, log = match(tmp_path, str(bot), GREEDY, "--variant", "kolbasa", "--seed", "4", "--games", "1", "--max-faults", "1")
    faults = [r for _, r in read_log(log) if r["k"] == "fault"]
    assert faults and faults[0]["kind"] == "illegal" and detail in faults[0]["detail"], faults[0]
    assert "(legal: " in faults[0]["detail"] and " end " not in faults[0]["detail"].split("(legal: ")[1]
    assert verify(log).faults == len(faults)
