"""``referee verify`` is not fooled: logs of real matches, each changed one way, must be found out
(exit 4, naming the line), and a log cut short is incomplete, never consistent.

``verify`` plays the match again with the referee itself and compares every line
(:mod:`referee.audit.verify`), so every edit below that changes what happened is caught wherever it
is: the header's settings and seed, a process start, a message sent, a line read or its time, a
play, a fault and its evidence, a forfeit, a deal or game result, an SPRT record, the stop, the
result; in sport, kozel, sea_kozel (special states), osel (closed doubles, stops), mexican_train
(trains), kolbasa (places), a match from a deal file and a staged opening.  Each edit rewrites
only the lines it changes; every other line keeps its bytes.

The logs are played once per module (real bot processes); every test changes a copy.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.commands import cli

from referee.base import exitcodes as X
from referee.conversation.house import BotSource

pytestmark = pytest.mark.slow  # plays a dozen matches with real processes

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots"
HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots" / "hostile.py"
GREEDY, FIRST = BOTS / "greedy_bot.py", BOTS / "first_bot.py"
RANDOM = f"{BOTS / 'random_bot.py'} 7"  # seeded: every run the same moves, so the same special deals and decisions


def hostile(state: Path, behaviour: str, **opts: object) -> str:
    state.mkdir(exist_ok=True)
    return " ".join([sys.executable, str(HOSTILE), behaviour, str(state), *(f"{k}={v}" for k, v in opts.items())])


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("logs")
    deals = out / "deals.jsonl"
    assert cli("deals", "generate", "--variant", "sport", "--seed", "5", "--count", "8", "--output", deals).exit_code == 0
    plays = {
        "illegal": [hostile(out / "s1", "no_fit", every=1), GREEDY, "--deals", "8"],
        "forfeit": [hostile(out / "s2", "garbage", every=1, deal=0), FIRST, "--deals", "8"],
        "timeout": [hostile(out / "s3", "silent", deal=0), FIRST, "--deals", "4", "--move-time", "0.3"],
        "crash": [hostile(out / "s4", "exit", deal=0), FIRST, "--deals", "4"],
        "kozel": [GREEDY, RANDOM, "--variant", "kozel", "--games", "1"],
        "file": [GREEDY, FIRST, "--deals-file", deals, "--deals", "8"],
        "sprt": [GREEDY, RANDOM, "--deals", "200", "--sprt", "margin0=0 margin1=10"],
        "sea_kozel": [GREEDY, RANDOM, "--variant", "sea_kozel", "--games", "1"],
        "osel": [GREEDY, RANDOM, "--variant", "osel", "--games", "1"],
        "trains": [GREEDY, RANDOM, FIRST, "--variant", "mexican_train"],
        "kolbasa": [GREEDY, RANDOM, "--variant", "kolbasa", "--games", "1"],
        "bank": [GREEDY, RANDOM, "--variant", "draw", "--games", "1", "--bank", "30", "--increment", "0.5"],
    }
    paths = {}
    for name, args in plays.items():
        paths[name] = out / f"{name}.jsonl"
        played = cli("match", *args, "--seed", "7", "--log", paths[name], "-q")
        assert played.exit_code == 0, played.output
        checked = cli("verify", paths[name])
        assert checked.exit_code == 0, checked.output
    paths["staged"] = staged_log(out / "staged.jsonl")
    return paths


def staged_log(path: Path) -> Path:
    """A sea_kozel match whose games begin with a staged opening (as ``referee check`` plays
    them), with scripted bots under trio's mock clock."""
    import trio
    import trio.testing

    from referee.bots.bot import Bot
    from referee.bots.transport import scripted
    from referee.engine import variant
    from referee.matches.match import DealStream, run_match
    from referee.matches.spec import MatchSpec
    from referee.matches.staging import STAGES, find_opening

    v = variant("sea_kozel")
    opts = v.resolve_options(2)
    stage = next(s for s in STAGES["sea_kozel"] if s.name == "hundred")
    stream = DealStream(v.shape(2, opts), 2, None, None)
    opening = find_opening(v, 2, opts, None, stream.__getitem__, stage, 2)
    assert opening is not None
    spec = MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], 2, opts, games=1, seed=2, log_path=path, stderr_dir=path.with_suffix(".err"),
                     deal_limit=opening.deal + 1, opening=opening.moves)
    launch, _ = scripted({})
    trio.run(lambda: run_match(spec, BotSource(launch), handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0))
    assert cli("verify", path).exit_code == 0
    return path


