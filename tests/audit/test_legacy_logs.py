"""Logs written before round 3 (format 1: the public shuffle, one set of processes for every
orientation, ``in`` lines kept as text) still verify, replay and make a report, and an edited one
is still found out.  The fixtures were written by the referee of the end of round 2
(``tests/fixtures/format1``: sport, block, kolbasa, an SPRT stop, and four kinds of fault)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from support.commands import cli

from referee.base import exitcodes as X
from referee.records.records import header_of
from referee.web.data import read_match

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "format1").glob("*.jsonl.gz"))


def unpacked(tmp_path: Path, fixture: Path) -> Path:
    log = tmp_path / fixture.name.removesuffix(".gz")
    log.write_bytes(gzip.decompress(fixture.read_bytes()))
    return log


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_a_format_1_log_verifies_replays_and_reports(tmp_path, fixture):
    log = unpacked(tmp_path, fixture)
    assert header_of(log).format == 1 and header_of(log).deals_from is None and header_of(log).derivation == "splitmix64"
    checked = cli("verify", log)
    assert checked.exit_code == X.OK, checked.output
    assert "consistent:" in checked.stdout and "format 1" in " ".join(checked.stdout.split())
    replayed = cli("replay", log)
    assert replayed.exit_code == X.OK and "== game 1, orientation 0, deal 1" in replayed.stdout
    data = read_match(log)
    assert data.match["problem"] is None and data.deals and data.match["result"] is not None


def test_an_edited_format_1_log_is_still_found_out(tmp_path):
    log = unpacked(tmp_path, next(f for f in FIXTURES if f.name.startswith("sport")))
    lines = log.read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line)["k"] == "deal_end")
    rec = json.loads(lines[i])
    rec["wrote"] = list(reversed(rec["wrote"])) if len(set(rec["wrote"])) > 1 else [w + 1 for w in rec["wrote"]]
    lines[i] = json.dumps(rec)
    log.write_text("\n".join(lines) + "\n")
    result = cli("verify", log)
    assert result.exit_code == X.INCONSISTENT and "the deal's result differs" in result.stderr


@pytest.mark.parametrize(("fixture", "says"), [("block", "consistent: 1 game in each of 2 orientations, 30 deals"),
                                                ("draw3", "consistent: 1 game in each of 3 orientations, 21 deals")])
def test_verify_counts_a_one_game_match_as_one_game_in_each_orientation(tmp_path, fixture, says):
    """Issue 40: "2 games" for a match of one game, played in both orientations."""
    checked = cli("verify", unpacked(tmp_path, Path(__file__).resolve().parents[1] / "fixtures" / "format1" / f"{fixture}.jsonl.gz"))
    assert checked.exit_code == X.OK and checked.stdout.startswith(says), checked.output


def test_verify_given_a_deal_file_says_it_is_one(tmp_path):
    deals = tmp_path / "book.jsonl"
    made = cli("deals", "generate", "--variant", "sport", "--seed", "0x1234567890abcdef1234", "--count", "4")
    deals.write_text(made.stdout)
    r = cli("verify", deals)
    assert r.exit_code == X.USAGE and len(r.stderr.strip().splitlines()) == 1, r.output
    assert f"{deals} is a deal file" in r.stderr and "not a match log" in r.stderr and "missing" not in r.stderr, r.stderr
