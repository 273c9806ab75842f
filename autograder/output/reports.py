"""Files written for each student and for the class: results.json, feedback.md, grades.csv."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from autograder import __version__, atomic
from autograder.config import Assignment
from autograder.grading.provenance import GRADER_FILES
from autograder.grading.results import SubmissionResult
from autograder.ledger import adjustments
from autograder.ledger.book import Gradebook
from autograder.output import class_report, pages
from autograder.output.spreadsheet import safe_cell
from autograder.submissions.students import folder_name

VISIBLE, HIDDEN = "visible", "after_published"
STUDENT_FILES = ("results.json", "feedback.md", "feedback.html")  # in each student's folder of OUT
CLASS_FILES = ("grades.csv", "report.html")
Messages = dict[str, dict[str, str]]
ENGLISH_UI = {
    "observed": "Observed", "expected": "Expected", "idea": "Idea", "failing_input": "Failing input",
    "feedback_title": "Feedback for {student}", "score": "Score", "next_step": "Next step",
    "next_step_text": "Fix the first failed check, then run `autograder check` again.",
    "all_passed": "Every check passed.", "your_output": "Output of your code", "notes": "Notes",
    "task": "Task", "lesson": "Lesson", "shared_cause": "Every check of this task failed for this one reason",
    "see_above": "the reason is shown above",
}


def gradescope_results(result: SubmissionResult) -> dict[str, Any]:
    """results.json in Gradescope's schema; every test tagged with its task id. A result with the
    instructor's adjustments keeps each check's points as graded (what its signature covers), the
    adjustments as tests of their own, and the adjusted total as its score."""
    made = adjustments.applied(result)
    on_check: dict[tuple[str, str], float] = {}
    for item in made:
        if item["check"]:
            where = (item["task"], item["check"])
            on_check[where] = on_check.get(where, 0.0) + item["made"]
    tests = []
    for t_index, task in enumerate(result.tasks, start=1):
        for c_index, check in enumerate(task.checks, start=1):
            score = round(check.score - on_check.get((task.task, check.check_id), 0.0), 6)
            tests.append(
                {
                    "name": f"{task.task}: {check.title}",
                    "number": f"{t_index}.{c_index}",
                    "score": score,
                    "max_score": check.max_score,
                    "status": "passed" if score >= check.max_score else "failed",
                    "output": check.feedback,
                    "output_format": "text",
                    "visibility": VISIBLE if check.public else HIDDEN,
                    "tags": [task.task],
                    "extra_data": {"check_id": check.check_id, "message_key": check.message_key},
                }
            )
    for number, item in enumerate(made, start=1):
        scope = item["check"] or item["task"] or "total"
        tests.append({
            "name": f"adjustment ({scope}): {item['reason']}", "number": f"{len(result.tasks) + 1}.{number}",
            "score": item["made"], "max_score": 0.0, "status": "passed", "output": item["reason"],
            "output_format": "text", "visibility": VISIBLE, "tags": [item["task"] or "total"],
            "extra_data": {"adjustment": item["id"], "task": item["task"], "check": item["check"],
                           "points": item["points"]},
        })
    notes = "\n".join(([result.problem] if result.problem else []) + list(result.notes))
    extra: dict[str, Any] = {}
    if result.exam or result.penalty:  # an exam: the checks' total, the penalty and the variant
        extra = {"raw_score": result.raw_score, "late_penalty": result.penalty, "exam": result.exam}
    if result.review:  # for the instructor: lines that look into the interpreter (not penalised)
        extra["review"] = list(result.review)
    if result.provenance:  # what the grade was computed from, and its signature
        # the per-part digests stay in the gradebook: they name what changed when a grade goes stale
        extra["provenance"] = {k: v for k, v in result.provenance.items()
                               if k not in (adjustments.ADJUSTED, GRADER_FILES)}
    if made:  # the graders' total (signed) and the adjustments applied to it
        extra["adjusted"] = result.provenance[adjustments.ADJUSTED]
    return {
        "score": result.score,
        "execution_time": round(result.execution_time, 3),
        "output": notes,
        "output_format": "text",
        "test_output_format": "text",
        "visibility": VISIBLE,
        "stdout_visibility": "hidden",
        "extra_data": {
            "assignment": result.assignment,
            "student": result.student,
            "max_score": result.max_score,
            "kit_version": __version__,
            **extra,
        },
        "tests": tests,
    }


def _penalty_text(result: SubmissionResult) -> str:
    if not result.penalty:
        return ""
    return f" (the checks gave {result.raw_score:g}; late penalty -{result.penalty:g})"


def _markdown_feedback(feedback: str, ui: dict[str, str]) -> list[str]:
    """A check's feedback lines as the pages show them: "Idea: Lesson: ..." (in Bangla "মূল ধারণা: পাঠ:
    ...", two labels in a row) becomes the lesson's label alone (pages.feedback_lines)."""
    lesson, idea = ui.get("lesson", "Lesson"), ui.get("idea", "Idea")
    lines = []
    for line in feedback.splitlines():
        label, sep, rest = line.partition(": ")
        topic, again, after = rest.partition(": ")
        if sep and label == idea and again and topic.casefold() in (lesson.casefold(), "lesson"):
            line = f"{lesson}: {after}"
        lines.append(line)
    return lines


