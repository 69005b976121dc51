"""What the protocol's pages (PROTOCOL.md and docs/protocol/) say the referee does, held against
what it does (issue 8).

Each test finds the statement on the page it belongs to and checks the behaviour through the real table
(in-process bots that record every byte, see tests/conversation/test_wire_replay.py) or the command line.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from support import PROTOCOL_PAGES, protocol_page, read_log, tiles
from support.commands import cli

from referee.base import exitcodes as X
from referee.base.clock import TimeControl
from referee.engine import Deal
from tests.conversation.test_wire_replay import play_recorded

pytestmark = pytest.mark.slow  # matches of real bot processes: the full run

ROOT = Path(__file__).resolve().parents[2]
FIRST = str(ROOT / "sample_bots" / "first_bot.py")


def protocol_says(*phrases: str, page: str = "core") -> None:
    """Each phrase stands on the protocol's ``page`` (the core page, PROTOCOL.md, or a family's)."""
    text = " ".join(protocol_page(page).split())
    for phrase in phrases:
        assert " ".join(phrase.split()) in text, f"{PROTOCOL_PAGES[page].name} does not say: {phrase}"


def messages(bot) -> list[dict]:
    return [json.loads(line) for line in bytes(bot.received).splitlines()]


def seat_of(bot) -> int:
    return next(m["seat"] for m in messages(bot) if m["type"] == "deal")


def test_club_draws_one_tile_then_passes_while_the_bazaar_holds_tiles(monkeypatch, tmp_path):
    protocol_says("a `drew` with `count: 1` is followed by a `passed`, *although the bazaar still holds tiles*", page="line")
    deal = Deal(
        (
            tiles("5-5", "2-6", "4-5", "1-4", "5-6", "0-2", "1-5"),
            tiles("1-1", "3-3", "1-2", "2-2", "0-1", "4-6", "0-0"),
            tiles("0-4", "0-5", "3-6", "2-5", "1-6", "0-6", "3-5"),
        ),
        tiles("6-6", "1-3", "2-4", "0-3", "2-3", "4-4", "3-4"),
    )
    seen = messages(next(b for b in play_recorded(monkeypatch, tmp_path, "club", 3, {}, [deal], 1) if seat_of(b) == 0))
    drew = seen.index({"type": "drew", "seat": 1, "count": 1, "tiles": None})
    assert seen[drew + 1] == {"type": "passed", "seat": 1}
    assert next(m for m in seen if m["type"] == "deal")["bazaar"] - 1 > 0


@pytest.mark.parametrize("players", [2, 3])
def test_kozel_for_two_or_three_never_draws_the_last_bazaar_tile(monkeypatch, tmp_path, players):
    protocol_says("the last tile of the bazaar is never drawn. `bazaar` (in `deal` and `turn`) still counts it", page="line")
    lowest = None
    for seed in range(6):
        for bot in play_recorded(monkeypatch, tmp_path, "kozel", players, {}, None, seed):
            bazaar = 0
            for msg in messages(bot):
                if msg["type"] == "deal":
                    bazaar = msg["bazaar"]
                elif msg["type"] == "drew":
                    bazaar -= msg["count"]
                    assert bazaar >= 1, msg
                    lowest = bazaar if lowest is None else min(lowest, bazaar)
    assert lowest == 1  # the draws did reach the kept tile


def test_the_two_processes_of_a_pair_share_one_time_bank(monkeypatch, tmp_path):
    protocol_says("the two processes draw on **one shared time bank**",
                  "in pair games its two processes share one bank")
    bots = play_recorded(monkeypatch, tmp_path, "sport", 4, {}, None, 3, tc=TimeControl(startup=5, move=5, bank=60))
    assert len(bots) == 4
    pair_a = sorted((order, turn["bank_ms"]) for bot in bots if seat_of(bot) in (0, 2)
                    for order, turn in zip(bot.turn_order, (m for m in messages(bot) if m["type"] == "turn")))
    banks = [bank for _, bank in pair_a]
    assert banks[0] == 60000 and all(b < 60000 for b in banks[1:])  # the partner's first turn shows the bank used
    assert banks == sorted(banks, reverse=True)  # one bank, drawn down by both processes


def test_on_off_options_arrive_as_json_booleans(monkeypatch, tmp_path):
    protocol_says("On/off options are JSON booleans here (`\"lone_doubles\":false`), although the command line and "
                  "league files write them `on`/`off`")
    bot = play_recorded(monkeypatch, tmp_path, "draw", 2, {"lone_doubles": "on"}, None, 1)[0]
    deal = next(line for line in bytes(bot.received).splitlines() if line.startswith(b'{"type":"deal"'))
    assert b'"lone_doubles":true' in deal


def test_the_lower_half_of_a_lead_goes_left_whatever_order_is_sent(monkeypatch, tmp_path):
    protocol_says("The lower half of a lead always goes left, whatever order you send")
    bots = play_recorded(monkeypatch, tmp_path, "sport", 4, {}, None, 5, reverse_leads=True)
    leads = [m for bot in bots for m in messages(bot) if m["type"] == "placed" and m["end"] is None]
    assert leads and all(m["tile"][0] <= m["tile"][1] for m in leads)
    for bot in bots:
        seen = messages(bot)
        for i, msg in enumerate(seen):
            if msg["type"] == "placed" and msg["end"] is None and not msg["forced"]:
                turn = next((m for m in seen[i:] if m["type"] == "turn"), None)
                placed_since = [m for m in seen[i + 1 : seen.index(turn)] if m["type"] == "placed"] if turn else [None]
                if turn is not None and not placed_since:
                    assert turn["ends"] == {"left": msg["tile"][0], "right": msg["tile"][1]}


def test_a_game_check_stops_early_ends_with_no_winner_and_says_why(tmp_path):
    protocol_says("`winners` and `losers` are both empty (as for a drawn game), `totals` are the totals so far, and "
                  "`reason` is `\"deal limit (4) reached\"`")
    result = cli("check", FIRST, "-v", "block", "--deals", "1", "--log-dir", str(tmp_path / "logs"))
    assert result.exit_code == X.OK, result.stdout
    ends = [m for _, r in read_log(tmp_path / "logs" / "block-2.jsonl") if r["k"] == "out"
            for m in r["msgs"] if m["type"] == "game_end"]
    assert ends
    for end in ends:
        assert end["winners"] == [] and end["losers"] == []
        assert end["reason"] == "deal limit (1) reached"


@pytest.mark.slow
def test_reading_the_batched_events_counts_against_the_move(monkeypatch, tmp_path):
    protocol_says("reading and parsing them counts against that move's clock")
    # Bots that spend 20 ms reading each batch (events and turn, one write): every move costs
    # the bank at least that, although each answer is ready the moment the batch is read.
    bots = play_recorded(monkeypatch, tmp_path, "block", 2, {}, None, 2, tc=TimeControl(startup=5, move=5, bank=60),
                         slow_read=0.02)
    for bot in bots:
        banks = [m["bank_ms"] for m in messages(bot) if m["type"] == "turn"]
        assert len(banks) > 3
        assert all(later <= earlier - 20 for earlier, later in zip(banks, banks[1:])), banks


def test_every_message_to_a_bot_is_in_the_log_the_closing_ones_too(tmp_path):
    protocol_says("each process's last `game_end` and the `match_end` are an `out` record with `\"seat\":-1` and the "
                  "process's label in `bot`")
    log = tmp_path / "m.jsonl"
    res = cli("match", FIRST, FIRST, "--variant", "block", "--players", "2", "--games", "2", "--log", str(log), "-q")
    assert res.exit_code == X.OK, res.output
    outs = [r for _, r in read_log(log) if r["k"] == "out"]
    sent = [m["type"] for r in outs for m in r["msgs"]]
    games = sum(1 for _, r in read_log(log) if r["k"] == "game_end")
    assert games == 4 and sent.count("game_end") == 2 * games  # every game's end, to both bots of its seating
    closing = [r for r in outs if r["seat"] == -1]
    # every game in every seating has processes of its own, each closed as its game ends
    assert sorted(r["bot"] for r in closing) == sorted(2 * ["first_bot", "first_bot@1", "first_bot_2", "first_bot_2@1"])
    assert all([m["type"] for m in r["msgs"]] == ["game_end", "match_end"] for r in closing)
    assert sent.count("match_end") == 8


RECORDER = """\
import json, os, sys

