"""The protocol's messages, its committed JSON Schema, and its pages (PROTOCOL.md, the core page, and
the family pages in docs/protocol/): their examples, a section for every message, turn ids."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import get_args

import msgspec
import pytest
from support import PROTOCOL_PAGES, protocol_page, protocol_pages, transcript_block
from support import fenced_blocks as blocks_of

from protocol import bot
from protocol import messages as m
from protocol.schema import PATH as SCHEMA_PATH
from protocol.schema import render
from referee.engine import TERMINAL, deal_from_seed, variant
from referee.engine.core.line import END_NAMES, Drew, Placed
from referee.engine.core.tiles import HIGH, IS_DOUBLE, LOW, PIPS, tiles_of
from referee.sides.base import GameSide

ROOT = Path(__file__).resolve().parents[2]

# -- the schema ---------------------------------------------------------------------------------


def test_committed_schema_is_current():
    committed = SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == render(), (
        "protocol/schema.json is out of date with protocol/messages.py; "
        "regenerate it with `python -m protocol.schema` and commit the result"
    )


def test_schema_is_valid_json_with_both_directions():
    doc = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert {"ToBot", "FromBot", "Turn", "Play", "BotHello"} <= set(doc["$defs"])


# -- round trips --------------------------------------------------------------------------------

EXAMPLES: list[m.ToBot | m.FromBot] = [
    m.Hello(protocol=1, referee="referee 0.1.0", limits=m.Limits(bank_ms=60000, increment_ms=100)),
    m.DealStart(
        game="kozel", options={"rule13": "drop", "target": 100}, players=4, seat=1, side=1, partner=3,
        hand=[(0, 1), (3, 5), (6, 6)], leader=2, scores=[13, 0], bazaar=0, game_number=1, deal_number=4,
    ),
    m.DealStart(
        game="draw", options={}, players=2, seat=0, side=0, partner=None, hand=[(1, 1)], leader=0,
        scores=[0, 0], bazaar=14,
    ),
    m.DealStart(
        game="sea_kozel", options={}, players=2, seat=0, side=0, partner=None, hand=[(1, 1)], leader=0,
        scores=[0, 40], bazaar=14, special=m.Special("eggs", deal=2, of=3, total=24),
    ),
    m.Placed(seat=0, tile=(1, 1), end=None, forced=True),
    m.Placed(seat=2, tile=(1, 4), end="left"),
    m.Placed(seat=2, tile=(4, 4), end="up", closed=True),
    m.Scored(seat=1, points=15, count=15),
    m.Drew(seat=1, count=3, tiles=[(0, 0), (2, 5), (4, 6)]),
    m.Drew(seat=1, count=3),
    m.Passed(seat=3),
    m.Turn(
        legal=[m.PlayOption(tile=(3, 5), end="left"), m.PlayOption(tile=(3, 5), end="right")],
        hand=[(3, 5), (0, 0)], ends={"left": 3, "right": 3}, counts=[2, 5, 5, 5], bazaar=0, time_ms=5000,
    ),
    m.Turn(legal=[m.PlayOption(tile=(0, 0), end=None)], hand=[(0, 0)], ends={}, counts=[1, 1], bazaar=0, time_ms=250),
    m.DealEnd(
        reason="domino", seat=0, hands=[[], [(2, 3)], [], [(6, 6), (0, 1)]], values=[0, 5, 0, 13],
        wrote=[18, 0], totals=[18, 0], notes=["seat 0 went out"],
    ),
    m.DealEnd(reason="fault", seat=1, hands=[[], [], [], []], values=[0, 0, 0, 0], wrote=[0, 0], totals=[0, 0]),
    m.GameEnd(totals=[101, 40], winners=[1], losers=[0], reason="pair A reached 101"),
    m.MatchEnd(),
    m.MatchEnd(reason="forfeit"),
    m.BotHello(name="mybot", protocol=1),
    m.BotHello(name="mybot", protocol=1, version="2.1", author="Ann"),
    m.Play(tile=(3, 5), end="left"),
    m.Play(tile=(6, 6)),
    m.Play(tile=(4, 4), end="down", closed=True, turn=12),
    m.Play(tile=None, stop=True),
    m.Declared(seat=2, what="hundred"),
    m.Play(tile=(6, 6), declare="hundred", turn=3),
    m.Play(tile=None, declare="write_off"),
    m.DealEnd(reason="fish", seat=1, hands=[[(6, 6)], [(0, 1)]], values=[50, 1], wrote=[0, 0], totals=[0, 30], rule="write_off"),
    # kolbasa: rows face down, places instead of ends, its own events
    m.DealStart(game="kolbasa", options={}, players=2, seat=1, side=1, partner=None, hand=[], leader=0, scores=[0, 0], bazaar=0,
                rows=[[None, None], [None, None]]),
    m.Turned(seat=0, tile=(2, 3)),
    m.Placed(seat=0, tile=(2, 3), forced=True, place="start"),
    m.Tailed(seat=1, tile=(5, 6)),
    m.Placed(seat=0, tile=(0, 5), place="knife:3"),
    m.Cut(seat=0, to=1, tiles=[(2, 3), (2, 4), (1, 3)]),
    m.Turn(legal=[m.PlayOption(tile=(1, 1), place="top"), m.PlayOption(tile=(1, 1), place="bottom:0")], hand=[], ends={"top": 1, "bottom": 3},
           counts=[3, 2], bazaar=0, time_ms=5000, lines=m.Lines((2, 3), [(2, 1)], []), rows=[[(5, 6), None, (1, 1)], [None, None]]),
    m.Play(tile=(1, 1), place="bottom:0", turn=7),
]


def test_examples_cover_every_message():
    covered = {type(msg) for msg in EXAMPLES}
    assert covered == set(get_args(m.ToBotMessage)) | set(get_args(m.FromBotMessage))


@pytest.mark.parametrize("msg", EXAMPLES, ids=lambda msg: type(msg).__name__)
def test_round_trip(msg):
    line = m.encode_line(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    decoder = m.to_bot_decoder if isinstance(msg, m.ToBot) else m.from_bot_decoder
    assert decoder.decode(line) == msg
    assert m.message_type(line) == msg.__struct_config__.tag


# -- what a bot may send ------------------------------------------------------------------------


def test_unknown_fields_from_a_bot_are_ignored():
    line = b'{"type":"play","tile":[5,3],"end":"left","thinking":"heavy first","nodes":1234}'
    assert m.from_bot_decoder.decode(line) == m.Play(tile=(5, 3), end="left")
    hello = b'{"type":"hello","name":"x","protocol":1,"language":"awk"}'
    assert m.from_bot_decoder.decode(hello) == m.BotHello(name="x", protocol=1)


def test_unknown_fields_to_a_bot_are_ignored():
    line = b'{"type":"passed","seat":2,"why":"no 4 and no 6","extra":{"a":[1,2]}}'
    assert m.to_bot_decoder.decode(line) == m.Passed(seat=2)


def test_end_may_be_omitted_for_the_lead():
    assert m.from_bot_decoder.decode(b'{"type":"play","tile":[6,6]}') == m.Play(tile=(6, 6), end=None)


@pytest.mark.parametrize(
    ("line", "path"),
    [
        (b'{"type":"play","tile":[3,7],"end":"left"}', "$.tile[1]"),
        (b'{"type":"play","tile":[-1,3],"end":"left"}', "$.tile[0]"),
        (b'{"type":"play","tile":"3-5","end":"left"}', "$.tile"),
        (b'{"type":"play","tile":[3,5,1],"end":"left"}', "$.tile"),
        (b'{"type":"play","tile":[3,5],"end":3}', "$.end"),
        (b'{"type":"hello","name":7}', "$.name"),
    ],
)
def test_bad_fields_name_their_path(line, path):
    with pytest.raises(msgspec.ValidationError) as info:
        m.from_bot_decoder.decode(line)
    assert f"`{path}`" in str(info.value)


def test_missing_tile_is_named():
    with pytest.raises(msgspec.ValidationError) as info:
        m.from_bot_decoder.decode(b'{"type":"play","end":"left"}')
    assert "`tile`" in str(info.value)
    with pytest.raises(msgspec.ValidationError) as info:
        m.to_bot_decoder.decode(
            b'{"type":"turn","legal":[{"end":null}],"hand":[],"ends":{},"counts":[],"bazaar":0,"time_ms":1}'
        )
    assert "`tile`" in str(info.value) and "`$.legal[0]`" in str(info.value)


def test_not_json_is_a_decode_error_and_has_no_type():
    with pytest.raises(msgspec.DecodeError):
        m.from_bot_decoder.decode(b"play 3-5 left")
    assert m.message_type(b"play 3-5 left") is None
    assert m.message_type(b'{"type":"chat","text":"hi"}') == "chat"


# -- the protocol's pages --------------------------------------------------------------------------


def fenced_blocks() -> list[tuple[str, str]]:
    """Every fenced block of every page of the protocol as (info string, body)."""
    return [block for text in protocol_pages().values() for block in blocks_of(text)]


def example_lines() -> list[tuple[str, str]]:
    """Every message line of the protocol's pages as (direction, JSON text).

    In ``json`` blocks every non-blank line is one message; in other blocks, lines written
    ``< {...}`` (referee to bot) and ``> {...}`` (bot to referee).  Direction ``?`` means the
    text does not say: either decoder may accept it.
    """
    out = []
    for info, body in fenced_blocks():
        lang = info.split()[0] if info else ""
        for raw in body.splitlines():
            line = raw.strip()
            if line[:2] in ("< ", "> ") and line[2:].lstrip().startswith("{"):
                out.append((line[0], line[2:].strip()))
            elif lang == "json" and line:
                out.append(("?", line))
    return out


def decode_example(direction: str, text: str):
    data = text.encode()
    if direction == "<":
        return m.to_bot_decoder.decode(data)
    if direction == ">":
        return m.from_bot_decoder.decode(data)
    try:
        return m.to_bot_decoder.decode(data)
    except msgspec.ValidationError:
        return m.from_bot_decoder.decode(data)


def test_protocol_md_examples_parse():
    lines = example_lines()
    assert len(lines) >= 30, "the protocol's pages should hold the worked transcripts and an example of every message"
    seen = set()
    for direction, text in lines:
        try:
            msg = decode_example(direction, text)
        except msgspec.DecodeError as exc:
            pytest.fail(f"an example of the protocol's pages does not parse ({exc}): {direction} {text}")
        seen.add(type(msg))
    missing = (set(get_args(m.ToBotMessage)) | set(get_args(m.FromBotMessage))) - seen
    assert not missing, f"the protocol's pages have no example of {sorted(c.__name__ for c in missing)}"


def test_protocol_md_json_blocks_hold_only_json_lines():
    for info, body in fenced_blocks():
        if info.split()[:1] == ["json"]:
            for line in body.splitlines():
                if line.strip():
                    json.loads(line)


# Every message has a section of its own, ``### `type` — …``: the referee's on the core page or on
# its family's page, the bot's under the core page's "Messages from the bot".  Its first table names
# exactly the fields of the message's struct (a nested struct's as ``limits.startup_ms``), so a
# message or a field added to protocol/messages.py must be written into the pages too.

HEADING = re.compile(r"^(#{1,3}) (.*)$", re.M)
MESSAGE_HEADING = re.compile(r"`(\w+)` — ")


def message_sections() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Every ``### `type` — …`` section of the protocol's pages by (direction, type), direction
    ``"from"`` for the bot's messages and ``"to"`` for the referee's: [(page, its text)]."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for page, text in protocol_pages().items():
        headings = list(HEADING.finditer(text))
        chapter = ""
        for i, h in enumerate(headings):
            if len(h.group(1)) < 3:
                chapter = h.group(2)
                continue
            named = MESSAGE_HEADING.match(h.group(2))
            if named is None:
                continue
            direction = "from" if page == "core" and chapter == "Messages from the bot" else "to"
            end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
            found.setdefault((direction, named.group(1)), []).append((page, text[h.end():end]))
    return found


def field_names(section: str) -> list[str]:
    """The names in the first column of a section's first table (a row may name several)."""
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) >= 3 and set(rows[1]) <= set("|-: "), f"no table of fields in:\n{section[:300]}"
    names = []
    for row in rows[2:]:
        names += re.findall(r"`([\w.]+)`", row.split("|")[1])
    return names


