"""Every feedback message exists in English and Bangla, with the same fields and placeholders.

The catalogues: the engine's (`autograder/messages/`, with the `[ui]` labels of the feedback pages)
and every assignment's (`solutions/<assignment>/graders/messages/`). For each `en.toml` there is a
file per other language its assignment declares (grading.toml `languages`; the engine's: bn) with exactly
the same keys; every message has the same fields in every language, and each field the same
`{placeholders}` (names, count, format spec and conversion); an English-only assignment has en.toml
alone. A Bangla text that is just the English one is an untranslated message, except texts of
placeholders and code only.
The rules live in autograder/authoring/catalogue_rules.py, which `autograder doctor` applies too.
Technical terms (`state_dict`, `zero_grad()`, `1/(1-p)`, `(N,)`, ...) stay in English as the course
writes them, so the Bangla text must contain every one the English text has. End to end, a
submission with one known bug gets its feedback in the language asked for.
"""

from __future__ import annotations

import shutil
import tomllib
from contextlib import ExitStack
from pathlib import Path
from string import Formatter
from typing import Any

import pytest
from kit_assignments import ASSIGNMENTS, languages

from autograder.authoring.catalogue_rules import SCRIPTS, catalogue_problems, is_pure_code, technical_terms
from autograder.catalogues import LABEL_TABLES, placeholders
from autograder.config import Kit, load_kit
from autograder.grading import judge
from autograder.grading.course import Graders, _flatten, load_graders
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions
from autograder.output import reports
from autograder.output.pages import inline_code
from autograder.submissions.collect import collect

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "autograder" / "messages"
SOLUTIONS = ROOT / "solutions" / "nn_module"  # the end-to-end tests' submission
CATALOGUES = [ENGINE, *sorted((ROOT / "solutions").glob("*/graders/messages"))]
IDS = [str(folder.relative_to(ROOT)) for folder in CATALOGUES]
LANGS = ("en", "bn")  # the engine's catalogue


def declared(folder: Path) -> tuple[str, ...]:
    """The languages a catalogue folder is complete in: the engine's all, an assignment's its declared."""
    return LANGS if folder == ENGINE else languages(folder.parents[1].name)


# (folder, language) for every translation a catalogue must have: the pairs the en/other tests compare.
TRANSLATED = [(folder, lang) for folder in CATALOGUES for lang in declared(folder) if lang != "en"]
TRANSLATED_IDS = [f"{folder.relative_to(ROOT)}-{lang}" for folder, lang in TRANSLATED]
EVERY_LANGUAGE = [(folder, lang) for folder in CATALOGUES for lang in declared(folder)]
EVERY_LANGUAGE_IDS = [f"{folder.relative_to(ROOT)}-{lang}" for folder, lang in EVERY_LANGUAGE]
FIELDS = ("observed", "expected", "idea")
# Labels that start "label: text" lines of the feedback (the HTML page bolds them by that prefix).
LINE_LABELS = ("observed", "expected", "idea", "failing_input")

BENGALI = SCRIPTS["bn"]


def load(folder: Path, lang: str) -> dict[str, dict[str, Any]]:
    """One catalogue file, flattened to {"table.key": {field: text}} as autograder.grading.course reads it."""
    path = folder / f"{lang}.toml"
    assert path.is_file(), f"{path} is missing: its catalogue declares {lang!r} (grading.toml languages)"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return _flatten(data)


def dummy_values(text: str) -> dict[str, str]:
    """A distinct stand-in value for every placeholder of `text`."""
    return {name: f"<{name}>" for _, name, _, _ in Formatter().parse(text) if name}


def messages(folder: Path, lang: str) -> list[tuple[str, str, str]]:
    return [(key, field, text) for key, entry in load(folder, lang).items() for field, text in entry.items()]


# ----------------------------------------------------------------------------- the catalogues


def test_catalogues_found():
    assert ENGINE in CATALOGUES and len(CATALOGUES) >= 2, CATALOGUES
    for folder in CATALOGUES:
        assert (folder / "en.toml").is_file(), folder


@pytest.mark.parametrize(("folder", "lang"), TRANSLATED, ids=TRANSLATED_IDS)
def test_same_keys_in_both_languages(folder, lang):
    en, bn = load(folder, "en"), load(folder, lang)
    assert en, f"{folder}/en.toml has no messages"
    untranslated = sorted(set(en) - set(bn))
    only_bn = sorted(set(bn) - set(en))
    assert not untranslated, f"{folder}/{lang}.toml lacks a translation of {untranslated}"
    assert not only_bn, f"{folder}/{lang}.toml has keys that en.toml does not: {only_bn}"


