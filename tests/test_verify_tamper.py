"""``referee verify`` is not fooled: logs of real matches, each changed one way, must be found
out (exit 4), and a log cut short is incomplete, "consistent up to line N", never consistent.

The logs are played once per module (sport with a bot that plays illegally, so there are fault
records and their evidence; kozel, scored to a target, for the order of the deal stream; a match
from a deal file); every test changes a copy.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee import exitcodes as X
from referee.cli import app

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sample_bots"
HOSTILE = Path(__file__).resolve().parent / "hostile_bots" / "hostile.py"


def cli(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("logs")
    state = out / "state"
    state.mkdir()
    deals = out / "deals.jsonl"
    assert cli("deals", "generate", "--variant", "sport", "--count", "8", "--output", deals).exit_code == 0
    plays = {
        "sport": [f"{sys.executable} {HOSTILE} no_fit {state} every=1", BOTS / "greedy_bot.py", "--deals", "8"],
        "kozel": [BOTS / "greedy_bot.py", BOTS / "random_bot.py", "--variant", "kozel", "--games", "2"],
        "file": [BOTS / "greedy_bot.py", BOTS / "first_bot.py", "--deals-file", deals, "--deals", "8"],
    }
    paths = {}
    for name, args in plays.items():
        paths[name] = out / f"{name}.jsonl"
        played = cli("match", *args, "--log", paths[name], "-q")
        assert played.exit_code == 0, played.output
        assert cli("verify", paths[name]).exit_code == 0
    return paths


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    return path


def inconsistent(path: Path, *words: str) -> str:
    result = cli("verify", path)
    assert result.exit_code == X.INCONSISTENT, result.output
    text = " ".join(result.stderr.split())
    assert "consistent:" not in result.stdout
    for w in words:
        assert w in text, text
    return text


def first(recs: list[dict], kind: str, **match) -> int:
    return next(i for i, r in enumerate(recs) if r["k"] == kind and all(r.get(k) == v for k, v in match.items()))


# -- the result ---------------------------------------------------------------------------------------


def test_a_changed_winner(logs, tmp_path):
    recs = records(logs["sport"])
    result = recs[-1]
    names = [b["name"] for b in result["bots"]]
    result["winner"] = next(n for n in names if n != result["winner"])
    inconsistent(write(tmp_path / "t.jsonl", recs), "the result differs", "winner")


def test_changed_totals(logs, tmp_path):
    recs = records(logs["kozel"])
    recs[-1]["totals"][0]["points"] += 1
    inconsistent(write(tmp_path / "t.jsonl", recs), "the result differs", "totals")


def test_a_changed_deal_result(logs, tmp_path):
    recs = records(logs["sport"])
    end = first(recs, "deal_end")
    recs[end]["wrote"] = list(reversed(recs[end]["wrote"]))
    inconsistent(write(tmp_path / "t.jsonl", recs), "the deal's result differs")


# -- the deals ----------------------------------------------------------------------------------------


def test_a_changed_seed(logs, tmp_path):
    recs = records(logs["sport"])
    recs[0]["seed"] += 1
    inconsistent(write(tmp_path / "t.jsonl", recs), "the hands are not stream deal 0 of seed")


def test_hands_changed_consistently_are_not_the_seeds(logs, tmp_path):
    """Swapping two players' hands keeps every later record possible for the engine, but they
    are not the deal the seed gives."""
    recs = records(logs["kozel"])
    deal = first(recs, "deal")
    recs[deal]["hands"][0], recs[deal]["hands"][1] = recs[deal]["hands"][1], recs[deal]["hands"][0]
    inconsistent(write(tmp_path / "t.jsonl", recs), "are not stream deal")


def test_a_deal_out_of_the_streams_order(logs, tmp_path):
    recs = records(logs["kozel"])
    deals = [i for i, r in enumerate(recs) if r["k"] == "deal"]
    recs[deals[1]]["stream"] += 5
    inconsistent(write(tmp_path / "t.jsonl", recs), "the match takes stream deal")


def test_a_deal_file_that_is_gone(logs, tmp_path):
    recs = records(logs["file"])
    recs[0]["deals_file"] = str(tmp_path / "gone.jsonl")
    inconsistent(write(tmp_path / "t.jsonl", recs), "cannot regenerate the deals", "gone.jsonl")


def test_a_deal_file_changed_after_the_match(logs, tmp_path):
    recs = records(logs["file"])
    original = Path(recs[0]["deals_file"])
    changed = tmp_path / "changed.jsonl"
    lines = original.read_text(encoding="utf-8").splitlines()
    changed.write_text("\n".join(lines[1:] + lines[:1]) + "\n", encoding="utf-8")
    recs[0]["deals_file"] = str(changed)
    inconsistent(write(tmp_path / "t.jsonl", recs), "are not stream deal 0 of the deal file")


# -- faults -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bad_output", "timeout", "crash", "out_of_turn"])
def test_a_changed_fault_kind(logs, tmp_path, kind):
    """The illegal plays relabelled, in the fault records and in the result alike: the line each
    fault was for is a play the engine refuses, so they are illegal."""
    recs = records(logs["sport"])
    faults = [r for r in recs if r["k"] == "fault"]
    assert faults and all(f["kind"] == "illegal" for f in faults)
    for r in faults:
        r["kind"] = kind
    for f in recs[-1]["faults"]:
        f["kind"] = kind
    for row in recs[-1]["totals"]:
        if row["faults"]:
            row["faults"] = {kind: sum(row["faults"].values())}
    inconsistent(write(tmp_path / "t.jsonl", recs), f"the fault is '{kind}'", "makes it 'illegal'")


def test_a_fault_removed_from_the_result(logs, tmp_path):
    recs = records(logs["sport"])
    recs[-1]["faults"] = recs[-1]["faults"][1:]
    inconsistent(write(tmp_path / "t.jsonl", recs), "the result differs", "faults")


def test_an_unknown_fault_kind(logs, tmp_path):
    recs = records(logs["sport"])
    recs[first(recs, "fault")]["kind"] = "act_of_god"
    inconsistent(write(tmp_path / "t.jsonl", recs), "'act_of_god' is not a kind of fault")


# -- duplicated and missing records --------------------------------------------------------------------


def test_a_duplicated_deal_block(logs, tmp_path):
    recs = records(logs["sport"])
    start = first(recs, "deal")
    end = first(recs, "deal_end")
    recs[end + 1:end + 1] = recs[start:end + 1]
    inconsistent(write(tmp_path / "t.jsonl", recs), "comes where the engine is at deal 1")


def test_a_duplicated_game_end(logs, tmp_path):
    recs = records(logs["kozel"])
    end = first(recs, "game_end")
    recs.insert(end + 1, dict(recs[end]))
    inconsistent(write(tmp_path / "t.jsonl", recs), "ends twice")


def test_a_duplicated_result(logs, tmp_path):
    recs = records(logs["kozel"])
    recs.append(dict(recs[-1]))
    inconsistent(write(tmp_path / "t.jsonl", recs), "a record after the match's result")


def test_a_missing_play(logs, tmp_path):
    recs = records(logs["kozel"])
    del recs[first(recs, "play")]
    inconsistent(write(tmp_path / "t.jsonl", recs))


def test_a_missing_game_end(logs, tmp_path):
    recs = records(logs["kozel"])
    del recs[first(recs, "game_end")]
    inconsistent(write(tmp_path / "t.jsonl", recs), "the result differs")


# -- a log cut short ----------------------------------------------------------------------------------


def test_a_log_cut_before_its_result_is_incomplete(logs, tmp_path):
    recs = records(logs["sport"])[:-1]
    text = inconsistent(write(tmp_path / "t.jsonl", recs), "INCOMPLETE", f"consistent up to line {len(recs)}")
    assert "INCONSISTENT" not in text


@pytest.mark.parametrize("where", [0.3, 0.77])
def test_a_log_cut_in_the_middle_of_a_record_is_incomplete(logs, tmp_path, where):
    data = logs["kozel"].read_bytes()
    cut = int(len(data) * where)
    while data[cut - 1:cut] == b"\n":
        cut += 1
    path = tmp_path / "t.jsonl"
    path.write_bytes(data[:cut])
    line = data[:cut].count(b"\n") + 1
    inconsistent(path, "INCOMPLETE", f"line {line} is cut short", f"consistent up to line {line - 1}")


def test_an_interrupted_match_is_incomplete_not_consistent(tmp_path):
    """A match stopped by Ctrl-C has no result record."""
    import os
    import signal
    import subprocess
    import time

    log = tmp_path / "stopped.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", str(BOTS / "greedy_bot.py"), str(BOTS / "random_bot.py"),
                             "--deals", "4000", "--log", str(log), "-q"], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            start_new_session=True)
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
    inconsistent(log, "INCOMPLETE", "consistent up to line")
