"""League tables that say what ranks them and how sure they are: the ranking rule, a legend for
every column, the places each rating allows (overlapping intervals share places), and gauntlet
ratings relative to the gauntlet bot, in every format."""

from __future__ import annotations

import csv
import io

import pytest

from tests.tournaments.test_league import FOUR, cli, league_toml, referee, table_json, write_league
from tournaments import ratings
from tournaments.standings import HEADERS, LEGEND, TEXT_HEADERS

pytestmark = pytest.mark.slow  # leagues of real bot processes


def test_an_anchored_fit_keeps_the_differences_and_puts_the_anchor_at_zero():
    names = ["g", "a", "b", "c"]
    outcomes = [("g", "a", 1.0), ("g", "a", 0.0), ("g", "a", 1.0), ("g", "b", 0.0), ("g", "b", 0.5), ("g", "c", 1.0)] * 3
    centred = ratings.fit(names, outcomes)
    anchored = ratings.fit(names, outcomes, anchor="g")
    assert anchored["g"].rating == 0 and anchored["g"].low == anchored["g"].high == 0
    for n in names:
        assert anchored[n].rating == pytest.approx(centred[n].rating - centred["g"].rating)
    # The interval of a difference from the anchor is wider than that of a centred rating.
    assert all(anchored[n].half > centred[n].half for n in "abc")
    with pytest.raises(ValueError, match="anchor"):
        ratings.fit(names, outcomes, anchor="nobody")


@pytest.fixture(scope="module")
def gauntlet(tmp_path_factory):
    path = write_league(tmp_path_factory.mktemp("gauntlet"), league_toml(FOUR[:3], head='schedule = "gauntlet"\ngauntlet = "first"'))
    done = referee("league", "run", str(path), "-q")
    assert done.returncode == 0, done.stderr
    return path


def test_gauntlet_ratings_are_relative_to_the_gauntlet_bot(gauntlet):
    data = table_json(gauntlet)
    rows = {r["bot"]: r for r in data["standings"]}
    assert data["rating_reference"] == "first"
    assert rows["first"]["rating"] == rows["first"]["rating_low"] == rows["first"]["rating_high"] == 0
    assert "relative to first, the gauntlet bot" in data["rating_method"]
    text = cli("league", "table", str(gauntlet))
    assert "(ref.)" in text.stdout and "relative to first" in " ".join(text.stdout.split())


def test_places_follow_the_rating_intervals(gauntlet):
    rows = table_json(gauntlet)["standings"]
    n = len(rows)
    for r in rows:
        above = sum(1 for o in rows if o["rating_low"] > r["rating_high"])
        below = sum(1 for o in rows if o["rating_high"] < r["rating_low"])
        assert (r["place_low"], r["place_high"]) == (1 + above, n - below)


def test_the_table_says_what_ranks_it_and_has_a_legend_for_every_column(gauntlet):
    data = table_json(gauntlet)
    assert data["rank_rule"].startswith("ranked by match points, then the points difference")
    keys = [k for entry in data["legend"] for k in entry["keys"]]
    assert sorted(keys) == sorted(HEADERS)  # every csv/json column explained
    headers = " ".join(h for h, _, _ in LEGEND).split()
    assert sorted(headers) == sorted(TEXT_HEADERS)  # and every column of the printed table
    text = " ".join(cli("league", "table", str(gauntlet)).stdout.split())
    md = cli("league", "table", str(gauntlet), "--format", "markdown").stdout
    for out in (text, md):
        assert "ranked by match points" in out
        assert "places: the places the rating allows" in out
        assert "pts: match points ([points] of the league file)" in " ".join(out.split())
    r = cli("league", "table", str(gauntlet), "--format", "csv")
    row = next(csv.DictReader(io.StringIO(r.stdout)))
    assert {"place_low", "place_high"} <= row.keys() and "ranked by match points" in r.stderr


def test_no_legend_leaves_the_legend_out_and_keeps_the_footnotes(gauntlet):
    """Issue 40: the 9–12 lines of legend under every `league table` could not be turned off."""
    legend = "pts: match points ([points] of the league file)"
    for fmt in ("table", "markdown"):
        with_it = cli("league", "table", str(gauntlet), "--format", fmt).stdout
        without = cli("league", "table", str(gauntlet), "--format", fmt, "--no-legend").stdout
        assert legend in " ".join(with_it.split()) and legend not in " ".join(without.split())
        assert "ranked by match points" in without  # the footnotes stay
        assert len(without.splitlines()) < len(with_it.splitlines()) - 8
