"""Every relative link in the project's Markdown resolves: the file or folder it names exists, and
an anchor (``page.md#section``, or ``#section`` within the page) names a heading of that page, as
GitHub makes anchors of headings.  The protocol is split over pages (PROTOCOL.md and
docs/protocol/) that point into each other's sections, and the README, the sample bots' README
and the bench notes point into them: a heading renamed or moved breaks no link unseen."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FENCE = re.compile(r"^ {0,3}```.*?^ {0,3}```[^\n]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def markdown_files() -> list[Path]:
    """The Markdown files git knows of (tracked or new, not ignored)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted({ROOT / line for line in out.splitlines() if (ROOT / line).is_file()})


def prose(text: str) -> str:
    """The text without fenced blocks and inline code, where a bracket is no link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text shown, lower-cased, punctuation dropped (word
    characters, hyphens and spaces kept), spaces made hyphens."""
    shown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", shown.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every anchor of a Markdown page: one per heading (a repeated one gets -1, -2…), and HTML anchors."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set(HTML_ANCHOR.findall(text))
    for heading in HEADING.findall(text):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def links(path: Path) -> list[str]:
    return [target for target in LINK.findall(prose(path.read_text(encoding="utf-8")))
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto: are not checked here


def broken(path: Path) -> list[str]:
    """What is wrong with each relative link of ``path``."""
    wrong = []
    for target in links(path):
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        named = where.relative_to(ROOT) if where.is_relative_to(ROOT) else where
        if not where.exists():
            wrong.append(f"{target}: no {named}")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            wrong.append(f"{target}: no heading of {named} has the anchor #{anchor}")
    return wrong


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken(path) == []


def test_the_protocol_pages_link_to_each_other():
    """The core page's table of contents names every family page, and each links back to it."""
    family = sorted((ROOT / "docs" / "protocol").glob("*.md"))
    assert {p.stem for p in family} == {"line", "cross", "sea_kozel", "mexican_train", "kolbasa"}
    core = set(links(ROOT / "PROTOCOL.md"))
    for page in family:
        assert f"docs/protocol/{page.name}" in core, page.name
        assert "../../PROTOCOL.md" in links(page), page.name


def test_the_link_check_sees_a_broken_link_and_a_broken_anchor(tmp_path):
    (tmp_path / "b.md").write_text("# A heading — with `code`\n\n## Fair play: what a bot can know\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#a-heading--with-code) [ok](b.md#fair-play-what-a-bot-can-know) [gone](c.md) "
                    "[bad](b.md#nowhere) `[code](c.md)` [web](https://example.org/x)\n", encoding="utf-8")
    assert broken(page) == [f"c.md: no {tmp_path / 'c.md'}", f"b.md#nowhere: no heading of {tmp_path / 'b.md'} has the anchor #nowhere"]
