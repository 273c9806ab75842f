"""How a self-check reads: one line per task, the failing checks' feedback, as text or notebook HTML."""

from __future__ import annotations

import html
from collections.abc import Mapping

from autograder import fonts
from autograder.grading.code_words import code_html, mark_code
from autograder.grading.student_results import (
    CHECKED,
    ENDED,
    MISSING,
    NO_IMPORT,
    NOT_DEFINED,
    NOT_STARTED,
    STOPPED,
    CheckReport,
    TaskOutcome,
)
from autograder.manifest import kit_version

# Used only when a catalogue lacks a label (a checks/ folder built by an older kit).
DEFAULT_LABELS = {
    "selfcheck_not_started": "{task}: not started, {score}/{max}",
    "selfcheck_not_defined": "{task}: not started ({names} not defined yet), {score}/{max}",
    "selfcheck_missing": "{task}: `{file}` is missing, {score}/{max}",
    "selfcheck_no_import": "{task}: `{file}` does not import: `{error}`, {score}/{max}",
    "selfcheck_stopped": "{task}: stopped after {limit} s (an endless loop?), {score}/{max}",
    "selfcheck_ended": "{task}: your code ended the check's process, {score}/{max}",
    "selfcheck_all_pass": "{task}: {score}/{max}, all {count} public checks pass",
    "selfcheck_some_fail": "{task}: {score}/{max}, {failed} of {count} public checks fail",
    "selfcheck_total": "public checks: {score}/{max} (hidden checks are graded after you submit)",
    "selfcheck_turned_off": "Self-checks are turned off during this exam.",
    "selfcheck_output_capped": "... {dropped} more characters of output were not shown (first {limit} shown)",
    "selfcheck_version_note": ("note: checks/ was built with torch-autograder {built}, this is {running}: "
                               "if a check seems wrong, install {built}"),
    "selfcheck_folder": "checked the folder {folder}",
    "passed": "passed",
    "failed": "failed",
}
_STATUS_LABEL = {NOT_STARTED: "selfcheck_not_started", NOT_DEFINED: "selfcheck_not_defined",
                 MISSING: "selfcheck_missing", NO_IMPORT: "selfcheck_no_import", STOPPED: "selfcheck_stopped",
                 ENDED: "selfcheck_ended"}


def _num(value: float) -> str:
    return f"{value:g}"


def _label(labels: Mapping[str, str], key: str, **values: object) -> str:
    text = labels.get(key) or DEFAULT_LABELS[key]
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        return DEFAULT_LABELS[key].format(**values)


def task_line(labels: Mapping[str, str], outcome: TaskOutcome) -> str:
    """The one line that sums a task up."""
    values = {"task": outcome.task, "score": _num(outcome.score), "max": _num(outcome.max_score),
              "file": outcome.file, "error": outcome.detail, "names": outcome.detail,
              "limit": outcome.detail}
    if outcome.status != CHECKED:
        return _label(labels, _STATUS_LABEL[outcome.status], **values)
    failed = sum(not c.passed for c in outcome.checks)
    if not failed:
        return _label(labels, "selfcheck_all_pass", count=len(outcome.checks), **values)
    return _label(labels, "selfcheck_some_fail", failed=failed, count=len(outcome.checks), **values)


def total_line(report: CheckReport) -> str:
    return _label(report.labels, "selfcheck_total", score=_num(report.score), max=_num(report.max_score))


def version_note(report: CheckReport) -> str:
    """A note when the folder was built by another kit version than the one checking it."""
    running = kit_version()
    if not report.built_with or report.built_with == running or "unknown" in (running, report.built_with):
        return ""
    return _label(report.labels, "selfcheck_version_note", built=report.built_with, running=running)


def status_word(report: CheckReport, passed: bool) -> str:
    """PASS or FAIL before a check's title; in another language the catalogue's word (পাস, ফেল)."""
    if report.lang == "en":
        return "PASS" if passed else "FAIL"
    return _label(report.labels, "passed" if passed else "failed")


def text_lines(report: CheckReport, verbose: bool = False) -> list[tuple[str, str]]:
    """(style, text) lines: a style is "" or one of ok, fail, bold, dim (the CLI colours them)."""
    if report.off:
        return [("", _label(report.labels, "selfcheck_turned_off"))]
    lines: list[tuple[str, str]] = [("bold", f"{report.title} ({report.assignment})")]
    if report.folder:
        lines.append(("dim", _label(report.labels, "selfcheck_folder", folder=report.folder)))
    if version_note(report):
        lines.append(("dim", version_note(report)))
    for outcome in report.tasks:
        lines.append(("ok" if outcome.passed else "fail", task_line(report.labels, outcome)))
        if outcome.status in (STOPPED, ENDED) and outcome.checks and not verbose:  # why, once
            lines += [("dim", f"       {label}: {text}" if label else f"       {text}")
                      for label, text in feedback_lines(outcome.checks[0].feedback, report.labels)]
        shown = verbose or outcome.status == CHECKED
        for check in outcome.checks if shown else ():
            if check.passed and not verbose:
                continue
            mark = status_word(report, check.passed)
            lines.append(("ok" if check.passed else "fail",
                          f"  {mark} {check.title} ({_num(check.score)}/{_num(check.max_score)})"))
            if not check.passed:
                lines += [("dim", f"       {label}: {text}" if label else f"       {text}")
                          for label, text in feedback_lines(check.feedback, report.labels)]
    lines.append(("bold", total_line(report)))
    return lines


