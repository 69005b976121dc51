"""The web report on a phone: 390 x 844 CSS pixels (an iPhone 12 to 15), with spot checks at
360 and 414, in headless Chromium emulating a mobile browser (the pages' viewport tag decides
their width, as on a phone).

Every game at the tables it is played at (4 seats; 3 seats with 3 bots; kolbasa's 2), the replay
of its fullest deal stepped from the deal as dealt to its end: the page never scrolls sideways
and stepping never moves it, the table is the screen's width (at least 300 px) with its tiles
big enough to read, and every tile (on the table, in a hand, in the bazaar) is on the screen with
no two overlapping.  The league and match pages: no sideways scroll of the page; a table wider
than the screen scrolls in its own box, the standings' essential columns (#, bot, pts) and a
match's replay links staying in sight.  At 1280 px the desktop layout holds (hands beside the
table), and a window resized across the phone layout's edge lays the table again.  Screenshots
are saved under each test's temporary directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.commands import cli

from referee.engine import variant, variant_names
from tests.web.test_web import BOTS, chromium, referee, url, watched_page, write_league

pytestmark = pytest.mark.slow  # every test plays matches and drives chromium

PHONE = {"width": 390, "height": 844}
BOT_ARGS = [str(BOTS / "greedy_bot.py"), f"{BOTS / 'random_bot.py'} 7", str(BOTS / "first_bot.py"), f"{BOTS / 'random_bot.py'} 3"]


def tables() -> list[tuple[str, int]]:
    """Every game at 4 seats and at 3 where it is played there (kolbasa: its only table, 2)."""
    out = []
    for name in variant_names():
        counts = [n for n in (4, 3) if n in variant(name).players] or [max(variant(name).players)]
        out += [(name, n) for n in counts]
    return out


def bots_for(game: str, players: int) -> list[str]:
    """A bot a seat (3 or 4 different bots), or 2 where the game seats pairs."""
    return BOT_ARGS[: 2 if variant(game).pair_play(players) else players]


class Reports:
    """A match of every game and table, played and reported when a test first asks (seeded bots:
    the same logs every run)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.sites: dict[tuple[str, int], Path] = {}

    def __getitem__(self, key: tuple[str, int]) -> Path:
        if key not in self.sites:
            game, players = key
            log = self.folder / f"{game}-{players}.jsonl"
            extra = ("--deals", "4") if game == "sport" else ()
            r = referee("match", *bots_for(game, players), "--variant", game, "--players", str(players), "--log", str(log), "-q", *extra,
                        check=False)
            assert r.returncode == 0, r.stderr
            site = self.folder / f"{game}-{players}"
            result = cli("report", str(log), "-O", str(site))
            assert result.exit_code == 0, result.output
            self.sites[key] = site
        return self.sites[key]


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> Reports:
    return Reports(tmp_path_factory.mktemp("phone"))


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module."""
    yield from chromium()


@pytest.fixture
def phone(browser):
    """A page as a 390 x 844 phone shows it; console errors and uncaught exceptions fail the test."""
    with watched_page(browser, viewport=PHONE, is_mobile=True, has_touch=True) as pg:
        yield pg


def fullest_deal(site: Path) -> Path:
    """The replay page of the deal that lays the most tiles on the table."""
    def placed(doc: Path) -> int:
        return sum(s["kind"] in ("place", "station") for s in json.loads(doc.read_text(encoding="utf-8"))["steps"])
    return max(sorted(site.glob("g*-o*-d*.json")), key=placed).with_suffix(".html")


#: Steps through the whole deal and measures each step; returns what broke (the first three of
#: each kind), the narrowest table, the smallest half of a tile drawn on the table, and the steps.
STEP_THROUGH = """(width) => {
    const problems = [], told = {};
    const say = (kind, text) => { told[kind] = (told[kind] || 0) + 1; if (told[kind] <= 3) problems.push(text); };
    const box = (e) => e.getBoundingClientRect();
    const overlap = (p, q) => p.left < q.right - 0.5 && q.left < p.right - 0.5 && p.top < q.bottom - 0.5 && q.top < p.bottom - 0.5;
    let narrowest = Infinity, smallest = Infinity;
    const scrollY = window.scrollY;
    for (let n = 0; n <= replay.last; n++) {
        replay.go(n);
        const page = document.documentElement.scrollWidth;
        if (page > width) say('page', `move ${n}: the page is ${page} px wide`);
        if (window.scrollY !== scrollY) say('scroll', `move ${n}: stepping scrolled the page from ${scrollY} to ${window.scrollY}`);
        narrowest = Math.min(narrowest, box(document.getElementById('table')).width);
        const svg = box(document.getElementById('table-svg'));
        const tiles = [];
        for (const g of document.querySelectorAll('#table-svg g.tile')) {
            const r = box(g.querySelector('rect.face'));
            smallest = Math.min(smallest, r.width, r.height);
            if (r.left < svg.left - 0.5 || r.right > svg.right + 0.5 || r.top < svg.top - 0.5 || r.bottom > svg.bottom + 0.5)
                say('cut', `move ${n}: ${g.dataset.tile} on the table is cut off at the table's edge`);
            tiles.push({name: `${g.dataset.tile} on the table`, r});
        }
        for (const s of document.querySelectorAll('.tile-svg')) {
            const where = s.closest('.hand') ? `in hand ${s.closest('.hand').dataset.seat}` : 'undealt';
            tiles.push({name: `${s.dataset.tile} ${where}`, r: box(s)});
        }
        for (const [i, t] of tiles.entries()) {
            if (t.r.left < -0.5 || t.r.right > width + 0.5) say('off', `move ${n}: ${t.name} is off the screen (${t.r.left}..${t.r.right})`);
            for (const u of tiles.slice(i + 1)) if (overlap(t.r, u.r)) say('overlap', `move ${n}: ${t.name} overlaps ${u.name}`);
        }
    }
    return {problems, narrowest, smallest, steps: replay.last + 1};
}"""


def check_replay(page, deal: Path, width: int) -> dict[str, Any]:
    page.goto(url(deal))
    assert page.evaluate("innerWidth") == width  # the viewport tag: laid out at the phone's width, not zoomed out
    got = page.evaluate(STEP_THROUGH, width)
    assert got["problems"] == []
    assert got["narrowest"] >= 300
    assert got["smallest"] >= 14, f"tiles on the table drawn {got['smallest']:.1f} px a half"
    assert got["steps"] > 5
    return got


@pytest.mark.parametrize(("game", "players"), tables())
def test_every_replay_fits_a_phone(game, players, reports, phone, tmp_path):
    deal = fullest_deal(reports[game, players])
    check_replay(phone, deal, PHONE["width"])
    # The table first, then the hands stacked in seat order, each the table's width.
    phone.evaluate("replay.go(Math.floor(replay.last / 2))")
    felt = phone.locator("#table").bounding_box()
    hands = [phone.locator(f"#hand-{seat}").bounding_box() for seat in range(players)]
    assert all(h["width"] >= felt["width"] - 1 for h in hands)
    tops = [felt["y"], *(h["y"] for h in hands)]
    assert tops == sorted(tops)
    assert phone.evaluate("window.scrollX") == 0
    phone.screenshot(path=str(tmp_path / f"{game}-{players}.png"), full_page=True)


@pytest.mark.parametrize("width", [360, 414])
@pytest.mark.parametrize(("game", "players"), [("osel", 4), ("mexican_train", 4), ("kolbasa", 2), ("draw", 3)])
def test_replays_at_the_narrowest_and_widest_phones(game, players, width, reports, browser):
    with watched_page(browser, viewport={"width": width, "height": 800}, is_mobile=True, has_touch=True) as pg:
        check_replay(pg, fullest_deal(reports[game, players]), width)


def test_the_desktop_layout_stays_and_a_resized_window_lays_the_table_again(reports, browser, tmp_path):
    """At 1280 px the hands sit around the table (seat 1 left, 2 above, 3 right, 0 below) and the
    table is laid wide; narrowed to a phone's width, the page switches to the stacked layout and
    lays the table narrow, and back."""
    deal = fullest_deal(reports["telephone", 4])
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as pg:
        pg.goto(url(deal, "#move=3"))

        def around() -> bool:
            t = pg.locator("#table").bounding_box()
            b = [pg.locator(f"#hand-{s}").bounding_box() for s in range(4)]
            return (b[1]["x"] + b[1]["width"] <= t["x"] and b[3]["x"] >= t["x"] + t["width"]
                    and b[2]["y"] + b[2]["height"] <= t["y"] and b[0]["y"] >= t["y"] + t["height"])

        assert around()
        assert pg.evaluate("replay.size === replay.WIDE")
        assert pg.locator("#hand-1 .tile-svg.standing").count() == pg.locator("#hand-1 .tile-svg").count()
        wide = pg.evaluate("document.getElementById('table-svg').getAttribute('viewBox')")
        pg.screenshot(path=str(tmp_path / "desktop.png"))
        pg.set_viewport_size(PHONE)
        pg.wait_for_function("replay.size === replay.NARROW")
        assert not around()
        assert pg.locator(".tile-svg.standing").count() == 0
        assert pg.evaluate("document.getElementById('table-svg').getAttribute('viewBox')") != wide
        assert pg.evaluate(STEP_THROUGH, PHONE["width"])["problems"] == []
        pg.set_viewport_size({"width": 1280, "height": 900})
        pg.wait_for_function("replay.size === replay.WIDE")
        assert around()
        assert pg.evaluate("document.getElementById('table-svg').getAttribute('viewBox')") == wide


def page_width_problems(page, width: int) -> list[str]:
    """What sticks out of the screen, outside a box that scrolls sideways."""
    return page.evaluate("""(width) => {
        const out = [];
        if (document.documentElement.scrollWidth > width) out.push(`the page is ${document.documentElement.scrollWidth} px wide`);
        for (const e of document.querySelectorAll('body *')) {
            const r = e.getBoundingClientRect();
            if (r.right > width + 0.5 && !e.parentElement.closest('.scroll-x')) out.push(`${e.tagName}#${e.id} reaches ${r.right} px`);
        }
        return out.slice(0, 10);
    }""", width)


def in_sight(page, selector: str, width: int) -> list[str]:
    """The elements matching ``selector`` that are not wholly on the screen (and within the box
    they scroll in, if any), or are covered there."""
    return page.evaluate("""([selector, width]) => [...document.querySelectorAll(selector)].filter((e) => {
        const r = e.getBoundingClientRect();
        const box = e.closest('.scroll-x');
        const clip = box ? box.getBoundingClientRect() : {left: 0, right: width};
        if (r.left < Math.max(0, clip.left) - 0.5 || r.right > Math.min(width, clip.right) + 0.5 || r.width === 0) return true;
        e.scrollIntoView({block: 'center', inline: 'nearest'});
        const q = e.getBoundingClientRect();
        const hit = document.elementFromPoint(q.left + q.width / 2, q.top + q.height / 2);
        return !(hit && (hit === e || e.contains(hit)));
    }).map((e) => e.textContent.trim() || e.outerHTML.slice(0, 60))""", [selector, width])


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    """A finished league of four bots, one with a long name, and its report."""
    d = tmp_path_factory.mktemp("league")
    toml = write_league(d / "league.toml", faulty=False)
    toml.write_text(toml.read_text(encoding="utf-8") + f"""[[bot]]
