"""``referee report`` and ``league run --report``: the web pages, opened from disk in a real
headless Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright; no browser download).

What the pages draw is checked against the log itself, read here without the report's code:
the deal records give the hands, the engine's own events (from re-playing the log's plays)
give each placement, draw and pass, and the deal-end records give the scores and the result.
Any JavaScript error or console error fails the test.  Screenshots of the league page and of a
replay in the middle of a deal are saved under the test's temporary directory.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import itertools
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from playwright import sync_api as playwright_api
from support import read_log
from support.commands import cli

from referee.audit.replay import Replayer
from referee.base import exitcodes as X
from referee.engine import variant, variant_names
from referee.engine.core.layout import KNIFE, Sausage
from referee.engine.core.line import Cut, Drew, Passed, Placed, Play, Scored, Tailed, Turned, line_of
from referee.engine.core.tiles import HIGH, IS_DOUBLE, LOW, OTHER, parse_tile, tile_name
from referee.matches.report import verdict_text
from referee.matches.results import MatchSummary
from referee.records import records as R
from referee.web.data import _labelled_los

pytestmark = pytest.mark.slow  # every test plays matches and most drive chromium

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots"
CHROMIUM = Path("/usr/bin/chromium")

#: The header fields a scripted walk's header leaves out.
HEADER_REST = {"games": None, "seed": 1, "deals_file": None, "time_control": {"startup": 10.0, "move": 5.0, "bank": None, "increment": 0.0},
               "max_faults": 3, "max_line": 65536, "confidence": 0.95, "sprt": None}

def referee(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True, text=True, timeout=300, check=check)


# -- the browser ----------------------------------------------------------------------------------


def chromium() -> Iterator[playwright_api.Browser]:
    """Debian's Chromium, launched headless until the generator is closed (a missing browser
    skips the test, or fails it in CI)."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    with playwright_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM))
        yield b
        b.close()


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


@contextlib.contextmanager
def watched_page(browser, **context: Any) -> Iterator[playwright_api.Page]:
    """A fresh page in a context of its own (``context``: Playwright's ``new_context`` arguments,
    the viewport first), whose console errors and uncaught exceptions fail the test."""
    ctx = browser.new_context(**context)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    pg.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    # Nothing from the internet: every request stays on disk (or the test's own loopback server).
    pg.on("request", lambda r: None if r.url.startswith(("file:", "data:", "http://127.0.0.1:")) else errors.append(f"request: {r.url}"))
    try:
        yield pg
    finally:
        ctx.close()
    assert not errors, "\n".join(errors)


@pytest.fixture
def page(browser):
    """A fresh page at 1280 x 900 whose console errors and uncaught exceptions fail the test."""
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as pg:
        yield pg


def url(path: Path, fragment: str = "") -> str:
    return path.resolve().as_uri() + fragment


# -- what the log says ------------------------------------------------------------------------------


def table_of(history: list, game: str = "sport", players: int = 4) -> dict[str, list[str]]:
    """The table after ``history`` as the log's engine events lay it: the line left to right,
    each tile as it lies, and (cross games) the ``up`` and ``down`` arms read outwards from the
    first open double; mexican_train's station and each train outward from it; kolbasa's start
    and its two lines outward (with a knife being laid: the sausage before the cut, and the knife
    as it lies across the junction, top half first)."""
    if game == "mexican_train":
        return trains_of(history, players)
    if game == "kolbasa":
        return sausage_of(history)
    placed = [e for e in history if type(e) is Placed]
    table = {"line": [f"{a}-{b}" for a, b in line_of([e for e in placed if e.end is None or e.end < 2])]}
    spinner = next((LOW[e.tile] for e in placed if LOW[e.tile] == HIGH[e.tile] and (e.end is None or e.end < 2)
                    and not getattr(e, "closed", False)), None)
    for end, name in ((2, "up"), (3, "down")):
        near = spinner
        for e in (e for e in placed if e.end == end):
            far = HIGH[e.tile] if LOW[e.tile] == near else LOW[e.tile]
            table.setdefault(name, []).append(f"{near}-{far}")
            near = far
    return table


def train_name(e: int, players: int) -> str:
    return "mexican" if e == players else f"seat{e}"


def trains_of(history: list, players: int) -> dict[str, list[str]]:
    placed = [e for e in history if type(e) is Placed]
    if not placed:
        return {"line": []}
    station = placed[0]
    table: dict[str, list[str]] = {"line": [tile_name(station.tile)]}
    ends: dict[int, int] = {}
    for e in placed[1:]:
        near = ends.get(e.end, LOW[station.tile])
        ends[e.end] = OTHER[e.tile][near]
        table.setdefault(train_name(e.end, players), []).append(f"{near}-{ends[e.end]}")
    return table


def sausage_of(history: list) -> dict[str, list[str]]:
    """kolbasa's table after ``history``, laid by the engine's own :class:`Sausage`."""
    sausage = Sausage()
    table: dict[str, list[str]] = {"line": []}
    for i, e in enumerate(history):
        if type(e) is not Placed:
            continue
        if e.end is not None and e.end >= KNIFE and i == len(history) - 1:  # the knife's own step: before the cut
            top = sausage.junction(0, e.end - KNIFE)
            table["knife"] = [f"{top}-{OTHER[e.tile][top]}"]
            break
        sausage.lay(e.tile, e.end)
    else:
        table.pop("knife", None)
    if sausage.start[0] >= 0:
        table["line"] = ["-".join(map(str, sausage.start))]
    for name, line in zip(("top", "bottom"), sausage.lines):
        if line:
            table[name] = [f"{a}-{b}" for a, b in line]
    return table


def marks_of(history: list, game: str, players: int) -> dict:
    """What the table shows besides its tiles, read from the rules: mexican_train's markers (a
    pass puts one on the passer's train, the owner's own play takes it off, MT-6, MT-10) and its
    uncovered double (open, or hanging once a seat passed over it, MT-7, MT-8); kolbasa's tile
    turned up (until it is laid or tailed, KB-7)."""
    if game == "mexican_train":
        markers: set[int] = set()
        open_: list | None = None
        for e in history:
            if type(e) is Passed:
                markers.add(e.seat)
                if open_:
                    open_[1] = "hanging"
            elif type(e) is Placed and e.end is not None:
                if e.end == e.seat:
                    markers.discard(e.seat)
                open_ = [train_name(e.end, players), "open"] if IS_DOUBLE[e.tile] else None
        return {"markers": sorted(train_name(s, players) for s in markers), "open": open_}
    if game == "kolbasa":
        up = None
        for e in history:
            up = tile_name(e.tile) if type(e) is Turned else None if type(e) in (Placed, Tailed) else up
        return {"up": up}
    return {}


