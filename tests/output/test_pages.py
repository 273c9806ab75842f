"""The pages read well: code as code, a shared cause once, words for reasons, Bangla in Bangla with
its own font (drawn by it in headless Chromium on a machine without any Bengali font)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import websocket
from conftest import browser, make_result
from kit_assignments import ASSIGNMENTS, languages

from autograder.config import Assignment, Kit
from autograder.fonts import FAMILY as BENGALI_FAMILY
from autograder.grading.course import ENGINE_MESSAGES, load_graders, load_messages
from autograder.grading.results import SubmissionResult
from autograder.output import pages, reports
from autograder.output.class_report import render_html, summarize
from autograder.output.pages import inline_code

IMPORT_ERROR = ("Observed: `delivery.py` could not be imported: SyntaxError: invalid syntax (at line 3)\n"
                "Expected: the file imports cleanly (python -c 'import delivery')\n"
                "Idea: Run the file yourself first; every check of this task needs it to import.")


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


def messages(assignment: Assignment, lang: str) -> dict[str, dict[str, str]]:
    return load_messages([ENGINE_MESSAGES, assignment.graders / "messages"], lang)


def broken(assignment: Assignment) -> SubmissionResult:
    """delivery does not import (every check fails with one feedback); tinynet misses an idea."""
    result = make_result(assignment, "rahim", {"tinynet": 5})
    tasks = []
    for task in result.tasks:
        checks = task.checks
        if task.task == "delivery":
            checks = tuple(dataclasses.replace(c, score=0.0, feedback=IMPORT_ERROR,
                                               message_key="engine.import_error") for c in checks)
        if task.task == "tinynet":
            idea = "Idea: lesson: registration and __setattr__. Call `super().__init__()` first <b>."
            checks = (checks[0], dataclasses.replace(checks[1], feedback=f"Observed: x\n{idea}"))
        tasks.append(dataclasses.replace(task, checks=checks))
    return dataclasses.replace(result, tasks=tuple(tasks))


def test_code_spans_are_code_and_html_stays_text():
    assert inline_code("`delivery.py` has <b> and *args") == \
        "<code>delivery.py</code> has &lt;b&gt; and *args"


def test_feedback_page_code_shared_cause_once_and_one_lesson_label(assignment):
    page = reports.feedback_html(broken(assignment), assignment, messages(assignment, "en"), "en")
    assert "`delivery.py`" not in page and "<code>delivery.py</code> could not be imported" in page
    assert page.count("could not be imported") == 1  # once for the task, not on each of its checks
    assert page.count("the reason is shown above") == 2  # delivery's two checks point to it
    assert "Every check of this task failed for this one reason" in page
    assert "<b>Lesson:</b> registration and __setattr__. Call <code>super().__init__()</code>" in page
    assert "lesson: registration" not in page and "&lt;b&gt;" in page
    assert "@font-face" not in page  # an English page needs no Bengali font


def test_class_report_says_why_in_words(assignment):
    results = [broken(assignment), make_result(assignment, "ada")]
    html = render_html(summarize(results, assignment, messages(assignment, "en"), 1.0))
    why = html[html.index('id="ungraded"'):]
    why = why[:why.index("</table>")]
    assert "the file could not be imported" in why and "import_error" not in why


def test_check_titles_come_from_the_catalogue_in_both_languages(assignment):
    for lang in ("en", "bn"):
        graders = load_graders(assignment, lang=lang)
        titles = messages(assignment, lang)["titles"]
        checks = [c for found in graders.checks.values() for c in found]
        assert checks and all(c.id in titles for c in checks)
        plain = [c for c in checks if "{" not in titles[c.id]]
        assert plain and all(c.title == titles[c.id] for c in plain), lang
    bn = load_graders(assignment, lang="bn").checks["tinynet"][0].title
    assert bn.startswith("TinyNet একটি nn.Module")


def test_bangla_pages_carry_bangla_headings_titles_and_their_font(assignment):
    bn = messages(assignment, "bn")
    result = broken(assignment)
    page = reports.feedback_html(result, assignment, bn, "bn")
    assert f"{bn['ui']['task']} <code>tinynet</code>: " in page
    assert bn["titles"]["tinynet"] in page
    assert "data:font/woff2;base64," in page and BENGALI_FAMILY in page
    report = render_html(summarize([result], assignment, bn, 1.0, "bn"))
    for label in ("report_title", "score_distribution", "tasks", "misconceptions", "hardest_checks",
                  "not_graded", "integrity_review", "nothing_to_review"):
        assert bn["ui"][label] in report, label
    for english in ("Class report", "Score distribution", "Checks, hardest first", "Most common",
                    "Could not be graded", "academic-integrity", "Nothing to review"):
        assert english not in report, english
    assert 'lang="bn"' in report and "data:font/woff2;base64," in report


# -- in Chromium ---------------------------------------------------------------------------------
def _devtools(page: Path, profile: Path):
    (chromium,) = browser("chromium")  # or the test skips (make test: fails)
    process = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
         page.as_uri()],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 60
    while not port_file.is_file() or not port_file.read_text().strip():
        assert time.monotonic() < deadline and process.poll() is None, "Chromium did not start"
        time.sleep(0.1)
    port = port_file.read_text().split()[0]
    return process, port


class Cdp:
    """A DevTools protocol session over one page's websocket."""

    def __init__(self, url: str):
        self.ws = websocket.create_connection(url, timeout=60)
        self.next_id = 0

    def __call__(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            answer = json.loads(self.ws.recv())
            if answer.get("id") == self.next_id:
                assert "error" not in answer, answer
                return answer["result"]


def platform_fonts(page: Path, profile: Path, selectors: list[str]) -> dict[str, list[dict]]:
    """CSS.getPlatformFontsForNode of the first node matching each selector, once the page's fonts
    have loaded."""
    process, port = _devtools(page, profile)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as answer:
            target = next(t for t in json.load(answer) if t["type"] == "page")
        cdp = Cdp(target["webSocketDebuggerUrl"])
        cdp("DOM.enable")
        cdp("CSS.enable")
        deadline = time.monotonic() + 60
        ready = "location.href + ' ' + document.readyState + ' ' + document.fonts.status"
        # The first document may still be about:blank (complete, fonts loaded): wait for the page's.
        while cdp("Runtime.evaluate", expression=ready, returnByValue=True)["result"]["value"] != \
                f"{page.as_uri()} complete loaded":
            assert time.monotonic() < deadline, "the page did not finish loading"
            time.sleep(0.1)
        root = cdp("DOM.getDocument", depth=-1)["root"]["nodeId"]
        fonts = {}
        for selector in selectors:
            node = cdp("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
            assert node, selector
            fonts[selector] = cdp("CSS.getPlatformFontsForNode", nodeId=node)["fonts"]
        cdp.ws.close()
        return fonts
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_chromium_draws_the_bangla_with_the_embedded_font(tmp_path, assignment):
    result = broken(assignment)
    bn_page, en_page = tmp_path / "bn.html", tmp_path / "en.html"
    bn_page.write_text(reports.feedback_html(result, assignment, messages(assignment, "bn"), "bn"), "utf-8")
    en_page.write_text(reports.feedback_html(result, assignment, messages(assignment, "en"), "en"), "utf-8")
    fonts = platform_fonts(bn_page, tmp_path / "bn-profile", ["p.score", "h2 .task-title", "h1"])
    for selector, used in fonts.items():
        custom = [f for f in used if f["isCustomFont"]]
        assert custom and all(f["familyName"] == "Noto Sans Bengali" for f in custom), (selector, used)
        assert sum(f["glyphCount"] for f in custom) >= 3, (selector, used)  # the Bangla letters
    # bold Bangla (the heading) from the real Bold face, regular text from the Regular one
    assert all("Bold" in f["postScriptName"] for f in fonts["h1"] if f["isCustomFont"]), fonts["h1"]
    assert not any("Bold" in f["postScriptName"] for f in fonts["p.score"] if f["isCustomFont"])
    english = platform_fonts(en_page, tmp_path / "en-profile", ["p.score"])["p.score"]
    assert english and not any(f["isCustomFont"] for f in english), english  # nothing embedded


# -- Bangla is Bangla (issue #26) ----------------------------------------------------------------
def breaks(assignment: Assignment) -> tuple[str, str | None, list[list[str]]]:
    """What the submission below breaks: the first task's file with a syntax error, and another task's
    file with its catalogue's first wrong edit (solutions/<id>/graders/misconceptions.toml), if any."""
    from autograder.authoring.catalogue_forms import load_wrong  # the short forms derived

    wrong = load_wrong(assignment)
    first = assignment.tasks[0]
    entry = next((e for e in wrong if e["task"] != first.id), None)
    return first.file, (entry["file"] if entry else None), (entry["replace"] if entry else [])


def _catalogue_words(path: Path) -> dict[str, list[str]]:
    from autograder.authoring.latin_scan import latin_words
    from autograder.catalogues import read_catalogue

    found = {}
    for key, entry in read_catalogue(path).items():
        for field, text in entry.items():
            words = latin_words(text)
            if words:
                found[f"{key}.{field}"] = words
    return found


def test_the_engine_catalogue_has_no_english_outside_code_and_terms():
    assert _catalogue_words(ENGINE_MESSAGES / "bn.toml") == {}


def test_the_scan_finds_english_and_passes_code_and_terms():
    from autograder.authoring.latin_scan import latin_words, page_latin_words

    assert latin_words("model(x) for x of shape (1, 3) gave a tensor") == ["for", "of", "gave"]
    assert latin_words("`for x of` model-এর weight, fc1.weight, ReLU, N, state_dict") == []
    assert page_latin_words("<p>মতামত <code>on the lesson's example</code> <b>feedback</b></p>") == \
        ["feedback"]


def _bangla_outputs(kit, assignment, tmp_path: Path) -> tuple[dict[str, str], str]:
    """Every Bangla page and output the engine renders for one partly wrong submission."""
    from conftest import ROOT

    from autograder.grading.student_check import run_check
    from autograder.grading.student_report import render_html as selfcheck_html
    from autograder.grading.student_report import render_text

    solutions, stubs = ROOT / "solutions" / assignment.id, ROOT / "assignments" / assignment.id
    syntax, wrong, replace = breaks(assignment)
    submission = tmp_path / "submission"
    shutil.copytree(solutions, submission, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    (submission / "conftest.py").write_text("import os\n", encoding="utf-8")  # ignored, with a note
    (submission / syntax).write_text("import torch\n\ndef broken(:\n", encoding="utf-8")
    if wrong is not None:
        text = (submission / wrong).read_text(encoding="utf-8")
        for old, new in replace:
            assert text.count(old) == 1, (wrong, old)
            text = text.replace(old, new)
        (submission / wrong).write_text(text, "utf-8")
    from conftest import sandbox_works

    from autograder.grading.grader import Grader
    from autograder.grading.options import GradeOptions

    bn = messages(assignment, "bn")
    with Grader(kit, assignment.id, GradeOptions(sandbox=sandbox_works(kit), lang="bn")) as grader:
        result = grader.grade(submission, student="rahim")
    pages = {"feedback.html": reports.feedback_html(result, assignment, bn, "bn"),
             "report.html": render_html(summarize([result], assignment, bn, 1.0, "bn"))}
    folder = tmp_path / "student"
    shutil.copytree(stubs, folder, ignore=shutil.ignore_patterns("__pycache__", "*.whl"))
    for name in (syntax, wrong):
        if name is not None:
            shutil.copy(submission / name, folder / name)
    report = run_check(folder, lang="bn")
    pages["check()"] = selfcheck_html(report, verbose=True)
    text = render_text(report, verbose=True)
    return pages, text


BANGLA = [a for a in ASSIGNMENTS if "bn" in languages(a)]  # an English-only assignment has no Bangla pages


@pytest.mark.parametrize("assignment_id", ASSIGNMENTS)
def test_every_declared_language_titles_every_check_and_no_other_is_claimed(kit, assignment_id):
    """Each language grading.toml declares loads, with a title for every check; a language it does not
    declare is refused with a message naming grading.toml's list and the fix, not a missing file."""
    from autograder.errors import ConfigError

    assignment = kit.assignment(assignment_id)
    for lang in languages(assignment_id):
        graders = load_graders(assignment, lang=lang)
        assert all(c.title for found in graders.checks.values() for c in found), lang
    if "bn" not in languages(assignment_id):
        with pytest.raises(ConfigError, match=r"languages = \['en'\]"):
            load_graders(assignment, lang="bn")


@pytest.mark.parametrize("assignment_id", BANGLA)
def test_the_solutions_catalogues_and_titles_have_no_english_but_code_and_terms(kit, assignment_id):
    """Every Bangla message and title of an assignment (the check titles, each task's, the
    assignment's own), and a Bangla title for every check and task: doctor's rules
    (autograder/authoring/misconception_rules.py), checked against what the engine loads."""
    from autograder.authoring.misconception_rules import language_problems

    assignment = kit.assignment(assignment_id)
    assert list(language_problems(assignment)) == []
    titles = load_graders(assignment, lang="bn").messages["titles"]
    checks = [c for found in load_graders(assignment, lang="bn").checks.values() for c in found]
    assert [c.id for c in checks if c.id not in titles] == []


@pytest.mark.parametrize("assignment_id", BANGLA)
def test_bangla_pages_and_outputs_hold_no_english_but_code_and_terms(kit, assignment_id, tmp_path):
    from autograder.authoring.latin_scan import course_terms, latin_words, page_latin_words

    assignment = kit.assignment(assignment_id)
    pages, text = _bangla_outputs(kit, assignment, tmp_path)
    # the student's id and the task ids are data (identifiers), not strings to translate
    data = course_terms() | {"rahim"} | {t.id for t in assignment.tasks}
    found = {name: page_latin_words(page, data) for name, page in pages.items()}
    found["autograder check"] = latin_words(text, data)
    assert {k: v for k, v in found.items() if v} == {}
    page = pages["feedback.html"]
    assert "conftest.py</code> বাদ দেওয়া হয়েছে" in page  # the note, in Bangla
    assert bn_title(assignment) in page.split("<title>")[1].split("</title>")[0]


def bn_title(assignment: Assignment) -> str:
    return messages(assignment, "bn")["titles"].get(assignment.id, assignment.title)


def test_bold_bangla_has_a_real_bold_face_and_code_is_code(assignment):
    from autograder import fonts

    page = reports.feedback_html(broken(assignment), assignment, messages(assignment, "bn"), "bn")
    assert "font-weight: 100 900" not in page
    assert page.count("@font-face") == 2 and "font-weight: 700" in page and "font-weight: 400" in page
    assert fonts.FACES[700].read_bytes()[:4] == b"wOF2"
    lines = pages.feedback_lines("Observed: head(hidden(z)).squeeze(-1) gave 3 for model(x)\n"
                                 "Idea: Lesson: see `nn.Module`", messages(assignment, "en")["ui"])
    assert "<code>head(hidden(z)).squeeze(-1)</code>" in lines[0].html
    assert "<code>model(x)</code>" in lines[0].html
    assert lines[1].label == "Lesson" and not lines[1].html.startswith("Lesson")
