"""mexican_train through the whole referee: seven-round matches in every rotation of the seating,
from a seed or a deal file, reproducible logs that verify (and edited ones that do not), replay
drawing the trains with their markers and open doubles, ``referee check``, one-line errors for
bad deal files and match lengths.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import read_log, strip_timings

from referee.audit.replay import Replayer, replay_lines
from referee.audit.verify import Inconsistent, verify
from referee.engine.core.line import Passed, Placed
from referee.engine.core.tiles import IS_DOUBLE
from tests.matches.test_match_cross import FIRST, GREEDY, RANDOM, RANDOM2, run
from tests.matches.test_match_cross import match as cross_match

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run


def match(tmp_path: Path, *args: str, name: str = "m"):
    """A mexican_train match through the command line: its ``--json`` result and its log."""
    return cross_match(tmp_path, *args, "--variant", "mexican_train", name=name)


@pytest.mark.parametrize("bots, players", [((RANDOM, GREEDY), 2), ((RANDOM, GREEDY, FIRST), 3), ((RANDOM, GREEDY, FIRST, RANDOM2), 4),
                                           ((RANDOM, GREEDY), 4)])
def test_seven_rounds_in_every_rotation_same_seed_same_log(tmp_path, bots, players):
    result, log1 = match(tmp_path, *bots, "--players", str(players), "--seed", "4", name="a")
    _, log2 = match(tmp_path, *bots, "--players", str(players), "--seed", "4", name="b")
    assert [strip_timings(r) for _, r in read_log(log1)] == [strip_timings(r) for _, r in read_log(log2)]
    assert verify(log1).plays > 50
    assert result["faults"] == []
    rotations = players if len(bots) == players else 2
    header = next(r for _, r in read_log(log1) if r["k"] == "match")
    if len(bots) == players:
        assert header["orientations"] == [[(s - r) % players for s in range(players)] for r in range(players)]
    else:
        assert header["orientations"] == [[s % 2 for s in range(players)], [(s + 1) % 2 for s in range(players)]]
    deals = result["deals"]
    assert len(deals) == 7 * rotations
    for o in range(rotations):
        mine = [d for d in deals if d["orientation"] == o]
        assert [d["deal"] for d in mine] == list(range(7)) and [d["stream"] for d in mine] == list(range(7))
        assert [d["leader"] for d in mine] == [k % players for k in range(7)]  # MT-1
        assert [d["lead_tile"] for d in mine] == [f"{6 - k}-{6 - k}" for k in range(7)]  # the stations
    plays = [r for _, r in read_log(log1) if r["k"] == "play"]
    assert all(p["end"] is None and p["train"] in [f"seat{s}" for s in range(players)] + ["mexican"] for p in plays)
    assert all(p["as"] == f"{'-'.join(map(str, sorted(p['tile'])))} on {p['train']}" for p in plays)


def test_a_deal_file_is_played_in_every_orientation(tmp_path):
    deals = tmp_path / "deals.jsonl"
    res = run("deals", "generate", "--variant", "mexican_train", "--players", "3", "--seed", "2", "--count", "7", "--output", str(deals))
    assert res.exit_code == 0, res.output
    lines = deals.read_text().splitlines()
    assert len(lines) == 7
    for k, line in enumerate(lines):
        d = json.loads(line)
        tiles = [t for h in d["hands"] for t in h] + d["bazaar"]
        assert len(tiles) == 27 and f"{6 - k}-{6 - k}" not in tiles  # the station is not listed
        assert [len(h) for h in d["hands"]] == [7, 7, 7]
    result, log = match(tmp_path, RANDOM, GREEDY, FIRST, "--players", "3", "--deals-file", str(deals))
    assert {d["orientation"] for d in result["deals"]} == {0, 1, 2}
    assert verify(log).plays > 0


def test_games_play_seven_round_games_from_the_deal_stream_and_verify(tmp_path):
    """``--games 3``: three seven-round games in each orientation, game g from stream deals
    7g … 7g+6, each round its own pair, so the match can become significant; the log verifies
    and replays, and the same match again gives the same log."""
    result, log = match(tmp_path, RANDOM, GREEDY, "--players", "2", "--seed", "4", "--games", "3", name="a")
    _, again = match(tmp_path, RANDOM, GREEDY, "--players", "2", "--seed", "4", "--games", "3", name="b")
    assert [strip_timings(r) for _, r in read_log(log)] == [strip_timings(r) for _, r in read_log(again)]
    assert result["games"] == 3 and result["deals_per_game"] == 7 and result["unit"] == "deal"
    deals = result["deals"]
    assert len(deals) == 3 * 7 * 2
    for d in deals:
        assert d["stream"] == 7 * d["game"] + d["deal"] and d["lead_tile"] == f"{6 - d['deal']}-{6 - d['deal']}"
    assert sorted((g["game"], g["orientation"]) for g in result["game_results"]) == [(g, o) for g in range(3) for o in range(2)]
    assert result["margin"]["random_bot"]["paired"]["n"] == 21  # a pair per round
    assert verify(log).games == 6
    res = run("verify", str(log))
    assert res.exit_code == 0 and "consistent: 3 games in each of 2 orientations, 42 deals" in res.output
    text = run("replay", str(log), "--game", "3", "--deal", "7").output
    assert "== game 3, orientation 0, deal 7 (stream 20)" in text and "station [0|0]" in text


def test_a_deal_file_of_two_games_is_played_whole_without_deals_or_games(tmp_path):
    deals = tmp_path / "deals.jsonl"
    assert run("deals", "generate", "--variant", "mexican_train", "--players", "2", "--seed", "5", "--count", "14",
               "--output", str(deals)).exit_code == 0
    result, log = match(tmp_path, RANDOM, GREEDY, "--players", "2", "--deals-file", str(deals))
    assert result["games"] == 2 and len(result["deals"]) == 28 and {d["stream"] for d in result["deals"]} == set(range(14))
    assert verify(log).deals == 28
    res = run("match", RANDOM, GREEDY, "--variant", "mexican_train", "--players", "2", "--deals-file", str(deals), "--games", "3",
              "--log", str(tmp_path / "x.jsonl"))
    assert res.exit_code == 2 and "the deal file holds 14 deals; the match plays 21 (3 games of 7 deals)" in res.output


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    deals = tmp_path / "good.jsonl"
    assert run("deals", "generate", "--variant", "mexican_train", "--players", "3", "--count", "7", "--output", str(deals)).exit_code == 0
    lines = deals.read_text().splitlines()
    out = {}

    def bad(name: str, first: str, rest: list[str], expected: str) -> None:
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join([first, *rest]) + "\n")
        out[name] = (path, expected)

    d = json.loads(lines[0])
    bad("rounds_swapped", lines[1], [lines[0], *lines[2:]], "line 1: deal 0 of the file is round 0, which puts 6-6 on the station, but it sets aside 5-5")
    d = json.loads(lines[0])
    d["bazaar"].append("6-6")
    bad("station_listed", json.dumps(d), lines[1:], "line 1: 7 tiles in the bazaar, this game with 3 players leaves 6")
    d = json.loads(lines[0])
    d["bazaar"].append(d["hands"][0].pop())
    bad("hand_short", json.dumps(d), lines[1:], "line 1: seat 0 holds 6 tiles, this game deals 7")
    d = json.loads(lines[0])
    k = next(i for i, t in enumerate(d["bazaar"]) if t[0] != t[2])
    d["bazaar"][k] = "6-6"  # the station listed, a plain tile missing instead
    bad("other_missing", json.dumps(d), lines[1:], "line 1: the deal must list every tile but one double, the station; missing:")
    bad("too_few", lines[0], lines[1:5], "the deal file holds 5 deals, and mexican_train is always 7 rounds (6-6 down to 0-0), not 5")
    return out


@pytest.mark.parametrize("name", ["rounds_swapped", "station_listed", "hand_short", "other_missing", "too_few"])
def test_a_bad_deal_file_is_a_one_line_error(tmp_path, name):
    path, expected = _bad_files(tmp_path)[name]
    res = run("match", RANDOM, GREEDY, FIRST, "--variant", "mexican_train", "--players", "3", "--deals-file", str(path),
              "--log", str(tmp_path / "x.jsonl"))
    assert res.exit_code == 2
    assert res.output.startswith("error: ") and expected in res.output and len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("args, expected", [
    (["--players", "3", RANDOM, GREEDY], "mexican_train with 3 players takes 3 bots, not 2"),
    (["--deals", "3", RANDOM, GREEDY], "mexican_train is always 7 rounds (6-6 down to 0-0), not 3"),
    (["--deals", "14", RANDOM, GREEDY], "mexican_train is always 7 rounds (6-6 down to 0-0), not 14; for 14 deals, give --games 2 (7 deals each)"),
    (["--games", "0", RANDOM, GREEDY], "--games: must be at least 1"),
    (["--players", "5", RANDOM, GREEDY], "players"),
])
def test_a_match_of_another_shape_is_a_one_line_error(tmp_path, args, expected):
    res = run("match", *args, "--variant", "mexican_train", "--log", str(tmp_path / "x.jsonl"))
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error: ") and expected in res.output and len(res.output.strip().splitlines()) == 1


def test_replay_draws_the_trains_with_markers_and_open_doubles(tmp_path):
    _, log = match(tmp_path, RANDOM, GREEDY, FIRST, "--players", "3", "--seed", "4")
    text = run("replay", str(log), "--game", "1", "--orientation", "0").output
    assert "station [6|6]; seat 0 (random_bot) starts" in text and "station [0|0]" in text
    assert " on mexican" in text and "      mexican  [6|" in text
    assert "knocks: a marker goes on seat" in text and "(marker)" in text
    assert "(open double)" in text
    assert "the trains:" in text and "on the left" not in text and "on the right" not in text


def test_replay_says_a_double_hangs_at_every_knock_over_it_and_at_no_other(tmp_path):
    """Each knock's words in ``referee replay`` against the rules read from the log's engine events
    (a double laid on a train stays uncovered until the next tile, MT-7, MT-8): a seat's second
    knock once read the first one's state, because equal events share an index."""
    _, log = match(tmp_path, RANDOM, GREEDY, FIRST, RANDOM2, "--players", "4", "--seed", "4")
    hangs: list[bool] = []
    open_double = [False]

    class Knocks(Replayer):
        def on_deal(self, rec, state):
            open_double[0] = False  # the station is covered by nothing and never open

        def on_event(self, e, play, state):
            if type(e) is Placed and e.end is not None:
                open_double[0] = IS_DOUBLE[e.tile]
            elif type(e) is Passed:
                hangs.append(open_double[0])

    Knocks(log).run()
    knocks = [line for line in replay_lines(log) if " knocks: " in line]
    assert len(knocks) == len(hangs) > 20 and any(hangs) and not all(hangs)
    assert [" hangs" in line for line in knocks] == hangs