def struct_of(cls: type, name: str) -> type:
    """The struct type of field ``name`` of ``cls`` (for a dotted row such as ``limits.move_ms``)."""
    field = next(f for f in msgspec.structs.fields(cls) if f.encode_name == name)
    assert isinstance(field.type, type) and issubclass(field.type, msgspec.Struct), f"{cls.__name__}.{name} is no struct"
    return field.type


MESSAGES = [*get_args(m.ToBotMessage), *get_args(m.FromBotMessage)]


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_every_message_has_a_section_whose_table_names_its_fields(cls):
    direction = "to" if issubclass(cls, m.ToBot) else "from"
    tag = cls.__struct_config__.tag
    sections = message_sections().get((direction, tag), [])
    assert len(sections) == 1, f"{cls.__name__}: {len(sections)} sections headed ### `{tag}` — … ({direction} the bot)"
    page, section = sections[0]
    names = field_names(section)
    assert len(names) == len(set(names)), f"`{tag}` on the {page} page names a field twice"
    fields = {f.encode_name for f in msgspec.structs.fields(cls)}
    assert {n.split(".")[0] for n in names} == fields, f"`{tag}`'s table on the {page} page"
    for dotted in (n for n in names if "." in n):
        parent, child = dotted.split(".", 1)
        assert child in {f.encode_name for f in msgspec.structs.fields(struct_of(cls, parent))}, dotted
    # its example is in the section too
    assert '{"type":"' + tag + '"' in section, f"`{tag}`'s section on the {page} page shows no example"


