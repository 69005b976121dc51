"""``python -m referee.web.screenshots``: regenerate the README's pictures of the web report.

Plays the example league (``tournaments/example.toml``, the four sample bots) into a temporary
database with ``--report`` and a match each of telephone, mexican_train and kolbasa, then
photographs the league page, a replay in the middle of a deal (on a desktop screen and on a
phone), a telephone deal at its end, a mexican_train round with a hanging double and kolbasa's
first knife in headless Chromium
(Debian's ``/usr/bin/chromium``, driven by Playwright, a test extra: ``pip install -e '.[test]'``).
The example's seed and bots are deterministic, so the pictures change only when the pages do.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tournaments" / "example.toml"
SAMPLES = ROOT / "sample_bots"
CHROMIUM = Path("/usr/bin/chromium")
#: The replay shown: a match of the example league, a deal, and a move in its middle.
REPLAY_MATCH = "greedy-vs-random-js"
REPLAY_DEAL = "g1-o0-d2"
CROSS_DEAL = "g1-o0-d1"


#: The games played beside the league, each into ``site/<game>``: a cross game, the trains, the sausage.
MATCHES = ("telephone", "mexican_train", "kolbasa")


def build(site: Path, work: Path) -> None:
    """Play the example league into ``work`` and write its report into ``site``, and a match of
    each of :data:`MATCHES` with its report in ``site/<game>``."""
    subprocess.run([sys.executable, "-m", "referee", "league", "run", str(EXAMPLE), "--db", str(work / "example.db"),
                    "--report", str(site), "-q", "-j", "2"], check=True, stdout=subprocess.DEVNULL)
    for game in MATCHES:
        log = work / f"{game}.jsonl"
        subprocess.run([sys.executable, "-m", "referee", "match", str(SAMPLES / "greedy_bot.py"), str(SAMPLES / "random_bot.py"),
                        "--variant", game, "--env", "BOT_SEED=7", "--log", str(log), "-q"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, "-m", "referee", "report", str(log), "-O", str(site / game)], check=True,
                       stdout=subprocess.DEVNULL)


def first_step(deal: Path, wanted: Callable[[dict[str, Any]], bool]) -> int:
    """The first step of a deal page's document that shows what is ``wanted`` (else its middle)."""
    steps = json.loads(deal.with_suffix(".json").read_text(encoding="utf-8"))["steps"]
    return next((i for i, s in enumerate(steps) if wanted(s)), len(steps) // 2)


def shoot(site: Path, out: Path, chromium: Path = CHROMIUM) -> list[Path]:
    """Photograph the league page, a mid-deal replay (and the same on a 390 x 844 phone), the end
    of a cross deal, a mexican_train round at its first hanging double and a kolbasa deal at its
    first knife of ``site`` into ``out``."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    deal = site / "matches" / REPLAY_MATCH / f"{REPLAY_DEAL}.html"
    steps = len(json.loads(deal.with_suffix(".json").read_text(encoding="utf-8"))["steps"])
    shots = [out / "league.png", out / "replay.png", out / "cross.png", out / "trains.png", out / "kolbasa.png", out / "phone.png"]
    trains = site / "mexican_train" / f"{CROSS_DEAL}.html"
    hangs = first_step(trains, lambda s: bool(s.get("table", {}).get("hangs")))
    sausage = site / "kolbasa" / f"{CROSS_DEAL}.html"
    knife = first_step(sausage, lambda s: "knife" in s.get("table", {}))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium))
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900}, device_scale_factor=1)
            page.goto((site / "index.html").as_uri())
            page.screenshot(path=str(shots[0]), full_page=True)
            page.set_viewport_size({"width": 1200, "height": 720})
            page.goto(deal.as_uri() + f"#move={steps // 2}")
            page.screenshot(path=str(shots[1]))
            page.goto((site / "telephone" / f"{CROSS_DEAL}.html").as_uri() + "#move=999")
            page.screenshot(path=str(shots[2]))
            page.goto(trains.as_uri() + f"#move={hangs}")
            page.screenshot(path=str(shots[3]))
            page.goto(sausage.as_uri() + f"#move={knife}")
            page.screenshot(path=str(shots[4]))
            phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1, is_mobile=True, has_touch=True)
            phone.goto(deal.as_uri() + f"#move={steps // 2}")
            phone.screenshot(path=str(shots[5]))
        finally:
            browser.close()
    return shots


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.web.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="where the PNGs go (default: docs/screenshots)")
    parser.add_argument("--chromium", type=Path, default=CHROMIUM, help="the Chromium executable (default: /usr/bin/chromium)")
    args = parser.parse_args(argv)
    if not args.chromium.exists():
        sys.exit(f"error: {args.chromium} is missing (apt-get install chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        sys.exit("error: Playwright is missing: pip install -e '.[test]'")
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build(site, Path(tmp))
        for shot in shoot(site, args.out, args.chromium):
            print(f"wrote {shot}")


if __name__ == "__main__":
    main()
