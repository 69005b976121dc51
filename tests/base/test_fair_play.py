"""Fair play (PROTOCOL.md, "Fair play: what a bot can know"), attacked as a cheating bot would:

* it searches small seeds of both deal derivations for its first hand: in a default match (a
  fresh secret seed, keyed BLAKE2b) it finds nothing; with a seed a person typed it finds it,
  which is why leagues warn about short seeds;
* it keeps notes of every hand it is dealt, in memory and in every place it can write, and
  looks for its opponent's hand among them: no process plays a deal twice, so it never knows it;
* the seed is in the log's header and printed with the result, never in a message to a bot,
  and ``--seed`` with the printed seed plays the same deals again.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from support import needs_bwrap, read_log
from support.commands import cli

from referee.base.seeds import GUESSABLE_BITS, fresh_seed, guessable, parse_seed, seed_text
from referee.engine.core.shuffle import FRESH_BITS, keyed_tiles

ROOT = Path(__file__).resolve().parents[2]
FAIR = Path(__file__).resolve().parents[1] / "fair_bots"
FIRST = ROOT / "sample_bots" / "first_bot.py"


def stderr_of(folder: Path, stem: str) -> str:
    return "".join(p.read_text() for p in sorted(folder.glob(f"{stem}*.stderr.log")))


def searcher(tmp_path: Path, limit: int) -> str:
    # the bot imports the engine from the repository, as any Python bot could from an install
    bot = tmp_path / "searcher.py"
    bot.write_text(f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + (FAIR / "seed_searcher.py").read_text())
    return f"{sys.executable} {bot} {limit}"


@pytest.mark.slow
def test_a_bot_that_searches_seeds_learns_nothing_in_a_default_match(tmp_path):
    log = tmp_path / "m.jsonl"
    played = cli("match", searcher(tmp_path, 300), FIRST, "--deals", "4", "--log", log, "--name", "searcher", "--name", "first")
    assert played.exit_code == 0, played.output
    found = re.findall(r"SEED (FOUND|NONE)", stderr_of(tmp_path / "m.stderr", "searcher"))
    assert found and set(found) == {"NONE"}  # every process of the searcher looked, none found it
    header = next(r for _, r in read_log(log))
    assert header["deals_from"] == "blake2b-games" and header["seed"].bit_length() > GUESSABLE_BITS


@pytest.mark.slow
def test_a_seed_a_person_types_is_found_by_the_same_bot(tmp_path):
    """The control: the attack works when the seed is small, so the test above can fail."""
    log = tmp_path / "m.jsonl"
    played = cli("match", searcher(tmp_path, 300), FIRST, "--deals", "4", "--seed", "123", "--log", log, "--name", "searcher",
                 "--name", "first")
    assert played.exit_code == 0, played.output
    assert "SEED FOUND blake2b-games 123 0" in stderr_of(tmp_path / "m.stderr", "searcher")


@pytest.fixture(autouse=True)
def no_notes_left():
    """The note keeper run without the sandbox writes its notes where it can: clear them."""
    import os

    def clear() -> None:
        for place in {"/tmp", "/dev/shm", os.environ.get("HOME", "/tmp"), os.environ.get("TMPDIR", "/tmp")}:
            Path(place, "referee-fair-play-notes.jsonl").unlink(missing_ok=True)

    clear()
    yield
    clear()


def note_keeper(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    shutil.copy(FAIR / "note_keeper.py", folder / "note_keeper.py")
    (folder / "note_keeper.py").chmod(0o755)
    return folder / "note_keeper.py"


def knew(stderr: str) -> tuple[int, int]:
    pairs = [(int(a), int(b)) for a, b in re.findall(r"KNEW (\d+) OF (\d+)", stderr)]
    return sum(a for a, _ in pairs), sum(b for _, b in pairs)


@pytest.mark.slow
def test_a_bot_that_remembers_hands_never_knows_its_opponents(tmp_path):
    """Without the sandbox, notes in memory: each seating has processes of its own, so the hand
    the bot held in one seating is never in the memory of the process playing the other."""
    bot = note_keeper(tmp_path)
    log = tmp_path / "m.jsonl"
    played = cli("match", f"{sys.executable} {bot} memory", FIRST, "--variant", "block", "--games", "2", "--seed", "11", "--log", log,
                 "--name", "notes", "--name", "first")
    assert played.exit_code == 0, played.output
    known, deals = knew(stderr_of(tmp_path / "m.stderr", "notes"))
    assert deals >= 4 and known == 0


@pytest.mark.slow
def test_without_the_sandbox_notes_in_files_do_reach_the_other_seating(tmp_path):
    """What PROTOCOL.md says a bot can still do without the sandbox (and why leagues sandbox):
    the control for the sandboxed test below, which must see the notes stop."""
    bot = note_keeper(tmp_path)
    log = tmp_path / "m.jsonl"
    played = cli("match", f"{sys.executable} {bot}", FIRST, "--variant", "block", "--games", "2", "--seed", "11", "--log", log,
                 "--name", "notes", "--name", "first")
    assert played.exit_code == 0, played.output
    known, deals = knew(stderr_of(tmp_path / "m.stderr", "notes"))
    assert known > 0


@pytest.mark.slow
@needs_bwrap
def test_in_the_sandbox_notes_in_every_writable_place_reach_no_other_process(tmp_path):
    """The same bot in the sandbox, writing its notes to $TMPDIR, /tmp, $HOME, /dev/shm and its
    folder: none of them is shared with another process of the match (nor is its folder
    writable), so it never knows its opponent's hand."""
    bot = note_keeper(tmp_path)
    log = tmp_path / "m.jsonl"
    played = cli("match", f"{sys.executable} {bot}", FIRST, "--variant", "block", "--games", "2", "--seed", "11", "--log", log,
                 "--name", "notes", "--name", "first", "--sandbox")
    assert played.exit_code == 0, played.output
    stderr = stderr_of(tmp_path / "m.stderr", "notes")
    known, deals = knew(stderr)
    assert deals >= 4 and known == 0
    assert "WROTE" in stderr and str(bot.parent) not in stderr  # its own folder is read-only


