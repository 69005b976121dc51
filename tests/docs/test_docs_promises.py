"""What the docs promise a bot author or a league host in words, held to the code: kolbasa's cut
(which tile ends up leftmost), the forced lead's paragraph, a game every bot lost or won, and the
test suite's measured length."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import protocol_page

from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.conversation.players import Entry
from referee.engine import variant
from referee.engine.core.game import GameOutcome
from referee.engine.core.line import Cut
from referee.matches.match import orientations
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec
from tests.engine.test_games_kolbasa import knife_position, put

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = protocol_page("core")
KOLBASA = protocol_page("kolbasa")


def flat(text: str) -> str:
    return " ".join(text.split())


def test_kolbasa_cut_says_which_tile_ends_up_leftmost_and_the_engine_agrees():
    assert "the old start becomes the row's **leftmost** tile" in flat(KOLBASA)
    assert "`tiles[0]`, the old start, is now that row's leftmost tile" in flat(KOLBASA)
    d = knife_position()
    put(d, "0-5", 303)
    cut = next(e for e in d.history if isinstance(e, Cut))
    assert d.rows[cut.to][0] == cut.tiles[0] and d.rows[cut.to][len(cut.tiles) - 1] == cut.tiles[-1]


def test_the_forced_lead_paragraph_stands_on_its_own():
    """Not glued to kozel's bullet ("… one tile left in the bazaar. A\\nforced lead …")."""
    paragraphs = re.split(r"\n\s*\n", PROTOCOL)
    forced = [p for p in paragraphs if "forced lead** (a game that fixes the first tile" in p]
    assert len(forced) == 1 and forced[0].startswith("**A forced lead**"), forced
    assert not re.search(r"bazaar\. A\s*\nforced lead", PROTOCOL)


@pytest.mark.parametrize("winners, losers", [((0, 1, 2, 3), ()), ((), (0, 1, 2, 3))])
def test_a_game_every_bot_won_or_lost_is_drawn_for_all_as_result_json_says(winners, losers):
    words = flat((ROOT / "docs" / "result-json.md").read_text(encoding="utf-8"))
    assert "A game every bot lost, or every bot won, is drawn for all of them" in words
    v = variant("draw")
    opts = v.resolve_options(4, {})
    spec = MatchSpec(v, [Bot("a", ["a"]), Bot("b", ["b"])], 4, opts, games=1, seed=1)
    seatings = orientations(v, 4, opts, 2)
    with MatchResult(spec, seatings, entries=[Entry(b, i, TimeControl()) for i, b in enumerate(spec.bots)]) as result:
        game = v.new_game(4, opts, None)
        result.add_game(GameOutcome(totals=(0, 0, 0, 0), winners=winners, losers=losers, reason="test"), game, 0, 0, 1)
        (game_result,) = list(result.games)
        assert game_result.won_by == [] and game_result.lost_by == []
        totals = result.bot_totals()
        assert [(t.games_won, t.games_drawn, t.games_lost) for t in totals] == [(0, 1, 0), (0, 1, 0)]


def test_the_readme_says_how_long_the_whole_suite_takes_on_two_cores():
    assert "3042 tests in 21 min 4 s of pytest on two cores, on a fresh clone" in flat((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_says_one_thing_of_columns_and_the_console_does_it(monkeypatch):
    """Issue 40: the README said both that COLUMNS is ignored when piped and that tables fit it
    "also when output is piped"."""
    import io

    from rich.table import Table

    from referee.base.console import Console

    said = [flat(p) for p in re.split(r"\n\s*\n|\n\* ", (ROOT / "README.md").read_text(encoding="utf-8")) if "`COLUMNS`" in p]
    assert said and not any("piped" in p and "fit" in p and "ignored" not in p and "not read" not in p for p in said), said
    assert any("into a file or a pipe nothing is wrapped" in p for p in said)
    monkeypatch.setenv("COLUMNS", "30")
    piped = io.StringIO()
    table = Table("bot", "a long column heading that does not fit thirty columns")
    table.add_row("greedy_bot", "x")
    Console(file=piped, force_terminal=False).print(table)
    assert max(len(line) for line in piped.getvalue().splitlines()) > 30


def _section(text: str, title: str) -> str:
    return text.partition(f"\n## {title}\n")[2].partition("\n## ")[0]


#: The messages that frame a deal rather than tell of one of its events.
_FRAMING = {"hello", "deal", "turn", "deal_end", "game_end", "match_end"}


def test_the_conversation_names_every_event_the_referee_sends():
    """Issue 40 §3: the conversation named only placed, drew and passed among the events."""
    import typing

    from protocol import messages as m

    events = [t.__struct_config__.tag for t in typing.get_args(m.ToBotMessage)]
    events = [e for e in events if e not in _FRAMING]
    assert {"placed", "drew", "passed", "scored", "declared", "turned", "tailed", "cut"} <= set(events)
    conversation = _section(PROTOCOL, "The conversation")
    assert [e for e in events if f"`{e}`" not in conversation] == []


def test_the_play_table_says_end_may_be_left_out_where_there_is_none_and_the_referee_agrees():
    """Issue 40 §3: a stop, a declaration and a train play need no ``end``; the table said only the lead."""
    from types import SimpleNamespace

    import msgspec

    from protocol import messages as m
    from referee.engine.core.line import DECLINE, HUNDRED, STOP, WRITE_OFF
    from referee.sides.base import engine_play
    from referee.sides.trains import SIDE as TRAINS

    row = next(line for line in _section(PROTOCOL, "Messages from the bot").splitlines() if line.startswith("| `end` |"))
    for words in ("left out", "the lead", "`stop`", '`"write_off"`/`"decline"`', "mexican_train"):
        assert words in row, row

    def decoded(text: str) -> m.Play:
        msg = msgspec.json.decode(text.encode(), type=m.FromBotMessage)
        assert isinstance(msg, m.Play) and msg.end is None
        return msg

    assert engine_play(decoded('{"type":"play","tile":null,"stop":true}')) == STOP
    assert engine_play(decoded('{"type":"play","tile":null,"declare":"write_off"}')) == WRITE_OFF
    assert engine_play(decoded('{"type":"play","tile":null,"declare":"decline"}')) == DECLINE
    assert engine_play(decoded('{"type":"play","tile":[6,6],"declare":"hundred"}')) == HUNDRED
    assert TRAINS.engine_play(SimpleNamespace(n=2), decoded('{"type":"play","tile":[1,6],"train":"mexican"}')).tile >= 0


def test_the_mexican_train_page_calls_only_a_named_end_illegal_as_the_referee_does():
    """Issue 40 §3: the page called a play with "an `end`" illegal, while every legal entry has
    ``"end": null``: null is no end; a named one is refused."""
    from types import SimpleNamespace

    from protocol import messages as m
    from referee.engine.core.errors import IllegalPlay
    from referee.sides.trains import SIDE as TRAINS

    page = flat(protocol_page("mexican_train"))
    assert "or an `end` is an illegal move" not in page
    assert 'or an `end` that names one (`"end":"left"`; null is as good as none) is an illegal move' in page
    two = SimpleNamespace(n=2)
    TRAINS.engine_play(two, m.Play(tile=(1, 6), end=None, train="mexican"))
    with pytest.raises(IllegalPlay):
        TRAINS.engine_play(two, m.Play(tile=(1, 6), end="left", train="mexican"))
