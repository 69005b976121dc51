"""The hostile-bot suite: one misbehaving bot per fault, through whole matches.

Every hostile bot (tests/hostile_bots/hostile.py) plays correctly until the moment it
misbehaves, once per match, and records where it did (seat, game, deal).  Each test checks
that exactly that fault is recorded there, that the match goes on and completes (the other
deals are played, the faulting deal is scored as PROTOCOL.md "What a fault costs" says), and
that no process is left behind (the conftest fixture checks every test; the nasty ones also
check their own pids).  Deadlines here only catch hangs; no test asserts how long anything took.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio
from support import alive
from support.commands import cli

from referee.base.clock import TimeControl
from referee.base.errors import BotStartError
from referee.bots.bot import Bot
from referee.conversation import faults as F
from referee.conversation.players import Entry
from referee.engine import variant
from referee.matches.match import MatchResult, run_match
from referee.matches.spec import MatchSpec

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots" / "hostile.py"
FIRST = ROOT / "sample_bots" / "first_bot.py"
GREEDY = ROOT / "sample_bots" / "greedy_bot.py"
HANG = 60  # seconds after which a match counts as hung


# -- helpers -----------------------------------------------------------------------------------


def hostile(tmp_path: Path, behaviour: str, **opts: object) -> tuple[Bot, Path]:
    """The hostile bot doing ``behaviour``, and its state directory (see hostile.py)."""
    state = tmp_path / "state"
    state.mkdir()
    argv = [sys.executable, str(HOSTILE), behaviour, str(state), *(f"{k}={v}" for k, v in opts.items())]
    return Bot("hostile", argv), state


def sample(path: Path, name: str) -> Bot:
    return Bot(name, [sys.executable, str(path)])


@dataclass
class Played:
    result: MatchResult
    log: list[dict]
    bot: Bot
    state: Path
    stderr_dir: Path

    @property
    def entry(self) -> Entry:
        """The bot's part in the match (its faults, whether it forfeited…)."""
        return next(e for e in self.result.entries if e.bot is self.bot)

    @property
    def faults(self) -> list[F.Fault]:
        return self.entry.faults

    def trigger(self) -> dict:
        path = self.state / "trigger"
        assert path.exists(), "the hostile bot never reached the moment it misbehaves"
        return json.loads(path.read_text())

    def starts(self) -> list[int]:
        return [int(x) for x in (self.state / "starts").read_text().split()]

    def deal_ends(self) -> list[dict]:
        return [r for r in self.log if r["k"] == "deal_end"]


async def play(
    tmp_path: Path,
    bot: tuple[Bot, Path],
    game: str = "sport",
    *,
    players: int | None = None,
    others: list[Bot] | None = None,
    move: float = 0.5,
    startup: float = 5.0,
    lockstep: bool = False,
    **options: object,
) -> Played:
    """A small match of ``bot`` against first_bot: sport with 4 deals, or one game of anything
    else; 2 bots, or ``others`` added."""
    the_bot, state = bot
    v = variant(game)
    bots = [the_bot, *(others or [sample(FIRST, "first")])]
    players = players or (v.default_players if len(bots) == 2 else len(bots))
    spec = MatchSpec(
        v, bots, players, v.resolve_options(players, options),
        deals=None if v.to_target else 4, games=1 if v.to_target else None, seed=3,
        tc=TimeControl(startup=startup, move=move), log_path=tmp_path / "match.jsonl",
        stderr_dir=tmp_path / "stderr",
    )
    with trio.fail_after(HANG):
        result = await run_match(spec, lockstep=lockstep)
    log = [json.loads(line) for line in (tmp_path / "match.jsonl").read_text().splitlines()]
    return Played(result, log, the_bot, state, spec.stderr_dir)


def _by_seating(log: list[dict]) -> dict[int, list[dict]]:
    """A log's records by the seating they were played in (from each ``deal`` record to the next,
    a ``hello`` by its ``o``)."""
    out: dict[int, list[dict]] = {}
    o = 0
    for r in log:
        if r["k"] in ("game", "deal", "deal_end", "game_end"):
            o = r["orientation"]
        elif r["k"] == "hello":
            o = r["o"]
        out.setdefault(o, []).append(r)
    return out