class Log:
    """A log's lines, each as its bytes and its record; an edit changes records, and only the
    lines whose record changed are written anew."""

    def __init__(self, path: Path) -> None:
        self.raw = path.read_bytes().splitlines(keepends=True)
        self.recs = [json.loads(line) for line in self.raw]
        self._orig = [json.dumps(r, sort_keys=True) for r in self.recs]

    def index(self, kind: str, n: int = 0, **match: object) -> int:
        found = [i for i, r in enumerate(self.recs) if r["k"] == kind and all(r.get(k) == v for k, v in match.items())]
        assert len(found) > n, f"no {kind} record {n} with {match}"
        return found[n]

    def write(self, path: Path) -> Path:
        out = []
        for i, rec in enumerate(self.recs):
            if i < len(self._orig) and self.raw[i] is not None and json.dumps(rec, sort_keys=True) == self._orig[i]:
                out.append(self.raw[i])
            else:
                out.append(json.dumps(rec, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
        path.write_bytes(b"".join(out))
        return path

    def delete(self, i: int) -> None:
        del self.recs[i], self.raw[i], self._orig[i]

    def insert(self, i: int, rec: dict) -> None:
        self.recs.insert(i, json.loads(json.dumps(rec)))
        self.raw.insert(i, None)
        self._orig.insert(i, "")


def turn_of(log: Log, n: int = 0) -> tuple[int, dict]:
    """The ``n``-th out record that asks for a play, and the turn in it."""
    found = [(i, r["msgs"][-1]) for i, r in enumerate(log.recs) if r["k"] == "out" and r["msgs"][-1]["type"] == "turn"]
    return found[n]


def answer_after(log: Log, i: int) -> int:
    return next(j for j in range(i + 1, len(log.recs)) if log.recs[j]["k"] == "in")


# Each edit: (log, what it does to the records, words the verdict must hold, expected exit word).
Edit = Callable[[Log], None]


def e_seed(lg: Log) -> None:
    lg.recs[0]["seed"] += 1


def e_derivation(lg: Log) -> None:
    lg.recs[0]["deals_from"] = "splitmix64"


def e_derivation_unknown(lg: Log) -> None:
    lg.recs[0]["deals_from"] = "md5"


def e_derivation_removed(lg: Log) -> None:  # read as splitmix64, as a format-1 header
    del lg.recs[0]["deals_from"]


def e_move_time(lg: Log) -> None:
    lg.recs[0]["time_control"]["move"] = 6.0


def e_startup_time(lg: Log) -> None:
    lg.recs[0]["time_control"]["startup"] = 20.0


def e_max_faults(lg: Log) -> None:  # the bot forfeited after 3: with 10 it would have played on
    lg.recs[0]["max_faults"] = 10


def e_max_line(lg: Log) -> None:
    lg.recs[0]["max_line"] = 1 << 20


def e_sprt_bound(lg: Log) -> None:
    lg.recs[0]["sprt"]["h1"] = 12.0


def e_bot_renamed(lg: Log) -> None:
    lg.recs[0]["bots"][0]["name"] = "someone"


def e_orientations(lg: Log) -> None:
    lg.recs[0]["orientations"].reverse()


def e_option(lg: Log) -> None:
    opts = lg.recs[0]["options"]
    opts["rule13"] = "hang" if opts.get("rule13") != "hang" else "drop"


def e_confidence(lg: Log) -> None:
    lg.recs[0]["confidence"] = 0.9


def e_deal_limit(lg: Log) -> None:
    lg.recs[0]["deal_limit"] = 1


def e_format_1(lg: Log) -> None:
    lg.recs[0]["format"] = 1


def e_absurd_time(lg: Log) -> None:
    lg.recs[0]["time_control"]["move"] = 1e308


def e_hello_answer(lg: Log) -> None:  # the answer made another protocol's
    h = lg.recs[lg.index("hello")]
    h["read"][-1]["line"] = h["read"][-1]["line"].replace('"protocol": 1', '"protocol": 2', 1)


def e_hello_limits(lg: Log) -> None:
    lg.recs[lg.index("hello")]["limits"]["move_ms"] = 1


def e_hello_late(lg: Log) -> None:  # the answer moved past the start-up limit
    h = lg.recs[lg.index("hello")]
    h["read"][-1]["t"] = h["t"] + 11.0
    h["ms"] = 11000.0


def e_hello_removed(lg: Log) -> None:
    lg.delete(lg.index("hello", 1))


def e_hello_twice(lg: Log) -> None:
    i = lg.index("hello")
    lg.insert(i + 1, lg.recs[i])


def e_hand_sent(lg: Log) -> None:  # a hand changed in a message sent to a bot
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "out" and r["msgs"][0]["type"] == "deal")
    hand = lg.recs[i]["msgs"][0]["hand"]
    hand[0], hand[1] = hand[1], [6, 6] if hand[0] != [6, 6] else [0, 0]


def e_legal_sent(lg: Log) -> None:
    i, t = turn_of(lg, 3)
    t["legal"] = t["legal"][1:] or t["legal"] + t["legal"]


def e_time_sent(lg: Log) -> None:
    _, t = turn_of(lg, 2)
    t["time_ms"] = 4000


def e_out_removed(lg: Log) -> None:
    lg.delete(turn_of(lg, 4)[0])


def e_out_twice(lg: Log) -> None:
    i, _ = turn_of(lg, 4)
    lg.insert(i + 1, lg.recs[i])


def e_out_seat(lg: Log) -> None:
    i, _ = turn_of(lg, 4)
    lg.recs[i]["seat"] = (lg.recs[i]["seat"] + 1) % 2


def e_in_other_play(lg: Log) -> None:  # the line read replaced by another legal play, the play record to match
    for n in range(40):
        i, t = turn_of(lg, n)
        j = answer_after(lg, i)
        sent = json.loads(lg.recs[j]["line"])
        others = [o for o in t["legal"] if (o["tile"], o["end"]) != (sent["tile"], sent["end"])]
        if others:
            other = others[0]
            lg.recs[j]["line"] = json.dumps({"type": "play", **other})
            p = next(k for k in range(j, len(lg.recs)) if lg.recs[k]["k"] == "play")
            lg.recs[p]["tile"], lg.recs[p]["end"] = other["tile"], other["end"]
            return
    raise AssertionError("no turn with a choice")


def e_in_twice(lg: Log) -> None:
    j = answer_after(lg, turn_of(lg, 5)[0])
    lg.insert(j + 1, lg.recs[j])


def e_in_removed(lg: Log) -> None:
    lg.delete(answer_after(lg, turn_of(lg, 5)[0]))


def e_in_late(lg: Log) -> None:  # the answer's time moved past the move limit
    i, t = turn_of(lg, 5)
    j = answer_after(lg, i)
    lg.recs[j]["t"] = lg.recs[i]["t"] + t["time_ms"] / 1000 + 0.5


def e_in_garbled(lg: Log) -> None:
    j = answer_after(lg, turn_of(lg, 5)[0])
    lg.recs[j]["line"] = lg.recs[j]["line"][:-1]


def e_play_tile(lg: Log) -> None:
    i = lg.index("play", 3)
    lg.recs[i]["tile"] = [6, 6] if lg.recs[i]["tile"] != [6, 6] else [0, 0]


def e_play_removed(lg: Log) -> None:
    lg.delete(lg.index("play", 3))


def e_play_ms(lg: Log) -> None:
    lg.recs[lg.index("play", 3)]["ms"] += 1.0


def e_play_words(lg: Log) -> None:
    lg.recs[lg.index("play", 3)]["as"] = "a fine move"


def e_play_staged(lg: Log) -> None:  # a bot's answer passed off as a move of the staged opening
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "play" and not r.get("staged"))
    lg.recs[i]["staged"] = True
    lg.recs[i].pop("ms", None)