def test_every_message_section_is_of_a_message():
    known = {("to" if issubclass(cls, m.ToBot) else "from", cls.__struct_config__.tag) for cls in MESSAGES}
    assert set(message_sections()) <= known, set(message_sections()) - known


def test_the_field_table_check_catches_a_missing_row():
    """The section test reads the table it should: without a row, the names differ."""
    (_, section), = message_sections()[("to", "cut")]
    without = "\n".join(line for line in section.splitlines() if not line.startswith("| `to` |"))
    assert set(field_names(section)) == {"seat", "to", "tiles"}
    assert set(field_names(without)) == {"seat", "tiles"}


def test_the_core_page_opens_with_the_first_bot_and_lists_every_page():
    core = protocol_page("core")
    chapters = re.findall(r"^## (.*)$", core, re.M)
    assert chapters[0] == "Your first bot in 20 lines"
    contents = next(p for p in core.split("\n\n") if p.startswith("Contents: "))
    for chapter in chapters:
        assert f"[{chapter.split(':')[0]}](#" in contents, f"the contents do not name {chapter!r}"
    for page in PROTOCOL_PAGES:
        if page != "core":
            assert f"](docs/protocol/{page}.md)" in core, page


# Turn ids are explained once, on the core page, and every family's page points there.  What the
# section says is held against every page's transcript (each regenerated from the engine).