def expected_wrote(game: str, players: int, options: dict, seat: int, values: list[int]) -> list[int]:
    """What each side writes for a deal lost by ``seat``'s fault (PROTOCOL.md, "What a fault
    costs"), before kozel's rule of 13 and carried eggs."""
    pairs = variant(game).game.uses_pairs(players, options)
    sides = [(0, 2), (1, 3)] if pairs else [(s,) for s in range(players)]
    mine = next(i for i, seats in enumerate(sides) if seat in seats)
    held = sum(values[s] for s in sides[mine])
    if game == "kozel":  # penalties: the faulting side writes its own
        return [held if i == mine else 0 for i in range(len(sides))]
    return [0 if i == mine else held for i in range(len(sides))]


def check_costs(p: Played) -> None:
    """Every deal stopped by a fault is scored as the faulting side's loss."""
    spec = p.result.spec
    for rec in p.deal_ends():
        if rec["reason"] != "fault":
            continue
        want = expected_wrote(spec.variant.id, spec.players, spec.options, rec["seat"], rec["values"])
        if spec.variant.id == "kozel" and rec["wrote"] != want:
            # the rule of 13 (or eggs carried from a fish) changed it; it says so
            assert any("13" in n or "egg" in n for n in rec["notes"]), rec
        else:
            assert rec["wrote"] == want, rec


def check_completed(p: Played) -> None:
    """The match was played to its end: every deal of sport, every game of the others."""
    result, spec = p.result, p.result.spec
    assert not result.interrupted
    orientations = len(result.seatings)
    if spec.variant.to_target:
        assert len(result.games) == orientations * (spec.games or 1)
    else:
        assert len(result.deals) == orientations * (spec.deals or 0)
        assert len(result.games) == orientations
    assert [r for r in p.log if r["k"] == "result"], "the match log has no result"
    check_costs(p)


def check_one_fault(p: Played, kind: str) -> F.Fault:
    """Exactly one fault, of ``kind``, where the bot says it misbehaved; the match went on."""
    assert [f.kind for f in p.faults] == [kind], [str(f) for f in p.faults]
    fault = p.faults[0]
    where = p.trigger()
    assert fault.bot == "hostile"
    assert (fault.seat, fault.game, fault.deal) == (where["seat"], where["game"], where["deal"]), (str(fault), where)
    assert fault.line is None or len(fault.line) <= F.EVIDENCE + 20
    check_completed(p)
    stopped = [d for d in p.result.deals if d.end == "fault"]
    assert len(stopped) == 1 and stopped[0].by_bot == "hostile" and stopped[0].by == fault.seat
    assert len(p.result.deals) > 1, "no other deal was played"
    assert all(d.end in ("domino", "fish") for d in p.result.deals if d != stopped[0])
    assert p.result.bot_totals()[0].faults == {kind: 1}
    return fault


# -- one fault each, at the table ------------------------------------------------------------


async def test_never_answers(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "silent"))
    fault = check_one_fault(p, F.TIMEOUT)
    assert "no play within 500 ms" in fault.detail
    assert not alive(p.trigger()["pid"])


async def test_answers_after_the_limit(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "late", delay=1.5))
    fault = check_one_fault(p, F.TIMEOUT)
    late = p.trigger()["pid"]
    # the process was killed at the fault: it never got to write its late play
    assert not (p.state / "late_written").exists()
    assert not alive(late)
    # a fresh process took the seat (four started with the match: two seats, two seatings), and
    # no line of the late one was read after the fault
    assert len(p.starts()) == 5
    at = next(i for i, r in enumerate(p.log) if r["k"] == "fault")
    until = next(i for i in range(at, len(p.log)) if p.log[i]["k"] == "deal")
    assert not [r for r in p.log[at:until] if r["k"] in ("in", "play") and r["seat"] == fault.seat]


async def test_garbage(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "garbage"))
    fault = check_one_fault(p, F.BAD_OUTPUT)
    assert fault.detail.startswith("not JSON")
    assert fault.line == "I think I will play the double six"