def expected_deal(log: Path, game: int, orientation: int, deal: int) -> dict:
    """The deal as the log has it: per event, the hands, the table and the scores after it."""
    recs = [r for _, r in read_log(log)]
    header = recs[0]
    side_of = variant(header["variant"]).new_game(header["players"], header["options"], header["deals"]).side_of
    start = next(r for r in recs if r["k"] == "deal" and (r["game"], r["orientation"], r["deal"]) == (game, orientation, deal))
    ends = [r for r in recs if r["k"] == "deal_end" and (r["game"], r["orientation"]) == (game, orientation)]
    end = next((r for r in ends if r["deal"] == deal), None)
    before = next((r["totals"] for r in reversed(ends) if r["deal"] < deal), None)
    history: list = []

    class Collect(Replayer):
        def on_deal_end(self, rec, state):
            if (rec.game, rec.orientation, rec.deal) == (game, orientation, deal):
                history.extend(state.history)

    Collect(log).run()
    game, players = header["variant"], len(start["hands"])
    hands = [set(h) for h in start["hands"]]
    rows = [list(h) for h in start["hands"]]  # kolbasa: each row left to right
    scores = list(before or [0] * (max(side_of) + 1))
    steps = [{"hands": [sorted(h) for h in hands], "rows": [list(r) for r in rows], "table": {"line": []}, "scores": list(scores),
              "marks": marks_of([], game, players)}]
    for i, e in enumerate(history):
        if type(e) is Placed:
            hands[e.seat].discard(tile_name(e.tile))
            if tile_name(e.tile) in rows[e.seat]:
                rows[e.seat].remove(tile_name(e.tile))
        elif type(e) is Drew:
            hands[e.seat].update(tile_name(t) for t in e.tiles)
        elif type(e) is Scored:  # points written during play
            scores[side_of[e.seat]] += e.points
        elif type(e) is Tailed:  # KB-7: from the right end of the row to its left end
            rows[e.seat].remove(tile_name(e.tile))
            rows[e.seat].insert(0, tile_name(e.tile))
        elif type(e) is Cut:  # KB-5: the sausage goes to the left end of the other row, in its order
            rows[e.to][:0] = [tile_name(t) for t in e.tiles]
            hands[e.to].update(tile_name(t) for t in e.tiles)
        steps.append({"hands": [sorted(h) for h in hands], "rows": [list(r) for r in rows], "table": table_of(history[: i + 1], game, players),
                      "scores": list(scores), "marks": marks_of(history[: i + 1], game, players)})
    # A fault (or a forfeit) stops the deal after the events so far: one step each, before the end.
    i = recs.index(start)
    j = recs.index(end) if end is not None else len(recs)
    steps += [dict(steps[-1]) for r in recs[i:j] if r["k"] in ("fault", "forfeited_deal")]
    if end is not None:
        steps.append({**steps[-1], "scores": end["totals"]})
    return {"steps": steps, "end": end, "players": players, "game": game}


#: What the replay shows now, as a JavaScript function of nothing.
DRAWN = """() => ({
        counter: document.getElementById('counter').textContent,
        hands: [...document.querySelectorAll('.hand')].map(h => [...h.querySelectorAll('.tiles [data-tile]')].map(t => t.dataset.tile)),
        seats: [...document.querySelectorAll('.hand')].map(h => Number(h.dataset.seat)),
        line: [...document.querySelectorAll('#table-svg [data-tile]:not([data-arm])')].map(t => t.dataset.tile),
        table: [...document.querySelectorAll('#table-svg [data-tile]')].reduce((arms, t) => {
            (arms[t.dataset.arm || 'line'] = arms[t.dataset.arm || 'line'] || []).push(t.dataset.tile); return arms; }, {line: []}),
        scores: [...document.querySelectorAll('#scores .score .value')].map(v => Number(v.textContent)),
        markers: [...document.querySelectorAll('#table-svg [data-marker]')].map(m => m.dataset.marker).sort(),
        open: [...document.querySelectorAll('#table-svg [data-open]')].map(t => [t.dataset.arm, t.dataset.open]),
        up: [...document.querySelectorAll('.hand .tiles .up')].map(t => t.dataset.tile),
        face_up: document.querySelectorAll('.hand .tiles .tile-svg:not(.face-down)').length,
        public: [...document.querySelectorAll('.hand .tiles .public')].map(t => t.dataset.tile),
        arrived: [...document.querySelectorAll('.hand .tiles .drawn')].map(t => t.dataset.tile),
        cut: document.querySelectorAll('#table-svg .tile.cut').length,
        place: replay.step.end || null,
        result: document.getElementById('result').hidden ? null : document.getElementById('result').innerText,
    })"""


def drawn(page) -> dict:
    """What the replay shows now."""
    return page.evaluate(DRAWN)


def every_step(page) -> list[dict]:
    """What the replay shows at each step of the deal, from the first to the last."""
    return page.evaluate(f"""() => {{ const drawn = {DRAWN}; const out = [];
        for (let i = 0; i <= replay.last; i++) {{ replay.go(i); out.push(drawn()); }}
        return out; }}""")


def assert_marks(got: dict, marks: dict, i: int) -> None:
    """The markers, the open double and the tile turned up that the page shows, against the
    rules' reading (an empty expectation: the game has none of them, and none is drawn)."""
    assert got["markers"] == marks.get("markers", []), f"markers at move {i}"
    assert got["open"] == ([marks["open"]] if marks.get("open") else []), f"the open double at move {i}"
    assert got["up"] == ([marks["up"]] if marks.get("up") else []), f"the tile turned up at move {i}"


def sort_tiles(tiles: list[str]) -> list[str]:
    return sorted(tiles, key=parse_tile)


def step_through(page, log: Path, game: int, orientation: int, deal: int) -> dict:
    """Press → through the whole deal, checking every step against the log; return the expectation."""
    want = expected_deal(log, game, orientation, deal)
    steps = want["steps"]
    last = len(steps) - 1
    for i, expect in enumerate(steps):
        got = drawn(page)
        assert got["counter"] == f"move {i} / {last}"
        hands = [None] * want["players"]
        for seat, tiles in zip(got["seats"], got["hands"]):
            hands[seat] = tiles
        if want["game"] == "kolbasa":  # rows, in their order
            assert hands == expect["rows"], f"rows at move {i}"
        else:
            assert [sort_tiles(h) for h in hands] == [sort_tiles(h) for h in expect["hands"]], f"hands at move {i}"
        assert got["table"] == expect["table"], f"the table at move {i}"
        assert got["scores"] == expect["scores"], f"scores at move {i}"
        assert_marks(got, expect["marks"], i)
        if i < last:
            assert got["result"] is None
            page.keyboard.press("ArrowRight")
    end = want["end"]
    assert got["result"] is not None
    assert f"totals {' / '.join(map(str, end['totals']))}" in got["result"]
    for note in end["notes"]:
        assert note in got["result"]
    return want


# -- logs ---------------------------------------------------------------------------------------------


#: A seed whose first game has at least two deals in its first seating (the replay test walks the
#: second); seed 1 is taken where it does.
SEEDS = {"kolbasa": 3}