@pytest.mark.parametrize(("folder", "lang"), TRANSLATED, ids=TRANSLATED_IDS)
def test_same_fields_in_both_languages(folder, lang):
    en, bn = load(folder, "en"), load(folder, lang)
    for key in en.keys() & bn.keys():
        assert set(bn[key]) == set(en[key]), f"{key}: fields {sorted(bn[key])} ({lang}), {sorted(en[key])}"
        for field in en[key]:
            text = bn[key][field]
            assert isinstance(text, str) and text.strip(), f"{key}.{field} is empty in {lang}"


@pytest.mark.parametrize("folder", CATALOGUES, ids=IDS)
def test_every_message_has_observed_expected_and_idea(folder):
    for lang in declared(folder):
        for key, entry in load(folder, lang).items():
            if key in LABEL_TABLES:
                continue
            assert set(entry) == set(FIELDS), f"{folder}/{lang}.toml [{key}] has fields {sorted(entry)}"


@pytest.mark.parametrize(("folder", "lang"), TRANSLATED, ids=TRANSLATED_IDS)
def test_same_placeholders_in_both_languages(folder, lang):
    en, bn = load(folder, "en"), load(folder, lang)
    for key in en.keys() & bn.keys():
        for field in en[key].keys() & bn[key].keys():
            want, got = placeholders(en[key][field]), placeholders(bn[key][field])
            assert got == want, f"{key}.{field}: placeholders {dict(got)} in {lang}, {dict(want)} in en"


@pytest.mark.parametrize(("folder", "lang"), TRANSLATED, ids=TRANSLATED_IDS)
def test_bangla_is_translated(folder, lang):
    en, bn = load(folder, "en"), load(folder, lang)
    for key in en.keys() & bn.keys():
        for field in en[key].keys() & bn[key].keys():
            same = bn[key][field].strip() == en[key][field].strip()
            if is_pure_code(en[key][field]):  # only placeholders and code: "{call}: {raised}"
                continue
            assert not same, f"{key}.{field} is the English text, untranslated: {bn[key][field]!r}"
            script = SCRIPTS.get(lang)
            assert script is None or script.search(bn[key][field]), f"{key}.{field} has no {lang} in it"


@pytest.mark.parametrize(("folder", "lang"), TRANSLATED, ids=TRANSLATED_IDS)
def test_bangla_keeps_the_technical_terms(folder, lang):
    en, bn = load(folder, "en"), load(folder, lang)
    for key in en.keys() & bn.keys():
        for field in en[key].keys() & bn[key].keys():
            lost = sorted(t for t in technical_terms(en[key][field]) if t not in bn[key][field])
            assert not lost, f"{key}.{field}: the Bangla text lacks {lost} (keep technical terms in English)"


@pytest.mark.parametrize("folder", CATALOGUES, ids=IDS)
def test_doctor_finds_nothing_wrong(folder):
    """`autograder doctor` applies the same rules (autograder/authoring/catalogue_rules.py)."""
    assert list(catalogue_problems(folder, declared(folder))) == []


def test_pure_code_texts():
    assert is_pure_code("{call}: {raised}") and is_pure_code("`{x}` -> `y.grad`")
    assert not is_pure_code("{call} returned {got}")


def test_technical_terms_examples():
    terms = technical_terms(
        "backward() adds to .grad; without zero_grad() use `h *= ...`, nn.ModuleList(one nn.Linear), "
        "scale by 1/(1-p) to get (N,) or (out, in); the model's ValueError, e.g. ReLU (ints)."
    )
    assert {"backward()", ".grad", "zero_grad()", "`h *= ...`", "nn.ModuleList", "nn.Linear", "1/(1-p)",
            "(N,)", "ValueError", "ReLU"} <= terms
    assert not terms & {"e.g", "(ints)", "model's", "(out", "in)"}


@pytest.mark.parametrize(("folder", "lang"), EVERY_LANGUAGE, ids=EVERY_LANGUAGE_IDS)
def test_every_message_renders_with_dummy_values(folder, lang):
    for key, field, text in messages(folder, lang):
        if key == "titles":  # rendered with the variant's params (render_title), not str.format values
            continue
        values = dummy_values(text)
        try:
            rendered = text.format_map(values)
        except (KeyError, IndexError, ValueError) as exc:
            pytest.fail(f"{folder.name}/{lang}.toml {key}.{field} does not render: {exc!r}")
        missing = [v for v in values.values() if v not in rendered]
        assert not missing, f"{lang} {key}.{field}: {missing} not shown in {rendered!r}"