def _edit_train(log: Path, out: Path) -> None:
    """Move the first play whose tile would also fit another open train there, in the play record
    and in the bot's line, as if the bot had sent that."""
    recs = [json.loads(line) for line in log.read_text().splitlines()]
    for i, rec in enumerate(recs):
        if rec["k"] != "out" or rec["msgs"][-1].get("type") != "turn":
            continue
        legal = rec["msgs"][-1]["legal"]
        j = next(k for k in range(i + 1, len(recs)) if recs[k]["k"] == "play")
        play = recs[j]
        other = [o for o in legal if o["tile"] == sorted(play["tile"]) and o["train"] != play["train"]]
        if other:
            play["train"] = other[0]["train"]
            play["as"] = f"{'-'.join(map(str, sorted(play['tile'])))} on {play['train']}"
            sent = recs[j - 1]
            msg = json.loads(sent["line"])
            msg["train"] = play["train"]
            sent["line"] = json.dumps(msg)
            break
    else:
        pytest.fail("no play that fitted two trains")
    out.write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_a_play_moved_to_another_train_fails_verify(tmp_path):
    """The moved play is legal by itself; what follows (the next turn's legal moves, or a later
    play, or the deal's result) no longer agrees with the engine."""
    _, log = match(tmp_path, RANDOM, GREEDY, "--players", "2", "--seed", "4")
    edited = tmp_path / "edited.jsonl"
    _edit_train(log, edited)
    with pytest.raises(Inconsistent):
        verify(edited)
    res = run("verify", str(edited))
    assert res.exit_code == 4