def test_the_seed_is_in_the_header_and_the_result_never_in_a_message(tmp_path):
    log = tmp_path / "m.jsonl"
    played = cli("match", ROOT / "sample_bots" / "greedy_bot.py", FIRST, "--deals", "4", "--log", log)
    assert played.exit_code == 0, played.output
    records = [r for _, r in read_log(log)]
    seed = records[0]["seed"]
    assert seed.bit_length() > GUESSABLE_BITS and records[-1]["seed"] == seed
    text = seed_text(seed)
    assert f"seed: {text}" in " ".join(played.output.split())
    sent = log.read_text()
    for form in {str(seed), f"{seed:x}", f"{seed:X}", text}:
        for r in records:
            if r["k"] == "out":
                assert form not in json.dumps(r["msgs"])
    assert sent.count(str(seed)) == 2  # the header and the result, nowhere else
    again = tmp_path / "again.jsonl"
    assert cli("match", ROOT / "sample_bots" / "greedy_bot.py", FIRST, "--deals", "4", "--seed", text, "--log", again).exit_code == 0
    deals = [(r["hands"], r["undealt"]) for _, r in read_log(log) if r["k"] == "deal"]
    assert deals == [(r["hands"], r["undealt"]) for _, r in read_log(again) if r["k"] == "deal"]


def test_fresh_seeds_are_fresh_and_long():
    seeds = {fresh_seed() for _ in range(64)}
    assert len(seeds) == 64 and all(not guessable(s) for s in seeds)
    assert max(s.bit_length() for s in seeds) > FRESH_BITS - 8


def test_seeds_read_as_decimal_or_hex_and_refuse_anything_else():
    assert parse_seed("42") == 42 and parse_seed("0x2A") == 42 and parse_seed(seed_text(2**100)) == 2**100
    for bad in ("-1", "forty", "1e5", str(2**256)):
        with pytest.raises(ValueError):
            parse_seed(bad)
    assert guessable(2**40) and not guessable(2**70)


def test_no_number_of_hands_tells_the_keyed_deals_apart_from_chance():
    """A smoke test of the keyed shuffle's output: over many deals each tile lands in each
    position about equally often (a bias would leak the seed's structure)."""
    seed = fresh_seed()
    counts = [[0] * 28 for _ in range(28)]
    n = 2800
    for i in range(n):
        for pos, t in enumerate(keyed_tiles(seed, i)):
            counts[t][pos] += 1
    expected = n / 28
    chi2 = sum((c - expected) ** 2 / expected for row in counts for c in row)
    assert chi2 < 900  # 729 degrees of freedom: 900 is far in the tail
