"""Deal files (RULES.md §4, referee/engine/core/deal.py): lines round-trip, and bad lines are refused
with a message that names the line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine import (
    BadDeal,
    Deal,
    check_deal,
    deal_from_seed,
    format_deal_line,
    parse_deal_line,
    parse_deal_lines,
    variant,
)

SHAPES = [("sport", 4), ("kozel", 4), ("kozel", 2), ("kozel", 3), ("draw", 2), ("draw", 3), ("draw", 4),
          ("block", 2), ("block", 3), ("block", 4), ("club", 2), ("club", 3), ("club", 4)]


def shape_of(vid, players):
    return variant(vid).shape(players)


@settings(max_examples=150, deadline=None)
@given(which=st.sampled_from(SHAPES), seed=st.integers(0, 2**64 - 1), index=st.integers(0, 10**6))
def test_round_trip(which, seed, index):
    shape = shape_of(*which)
    deal = deal_from_seed(seed, index, shape)
    check_deal(deal, shape)
    line = format_deal_line(deal, shape, index)
    assert "\n" not in line
    obj = json.loads(line)
    assert list(obj) == ["deal", "hands", shape.undealt]
    assert parse_deal_line(line, shape) == deal
    assert parse_deal_line(format_deal_line(deal, shape), shape) == deal


def test_whole_file_with_blank_lines():
    shape = shape_of("draw", 3)
    deals = [deal_from_seed(5, i, shape) for i in range(4)]
    text = "\n".join(format_deal_line(d, shape, i) for i, d in enumerate(deals)) + "\n\n"
    assert parse_deal_lines(text.splitlines(), shape) == deals
    with pytest.raises(BadDeal):
        parse_deal_lines(["", "  "], shape)


def test_either_key_is_read_and_tile_names_may_be_reversed():
    shape = shape_of("block", 2)
    deal = deal_from_seed(9, 0, shape)
    obj = json.loads(format_deal_line(deal, shape))
    obj["bazaar"] = obj.pop("sleeping")
    obj["hands"][0] = ["-".join(reversed(n.split("-"))) for n in obj["hands"][0]]
    assert parse_deal_line(json.dumps(obj), shape) == deal


def _good_obj(vid="kozel", players=2, seed=3):
    shape = shape_of(vid, players)
    return shape, json.loads(format_deal_line(deal_from_seed(seed, 0, shape), shape, 0))


def _bad_lines():
    shape, obj = _good_obj()
    twice = json.loads(json.dumps(obj))
    twice["hands"][1][0] = twice["hands"][0][0]  # a tile twice (and one missing)
    twice_bazaar = json.loads(json.dumps(obj))
    twice_bazaar["bazaar"][-1] = twice_bazaar["hands"][1][3]
    missing = json.loads(json.dumps(obj))
    missing["bazaar"].pop()  # one tile missing from the bazaar
    short = json.loads(json.dumps(obj))
    short["bazaar"].append(short["hands"][0].pop())  # 6 in a hand, 15 in the bazaar
    long = json.loads(json.dumps(obj))
    long["hands"][0].append(long["bazaar"].pop())
    seats = json.loads(json.dumps(obj))
    seats["hands"].append(seats["bazaar"][:7])
    seats["bazaar"] = seats["bazaar"][7:]
    bad_name = json.loads(json.dumps(obj))
    bad_name["hands"][1][2] = "7-1"
    bad_word = json.loads(json.dumps(obj))
    bad_word["bazaar"][0] = "double six"
    not_str = json.loads(json.dumps(obj))
    not_str["hands"][0][0] = [3, 5]
    both = json.loads(json.dumps(obj))
    both["sleeping"] = []
    return shape, [
        ("tile twice", json.dumps(twice), "appears twice"),
        ("tile twice, hand and bazaar", json.dumps(twice_bazaar), "appears twice"),
        ("tile missing", json.dumps(missing), "13 tiles in the bazaar"),
        ("hand too short", json.dumps(short), "seat 0 holds 6 tiles"),
        ("hand too long", json.dumps(long), "seat 0 holds 8 tiles"),
        ("too many hands", json.dumps(seats), "3 hands"),
        ("bad tile name", json.dumps(bad_name), "'7-1'"),
        ("not a tile", json.dumps(bad_word), "double six"),
        ("tile not a string", json.dumps(not_str), "[3, 5]"),
        ("undealt twice", json.dumps(both), "once"),
        ("malformed JSON", json.dumps(obj)[:-1], "not valid JSON"),
        ("not an object", "[1, 2, 3]", "JSON object"),
        ("no hands", json.dumps({"bazaar": obj["bazaar"]}), "'hands'"),
        ("hands not lists", json.dumps({"hands": ["0-1"], "bazaar": []}), "'hands'"),
    ]


_SHAPE, BAD = _bad_lines()


@pytest.mark.parametrize("name, text, words", BAD, ids=[b[0] for b in BAD])
def test_bad_line_is_refused_naming_the_line(name, text, words):
    good = format_deal_line(deal_from_seed(1, 0, _SHAPE), _SHAPE)
    with pytest.raises(BadDeal) as info:
        parse_deal_lines([good, "", good, text, good], _SHAPE)
    msg = str(info.value)
    assert info.value.line == 4
    assert msg.startswith("line 4: "), msg
    assert words in msg, msg
    assert "\n" not in msg
    assert isinstance(info.value, ValueError)


def test_deal_for_the_wrong_game_is_refused():
    line = format_deal_line(deal_from_seed(1, 0, shape_of("draw", 3)), shape_of("draw", 3))
    with pytest.raises(BadDeal, match="line 7: seat 0 holds 5 tiles"):
        parse_deal_line(line, shape_of("club", 3), 7)


def test_check_deal_names_missing_and_foreign_tiles():
    shape = shape_of("sport", 4)
    deal = deal_from_seed(0, 0, shape)
    hands = [list(h) for h in deal.hands]
    hands[0][0] = 28
    with pytest.raises(BadDeal, match="not a tile id"):
        check_deal(Deal(tuple(map(tuple, hands)), ()), shape)
