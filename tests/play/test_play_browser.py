"""``referee play`` through a real browser: Debian's Chromium, driven by Playwright, plays whole
matches against a sample bot by clicking the page's ``data-move`` elements (and ``data-next``
between deals), as a person would with the mouse, and once with the keyboard only.

Each test runs ``referee play`` as the command it is (a process of its own, as a person starts
it) and checks what the issue promises: the match ends with its result printed as ``referee
match`` prints it and a log that verifies; a request without the token is refused and nothing
listens beyond 127.0.0.1; a closed tab pauses the match, which ends as interrupted once the
grace period is over, and so does Ctrl-C; and no process is left behind (conftest).
"""

from __future__ import annotations

import contextlib
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest
from playwright import sync_api as playwright_api

from referee.audit.verify import Incomplete, verify
from referee.engine import variant_names
from referee.matches.report import verdict_text
from referee.records import records as R
from tests.play.test_play import listening
from tests.web.test_web import chromium

pytestmark = pytest.mark.slow  # each test plays a match through Chromium

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{ROOT / 'sample_bots' / 'random_bot.py'} 7"
GAMES = variant_names(refereed=True)
ADDRESS = re.compile(r"(http://127\.0\.0\.1:(\d+)/([A-Za-z0-9_-]+)/)")


class Played:
    """A ``referee play`` process (``--no-open``), its address and what it prints."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.log = tmp_path / "play.jsonl"
        self.proc = subprocess.Popen([sys.executable, "-m", "referee", "play", *args, "--no-open", "--log", str(self.log)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        self.out: list[str] = []
        self.err: list[str] = []
        self._err_lines: queue.Queue[str] = queue.Queue()
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stdout, self.out.append), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, self._err), daemon=True)]
        for reader in self._readers:
            reader.start()
        self.url, self.port, self.token = self._address()

    @staticmethod
    def _read(stream: IO[str] | None, put: Callable[[str], None]) -> None:
        assert stream is not None
        for line in stream:
            put(line)

    def _err(self, line: str) -> None:
        self.err.append(line)
        self._err_lines.put(line)

    def _address(self) -> tuple[str, int, str]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                line = self._err_lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if m := ADDRESS.search(line):
                return m.group(1), int(m.group(2)), m.group(3)
        self.close()
        raise AssertionError(f"referee play printed no address: {''.join(self.err)}")

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        """Wait for the process to end: its exit status, stdout and stderr."""
        self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=10)
        return self.proc.returncode, "".join(self.out), "".join(self.err)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for reader in self._readers:
            reader.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@contextlib.contextmanager
def played(tmp_path: Path, *args: str) -> Iterator[Played]:
    p = Played(tmp_path, *args)
    try:
        yield p
    finally:
        p.close()


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


@contextlib.contextmanager
def a_page(browser, url: str, errors_ok: bool = False) -> Iterator[playwright_api.Page]:
    """A page at ``url`` whose script errors fail the test, and which asks nothing of any other
    address (no CDN, nothing from the internet)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("request", lambda r: None if r.url.startswith(url) else errors.append(f"request: {r.url}"))
    try:
        pg.goto(url)
        yield pg
    finally:
        with contextlib.suppress(playwright_api.Error):
            ctx.close()
    if not errors_ok:
        assert not errors, "\n".join(errors)


def version(page: playwright_api.Page) -> int:
    return page.evaluate("window.play.state ? window.play.state.version : -1")


def step(page: playwright_api.Page, keyboard: bool = False) -> str:
    """One thing a person does at the table: go on to the next deal, or make a move (a tile that
    fits one place, else a tile and then its place, or a button); ``"over"`` once the match is
    over.  With ``keyboard``, by keys only."""
    page.wait_for_selector("[data-match-over], [data-next], [data-move], [data-choose]", state="attached", timeout=60_000)
    if page.locator("[data-match-over]").count():
        return "over"
    before = version(page)
    if keyboard:
        if page.locator("[data-next]").count():
            page.keyboard.press("n")
        elif page.locator(".to-move svg.playable").count():
            page.keyboard.press("ArrowRight")
            page.keyboard.press("Enter")
            if page.locator("#choices button[data-move]").count() and version(page) == before:
                page.keyboard.press("1")
        else:
            page.keyboard.press("1")
    else:
        for selector in ("[data-next]", "[data-move]", "[data-choose]"):
            target = page.locator(selector).first
            if not target.count():
                continue
            with contextlib.suppress(playwright_api.TimeoutError):  # the page moved on meanwhile: look again
                target.click(timeout=5_000)
            if selector == "[data-choose]":
                return "chose"
            break
    with contextlib.suppress(playwright_api.TimeoutError):
        page.wait_for_function("v => window.play.state && window.play.state.version !== v", arg=before, timeout=10_000)
    return "moved"


def play_to_the_end(page: playwright_api.Page, keyboard: bool = False, limit: int = 3000) -> int:
    """Play until the page says the match is over; how many moves and steps on it took."""
    for n in range(limit):
        if step(page, keyboard) == "over":
            return n
    raise AssertionError("the match did not end")


def records(log: Path) -> list[R.Record]:
    return [rec for _, rec, _ in R.read_records(log, cut_ok=True)]


