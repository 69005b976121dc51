"""Staged openings (referee/matches/staging.py, issue 12): the search finds a position where a seat must
make a rare decision, the match driver plays the game from there with the bots, and the log
verifies and replays; a log whose staged moves were tampered with does not.  Scripted bots on
trio's mock clock: no processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
import trio.testing

from protocol import messages as m
from referee.audit.replay import replay_lines
from referee.audit.verify import Inconsistent, verify
from referee.bots.bot import Bot
from referee.bots.transport import first_legal, scripted
from referee.conversation.house import BotSource
from referee.engine import TERMINAL, variant
from referee.matches.match import DealStream, run_match
from referee.matches.spec import MatchSpec
from referee.matches.staging import STAGES, find_opening
from referee.records.records import Damaged
from referee.sides import side_for

SEA_KOZEL = variant("sea_kozel")
#: every staged decision, with each player count of its game
CASES = [(vid, n, stage) for vid, stages in STAGES.items() for stage in stages for n in sorted(variant(vid).players)]


def opening_for(players: int, stage: str, seed: int, vid: str = "sea_kozel"):
    v = variant(vid)
    options = v.resolve_options(players)
    stream = DealStream(v.shape(players, options), seed, None, None)
    wanted = next(s for s in STAGES[vid] if s.name == stage)
    deals = None if v.to_target else v.game.default_deals
    return find_opening(v, players, options, deals, stream.__getitem__, wanted, seed), stream


@pytest.mark.parametrize(("vid", "players", "stage"), CASES, ids=[f"{v}-{n}-{s.name}" for v, n, s in CASES])
@pytest.mark.parametrize("seed", [1, 2, 9])
def test_the_opening_leads_the_engine_to_the_wanted_decision(vid, players, stage, seed):
    """Made from the game's start on the stream's deals, the opening's moves are all legal, and
    the position after them is the one the stage wants (a hundred offered; write off or decline;
    a knife; a double to insert…)."""
    opening, stream = opening_for(players, stage.name, seed, vid)
    assert opening is not None
    again, _ = opening_for(players, stage.name, seed, vid)
    assert again == opening  # reproducible
    v = variant(vid)
    game = v.new_game(players, v.resolve_options(players), None if v.to_target else v.game.default_deals)
    moves = iter(opening.moves)
    index = 0
    while True:
        state = game.start(stream[index])
        index += 1
        if state is None:  # a void deal: the driver takes the next
            continue
        wire = side_for(state)
        while state.to_move() != TERMINAL:
            move = next(moves, None)
            if move is None:
                legal = [wire.play_option(state, p) for p in state.legal_plays()]
                assert stage.wanted(state, legal)
                assert game.played == opening.deal
                return
            seat, play = move
            assert seat == state.to_move()
            state.push(wire.engine_play(state, play), seat)
        game.finish(state)


def test_the_stages_want_what_they_say():
    """Each stage's test, on the legal moves as bots get them."""
    hundred, fish = STAGES["sea_kozel"]
    knife, double = STAGES["kolbasa"]
    plain = [m.PlayOption((6, 6), None), m.PlayOption((1, 2), None)]
    assert hundred.wanted(None, [*plain, m.PlayOption((6, 6), None, declare="hundred")]) and not hundred.wanted(None, plain)
    assert fish.wanted(None, [m.PlayOption(None, None, declare="write_off"), m.PlayOption(None, None, declare="decline")])
    assert not fish.wanted(None, plain)
    assert knife.wanted(None, [m.PlayOption((0, 5), place="top"), m.PlayOption((0, 5), place="knife:2")])
    assert not knife.wanted(None, [m.PlayOption((0, 5), place="top"), m.PlayOption((0, 5), place="bottom")])
    assert double.wanted(None, [m.PlayOption((1, 1), place="bottom:0")]) and not double.wanted(None, [m.PlayOption((1, 1), place="top")])


def staged_match(tmp_path: Path, stage: str, players: int = 2, seed: int = 4, vid: str = "sea_kozel") -> tuple[Path, dict]:
    """A match with a staged opening between two scripted bots, stopped after the staged deal;
    its log and the messages each bot was sent."""
    opening, _ = opening_for(players, stage, seed, vid)
    assert opening is not None
    launch, started = scripted({})
    log = tmp_path / f"{stage}.jsonl"
    v = variant(vid)
    spec = MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], players, v.resolve_options(players),
                     games=1 if v.to_target else None, deals=None if v.to_target else v.game.default_deals,
                     seed=seed, log_path=log, stderr_dir=tmp_path / "stderr", deal_limit=opening.deal + 1,
                     opening=opening.moves)
    trio.run(lambda: run_match(spec, BotSource(launch), handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0))
    return log, started


@pytest.mark.parametrize(("vid", "stage", "declare"), [("sea_kozel", "hundred", "hundred"), ("sea_kozel", "fish", "write_off"),
                                                       ("kolbasa", "knife", None), ("mexican_train", "hanging", None)])
