"""What the HTML pages show of a result: code spans as code, a shared cause once, words not codes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from string import Formatter

from markdown_it import MarkdownIt
from markupsafe import Markup

from autograder import fonts
from autograder.grading.code_words import mark_code
from autograder.grading.results import CheckResult, SubmissionResult, TaskResult
from autograder.submissions.students import BIDI_CONTROLS, inert_bidi


def inert(value: object) -> object:
    """A page's value with its bidi controls shown as their codes (every template's `finalize`): a
    name holding U+202E can never reorder what a page shows after it."""
    if not isinstance(value, str) or not any(c in BIDI_CONTROLS for c in value):
        return value
    if isinstance(value, Markup):  # already HTML: the code is written escaped
        codes = "".join(f"&lt;U+{ord(c):04X}&gt;" if c in BIDI_CONTROLS else c for c in value)
        return Markup(codes)  # noqa: S704  HTML already (escaped), with codes in place of controls
    return inert_bidi(value)


# Only code spans: feedback quotes student output, where `*args` or `<b>` must stay as written.
_CODE_ONLY = MarkdownIt("zero").enable("backticks")


def inline_code(text: str) -> Markup:
    """`text` as HTML: escaped, with Markdown code spans (`like this`) as <code>."""
    return Markup(_CODE_ONLY.renderInline(text))  # noqa: S704  markdown-it "zero" escapes all but code spans


def font_css(lang: str) -> Markup:
    """The @font-face rules of the Bengali faces, for a Bangla page (autograder/fonts)."""
    return Markup(fonts.font_css(lang))  # noqa: S704  our own CSS, from the fonts we ship


def font_family(lang: str) -> Markup:
    return Markup(fonts.font_family(lang))  # noqa: S704  our own font names


# The class report's labels in English: the engine catalogue's [ui] gives them in the page's language.
REPORT_UI = {
    "report_title": "Class report", "students": "Students", "student": "Student", "mean": "Mean",
    "median": "Median", "batch_time": "Batch time", "score_distribution": "Score distribution",
    "tasks": "Tasks", "task": "Task", "points": "Points", "full_marks": "Full marks",
    "misconceptions": "Most common misconceptions", "misconception": "Misconception",
    "lesson_idea": "The lesson idea", "for_example": "For example", "hardest_checks": "Checks, hardest first",
    "check": "Check", "what_it_proves": "What it proves", "passed": "passed", "rate": "Rate",
    "not_graded": "Could not be graded (fully)", "why": "Why", "whole_submission": "(whole submission)",
    "results_per_variant": "Results per variant",
    "swapped_variants": "Suspected swapped variants",
    "late_submissions": "Late and undated submissions",
    "integrity_review": "For academic-integrity review",
    "no_misconception": "No misconception was seen.",
    "every_ran": "Every submission ran.",
    "nothing_to_review": "Nothing to review.",
    "on_time": "Every submission came in on time.",
    "no_swaps": "No submission implements another student's numbers.",
    "no_variant": "No graded submission has a variant.",
    "report_footer": "Generated {time} by torch-autograder {version}.",
}


@dataclass(frozen=True)
class Line:
    """One line of feedback: its bold label ("" for none) and its text as HTML."""

    label: str
    html: Markup


def feedback_lines(feedback: str, ui: dict[str, str]) -> tuple[Line, ...]:
    """The feedback's `label: text` lines; an idea that names its lesson shows the lesson's label
    alone (not "Idea: lesson: ...")."""
    labels = {ui["observed"], ui["expected"], ui["idea"], ui["failing_input"]}
    lesson = ui.get("lesson", "Lesson")
    lines = []
    for line in feedback.splitlines():
        label, sep, rest = line.partition(": ")
        if not (sep and label in labels):
            lines.append(Line("", inline_code(mark_code(line))))
            continue
        topic, lesson_sep, after = rest.partition(": ")
        if label == ui["idea"] and lesson_sep and topic.casefold() in (lesson.casefold(), "lesson"):
            label, rest = lesson, after
        lines.append(Line(label, inline_code(mark_code(rest))))
    return tuple(lines)


@dataclass(frozen=True)
class CheckView:
    check: CheckResult
    lines: tuple[Line, ...]  # empty when the task's shared cause says it


@dataclass(frozen=True)
class TaskView:
    task: TaskResult
    title: str  # from the catalogue's [titles], "" if it has none
    cause: tuple[Line, ...]  # the one reason every check failed for (import error, time limit...)
    checks: tuple[CheckView, ...]


def shared_cause(task: TaskResult) -> str:
    """The feedback every check of `task` failed with, when they all failed for one reason."""
    checks = task.checks
    if len(checks) < 2 or any(c.passed for c in checks):
        return ""
    first = checks[0]
    same = all(c.feedback == first.feedback and c.message_key == first.message_key for c in checks)
    return first.feedback if same and first.feedback else ""


def task_views(result: SubmissionResult, ui: dict[str, str], titles: dict[str, str]) -> tuple[TaskView, ...]:
    """Every task as the feedback page shows it."""
    views = []
    for task in result.tasks:
        cause = shared_cause(task)
        checks = tuple(CheckView(c, () if cause else feedback_lines(c.feedback, ui)) for c in task.checks)
        views.append(TaskView(task, titles.get(task.task, ""), feedback_lines(cause, ui), checks))
    return tuple(views)


def assignment_title(assignment_id: str, title: str, titles: dict[str, str]) -> str:
    """The assignment's title in the page's language: its catalogue's [titles] entry under the
    assignment's id, else grading.toml's title."""
    return titles.get(assignment_id) or title


def reason_text(reason: str, ui: dict[str, str]) -> str:
    """An engine reason (`import_error`) in words, in the page's language."""
    return ui.get(f"why_{reason}", reason.replace("_", " "))


def _pattern(template: str) -> re.Pattern[str] | None:
    """A note template as a regex whose groups are its fields ({file} -> (?P<file>.+?))."""
    parts, names = [], []
    for literal, name, _, _ in Formatter().parse(template):
        parts.append(re.escape(literal))
        if name:
            if name in names or not name.isidentifier():
                return None
            names.append(name)
            parts.append(f"(?P<{name}>.+?)")
    return re.compile("".join(parts) + r"\Z", re.S)


def translate_note(note: str, english: dict[str, str], ui: dict[str, str]) -> str:
    """A note about the submission (written in English by submissions/) in the page's language: the
    catalogue's `note_*` template it was made from, filled with the same values (as is if none)."""
    for key, template in english.items():
        if not key.startswith("note_") or key not in ui or ui[key] == template:
            continue
        pattern = _pattern(template)
        match = pattern.match(note) if pattern else None
        if match:
            try:
                return ui[key].format(**match.groupdict())
            except (KeyError, IndexError, ValueError):
                return note
    return note
