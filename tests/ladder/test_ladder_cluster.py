"""``referee ladder run --cluster local:2``: the tables are played as tasks on a Dask cluster and the
ladder stores exactly what a host playing them here stores (the choice is the host's alone)."""

from __future__ import annotations

import pytest

from tests.ladder.test_host import FIELD, PER_TABLE, done, ladder_toml, query, referee, write
from tournaments.ladder.store import dump

pytestmark = pytest.mark.slow  # a cluster of worker processes, real bots
pytest.importorskip("distributed")


def test_a_ladder_on_a_cluster_stores_what_a_ladder_here_stores(tmp_path):
    path = write(tmp_path, ladder_toml(FIELD))
    limit = str(4 * PER_TABLE)
    here = referee("ladder", "run", str(path), "--db", str(tmp_path / "here.db"), "-j", "2", "--max-deals", limit, "-q")
    assert here.returncode == 0, here.stderr
    there = referee("ladder", "run", str(path), "--db", str(tmp_path / "there.db"), "-j", "2", "--max-deals", limit, "-q",
                    "--cluster", "local:2")
    assert there.returncode == 0, there.stderr
    assert len(done(tmp_path / "there.db")) == 4
    assert repr(dump(tmp_path / "there.db")).replace("there-logs/", "here-logs/") == repr(dump(tmp_path / "here.db"))
    assert len(list((tmp_path / "there-logs").glob("table-*.jsonl"))) == 4
    assert query(tmp_path / "there.db", "SELECT * FROM in_play") == []