def test_a_play_with_its_train_dropped_fails_verify(tmp_path):
    _, log = match(tmp_path, RANDOM, GREEDY, "--players", "2", "--seed", "4")
    recs = [json.loads(line) for line in log.read_text().splitlines()]
    j = next(k for k, r in enumerate(recs) if r["k"] == "play")
    del recs[j]["train"]
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(Inconsistent, match=r"\(play\): train: the log has null, the referee \"seat"):
        verify(edited)


def test_check_plays_mexican_train(tmp_path):
    res = run("check", GREEDY, "--variant", "mexican_train", "--log-dir", str(tmp_path / "chk"))
    assert res.exit_code == 0, res.output
    assert "mexican_train, 2 players" in res.output and "mexican_train, 4 players" in res.output
    assert "PASS" in res.output
    for players in (2, 3, 4):  # check stops each seating's game after --deals rounds (4), as every game
        assert verify(tmp_path / "chk" / f"mexican_train-{players}.jsonl").deals == 4 * players


def test_report_reads_a_four_player_log_naming_the_trains(tmp_path):
    """The web report's documents (replay.js does not draw trains yet) name each play's train,
    the Mexican (train index 4) included, and the station as nobody's tile."""
    _, log = match(tmp_path, RANDOM, GREEDY, FIRST, RANDOM2, "--players", "4", "--seed", "4")
    res = run("report", str(log), "-O", str(tmp_path / "site"))
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "site" / "g1-o0-d1.json").read_text())
    steps = doc["steps"]
    assert steps[1]["kind"] == "station" and steps[1]["text"] == "6-6 on the station" and steps[1]["seat"] is None
    ends = {s["end"] for s in steps if s["kind"] == "place"}
    assert "mexican" in ends and ends <= {"seat0", "seat1", "seat2", "seat3", "mexican"}
