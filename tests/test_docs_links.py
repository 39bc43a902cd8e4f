"""Every relative link of the README, the changelog and docs/*.md resolves: the file exists
(from the repository, where GitHub renders them) and an ``#anchor`` names a heading of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-'."""
    headings = re.findall(r"^#+ (.+)$", _prose(page.read_text()).replace("\r", ""), re.MULTILINE)
    headings += re.findall(r"^#+ (.*`.*)$", page.read_text(), re.MULTILINE)  # with their code
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def relative_links(page: Path) -> list[str]:
    return [t for t in _LINK.findall(_prose(page.read_text())) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no heading #{anchor} in {resolved.name})")
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


def test_the_readme_is_short_and_links_every_docs_page() -> None:
    readme = ROOT / "README.md"
    assert len(readme.read_text().splitlines()) <= 300
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in relative_links(readme)}
    for page in (ROOT / "docs").glob("*.md"):
        assert page.resolve() in linked or page.name == "index.md", f"README.md does not link {page.name}"
    assert readme.read_text().startswith("# symscalar\n\n```\nmake demo   #"), "the make commands stay at the top"


def test_the_links_checker_finds_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n[ok](#title) [missing](b.md) [anchor](a.md#nope) `[code](x.md)`\n")
    page = tmp_path / "a.md"
    assert relative_links(page) == ["#title", "b.md", "a.md#nope"]
    assert "title" in _anchors(page) and "nope" not in _anchors(page)
