"""A tiny league says that its order means nothing yet (issue 33 item 6): when no bot's place is
separated by its rating interval, ``league table`` (every format with footnotes) and the league's
report page say that the order is not significant."""

from __future__ import annotations

import dataclasses

import pytest
from support.commands import referee

from referee.base import exitcodes as X
from tests.tournaments.test_league_lines import league_file

NOT_SIGNIFICANT = "no place is separated: every bot's 95% rating interval allows other places, so this order is not significant yet"


@pytest.mark.slow
def test_a_tiny_league_says_its_order_is_not_significant(tmp_path):
    path = league_file(tmp_path)
    before = referee("league", "table", path)
    assert before.returncode == X.OK and NOT_SIGNIFICANT not in before.stdout  # nothing played: nothing to say
    assert referee("league", "run", path, "-q").returncode == X.OK
    for fmt in ("table", "markdown"):
        shown = referee("league", "table", path, "--format", fmt)
        assert shown.returncode == X.OK and NOT_SIGNIFICANT in shown.stdout, shown.stdout
    assert referee("report", path, "-O", tmp_path / "site").returncode == X.OK
    assert NOT_SIGNIFICANT in (tmp_path / "site" / "index.html").read_text().replace("&#39;", "'")


@pytest.mark.slow
def test_a_league_whose_places_are_separated_says_nothing_of_the_kind(tmp_path):
    from tournaments import standings as S
    from tournaments.config import load_league
    from tournaments.store import open_store

    path = league_file(tmp_path)
    assert referee("league", "run", path, "-q").returncode == X.OK
    league = load_league(path)
    store = open_store(league.db_path, create=False)
    assert store is not None
    try:
        s = S.standings(store.secret_seed(league, create=False), store)
    finally:
        store.close()
    assert S.not_separated(s) and any(line.startswith("no place is separated") for line in S.footnotes(s))
    one_pinned = dataclasses.replace(s, rows=[dataclasses.replace(s.rows[0], place_low=1, place_high=1), *s.rows[1:]])
    assert not S.not_separated(one_pinned)
    assert not any(line.startswith("no place is separated") for line in S.footnotes(one_pinned))