class Logs:
    """Short matches of greedy against random (seeded, so a log is the same every run), one per
    game, played when a test first asks."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.played: dict[str, Path] = {}

    def __getitem__(self, game: str) -> Path:
        if game not in self.played:
            log = self.folder / f"{game}.jsonl"
            extra = ("--deals", "4") if game == "sport" else ()
            r = referee("match", str(BOTS / "greedy_bot.py"), f"{BOTS / 'random_bot.py'} 7", "--variant", game, "--log", str(log), "-q",
                        "--seed", str(SEEDS.get(game, 1)), *extra, check=False)
            assert r.returncode == 0, r.stderr
            self.played[game] = log
        return self.played[game]

    def values(self) -> list[Path]:
        return [self[g] for g in ("sport", "kozel", "draw", "block", "club")]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Logs:
    return Logs(tmp_path_factory.mktemp("logs"))


X_KINDS = ("timeout", "illegal", "bad_output", "out_of_turn", "crash", "startup")
#: Every game the engine has; the referee plays them all.
GAMES = variant_names()


@pytest.mark.slow
@pytest.mark.parametrize("variant", GAMES)
def test_replay_of_a_deal_matches_the_log_move_by_move(variant, logs, page, tmp_path):
    log = logs[variant]
    site = tmp_path / "site"
    r = cli("report", str(log), "-O", str(site))
    assert r.exit_code == 0, r.output
    # The second deal: in games to a target it depends on the first (leader, totals before it).
    page.goto(url(site / "g1-o0-d2.html"))
    step_through(page, log, 0, 0, 1)
    # Back with the button, and the counter follows.
    page.click("#back")
    assert page.inner_text("#counter").startswith(f"move {len(expected_deal(log, 0, 0, 1)['steps']) - 2} /")
    page.click("#first")
    assert page.inner_text("#counter").startswith("move 0 /")
    assert page.is_disabled("#back")


def test_every_mexican_train_round_draws_its_trains_markers_and_open_doubles(logs, page, tmp_path):
    """Every round of a four-player match, step by step: the station, each train's tiles outward,
    the markers and the open or hanging double, as the rules read them from the log's events
    (a marker drawn on the wrong train, a tile on the wrong train or a hanging double shown as
    open fails here)."""
    log = logs["mexican_train"]
    site = tmp_path / "site"
    assert cli("report", str(log), "-O", str(site)).exit_code == 0
    names = [b["name"] for _, r in read_log(log) if r["k"] == "match" for b in r["bots"]]
    seen = {"marker": 0, "open": 0, "hanging": 0}
    rounds = [(r["game"], r["orientation"], r["deal"]) for _, r in read_log(log) if r["k"] == "deal_end"]
    assert len(rounds) == 14  # seven rounds in each of the two orientations
    page.goto(url(site / "index.html"))
    led = page.eval_on_selector_all("#deals tbody tr", "rs => rs.map(r => r.cells[3].innerText)")
    assert [t.split(", ")[1] for t in led] == [f"{6 - deal}-{6 - deal} on the station" for _, _, deal in rounds]
    for game, orientation, deal in rounds:
        want = expected_deal(log, game, orientation, deal)
        page.goto(url(site / f"g{game + 1}-o{orientation}-d{deal + 1}.html"))
        labels = page.eval_on_selector_all("#table-svg .table-label", "ts => ts.map(t => t.textContent)")
        assert labels[-1] == "the Mexican train" and len(labels) == 5
        assert all(any(n in label for n in names) for label in labels[:-1])
        got = every_step(page)
        assert len(got) == len(want["steps"])
        for i, (g, w) in enumerate(zip(got, want["steps"])):
            assert g["table"] == w["table"], f"the trains at move {i} of round {deal + 1}"
            assert_marks(g, w["marks"], i)
            seen["marker"] += bool(g["markers"])
            seen["open"] += any(o[1] == "open" for o in g["open"])
            seen["hanging"] += any(o[1] == "hanging" for o in g["open"])
        assert want["steps"][1]["table"]["line"] == [f"{6 - deal}-{6 - deal}"]  # the station, from the first step
        page.goto(url(site / f"g{game + 1}-o{orientation}-d{deal + 1}.html", "#move=1"))
        assert page.inner_text("#caption") == f"{6 - deal}-{6 - deal} on the station"
    assert all(seen.values()), seen


def test_every_kolbasa_deal_draws_its_lines_rows_knives_and_cuts(logs, page, tmp_path):
    """Every deal of a game to the goat in both orientations, step by step: the start and both
    lines as the engine lays them, each row in its order (face down but for the tile turned up),
    a knife standing across its junction with what it cuts marked, and the cut tiles arriving at
    the left end of the other row."""
    log = logs["kolbasa"]
    site = tmp_path / "site"
    assert cli("report", str(log), "-O", str(site)).exit_code == 0
    seen = {"turn": 0, "tail": 0, "insert": 0, "knife": 0, "cut": 0, "public": 0}
    deals = [(r["game"], r["orientation"], r["deal"]) for _, r in read_log(log) if r["k"] == "deal_end"]
    for game, orientation, deal in deals:
        want = expected_deal(log, game, orientation, deal)
        page.goto(url(site / f"g{game + 1}-o{orientation}-d{deal + 1}.html"))
        got = every_step(page)
        assert len(got) == len(want["steps"])
        turned: set[str] = set()
        for i, (g, w) in enumerate(zip(got, want["steps"])):
            rows = [None, None]
            for seat, tiles in zip(g["seats"], g["hands"]):
                rows[seat] = tiles
            assert rows == w["rows"], f"the rows at move {i}"
            assert g["table"] == w["table"], f"the sausage at move {i}"
            assert_marks(g, w["marks"], i)
            # face down but for the tile turned up and the tiles turned up before (public, KB-15)
            turned.update(g["up"])
            assert g["face_up"] == len(g["up"]) + len(g["public"]), f"only tiles turned up are face up at move {i}"
            assert set(g["public"]) <= turned and turned & {t for row in rows for t in row} <= set(g["public"]) | set(g["up"]), i
            seen["public"] += bool(g["public"])
            seen["turn"] += bool(g["up"])
            seen["insert"] += g["place"] is not None and g["place"].startswith(("top:", "bottom:"))
            if "knife" in g["table"]:
                seen["knife"] += 1
                # What the knife cuts: the start and its junction's tiles of both lines.
                at = int(g["place"].split(":")[1])
                assert g["cut"] == 1 + 2 * at, f"the tiles marked cut at move {i}"
                nxt, after = got[i + 1], want["steps"][i + 1]
                seen["cut"] += 1
                # The next step moves them to the left end of the other row, marked as arrived.
                mover = next(s for s in range(2) if len(after["rows"][s]) > len(w["rows"][s]))
                assert len(after["rows"][mover]) - len(w["rows"][mover]) == g["cut"]
                assert nxt["arrived"] == after["rows"][mover][: g["cut"]]
                assert sum(map(len, nxt["table"].values())) == sum(map(len, g["table"].values())) - g["cut"]
            seen["tail"] += g["arrived"] != [] and "knife" not in got[i - 1]["table"]
    assert all(seen.values()), seen


def test_every_played_deal_has_a_replay_page_linked_from_the_match_page(logs, page, tmp_path):
    log = logs["kozel"]
    site = tmp_path / "site"
    assert cli("report", str(log), "-O", str(site)).exit_code == 0
    played = [r for _, r in read_log(log) if r["k"] == "deal_end"]
    names = [b["name"] for _, r in read_log(log) if r["k"] == "match" for b in r["bots"]]
    page.goto(url(site / "index.html"))
    links = page.eval_on_selector_all("#deals a.replay", "as => as.map(a => a.getAttribute('href'))")
    assert links == [f"g{r['game'] + 1}-o{r['orientation']}-d{r['deal'] + 1}.html" for r in played]
    leaders = []

    class Leaders(Replayer):
        def on_deal(self, rec, state):
            if state is not None:
                leaders.append(f"{names[self.seating[state.leader]]} seat {state.leader}")

    Leaders(log).run()
    led = page.eval_on_selector_all("#deals tbody tr:not(.void)", "rs => rs.map(r => r.cells[3].innerText)")
    assert [t.split(",")[0] for t in led] == leaders
    result = next(r for _, r in read_log(log) if r["k"] == "result")
    totals = page.eval_on_selector_all("#totals tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.innerText))")
    assert [[row[0], int(row[1])] for row in totals] == [[t["bot"], t["points"]] for t in result["totals"]]
    m = result["margin"][result["bots"][0]["name"]]["paired"]
    assert f"{m['mean']:+.2f}" in page.inner_text("#result")
    page.click("#deals a.replay >> nth=2")
    page.wait_for_url(f"**/{links[2]}*")
    assert page.inner_text("#counter").startswith("move 0 /")
    # Each replay links to the next deal.
    page.click("#next-deal")
    page.wait_for_url(f"**/{links[3]}*")
    assert page.inner_text("#counter").startswith("move 0 /")


def test_a_move_from_the_url_and_the_arrow_keys(logs, page, tmp_path):
    site = tmp_path / "site"
    assert cli("report", str(logs["sport"]), "-O", str(site)).exit_code == 0
    want = expected_deal(logs["sport"], 0, 1, 0)
    page.goto(url(site / "index.html"))
    result = next(r for _, r in read_log(logs["sport"]) if r["k"] == "result")
    m = result["margin"][result["bots"][0]["name"]]["paired"]
    assert f"{m['mean']:+.2f}" in page.inner_text("#result")
    assert f"[{m['ci95'][0]:+.2f}, {m['ci95'][1]:+.2f}]" in page.inner_text("#result")  # the interval
    summary = msgspec.convert(result, MatchSummary)
    # what `referee match` printed, its LOS labelled as the page's figures label it
    assert _labelled_los(verdict_text(summary).plain.strip(), summary) in page.inner_text("#result")
    page.goto(url(site / "g1-o1-d1.html", "#move=5"))
    assert page.inner_text("#counter") == f"move 5 / {len(want['steps']) - 1}"
    assert drawn(page)["table"] == want["steps"][5]["table"]
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#counter").startswith("move 6 /")
    page.wait_for_url("**#move=6")  # the URL follows, so a reload keeps the place
    page.reload()
    assert page.inner_text("#counter").startswith("move 6 /")
    page.keyboard.press("End")
    assert drawn(page)["result"] is not None
    # Play runs the deal from the start, a move at a time, and stops at its end.
    page.evaluate("document.body.dataset.playMs = 20")
    page.click("#play")
    page.wait_for_function("replay.at === replay.last", timeout=10_000)
    assert page.inner_text("#play") == "play"
    page.click("#play")
    page.wait_for_function("replay.at >= 2", timeout=10_000)
    page.keyboard.press(" ")  # pause
    stopped = page.evaluate("replay.at")
    page.wait_for_timeout(100)
    assert page.evaluate("replay.at") == stopped < len(want["steps"]) - 1
    page.screenshot(path=str(tmp_path / "replay-end.png"))
    page.goto(url(site / "g1-o1-d1.html", "#move=12"))
    page.screenshot(path=str(tmp_path / "replay-mid-deal.png"), full_page=True)
    assert (tmp_path / "replay-mid-deal.png").stat().st_size > 10_000


def test_points_written_during_play_show_in_the_scores_and_the_move_list(logs, page, tmp_path):
    """The replay's side of points written during play (telephone, muggins): a step with
    ``wrote`` moves the scores on and says so in the move list."""
    from referee.web.data import read_match
    from referee.web.site import copy_assets, write_page

    data = read_match(logs["draw"])
    deal = data.deals[0]
    steps = deal["steps"]
    lead = steps[1]
    scored = {**lead, "kind": "score", "text": "seat 0 writes 10", "wrote": [10, 0], "scores": [lead["scores"][0] + 10, lead["scores"][1]]}
    deal["steps"] = [*steps[:2], scored, *({**s, "scores": [s["scores"][0] + 10, s["scores"][1]]} for s in steps[2:])]
    deal["result"] = None
    deal["steps"].pop()
    copy_assets(tmp_path)
    write_page(tmp_path / "deal.html", "deal.html", deal, "", up=None)
    page.goto(url(tmp_path / "deal.html", "#move=2"))
    assert drawn(page)["scores"][0] == deal["before"][0] + 10
    assert page.inner_text("#scores .score[data-side='0'] .gain") == "+10"
    assert "seat 0 +10" in page.inner_text("#moves li.current")
    page.keyboard.press("ArrowLeft")
    assert drawn(page)["scores"][0] == deal["before"][0]


def _overlap(p: dict, q: dict) -> bool:
    eps = 1e-9
    return p["x"] < q["x"] + q["w"] - eps and q["x"] < p["x"] + p["w"] - eps and p["y"] < q["y"] + q["h"] - eps and q["y"] < p["y"] + p["h"] - eps


def _touch(p: dict, q: dict) -> bool:
    eps = 1e-9
    return (not _overlap(p, q) and p["x"] <= q["x"] + q["w"] + eps and q["x"] <= p["x"] + p["w"] + eps
            and p["y"] <= q["y"] + q["h"] + eps and q["y"] <= p["y"] + p["h"] + eps)


def check_geometry(tiles: list[dict], chains: list[list[int]]) -> None:
    """No two tiles overlap, and along each chain every tile touches the one before it."""
    for i, p in enumerate(tiles):
        for q in tiles[i + 1:]:
            assert not _overlap(p, q), f"{p} overlaps {q}"
    for chain in chains:
        for i, j in itertools.pairwise(chain):
            assert _touch(tiles[i], tiles[j]), f"{tiles[i]} does not touch {tiles[j]}"


def test_the_line_is_laid_without_overlaps_in_every_deal(logs, page, tmp_path):
    from referee.web.data import read_match

    site = tmp_path / "site"
    assert cli("report", str(logs["sport"]), "-O", str(site)).exit_code == 0
    page.goto(url(site / "g1-o0-d1.html"))
    deals = 0
    for log in logs.values():
        for deal in read_match(log).deals:
            placements = [{"tile": s["tile"], "end": s["end"], "seat": s["seat"]} for s in deal["steps"] if s["kind"] == "place"]
            tiles = page.evaluate("ps => replay.LAYOUTS.line(ps)", placements)
            assert sorted(sort_tiles(["-".join(sorted(t["tile"].split("-"))) for t in tiles])) == sorted(sort_tiles([p["tile"] for p in placements]))
            check_geometry(tiles, [list(range(len(tiles)))])
            # On a narrow table the arms turn every few tiles: still no overlap.
            check_geometry(page.evaluate("ps => replay.LAYOUTS.line(ps, undefined, {line: 4})", placements), [list(range(len(tiles)))])
            deals += 1
    assert deals > 50


def test_the_trains_are_laid_without_overlaps_and_a_long_train_wraps(logs, page, tmp_path):
    from referee.web.data import read_match

    site = tmp_path / "site"
    log = logs["mexican_train"]
    assert cli("report", str(log), "-O", str(site)).exit_code == 0
    page.goto(url(site / "g1-o0-d1.html"))

    def laid(placements: list[dict], table: dict, size: str = "WIDE") -> list[dict]:
        tiles = [t for t in page.evaluate(f"([ps, t]) => replay.LAYOUTS.trains(ps, t, replay.{size})", [placements, table]) if "kind" not in t]
        # Along a train, each tile touches the one before it unless it starts a new row.
        runs: list[list[int]] = []
        for i, t in enumerate(tiles):
            before = runs[-1][-1] if runs else None
            if before is not None and tiles[before].get("arm") == t.get("arm") and t["x"] > tiles[before]["x"]:
                runs[-1].append(i)
            else:
                runs.append([i])
        check_geometry(tiles, runs)
        return tiles

    for deal in read_match(log).deals:
        placements = [{"tile": s["tile"], "end": s["end"], "seat": s["seat"]} for s in deal["steps"] if s["kind"] in ("station", "place")]
        for size in ("WIDE", "NARROW"):
            tiles = laid(placements, {**deal["table"], **deal["steps"][-1]["table"]}, size)
            assert len(tiles) == len(placements)
    # Sixteen tiles on seat 0's train: they wrap onto a second row (on a phone's narrow table, a
    # third), each starting where the first did.
    chain = ["6-5", "5-5", "5-4", "4-4", "4-3", "3-3", "3-2", "2-2", "2-1", "1-1", "1-0", "0-0", "0-2", "2-6", "6-1", "1-3"]
    placements = [{"tile": "6-6", "end": None, "seat": 0}] + [{"tile": t, "end": "seat0", "seat": 0} for t in chain]
    for size, count in (("WIDE", 2), ("NARROW", 3)):
        tiles = laid(placements, {**deal["table"], "markers": ["seat0"], "open": None, "hangs": False}, size)
        rows = sorted({t["y"] + t["h"] / 2 for t in tiles[1:]})
        assert len(rows) == count and [t["tile"] for t in tiles[1:]] == chain
        assert all(min(t["x"] for t in tiles[1:] if t["y"] + t["h"] / 2 == row) == tiles[1]["x"] for row in rows)


def test_the_sausage_is_laid_without_overlaps_and_a_narrow_table_breaks_it_into_aligned_bands(logs, page, tmp_path):
    """Every step of every kolbasa deal, laid wide (one band) and as a phone lays it (bands of
    five tiles a line): no two tiles overlap; tile k of the top line stands over tile k of the
    bottom line, in the same band, each line touching tile to tile within a band and every band
    starting where the first does; a knife stands in its band, across both lines."""
    from referee.web.data import read_match

    site = tmp_path / "site"
    log = logs["kolbasa"]
    assert cli("report", str(log), "-O", str(site)).exit_code == 0
    page.goto(url(site / "g1-o0-d1.html"))
    tables = [{**(deal.get("table") or {}), **(step.get("table") or {})} for deal in read_match(log).deals for step in deal["steps"]]
    tables = [t for t in tables if t.get("start")]
    assert len(tables) > 100
    for size, band in (("WIDE", None), ("NARROW", 5)):
        assert page.evaluate(f"replay.{size}.band") == (band or float("inf"))
        bands_seen = 0
        for table, laid in zip(tables, page.evaluate(f"ts => ts.map(t => replay.LAYOUTS.sausage([], t, replay.{size}))", tables)):
            tiles = [t for t in laid if "kind" not in t]
            check_geometry(tiles, [])
            lines = {arm: [t for t in tiles if t.get("arm") == arm] for arm in ("top", "bottom")}
            for arm, line in lines.items():
                assert [t["tile"] for t in line] == [f"{a}-{b}" for a, b in table[arm]]
                rows = [[t for t in line if t["y"] == y] for y in sorted({t["y"] for t in line})]
                bands_seen = max(bands_seen, len(rows))
                assert all(len(row) <= (band or len(line)) for row in rows)
                assert all(row[0]["x"] in (1, 2) for row in rows)  # every band starts where the first does (or after a knife)
                # Each band's tiles touch, but for the gap a knife opens.
                cut = table["knife"]["at"] if table.get("knife") else None
                runs = [[line.index(t) for t in row] for row in rows]
                runs = [part for run in runs for part in ([[i for i in run if i < cut], [i for i in run if i >= cut]] if cut else [run])]
                check_geometry(line, runs)
            for top, bottom in zip(lines["top"], lines["bottom"]):
                assert (top["x"], top["y"] + 1) == (bottom["x"], bottom["y"])
            knife = [t for t in tiles if t.get("arm") == "knife"]
            if knife:
                k = table["knife"]["at"]
                before = lines["top"][k - 1] if k else None
                assert knife[0]["h"] == 2 and (before is None or (knife[0]["x"], knife[0]["y"]) == (before["x"] + 2, before["y"]))
        assert bands_seen == 1 if band is None else bands_seen >= 3


def test_the_cross_renderer_grows_up_and_down_from_the_first_open_double(page, logs, tmp_path):
    """The renderer the cross games (osel, telephone, muggins) will use: a lead 6-6, both sides,
    then columns on up and down, with doubles across them."""
    site = tmp_path / "site"
    assert cli("report", str(logs["sport"]), "-O", str(site)).exit_code == 0
    page.goto(url(site / "g1-o0-d1.html"))
    plays = [("6-6", None), ("4-6", "right"), ("2-6", "left"), ("1-6", "up"), ("5-6", "down"), ("1-1", "up"), ("1-3", "up"),
             ("5-5", "down"), ("0-5", "down"), ("4-4", "right"), ("2-3", "left"), ("3-3", "up"), ("0-0", "down")]
    placements = [{"tile": t, "end": e, "seat": i % 4} for i, (t, e) in enumerate(plays)]
    tiles = page.evaluate("ps => replay.LAYOUTS.cross(ps)", placements)
    line = [i for i, t in enumerate(tiles) if "arm" not in t]
    up = [i for i, t in enumerate(tiles) if t.get("arm") == "up"]
    down = [i for i, t in enumerate(tiles) if t.get("arm") == "down"]
    assert [tiles[i]["tile"] for i in line] == ["3-2", "2-6", "6-6", "6-4", "4-4"]
    assert [tiles[i]["tile"] for i in up] == ["6-1", "1-1", "1-3", "3-3"]
    assert [tiles[i]["tile"] for i in down] == ["6-5", "5-5", "5-0", "0-0"]
    spinner = line[2]
    check_geometry(tiles, [line, [spinner, *up], [spinner, *down]])
    assert all(tiles[i]["y"] < tiles[spinner]["y"] for i in up) and all(tiles[i]["y"] > tiles[spinner]["y"] for i in down)
    assert [tiles[i]["w"] for i in up] == [1, 2, 1, 2]  # doubles lie across the column

    # A long column turns: up to the left, down to the right, and nothing overlaps.
    more = [("3-4", "up"), ("4-5", "up"), ("5-2", "up"), ("2-2", "up"), ("2-0", "up"), ("0-4", "down"), ("4-1", "down"),
            ("1-5", "down"), ("5-3", "down"), ("3-6", "down")]
    placements += [{"tile": t, "end": e, "seat": 0} for t, e in more]
    tiles = page.evaluate("ps => replay.LAYOUTS.cross(ps)", placements)
    up = [i for i, t in enumerate(tiles) if t.get("arm") == "up"]
    down = [i for i, t in enumerate(tiles) if t.get("arm") == "down"]
    line = [i for i, t in enumerate(tiles) if "arm" not in t]
    check_geometry(tiles, [line, [line[2], *up], [line[2], *down]])
    top = min(tiles[i]["y"] for i in up)
    assert tiles[up[-1]]["x"] < tiles[line[2]]["x"] and tiles[down[-1]]["x"] > tiles[line[2]]["x"]
    assert top >= tiles[line[2]]["y"] - 10  # it turned instead of growing on


#: Every prefix of each deal's placements laid by the cross renderer at ``size``: the steps at
#: which two tiles overlap, and each deal's table at its end.
CROSS_STEPS = """([deals, size]) => deals.map((ps) => {
    const overlap = (p, q) => p.x < q.x + q.w - 1e-9 && q.x < p.x + p.w - 1e-9 && p.y < q.y + q.h - 1e-9 && q.y < p.y + p.h - 1e-9;
    const bad = [];
    for (let n = 1; n <= ps.length; n++) {
        const tiles = replay.LAYOUTS.cross(ps.slice(0, n), undefined, size);
        if (tiles.some((p, i) => tiles.slice(i + 1).some((q) => overlap(p, q)))) bad.push(n);
    }
    return {bad, tiles: replay.LAYOUTS.cross(ps, undefined, size)};
})"""


def test_the_cross_is_laid_without_overlaps_in_every_deal_wide_or_narrow(logs, page, tmp_path):
    """Every deal of the cross games, at every step, laid as wide as a desktop lays it, as narrow
    as a phone does and narrower still: the four arms keep to their own quarters (a pinwheel),
    so no two tiles overlap, each arm touching tile to tile; and the lead stays where the line
    alone puts it, so the table does not jump when the spinner arrives."""
    from referee.web.data import read_match

    site = tmp_path / "site"
    assert cli("report", str(logs["osel"]), "-O", str(site)).exit_code == 0
    page.goto(url(site / "g1-o0-d1.html"))
    deals = [[{"tile": s["tile"], "end": s["end"], "seat": s["seat"], "closed": s.get("closed", False)} for s in d["steps"] if s["kind"] == "place"]
             for game in ("osel", "telephone", "muggins") for d in read_match(logs[game]).deals]
    assert len(deals) > 40
    sizes = [page.evaluate("replay.WIDE"), page.evaluate("replay.NARROW"), {"cross": 4, "column": 2}]
    turned = 0
    for size in sizes:
        for ps, got in zip(deals, page.evaluate(CROSS_STEPS, [deals, size])):
            assert got["bad"] == [], f"overlaps at steps {got['bad']} of {ps}"
            tiles = got["tiles"]
            line = [i for i, t in enumerate(tiles) if "arm" not in t]
            at = {"-".join(sorted(tiles[i]["tile"].split("-"), key=int)): i for i in line}
            first_double = next((p["tile"] for p in ps if p["end"] in (None, "left", "right") and not p["closed"]
                                 and len(set(p["tile"].split("-"))) == 1), None)
            arms = [[i for i, t in enumerate(tiles) if t.get("arm") == a] for a in ("up", "down")]
            check_geometry(tiles, [line, *([at[first_double], *arm] for arm in arms if arm)])
            lead = at[ps[0]["tile"]]
            double = len(set(ps[0]["tile"].split("-"))) == 1
            assert (tiles[lead]["x"], tiles[lead]["y"]) == ((-0.5, -1) if double else (-1, -0.5))  # where the line alone lays it
            turned += any(t["w"] == 1 and t["h"] == 2 and t["a"] != t["b"] for t in tiles)  # a corner: an arm turned
    assert turned > len(deals)  # the narrow sizes turn the arms in most deals


def test_points_and_declarations_during_play_become_steps(tmp_path, monkeypatch):
    """The document side of telephone's and sea_kozel's events, before the referee plays those
    games: a scripted walk of the log (the engine's events as LogWalker hands them over)."""
    from types import SimpleNamespace

    from referee.engine.core.line import Declared
    from referee.web import data

    header = {"k": "match", "variant": "sport", "players": 4, "options": {"lone_doubles": False}, "deals": 4,
              "bots": [{"name": "a", "command": []}, {"name": "b", "command": []}], "orientations": [[0, 1, 0, 1]]}
    hands = [["0-0", "0-1"], ["1-1", "1-2"], ["2-2", "2-3"], ["3-3", "3-4"]]
    state = SimpleNamespace(history=[], bazaar=(), leader=1, lead_tile=None)
    script = [("match", header), ("game", {"game": 0, "orientation": 0, "seating": [0, 1, 0, 1]}),
              ("deal", {"game": 0, "orientation": 0, "deal": 0, "stream": 0, "hands": hands, "undealt": [], "void": None,
                        "seating": [0, 1, 0, 1]}),
              ("event", {"event": Declared(1, "hundred"), "play": None}),
              ("event", {"event": Placed(1, parse_tile("1-1"), None), "play": {"ms": 1.5}}),
              ("event", {"event": Scored(1, 10, 2), "play": None})]

    def walk(self):
        for kind, rec in script:
            if kind == "match":
                self.header = msgspec.convert({**rec, **HEADER_REST}, R.Header)
                self.names = [b["name"] for b in rec["bots"]]
                self.on_header(self.header)
            elif kind == "deal":
                self.seating = rec["seating"]
                self.on_deal(msgspec.convert({k: v for k, v in rec.items() if k != "seating"}, R.Deal), state)
            elif kind == "event":
                self.on_event(rec["event"], None if rec["play"] is None else SimpleNamespace(**rec["play"]), state)

    monkeypatch.setattr(data.MatchReader, "run", walk)
    log = tmp_path / "m.jsonl"
    log.write_text(json.dumps(header) + "\n")
    steps = data.read_match(log).deals[0]["steps"]
    assert [s["kind"] for s in steps] == ["deal", "declare", "place", "score"]
    assert steps[1]["text"] == "b declares: 6-6 led for a hundred"
    assert steps[3]["wrote"] == [0, 10] and steps[3]["scores"] == [0, 10] and steps[2]["scores"] == [0, 0]
    assert steps[3]["hands"][1] == ["1-2"]


def kolbasa_page(monkeypatch, tmp_path: Path, rows: tuple[str, str], places: list[str]) -> Path:
    """The replay page of one kolbasa deal played from ``rows`` (seat 0 starts) with the places
    given in turn order: the engine's own events, handed to the web report as a log walk gives them."""
    from referee.engine import Deal
    from referee.engine.core.kolbasa import KolbasaDeal
    from referee.engine.core.layout import parse_place
    from referee.web import data
    from referee.web.site import copy_assets, write_page

    header = {"k": "match", "variant": "kolbasa", "players": 2, "options": {}, "deals": None, "bots": [{"name": "a", "command": []},
                                                                                                      {"name": "b", "command": []}],
              "orientations": [[0, 1]]}
    hands = [r.split() for r in rows]

    def walk(self):
        state = KolbasaDeal(Deal(tuple(tuple(parse_tile(t) for t in h) for h in hands), ()), leader=0)
        self.header = msgspec.convert({**header, **HEADER_REST}, R.Header)
        self.names = ["a", "b"]
        self.on_header(self.header)
        self.seating = [0, 1]
        self.on_deal(R.Deal(0, 0, 0, 0, hands, []), state)
        for e in state.history:  # the start, turned up and laid before anyone is asked
            self.on_event(e, None, state)
        for place in places:
            shown = len(state.history)
            state.push(Play(state.up, parse_place(place)), state.to_move())
            for e in state.history[shown:]:
                self.on_event(e, None, state)

    monkeypatch.setattr(data.MatchReader, "run", walk)
    log = tmp_path / "m.jsonl"
    log.write_text(json.dumps(header) + "\n")
    deal = data.read_match(log).deals[0]
    copy_assets(tmp_path)
    write_page(tmp_path / "deal.html", "deal.html", deal, "", up=None)
    return tmp_path / "deal.html"


def test_kolbasa_003_knife_stands_across_its_junction_then_cuts_the_sausage_into_the_other_row(monkeypatch, page, tmp_path):
    """003's knife: lines of three tiles from the start 2-3 end in 5 (top) and 0 (bottom); seat 1
    lays 5-0 across position 3.  The replay shows the knife standing in the gap with the start and
    both lines marked cut, then the sausage gone from the table (the knife, 5 on top, is the new
    start) and face down at the left end of seat 0's row in KB-5's order, before its 5-5: every
    one of them was turned up once, so the replay shows them face up there (public, KB-15)."""
    deal = kolbasa_page(monkeypatch, tmp_path, ("5-5 0-4 1-4 1-3 2-3", "3-3 0-5 5-6 4-6 2-4"),
                        ["top", "bottom", "top", "bottom", "top", "bottom", "knife:3"])
    page.goto(url(deal))
    steps = every_step(page)
    knife = next(i for i, s in enumerate(steps) if s["place"] == "knife:3")
    at = steps[knife]
    assert at["table"] == {"line": ["2-3"], "top": ["2-4", "4-6", "6-5"], "bottom": ["3-1", "1-4", "4-0"], "knife": ["5-0"]}
    assert at["cut"] == 7
    before = steps[knife - 1]
    assert before["up"] == ["0-5"] and dict(zip(before["seats"], before["hands"]))[1][-1] == "0-5"  # seat 1 turned it up
    cut = steps[knife + 1]
    assert cut["table"] == {"line": ["5-0"]} and cut["cut"] == 0
    sausage = ["2-3", "2-4", "4-6", "5-6", "1-3", "1-4", "0-4"]
    rows = dict(zip(cut["seats"], cut["hands"]))
    assert rows == {0: [*sausage, "5-5"], 1: ["3-3"]}
    assert cut["arrived"] == sausage and cut["public"] == sausage and cut["face_up"] == 7  # 5-5 and 3-3: never seen
    assert "cuts the sausage: 7 tiles" in page.evaluate(f"replay.go({knife + 1}), document.getElementById('caption').textContent")
    # Junctions are numbered under the lines while both reach them: 1, 2, 3 before the knife.
    page.evaluate(f"replay.go({knife - 1})")
    assert page.eval_on_selector_all("#table-svg .table-note", "ns => ns.map(n => n.textContent)") == ["1", "2", "3"]
    page.screenshot(path=str(tmp_path / "kolbasa-knife.png"))


def test_kolbasa_003_inserted_double_and_a_tail_are_drawn(monkeypatch, page, tmp_path):
    """003's inserted 1-1 goes in at the bottom line's junction 0 and the bottom line reads 1-1
    1-5 5-3; a tile that fits nowhere goes face down to the left end of its own row, public (it
    was turned up), so the replay shows it face up there."""
    deal = kolbasa_page(monkeypatch, tmp_path, ("4-4 3-5 1-5 0-1", "2-2 1-1 2-6 0-6"), ["top", "bottom", "top", "bottom", "bottom:0"])
    page.goto(url(deal))
    steps = every_step(page)
    insert = next(i for i, s in enumerate(steps) if s["place"] == "bottom:0")
    assert steps[insert - 1]["table"]["bottom"] == ["1-5", "5-3"]
    assert steps[insert]["table"] == {"line": ["0-1"], "top": ["0-6", "6-2"], "bottom": ["1-1", "1-5", "5-3"]}
    tail = tmp_path / "tail"
    tail.mkdir()
    page.goto(url(kolbasa_page(monkeypatch, tail, ("0-0 1-2 0-1", "3-3 5-6 1-4"), ["bottom"])))
    steps = every_step(page)
    tailed = [i for i, s in enumerate(steps) if s["arrived"]]
    assert [steps[i]["arrived"] for i in tailed] == [["1-2"], ["5-6"]]
    assert [dict(zip(steps[i]["seats"], steps[i]["hands"])) for i in tailed] == [{0: ["1-2", "0-0"], 1: ["3-3", "5-6"]},
                                                                                  {0: ["1-2", "0-0"], 1: ["5-6", "3-3"]}]
    assert [steps[i]["public"] for i in tailed] == [["1-2"], ["1-2", "5-6"]]
    assert steps[-1]["up"] == ["0-0"] and steps[-1]["public"] == ["1-2", "5-6"] and steps[-1]["face_up"] == 3


def test_a_log_cut_in_the_middle_of_a_deal(logs, page, tmp_path):
    lines = logs["draw"].read_bytes().splitlines(keepends=True)
    plays = [i for i, ln in enumerate(lines) if b'"k":"play"' in ln]
    cut_at = plays[len(plays) // 2]
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[: cut_at + 1]) + lines[cut_at + 1][:20])  # and half a line
    site = tmp_path / "site"
    r = cli("report", str(cut), "-O", str(site))
    assert r.exit_code == 0, r.output
    assert "warning" in r.stderr
    page.goto(url(site / "index.html"))
    assert "Incomplete log" in page.inner_text("#problem")
    assert "No result" in page.inner_text("#result")
    cut_deal = page.eval_on_selector_all("#deals a.replay", "as => as.map(a => a.getAttribute('href'))")[-1]
    page.goto(url(site / cut_deal, "#move=9999"))
    assert page.is_visible("#cut")
    counter = page.inner_text("#counter")
    n = int(counter.split("/")[1])
    assert counter == f"move {n} / {n}"
    # Every placement the log recorded in that deal is on the table.
    last_deal = [json.loads(ln) for ln in lines[: cut_at + 1] if b'"k":"deal"' in ln][-1]
    placed = [json.loads(ln) for ln in lines[: cut_at + 1] if b'"k":"play"' in ln]
    start = next(i for i, ln in enumerate(lines) if json.loads(ln) == last_deal)
    placed_here = [p for p in (json.loads(ln) for ln in lines[start : cut_at + 1]) if p["k"] == "play"]
    assert placed and len(drawn(page)["line"]) >= len(placed_here)


