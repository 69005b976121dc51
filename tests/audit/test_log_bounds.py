"""Logs as an attack (issue 42 item 5): ``verify``, ``replay`` and ``report`` read a log a line at
a time within the referee's bounds (:class:`referee.records.records.Bounds`): a line longer than
the referee's longest, more bytes than the match its header describes can write, or empty lines
in bulk are refused in one line with exit 2, in bounded memory and time; a compressed log is
inflated a chunk at a time, so a small file that inflates to gigabytes never does so at once.

The bombs are written streamed (zlib a chunk at a time), and each command runs in a child with
its address space capped at 1 GiB: before, one 4 GiB line in a 4 MB ``.jsonl.gz`` made replay
and report die of a MemoryError and verify run to the cap, and 262 KB of gzip holding 256 MiB of
empty lines cost each command 1.19 GiB and minutes."""

from __future__ import annotations

import resource
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from referee.bots.bot import Bot
from referee.bots.transport import scripted
from referee.conversation.house import BotSource
from referee.engine import variant
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.records import records as R

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20
#: the address space of each command's process: far below what the bombs inflate to
CAP = 1 << 30


def small_match(tmp_path: Path) -> Path:
    """A real log of a short block match (one game, at most two deals an orientation), played in
    process: its header bounds the log to 2 × 2 deals."""
    v = variant("block")
    spec = MatchSpec(v, [Bot("A", ["a"]), Bot("B", ["b"])], 2, v.resolve_options(2), games=1, seed=3, deal_limit=2,
                     log_path=tmp_path / "real.jsonl", stderr_dir=tmp_path / "stderr")
    launch, _ = scripted({})
    trio.run(lambda: run_match(spec, BotSource(launch), block=0, handle_signals=False), clock=trio.testing.MockClock(autojump_threshold=0))
    return spec.log_path


def write(path: Path, parts: Iterator[bytes], compressed: bool) -> None:
    """The parts written one by one, gzip-compressed a part at a time when ``compressed``."""
    with open(path, "wb") as f:
        zipper = zlib.compressobj(9, zlib.DEFLATED, 31) if compressed else None
        for part in parts:
            f.write(zipper.compress(part) if zipper else part)
        if zipper:
            f.write(zipper.flush())


def one_long_line(header: bytes, size: int) -> Iterator[bytes]:
    yield header
    yield b'{"k":"out","seat":0,"t":0.1,"msgs":["'
    for _ in range(size // MIB):
        yield b"x" * MIB
    yield b'"]}\n'


def empty_lines(header: bytes, size: int) -> Iterator[bytes]:
    yield header
    for _ in range(size // MIB):
        yield b"\n" * MIB


def records_past_the_total(lines: list[bytes], size: int) -> Iterator[bytes]:
    """The real log's first records, then its ``out`` records again and again (each a record
    replay takes) until ``size`` bytes: far more than the 2 × 2 deals of its header write."""
    outs = [line for line in lines if line.startswith(b'{"k":"out"')]
    yield from lines[:3]
    written = 0
    while written < size:
        for line in outs:
            yield line
            written += len(line)


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True, timeout=600,
                          preexec_fn=capped, cwd=cwd)


COMMANDS = {
    "verify": lambda log, tmp: ("verify", log),
    "replay": lambda log, tmp: ("replay", log),
    "report": lambda log, tmp: ("report", log, "-O", tmp / "site"),
}


@pytest.mark.slow  # each command inflates and refuses tens of MiB: a few seconds
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("bomb", "compressed", "says"), [
    ("long line", True, "line 2 is longer than 16 MiB, the longest the referee reads in a log"),
    ("long line", False, "line 2 is longer than 16 MiB, the longest the referee reads in a log"),
    ("empty lines", True, "more than 1024 empty lines (the referee writes none)"),
])
def test_a_log_bomb_is_refused_in_one_line_within_bounded_memory(tmp_path, command: str, bomb: str, compressed: bool, says: str) -> None:
    header = small_match(tmp_path).read_bytes().splitlines(keepends=True)[0]
    log = tmp_path / ("bomb.jsonl.gz" if compressed else "bomb.jsonl")
    write(log, one_long_line(header, 64 * MIB) if bomb == "long line" else empty_lines(header, 64 * MIB), compressed)
    if compressed:
        assert log.stat().st_size < MIB  # a small file, 64 MiB inflated
    proc = run(*COMMANDS[command](log, tmp_path), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{log}: {says}" in lines[0], proc.stderr


@pytest.mark.slow
def test_a_log_larger_than_its_header_allows_is_refused(tmp_path) -> None:
    """Records a replay takes, one after another, past what 2 × 2 deals can write: replay stops
    at the bound instead of reading on (here 256 MiB; the bound of this header is 176 MiB)."""
    lines = small_match(tmp_path).read_bytes().splitlines(keepends=True)
    header = R.decode(lines[0])
    assert isinstance(header, R.Header)
    bounds = R.Bounds()
    bounds.fit(header)
    assert bounds.total == 4 * R.DEAL_BYTES + R.MATCH_BYTES + 2 * R.BOT_BYTES + bounds.line
    log = tmp_path / "flood.jsonl.gz"
    write(log, records_past_the_total(lines, 256 * MIB), compressed=True)
    proc = run("replay", log, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"{log}: larger than 176 MiB, the most the match its header describes can write" in proc.stderr


def test_the_bounds_leave_a_real_log_alone(tmp_path) -> None:
    """A real log, plain and compressed, in any case of its name, reads whole within its bounds."""
    real = small_match(tmp_path)
    lines = real.read_bytes().splitlines(keepends=True)
    for name, compressed in (("a.jsonl", False), ("b.jsonl.gz", True), ("c.JSONL.GZ", True)):
        copy = tmp_path / name
        write(copy, iter(lines), compressed)
        assert [raw for _, _, raw in R.read_records(copy)] == lines


def test_a_line_is_refused_as_it_grows_not_once_it_is_whole(tmp_path) -> None:
    """The line bound is checked a chunk at a time: a reader refuses a line as soon as it is
    longer than the bound, holding no more of it than the bound and a chunk."""
    log = tmp_path / "long.jsonl.gz"
    write(log, one_long_line(small_match(tmp_path).read_bytes().splitlines(keepends=True)[0], 32 * MIB), compressed=True)
    seen = []

    def chunks() -> Iterator[bytes]:
        with open(log, "rb") as f:
            for chunk in R._inflated(f, log):
                seen.append(len(chunk))
                yield chunk

    with pytest.raises(R.TooLarge, match="line 2 is longer than 16 MiB"):
        for _ in R._bounded_lines(chunks(), log, R.Bounds()):
            pass
    assert max(seen) <= 1 << 16 and sum(seen) < R.LONGEST_LINE + 2 * (1 << 16)