def feedback_markdown(result: SubmissionResult, assignment: Assignment, messages: Messages | None = None,
                      lang: str = "en") -> str:
    """feedback.md: every check with its feedback, in the language of the pages (`messages`' [ui])."""
    messages = messages or {}
    ui = {**ENGLISH_UI, **messages.get("ui", {})}
    title = pages.assignment_title(assignment.id, assignment.title, messages.get("titles", {}))
    heading = ui["feedback_title"].format(student=result.student)
    lines = [
        f"# {title}: {heading}",
        "",
        f"**{ui['score']}: {result.score:g} / {result.max_score:g}**{_penalty_text(result)}",
        "",
    ]
    notes = ([result.problem] if result.problem else []) + list(result.notes)
    if lang != "en":  # the notes were written in English from the catalogue's note_* templates
        notes = [pages.translate_note(note, _english_ui(), ui) for note in notes]
    for note in notes:
        lines.append(f"> {note}")
    for task in result.tasks:
        lines += ["", f"## {task.task} ({task.score:g} / {task.max_score:g})", ""]
        for check in task.checks:
            mark = "✅" if check.passed else "❌"
            lines.append(f"- {mark} {check.title} ({check.score:g}/{check.max_score:g})")
            if check.feedback:
                shown = _markdown_feedback(check.feedback, ui)
                lines += ["", "  ```", *("  " + line for line in shown), "  ```"]
        if task.output.strip():
            lines += ["", f"  {ui['your_output']}:", "", "  ```"]
            lines += ["  " + line for line in task.output.splitlines()[:20]] + ["  ```"]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1)
def _english_ui() -> dict[str, str]:
    from autograder.grading.course import ENGINE_MESSAGES, load_messages

    return dict(load_messages([ENGINE_MESSAGES], "en").get("ui", {}))


def feedback_html(result: SubmissionResult, assignment: Assignment, messages: Messages, lang: str) -> str:
    """A self-contained page (no network, its own Bengali font when in Bangla) with every check."""
    ui = {**ENGLISH_UI, **messages.get("ui", {})}
    env = class_report.templates()
    notes = (result.problem, *result.notes) if result.problem else result.notes
    if lang != "en":  # the notes were written in English from the catalogue's note_* templates
        english = _english_ui()
        notes = tuple(pages.translate_note(note, english, ui) for note in notes)
    shown = dataclasses.replace(result, notes=notes)
    return env.get_template("feedback.html.j2").render(
        r=shown, title=pages.assignment_title(assignment.id, assignment.title, messages.get("titles", {})),
        ui=ui, lang=lang, version=__version__,
        tasks=pages.task_views(shown, ui, messages.get("titles", {})),
        font_css=pages.font_css(lang), font_family=pages.font_family(lang),
    )


def write_student(
    out: Path, result: SubmissionResult, assignment: Assignment, messages: Messages | None = None,
    lang: str = "en",
) -> Path:
    folder = out / folder_name(result.student)  # one to one, and short, whatever the id
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps(gradescope_results(result), indent=2, ensure_ascii=False)
    atomic.write_text(folder / "results.json", data + "\n")  # each file whole or not at all (a full disk)
    atomic.write_text(folder / "feedback.md", feedback_markdown(result, assignment, messages, lang))
    atomic.write_text(folder / "feedback.html", feedback_html(result, assignment, messages or {}, lang))
    return folder


# After the scores in grades.csv: the student's folder in OUT and the submission's name as handed
# in (the id is the identity rule's form of it), then what `autograder verify` checks each row against.
WHERE_COLUMNS = ("folder", "source")
PROVENANCE_COLUMNS = ("submission_sha256", "grader_digest", "signature")


def grade_cells(result: SubmissionResult) -> dict[str, str]:
    """Every cell grades.csv can hold for `result`, by column (a task's by its id)."""
    exam, prov = result.exam, result.provenance
    cells = {"student": safe_cell(result.student), "total": f"{result.score:g}",
             "max": f"{result.max_score:g}",
             "variant": str(exam.get("variant", "")), "submitted_at": str(exam.get("submitted_at") or ""),
             "late_penalty": f"{result.penalty:g}", "folder": folder_name(result.student),
             "source": safe_cell(str(prov.get("source", "")))}
    cells.update({column: str(prov.get(column, "")) for column in PROVENANCE_COLUMNS})
    cells.update({t.task: f"{t.score:g}" for t in result.tasks})
    return cells


def grades_rows(results: list[SubmissionResult], assignment: Assignment) -> list[list[str]]:
    """One row per student: task scores, total, max; an exam adds the variant, the submission time
    and the late penalty (the total is after the penalty)."""
    tasks = [t.id for t in assignment.tasks]
    header = ["student", *tasks, "total", "max"]
    if assignment.exam is not None:
        header[1:1] = ["variant", "submitted_at"]
        header.insert(-2, "late_penalty")
    header += [*WHERE_COLUMNS, *PROVENANCE_COLUMNS]
    rows = [header]
    for result in sorted(results, key=lambda r: r.student):
        cells = grade_cells(result)
        rows.append([cells.get(column, "0" if column in tasks else "") for column in header])
    return rows


def write_class(
    out: Path, book: Gradebook, assignment: Assignment, seconds: float, messages: Messages | None = None,
    lang: str = "en", skipped: Sequence[tuple[str, str]] = (),
) -> list[Path]:
    """grades.csv and report.html for every student the gradebook holds (this run and earlier ones),
    each grade with the instructor's adjustments in force; `skipped`: (entry, why) of what this
    run's submissions folder held and did not grade. Returns the two files."""
    results = book.standing(assignment.id)
    rows = grades_rows(results, assignment)
    text = io.StringIO(newline="")
    csv.writer(text).writerows(rows)
    grades = atomic.write_text(out / "grades.csv", text.getvalue())  # a reader never sees half a file
    summary = class_report.summarize(results, assignment, messages or {}, seconds, lang, skipped)
    return [grades, class_report.write_report(out, summary)]
