"""Compressed match logs (README, "Logs"): a log named ``*.jsonl.gz`` is written gzip-compressed
as the match goes, flushed at every deal's end, and ``verify``, ``replay`` and ``report`` read it as
it is.  A compressed log cut short (a crash, Ctrl-C) reads as a cut plain log does: INCOMPLETE,
never a traceback; a file that only looks compressed is refused in one line.
"""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from support.commands import cli, one_line_error

from referee.base import exitcodes as X
from referee.conversation.log import MatchLog, fresh_path, stderr_dir_of
from referee.records import records as R

ROOT = Path(__file__).resolve().parents[2]
GREEDY, FIRST = ROOT / "sample_bots" / "greedy_bot.py", ROOT / "sample_bots" / "first_bot.py"


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    """The same match (same seed, same bots) logged plain and compressed."""
    out = tmp_path_factory.mktemp("logs")
    paths = {"plain": out / "m.jsonl", "gz": out / "z.jsonl.gz"}
    for path in paths.values():
        played = cli("match", GREEDY, FIRST, "--deals", "4", "--seed", "11", "--log", path, "-q")
        assert played.exit_code == 0, played.output
    return paths


def stripped(data: bytes) -> list[object]:
    return [R.strip_timings(msgspec.json.decode(line)) for line in data.splitlines()]


def test_a_log_named_gz_is_written_compressed_with_the_records_of_a_plain_one(logs):
    data = logs["gz"].read_bytes()
    assert data.startswith(R.GZIP_MAGIC)
    plain = logs["plain"].read_bytes()
    assert len(data) * 5 < len(plain)
    assert stripped(gzip.decompress(data)) == stripped(plain)
    assert stderr_dir_of(logs["gz"]).name == "z.stderr" and stderr_dir_of(logs["gz"]).is_dir()


def test_a_compressed_log_round_trips_through_verify_replay_and_report(logs, tmp_path):
    checked = cli("verify", logs["gz"])
    assert checked.exit_code == 0 and checked.stdout.startswith("consistent: 1 game in each of 2 orientations, 8 deals"), checked.output
    assert cli("verify", logs["plain"]).stdout.split("—")[0] == checked.stdout.split("—")[0]
    replayed, plain = cli("replay", logs["gz"]), cli("replay", logs["plain"])
    untimed = re.compile(r"[0-9.]+ ms")  # the replay shows each move's time
    assert replayed.exit_code == 0 and "deal 4" in replayed.stdout
    assert untimed.sub("", replayed.stdout) == untimed.sub("", plain.stdout)
    reported = cli("report", logs["gz"], "-O", tmp_path / "site")
    assert reported.exit_code == 0 and "(8 deals)" in reported.stdout, reported.output
    pages = sorted(p.name for p in (tmp_path / "site").rglob("*.html"))
    plain_site = cli("report", logs["plain"], "-O", tmp_path / "plain")
    assert plain_site.exit_code == 0 and pages == sorted(p.name for p in (tmp_path / "plain").rglob("*.html"))


def test_a_compressed_log_is_known_by_its_bytes_whatever_its_name(logs, tmp_path):
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_bytes(logs["gz"].read_bytes())
    assert cli("verify", renamed).exit_code == 0


@pytest.mark.parametrize("where", [0.15, 0.5, 0.9, 0.999])
def test_a_compressed_log_cut_short_is_incomplete(logs, tmp_path, where):
    """Cut anywhere in the stream (before a flush point, inside a deflate block): the lines before
    the cut verify, and verify says INCOMPLETE; replay and report read the deals before it."""
    data = logs["gz"].read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: int(len(data) * where)])
    result = cli("verify", cut)
    text = " ".join(result.stderr.split())
    assert result.exit_code == X.INCONSISTENT and text.startswith("INCOMPLETE: ") and "consistent up to line" in text, result.output
    for args in (("replay", cut), ("report", cut, "-O", tmp_path / "site")):
        read = cli(*args)
        assert "Traceback" not in read.output
        assert read.exit_code == 0 or len(read.stderr.strip().splitlines()) == 1, read.output


@pytest.mark.parametrize("content, words", [
    (R.GZIP_MAGIC + b"\x08\x00" + bytes(range(7, 250, 3)), "damaged"),
    (gzip.compress(b'{"k":"match"}\n', mtime=0)[:-4] + b"\x00\x00\x00\x00", "damaged"),  # the stream's length is wrong
    (b'{"k":"match","variant":"sport"}\n', "not gzip-compressed"),
    (R.ZSTD_MAGIC + b"\x00" * 32, "zstd"),
], ids=["garbage", "bad-trailer", "plain", "zstd"])
def test_a_bad_compressed_file_is_refused_in_one_line(tmp_path, content, words):
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(content)
    for args in (("verify", path), ("replay", path), ("report", path, "-O", tmp_path / "site")):
        assert words in one_line_error(cli(*args), code=X.USAGE)


def test_a_damaged_stream_after_good_deals_is_refused_naming_the_file(logs, tmp_path):
    data = bytearray(logs["gz"].read_bytes())
    middle = len(data) // 2
    data[middle : middle + 40] = bytes(40)
    path = tmp_path / "damaged.jsonl.gz"
    path.write_bytes(bytes(data))
    result = cli("verify", path)
    text = " ".join(result.stderr.split())
    assert result.exit_code in (X.USAGE, X.INCONSISTENT) and str(path) in text and "Traceback" not in result.output, result.output
    assert "consistent:" not in result.stdout