TRANSCRIPTS = [("line", "transcript"), ("cross", "cross-transcript"), ("sea_kozel", "sea-kozel-transcript"),
               ("mexican_train", "mexican-train-transcript"), ("kolbasa", "kolbasa-transcript")]


def test_turn_ids_are_explained_once_on_the_core_page_and_every_family_page_links_there():
    pages = protocol_pages()
    explained = [page for page, text in pages.items() if re.search(r"^#+ Turn ids$", text, re.M) or "* **Turn ids.**" in text]
    assert explained == ["core"]
    for page in PROTOCOL_PAGES:
        if page != "core":
            assert "](../../PROTOCOL.md#turn-ids)" in pages[page], f"the {page} page does not link to the core page's turn ids"
    said = " ".join(protocol_page("core").split())
    for phrase in ("this turn's number among the turns of your seating, every seat's turns counted, from 1",
                   "Only the turns a seat is asked take an id",
                   "has an id of its own, while what the referee does itself — a forced lead, draws, passes, kolbasa's "
                   "turning up and tailing, the moves of a staged game ([Testing your bot](#testing-your-bot)) — takes none",
                   "a `play` whose `turn` is another id is answering a turn it was not asked"):
        assert phrase in said, phrase


@pytest.mark.parametrize("page, name", TRANSCRIPTS)
def test_turn_ids_count_the_turns_every_seat_is_asked(page, name):
    """Between two turns of the seat watched, the id grows by one for each turn of another seat (a
    tile it chose to place, or its write-off decision) and by one for the turn itself: forced
    leads, draws, passes and tails take none, and a turn going on takes one of its own."""
    me = expected = None
    turns = going_on = 0
    for line in transcript_block(page, name):
        if not line.startswith("< "):
            continue
        msg = json.loads(line[2:])
        kind = msg["type"]
        if kind == "deal":
            me = msg["seat"]
            expected = 0 if msg["game_number"] == msg["deal_number"] == 0 else None  # a later deal: count from its first turn
        elif kind == "placed" and msg["seat"] != me and not msg["forced"] and expected is not None:
            expected += 1
        elif kind == "declared" and msg["seat"] != me and msg["what"] != "hundred" and expected is not None:
            expected += 1
        elif kind == "turn":
            expected = msg["id"] if expected is None else expected + 1
            assert msg["id"] == expected, f"{name}: turn {msg['id']}, expected {expected}"
            turns += 1
            going_on += bool(msg.get("continuing"))
    assert turns >= 5
    if page == "cross":
        assert going_on, "the osel deal shows turns going on, each with an id of its own"


