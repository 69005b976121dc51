"""run_match's two objects besides the spec: the bot source and the watch (issue 34, item 2).

A watch is told only what it overrides; a match nobody watches for a thing pays nothing for it,
and what a watch sees does not change the match: the same deals, bots and clock write the same
log whatever watches."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import scripted
from referee.conversation.house import PROCESSES, BotSource, House, TableWatch, wants
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.matches.watch import Watch, watching
from referee.records import records as R


def spec_of(tmp_path: Path, name: str, game: str = "block", players: int = 2) -> MatchSpec:
    v = variant(game)
    return MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], players, v.resolve_options(players, {}), games=1, seed=23,
                     tc=TimeControl(startup=5, move=1), log_path=tmp_path / f"{name}.jsonl", stderr_dir=tmp_path / f"{name}.stderr")


def play(spec: MatchSpec, watch: Watch | None) -> bytes:
    launch, _ = scripted({})
    result = trio.run(lambda: run_match(spec, BotSource(launch), watch, block=0, handle_signals=False),
                      clock=trio.testing.MockClock(autojump_threshold=0))
    result.close()
    assert spec.log_path is not None
    return spec.log_path.read_bytes()


def test_a_watch_is_told_only_what_it_overrides():
    class Progress(Watch):
        def progress(self, description: str, advance: int) -> None:
            pass

    class Faults(TableWatch):
        def fault(self, fault) -> None:
            pass

    assert wants(Progress(), "progress", Watch)
    assert not any(wants(Progress(), w, Watch) for w in ("board", "record", "asked", "fault", "closed", "logged"))
    assert wants(Faults(), "fault") and not wants(Faults(), "record")
    assert not wants(None, "record")
    assert watching() is None
    assert wants(watching(board=print), "board", Watch)


def test_what_a_watch_sees_does_not_change_the_log(tmp_path):
    """The same match unwatched, watched for progress, and watched for every record and turn
    (which makes the log build each play's record rather than copy bytes made once per move):
    the same bytes, the mock clock giving the same times."""
    seen: dict[str, int] = {"records": 0, "asked": 0, "deals": 0, "progress": 0}

    class Everything(Watch):
        def record(self, record: R.Record) -> None:
            seen["records"] += 1

        def asked(self, seat, state, turn) -> None:
            seen["asked"] += 1

        def deal_begins(self, game, orientation, deal) -> None:
            seen["deals"] += 1

        def progress(self, description: str, advance: int) -> None:
            seen["progress"] += 1

    plain = play(spec_of(tmp_path, "plain"), None)
    counted = play(spec_of(tmp_path, "progress"), watching(lambda d, a: None))
    watched = play(spec_of(tmp_path, "all"), Everything())
    assert plain == counted == watched
    plays = plain.count(b'{"k":"play"')
    assert seen["asked"] == plays > 0
    assert seen["deals"] == plain.count(b'{"k":"deal",') > 0
    assert seen["progress"] >= 1 and seen["records"] > seen["deals"]


def test_a_watch_that_takes_the_lines_is_the_logs_only_reader(tmp_path):
    """Watch.logged gets the log's lines (verify compares them) and nothing is written to the
    spec's log_path."""
    lines: list[bytes] = []

    class Lines(Watch):
        def logged(self, line: bytes) -> None:
            lines.append(line)

    reference = play(spec_of(tmp_path, "written"), None)
    spec = spec_of(tmp_path, "taken")
    launch, _ = scripted({})
    trio.run(lambda: run_match(spec, BotSource(launch), Lines(), block=0, handle_signals=False),
             clock=trio.testing.MockClock(autojump_threshold=0)).close()
    assert b"".join(lines) == reference
    assert not (tmp_path / "taken.jsonl").exists()


def test_a_cluster_takes_no_watch_at_its_tables(tmp_path):
    """A segment played on a worker has no table here to watch: refused at once, before any
    bot starts (the cluster object is never touched)."""

    class Records(Watch):
        def record(self, record: R.Record) -> None:
            pass

    with pytest.raises(ValueError, match="no watch at its tables"):
        trio.run(lambda: run_match(spec_of(tmp_path, "c"), PROCESSES, Records(), cluster=object(), handle_signals=False))
    with pytest.raises(ValueError, match="no lockstep"):
        trio.run(lambda: run_match(spec_of(tmp_path, "c"), lockstep=True, cluster=object(), handle_signals=False))


def test_a_table_is_made_of_four_things(tmp_path):
    """Table(nursery, players, log, house): everything the same at every table of a match is the
    house; its defaults are real processes and nobody watching."""
    import inspect

    from referee.conversation.table import Table

    assert list(inspect.signature(Table.__init__).parameters) == ["self", "nursery", "players", "log", "house"]
    house = House(TimeControl(), tmp_path)
    assert house.bots is PROCESSES and house.watch is None
    assert list(inspect.signature(run_match).parameters)[:3] == ["spec", "bots", "watch"]


