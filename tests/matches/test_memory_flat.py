"""A long match, and its ``verify``, hold no more than a short one (issue 40 §7): nothing the
referee keeps grows with the deals played.  A match of sport against the in-process stub bot of
``bench.referee`` (no processes), with its log, is played for ``N`` and ``4N`` deals per
orientation under :mod:`tracemalloc`, and so is ``verify`` of its log; the peak of the Python
heap may not grow by a deal's worth of log lines a deal.  The bounded caches and spools are made small
here so that they are full in both matches (what they hold is bounded, and is not the question;
the stub's lines repeat, so the caches of lines heard and what hangs on them stay small).
Nothing here measures time.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tracemalloc
from functools import partial
from pathlib import Path

import pytest
import trio

from bench.referee import StubBot
from referee.audit.verify import verify
from referee.bots.bot import Bot
from referee.conversation.house import BotSource
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # a few thousand deals, traced

SHORT, LONG = 32, 128  # deals per orientation (sport: 4 orientations)
#: before: about 14 KB a deal in the match (a segment's buffer kept every line); after, well
#: under 1 KB, the transient peaks of the boards played ahead of the log and of bounded caches
BYTES_A_DEAL = 2000


def peaks(tmp_path: Path, deals: int) -> tuple[int, int]:
    """The peak of the traced heap over a match of ``deals`` per orientation, and over its verify."""
    v = variant("sport")
    log = tmp_path / f"m{deals}.jsonl"
    spec = MatchSpec(v, [Bot("A", ["stub"]), Bot("B", ["stub"])], 4, v.resolve_options(4, {}), deals=deals, seed=7,
                     log_path=log, stderr_dir=tmp_path / f"m{deals}.stderr")
    gc.collect()
    tracemalloc.start()
    try:
        with trio.run(partial(run_match, spec, BotSource(StubBot.launch))):
            match = tracemalloc.get_traced_memory()[1]
        gc.collect()
        tracemalloc.reset_peak()
        verify(log)
        checked = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return match, checked


def _peaks_in_a_fresh_interpreter(tmp_path: Path) -> list[tuple[int, int]]:
    """Warm, short and long peaks, measured in a process of their own: tracemalloc counts every
    thread's allocations, and a worker of the suite may still run threads of earlier tests (in CI
    both long peaks once grew by the same 2.2 MB, at the end of a loaded run)."""
    code = ("import json, sys, pathlib, pytest\n"
            "from referee.conversation import handmade\n"
            "from referee.matches import results\n"
            "from tests.matches import test_memory_flat as t\n"
            "mp = pytest.MonkeyPatch()\n"
            "mp.setattr(handmade, 'HANDS_KEPT', 64)\n"
            "mp.setattr(results, 'SPOOL_MEMORY', 4096)\n"
            "where = pathlib.Path(sys.argv[1])\n"
            "print(json.dumps([t.peaks(where, n) for n in (4, t.SHORT, t.LONG)]))\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=600,
                       stdin=subprocess.DEVNULL, check=False)
    assert r.returncode == 0, r.stderr
    return [tuple(p) for p in json.loads(r.stdout.splitlines()[-1])]


def test_a_long_match_and_its_verify_hold_no_more_than_a_short_ones(tmp_path):
    _, short, long = _peaks_in_a_fresh_interpreter(tmp_path)  # the first warms: imports, the engine's and the protocol's tables
    more = 2 * (LONG - SHORT)  # deals played: two bots in pairs play two orientations
    assert (long[0] - short[0]) / more < BYTES_A_DEAL, (short, long)
    assert (long[1] - short[1]) / more < BYTES_A_DEAL, (short, long)