# ----------------------------------------------------------------------------- the ui labels


def test_ui_labels_are_translated():
    en, bn = load(ENGINE, "en")["ui"], load(ENGINE, "bn")["ui"]
    assert set(bn) == set(en)
    assert set(reports.ENGLISH_UI) <= set(en), "the HTML page's labels must all be in the catalogue"
    for label, text in en.items():
        assert bn[label] != text and BENGALI.search(bn[label]), f"ui.{label} is not translated: {bn[label]!r}"
        assert placeholders(bn[label]) == placeholders(text), f"ui.{label}: placeholders differ"
    assert bn["feedback_title"].format(student="s123").count("s123") == 1
    for label in LINE_LABELS:
        assert ": " not in bn[label] and "\n" not in bn[label], f"ui.{label} would break 'label: text' lines"
    assert len({bn[label] for label in LINE_LABELS}) == len(LINE_LABELS), "line labels must differ"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_assignment_has_a_catalogue(assignment):
    """`grade --lang L` finds a catalogue for every language each assignment declares (en first)."""
    folder = ROOT / "solutions" / assignment / "graders" / "messages"
    assert folder in CATALOGUES, assignment
    assert languages(assignment)[0] == "en", languages(assignment)
    for lang in languages(assignment):
        assert (folder / f"{lang}.toml").is_file(), f"{assignment} has no {lang}.toml"


ASSIGNMENT_LANGUAGES = [(a, lang) for a in ASSIGNMENTS for lang in languages(a)]


@pytest.mark.parametrize(("assignment", "lang"), ASSIGNMENT_LANGUAGES,
                         ids=[f"{a}-{lang}" for a, lang in ASSIGNMENT_LANGUAGES])
def test_render_uses_the_language(kit: Kit, assignment, lang):
    """judge.render on every message of each assignment: labels and texts of `lang`, no gaps."""
    graders: Graders = load_graders(kit.assignment(assignment), lang=lang)
    ui = graders.messages["ui"]
    for key, entry in graders.messages.items():
        if key in LABEL_TABLES:
            continue
        names = set()
        for text in entry.values():
            names |= set(dummy_values(text))
        text = judge.render(graders, key, {name: f"<{name}>" for name in names}, example="sizes=[1, 1]")
        assert "[missing value" not in text, f"{lang} {key}: {text}"
        lines = text.splitlines()
        assert [line.split(": ", 1)[0] for line in lines] == [ui[p] for p in (*FIELDS, "failing_input")], text
        if lang == "bn":
            assert BENGALI.search(text), f"{key}: no Bangla in {text!r}"


# ----------------------------------------------------------------------------- end to end


SUBMISSION_BUG = "        optimizer.zero_grad()\n"