# The worked transcript: one sport deal (seed 1, deal 0) seen from seat 0, every seat playing as
# sample_bots/greedy_bot.py does.  Regenerated here from the rules engine, so the document
# cannot drift from the rules.


def _tile(t: int) -> tuple[int, int]:
    return (LOW[t], HIGH[t])


def _end(e: int | None) -> str | None:
    return None if e is None else END_NAMES[e]


def _greedy(state):
    """greedy_bot.py's choice: heaviest, then a double, then most follow-ups, then first."""
    hand = tiles_of(state.hands[state.turn])

    def preference(p):
        if p.end is None:
            new = [LOW[p.tile], HIGH[p.tile]]
        else:
            new = [v for e, v in enumerate(state.ends) if e != p.end and v >= 0]
            shown = state.ends[p.end]
            new.append(HIGH[p.tile] if shown == LOW[p.tile] else LOW[p.tile])
        follow = sum(1 for t in hand if t != p.tile and (LOW[t] in new or HIGH[t] in new))
        return (PIPS[p.tile], IS_DOUBLE[p.tile], follow)

    return max(state.legal_plays(), key=preference)


def sport_transcript(seed: int = 1, index: int = 0, seat: int = 0) -> list[str]:
    game = variant("sport").new_game()
    state = game.start(deal_from_seed(seed, index, game.shape))
    out: list[tuple[str, m.ToBot | m.FromBot]] = [
        ("<", m.Hello(protocol=m.PROTOCOL_VERSION, referee="referee 0.1.0", limits=m.Limits())),
        (">", m.BotHello(name="greedy_bot.py", protocol=1, version="1.0", author="referee sample bots")),
        ("<", m.DealStart(
            game="sport", options=dict(game.options), players=game.players, seat=seat, side=game.side_of[seat],
            partner=(seat + 2) % 4, hand=[_tile(t) for t in tiles_of(state.hands[seat])], leader=state.leader,
            scores=list(game.totals), bazaar=state.bazaar_left(), game_number=0, deal_number=index,
        )),
    ]
    told = 0

    def events():
        nonlocal told
        for e in state.history[told:]:
            if type(e) is Placed:
                out.append(("<", m.Placed(seat=e.seat, tile=_tile(e.tile), end=_end(e.end), forced=e.forced)))
            elif type(e) is Drew:
                mine = e.seat == seat
                out.append(("<", m.Drew(seat=e.seat, count=e.count, tiles=[_tile(t) for t in e.tiles] if mine else None)))
            else:
                out.append(("<", m.Passed(seat=e.seat)))
        told = len(state.history)

    turn_id = 0  # the referee numbers every turn of the match, whoever is asked
    while state.to_move() != TERMINAL:
        choice = _greedy(state)
        turn_id += 1
        if state.turn == seat:
            events()
            out.append(("<", m.Turn(
                legal=[m.PlayOption(tile=_tile(p.tile), end=_end(p.end)) for p in state.legal_plays()],
                hand=[_tile(t) for t in tiles_of(state.hands[seat])],
                ends={END_NAMES[e]: v for e, v in enumerate(state.ends) if v >= 0},
                counts=[h.bit_count() for h in state.hands], bazaar=state.bazaar_left(), time_ms=5000, id=turn_id,
            )))
            out.append((">", m.Play(tile=_tile(choice.tile), end=_end(choice.end))))
        state.apply(choice)
    events()
    rec = game.finish(state)
    out.append(("<", m.DealEnd(
        reason=rec.end.reason, seat=rec.end.seat, hands=[[_tile(t) for t in h] for h in rec.hands],
        values=list(rec.values), wrote=list(rec.wrote), totals=list(rec.totals), notes=list(rec.notes),
    )))
    return [f"{d} {m.encoder.encode(msg).decode()}" for d, msg in out]


