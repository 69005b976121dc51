"""``python -m bench.ladder --host``: the host's overhead per table, on a small field, prints a row
per size with every part measured (figures are printed, never asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.ladder import main as ladder_main
from bench.ladder_host import stub_record
from tournaments.wire import TableRecord

ROOT = Path(__file__).resolve().parents[2]


def test_the_host_mode_prints_a_row_per_field_size(capsys):
    assert ladder_main(["--host", "--fields", "4,8", "--tables", "3"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+ ", line)]
    assert [int(r.split()[0]) for r in rows] == [4, 8]
    assert all(len(re.findall(r"\d+\.\d\d", r)) == 5 for r in rows)  # choice, storage, refit, CPU total, wall


def test_a_stub_record_is_a_result_the_store_takes():
    record = stub_record(["a", "b"], 2.5)
    assert isinstance(record, TableRecord)
    assert record.result.names == ["a", "b"] and record.result.ahead == "a"
    assert record.margins == [[2.5, -2.5]] * 4 and len(record.result.deals) == 8


@pytest.mark.slow  # a local Dask cluster of two worker processes
def test_the_cluster_rows_go_through_the_hosts_cluster_path():
    """In a process of its own, as the cluster tests run theirs (a local cluster leaves its process
    server to the interpreter's exit)."""
    pytest.importorskip("distributed")
    run = subprocess.run(
        [sys.executable, "-m", "bench.ladder", "--host", "--fields", "4", "--tables", "2", "--cluster", "local:2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    assert "--cluster local:2" in run.stdout
    rows = [line for line in run.stdout.splitlines() if re.match(r"\s+\d+ ", line)]
    assert [int(r.split()[0]) for r in rows] == [4, 4]  # the field here, and through the cluster
    assert all(len(re.findall(r"\d+\.\d\d", r)) == 5 for r in rows)


def test_a_fresh_field_chooses_and_stores_tables_until_certified(tmp_path):
    """The host's own path with ``--until certified`` from its first table (no warm-up): every look
    for certification reads the choice's ratings, empty at first, and the outcomes they lag behind,
    and says what the exact solve of every outcome says."""
    import trio

    from bench.ladder_host import Field

    field = Field(6, tmp_path)
    try:
        host = field.host
        said = []

        async def run() -> None:
            for number in range(60):
                exact = len(host.in_all) >= 2 and all(m.verdict != "open" for m in host.for_all.marks())
                table = await host.next_table(number)
                said.append((table is None, exact))
                if table is None:
                    return
                field.store_table(table, field.result(table))

        trio.run(run)
        assert all(stopped == exact for stopped, exact in said)
        assert len(said) >= 30
    finally:
        field.close()
