"""A match on several lanes (``referee match -j N``): the same result and the same log whatever
N, the SPRT in board order, Ctrl-C with segments in flight, and faults counted per segment."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import msgspec
import pytest
import trio
from support import alive, read_log, strip_timings
from support.commands import cli

from referee.audit.verify import verify
from referee.base import exitcodes as X
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.stats.sprt import SprtSpec

ROOT = Path(__file__).resolve().parents[2]
GREEDY = str(ROOT / "sample_bots" / "greedy_bot.py")
RANDOM = str(ROOT / "sample_bots" / "random_bot.py")
HOSTILE = ROOT / "tests" / "hostile_bots" / "hostile.py"


def bots(n: int) -> list[Bot]:
    """Greedy, then random bots with seeds of their own: a random bot keeps its generator from
    deal to deal, so a process that played other deals would answer otherwise."""
    out = [Bot("greedy", [sys.executable, GREEDY])]
    out += [Bot(f"random{i}", [sys.executable, RANDOM, str(7 + i)]) for i in range(1, n)]
    return out


def spec_of(tmp_path: Path, name: str, game: str, players: int, n_bots: int, **kw) -> MatchSpec:
    v = variant(game)
    return MatchSpec(v, bots(n_bots), players, v.resolve_options(players, {}), seed=11,
                     log_path=tmp_path / f"{name}.jsonl", stderr_dir=tmp_path / f"{name}.stderr", **kw)


def played(spec: MatchSpec, lanes: int) -> tuple[dict, list]:
    with trio.run(partial(run_match, spec, handle_signals=False, lanes=lanes)) as result:
        whole = msgspec.to_builtins(result.whole())
    assert spec.log_path is not None
    return whole, [strip_timings(r) for _, r in read_log(spec.log_path)]


CASES = {
    "block, 2 players, 3 games to a target": {"game": "block", "players": 2, "n_bots": 2, "games": 3},
    "sport in pairs, 2 games of 4 deals": {"game": "sport", "players": 4, "n_bots": 2, "deals": 4, "games": 2},
    "draw, 3 bots at 3 seats, 2 games": {"game": "draw", "players": 3, "n_bots": 3, "games": 2},
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.slow
def test_the_result_and_the_log_are_the_same_whatever_the_lanes(tmp_path, case):
    kw = CASES[case]
    one = played(spec_of(tmp_path, "j1", **kw), 1)
    three = played(spec_of(tmp_path, "j3", **kw), 3)
    assert three[0] == one[0]
    assert three[1] == one[1]
    assert [r["k"] for r in one[1]].count("game") == len(one[0]["orientations"]) * kw["games"]
    for name in ("j1", "j3"):
        counts = verify(tmp_path / f"{name}.jsonl")
        assert counts.games == len(one[0]["orientations"]) * kw["games"]
    # every segment has processes of its own: a hello per process, none shared between games
    hellos = [r for r in one[1] if r["k"] == "hello"]
    seats = kw["players"] * len(one[0]["orientations"]) * kw["games"]
    assert len(hellos) >= seats
    stderr = sorted(p.name for p in (tmp_path / "j3.stderr").iterdir())
    assert len(stderr) == len(hellos) and any(".g1." in n for n in stderr)


def test_games_to_a_target_deal_from_their_own_place_in_the_stream(tmp_path):
    """Game g of a match to a target deals from stream deal g * 2**32 (``blake2b-games``), so its
    deals do not depend on how long the games before it lasted; game 0 is dealt as before."""
    whole, log = played(spec_of(tmp_path, "m", "block", 2, 2, games=3), 2)
    header = log[0]
    assert header["deals_from"] == "blake2b-games"
    for d in (r for r in log if r["k"] == "deal"):
        assert d["stream"] >> 32 == d["game"]


@pytest.mark.slow
def test_the_sprt_stops_in_board_order_and_leaves_the_rest_out(tmp_path):
    """With three lanes the test decides after the same board as with one: the boards begun past
    it are ended, left out of the result and the log, and the stop record counts them."""
    sprt = SprtSpec(kind="margin", h0=0.0, h1=60.0, alpha=0.2, beta=0.2, min_pairs=2)
    tc = TimeControl(move=2.0)
    one = played(spec_of(tmp_path, "j1", "block", 2, 2, games=40, sprt=sprt, tc=tc), 1)
    three = played(spec_of(tmp_path, "j3", "block", 2, 2, games=40, sprt=sprt, tc=tc), 3)
    assert one[0]["stopped_by"] == "sprt" and one[0] == three[0]
    assert one[1] == three[1]
    decided = one[0]["sprt"]["pairs"]
    assert decided < 40
    assert len(one[0]["game_results"]) == 2 * decided
    assert max(r["game"] for r in one[1] if r["k"] in ("game", "deal", "game_end")) == decided - 1
    stop = [r for _, r in read_log(tmp_path / "j3.jsonl") if r["k"] == "stop"]
    assert len(stop) == 1 and stop[0]["pairs"] == decided
    assert stop[0]["unfinished"] >= 1  # three lanes were playing when it decided
    verify(tmp_path / "j1.jsonl")
    verify(tmp_path / "j3.jsonl")


@pytest.mark.slow
def test_faults_are_counted_per_segment_whatever_the_lanes(tmp_path):
    """A bot that never answers its first turn reaches max_faults in every game in every seating,
    and forfeits that segment's deals left: the same faults, forfeits and result under -j 1 and
    -j 3."""
    def spec(name: str) -> MatchSpec:
        state = tmp_path / f"state-{name}"
        state.mkdir()
        v = variant("draw")
        bad = Bot("hostile", [sys.executable, str(HOSTILE), "timeout_first", str(state)])
        return MatchSpec(v, [bad, Bot("greedy", [sys.executable, GREEDY])], 2, v.resolve_options(2, {}), games=2, seed=5,
                         tc=TimeControl(move=0.3), max_faults=2, log_path=tmp_path / f"{name}.jsonl",
                         stderr_dir=tmp_path / f"{name}.stderr")
    def same(run: tuple[dict, list]) -> tuple[dict, list]:  # less each run's state folder, named on the command line
        whole, log = run
        return {k: v for k, v in whole.items() if k != "bots"}, [{k: v for k, v in r.items() if k != "bots"} for r in log]
    one = same(played(spec("j1"), 1))
    three = same(played(spec("j3"), 3))
    assert one[0] == three[0] and one[1] == three[1]
    assert [f["kind"] for f in one[0]["faults"]] == ["timeout"] * 8  # 2 in each of 2 games in each of 2 seatings
    assert [r["k"] for r in one[1]].count("forfeit") == 4


def test_a_lane_count_below_one_is_refused(tmp_path):


    res = cli("match", GREEDY, RANDOM, "-j", "0", "--log", str(tmp_path / "m.jsonl"))
    assert res.exit_code == X.USAGE
    assert "--concurrency (-j): at least 1, not 0" in res.output
    assert not (tmp_path / "m.jsonl").exists()
    res = cli("check", GREEDY, "-j", "0")
    assert res.exit_code == X.USAGE and "at least 1" in res.output


@pytest.mark.slow
def test_ctrl_c_with_lanes_in_flight(tmp_path):
    """SIGINT to a referee playing three lanes: the finished boards are printed and in --json
    (interrupted), the log verifies as far as it goes, and no bot is left behind."""
    log = tmp_path / "m.jsonl"
    result = tmp_path / "r.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee", "match", GREEDY, f"{RANDOM} 3", "--variant", "block", "--players", "2",
         "--games", "5000", "--seed", "4", "-j", "3", "--log", str(log), "--json", str(result)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_bytes().count(b'"k":"game_end"') >= 6):
            assert time.monotonic() < deadline and proc.poll() is None, "the match did not get going"
            time.sleep(0.05)
        # Three lanes of two bots, and the segment started ahead.  A lane between two segments
        # has ended its bots and not yet started the next ones (a loaded machine stretches that
        # moment), so wait for the moment when all are playing rather than catch one.
        while len(children := subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()) < 6:
            assert time.monotonic() < deadline and proc.poll() is None, f"never six bots at once: {children}"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # and its pipes closed
    assert proc.returncode == X.INTERRUPTED, err
    assert "interrupted after" in err and "Traceback" not in err
    data = json.loads(result.read_text())
    assert data["interrupted"] is True
    boards = len(data["game_results"]) // 2
    assert boards >= 3 and f"interrupted after {boards} pair" in err
    records = [r for _, r in read_log(log)]
    assert records[-1]["k"] == "interrupted"
    assert sum(1 for r in records if r["k"] == "game_end") >= 2 * boards
    deadline = time.monotonic() + 10
    while any(alive(int(pid)) for pid in children):
        assert time.monotonic() < deadline, f"bots still alive: {children}"
        time.sleep(0.05)
    assert os.path.getsize(log) > 0


@pytest.mark.parametrize("source", ["deal file", "blake2b"])
@pytest.mark.slow
def test_games_dealt_one_after_another_wait_for_the_game_before(tmp_path, source):
    """From a deal file, and under the older derivation (logs and leagues from before), game g to
    a target starts where the longest seating of game g-1 ended: the games are played one after
    another (their seatings at once), and -j 3 still gives -j 1's result and log."""
    from referee.engine.core.deal import deal_from_seed, format_deal_line, parse_deal_lines

    v = variant("block")
    shape = v.shape(2, v.resolve_options(2, {}))
    kw: dict = {"deals_from": "blake2b"}
    if source == "deal file":
        file = tmp_path / "deals.jsonl"
        file.write_text("".join(format_deal_line(deal_from_seed(3, i, shape, "blake2b"), shape, i) + "\n" for i in range(400)))
        kw = {"deal_file": parse_deal_lines(file.read_text().splitlines(), shape), "deal_file_name": str(file),
              "deal_file_sha256": hashlib.sha256(file.read_bytes()).hexdigest()}
    one = played(spec_of(tmp_path, "j1", "block", 2, 2, games=3, **kw), 1)
    three = played(spec_of(tmp_path, "j3", "block", 2, 2, games=3, **kw), 3)
    assert one[0] == three[0] and one[1] == three[1]
    streams = {}
    for d in (r for r in one[1] if r["k"] == "deal"):
        streams.setdefault(d["game"], {}).setdefault(d["orientation"], []).append(d["stream"])
    for g in (1, 2):
        longest = max(s[-1] for s in streams[g - 1].values())
        assert all(s[0] == longest + 1 for s in streams[g].values())
    verify(tmp_path / "j3.jsonl")


def test_every_segment_is_greeted_before_it_plays(tmp_path):
    """The seam for freezing processes that wait (Watch.greeted): told once per segment, with
    every process of it live and answered, before the segment's first deal is logged."""
    from referee.matches.watch import Watch as Observer
    from referee.records import records as R

    seen: list[tuple[str, object]] = []

    class Watch(Observer):
        def greeted(self, roster) -> None:
            assert all(p.channel.proc is not None for p in roster.players.values())
            seen.append(("greeted", (roster.game, roster.orientations[0])))

        def record(self, record) -> None:
            if isinstance(record, R.Game):
                seen.append(("game", (record.game, record.orientation)))

    spec = spec_of(tmp_path, "m", "block", 2, 2, games=3)
    with trio.run(partial(run_match, spec, watch=Watch(), handle_signals=False)):
        pass
    greeted = [w for k, w in seen if k == "greeted"]
    assert sorted(greeted) == [(g, o) for g in range(3) for o in range(2)]
    for k, w in seen:
        if k == "game":
            assert ("greeted", w) in seen[: seen.index((k, w))]
