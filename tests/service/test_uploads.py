"""No surprises at the door, on `serve --demo` (counts = "best"; the service's clock fixed): an upload
nothing can be graded of is refused and replaces nothing, a double send is one upload, the best
grading counts, notes name the student's own files, and each page speaks one language."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest
from browser import Browser
from conftest import ROOT, sandbox_works
from served import Served, example, serving, upload, wait_graded

from autograder.config import Kit
from autograder.service.settings import Clock, Limits, ServiceSettings
from autograder.service.texts import texts

T0 = datetime(2025, 12, 14, 6, 0, tzinfo=UTC)
BENGALI = re.compile("[\u0980-\u09ff]")


@pytest.fixture(scope="module")
def demo(kit: Kit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    target = dataclasses.replace(kit.assignment("nn_module"), counts="best")
    best = dataclasses.replace(kit, assignments={**kit.assignments, "nn_module": target})
    data = tmp_path_factory.mktemp("uploads") / "data"
    settings = ServiceSettings(best, data, demo=True, sandbox=sandbox_works(kit), clock=Clock(T0),
                               limits=Limits(uploads_per_minute=100))
    with serving(settings) as served:
        yield served


def student(demo: Served, name: str, lang: str = "en") -> tuple[Browser, str]:
    browser = Browser()
    page = browser.get(f"{demo.url}/demo/student", params={"as": name, "lang": lang})
    assert page.status_code == 200
    return browser, page.text


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def current(demo: Served, who: str) -> float:
    [found] = [r for r in demo.state.inbox.book.current("nn_module") if r.student == who]
    return found.score


def test_an_upload_with_nothing_to_grade_is_refused_and_replaces_nothing(demo: Served):
    browser, page = student(demo, "door")
    first = upload(browser, demo.url, [example("maya.zip")], page)
    graded = wait_graded(browser, demo.url, first.json()["status_url"], timeout=180)
    assert graded["score"] > 0
    before = demo.state.inbox.of_student("nn_module", "demo-door")
    for name, data, says in (
        ("empty.zip", zipped({}), "holds none of this assignment's files"),
        ("my notes.zip", zipped({"notes.txt": b"todo"}), "holds none of this assignment's files"),
        ("broken.zip", b"PK\x03\x04 cut short", "is not a readable zip file"),
        ("homework.ipynb", b'{"cells": [', "is not a readable notebook"),
    ):
        refused = upload(browser, demo.url, [(name, data)], page)
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert f"`{name}`" in error and says in error and "nothing was submitted" in error
    assert demo.state.inbox.of_student("nn_module", "demo-door") == before  # nothing queued
    assert current(demo, "demo-door") == graded["score"]  # the grade stays


def test_the_same_files_sent_twice_at_once_are_one_upload(demo: Served):
    browser, page = student(demo, "twice")
    first = upload(browser, demo.url, [example("rahim.zip")], page)
    second = upload(browser, demo.url, [example("rahim.zip")], page)
    assert first.status_code == 202 and second.status_code == 200, (first.text, second.text)
    assert second.json()["duplicate"] and second.json()["id"] == first.json()["id"]
    assert len(demo.state.inbox.of_student("nn_module", "demo-twice")) == 1
    wait_graded(browser, demo.url, first.json()["status_url"], timeout=180)


def test_with_counts_best_a_worse_upload_does_not_replace_the_best(demo: Served):
    browser, page = student(demo, "best")
    good = upload(browser, demo.url, [example("maya.zip")], page)
    good_status = wait_graded(browser, demo.url, good.json()["status_url"], timeout=180)
    worse = upload(browser, demo.url, [("tinynet.py", b"x = 1\n")], page)
    worse_status = wait_graded(browser, demo.url, worse.json()["status_url"], timeout=180)
    assert worse_status["score"] < good_status["score"]
    assert current(demo, "demo-best") == good_status["score"]
    listed = browser.get(f"{demo.url}/student/submissions.json").json()["submissions"]
    marked = [(s["id"], s["counts"]) for s in listed]
    assert marked == [(worse_status["id"], False), (good_status["id"], True)]
    assert len(demo.state.inbox.book.history("nn_module", "demo-best")) == 2  # kept as history, not lost
    assert "Your best graded submission is your grade." in browser.get(f"{demo.url}/student").text


def test_notes_name_the_students_own_file(demo: Served):
    source = (ROOT / "solutions" / "nn_module" / "tinynet.py").read_text(encoding="utf-8")
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}]}
    browser, page = student(demo, "notebook")
    sent = upload(browser, demo.url, [("My homework 2.ipynb", json.dumps(notebook).encode())], page)
    assert sent.status_code == 202, sent.text
    status = wait_graded(browser, demo.url, sent.json()["status_url"], timeout=180)
    result = demo.state.inbox.result(status["id"])
    assert result is not None
    notes = " ".join(result["notes"])
    assert "`My homework 2.ipynb`" in notes, notes
    assert not re.search(r"`\d+\.(zip|ipynb)`", notes), notes
    assert "My homework 2.ipynb" in browser.get(f"{demo.url}{status['feedback_url']}").text


class Text(HTMLParser):
    """A page's text nodes (not its script or style), and whether each is inside an element of another
    language (lang="...")."""

    def __init__(self, lang: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str]] = []
        self.lang = lang
        self.nodes: list[tuple[str, str]] = []  # (the language it is in, text); a <time>'s is data

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("meta", "link", "br", "input"):
            inherited = self.stack[-1][1] if self.stack else self.lang
            self.stack.append((tag, dict(attrs).get("lang") or inherited))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if data.strip() and not (self.stack and self.stack[-1][0] in ("script", "style", "time")):
            self.nodes.append((self.stack[-1][1] if self.stack else self.lang, data.strip()))


def words(page: str, lang: str, data: tuple[str, ...]) -> list[tuple[str, str]]:
    """The page's text nodes with Latin words, each data value (names, the course's title) taken out."""
    parser = Text(lang)
    parser.feed(page)
    found = []
    for node_lang, text in parser.nodes:
        for value in data:
            text = text.replace(value, "")
        if re.search("[A-Za-z]{2,}", re.sub(r"`[^`]*`|\.(py|zip|ipynb)\b|\bMB\b", "", text)):
            found.append((node_lang, text))
    return found


def test_each_page_speaks_the_language_of_its_launch(demo: Served, kit: Kit):
    title = kit.assignment("nn_module").title
    bn, page = student(demo, "bangla", lang="bn")
    sent = upload(bn, demo.url, [example("maya.zip")], page)
    wait_graded(bn, demo.url, sent.json()["status_url"], timeout=180)
    data = (title, "demo-bangla", "maya.zip")
    pages = {"student": bn.get(f"{demo.url}/student").text,
             "not found": bn.get(f"{demo.url}/student/submissions/99999/feedback").text}
    for where, text in pages.items():
        assert 'lang="bn"' in text and "Kit Noto Sans Bengali" in text, where  # the font embedded
        english = [text for node_lang, text in words(text, "bn", data) if node_lang == "bn"
                   and not BENGALI.search(text)]
        assert not english, f"{where} (bn) has English text: {english}"
    t_en = texts("en")
    for key, value in texts("bn").items():  # no English catalogue text in the Bangla page
        if value != t_en[key] and len(t_en[key]) > 12 and "{" not in t_en[key]:
            assert t_en[key] not in pages["student"], key
    en, page = student(demo, "english")
    for where, text in {"student": page, "demo": Browser().get(f"{demo.url}/demo").text}.items():
        parser = Text("en")
        parser.feed(text)
        bengali = [t for node_lang, t in parser.nodes if BENGALI.search(t) and node_lang == "en"]
        assert not bengali and "Kit Noto Sans Bengali" not in text, f"{where} (en) has Bangla: {bengali}"


def test_the_demo_may_be_framed_by_itself_only(demo: Served):
    answer = Browser().get(f"{demo.url}/demo")
    policy = answer.headers["Content-Security-Policy"]
    assert "frame-ancestors 'self'" in policy and not re.search(r"frame-ancestors 'self' \S", policy)