def render_text(report: CheckReport, verbose: bool = False) -> str:
    return "\n".join(text for _, text in text_lines(report, verbose))


_CSS = ("border-collapse:collapse;margin:4px 0",
        "padding:4px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top")


def feedback_lines(feedback: str, labels: Mapping[str, str]) -> list[tuple[str, str]]:
    """(label, text) per line of a check's feedback: "Idea: Lesson: ..." shows the lesson's label
    alone, and bare code (`model(x)`) is marked as a code span."""
    idea, lesson = labels.get("idea", "Idea"), labels.get("lesson", "Lesson")
    known = {labels.get(k, d) for k, d in (("observed", "Observed"), ("expected", "Expected"),
                                           ("idea", "Idea"), ("failing_input", "Failing input"))}
    lines = []
    for line in feedback.splitlines():
        label, sep, text = line.partition(": ")
        if not (sep and label in known):
            lines.append(("", mark_code(line)))
            continue
        topic, again, after = text.partition(": ")
        if label == idea and again and topic.casefold() in (lesson.casefold(), "lesson"):
            label, text = lesson, after
        lines.append((label, mark_code(text)))
    return lines


def _feedback_html(feedback: str, labels: Mapping[str, str]) -> str:
    rows = []
    for label, text in feedback_lines(feedback, labels):
        shown = f"<b>{html.escape(label)}:</b> {code_html(text)}" if label else code_html(text)
        rows.append(f"<div>{shown}</div>")
    return "".join(rows)


def _why(outcome: TaskOutcome, report: CheckReport) -> str:
    """Why a task that stopped or ended at its import did so (its checks' one shared feedback)."""
    if outcome.status not in (STOPPED, ENDED) or not outcome.checks:
        return ""
    return _feedback_html(outcome.checks[0].feedback, report.labels)


def render_html(report: CheckReport, verbose: bool = False) -> str:
    """The report as one HTML block for a notebook: per task its points, then each failing check."""
    if report.off:
        return f"<div>{html.escape(_label(report.labels, 'selfcheck_turned_off'))}</div>"
    table, cell = _CSS
    family = fonts.font_family(report.lang).replace('"', "'")
    rows = []
    for outcome in report.tasks:
        colour = "#1a7f37" if outcome.passed else "#cf222e"
        rows.append(
            f'<tr class="task" data-task="{html.escape(outcome.task)}">'
            f'<td style="{cell}"><b>{html.escape(outcome.task)}</b></td>'
            f'<td style="{cell};color:{colour}" class="points">'
            f'{_num(outcome.score)}/{_num(outcome.max_score)}</td>'
            f'<td style="{cell}">{html.escape(task_line(report.labels, outcome))}'
            f'{_why(outcome, report)}</td></tr>'
        )
        for check in outcome.checks if verbose or outcome.status == CHECKED else ():
            if check.passed and not verbose:
                continue
            mark = html.escape(report.labels.get("passed" if check.passed else "failed", "")) or (
                "passed" if check.passed else "failed")
            rows.append(
                f'<tr class="check"><td style="{cell}"></td>'
                f'<td style="{cell}">{_num(check.score)}/{_num(check.max_score)}</td>'
                f'<td style="{cell}"><div><b>{code_html(mark_code(check.title))}</b> ({mark})</div>'
                f'{"" if check.passed else _feedback_html(check.feedback, report.labels)}</td></tr>'
            )
    total = html.escape(total_line(report))
    if version_note(report):
        total += f"<div>{html.escape(version_note(report))}</div>"
    style = f"<style>{fonts.font_css(report.lang)}</style>" if report.lang == "bn" else ""
    checked = _label(report.labels, "selfcheck_folder", folder=report.folder)
    folder = f'<div class="folder">{html.escape(checked)}</div>' if report.folder else ""
    return (f'{style}<div class="autograder-check" lang="{html.escape(report.lang)}" '
            f'style="font-family:{family}"><div><b>{html.escape(report.title)}</b></div>{folder}'
            f'<table style="{table}">{"".join(rows)}</table><div><b>{total}</b></div></div>')