def test_three_bots_get_the_ranking_and_its_rule(page, tmp_path):
    log = tmp_path / "m.jsonl"
    referee("match", *(str(BOTS / b) for b in ("greedy_bot.py", "random_bot.py", "first_bot.py")), "--variant", "draw", "--log", str(log), "-q")
    site = tmp_path / "site"
    assert cli("report", str(log), "-O", str(site)).exit_code == 0
    result = next(r for _, r in read_log(log) if r["k"] == "result")
    page.goto(url(site / "index.html"))
    rows = page.eval_on_selector_all("#ranking tbody tr", "rs => rs.map(r => r.cells[1].innerText)")
    assert rows == [r["bot"] for r in result["ranking"]["standings"]]
    assert result["ranking"]["rule"] in page.inner_text("#result")
    page.goto(url(site / "g1-o0-d1.html"))
    assert page.locator(".hand").count() == 3


def test_bot_names_are_text_never_markup(page, tmp_path):
    evil = '<img src=x onerror="alert(1)">'
    log = tmp_path / "m.jsonl"
    referee("match", str(BOTS / "greedy_bot.py"), str(BOTS / "random_bot.py"), "--variant", "draw", "--log", str(log), "-q",
            "--name", evil, "--name", "</script><script>alert(2)</script>")
    site = tmp_path / "site"
    assert cli("report", str(log), "-O", str(site)).exit_code == 0
    page.goto(url(site / "index.html"))
    assert evil in page.inner_text("h1")
    assert page.locator("img").count() == 0
    page.goto(url(site / "g1-o0-d1.html"))
    assert evil in page.inner_text("#seats")
    assert page.locator("img").count() == 0


