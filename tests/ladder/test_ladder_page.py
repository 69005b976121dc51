"""The ladder's live page (``ladder run --report``) in headless Chromium, at desktop width and as a
390 px phone shows it: the standings with their marks as ``ladder table`` gives them, the recent
tables with their replays, each bot's history, and the page reloading itself as tables arrive."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ladder.test_host import FIELD, PER_TABLE, ROOT, ladder_toml, write
from tests.web.test_web import chromium, url, watched_page

pytestmark = pytest.mark.slow  # plays tables and drives chromium


def referee(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)


@pytest.fixture(scope="module")
def ladder(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("ladder-page")
    path = write(folder, ladder_toml(FIELD, extra='name = "ladder <page>"'))
    site = folder / "site"
    r = referee("ladder", "run", str(path), "--max-deals", str(3 * PER_TABLE), "--report", str(site), "-q")
    assert r.returncode == 0, r.stderr
    return path, site


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


def test_the_page_shows_the_standings_marks_recent_tables_and_histories(ladder, browser):
    path, site = ladder
    table = json.loads(referee("ladder", "table", str(path), "-f", "json").stdout)
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as page:
        page.goto(url(site / "index.html"))
        assert page.inner_text("h1") == "ladder <page>"
        rows = page.locator("#standings tbody tr")
        assert rows.count() == 3
        assert [rows.nth(i).get_attribute("data-bot") for i in range(3)] == [r["bot"] for r in table["rows"]]
        marks = [m.get_attribute("data-mark") for m in page.locator("#standings [data-mark]").all()]
        assert marks == [r["mark"] for r in table["rows"][:-1]]
        recent = page.locator("#recent tbody tr")
        assert recent.count() == 3 and recent.first.get_attribute("data-table") == "2"  # newest first
        assert page.locator("#history details.bot-history").count() == 3
        page.locator("#history details.bot-history summary").first.click()
        assert page.locator("#history details.bot-history[open] tbody tr").count() >= 1
        page.locator("#recent a.match-link").first.click()  # the table's deals and replays
        page.wait_for_url("**/tables/table-000002/index.html")
        page.click("header.top a >> nth=0")  # back up to the ladder
        page.wait_for_url("**/site/index.html")


def test_the_page_fits_a_phone_390_px_wide(ladder, browser):
    _, site = ladder
    with watched_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True) as page:
        page.goto(url(site / "index.html"))
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        for selector in ("#standings", "#recent"):
            box = page.locator(selector).evaluate("e => e.closest('.scroll-x').getBoundingClientRect().right")
            assert box <= 390
        page.locator("#history details.bot-history summary").first.tap()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_the_page_reloads_itself_as_the_host_stores_tables(ladder, browser):
    path, site = ladder
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as page:
        page.goto(url(site / "index.html"))
        page.evaluate("window.reloadedNot = true")
        r = referee("ladder", "run", str(path), "--max-deals", str(5 * PER_TABLE), "--report", str(site), "-q")
        assert r.returncode == 0, r.stderr
        page.wait_for_function("window.reloadedNot === undefined", timeout=30_000)
        page.wait_for_function("document.querySelectorAll('#recent tbody tr').length === 5", timeout=30_000)