@pytest.mark.parametrize("game", GAMES)
def test_a_person_plays_a_whole_match_of_every_game_by_clicking(game, browser, tmp_path):
    extra = ("--deals", "4") if game == "sport" else ()
    with played(tmp_path, BOT, "--variant", game, "--deal-limit", "1", "--seed", "5", "--name", "ann", *extra) as p:
        with a_page(browser, p.url) as page:
            assert play_to_the_end(page) > 0
            assert page.locator("[data-match-over='done']").count() == 1
            over = page.inner_text("#over")
        code, out, err = p.finish()
    assert code == 0, err
    log = records(p.log)
    result = log[-1]
    assert isinstance(result, R.Result)
    # The result as `referee match` prints it, on the terminal and on the page.
    verdict = verdict_text(result).plain.strip()
    assert verdict in " ".join(out.split()) and "Totals" in out and f"log: {p.log}" in out
    assert verdict.splitlines()[0] in over
    plays = [rec for rec in log if isinstance(rec, R.Play)]
    assert plays and not [rec for rec in log if isinstance(rec, R.Fault)]
    assert verify(p.log).plays == len(plays)


def test_a_whole_match_by_keyboard(browser, tmp_path):
    """Keys only (← → Enter, 1–9, N), you in seat 1, the bot in the sandbox."""
    with played(tmp_path, BOT, "--variant", "muggins", "--players", "2", "--deal-limit", "1", "--seed", "3", "--seat", "1", "--sandbox") as p:
        with a_page(browser, p.url) as page:
            page.wait_for_selector("[data-move], [data-choose]", state="attached", timeout=60_000)
            assert page.locator("#hand-1.yours").count() == 1  # seat 1 is the person's in the first seating
            play_to_the_end(page, keyboard=True)
        code, _, err = p.finish()
    assert code == 0, err
    assert verify(p.log).plays > 0


def test_the_token_and_the_loopback_only(browser, tmp_path):
    """The address printed works; without its token, with a wrong one or another Host header
    nothing is served; the server listens on 127.0.0.1 only."""
    with played(tmp_path, BOT, "--variant", "draw", "--players", "2", "--deal-limit", "1") as p:
        assert listening(p.port) == ["0100007F"]
        base = f"http://127.0.0.1:{p.port}"

        def fetch(path: str, host: str | None = None) -> int:
            req = urllib.request.Request(base + path, headers={} if host is None else {"Host": host})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    return r.status
            except urllib.error.HTTPError as e:
                return e.code

        assert fetch(f"/{p.token}/") == 200
        for path in ("/", f"/{p.token[:-2]}/", "/assets/play.js", f"/{p.token}-/ws"):
            assert fetch(path) == 403, path
        assert fetch(f"/{p.token}/", host=f"attacker.example:{p.port}") == 421
        with a_page(browser, p.url) as page:
            play_to_the_end(page)
        code, _, err = p.finish()
    assert code == 0, err


def test_a_closed_tab_pauses_the_match_and_a_page_opened_again_goes_on(browser, tmp_path):
    with played(tmp_path, BOT, "--variant", "draw", "--players", "2", "--deal-limit", "1", "--grace", "60") as p:
        with a_page(browser, p.url) as page:
            for _ in range(3):
                step(page)
        time.sleep(2)  # nobody at the table: the match waits
        assert p.proc.poll() is None
        with a_page(browser, p.url) as page:
            play_to_the_end(page)
        code, _, err = p.finish()
    assert code == 0, err
    assert verify(p.log).plays > 0


def test_a_closed_tab_ends_the_match_as_interrupted_after_the_grace_period(browser, tmp_path):
    with played(tmp_path, BOT, "--variant", "draw", "--players", "2", "--deal-limit", "1", "--grace", "2") as p:
        with a_page(browser, p.url) as page:
            page.wait_for_selector("[data-move], [data-choose]", state="attached", timeout=60_000)
        code, out, err = p.finish(timeout=30)
    assert code == 130, err
    assert "interrupted: no page was open for 2 s" in err and str(p.log) in err
    log = records(p.log)
    assert isinstance(log[-1], R.Interrupted)  # the segments in flight were ended: nothing is sent after it
    with pytest.raises(Incomplete):
        verify(p.log)


def test_a_page_that_never_comes_ends_the_match_after_the_grace_period(tmp_path):
    with played(tmp_path, BOT, "--variant", "draw", "--players", "2", "--grace", "2") as p:
        code, _, err = p.finish(timeout=30)
    assert code == 130 and "interrupted: no page was open for 2 s" in err
    assert any(isinstance(rec, R.Interrupted) for rec in records(p.log))


def test_ctrl_c_ends_the_match_as_interrupted_and_tells_the_page(browser, tmp_path):
    with played(tmp_path, BOT, "--variant", "draw", "--players", "2", "--deal-limit", "1") as p:
        with a_page(browser, p.url, errors_ok=True) as page:  # the page's socket closes under it
            page.wait_for_selector("[data-move], [data-choose]", state="attached", timeout=60_000)
            step(page)
            p.proc.send_signal(signal.SIGINT)
            page.wait_for_selector("[data-match-over='interrupted']", state="attached", timeout=10_000)
        code, out, err = p.finish(timeout=30)
    assert code == 130, err
    assert "interrupted" in err and str(p.log) in err
    assert any(isinstance(rec, R.Interrupted) for rec in records(p.log))
    with pytest.raises(Incomplete):
        verify(p.log)