async def test_wrong_field_type_names_the_json_path(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "tile_string"))
    fault = check_one_fault(p, F.BAD_OUTPUT)
    assert "$.tile" in fault.detail
    assert '"3-5"' in (fault.line or "")


async def test_ten_megabyte_line(tmp_path):
    tracemalloc.start()
    try:
        p = await play(tmp_path, hostile(tmp_path, "huge"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    fault = check_one_fault(p, F.BAD_OUTPUT)
    assert "longer than 65536 bytes" in fault.detail
    assert fault.line is not None and fault.line.startswith('{"type":"play","tile":"xxx')
    assert len(fault.line) <= F.EVIDENCE + 20
    assert peak < 8 << 20, f"the referee's memory peaked at {peak} bytes for a 10 MB line"


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("not_held", "is not in your hand"),  # a tile already on the table
        ("others_tile", "is not in your hand"),  # sport: every other tile is in another hand
    ],
)
async def test_tile_not_in_hand(tmp_path, behaviour, reason):
    p = await play(tmp_path, hostile(tmp_path, behaviour))
    fault = check_one_fault(p, F.ILLEGAL)
    assert reason in fault.detail
    assert "(legal: " in fault.detail


async def test_tile_that_fits_no_end(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "no_fit"))
    fault = check_one_fault(p, F.ILLEGAL)
    assert "does not fit: the ends show left" in fault.detail and " and right " in fault.detail


async def test_tile_on_the_wrong_end(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "wrong_end"))
    fault = check_one_fault(p, F.ILLEGAL)
    end = p.trigger()["end"]
    other = {"left": "right", "right": "left"}[end]
    assert f"does not match the {end} end" in fault.detail and f"it fits the {other} end" in fault.detail
    assert json.loads(fault.line or "")["end"] == end


@pytest.mark.parametrize("behaviour", ["early_play", "double_play"])
async def test_out_of_turn(tmp_path, behaviour):
    """A play written when no turn is pending.  Right after ``deal`` the early play may be
    taken as the answer to the turn that comes with it; the real answer is then the extra line."""
    p = await play(tmp_path, hostile(tmp_path, behaviour))
    assert [f.kind for f in p.faults] == [F.OUT_OF_TURN], [str(f) for f in p.faults]
    fault = p.faults[0]
    where = p.trigger()
    assert (fault.seat, fault.game, fault.deal) == (where["seat"], where["game"], where["deal"])
    # Read while nothing was asked, or only at the next turn, whose id it does not echo.
    assert "when it was not its turn" in fault.detail or "but this is turn" in fault.detail, fault.detail
    assert json.loads(fault.line or "")["type"] == "play"
    check_completed(p)
    assert [d.by_bot for d in p.result.deals if d.end == "fault"] == ["hostile"]


async def test_exits_mid_deal(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "exit"))
    fault = check_one_fault(p, F.CRASH)
    assert "exited with code 7" in fault.detail
    assert "giving up in the middle of a deal" in fault.detail  # the last stderr line


async def test_ignores_sigterm_and_hangs(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "hang_noterm"))
    check_one_fault(p, F.TIMEOUT)
    assert not alive(p.trigger()["pid"])


async def test_child_keeps_stdout_open_after_the_parent_exits(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "orphan"))
    fault = check_one_fault(p, F.CRASH)
    assert "exited with code 5" in fault.detail
    child = int((p.state / "child").read_text())
    assert not alive(child)
    assert not alive(p.trigger()["pid"])


async def test_never_reads_stdin(tmp_path):
    """It fills its own stdin pipe, answers, and never reads again: the referee's write of its
    next turn must time out instead of hanging the match."""
    p = await play(tmp_path, hostile(tmp_path, "no_read"))
    fault = check_one_fault(p, F.TIMEOUT)
    assert "no play within 500 ms" in fault.detail
    assert int((p.state / "stdin_full").read_text()) > 0
    assert not alive(p.trigger()["pid"])