def e_unstaged(lg: Log) -> None:  # a staged move passed off as a bot's answer
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "play" and r.get("staged"))
    del lg.recs[i]["staged"]


def e_fault_kind(lg: Log) -> None:
    lg.recs[lg.index("fault")]["kind"] = "timeout"


def e_timeout_crash(lg: Log) -> None:
    lg.recs[lg.index("fault")]["kind"] = "crash"


def e_fault_detail(lg: Log) -> None:
    lg.recs[lg.index("fault")]["detail"] = "it was fine"


def e_fault_removed(lg: Log) -> None:
    lg.delete(lg.index("fault"))


def e_fault_exit(lg: Log) -> None:  # the evidence: another exit status
    f = lg.recs[lg.index("fault")]
    f["exit"]["status"] = 0


def e_fault_no_exit(lg: Log) -> None:  # a crash without the evidence of one
    del lg.recs[lg.index("fault")]["exit"]


def e_forfeit_removed(lg: Log) -> None:
    lg.delete(lg.index("forfeit"))


def e_forfeited_deal_removed(lg: Log) -> None:
    lg.delete(lg.index("forfeited_deal"))


def e_deal_hands(lg: Log) -> None:
    d = lg.recs[lg.index("deal")]
    d["hands"][0], d["hands"][1] = d["hands"][1], d["hands"][0]