def test_a_report_written_again_drops_deal_pages_the_log_no_longer_has(logs, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "g9-o0-d9.html").write_text("an old deal")
    (site / "g9-o0-d9.json").write_text("{}")
    (site / "notes.txt").write_text("not ours")
    assert cli("report", str(logs["sport"]), "-O", str(site)).exit_code == 0
    assert not (site / "g9-o0-d9.html").exists() and not (site / "g9-o0-d9.json").exists()
    assert (site / "notes.txt").read_text() == "not ours"
    assert len(list(site.glob("g*-o*-d*.html"))) == 8


def test_report_refuses_what_is_not_a_log(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\n")
    r = cli("report", str(junk), "-O", str(tmp_path / "site"))
    assert r.exit_code == X.USAGE
    assert r.stderr.count("\n") == 1 and "line 1 is not JSON" in r.stderr
    junk.write_text('{"a": 1}\n')
    r = cli("report", str(junk), "-O", str(tmp_path / "site"))
    assert r.exit_code == X.USAGE
    assert r.stderr.count("\n") == 1 and "line 1 is not a record of a match log" in r.stderr
    assert not (tmp_path / "site").exists() or not any((tmp_path / "site").iterdir())
    r = cli("report", str(tmp_path / "missing.jsonl"), "-O", str(tmp_path / "site"))
    assert r.exit_code == X.USAGE and "no such file" in r.stderr



def test_a_fault_without_a_line_is_listed_on_the_match_page(tmp_path):
    """A crash or a timeout has no line the bot wrote: the log leaves ``line`` out, and the page
    lists the fault all the same (it once failed on the missing key)."""
    log = tmp_path / "crash.jsonl"
    flawed = ROOT / "tests" / "hostile_bots" / "flawed.py"
    r = referee("match", str(BOTS / "greedy_bot.py"), f"{sys.executable} {flawed} late_crash", "--variant", "sport", "--deals", "4",
                "--seed", "1", "--log", str(log), "-q", check=False)
    faults = [rec for _, rec in read_log(log) if rec["k"] == "fault"]
    assert faults and all("line" not in f for f in faults), (r.stderr, faults)
    r = cli("report", str(log), "-O", str(tmp_path / "site"))
    assert r.exit_code == 0, r.stderr
    html = (tmp_path / "site" / "index.html").read_text()
    assert html.count('<td class="bot">flawed') >= 1 and "crash" in html


# -- leagues --------------------------------------------------------------------------------------------


def write_league(path: Path, game: str = "sport", players: int = 4, deals: str = "deals = 4", faulty: bool = True) -> Path:
    """A league of greedy, first and (``faulty``) a bot that plays a tile that does not fit."""
    (path.parent / "hostile-state").mkdir(exist_ok=True)
    path.write_text(f"""
name = "{'web <test>' if game == 'sport' else f'{game} league'}"
seed = 3
[game]
variant = "{game}"
players = {players}
{deals}
[clock]
startup = 20.0
move = 5.0
[[bot]]
name = "greedy"
command = "{BOTS / 'greedy_bot.py'}"
[[bot]]
name = "first"
command = "{BOTS / 'first_bot.py'}"
""" + (f"""[[bot]]
name = "faulty"
command = "{sys.executable} {ROOT / 'tests' / 'hostile_bots' / 'hostile.py'} no_fit {path.parent / 'hostile-state'}"
sandbox = false               # hostile.py records what it does in its state directory
""" if faulty else ""))
    return path


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> tuple[Path, Path]:
    """A finished league of three sample bots, run with --report."""
    d = tmp_path_factory.mktemp("league")
    toml = write_league(d / "league.toml")
    site = d / "live-site"
    referee("league", "run", str(toml), "--report", str(site), "-q")
    return toml, site


def test_league_page_shows_the_table_of_league_table_and_links_to_replays(league, page, tmp_path):
    toml, _ = league
    site = tmp_path / "site"
    r = cli("report", str(toml), "-O", str(site))
    assert r.exit_code == 0, r.output
    page.goto(url(site / "index.html"))
    page.screenshot(path=str(tmp_path / "league.png"), full_page=True)
    # The same figures as `referee league table` (its markdown rows, cell by cell).
    md = referee("league", "table", str(toml), "--format", "markdown").stdout
    want = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in md.splitlines() if ln.startswith("| ") and not ln.startswith("| #")]
    got = page.eval_on_selector_all("#standings tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.innerText.trim()))")
    assert got == want
    assert page.locator("#ratings-plot .rating-row").count() == 3
    table_json = json.loads(referee("league", "table", str(toml), "--format", "json").stdout)
    page.click("#legend summary")
    for item in table_json.get("legend", []):
        assert item["meaning"] in page.inner_text("#legend")
    # Faults by kind, as the table's JSON counts them.
    table = json.loads(referee("league", "table", str(toml), "--format", "json").stdout)
    kinds = page.eval_on_selector_all("#faults thead th", "hs => hs.slice(1).map(h => h.innerText)")
    shown = {r[0]: dict(zip(kinds, map(int, r[1:]))) for r in
             page.eval_on_selector_all("#faults tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.innerText))")}
    assert shown == {r["bot"]: {k.replace("_", " "): r[k] for k in table["standings"][0] if k in X_KINDS} for r in table["standings"]}
    assert shown["faulty"]["illegal"] >= 1
    assert page.locator("#cross td.win, #cross td.loss, #cross td.draw").count() == 6
    assert page.inner_text("h1") == "web <test>"
    # Through the cross-table to a match, and on to a replay.
    page.click("#cross td.win a >> nth=0")
    page.wait_for_url("**/matches/*/index.html")
    assert page.locator("#deals a.replay").count() == 8
    page.click("#deals a.replay >> nth=0")
    page.wait_for_url("**/g1-o0-d1.html*")
    assert page.inner_text("#counter").startswith("move 0 /")
    assert page.locator("#table-svg [data-tile]").count() == 0
    page.keyboard.press("ArrowRight")
    assert page.locator("#table-svg [data-tile]").count() == 1
    page.click("header.top a >> nth=0")  # back up to the league
    page.wait_for_url("**/site/index.html")
    assert page.inner_text("h1") == "web <test>"