def copy_reference(folder: Path, solutions: Path = SOLUTIONS) -> Path:
    """A submission folder holding the reference solutions (without their graders)."""
    shutil.copytree(solutions, folder, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    return folder


@pytest.fixture(scope="module")
def no_zero_grad(tmp_path_factory) -> Path:
    """The reference solutions with the optimizer.zero_grad() line of tinynet.py removed."""
    folder = copy_reference(tmp_path_factory.mktemp("no_zero_grad") / "submission")
    tinynet = folder / "tinynet.py"
    text = tinynet.read_text(encoding="utf-8")
    assert text.count(SUBMISSION_BUG) == 1, "tinynet.py changed: update SUBMISSION_BUG"
    tinynet.write_text(text.replace(SUBMISSION_BUG, ""), encoding="utf-8")
    return folder


def grade(kit: Kit, folder: Path, lang: str) -> tuple[Any, Graders]:
    with Grader(kit, "nn_module", GradeOptions(sandbox=False, lang=lang)) as grader:
        return grader.grade(folder, student="s-zero-grad"), grader.graders


def tinynet_feedback(result: Any) -> str:
    tinynet = result.task("tinynet")
    assert tinynet.score < tinynet.max_score, "the missing zero_grad() was not caught"
    for task in result.tasks:
        if task.task != "tinynet":
            assert task.score == task.max_score, [c.feedback for c in task.checks if not c.passed]
    return "\n".join(c.feedback for c in tinynet.checks if not c.passed)


def test_bangla_feedback_end_to_end(kit: Kit, no_zero_grad, tmp_path):
    result, graders = grade(kit, no_zero_grad, "bn")
    bn_ui = load(ENGINE, "bn")["ui"]
    feedback = tinynet_feedback(result)
    assert BENGALI.search(feedback), feedback
    assert "zero_grad" in feedback, feedback
    assert f"{bn_ui['observed']}: " in feedback and f"{bn_ui['idea']}: " in feedback, feedback
    assert "Observed:" not in feedback and "lesson:" not in feedback, feedback
    assert "পাঠ: ৫-ধাপের training loop" in feedback, feedback
    # The student's HTML page: Bangla labels, the title with the student's name, lang="bn".
    page = reports.feedback_html(result, kit.assignment(), graders.messages, "bn")
    assert bn_ui["feedback_title"].format(student="s-zero-grad") in page
    for label in ("score", "next_step", "next_step_text"):
        assert inline_code(bn_ui[label]) in page, label  # `code` spans shown as <code>
    assert f"<b>{bn_ui['observed']}:</b>" in page and f"<b>{bn_ui['expected']}:</b>" in page
    assert 'lang="bn"' in page
    assert "Observed" not in page and "Next step" not in page
    # feedback.md too (issue #38): Bangla labels, and the lesson's label alone, not "মূল ধারণা: পাঠ: ..."
    markdown = reports.feedback_markdown(result, kit.assignment(), graders.messages, "bn")
    assert f"{bn_ui['idea']}: {bn_ui['lesson']}: " not in markdown
    assert "  পাঠ: ৫-ধাপের training loop" in markdown
    assert bn_ui["feedback_title"].format(student="s-zero-grad") in markdown
    assert f"**{bn_ui['score']}: " in markdown and "Score" not in markdown


def test_english_feedback_end_to_end(kit: Kit, no_zero_grad):
    result, graders = grade(kit, no_zero_grad, "en")
    feedback = tinynet_feedback(result)
    assert not BENGALI.search(feedback), feedback
    assert "zero_grad" in feedback and "Observed: " in feedback, feedback
    assert "lesson: the five-step training loop" in feedback, feedback
    page = reports.feedback_html(result, kit.assignment(), graders.messages, "en")
    assert "<b>Observed:</b>" in page and not BENGALI.search(page)


# ----------------------------------------------------------------------------- every misconception in Bangla

def _catalogue(assignment: str) -> list[dict[str, Any]]:
    from autograder.authoring.catalogue_forms import load_wrong  # the short forms derived

    return load_wrong(load_kit(ROOT).assignment(assignment))


WRONG = [(assignment, entry) for assignment in ASSIGNMENTS if "bn" in languages(assignment)
         for entry in _catalogue(assignment)]


@pytest.fixture(scope="module")
def bangla_grader(kit: Kit):
    """`bangla_grader(id)`: one bare Bangla grader per assignment for this module."""
    graders: dict[str, Grader] = {}
    with ExitStack() as stack:

        def get(assignment: str) -> Grader:
            if assignment not in graders:
                bangla = GradeOptions(sandbox=False, lang="bn")
                graders[assignment] = stack.enter_context(Grader(kit, assignment, bangla))
            return graders[assignment]

        yield get


@pytest.mark.parametrize(("assignment", "entry"), WRONG, ids=[f"{a}:{e['id']}" for a, e in WRONG])
def test_misconception_feedback_in_bangla(bangla_grader, tmp_path, assignment, entry):
    """Every assignment's solutions/<id>/graders/misconceptions.toml, graded in Bangla: each wrong
    submission's feedback is Bangla and still names the misconception's keywords (technical terms,
    which stay in English)."""
    grader = bangla_grader(assignment)
    folder = copy_reference(tmp_path / "submission", ROOT / "solutions" / assignment)
    target = folder / entry["file"]
    text = target.read_text(encoding="utf-8")
    for old, new in entry["replace"]:
        assert text.count(old) == 1, f"{entry['id']}: {old!r} is not in the reference exactly once"
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    task = next(t for t in grader.assignment.tasks if t.id == entry["task"])
    result = grader.grade_task(task, collect(folder, grader.assignment.given))
    failed = [c for c in result.checks if not c.passed]
    assert failed, f"{entry['id']} was not caught"
    feedback = "\n".join(c.feedback for c in failed)
    assert BENGALI.search(feedback), feedback
    missing = [k for k in entry["feedback"] if k.lower() not in feedback.lower()]
    assert not missing, f"{entry['id']}: the Bangla feedback lacks {missing}:\n{feedback}"
