"""Typed results (referee.matches.results): ``--json`` and a league's stored result round-trip through the
structs unchanged, the printed tables are the same a block at a time, and a match keeps no
per-deal objects (issue 9 item 5: memory flat in the number of deals)."""

from __future__ import annotations

import gc
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import msgspec
import pytest
import trio
from rich.console import Console

from bench.referee import StubBot
from referee.bots.bot import Bot
from referee.conversation.house import BotSource
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.report import blocks, deal_row, deals_table, game_row, games_table, render
from referee.matches.results import (
    JSON_KEYS,
    SPOOL_MEMORY,
    DealResult,
    MatchJson,
    MatchRecord,
    MatchResult,
    encode_record,
    json_chunks,
    record_of,
)
from referee.matches.spec import MatchSpec


def stub_match(tmp_path: Path, game: str = "sport", deals: int | None = 8, games: int | None = None, players: int = 4,
               bots: int = 2) -> MatchResult:
    v = variant(game)
    spec = MatchSpec(v, [Bot(f"b{i}", ["stub"]) for i in range(bots)], players, v.resolve_options(players, {}),
                     deals=deals, games=games, seed=5, log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "err")
    return trio.run(partial(run_match, spec, BotSource(StubBot.launch), handle_signals=False))


CASES = [("sport", 8, None, 4, 2), ("kozel", None, 2, 4, 2), ("draw", None, 1, 3, 3)]


@pytest.mark.parametrize(("game", "deals", "games", "players", "bots"), CASES)
def test_the_json_streamed_is_the_whole_result_and_round_trips(tmp_path, game, deals, games, players, bots) -> None:
    with stub_match(tmp_path, game, deals, games, players, bots) as result:
        whole = msgspec.to_builtins(result.whole())
        text = "".join(json_chunks(result.summary(), result.deals, result.games))
        assert whole["deals"] and (game == "sport" or whole["game_results"])
        assert text == json.dumps({k: whole[k] for k in JSON_KEYS}, indent=2, ensure_ascii=False) + "\n"
        # --json read back into the structs gives the same file again.
        back = msgspec.json.decode(text, type=MatchJson)
        again = msgspec.to_builtins(back)
        assert json.dumps({k: again[k] for k in JSON_KEYS}, indent=2, ensure_ascii=False) + "\n" == text
        # The league's record: streamed, decoded as the league decodes it, and stored as before.
        line = b"".join(encode_record(result, b'"k":"result",'))
        record = msgspec.json.decode(line, type=MatchRecord)
        assert record == record_of(result)
        assert json.dumps(msgspec.to_builtins(record.result), sort_keys=True) == json.dumps(whole, sort_keys=True)
        assert record.boards == list(result.unit_margins(0)) and len(record.boards) == result.tally.count
        # The log's result record is the summary.
        last = json.loads((tmp_path / "m.jsonl").read_bytes().splitlines()[-1])
        assert last.pop("k") == "result" and last == {k: v for k, v in whole.items() if k not in ("deals", "game_results")}


@pytest.mark.parametrize("width", [40, 70, 200])
def test_tables_printed_a_block_at_a_time_read_as_one_table(tmp_path, width) -> None:
    with stub_match(tmp_path, "kozel", None, 2) as result:
        summary = result.summary()
        for make, rows in ((lambda: deals_table(summary), lambda: [deal_row(summary, d) for d in result.deals]),
                           (lambda: games_table(summary), lambda: [game_row(summary, g) for g in result.games])):
            whole, parts = Console(width=width, record=True), Console(width=width, record=True)
            table = make()
            for row in rows():
                table.add_row(*row)
            whole.print(table)
            for t in blocks(parts, make, rows, block=2):
                parts.print(t)
            assert len(rows()) > 2 and parts.export_text() == whole.export_text()


def test_a_match_keeps_no_deal_results_in_memory(tmp_path) -> None:
    """Every deal's result is spooled: none is alive after the match, and the spool moved to a
    file once past its memory."""
    with stub_match(tmp_path, deals=200) as result:
        gc.collect()
        assert not [o for o in gc.get_objects() if isinstance(o, DealResult)]
        assert len(result.deals) == 400 and result.deals._file is not None and not result.deals._memory
        assert 400 * 200 > SPOOL_MEMORY  # (a deal's line is about 300 bytes)
        assert sum(1 for _ in result.deals) == 400  # read back, once for each reader
        assert [d.deal for d in result.deals][:3] == [0, 0, 1]
        console = Console(width=120, file=io.StringIO())
        render(result.summary(), result.deals, result.games, console)
        assert console.file.getvalue().count("\n") > 400


@pytest.mark.slow
def test_live_objects_do_not_grow_with_the_deals(tmp_path) -> None:
    """A generous structural check: ten times the deals leaves fewer extra live objects than
    extra deals (a result kept per deal would leave several per deal; measured: 3 in all)."""
    counts = []
    for deals in (40, 400):
        with stub_match(tmp_path / str(deals), deals=deals) as result:
            gc.collect()
            counts.append(len(gc.get_objects()))
            assert result.tally.count == deals
    assert counts[1] - counts[0] < 400 - 40