def e_deal_stream(lg: Log) -> None:
    lg.recs[lg.index("deal", 1)]["stream"] += 5


def e_deal_end_wrote(lg: Log) -> None:
    d = lg.recs[lg.index("deal_end")]
    d["wrote"] = list(reversed(d["wrote"])) if len(set(d["wrote"])) > 1 else [w + 1 for w in d["wrote"]]


def e_deal_end_removed(lg: Log) -> None:
    lg.delete(lg.index("deal_end"))


def e_game_end_winners(lg: Log) -> None:
    g = lg.recs[lg.index("game_end")]
    g["winners"], g["losers"] = g["losers"], g["winners"]


def e_game_seating(lg: Log) -> None:
    g = lg.recs[lg.index("game")]
    g["seating"] = list(reversed(g["seating"]))


def e_special_removed(lg: Log) -> None:
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "deal" and r.get("special"))
    del lg.recs[i]["special"]


def e_rule_changed(lg: Log) -> None:
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "deal_end" and r.get("rule"))
    lg.recs[i]["rule"] = "a rule of my own"


def e_sprt_llr(lg: Log) -> None:
    lg.recs[lg.index("sprt", 2)]["llr"] += 0.5


def e_sprt_early(lg: Log) -> None:  # an early decision
    lg.recs[lg.index("sprt", 2)]["decision"] = "H1"


def e_stop_flipped(lg: Log) -> None:  # H1 turned into H0
    s = lg.recs[lg.index("stop")]
    s["decision"] = "H0" if s["decision"] == "H1" else "H1"


def e_sprt_removed(lg: Log) -> None:
    lg.delete(lg.index("sprt", 1))


def e_stop_removed(lg: Log) -> None:
    lg.delete(lg.index("stop"))


def e_result_winner(lg: Log) -> None:
    r = lg.recs[-1]
    names = [b["name"] for b in r["bots"]]
    r["winner"] = next(n for n in names if n != r.get("winner"))


def e_result_totals(lg: Log) -> None:
    lg.recs[-1]["totals"][0]["points"] += 1


def e_result_faults(lg: Log) -> None:
    lg.recs[-1]["faults"] = lg.recs[-1]["faults"][1:]


def e_train(lg: Log) -> None:
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "play" and r.get("train") == "mexican")
    lg.recs[i]["train"] = "seat0"


def e_place(lg: Log) -> None:
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "play" and r.get("place") in ("top", "bottom"))
    lg.recs[i]["place"] = "bottom" if lg.recs[i]["place"] == "top" else "top"


def e_closed(lg: Log) -> None:
    i = next(i for i, r in enumerate(lg.recs) if r["k"] == "play" and r["tile"] and r["tile"][0] == r["tile"][1] and r["end"])
    lg.recs[i]["closed"] = not lg.recs[i].get("closed", False)


def e_bank(lg: Log) -> None:
    _, t = turn_of(lg, 6)
    t["bank_ms"] += 1000


def e_extra_result(lg: Log) -> None:
    lg.insert(len(lg.recs), lg.recs[-1])


def e_players_raised(lg: Log) -> None:  # a two-bot draw said to have 3 players (a traceback once)
    lg.recs[0]["players"] = 3


def e_players_and_seatings(lg: Log) -> None:  # 3 players, and seatings of 3 seats to go with them
    lg.recs[0]["players"] = 3
    lg.recs[0]["orientations"] = [[0, 1, 0], [1, 0, 1]]


def e_sprt_unknown_key(lg: Log) -> None:
    lg.recs[0]["sprt"]["model"] = "whatever"


def e_sha_removed(lg: Log) -> None:  # the deal file's SHA-256: verify could not tell the file is the one played
    del lg.recs[0]["deals_file_sha256"]


