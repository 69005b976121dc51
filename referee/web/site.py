"""Writing a report folder: the pages, the JSON document beside each page, and the assets.

Layout of a folder written from a league (by :mod:`tournaments.report`)::

    DIR/index.html, index.json          the league page and its document
    DIR/version.js                      what the league page polls to reload itself
    DIR/assets/                         style.css, replay.js, site.js (copied from static/)
    DIR/matches/<a>-vs-<b>/index.html   a match page, index.json beside it
    DIR/matches/<a>-vs-<b>/g1-o0-d1.html  a deal's replay, g1-o0-d1.json beside it

From a single log the match page is ``DIR/index.html`` and its deals sit beside it.  Every file
is written under a temporary name and renamed into place, so a page served or reloaded while a
league refreshes its report is never half written.  A match's pages are written again only when
its log changed (the match document records the log's size and modification time).
"""

from __future__ import annotations

import json
import math
import os
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from referee.stats.means import signed
from referee.web.data import MatchData, read_match, safe_name

ASSETS = ("style.css", "site.js", "replay.js")


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("referee.web", "templates"),
        autoescape=True,  # every name and note may come from a bot or a league file
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["signed"] = _signed
    env.filters["num"] = lambda x: (str(int(x)) if float(x).is_integer() else f"{x:g}") if isinstance(x, (int, float)) else x
    env.filters["option"] = lambda v: ("on" if v else "off") if isinstance(v, bool) else v  # as `referee variants` shows them
    env.globals["nice_ticks"] = nice_ticks
    return env


def _signed(x: Any, digits: int | None = None) -> Any:
    """A number with its sign (``digits`` decimals, or as few as it needs), never "-0"."""
    if not isinstance(x, (int, float)):
        return x
    if digits is None:
        return signed(x, 0) if float(x).is_integer() else f"{x:+g}"
    return signed(x, digits)


def nice_ticks(lo: float, hi: float) -> list[int]:
    """Round axis ticks covering ``[lo, hi]`` and zero: 4 to 8 steps of 1, 2 or 5 × 10^k."""
    lo, hi = min(lo, 0.0, hi - 1), max(hi, 0.0, lo + 1)
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000):
        first, last = math.floor(lo / step) * step, math.ceil(hi / step) * step
        if (last - first) / step <= 8:
            return list(range(int(first), int(last) + 1, step))
    return [math.floor(lo), math.ceil(hi)]


_ENV: jinja2.Environment | None = None


def env() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        _ENV = _env()
    return _ENV


def write_atomic(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(data, str):
        data = data.encode("utf-8")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def dump_doc(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_page(path: Path, template: str, doc: dict[str, Any], root: str, **extra: Any) -> None:
    """Write ``path`` (``.html``) from ``template`` and ``doc``, and the document as ``.json`` beside it."""
    write_atomic(path.with_suffix(".json"), dump_doc(doc))
    html = env().get_template(template).render(doc=doc, root=root, **extra)
    write_atomic(path, html)


def copy_assets(out: Path) -> None:
    static = resources.files("referee.web") / "static"
    for name in ASSETS:
        write_atomic(out / "assets" / name, (static / name).read_bytes())


def _source_stamp(log: Path) -> dict[str, Any]:
    st = log.stat()
    return {"log": str(log), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _up_to_date(folder: Path, stamp: dict[str, Any]) -> bool:
    try:
        old = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return old.get("source") == stamp


def write_match(log: Path, folder: Path, root: str, *, up: dict[str, str] | None = None, force: bool = True,
                data: MatchData | None = None) -> dict[str, Any]:
    """Write the pages of one match log into ``folder``; return the match document.

    ``root`` is the relative path from ``folder`` to the report's top (where ``assets/`` is);
    ``up`` a link to the page above (the league), shown in the header.  Unless ``force``, a
    folder already written from the same log is left alone.  ``data`` is the log already read.

    Raises:
        referee.web.data.NotALog: the file is not a match log.
    """
    stamp = _source_stamp(log)
    if not force and _up_to_date(folder, stamp):
        return json.loads((folder / "index.json").read_text(encoding="utf-8"))
    if data is None:
        data = read_match(log)
    match = {**data.match, "source": stamp, "up": up}
    written = set()
    for deal in data.deals:
        write_page(folder / f"{deal['slug']}.html", "deal.html", deal, root, up=up)
        written.add(deal["slug"])
    # A pairing played again (a failed match retried) may have fewer deals than before.
    for old_page in folder.glob("g*-o*-d*.*"):
        if old_page.suffix in (".html", ".json") and old_page.stem not in written:
            old_page.unlink()
    write_page(folder / "index.html", "match.html", match, root, up=up)
    return match


def report_log(log: Path, out: Path) -> dict[str, Any]:
    """A report folder for one match log; a file that is not one is refused before anything is
    written."""
    data = read_match(log)
    copy_assets(out)
    return write_match(log, out, "", data=data)


def match_folder(pair: tuple[str, str]) -> str:
    return safe_name(f"{pair[0]}-vs-{pair[1]}")
