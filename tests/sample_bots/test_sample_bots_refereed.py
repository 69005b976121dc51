"""Every sample bot (Python, Node and both C bots) plays whole games of every game through the real
referee without a fault: sport and kozel, draw, block and club, the cross games, sea_kozel,
general and blitz, mexican_train's seven rounds in every rotation, and kolbasa to the goat.

(tests/sample_bots/test_sample_bots.py drives each bot through a scripted transcript; this file puts them at
the table with the referee's processes, clocks and fault checks.)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import trio

from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.spawn import resolve_command
from referee.engine import variant, variant_names
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

pytestmark = pytest.mark.slow  # matches of real bot processes (or a long property sweep): the full run

BOTS = Path(__file__).resolve().parents[2] / "sample_bots"


@pytest.fixture(scope="module")
def c_dir(tmp_path_factory) -> Path:
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("no C compiler (cc) or make")
    out = tmp_path_factory.mktemp("cbots")
    done = subprocess.run(["make", "-C", str(BOTS / "c"), f"OUT={out}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


#: Every sample bot (the C ones built by the Makefile into c_dir).
EVERY_BOT = ["random_bot.py", "greedy_bot.py", "first_bot.py", "random_bot.js", "c/random_bot", "c/echo_first"]


def command(bot: str, c_dir_factory) -> list[str]:
    if bot.endswith(".js") and shutil.which("node") is None:
        pytest.skip("node is not installed")
    if bot.startswith("c/"):
        return [str(c_dir_factory() / bot.removeprefix("c/"))]
    return resolve_command(str(BOTS / bot))


@pytest.mark.parametrize("bot", EVERY_BOT)
@pytest.mark.parametrize("game, amount", [("sport", 4), ("kozel", 1)])
def test_sample_bot_plays_legally_through_the_referee(bot, game, amount, request, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_SEED", "3")
    argv = command(bot, lambda: request.getfixturevalue("c_dir"))
    v = variant(game)
    opponent = Bot("first", resolve_command(str(BOTS / "first_bot.py")))
    spec = MatchSpec(
        v, [Bot("candidate", argv), opponent], 4, v.resolve_options(4),
        deals=amount if not v.to_target else None, games=amount if v.to_target else None, seed=9,
        tc=TimeControl(startup=20, move=10), log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "err",
    )
    result = trio.run(run_match, spec)
    data = msgspec.to_builtins(result.whole())
    assert data["faults"] == []
    assert not data["interrupted"]
    assert len(data["deals"]) >= (8 if game == "sport" else 2)
    assert all(d["end"] in ("domino", "fish") for d in data["deals"])
    assert data["bots"][0]["hello"] is not None


def plays_one_game_without_a_fault(argv: list[str], game: str, players: int, options: dict, tmp_path: Path) -> None:
    """The candidate plays one whole game against first_bot (as many of them as the table needs)
    without a fault, and the log verifies."""
    from referee.audit.verify import verify

    v = variant(game)
    pairs = v.new_game(players, options).pair_play
    bots = [Bot("candidate", argv)] + [Bot(f"first{i}", resolve_command(str(BOTS / "first_bot.py"))) for i in range(1, 2 if pairs else players)]
    spec = MatchSpec(
        v, bots, players, v.resolve_options(players, options), games=1, seed=11,
        tc=TimeControl(startup=20, move=10), log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "err",
    )
    result = trio.run(run_match, spec)
    data = msgspec.to_builtins(result.whole())
    assert data["faults"] == []
    assert not data["interrupted"]
    assert all(d["end"] in ("domino", "fish") for d in data["deals"])
    assert verify(tmp_path / "m.jsonl").plays > 0


@pytest.mark.parametrize("bot", EVERY_BOT)
@pytest.mark.parametrize("game, players", [("draw", 3), ("block", 2), ("club", 4)])
def test_sample_bot_plays_the_line_games_with_and_without_a_bazaar_legally(bot, game, players, request, tmp_path, monkeypatch):
    """A whole game to its target: draws and passes the referee makes for the bot, forced leads,
    without a fault, and the log verifies."""
    monkeypatch.setenv("BOT_SEED", "5")
    plays_one_game_without_a_fault(command(bot, lambda: request.getfixturevalue("c_dir")), game, players, {}, tmp_path)


@pytest.mark.parametrize("bot", EVERY_BOT)
@pytest.mark.parametrize("game, players", [("osel", 4), ("osel", 3), ("telephone", 4), ("telephone", 2), ("muggins", 2), ("muggins", 3)])
def test_sample_bot_plays_the_cross_games_legally(bot, game, players, request, tmp_path, monkeypatch):
    """Closed doubles, stop and the turn's id echoed (where the bot does) all go through the
    referee without a fault, and the log verifies."""
    monkeypatch.setenv("BOT_SEED", "5")
    plays_one_game_without_a_fault(command(bot, lambda: request.getfixturevalue("c_dir")), game, players, {}, tmp_path)


@pytest.mark.parametrize("bot", EVERY_BOT)
@pytest.mark.parametrize("game, players, options", [("sea_kozel", 4, {}), ("sea_kozel", 2, {}), ("general", 4, {"max_deals": 10}),
                                                    ("blitz", 4, {})])
def test_sample_bot_plays_sea_kozel_general_and_blitz_legally(bot, game, players, options, request, tmp_path, monkeypatch):
    """Second doubles, stop, blitz chains and sea_kozel's declarations (a hundred, writing off or
    declining a fish) all go through the referee without a fault, and the log verifies."""
    monkeypatch.setenv("BOT_SEED", "5")
    plays_one_game_without_a_fault(command(bot, lambda: request.getfixturevalue("c_dir")), game, players, options, tmp_path)


@pytest.mark.parametrize("bot", EVERY_BOT)
@pytest.mark.parametrize("game, players", [("mexican_train", 2), ("mexican_train", 3), ("mexican_train", 4)])
def test_every_sample_bot_plays_mexican_train_legally(bot, game, players, request, tmp_path, monkeypatch):
    """Seven rounds of trains, markers and doubles to cover, the candidate echoing each legal
    entry's train, without a fault; the log verifies."""
    from referee.audit.verify import verify

    monkeypatch.setenv("BOT_SEED", "5")
    v = variant(game)
    argv = command(bot, lambda: request.getfixturevalue("c_dir"))
    bots = [Bot("candidate", argv)] + [Bot(f"first{i}", resolve_command(str(BOTS / "first_bot.py"))) for i in range(1, players)]
    spec = MatchSpec(v, bots, players, {}, deals=7, seed=11, tc=TimeControl(startup=20, move=10),
                     log_path=tmp_path / "m.jsonl", stderr_dir=tmp_path / "err")
    data = msgspec.to_builtins(trio.run(run_match, spec).whole())
    assert data["faults"] == [] and not data["interrupted"]
    assert len(data["deals"]) == 7 * players  # every rotation of the seating plays the seven rounds
    assert verify(tmp_path / "m.jsonl").plays > 0