def test_the_compressed_writer_flushes_every_deal_to_the_file(tmp_path):
    """What is written before a deal's flush can be read back while the log is still open (the
    state a crash leaves: nothing buffered in the process counts)."""
    path = tmp_path / "open.jsonl.gz"
    log = MatchLog(path)
    lines = [b'{"k":"interrupted","why":"%d"}\n' % i for i in range(3000)]
    for line in lines[:2000]:
        log._put(line)
    log.flush()
    for line in lines[2000:]:
        log._put(line)  # not flushed: may be anywhere
    got = list(R.log_lines(path))
    assert got[:2000] == lines[:2000] and all(line in lines for line in got)
    log.close()
    assert list(R.log_lines(path)) == lines
    assert gzip.decompress(path.read_bytes()) == b"".join(lines)  # a whole gzip stream once closed


def test_fresh_names_keep_the_compressed_suffix(tmp_path):
    first = fresh_path(tmp_path / "m.jsonl.gz")
    second = fresh_path(tmp_path / "m.jsonl.gz")
    assert (first.name, second.name) == ("m.jsonl.gz", "m-2.jsonl.gz")
    assert [fresh_path(tmp_path / "M.JSONL.GZ").name for _ in range(2)] == ["M.JSONL.GZ", "M-2.JSONL.GZ"]


def test_a_log_named_gz_in_any_case_is_written_compressed(tmp_path):
    """Issue 42: ``--log x.JSONL.GZ`` was written uncompressed (the suffix was matched in lower
    case only).  ``.gz`` in any case is a compressed log, to the writer, the readers, the stderr
    folder beside it and the sandbox that hides logs from bots."""
    from referee.bots.sandbox import referee_files

    path = tmp_path / "X.JSONL.GZ"
    played = cli("match", GREEDY, FIRST, "--deals", "4", "--seed", "11", "--log", path, "-q")
    assert played.exit_code == 0, played.output
    assert path.read_bytes().startswith(R.GZIP_MAGIC)
    assert stderr_dir_of(path).name == "X.stderr" and stderr_dir_of(path).is_dir()
    checked = cli("verify", path)
    assert checked.exit_code == 0 and checked.stdout.startswith("consistent: 1 game in each of 2 orientations, 8 deals"), checked.output
    log = MatchLog(tmp_path / "y.Jsonl.Gz")
    log._put(b'{"k":"interrupted","why":"x"}\n')
    log.close()
    assert (tmp_path / "y.Jsonl.Gz").read_bytes().startswith(R.GZIP_MAGIC)
    assert R.is_gzip_name("a.jsonl.GZ") and R.is_gzip_name(Path("a.JSONL.gz")) and not R.is_gzip_name("a.jsonl.gzip")
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "OLD.JSONL.GZ").write_bytes(path.read_bytes())
    assert referee_files([folder]) == [folder / "OLD.JSONL.GZ"]


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_a_match_killed_mid_way_leaves_a_readable_compressed_prefix(tmp_path, how):
    """SIGKILL: the referee never closes its log, so only what it flushed at deal ends is there;
    SIGINT: it closes the log after its ``interrupted`` record.  Either way verify checks the
    deals written and says INCOMPLETE."""
    log = tmp_path / "stopped.jsonl.gz"
    proc = subprocess.Popen([sys.executable, "-m", "referee", "match", str(GREEDY), str(FIRST), "--deals", "4000", "--seed", "3",
                             "--log", str(log), "-q"], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and log.stat().st_size > 40_000):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        os.killpg(proc.pid, how)
        code = proc.wait(timeout=60)
        assert code == (X.INTERRUPTED if how == signal.SIGINT else -signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if how == signal.SIGKILL:  # the bots of a killed referee are its process group's: gone with it
            time.sleep(0.2)
    result = cli("verify", log)
    text = " ".join(result.stderr.split())
    assert result.exit_code == X.INCONSISTENT and text.startswith("INCOMPLETE: "), result.output
    consistent = int(text.split("consistent up to line ")[1].split()[0].rstrip("."))
    assert consistent > 1000  # deals of the prefix, played again and compared


@pytest.mark.slow
def test_a_league_with_compress_logs_writes_compressed_logs_its_report_reads(tmp_path):
    bots = "".join(f'[[bot]]\nname = "{name}"\ncommand = "{script}"\n' for name, script in (("greedy", GREEDY), ("first", FIRST)))
    league = tmp_path / "league.toml"
    league.write_text(f'seed = 4\ncompress_logs = true\n[game]\nvariant = "sport"\ndeals = 4\n[clock]\nstartup = 30.0\nmove = 10.0\n{bots}')
    done = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(league)], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    logs = sorted(p for p in (tmp_path / "league-logs").iterdir() if p.is_file() and not p.name.startswith("."))
    assert [p.name for p in logs] == ["first-vs-greedy.jsonl.gz"]
    for log in logs:
        assert log.read_bytes().startswith(R.GZIP_MAGIC) and cli("verify", log).exit_code == 0
    reported = cli("report", league, "-O", tmp_path / "site")
    assert reported.exit_code == 0, reported.output
    assert len(list((tmp_path / "site").rglob("*.html"))) > 8  # the league, its match and its deals


def test_a_compressed_log_in_a_bots_folder_is_among_the_files_the_sandbox_hides(logs, tmp_path):
    from referee.bots.sandbox import referee_files

    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "old.jsonl.gz").write_bytes(logs["gz"].read_bytes())
    (folder / "data.jsonl.gz").write_bytes(b"not compressed")  # a bot's own file of that name: left alone
    assert referee_files([folder]) == [folder / "old.jsonl.gz"]
