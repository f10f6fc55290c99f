"""The Markdown pages' relative links and images resolve in a fresh clone, and no figure is stray.

A page (``docs/**/*.md``, the READMEs, CONTRIBUTING.md, ...) may link a file that exists in
this working tree but was never committed: the page then shows a broken image on GitHub and
in a fresh clone. So, in a git checkout, every relative target must be a file git tracks (or
a folder holding one); outside git (an unpacked sdist) it must exist on disk. The second
check goes the other way: every image committed under ``docs/`` is linked by some page, so
a regenerated report whose figure names changed does not leave its old figures behind.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif")

#: Committed figures no page links, each with the reason it is kept (none today). The test
#: fails when an entry is linked or gone, so the list stays true.
KNOWN_UNLINKED: dict[str, str] = {}

_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
# The "](target)" of [text](target) and ![alt](target), with an optional "title"; a target in
# <angle brackets> may hold spaces. Matching only the closing part finds both targets of a
# linked image, [![alt](image.png)](page.md).
_INLINE = re.compile(r"\]\(\s*(?:<([^<>]+)>|([^()\s<>]+))(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s<>]+)>?")
_HTML = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.I)
# MyST directives whose argument is a file: ```{image} figures/x.png
_DIRECTIVE = re.compile(r"^\{(?:image|figure|include|literalinclude)\}\s+(\S+)")


def markdown_targets(text: str) -> list[str]:
    """Link and image targets of a Markdown (MyST) page, outside code.

    Parameters
    ----------
    text : str
        The page.

    Returns
    -------
    list of str
        Targets in order of appearance, as written (external URLs and anchors included);
        fenced code blocks and inline code are skipped, except the file argument of an
        ``{image}``/``{figure}``/``{include}``/``{literalinclude}`` directive fence.
    """
    targets: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        m = _FENCE.match(stripped)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                fence = None
            continue
        if m:
            fence = m.group(1)
            directive = _DIRECTIVE.match(m.group(2).strip())
            if directive:
                targets.append(directive.group(1))
            continue
        line = re.sub(r"`[^`]*`", "", line)
        found = [(mm.start(), mm.group(1) or mm.group(2)) for mm in _INLINE.finditer(line)]
        found += [(mm.start(), mm.group(1)) for mm in _HTML.finditer(line)]
        targets += [t for _, t in sorted(found)]
        ref = _REFERENCE.match(line)
        if ref:
            targets.append(ref.group(1))
    return targets


def local_path(target: str) -> str | None:
    """The file part of a relative target (``None`` for URLs, ``mailto:`` and pure anchors)."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    return unquote(parts.path)


def broken_links(root: Path, pages: list[str], tracked: set[str] | None) -> list[str]:
    """Relative targets of ``pages`` that a fresh clone of ``root`` would not have.

    Parameters
    ----------
    root : Path
        The repository (or a folder laid out like one).
    pages : list of str
        Markdown files, POSIX paths relative to ``root``.
    tracked : set of str or None
        The files git tracks (POSIX paths relative to ``root``); ``None`` checks the disk only.

    Returns
    -------
    list of str
        ``"page: target (reason)"`` for each broken target.
    """
    bad = []
    folders = {str(p) for f in tracked or () for p in PurePosixPath(f).parents}
    for page in pages:
        for target in markdown_targets((root / page).read_text(encoding="utf-8")):
            path = local_path(target)
            if path is None:
                continue
            if path.startswith("/"):
                bad.append(f"{page}: {target} (absolute path; links must be relative)")
                continue
            resolved = (root / page).parent / path
            try:
                rel = resolved.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                bad.append(f"{page}: {target} (outside the repository)")
                continue
            if not resolved.exists():
                bad.append(f"{page}: {target} (does not exist)")
            elif tracked is not None and rel not in tracked and rel not in folders:
                bad.append(f"{page}: {target} (not tracked by git; `git add` it)")
    return bad


def unlinked_images(root: Path, pages: list[str], images: list[str]) -> list[str]:
    """Images of ``images`` that no page of ``pages`` links (POSIX paths relative to ``root``)."""
    linked = set()
    for page in pages:
        for target in markdown_targets((root / page).read_text(encoding="utf-8")):
            path = local_path(target)
            if path is not None:
                resolved = ((root / page).parent / path).resolve()
                if resolved.is_relative_to(root.resolve()):
                    linked.add(resolved.relative_to(root.resolve()).as_posix())
    return sorted(set(images) - linked)