def test_a_staged_match_asks_no_bot_before_the_position_and_its_log_verifies(tmp_path, vid, stage, declare):
    log, started = staged_match(tmp_path, stage, vid=vid)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    header = records[0]
    assert len(header["opening"]) > 0 and header["deal_limit"] >= 1
    n = len(header["opening"])
    for o in (0, 1):  # both orientations begin with the opening, as staged plays, then the bots play
        start = next(i for i, r in enumerate(records) if r["k"] == "deal" and r["orientation"] == o)
        plays = [r for r in records[start + 1:] if r["k"] == "play"]  # the plays of its first deal come first
        assert all(r["staged"] and "ms" not in r for r in plays[:n])
        assert [r["seat"] for r in plays[:n]] == [x["seat"] for x in header["opening"]]
        assert "staged" not in plays[n]
    # Every game stops after the staged deal, as its game_end says (a game of a fixed length too).
    ends = [r for r in records if r["k"] == "game_end"]
    assert [e["reason"] for e in ends] == [f"deal limit ({header['deal_limit']}) reached"] * 2
    # The first turn any bot gets is the staged decision.
    firsts = []
    for bots in started.values():
        turns = [msg for msg in bots[0].received if type(msg) is m.Turn]
        if turns:
            firsts.append(turns[0])
    wanted = next(s for s in STAGES[vid] if s.name == stage)
    if declare is not None:
        assert any(any(o.declare == declare for o in t.legal) for t in firsts)
    assert any(wanted.wanted(None, t.legal) for t in firsts) or stage == "hanging"
    counts = verify(log)
    assert counts.plays > len(header["opening"])
    text = "\n".join(replay_lines(log))
    assert "staged: the referee makes the first" in text and " (staged)" in text


def rewrite(log: Path, change) -> Path:
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    change(lines)
    out = log.with_name("tampered.jsonl")
    out.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    return out


def test_verify_refuses_tampered_staged_moves(tmp_path):
    log, _ = staged_match(tmp_path, "fish")

    def first_staged(lines):
        return next(r for r in lines if r["k"] == "play" and r.get("staged"))

    def unstage(lines):  # a staged move passed off as a bot's answer
        del first_staged(lines)["staged"]

    def shorten(lines):  # the header's opening is one move short: the last staged play is extra
        lines[0]["opening"] = lines[0]["opening"][:-1]

    def stage_a_bots_move(lines):  # a bot's answer passed off as a staged move
        staged = [i for i, r in enumerate(lines) if r["k"] == "play" and r.get("staged")]
        after = next(r for r in lines[staged[-1] + 1:] if r["k"] == "play")
        after["staged"] = True

    def garble(lines):
        lines[0]["opening"] = "every move"

    def later_limit(lines):  # the games were stopped by the header's deal limit, not by their rules
        lines[0]["deal_limit"] += 1

    def bad_limit(lines):
        lines[0]["deal_limit"] = "soon"

    for change, message in ((unstage, "staged: the log has null, the referee true"), (shorten, "the referee writes a 'out' record here"),
                            (stage_a_bots_move, "staged: the log has true, the referee null"), (garble, "is not a 'match' record.*opening"),
                            (later_limit, "the referee writes a 'deal' record here"),
                            (bad_limit, "is not a 'match' record.*deal_limit")):
        with pytest.raises((Inconsistent, Damaged), match=message):
            verify(rewrite(log, change))


def test_a_fault_before_the_staged_position_drops_the_rest_of_the_opening_and_the_log_still_verifies(tmp_path):
    """A bot that writes a play when nothing was asked faults at the next deal's start; that deal
    is lost, so the game has left the opening's line: the table drops the moves left, the bots
    play on, and verify follows the same rule."""
    opening, _ = opening_for(2, "hundred", 2)
    assert opening is not None and opening.deal >= 2  # the opening spans deals, so a later one is at stake

    def chatty(msg: m.ToBotMessage) -> list[tuple[float, bytes | None]]:
        if type(msg) is m.DealEnd:
            return [(0.0, b'{"type":"play","tile":[0,0],"end":null}')]
        return list(first_legal(msg))

    launch, _ = scripted({"B": chatty})
    log = tmp_path / "chatty.jsonl"
    spec = MatchSpec(SEA_KOZEL, [Bot("A", ["a"]), Bot("B", ["b"])], 2, SEA_KOZEL.resolve_options(2), games=1, seed=2,
                     log_path=log, stderr_dir=tmp_path / "stderr", deal_limit=opening.deal + 1, opening=opening.moves)
    trio.run(lambda: run_match(spec, BotSource(launch), handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    first_fault = next(i for i, r in enumerate(records) if r["k"] == "fault")
    assert records[first_fault]["kind"] == "out_of_turn" and "charged" in records[first_fault]
    game_starts = [i for i, r in enumerate(records) if r["k"] == "game"]
    rest = records[first_fault:next((i for i in game_starts if i > first_fault), len(records))]
    plays = [r for r in rest if r["k"] == "play"]
    assert plays and not any(r.get("staged") for r in plays)  # the bots played the rest of that game
    verify(log)


def test_an_opening_with_a_stop_or_a_null_tile_reads_back_as_it_was_written():
    """The header omits a null tile (a stop, a write-off): read back, the move is the same play,
    so a staged sea_kozel log with a stop in its opening verifies (it did not: "opening move 4 is
    not a play")."""
    import msgspec

    from referee.matches.match import opening_moves, opening_records
    from referee.records import records as R

    opening = [(1, m.Play(tile=(0, 1), end="right")), (0, m.Play(tile=None, stop=True)),
               (2, m.Play(tile=None, declare="write_off"))]
    header = msgspec.json.decode(msgspec.json.encode(opening_records(opening)), type=list[R.OpeningMove])
    assert b'"tile"' not in msgspec.json.encode(header[1])
    assert opening_moves(header) == opening