def test_league_run_report_is_refreshed_and_the_page_reloads_itself(league, page, tmp_path):
    toml, site = league
    doc = json.loads((site / "index.json").read_text())
    assert doc["pairings"]["done"] == 3
    assert len(list((site / "matches").glob("*/index.html"))) == 3
    # The page polls version.js; a changed version reloads it, opened from disk as it is here.
    page.goto(url(site / "index.html"))
    page.evaluate("window.reloadedNot = true")
    page.wait_for_timeout(300)
    assert page.evaluate("window.reloadedNot") is True
    version = site / "version.js"
    text = version.read_text()
    try:
        version.write_text(re.sub(r'"[0-9a-f]+"', '"changed"', text))
        page.wait_for_function("window.reloadedNot === undefined", timeout=15_000)
    finally:
        version.write_text(text)
    # The same from a served folder (a web server on the loopback address, as an organiser would).
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        page.goto(f"http://127.0.0.1:{server.server_port}/index.html")
        page.evaluate("window.reloadedNot = true")
        try:
            version.write_text(re.sub(r'"[0-9a-f]+"', '"changed again"', text))
            page.wait_for_function("window.reloadedNot === undefined", timeout=15_000)
        finally:
            version.write_text(text)
        assert page.inner_text("h1") == "web <test>"
        page.goto("about:blank")  # stop polling before the server goes away
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    # A run with nothing left to play keeps the report's match pages as they were.
    stamp = {p: p.stat().st_mtime_ns for p in (site / "matches").rglob("*.html")}
    referee("league", "run", str(toml), "--report", str(site), "-q")
    assert {p: p.stat().st_mtime_ns for p in (site / "matches").rglob("*.html")} == stamp