EDITS: list[tuple[str, str, Edit]] = [
    ("illegal", "header: the seed", e_seed),
    ("illegal", "header: the derivation of deals", e_derivation),
    ("illegal", "header: a derivation unknown", e_derivation_unknown),
    ("illegal", "header: the derivation removed", e_derivation_removed),
    ("illegal", "header: the move time", e_move_time),
    ("illegal", "header: the start-up time", e_startup_time),
    ("forfeit", "header: max_faults raised past the forfeit", e_max_faults),
    ("illegal", "header: max_line", e_max_line),
    ("sprt", "header: the SPRT's H1", e_sprt_bound),
    ("kozel", "header: a bot's name", e_bot_renamed),
    ("kozel", "header: the orientations", e_orientations),
    ("kozel", "header: a game option", e_option),
    ("kozel", "header: the confidence", e_confidence),
    ("kozel", "header: a deal limit", e_deal_limit),
    ("illegal", "header: passed off as format 1", e_format_1),
    ("illegal", "header: an absurd move time", e_absurd_time),
    ("kozel", "hello: the answer", e_hello_answer),
    ("kozel", "hello: the limits told", e_hello_limits),
    ("kozel", "hello: the answer made late", e_hello_late),
    ("kozel", "hello: a start removed", e_hello_removed),
    ("kozel", "hello: a start twice", e_hello_twice),
    ("kozel", "out: a hand sent", e_hand_sent),
    ("kozel", "out: the legal plays sent", e_legal_sent),
    ("kozel", "out: the time a turn offered", e_time_sent),
    ("kozel", "out: a turn removed", e_out_removed),
    ("kozel", "out: a turn twice", e_out_twice),
    ("kozel", "out: a turn's seat", e_out_seat),
    ("kozel", "in: another legal play, and the play to match", e_in_other_play),
    ("kozel", "in: a line twice", e_in_twice),
    ("kozel", "in: a line removed", e_in_removed),
    ("kozel", "in: an answer made late", e_in_late),
    ("kozel", "in: an answer garbled", e_in_garbled),
    ("kozel", "play: the tile", e_play_tile),
    ("kozel", "play: removed", e_play_removed),
    ("kozel", "play: the time taken", e_play_ms),
    ("kozel", "play: the words", e_play_words),
    ("staged", "play: a bot's answer passed off as staged", e_play_staged),
    ("staged", "play: a staged move passed off as a bot's", e_unstaged),
    ("illegal", "fault: the kind", e_fault_kind),
    ("illegal", "fault: the detail", e_fault_detail),
    ("illegal", "fault: removed", e_fault_removed),
    ("crash", "fault: the exit status seen", e_fault_exit),
    ("crash", "fault: a crash without its evidence", e_fault_no_exit),
    ("timeout", "fault: a timeout called a crash", e_timeout_crash),
    ("forfeit", "forfeit: removed", e_forfeit_removed),
    ("forfeit", "forfeited_deal: removed", e_forfeited_deal_removed),
    ("kozel", "deal: hands swapped", e_deal_hands),
    ("kozel", "deal: the stream index", e_deal_stream),
    ("kozel", "deal_end: what was written", e_deal_end_wrote),
    ("kozel", "deal_end: removed", e_deal_end_removed),
    ("kozel", "game_end: winners and losers swapped", e_game_end_winners),
    ("kozel", "game: the seating", e_game_seating),
    ("sea_kozel", "deal: the special state dropped", e_special_removed),
    ("sea_kozel", "deal_end: the rule", e_rule_changed),
    ("sprt", "sprt: an LLR", e_sprt_llr),
    ("sprt", "sprt: an early decision", e_sprt_early),
    ("sprt", "stop: the decision flipped", e_stop_flipped),
    ("sprt", "sprt: a record removed", e_sprt_removed),
    ("sprt", "stop: removed", e_stop_removed),
    ("kozel", "result: the winner", e_result_winner),
    ("kozel", "result: the totals", e_result_totals),
    ("illegal", "result: a fault removed", e_result_faults),
    ("trains", "play: the train", e_train),
    ("kolbasa", "play: the place", e_place),
    ("osel", "play: a double closed or opened", e_closed),
    ("bank", "out: the bank told", e_bank),
    ("file", "deal: hands swapped in a deal-file match", e_deal_hands),
    ("kozel", "a second result", e_extra_result),
    ("bank", "header: players raised past the bots", e_players_raised),
    ("bank", "header: players raised, and seatings to fit", e_players_and_seatings),
    ("sprt", "header: an unknown key in the SPRT", e_sprt_unknown_key),
    ("file", "header: the deal file's SHA-256 removed", e_sha_removed),
]


def test_the_suite_has_forty_distinct_edits():
    assert len({(log, what) for log, what, _ in EDITS}) == len(EDITS) >= 40