async def test_never_reads_stdin_at_the_end_of_a_deal(tmp_path):
    """The same with its last tile: the play ends the deal, and the ``deal_end`` cannot be
    written.  The fault is found between deals and costs the bot its next deal."""
    p = await play(tmp_path, hostile(tmp_path, "no_read", last=1))
    assert [f.kind for f in p.faults] == [F.TIMEOUT], [str(f) for f in p.faults]
    fault = p.faults[0]
    where = p.trigger()
    assert (fault.seat, fault.game, fault.deal) == (where["seat"], where["game"], where["deal"])
    assert "did not read its input" in fault.detail
    assert not alive(where["pid"])
    check_completed(p)
    # the deal it went out in stands; the next deal of that process is stopped at its start
    at = next(i for i, r in enumerate(p.log) if r["k"] == "fault")
    assert p.log[at - 1]["k"] == "deal"
    stopped = [d for d in p.result.deals if d.end == "fault"]
    assert len(stopped) == 1 and stopped[0].by_bot == "hostile"


async def test_floods_stderr(tmp_path):
    """256 MB on stderr before its hello: the match completes and the log keeps 1 MiB."""
    # Generous clocks: reading and dropping 256 MB a process is slow on a loaded machine, and
    # the test is about what the log keeps, not about how fast.
    p = await play(tmp_path, hostile(tmp_path, "flood", mb=256), "block", players=2, startup=20, move=10)
    assert p.faults == []
    check_completed(p)
    logs = sorted(p.stderr_dir.glob("hostile*.stderr.log"))
    assert logs
    for path in logs:
        assert path.stat().st_size <= (1 << 20) + 200
        assert path.read_bytes().endswith(b"bytes; the rest was discarded]\n")


# -- start-up ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "detail"),
    [
        ("start_crash", "exited with code 3; last stderr line: hostile: cannot load my weights"),
        ("protocol2", "speaks protocol 2; this referee speaks 1"),
        ("start_garbage", "expected a hello, but the line is not valid"),
        ("start_silent", "no hello within the start-up limit of 1 s"),
    ],
)
async def test_startup_fault_on_the_second_start(tmp_path, behaviour, detail):
    """The first process exits mid-deal (a crash); the second cannot start: a start-up fault
    at the next deal; the third plays on."""
    # in lockstep the second seating's process starts once the first seating's game is over: the
    # second start is the first replacement (with one lane the second seating's start goes on
    # beside the first's play, and which of the two starts first is a matter of timing)
    p = await play(tmp_path, hostile(tmp_path, behaviour, start=2, then="exit"), "draw", players=2, startup=1.0, lockstep=True)
    assert [f.kind for f in p.faults] == [F.CRASH, F.STARTUP], [str(f) for f in p.faults]
    crash, startup = p.faults
    assert detail in startup.detail
    where = p.trigger()
    assert (crash.seat, crash.game, crash.deal) == (where["seat"], where["game"], where["deal"])
    assert startup.game == crash.game and startup.deal >= crash.deal + 1
    assert len(p.starts()) >= 4
    check_completed(p)
    ends = [d for d in p.result.deals if d.end == "fault"]
    assert len(ends) == 2 and all(d.by_bot == "hostile" for d in ends)


@pytest.mark.parametrize(
    ("behaviour", "detail"),
    [
        ("start_crash", "hostile: cannot load my weights"),
        ("protocol2", "speaks protocol 2"),
    ],
)
async def test_bot_that_cannot_start_at_match_start(tmp_path, behaviour, detail):
    bot = hostile(tmp_path, behaviour, start=1)
    with pytest.raises(BotStartError) as info:
        await play(tmp_path, bot)
    assert detail in str(info.value)
    if behaviour == "start_crash":
        assert "--- stderr of hostile" in str(info.value)


def test_cli_exits_3_with_the_stderr_tail(tmp_path):

    state = tmp_path / "state"
    state.mkdir()
    result = cli(
        "match", f"{HOSTILE} start_crash {state} start=1", str(FIRST), "--deals", "4", "--move-time", "1",
        "--startup-time", "5", "--log", str(tmp_path / "m.jsonl"), "-q")
    assert result.exit_code == 3, result.output
    assert "a bot could not be started" in result.stderr
    assert "cannot load my weights (start-up crash on purpose)" in result.stderr