def test_a_report_that_cannot_be_written_costs_the_league_nothing(tmp_path):
    toml = write_league(tmp_path / "league.toml")
    site = tmp_path / "site"
    site.mkdir()
    (site / "assets").write_text("a file where the report wants a folder")
    r = referee("league", "run", str(toml), "--report", str(site), "-q", check=False)
    assert r.returncode == 0, r.stderr
    assert "warning: the report" in r.stderr and "Traceback" not in r.stderr
    assert "3 of 3 pairings done" in r.stdout
    r = referee("league", "run", str(toml), "--report", str(toml), "-q", check=False)
    assert r.returncode == X.USAGE and "not a folder" in r.stderr


@pytest.mark.parametrize(("game", "players", "games", "labels"), [("mexican_train", 4, "", 5), ("kolbasa", 2, "games = 1", 2)])
def test_a_league_of_the_train_and_sausage_games_reports_its_matches_like_the_others(tmp_path, page, game, players, games, labels):
    """The league page of mexican_train (a label a train) and kolbasa (top and bottom) links to
    the match page as for every game, and its replays draw the table."""
    toml = write_league(tmp_path / "league.toml", game, players, games, faulty=False)
    site = tmp_path / "site"
    r = referee("league", "run", str(toml), "--report", str(site), "-q")
    assert "1 of 1 pairings done" in r.stdout
    page.goto(url(site / "index.html"))
    assert page.inner_text("h1") == f"{game} league"
    assert page.locator("#matches tbody tr").count() == 1
    assert page.locator("#cross td.win, #cross td.loss, #cross td.draw").count() == 2
    page.click("#matches a >> nth=0")
    page.wait_for_url("**/matches/*/index.html")
    match = json.loads(next((site / "matches").glob("*/index.json")).read_text())
    played = [d for d in match["deals"] if d["slug"]]
    assert page.locator("#deals a.replay").count() == len(played) >= 2
    page.click("#deals a.replay >> nth=1")
    page.wait_for_url(f"**/{played[1]['slug']}.html*")
    assert page.locator("#table-svg [data-tile]").count() == 0
    page.keyboard.press("End")
    assert page.locator("#table-svg [data-tile]").count() > 1
    assert page.locator("#table-svg .table-label").count() == labels


def test_league_report_before_any_match(tmp_path, page):
    toml = write_league(tmp_path / "league.toml")
    site = tmp_path / "site"
    r = cli("report", str(toml), "-O", str(site))
    assert r.exit_code == 0, r.output
    page.goto(url(site / "index.html"))
    assert page.inner_text("#done").startswith("0 / 3")
    assert page.locator("#matches tbody tr").count() == 3


@pytest.mark.slow
def test_the_readme_screenshots_command(tmp_path, browser):
    out = tmp_path / "shots"
    r = subprocess.run([sys.executable, "-m", "referee.web.screenshots", "--out", str(out)], capture_output=True, text=True, timeout=600,
                       check=False)
    assert r.returncode == 0, r.stderr
    for name in ("league.png", "replay.png", "cross.png", "trains.png", "kolbasa.png", "phone.png"):
        png = (out / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