def _repo_files() -> tuple[list[str], set[str] | None]:
    """All files of the repository and git's tracked set (``None`` outside a git checkout)."""
    git = shutil.which("git")
    if git is not None and (REPO / ".git").exists():
        out = subprocess.run([git, "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
        tracked = {f for f in out.decode("utf-8").split("\0") if f}
        return sorted(tracked), tracked
    skip = {".git", "runs", "build", "_build", ".venv", "node_modules"}
    files = [
        p.relative_to(REPO).as_posix() for p in REPO.rglob("*")
        if p.is_file() and not skip.intersection(p.relative_to(REPO).parts)
    ]
    return sorted(files), None


def test_markdown_targets_parser():
    text = "\n".join([
        "# Title with `[not](code.md)`",
        "See [the guide](guide/a.md#part) and ![fig](figures/p/x.png \"Fig. 1\").",
        "[![badge](img/b.svg)](https://example.org) <img src=\"raw.png\" width=3>",
        "[ref]: ../other.md",
        "Inline `![no](skip.png)` and [anchor](#here), [mail](mailto:a@b.c).",
        "```python",
        "print('[no](in-code.md)')",
        "```",
        "````{image} figures/m.png",
        ":width: 80%",
        "````",
        "[spaced](<a b.md>) [encoded](a%20b.md)",
    ])
    assert markdown_targets(text) == [
        "guide/a.md#part", "figures/p/x.png", "img/b.svg", "https://example.org", "raw.png",
        "../other.md", "#here", "mailto:a@b.c", "figures/m.png", "a b.md", "a%20b.md",
    ]
    assert local_path("guide/a.md#part") == "guide/a.md"
    assert local_path("a%20b.md") == "a b.md"
    assert local_path("#here") is None and local_path("https://x.org/a.png") is None
    assert local_path("mailto:a@b.c") is None


def test_broken_links_and_unlinked_images_on_a_small_tree(tmp_path):
    (tmp_path / "docs" / "figures" / "p").mkdir(parents=True)
    for name in ("docs/figures/p/a.png", "docs/figures/p/untracked.png", "docs/figures/p/stray.png", "docs/b.md"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "docs" / "page.md").write_text(
        "![a](figures/p/a.png) ![u](figures/p/untracked.png) ![m](figures/p/missing.png) "
        "[b](b.md#x) [dir](figures/) [up](../../elsewhere.md) [abs](/docs/b.md) [web](https://x.org/y.png)\n",
        encoding="utf-8",
    )
    tracked = {"docs/page.md", "docs/b.md", "docs/figures/p/a.png", "docs/figures/p/stray.png"}
    assert broken_links(tmp_path, ["docs/page.md"], tracked) == [
        "docs/page.md: figures/p/untracked.png (not tracked by git; `git add` it)",
        "docs/page.md: figures/p/missing.png (does not exist)",
        "docs/page.md: ../../elsewhere.md (outside the repository)",
        "docs/page.md: /docs/b.md (absolute path; links must be relative)",
    ]
    # without git only the disk counts
    assert broken_links(tmp_path, ["docs/page.md"], None) == [
        "docs/page.md: figures/p/missing.png (does not exist)",
        "docs/page.md: ../../elsewhere.md (outside the repository)",
        "docs/page.md: /docs/b.md (absolute path; links must be relative)",
    ]
    images = ["docs/figures/p/a.png", "docs/figures/p/stray.png"]
    assert unlinked_images(tmp_path, ["docs/page.md"], images) == ["docs/figures/p/stray.png"]


def test_every_relative_link_resolves_in_a_fresh_clone():
    files, tracked = _repo_files()
    pages = [f for f in files if f.endswith(".md") and (REPO / f).is_file()]
    assert "docs/reproductions/README.md" in pages and "docs/benchmarks.md" in pages
    bad = broken_links(REPO, pages, tracked)
    assert not bad, f"{len(bad)} broken link(s):\n" + "\n".join(bad)


def test_every_committed_figure_is_linked():
    files, _ = _repo_files()
    pages = [f for f in files if f.endswith(".md") and (REPO / f).is_file()]
    images = [f for f in files if f.startswith("docs/") and f.lower().endswith(IMAGE_SUFFIXES) and (REPO / f).is_file()]
    assert any(f.startswith("docs/reproductions/figures/") for f in images)
    stray = unlinked_images(REPO, pages, images)
    unexpected = [f for f in stray if f not in KNOWN_UNLINKED]
    assert not unexpected, f"{len(unexpected)} figure(s) linked by no page:\n" + "\n".join(unexpected)
    stale = sorted(set(KNOWN_UNLINKED) - set(stray))
    assert not stale, "KNOWN_UNLINKED lists figures that are now linked or gone; drop them:\n" + "\n".join(stale)


@pytest.mark.parametrize("page", ["docs/reproductions/chen2012.md", "docs/reproductions/realworld.md"])
def test_reproduction_figures_live_in_their_papers_folder(page):
    """The reports link their figures as figures/<paper>/<report stem>-...png (hdbo.experiments.report)."""
    text = (REPO / page).read_text(encoding="utf-8")
    paper = re.match(r"# Reproduction: (\S+)", text).group(1)
    images = [t for t in markdown_targets(text) if t.endswith(".png")]
    assert images
    stem = Path(page).stem
    assert all(t.startswith(f"figures/{paper}/{stem}-") and t.count("/") == 2 for t in images), images
