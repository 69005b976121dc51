"""A bot that keeps faulting in play is suspended (``[ladder] suspend_after`` tables in a row at
which it forfeited), not left forfeiting points to its opponents for ever; its results stay."""

from __future__ import annotations

import json

import pytest

from referee.base import exitcodes as X
from tests.ladder.test_host import FIELD, ROOT, done, hosting, ladder_toml, query, referee, stop, wait_for, write

pytestmark = pytest.mark.slow  # a real host


def test_a_bot_that_breaks_after_its_check_is_suspended_after_suspend_after_forfeits(tmp_path):
    path = write(tmp_path, ladder_toml(FIELD[:2], extra="max_faults = 1\n[ladder]\nsuspend_after = 2\n"))
    db = tmp_path / "ladder.db"
    flag = tmp_path / "broken"
    added = referee("ladder", "add", str(path), "breaks", "--", str(ROOT / "tests" / "ladder" / "bots" / "breaks_bot.py"), str(flag))
    assert added.returncode == 0, added.stdout + added.stderr  # it passes its check: it is not broken yet
    flag.write_text("")  # now it is
    with hosting(str(path), "-j", "2") as proc:
        why = wait_for(lambda: query(db, "SELECT suspended_from, suspended_why FROM ladder_entries WHERE name = 'breaks' "
                                         "AND suspended_from IS NOT NULL"), proc)[0]
        since = why[0]
        assert "forfeited" in why[1] and "2 in a row" in why[1]
        wait_for(lambda: len([r for r in done(db) if r[0] >= since]) >= 3, proc)
        status = json.loads(referee("ladder", "status", str(path), "-f", "json").stdout)
        code, err = stop(proc)
    assert code == X.INTERRUPTED, err
    assert "breaks is suspended" in err
    chosen = query(db, "SELECT number, bots FROM ladder_tables ORDER BY number")
    assert all("breaks" not in bots.split(",") for number, bots in chosen if number >= since)
    assert any("breaks" in bots.split(",") for _, bots in done(db))  # its tables stay
    assert {e["name"]: e["state"] for e in status["entries"]}["breaks"] == "suspended"
