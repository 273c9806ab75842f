"""Canvas: a gradebook CSV its Grades > Import reads, one assignment column for the roster's students."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autograder.config import Assignment
from autograder.grading.results import SubmissionResult
from autograder.platforms.export_files import (
    ExportError,
    ExportReport,
    check_results,
    format_points,
    write_csv,
    write_meta,
)
from autograder.platforms.rosters import CANVAS_HEADER, CANVAS_MATCH, CanvasStudent, read_canvas_roster
from autograder.submissions.students import student_key

POINTS_POSSIBLE = "    Points Possible"  # four leading spaces, as GradebookExporter writes it


def write_canvas(
    results: Iterable[SubmissionResult],
    assignment: Assignment,
    roster_csv: Path,
    out: Path,
    match_by: str = "sis_login_id",
    canvas_assignment_id: str = "",
    *,
    bom: bool = True,
) -> ExportReport:
    """A gradebook CSV Canvas imports: one assignment column `<title> (<id>)`, roster students only."""
    canvas_id = str(canvas_assignment_id).strip()
    if not canvas_id.isdigit():
        raise ExportError(
            f"the Canvas assignment id must be a number (the one in the assignment's address, "
            f".../assignments/<id>), got {canvas_assignment_id!r}: Canvas matches the column by it"
        )
    checked = check_results(results, assignment)
    roster = read_canvas_roster(roster_csv, match_by)
    column = CANVAS_MATCH[match_by]
    by_key: dict[str, CanvasStudent] = {}
    for student in roster:
        key = student_key(student.value(match_by))
        if not key:
            continue
        if key in by_key:
            raise ExportError(
                f"{roster_csv}: two roster students share {column} {student.value(match_by)!r} "
                f"({by_key[key].name}; {student.name}): match by another column"
            )
        by_key[key] = student
    scores = {student_key(r.student): r for r in checked}
    header = [*CANVAS_HEADER, f"{assignment.title} ({canvas_id})"]
    rows: list[list[str]] = [header, [POINTS_POSSIBLE, "", "", "", "", format_points(assignment.max_score)]]
    missing = []
    for student in roster:
        result = scores.get(student_key(student.value(match_by)))
        if result is None:
            missing.append(student.label(match_by))
            continue
        rows.append([student.name, student.canvas_id, student.sis_user_id, student.sis_login_id,
                     student.section, format_points(result.score)])
    unmatched = tuple(r.student for r in checked if student_key(r.student) not in by_key)
    data = write_csv(out, rows, bom)
    meta = write_meta(out, data, {
        "format": "canvas-gradebook-csv",
        "assignment": assignment.id,
        "title": assignment.title,
        "max_score": assignment.max_score,
        "canvas_assignment_id": canvas_id,
        "column": header[-1],
        "match_by": column,
        "roster": str(roster_csv),
        "students": len(rows) - 2,
        "unmatched_submissions": list(unmatched),
        "roster_students_without_submission": missing,
    })
    return ExportReport(out, meta, len(rows) - 2, unmatched, tuple(missing), (), column)