def test_the_line_page_transcript_matches_the_engine():
    documented = transcript_block("line", "transcript")
    expected = sport_transcript()
    assert documented == expected, "regenerate with: python -c 'from tests.test_protocol import sport_transcript as t; print(*t(), sep=chr(10))'"


# -- protocol.bot, the Python bot library -------------------------------------------------------


def _library_greedy(turn: m.Turn, state: bot.State):
    """greedy_bot.py's rule written with the library's helpers."""

    def preference(option: m.PlayOption):
        a, b = option.tile
        if option.end is None:
            new = [a, b]
        else:
            new = [v for name, v in turn.ends.items() if name != option.end]
            new.append(b if turn.ends[option.end] == a else a)
        rest = [t for t in state.hand if t != bot.norm(option.tile)]
        return (bot.pips(option.tile), a == b, sum(1 for t in rest if any(bot.fits(t, n) for n in new)))

    return max(turn.legal, key=preference)


def _split(lines: list[str]) -> tuple[bytes, bytes]:
    to_bot = b"".join(line[2:].encode() + b"\n" for line in lines if line.startswith("< "))
    from_bot = b"".join(line[2:].encode() + b"\n" for line in lines if line.startswith("> "))
    return to_bot, from_bot


def test_library_replays_the_transcript():
    to_bot, expected = _split(sport_transcript())
    out = io.BytesIO()
    state = bot.run(_library_greedy, "greedy_bot.py", "1.0", "referee sample bots", infile=io.BytesIO(to_bot), outfile=out)
    assert out.getvalue() == expected
    assert state.last_deal is not None and state.last_deal.reason == "fish"
    assert state.scores == list(state.last_deal.totals)
    assert state.seat == 0 and state.partner == 2 and state.game == "sport"


def test_library_state_follows_the_events():
    """Tracked from deal and events alone, the state agrees with every turn's own account."""
    state = bot.State()
    turns = 0
    for line in sport_transcript():
        if not line.startswith("< "):
            continue
        msg = m.to_bot_decoder.decode(line[2:].encode())
        if isinstance(msg, m.Turn):
            assert sorted(state.hand) == sorted(bot.norm(t) for t in msg.hand)
            assert state.ends == msg.ends
            assert state.counts == msg.counts
            turns += 1
        elif isinstance(msg, m.DealStart):
            state.on_deal(msg)
        elif isinstance(msg, m.Placed):
            state.on_placed(msg)
        elif isinstance(msg, m.Drew):
            state.on_drew(msg)
        elif isinstance(msg, m.Passed):
            state.on_passed(msg)
    assert turns >= 5
    assert len(state.table()) == sum(1 for e in state.history if isinstance(e, m.Placed))


def test_library_tracks_draws():
    state = bot.State()
    state.on_deal(m.DealStart(game="draw", options={}, players=2, seat=1, side=1, partner=None,
                              hand=[(0, 1), (2, 2)], leader=0, scores=[0, 0], bazaar=14))
    state.on_placed(m.Placed(seat=0, tile=(6, 6), end=None, forced=True))
    state.on_drew(m.Drew(seat=1, count=2, tiles=[(5, 3), (6, 4)]))
    state.on_placed(m.Placed(seat=1, tile=(4, 6), end="right"))
    state.on_drew(m.Drew(seat=0, count=3))
    assert state.hand == [(0, 1), (2, 2), (3, 5)]
    assert state.ends == {"left": 6, "right": 4}
    assert state.counts == [2 - 1 + 3, 2 + 2 - 1]
    assert state.bazaar == 9