# -- forfeit and what faults cost ----------------------------------------------------------------


async def test_max_faults_forfeits_the_rest(tmp_path):
    """It never answers its first turn: three timeouts in a seating's game, then every deal left
    of that game in that seating is its loss, with no process started for it.  Faults are
    counted per segment (one game in one seating), so each of the two seatings sees three."""
    p = await play(tmp_path, hostile(tmp_path, "timeout_first"))
    assert [f.kind for f in p.faults] == [F.TIMEOUT] * 6
    assert p.entry.forfeited
    assert [r["bot"] for r in p.log if r["k"] == "forfeit"] == ["hostile", "hostile"]
    check_completed(p)
    assert all(d.end == "fault" and d.by_bot == "hostile" for d in p.result.deals)
    forfeited = [r for r in p.log if r["k"] == "forfeited_deal"]
    assert len(forfeited) == len(p.result.deals) - 6
    # two processes at the start of each seating's game (a pair), and a fresh one for a seat
    # whose process faulted while the bot had not yet forfeited: none after the forfeit
    starts = [r for r in p.log if r["k"] == "hello" and r["bot"].startswith("hostile")]
    assert 4 < len(p.starts()) <= 8
    for o, records in _by_seating(p.log).items():
        forfeit = next(i for i, r in enumerate(records) if r["k"] == "forfeit")
        assert not [r for r in records[forfeit:] if r["k"] == "hello"], o
    assert len(starts) == len(p.starts())
    assert not any(alive(pid) for pid in p.starts())
    totals = p.result.bot_totals()
    assert totals[0].points == 0 and totals[1].points > 0


@pytest.mark.parametrize(
    ("game", "players"),
    [("sport", 4), ("kozel", 4), ("draw", 3), ("draw", 2), ("block", 4), ("club", 3)],
)
async def test_what_a_fault_costs(tmp_path, game, players):
    """sport: the opponents write the faulting pair's pips; kozel: the faulting side writes its
    own; draw, block, club: every other player writes the faulter's hand."""
    others = [sample(FIRST, "first")] if players in (2, 4) else [sample(FIRST, "first"), sample(GREEDY, "greedy")]
    p = await play(tmp_path, hostile(tmp_path, "exit"), game, players=players, others=others)
    check_one_fault(p, F.CRASH)
    rec = next(r for r in p.deal_ends() if r["reason"] == "fault")
    seat = rec["seat"]
    if game == "sport":
        mine = (seat % 2, seat % 2 + 2)
        assert rec["wrote"][seat % 2] == 0
        assert rec["wrote"][1 - seat % 2] == sum(rec["values"][s] for s in mine) > 0
    elif game == "kozel":
        assert rec["wrote"][1 - seat % 2] == 0
        assert "writes its own" in " ".join(rec["notes"])
    else:
        assert rec["wrote"] == [0 if s == seat else rec["values"][seat] for s in range(players)]


# -- JSON nested too deep (PROTOCOL.md, Limits) ------------------------------------------------


@pytest.mark.parametrize("behaviour", ["deep", "deep_unknown"])
async def test_json_nested_too_deep_is_bad_output(tmp_path, behaviour):
    """1,000 levels of brackets (2 KB), in an extra field of a play or in a line of an unknown
    type: a bad_output fault charged to the bot, not a RecursionError in the referee."""
    p = await play(tmp_path, hostile(tmp_path, behaviour))
    fault = check_one_fault(p, F.BAD_OUTPUT)
    assert "nested deeper than 64 levels" in fault.detail
    assert fault.line is not None and fault.line.endswith(" chars)")  # the evidence, cut short


async def test_json_nested_too_deep_when_nobody_asked(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "deep_unasked"))
    assert [f.kind for f in p.faults] == [F.BAD_OUTPUT], [str(f) for f in p.faults]
    assert "nested deeper than 64 levels" in p.faults[0].detail
    check_completed(p)