def test_a_league_stores_the_result_it_was_handed_and_reads_it_back_the_same(tmp_path) -> None:
    """The league database's result column round-trips through MatchJson, and its other columns
    are the record's fields."""
    from tournaments import wire
    from tournaments.schedule import TableKey
    from tournaments.store import Finished, open_store
    from tournaments.worker import encode_table

    with stub_match(tmp_path, "kozel", None, 2) as result:
        msg = wire.decode(b"".join(encode_table(result, wire.RESULT_TAG)))  # the line as the league reads it
        assert isinstance(msg, wire.Result)
        record = msg.record()
        assert type(record) is wire.TableRecord and b'"k"' not in msgspec.json.encode(record)  # stored without its tag
        assert msgspec.json.decode(b"".join(encode_record(result)), type=MatchRecord).boards == record.boards
    store = open_store(tmp_path / "league.db", create=True)
    assert store is not None
    with store:
        store.record(Finished(TableKey(0, ("b0", "b1")), 1.0, 2.0, "m.jsonl", record))
        text, deals, games, boards = store.conn.execute("SELECT result, deals, games, boards FROM matches").fetchone()
        points_a = store.conn.execute("SELECT points FROM seats WHERE seat = 0").fetchone()[0]
    assert text == json.dumps(msgspec.to_builtins(record.result), sort_keys=True, ensure_ascii=False)
    back = msgspec.json.decode(text, type=MatchJson)
    assert back == record.result
    assert (deals, games, points_a, boards) == (len(back.deals), len(back.game_results), back.totals[0].points, len(record.boards))


@contextmanager
def level_as_fractions() -> Iterator[MatchResult]:
    """The result of a mexican_train table of four whose one board is
    :data:`tests.stats.test_stats.LEVEL_AS_FRACTIONS` (A and B level as fractions, apart as
    floats), recorded as the match records a finished board."""
    from referee.conversation.players import Entry
    from referee.matches.match import orientations
    from tests.stats.test_stats import LEVEL_AS_FRACTIONS

    v = variant("mexican_train")
    opts = v.resolve_options(4, {})
    bots = [Bot(name, [name]) for name in "ABCD"]
    spec = MatchSpec(v, bots, 4, opts, deals=1, seed=5)
    with MatchResult(spec, orientations(v, 4, opts, 4), [Entry(b, i, spec.tc) for i, b in enumerate(bots)]) as result:
        for o, net in enumerate(LEVEL_AS_FRACTIONS):
            result._played(0, o, net)
        yield result


def test_bots_level_as_fractions_share_a_place_in_the_result_and_draw_in_the_league(tmp_path) -> None:
    """Issue 40: two bots of a mexican_train table of four level as fractions, whose margins the
    floats put apart in the last bit (summed in another order), share their place in the match's
    result, and the league stores a draw between them, not a win."""
    from tournaments.config import Points
    from tournaments.schedule import TableKey
    from tournaments.standings import table_points
    from tournaments.store import Finished, open_store
    from tournaments.worker import TableRecord, encode_table

    with level_as_fractions() as result:
        standings = result.summary().ranking.standings
        assert [(s.bot, s.place) for s in standings] == [("D", 1), ("A", 2), ("B", 2), ("C", 4)]
        record = msgspec.json.decode(b"".join(encode_table(result, b'"k":"result",')), type=TableRecord)
    assert record.margins[0][0] == record.margins[0][1]  # the ratings' finishing order sees them level too
    store = open_store(tmp_path / "league.db", create=True)
    assert store is not None
    with store:
        store.record(Finished(TableKey(0, ("A", "B", "C", "D")), 1.0, 2.0, "m.jsonl", record))
        (row,) = store.tables()
    league = type("League", (), {"points": Points()})()
    assert {s.bot: s.place for s in row.seats} == {"A": 2, "B": 2, "C": 4, "D": 1}
    # against D a loss (0), against C a win (2), against each other a draw (1): 3 each
    assert table_points(league, row, "A") == table_points(league, row, "B") == 3


def test_verify_takes_a_tie_logged_before_it_was_exact_and_nothing_else() -> None:
    """A log written before bots level as fractions shared a place has them 2nd and 3rd (the
    floats' order) and may name one ``ahead``: verify takes that ranking as the log has it, as
    long as every bot's own figures agree and only bots level today are placed apart."""
    import copy

    from referee.audit.inconsistency import older_ties

    with level_as_fractions() as result:
        mine = msgspec.to_builtins(result.summary())
    d, a, b, c = mine["ranking"]["standings"]
    assert [r["bot"] for r in (d, a, b, c)] == list("DABC") and a["place"] == b["place"] == 2
    logged = copy.deepcopy(mine)
    old_b, old_a = copy.deepcopy(b), copy.deepcopy(a)
    old_b["place"], old_a["place"], old_b["los_next"], old_a["los_next"] = 2, 3, 0.5, 0.9
    logged["ranking"]["standings"] = [d, old_b, old_a, c]
    taken = copy.deepcopy(mine)
    older_ties(taken, logged)
    assert taken == logged
    # Not taken: a bot alone in its place moved, or a bot's own figures changed.
    for tamper in ([d, old_b, c, old_a], [d, {**old_b, "los": 0.1}, old_a, c]):
        bad = copy.deepcopy(mine)
        bad_log = copy.deepcopy(logged)
        bad_log["ranking"]["standings"] = copy.deepcopy(tamper)
        older_ties(bad, bad_log)
        assert bad == mine
