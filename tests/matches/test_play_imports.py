"""A match imports nothing while it plays.

Everything a match needs is imported while it is set up (before the first ``hello`` is
answered), not in its first deal: an import there costs milliseconds (more where bytecode is not
cached) that ``bench.referee`` counted as the referee's work per move, and that the first deal of
every match process in a league would pay.  The structure step (issue 24) made the games' sides
load lazily, and the first deal found them: this is the test that says so.

Each game family is played in a fresh interpreter (this one has imported everything already), by
in-process scripted bots, and the table notes ``sys.modules`` when it has opened and when it
closes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import sys
from functools import partial
from pathlib import Path

import trio

from referee.bots.bot import Bot
from referee.bots.transport import scripted
from referee.conversation.house import BotSource
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.matches.watch import Watch

game, players, deals, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
seen = {}


class Noting(Watch):
    def greeted(self, roster):
        seen["open"] = set(sys.modules)

    def closed(self, player, proc, unread):
        seen.setdefault("close", set(sys.modules))


v = variant(game)
spec = MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], players, v.resolve_options(players, {}), deals=deals, seed=1,
                 log_path=work / "match.jsonl", stderr_dir=work / "stderr")
trio.run(partial(run_match, spec, BotSource(scripted({})[0]), Noting(), handle_signals=False))
print(" ".join(sorted(seen["close"] - seen["open"])))
"""


@pytest.mark.parametrize(("game", "players", "deals"), [("sport", 4, 4), ("osel", 4, 4), ("mexican_train", 2, 7), ("kolbasa", 2, 4)])
def test_a_match_imports_nothing_while_it_plays(tmp_path, game, players, deals):
    done = subprocess.run([sys.executable, "-c", PROGRAM, game, str(players), str(deals), str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"imported during the play of a {game} match: {done.stdout.strip()}"
