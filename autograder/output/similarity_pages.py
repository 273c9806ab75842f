"""The page of one similar pair: both files side by side, the matching stretches highlighted alike.

Student code is hostile: every line is escaped by the template, and the page carries a Content
Security Policy that allows no script and nothing from the network.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from autograder import __version__
from autograder.catalogues import read_catalogue
from autograder.config import Assignment
from autograder.integrity.similarity import Match, Span
from autograder.output.pages import REPORT_UI, font_css, font_family, inert

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
COLOURS = 6  # matching regions cycle through this many highlight colours
MAX_LINES = 3000  # a file longer than this is shown cut (the CSV has the full ranges)


ENGINE_CATALOGUE = Path(__file__).resolve().parents[1] / "messages"


@lru_cache(maxsize=4)
def engine_ui(lang: str = "en") -> dict[str, str]:
    """The engine catalogue's [ui] labels in `lang` (English where it has none)."""
    labels: dict[str, str] = {}
    for code in dict.fromkeys(("en", lang)):
        path = ENGINE_CATALOGUE / f"{code}.toml"
        if path.is_file():
            labels.update(read_catalogue(path).get("ui", {}))
    return labels


@lru_cache(maxsize=1)
def _templates() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]),
                       finalize=inert)


@dataclass(frozen=True)
class CodeLine:
    number: int
    text: str
    region: int  # 0: no match; k: the k-th matching region (its colour is (k - 1) % COLOURS)
    anchors: tuple[str, ...] = ()  # ids of the regions that start on this line


def code_lines(text: str, regions: list[tuple[int, list[Span]]], side: str) -> list[CodeLine]:
    """The file's lines, each with the number of the first matching region that covers it."""
    covered: dict[int, int] = {}
    anchors: dict[int, list[str]] = {}
    for number, spans in regions:
        if spans:
            anchors.setdefault(min(spans)[0], []).append(f"{side}-r{number}")
        for first, last in spans:
            for line in range(first, last + 1):
                covered.setdefault(line, number)
    lines = text.splitlines()[:MAX_LINES]
    return [CodeLine(i, line.expandtabs(4), covered.get(i, 0), tuple(anchors.get(i, ())))
            for i, line in enumerate(lines, start=1)]


def render_pair_page(match: Match, assignment: Assignment, threshold: float,
                     messages: Mapping[str, Mapping[str, str]], lang: str) -> str:
    ui = {**REPORT_UI, **engine_ui(), **messages.get("ui", {})}
    left = [(k, [r.a]) for k, r in enumerate(match.regions, start=1)]
    right = [(k, list(r.b)) for k, r in enumerate(match.regions, start=1)]
    return _templates().get_template("similarity_pair.html.j2").render(
        m=match, title=assignment.title, assignment=assignment.id, ui=ui, lang=lang, version=__version__,
        threshold=threshold, colours=COLOURS, a_lines=code_lines(match.a.text, left, "a"),
        b_lines=code_lines(match.b.text, right, "b"), cut=MAX_LINES,
        font_css=font_css(lang), font_family=font_family(lang),
    )


def write_pair_page(path: Path, match: Match, assignment: Assignment, threshold: float,
                    messages: Mapping[str, Mapping[str, str]], lang: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_pair_page(match, assignment, threshold, messages, lang), encoding="utf-8")
    return path