def test_library_skips_unknown_and_bad_lines_and_stops_at_match_end(capsys):
    lines = [
        b"not json\n",
        b"\n",
        b'{"type":"chat","text":"hi"}\n',
        b'{"type":"hello","protocol":1,"referee":"r","limits":{},"new_field":[1]}\n',
        b'{"type":"turn","legal":"all of them"}\n',  # a known type that does not decode: skipped
        b'{"type":"turn","legal":[{"tile":[6,4],"end":null}],"hand":[[4,6]],"ends":{},"counts":[1,1],"bazaar":0,"time_ms":5,"hint":1}\n',
        b'{"type":"match_end"}\n',
        b'{"type":"turn","legal":[{"tile":[1,1],"end":null}],"hand":[[1,1]],"ends":{},"counts":[1,1],"bazaar":0,"time_ms":5}\n',
    ]
    out = io.BytesIO()

    def choose(turn, state):
        print("thinking out loud")  # must not reach the protocol stream
        return turn.legal[0].tile, turn.legal[0].end

    bot.run(choose, "t", infile=io.BytesIO(b"".join(lines)), outfile=out)
    assert out.getvalue().splitlines() == [
        b'{"type":"hello","name":"t","protocol":1,"version":"","author":""}',
        b'{"type":"play","tile":[4,6],"end":null}',
    ]
    err = capsys.readouterr()
    assert "thinking out loud" in err.err and err.out == ""


def test_library_returns_at_end_of_input():
    out = io.BytesIO()
    bot.run(lambda turn, state: turn.legal[0], "t", infile=io.BytesIO(b""), outfile=out)
    assert out.getvalue() == b""


class _OtherDeal:
    """A deal state of a game with a side of its own (for the dispatch test)."""


class _NewerDeal(_OtherDeal):
    """A deal state no side names, whose base class one does."""


class _OtherSide(GameSide):
    deals = (f"{__name__}._OtherDeal",)


def test_side_for_dispatches_on_the_deal_states_class(monkeypatch):
    """Every game's side names the deal-state classes it shows; the line games' side is the
    default, the cross games have theirs, a class takes the side of its nearest named base, and
    the choice is kept."""
    from referee import sides
    from referee.sides import cross, line

    for vid, players, side in (("sport", 4, line.SIDE), ("sea_kozel", 4, line.SIDE), ("osel", 3, cross.SIDE)):
        game = variant(vid).new_game(players, {})
        state = game.start(deal_from_seed(1, 0, game.shape))
        assert sides.side_for(state) is side
        assert sides.side_of(variant(vid), players, variant(vid).resolve_options(players)) is side
    other = _OtherSide()
    sides.every_side()
    monkeypatch.setitem(sides._BY_CLASS_NAME, f"{__name__}._OtherDeal", other)
    monkeypatch.setattr(sides, "_OF_CLASS", {})
    assert sides.side_for(_OtherDeal()) is other
    assert sides.side_for(_NewerDeal()) is other
    assert sides._OF_CLASS[_NewerDeal] is other
    assert sides.side_for(object()) is line.SIDE


def _deal_message(**extra) -> m.DealStart:
    return m.DealStart(game="x", options={}, players=2, seat=0, side=0, partner=None, hand=[(0, 1)], leader=0, scores=[0, 0],
                       bazaar=0, **extra)


def test_the_library_keeps_each_familys_fields_in_the_deals_family():
    """State's per-family fields live in the deal's :class:`bot.Family`, picked from the ``deal``
    message, and read as the State's own: a trains deal keeps markers, a rows deal its rows, the
    line games sea_kozel's special; each reads as None or empty elsewhere, and a copied family
    (a seat's view in the environments) is its own."""
    state = bot.State()
    state.hear(_deal_message(station=(6, 6), round=0))
    assert type(state.family) is bot.TrainsFamily and state.family.trains
    assert state.station == (6, 6) and state.round == 0 and state.ends == {"seat0": 6, "seat1": 6, "mexican": 6}
    state.hear(m.Passed(seat=1))
    assert state.markers == {"seat1"} and state.rows == [] and state.special is None
    other = state.family.copy()
    state.hear(m.Placed(seat=1, tile=(6, 3), end=None, train="seat1"))
    assert state.markers == set() and other.markers == {"seat1"} and state.ends["seat1"] == 3

    state.hear(_deal_message(rows=[[None] * 14, [None] * 14]))
    assert type(state.family) is bot.RowsFamily and not state.family.trains
    assert state.counts == [14, 14] and state.station is None and state.markers == set() and len(state.rows) == 2

    state.hear(_deal_message(special=m.Special(kind="hundred", side=1)))
    assert type(state.family) is bot.Family and state.special == m.Special(kind="hundred", side=1) and state.rows == []
