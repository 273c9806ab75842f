"""Moodle: the CSV its Grades > Import > CSV file maps by itself: identifier, grade and feedback."""

# Column names, from Moodle's mapping form (grade/import/grade_import_form.php): the identifier
# column is preselected when its header equals the name of a user field as Moodle shows it
# (`Email address`, `Username`, `ID number`); a column `<grade item> (Real)` is preselected as that
# grade item and `<grade item> (Feedback)` as its feedback, where <grade item> is the item's name
# as the gradebook shows it (`Assignment: Lab 1` for an activity, the bare name for a manual item).
# These are the words of an English Moodle; a site in another language uses its own.

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autograder import __version__
from autograder.config import Assignment
from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.grading.results import SubmissionResult
from autograder.output.spreadsheet import formula_like, safe_cell
from autograder.platforms.export_files import (
    ExportError,
    ExportReport,
    check_results,
    format_points,
    not_graded_reason,
    now_utc,
    write_csv,
    write_meta,
)
from autograder.platforms.rosters import read_moodle_roster
from autograder.submissions.students import student_key

MOODLE_ID_COLUMNS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
MOODLE_MAP_TO = {"email": "useremail", "username": "username", "idnumber": "useridnumber"}
MOODLE_MAX_GRADE = 100.0  # larger values are refused unless the site sets $CFG->unlimitedgrades
ENGLISH_EXPORT = {
    "feedback": "{title}: {score}/{max}. {tasks}.",
    "not_graded": "Not graded: {problem}.",
    "graded_by": "(torch-autograder {version}, exported {time})",
}


def moodle_columns(grade_item: str) -> tuple[str, str]:
    """The grade and feedback headers Moodle maps to `grade_item` by itself."""
    return f"{grade_item} (Real)", f"{grade_item} (Feedback)"


def export_texts(lang: str) -> dict[str, str]:
    """The export's feedback sentences in `lang` (the engine catalogue's [export] table)."""
    return {**ENGLISH_EXPORT, **load_messages([ENGINE_MESSAGES], lang).get("export", {})}


def moodle_feedback(result: SubmissionResult, assignment: Assignment, exported_at: str,
                    texts: dict[str, str] | None = None) -> str:
    """One line per student: the total, the score of each task, and who graded when."""
    texts = texts or ENGLISH_EXPORT
    tasks = "; ".join(f"{t.task} {t.score:g}/{t.max_score:g}" for t in result.tasks)
    problem = not_graded_reason(result)
    parts = [texts["feedback"].format(title=assignment.title, score=f"{result.score:g}",
                                      max=f"{result.max_score:g}", tasks=tasks)]
    if problem:
        parts.append(texts["not_graded"].format(problem=problem))
    parts.append(texts["graded_by"].format(version=__version__, time=exported_at))
    return " ".join(parts)


def _no_rows(checked: list[SubmissionResult], id_column: str, roster: Path | None) -> ExportError:
    """Why nothing could be written, and what to pass instead."""
    if not checked:
        return ExportError("no graded submissions to export")
    some = ", ".join(r.student for r in checked[:3])
    if roster is not None:
        return ExportError(
            f"none of the {len(checked)} graded students ({some}, ...) has a {id_column} on roster "
            f"{roster}: fill its {id_column} column (the header is student,email,username,idnumber)"
        )
    if id_column == "email":
        return ExportError(
            f"none of the {len(checked)} student ids ({some}, ...) is an email address, so Moodle could "
            f"match nobody: pass --roster ROSTER.csv (columns student,email) or --id-column username "
            f"if the student ids are Moodle usernames"
        )
    return ExportError(f"no student could be written with a Moodle {id_column}")


def write_moodle(
    results: Iterable[SubmissionResult],
    assignment: Assignment,
    out: Path,
    id_column: str = "email",
    roster: Path | None = None,
    *,
    bom: bool = True,
    grade_item: str | None = None,
    lang: str = "en",
) -> ExportReport:
    """The CSV Moodle's grade import maps by itself; refused (nothing written) if no student matches."""
    if id_column not in MOODLE_ID_COLUMNS:
        raise ExportError(f"id_column must be one of {', '.join(MOODLE_ID_COLUMNS)}, got {id_column!r}")
    checked = check_results(results, assignment)
    mapping = read_moodle_roster(roster, id_column) if roster is not None else None
    exported_at = now_utc()
    texts = export_texts(lang)
    item = grade_item or assignment.title
    header = [MOODLE_ID_COLUMNS[id_column], *moodle_columns(item)]
    rows: list[list[str]] = [header]
    unmatched: list[str] = []
    used: dict[str, str] = {}
    formula_ids: list[str] = []
    for result in checked:
        ident = result.student if mapping is None else mapping.get(student_key(result.student), "")
        if not ident or (id_column == "email" and "@" not in ident):
            unmatched.append(result.student)
            continue
        if student_key(ident) in used:
            raise ExportError(
                f"students {used[student_key(ident)]!r} and {result.student!r} map to the same Moodle "
                f"{id_column} {ident!r}: fix the roster"
            )
        used[student_key(ident)] = result.student
        if formula_like(ident):
            formula_ids.append(ident)  # kept exact: Moodle matches the user by it
        feedback = moodle_feedback(result, assignment, exported_at, texts)
        rows.append([ident, format_points(result.score), safe_cell(feedback)])
    if len(rows) == 1:
        raise _no_rows(checked, id_column, roster)
    missing = []
    if mapping is not None:
        graded = {student_key(r.student) for r in checked}
        missing = [f"{s} ({v or 'no ' + id_column})" for s, v in mapping.items() if s not in graded]
    notes = []
    if assignment.max_score > MOODLE_MAX_GRADE:
        notes.append(
            f"the maximum score is {assignment.max_score:g}: Moodle refuses grades above "
            f"{MOODLE_MAX_GRADE:g} unless the site allows unlimited grades"
        )
    if formula_ids:
        notes.append(
            f"{len(formula_ids)} Moodle {id_column}(s) begin like a spreadsheet formula and were kept "
            f"as they are (Moodle matches by them): import the file, do not open it in a spreadsheet: "
            + ", ".join(formula_ids)
        )
    how = f"{id_column} (roster {roster})" if roster is not None else f"{id_column} (student id as is)"
    data = write_csv(out, rows, bom)
    meta = write_meta(out, data, {
        "format": "moodle-grade-import-csv",
        "assignment": assignment.id,
        "title": assignment.title,
        "grade_item": item,
        "max_score": assignment.max_score,
        "id_column": id_column,
        "lang": lang,
        "map": {header[0]: MOODLE_MAP_TO[id_column], header[1]: f"the grade item {item!r} (or new)",
                header[2]: f"feedback for {item!r}"},
        "roster": str(roster) if roster is not None else None,
        "students": len(rows) - 1,
        "unmatched_submissions": unmatched,
        "roster_students_without_submission": missing,
        "notes": notes,
    })
    return ExportReport(out, meta, len(rows) - 1, tuple(unmatched), tuple(missing), tuple(notes), how)
