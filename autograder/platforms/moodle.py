"""Moodle: the CSV its Grades > Import > CSV file maps: identifier, grade and feedback columns."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autograder import __version__
from autograder.config import Assignment
from autograder.grading.results import SubmissionResult
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
MOODLE_MAX_GRADE = 100.0  # larger values are refused unless the site sets $CFG->unlimitedgrades


def moodle_feedback(result: SubmissionResult, assignment: Assignment, exported_at: str) -> str:
    """One line per student: the total, the score of each task, and who graded when."""
    tasks = "; ".join(f"{t.task} {t.score:g}/{t.max_score:g}" for t in result.tasks)
    problem = not_graded_reason(result)
    return (
        f"{assignment.title}: {result.score:g}/{result.max_score:g}. {tasks}. "
        + (f"Not graded: {problem}. " if problem else "")
        + f"(torch-autograder {__version__}, exported {exported_at})"
    )


def write_moodle(
    results: Iterable[SubmissionResult],
    assignment: Assignment,
    out: Path,
    id_column: str = "email",
    roster: Path | None = None,
    *,
    bom: bool = True,
) -> ExportReport:
    """The CSV Moodle's grade import maps: identifier, grade, feedback (grade and feedback together)."""
    if id_column not in MOODLE_ID_COLUMNS:
        raise ExportError(f"id_column must be one of {', '.join(MOODLE_ID_COLUMNS)}, got {id_column!r}")
    checked = check_results(results, assignment)
    mapping = read_moodle_roster(roster, id_column) if roster is not None else None
    exported_at = now_utc()
    header = [MOODLE_ID_COLUMNS[id_column], assignment.title, f"{assignment.title} (Feedback)"]
    rows: list[list[str]] = [header]
    unmatched: list[str] = []
    used: dict[str, str] = {}
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
        rows.append([ident, format_points(result.score), moodle_feedback(result, assignment, exported_at)])
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
    how = f"{id_column} (roster {roster})" if roster is not None else f"{id_column} (student id as is)"
    data = write_csv(out, rows, bom)
    meta = write_meta(out, data, {
        "format": "moodle-grade-import-csv",
        "assignment": assignment.id,
        "title": assignment.title,
        "max_score": assignment.max_score,
        "id_column": id_column,
        "map": {header[0]: f"user{id_column}" if id_column != "username" else "username",
                header[1]: "<the grade item> (or new)", header[2]: "feedback_<the same grade item>"},
        "roster": str(roster) if roster is not None else None,
        "students": len(rows) - 1,
        "unmatched_submissions": unmatched,
        "roster_students_without_submission": missing,
        "notes": notes,
    })
    return ExportReport(out, meta, len(rows) - 1, tuple(unmatched), tuple(missing), tuple(notes), how)
