"""``referee play`` on a phone (390 x 844 CSS pixels, Chromium emulating a mobile browser), issue
33 item 5: the `next deal ›` button sits by the status line that asks for it, and the match's
verdict is brought into view at its end; a tile that cannot be played now keeps its pips at full
contrast; when a tile fits both ends of the line, the table marks which end is "left" and which
"right"; mexican_train names whose train is whose ("your train", "greedy_bot's train", "the
Mexican train") and its scores panel names the bots.

The matches are seeded, so what is dealt is fixed; the person's moves are the page's own (the
first playable tile, or the tile that fits both ends).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api as playwright_api

from tests.play.test_play_browser import played, step
from tests.web.test_web import chromium

pytestmark = pytest.mark.slow  # each test plays a match through Chromium

ROOT = Path(__file__).resolve().parents[2]
GREEDY = str(ROOT / "sample_bots" / "greedy_bot.py")
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser():
    yield from chromium()


@contextlib.contextmanager
def phone(browser, url: str) -> Iterator[playwright_api.Page]:
    """The page at ``url`` on a phone; its script errors fail the test."""
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    try:
        pg.goto(url)
        yield pg
    finally:
        with contextlib.suppress(playwright_api.Error):
            ctx.close()
    assert not errors, "\n".join(errors)


def luminance(css: str) -> float:
    """The relative luminance (WCAG 2) of a computed colour, ``rgb(r, g, b)``."""
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


# An unplayable tile as drawn: the opacity it is shown with (its own times every ancestor's), its
# filter, and the computed fills of its face and of its pips.
UNPLAYABLE = """() => {
  const svg = document.querySelector(".to-move svg.unplayable");
  if (!svg) return null;
  let opacity = 1;
  for (let n = svg; n instanceof Element; n = n.parentElement) opacity *= Number(getComputedStyle(n).opacity);
  const face = svg.querySelector(".face");
  const pip = svg.querySelector(".pip");
  return { tile: svg.dataset.tile, opacity, filter: getComputedStyle(svg).filter,
           face: getComputedStyle(face).fill, pip: pip ? getComputedStyle(pip).fill : null,
           width: svg.getBoundingClientRect().width };
}"""


# Where the "next deal" button and the prompt above it are on the page (not the screen: the person
# may have scrolled), and the prompt's text, read in one go: the page may take the next state
# between two separate reads (a bot's move in the live deal, then the person's going on), and the
# prompt of a later state would be checked against an earlier button.
NEXT_SHOWN = """() => {
  const next = document.getElementById("next");
  if (!next.hasAttribute("data-next")) return null;
  const at = id => { const r = document.getElementById(id).getBoundingClientRect();
    return { x: r.x, y: r.y + scrollY, width: r.width, height: r.height }; };
  return [at("prompt"), at("next"), document.getElementById("prompt").innerText];
}"""


# Where the verdict is on the screen when the match's end is shown (the person may have scrolled
# since: what matters is where the page put it).
WATCH_VERDICT = """() => {
  const over = document.getElementById("over");
  new MutationObserver(() => {
    if (over.hasAttribute("data-match-over") && window.verdictAt === undefined) {
      const r = over.getBoundingClientRect();
      window.verdictAt = { top: r.top, bottom: r.bottom, height: innerHeight };
    }
  }).observe(over, { attributes: true });
}"""


@pytest.fixture(scope="module")
def mexican(browser, tmp_path_factory) -> dict[str, Any]:
    """A two-seat mexican_train match against greedy_bot (seed 5, one round a seating), played to
    its end on a phone by a person who scrolls to the foot of the page (the deal's result and its
    moves) before each thing they do: what the page showed on the way."""
    tmp = tmp_path_factory.mktemp("mexican")
    seen: dict[str, Any] = {"next": [], "unplayable": None, "labels": set(), "scores": set(), "choices": set(), "prompts": set()}
    with played(tmp, GREEDY, "--variant", "mexican_train", "--players", "2", "--deal-limit", "1", "--seed", "5", "--name", "ann") as p:
        with phone(browser, p.url) as page:
            page.evaluate(WATCH_VERDICT)
            for _ in range(500):
                page.wait_for_selector("[data-match-over], [data-next], [data-move], [data-choose]", state="attached", timeout=60_000)
                if page.locator("[data-match-over]").count():
                    break
                shown = page.evaluate(NEXT_SHOWN)
                if shown is not None:
                    seen["next"].append(tuple(shown))
                if page.locator(".to-move").count():
                    seen["prompts"].add(page.inner_text("#prompt"))
                    if seen["unplayable"] is None:
                        seen["unplayable"] = page.evaluate(UNPLAYABLE)
                    seen["choices"].update(page.eval_on_selector_all(
                        "[data-move]", "es => es.map(e => e.getAttribute('aria-label') || e.textContent)"))
                seen["labels"].update(page.eval_on_selector_all("#table-svg .table-label", "ts => ts.map(t => t.textContent)"))
                seen["scores"].update(t.strip() for t in page.locator("#scores .score span:first-child").all_inner_texts())
                page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
                step(page)
            else:
                raise AssertionError("the match did not end")
            page.wait_for_function("() => window.verdictAt !== undefined", timeout=10_000)
            seen["over"] = page.evaluate("() => window.verdictAt")
            seen["over_text"] = page.inner_text("#over")
        code, _, err = p.finish()
    assert code == 0, err
    return seen


def test_the_next_deal_button_sits_by_the_prompt_that_asks_for_it(mexican):
    assert mexican["next"], "the page never asked to go on to the next deal"
    for prompt, button, text in mexican["next"]:
        assert "next deal" in text
        gap = button["y"] - (prompt["y"] + prompt["height"])
        assert -prompt["height"] <= gap <= 40, f"next deal › is {gap:.0f} px below the prompt"
        assert button["y"] + button["height"] < PHONE["height"], "next deal › is below the page's first screen"


def test_the_verdict_is_brought_into_view_at_the_matchs_end(mexican):
    over = mexican["over"]
    assert "The match is over" in mexican["over_text"]
    assert 0 <= over["top"] < over["height"] - 40, f"the verdict is at {over['top']:.0f} px of an {over['height']} px screen"


def test_a_tile_that_cannot_be_played_now_keeps_its_pips_legible(mexican):
    u = mexican["unplayable"]
    assert u is not None, "no unplayable tile was shown on the person's turn"
    assert u["opacity"] == 1 and "opacity" not in u["filter"] and "grayscale" not in u["filter"], u
    assert u["pip"] is not None, u  # a blank (0-0) would have none: seed 5's first is not
    assert contrast(u["pip"], u["face"]) >= 7, u  # pips countable: black on a light face
    assert u["width"] >= 36  # and big enough at 390 px


def test_mexican_train_names_whose_train_is_whose_and_the_scores_name_the_bots(mexican):
    assert mexican["labels"] == {"your train", "greedy_bot's train", "the Mexican train"}
    assert mexican["scores"] == {"ann (you) · seat 0", "greedy_bot · seat 1", "ann (you) · seat 1", "greedy_bot · seat 0"}
    assert mexican["choices"] and all(re.search(r"seat \d's train", c) is None for c in mexican["choices"]), mexican["choices"]
    assert any("on your train" in c or "on the Mexican train" in c for c in mexican["choices"])
    assert all(p.startswith("Your move:") for p in mexican["prompts"] if p.startswith("Your move")), mexican["prompts"]


# The tile of the person's turn that fits both the left and the right end, if any.
BOTH_ENDS = """() => {
  const s = window.play.state;
  if (!s || !s.ask) return null;
  const ends = new Map();
  for (const e of s.ask.legal) {
    if (!e.tile) continue;
    const k = [...e.tile].sort((a, b) => a - b).join("-");
    ends.set(k, [...(ends.get(k) || []), e.end]);
  }
  for (const [k, es] of ends) if (es.includes("left") && es.includes("right")) return { tile: k, ends: s.ask.ends };
  return null;
}"""


def test_a_tile_that_fits_both_ends_shows_which_end_is_left_and_which_right(browser, tmp_path):
    """A block game against greedy_bot (seed 3): the first time a tile of the person's fits both
    ends, it is chosen, and the table marks the left end and the right end, each on the half
    that shows that end's number (the turn's ``ends``); once a choice is made the marks go."""
    with played(tmp_path, GREEDY, "--variant", "block", "--players", "2", "--deal-limit", "1", "--seed", "3", "--name", "ann") as p:
        with phone(browser, p.url) as page:
            found = None
            for _ in range(200):
                page.wait_for_selector("[data-match-over], [data-next], [data-move], [data-choose]", state="attached", timeout=60_000)
                if page.locator("[data-match-over]").count():
                    break
                found = page.evaluate(BOTH_ENDS)
                if found:
                    break
                step(page)
            assert found, "no tile fitted both ends in the match"
            assert page.locator("#table-svg .end-mark").count() == 0  # nothing marked before a tile is chosen
            page.locator(f".to-move svg[data-choose='{found['tile']}']").click()
            marks = page.eval_on_selector_all("#table-svg .end-mark", "ms => ms.map(m => [m.dataset.endMark, Number(m.dataset.value),"
                                              " m.textContent])")
            assert sorted(m[0] for m in marks) == ["left", "right"], marks
            for end, value, text in marks:
                assert value == found["ends"][end] and text == end, (marks, found)
            page.locator("#table").screenshot(path=str(tmp_path / "ends.png"))
            # each mark is on the table, on screen
            for box in [page.locator(f"#table-svg [data-end-mark='{e}'] rect").bounding_box() for e in ("left", "right")]:
                assert box and 0 <= box["x"] and box["x"] + box["width"] <= PHONE["width"]
            page.locator("#choices button[data-move]").first.click()
            page.wait_for_function("() => !document.querySelector('#table-svg .end-mark')", timeout=10_000)
            # A line that has snaked (a phone's table turns an arm after five units): the right end
            # lies on the row below, reading leftwards, and both ends show 2; each end is found
            # on its own tile and half, which is what the marks are drawn from.
            placements = [{"tile": "3-4", "end": None}, *({"tile": t, "end": "right"} for t in
                                                           ("4-5", "5-6", "6-6", "0-6", "0-1", "1-1", "1-2")),
                          {"tile": "2-3", "end": "left"}]
            laid = page.evaluate("p => Referee.table.LAYOUTS.line(p, undefined, Referee.table.NARROW)", placements)
            ends = {o["end"]: (t, o["half"]) for t in laid for o in t.get("opens", [])}
            assert set(ends) == {"left", "right"}
            (left, lh), (right, rh) = ends["left"], ends["right"]
            assert left["tile"] == "2-3" and right["tile"] == "1-2"
            assert [left["a"], left["b"]][lh] == 2 and [right["a"], right["b"]][rh] == 2
            # on a lower row, short of the table's right edge: "right" no longer reads right
            assert right["y"] > left["y"] + 1 and right["x"] + right["w"] < max(t["x"] + t["w"] for t in laid)