@pytest.mark.parametrize("bot", EVERY_BOT)
@pytest.mark.parametrize("game", ["kolbasa"])
def test_every_sample_bot_plays_kolbasa_legally(bot, game, request, tmp_path, monkeypatch):
    """Places (line ends, inserted doubles, knives) chosen from turn.legal, each entry's place
    echoed where line games have an end, go through the referee without a fault, a whole game to
    the goat in both orientations, and the log verifies."""
    monkeypatch.setenv("BOT_SEED", "5")
    plays_one_game_without_a_fault(command(bot, lambda: request.getfixturevalue("c_dir")), game, 2, {}, tmp_path)


def test_a_protocol_library_bot_plays_kolbasa_and_follows_the_rows(tmp_path):
    """A bot written on protocol.bot answers kolbasa turns with a legal entry (its place carried
    into the play) and its state keeps the rows and the lines the turn gives."""
    script = tmp_path / "lib_bot.py"
    root = Path(__file__).resolve().parents[2]
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from protocol.bot import run\n"
        "def choose(turn, state):\n"
        "    assert state.rows and state.lines is not None and len(state.rows) == 2\n"
        "    assert [len(r) for r in state.rows] == state.counts\n"
        "    return turn.legal[-1]\n"
        "run(choose, name='lib')\n"
    )
    plays_one_game_without_a_fault([sys.executable, str(script)], "kolbasa", 2, {}, tmp_path)


def test_every_game_the_engine_knows_is_played_by_every_sample_bot():
    """A game added to the engine gets a line in one of the tests above, or this fails."""
    played = set()
    for name, test in globals().items():
        if not name.startswith("test_"):
            continue
        marks = {m.args[0]: m.args[1] for m in getattr(test, "pytestmark", []) if m.name == "parametrize"}
        if marks.get("bot") != EVERY_BOT:
            continue
        for argnames, values in marks.items():
            names = [a.strip() for a in argnames.split(",")]
            if names[0] == "game":
                played |= {v[0] if len(names) > 1 else v for v in values}
    assert set(variant_names()) - played == set()