@pytest.mark.parametrize("log_name, what, edit", EDITS, ids=[f"{log}: {what}" for log, what, _ in EDITS])
def test_an_edited_log_is_found_out(logs, tmp_path, log_name, what, edit):
    lg = Log(logs[log_name])
    edit(lg)
    path = lg.write(tmp_path / "edited.jsonl")
    assert path.read_bytes() != logs[log_name].read_bytes()
    result = cli("verify", path)
    text = " ".join(result.stderr.split())
    assert result.exit_code in (X.INCONSISTENT, X.USAGE), (result.exit_code, result.output)
    assert "consistent:" not in result.stdout
    if result.exit_code == X.INCONSISTENT:
        assert text.startswith(("INCONSISTENT: ", "INCOMPLETE: ")) and re.search(r"line \d+", text), text
    else:  # a record no log can hold (an absurd number, a field of the wrong type): refused in one line
        assert text.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1, text


@pytest.mark.parametrize("edit", [e_players_raised, e_players_and_seatings, e_sprt_unknown_key, e_sha_removed],
                         ids=lambda e: e.__name__)
@pytest.mark.parametrize("command", ["report", "replay"])
def test_a_header_that_contradicts_itself_is_refused_in_one_line(logs, tmp_path, edit, command):
    """``report`` and ``replay`` read the header as verify does: a header whose players do not fit
    its bots (an IndexError once, players 2 -> 4) or that no referee writes is one line, exit 2."""
    source = logs["sprt" if edit is e_sprt_unknown_key else "file" if edit is e_sha_removed else "bank"]
    lg = Log(source)
    edit(lg)
    path = lg.write(tmp_path / "edited.jsonl")
    args = [command, path] + (["--output", tmp_path / "site"] if command == "report" else [])
    result = cli(*args)
    assert result.exit_code == X.USAGE, result.output
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_header_with_players_raised_to_four_is_refused_by_report(logs, tmp_path):
    lg = Log(logs["bank"])
    lg.recs[0]["players"] = 4
    result = cli("report", lg.write(tmp_path / "edited.jsonl"), "--output", tmp_path / "site")
    assert result.exit_code == X.USAGE and "players is 4" in result.stderr, result.output


def test_a_line_rewritten_without_changing_what_it_says_still_verifies(logs, tmp_path):
    """The log is verified as data: spaces and the order of fields are not edits."""
    lines = logs["kozel"].read_bytes().splitlines()
    rec = json.loads(lines[5])
    lines[5] = json.dumps(dict(reversed(list(rec.items())))).encode()
    path = tmp_path / "spaced.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert cli("verify", path).exit_code == 0


# -- a log cut short ----------------------------------------------------------------------------------


def test_a_log_cut_before_its_result_is_incomplete(logs, tmp_path):
    lines = logs["illegal"].read_bytes().splitlines(keepends=True)[:-1]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines))
    result = cli("verify", path)
    assert result.exit_code == X.INCONSISTENT
    text = " ".join(result.stderr.split())
    assert text.startswith("INCOMPLETE: ") and f"consistent up to line {len(lines)}" in text and "INCONSISTENT" not in text


@pytest.mark.parametrize("where", [0.3, 0.77])
def test_a_log_cut_in_the_middle_of_a_record_is_incomplete(logs, tmp_path, where):
    data = logs["kozel"].read_bytes()
    cut = int(len(data) * where)
    while data[cut - 1:cut] == b"\n":
        cut += 1
    path = tmp_path / "t.jsonl"
    path.write_bytes(data[:cut])
    line = data[:cut].count(b"\n") + 1
    result = cli("verify", path)
    text = " ".join(result.stderr.split())
    assert result.exit_code == X.INCONSISTENT and text.startswith("INCOMPLETE: "), text
    assert f"line {line} is cut short" in text and f"consistent up to line {line - 1}" in text


def test_an_interrupted_match_is_incomplete_not_consistent(tmp_path):
    """A match stopped by Ctrl-C has no result record."""
    import os
    import signal
    import subprocess
    import time

    log = tmp_path / "stopped.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", str(GREEDY), str(RANDOM), "--deals", "4000", "--log", str(log), "-q"],
                            stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.stat().st_size > 50_000):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=60) == X.INTERRUPTED
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    result = cli("verify", log)
    assert result.exit_code == X.INCONSISTENT and "INCOMPLETE" in result.stderr and "consistent up to line" in " ".join(result.stderr.split())