seen = open(sys.argv[1], "a")
for line in sys.stdin:
    msg = json.loads(line)
    seen.write(f"{os.getpid()} {msg['type']}\\n")
    seen.flush()
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "recorder", "protocol": 1}), flush=True)
    elif msg["type"] == "turn":
        print(json.dumps({"type": "play", **msg["legal"][0]}), flush=True)
    elif msg["type"] == "match_end":
        break
"""


@pytest.mark.parametrize(("variant", "args"), [("sport", ["--deals", "4"]), ("mexican_train", ["--players", "2"]),
                                               ("block", ["--players", "2"])])
def test_every_game_ends_with_a_game_end_sent_to_each_bot(tmp_path, variant, args):
    """Games of a fixed number of deals too (sport and mexican_train once sent none)."""
    protocol_says("`game_end` after the last deal of each game")
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER, encoding="utf-8")
    seen = [tmp_path / "a.txt", tmp_path / "b.txt"]
    bots = [f"python3 {script} {path}" for path in seen]
    log = tmp_path / "m.jsonl"
    res = cli("match", *bots, "--variant", variant, *args, "--log", str(log), "-q")
    assert res.exit_code == X.OK, res.output
    games = sum(1 for _, r in read_log(log) if r["k"] == "game_end")
    seatings = len(next(r for _, r in read_log(log) if r["k"] == "match")["orientations"])
    assert games >= 2  # one per orientation at least
    for path in seen:
        processes: dict[str, list[str]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            pid, kind = line.split()
            processes.setdefault(pid, []).append(kind)
        assert processes
        for got in processes.values():  # each process of a bot (two in a pair game) sits in every game of its seating
            assert got[-2:] == ["game_end", "match_end"]  # the last game's end, then the match's
            assert got.count("game_end") == games // seatings
            assert all(got[i - 1] in ("deal_end", "game_end") for i, kind in enumerate(got) if kind == "game_end")


def test_the_check_example_counts_the_games_check_plays(tmp_path):
    """PROTOCOL.md's check transcript names how many games a default check plays; a new game or
    staged position changes the count, and the example must follow."""
    result = cli("check", FIRST, "--seed", "1", "--log-dir", str(tmp_path / "logs"))
    assert result.exit_code == X.OK, result.stdout
    verdict = result.stdout.strip().splitlines()[-1]
    assert verdict.startswith("PASS: ")
    protocol_says(f"`{verdict}`")
    games = verdict.split()[1]
    protocol_says(f"referee check mybot: {games} games, 4 deals in each seating")


def _turns_and_events(monkeypatch, tmp_path, vid: str, players: int, seeds: range) -> list[dict]:
    """Every message every bot received in seeded games of ``vid`` played through the table."""
    seen: list[dict] = []
    for seed in seeds:
        for bot in play_recorded(monkeypatch, tmp_path / f"{vid}-{seed}", vid, players, {}, None, seed):
            seen += messages(bot)
    return seen


@pytest.mark.parametrize(("vid", "stop"), [("sea_kozel", True), ("general", True), ("blitz", False)])
def test_continuing_and_stop_are_sent_in_the_games_the_tables_name(monkeypatch, tmp_path, vid, stop):
    protocol_says("| `continuing` | true | osel, sea_kozel, general and blitz: present when you are going on with a turn you began",
                  "| `stop` | true | optional, osel, sea_kozel and general, where `turn.legal` offers it")
    turns = [x for x in _turns_and_events(monkeypatch, tmp_path, vid, 4, range(1, 9)) if x["type"] == "turn"]
    going_on = [t for t in turns if t.get("continuing")]
    assert going_on, f"no turn going on in {len(turns)} turns of {vid}"
    stops = [t for t in turns if any(o.get("stop") for o in t["legal"])]
    assert bool(stops) == stop
    assert all(t.get("continuing") for t in stops)  # a stop ends a turn that is going on


def test_placed_says_closed_for_a_double_laid_closed(monkeypatch, tmp_path):
    protocol_says("| `closed` | true | osel only: present when the double was laid closed")
    seen = _turns_and_events(monkeypatch, tmp_path, "osel", 4, range(1, 9))
    closed = [x for x in seen if x["type"] == "placed" and x.get("closed")]
    assert closed and all(x["closed"] is True and x["tile"][0] == x["tile"][1] for x in closed)
    assert all("closed" not in x for x in seen if x["type"] == "placed" and x not in closed)


def test_only_the_write_off_decision_carries_held(monkeypatch, tmp_path):
    protocol_says("That turn's `held` gives each side's total, by side, as the rules count the hands", page="sea_kozel")
    turns = [x for x in _turns_and_events(monkeypatch, tmp_path, "sea_kozel", 2, range(1, 13)) if x["type"] == "turn"]
    decisions = [t for t in turns if any(o.get("declare") == "write_off" for o in t["legal"])]
    assert decisions, "no write-off decision in these games"
    assert all(len(t["held"]) == 2 for t in decisions)
    assert all("held" not in t for t in turns if t not in decisions)


def test_two_bots_at_four_seats_of_individuals_alternate_and_each_seat_plays_for_itself(tmp_path):
    protocol_says("bot A in seats 0 and 2, bot B in 1 and 3, then the same deals again with A and B swapped",
                  "Each seat plays for itself (`deal.side` is your seat, `deal.partner` is null")
    log, out = tmp_path / "m.jsonl", tmp_path / "r.json"
    greedy = str(ROOT / "sample_bots" / "greedy_bot.py")
    res = cli("match", greedy, FIRST, "--variant", "muggins", "--players", "4", "--log", str(log),
                                   "--json", str(out))
    assert res.exit_code == X.OK, res.output
    result = json.loads(out.read_text())
    assert result["orientations"] == [[0, 1, 0, 1], [1, 0, 1, 0]]
    deals = [msg for _, r in read_log(log) if r["k"] == "out" for msg in r["msgs"] if msg["type"] == "deal"]
    assert {msg["seat"] for msg in deals} == {0, 1, 2, 3}
    assert all(msg["side"] == msg["seat"] and msg["partner"] is None and len(msg["scores"]) == 4 for msg in deals)
    hellos = {r["bot"] for _, r in read_log(log) if r["k"] == "hello"}
    assert {"greedy_bot", "greedy_bot#1", "first_bot", "first_bot#1"} <= hellos  # a process per seat
    # the bot's points are its two seats' together
    for d in result["deals"]:
        seating = result["orientations"][d["orientation"]]
        assert d["points"] == [sum(w for s, w in enumerate(d["wrote"]) if seating[s] == b) for b in range(2)]


@pytest.mark.parametrize("vid, players", [("muggins", 3), ("kozel", 4)])
def test_a_drawn_game_end_names_no_losers(vid, players):
    protocol_says("| `losers` | array of integer | the losing sides; empty for a drawn game")
    from referee.engine import variant
    from referee.sides.base import game_end
    from tests.engine.test_games_cross import deal_with
    from tests.engine.test_games_kozel import end_deal, worth

    game = variant(vid).new_game(players, {"fish": "each_writes_own"} if vid == "kozel" else {})
    if vid == "muggins":  # two seats tie for the highest past 200, the third is under it
        game.totals[:] = [200, 210, 150]
        end_deal(game, {1: ("0-1",), 2: ("0-2",)}, "domino", 0, deal_with(3, 5, s0=("0-0",)))
    else:  # both pairs past 101 in one fish, each writing its own hands
        game.totals[:] = [90, 90]
        end_deal(game, {0: worth(20), 1: worth(20)}, "fish", 0)
    end = msgspec.to_builtins(game_end(game.outcome()))
    assert end["winners"] == [] and end["losers"] == [], end
