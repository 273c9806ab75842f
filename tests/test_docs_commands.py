"""The docs' commands run: each `<!-- run -->` block of README.md and the site's pages (docs/authors/docs.md).

Each marked `bash` block runs with `bash -e` in one copy of the kit (grading.toml, solutions/,
assignments/, examples/, .venv linked), the README first, then the pages in the order of mkdocs.yml's
nav, each page's blocks in order: a page may use what an earlier one made. A block must exit with its
expected status (0, or `exit=N`) and print every line its `<!-- output -->` block quotes. A page's test
runs the pages before it first (once a session), so one page can be run alone with -k.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RUN = re.compile(r"<!-- run(?: exit=(\d+))? -->\n```bash\n(.*?)\n```\n"
                 r"(?:<!-- output -->\n```text\n(.*?)\n```\n)?", re.S)
ANY_MARKER = re.compile(r"^<!-- (run|output)\b[^>]*-->", re.M)  # at a line's start: not one quoted in prose
EXAMPLE = re.compile(r"^````.*?^````$", re.S | re.M)
KIT_PARTS = ("grading.toml", "constraints.txt", "solutions", "assignments", "examples")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    script: str
    status: int
    quoted: tuple[str, ...]

    def where(self) -> str:
        return f"{self.page}:{self.line}"


def nav_pages(nav: Any) -> Iterator[str]:
    """mkdocs.yml's nav, flattened in order: each page's path under docs/."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from nav_pages(value)


def pages() -> list[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return ["README.md", *(f"docs/{p}" for p in nav_pages(config["nav"]))]


def page_text(page: str) -> str:
    """The page, its ````-fenced examples (of this convention itself) blanked, its lines kept."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return EXAMPLE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def blocks(page: str) -> list[Block]:
    text = page_text(page)
    found = []
    for match in RUN.finditer(text):
        quoted = tuple(line.strip() for line in (match.group(3) or "").splitlines() if line.strip())
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group(2),
                           int(match.group(1) or 0), quoted))
    return found


def test_every_marker_is_well_formed() -> None:
    """A `<!-- run -->` not followed by a bash block (or an output marker astray) is an error, never a
    block silently left out."""
    total = 0
    for page in pages():
        markers = list(ANY_MARKER.finditer(page_text(page)))
        parsed = blocks(page)
        runs = [m for m in markers if m.group(1) == "run"]
        outputs = [m for m in markers if m.group(1) == "output"]
        assert len(runs) == len(parsed), f"{page}: a <!-- run --> marker not followed by a ```bash block"
        assert len(outputs) == sum(1 for b in parsed if b.quoted), (
            f"{page}: an <!-- output --> marker not right after a run block, or with no line quoted")
        total += len(parsed)
    assert total >= 10, f"only {total} blocks of the docs run: the convention is not used"


@pytest.fixture(scope="session")
def kit_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kit's content in a folder of its own, its .venv the real one: the commands write there."""
    copy = tmp_path_factory.mktemp("docs-kit")
    for part in KIT_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, copy / part, ignore=shutil.ignore_patterns("__pycache__", "*.whl"))
        else:
            shutil.copy2(source, copy / part)
    (copy / ".venv").symlink_to(ROOT / ".venv")
    return copy


class Runs:
    """The pages run so far this session, and what each one failed with ("" when it passed)."""

    def __init__(self, copy: Path):
        self.copy = copy
        self.outcome: dict[str, str] = {}

    def page(self, page: str) -> str:
        """Run `page`'s blocks (the pages before it first, once); the first failure, or ""."""
        order = pages()
        for earlier in order[: order.index(page)]:
            if earlier not in self.outcome:
                self.outcome[earlier] = self._run(earlier)
            if self.outcome[earlier]:
                return f"an earlier page failed: {self.outcome[earlier]}"
        if page not in self.outcome:
            self.outcome[page] = self._run(page)
        return self.outcome[page]

    def _run(self, page: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_EXAM_SECRET")}
        for block in blocks(page):
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.script], cwd=self.copy,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=900, check=False)
            if done.returncode != block.status:
                return (f"{block.where()} exited with {done.returncode}, the docs say {block.status}:\n"
                        f"{block.script}\n{done.stdout[-3000:]}")
            missing = [line for line in block.quoted if line not in done.stdout]
            if missing:
                return f"{block.where()} did not print {missing}:\n{block.script}\n{done.stdout[-3000:]}"
        return ""


@pytest.fixture(scope="session")
def runs(kit_copy: Path) -> Runs:
    return Runs(kit_copy)


@pytest.mark.parametrize("page", [p for p in pages() if blocks(p)])
def test_the_page_commands_run_as_documented(page: str, runs: Runs) -> None:
    failure = runs.page(page)
    assert not failure, failure