async def test_hello_nested_too_deep_is_a_startup_fault(tmp_path):
    # lockstep, as in test_startup_fault_on_the_second_start: the second start is the first
    # replacement, not the second seating's first process (with one lane that one starts while
    # the first seating plays, and which comes first is a matter of timing)
    p = await play(tmp_path, hostile(tmp_path, "start_deep", start=2, then="exit"), "draw", players=2, lockstep=True)
    assert [f.kind for f in p.faults] == [F.CRASH, F.STARTUP], [str(f) for f in p.faults]
    assert "nested deeper than 64 levels" in p.faults[1].detail
    check_completed(p)


def test_cli_hello_nested_too_deep_at_match_start(tmp_path):
    """At the very start it is a bot that cannot start (exit 3), with one line saying why."""

    state = tmp_path / "state"
    state.mkdir()
    result = cli(
        "match", f"{HOSTILE} start_deep {state} start=1", str(FIRST), "--deals", "4",
        "--log", str(tmp_path / "m.jsonl"), "-q")
    assert result.exit_code == 3, result.output
    assert "nested deeper than 64 levels" in result.stderr
    assert "Traceback" not in result.output


# -- what a bot can make the referee write (PROTOCOL.md, Limits) -------------------------------


def log_bound(p: Played) -> int:
    """The most the log may hold (PROTOCOL.md, Limits): 2 × max_line + 32 KiB for each turn,
    deal and process start."""
    turns = sum(1 for r in p.log if r["k"] == "out" and any(msg["type"] == "turn" for msg in r["msgs"]))
    deals = sum(1 for r in p.log if r["k"] == "deal")
    starts = sum(1 for r in p.log if r["k"] == "hello")
    return (turns + deals + starts) * (2 * p.result.spec.max_line + (32 << 10))


async def test_unknown_types_up_to_the_limit_are_ignored_and_logged_short(tmp_path):
    p = await play(tmp_path, hostile(tmp_path, "chatter", lines=16, size=5000))
    assert p.faults == []
    check_completed(p)
    chatter = [r for r in p.log if r["k"] == "in" and (r.get("judged") or {}).get("type") == "thinking"]
    assert len(chatter) == 16  # each kept as its size, its start and what the referee made of it
    assert all(r["size"] == 4999 and r["evidence"].endswith("… (4999 chars)") and len(r["evidence"]) < 300 for r in chatter)
    assert all("line" not in r and r["judged"]["kind"] == "unknown" for r in chatter)
    assert p.entry.remarks == {"sent a message of unknown type 'thinking' (ignored)": 16}


@pytest.mark.parametrize("behaviour", ["chatter", "chatter_unasked"])
async def test_more_unknown_lines_than_allowed_in_one_move(tmp_path, behaviour):
    p = await play(tmp_path, hostile(tmp_path, behaviour, lines=17))
    assert [f.kind for f in p.faults] == [F.BAD_OUTPUT], [str(f) for f in p.faults]
    assert "more than 16 lines of unknown types in one move" in p.faults[0].detail
    check_completed(p)


async def test_a_flood_of_unknown_lines_is_a_fault_and_the_log_stays_small(tmp_path):
    """Lines of an unknown type as fast as the pipe takes them (the attack that wrote a 17 GB
    log): a fault after 16, and the log within its bound per move."""
    p = await play(tmp_path, hostile(tmp_path, "chatter", lines=1_000_000, size=60_000, every=1, deal=0, turn=0))
    assert p.faults and all(f.kind == F.BAD_OUTPUT for f in p.faults)
    assert "in one move" in p.faults[0].detail
    assert p.entry.forfeited
    check_completed(p)
    size = (tmp_path / "match.jsonl").stat().st_size
    assert size <= log_bound(p), (size, log_bound(p))


async def test_more_unknown_bytes_than_allowed_in_one_match(tmp_path):
    """10 lines of 60 KB a move are allowed; the second such move passes 1 MiB in the match."""
    p = await play(tmp_path, hostile(tmp_path, "chatter", lines=10, size=60_000, every=1, deal=0, turn=0))
    assert p.faults and p.faults[0].kind == F.BAD_OUTPUT
    assert "more than 1 MiB of lines of unknown types in this match" in p.faults[0].detail
    check_completed(p)
    assert (tmp_path / "match.jsonl").stat().st_size <= log_bound(p)