name = "random-player-with-a-long-name"
command = "{BOTS / 'random_bot.py'} 7"
[[bot]]
name = "random"
command = "{BOTS / 'random_bot.py'} 3"
""", encoding="utf-8")
    site = d / "site"
    referee("league", "run", str(toml), "--report", str(site), "-q", "-j", "2")
    return site


@pytest.mark.parametrize("width", [390, 360, 414])
def test_the_league_page_fits_a_phone_and_its_standings_keep_their_essential_columns(league, browser, width, tmp_path):
    with watched_page(browser, viewport={"width": width, "height": 844}, is_mobile=True, has_touch=True) as pg:
        pg.goto(url(league / "index.html"))
        assert pg.evaluate("innerWidth") == width
        pg.screenshot(path=str(tmp_path / "league.png"), full_page=True)
        assert page_width_problems(pg, width) == []
        headers = pg.eval_on_selector_all("#standings thead th", "hs => hs.map(h => h.textContent.trim())")
        essential = [headers.index(h) + 1 for h in ("#", "bot", "pts")]
        assert pg.locator("#standings tbody tr").count() == 4
        for col in essential:
            assert in_sight(pg, f"#standings tr > :nth-child({col})", width) == []
        # The whole table is there: wider than the screen, it scrolls in its own box, the bots'
        # names staying at its left edge.
        box = pg.locator("#standings").locator("xpath=..")
        assert box.evaluate("b => b.scrollWidth > b.clientWidth && getComputedStyle(b).overflowX === 'auto'")
        box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        assert in_sight(pg, f"#standings tr > :nth-child({len(headers)})", width) == []
        assert in_sight(pg, "#standings tbody td.bot", width) == []
        assert pg.evaluate("window.scrollX") == 0 and page_width_problems(pg, width) == []
        assert in_sight(pg, "#cross tbody th.bot, #matches a.match-link", width) == []


def test_a_match_page_fits_a_phone_with_every_replay_link_in_sight(reports, phone, tmp_path):
    site = reports["draw", 4]  # four bots: the widest deals table
    phone.goto(url(site / "index.html"))
    phone.screenshot(path=str(tmp_path / "match.png"), full_page=True)
    assert page_width_problems(phone, PHONE["width"]) == []
    links = phone.locator("#deals a.replay")
    assert links.count() >= 4
    box = phone.locator("#deals").locator("xpath=..")
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")
    assert in_sight(phone, "#deals a.replay, #totals td.bot", PHONE["width"]) == []
    box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
    assert in_sight(phone, "#deals a.replay", PHONE["width"]) == []
    assert page_width_problems(phone, PHONE["width"]) == []
    links.nth(1).click()
    phone.wait_for_url("**/g*-o*-d*.html*")
    assert phone.locator("#table-svg").count() == 1
