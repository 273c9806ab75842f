"""Canvas: a gradebook CSV its Grades > Import reads, one assignment column for the roster's students."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autograder.config import Assignment
from autograder.grading.results import SubmissionResult
from autograder.output.spreadsheet import formula_like, safe_cell
from autograder.platforms.export_files import (
    ExportError,
    ExportReport,
    check_results,
    format_points,
    write_csv,
    write_meta,
)
from autograder.platforms.rosters import (
    CANVAS_HEADER,
    CANVAS_MATCH,
    CanvasColumn,
    CanvasStudent,
    read_canvas_columns,
    read_canvas_roster,
)
from autograder.submissions.students import student_key

POINTS_POSSIBLE = "    Points Possible"  # four leading spaces, as GradebookExporter writes it


def _points(text: str) -> float | None:
    try:
        return float(text.replace(",", "."))  # Canvas writes a decimal comma in some locales
    except ValueError:
        return None


def canvas_column(roster_csv: Path, canvas_id: str, assignment: Assignment) -> CanvasColumn:
    """The roster's column of assignment `canvas_id`; its Points Possible must be the kit's maximum.

    Canvas' importer proposes a *new* assignment for a column whose id it does not know, so an id
    the roster does not have is refused here rather than discovered in Canvas."""
    columns = read_canvas_columns(roster_csv)
    column = columns.get(canvas_id)
    if column is None:
        known = ", ".join(c.header for c in columns.values()) or "none"
        raise ExportError(
            f"{roster_csv} has no assignment with id {canvas_id} (its assignments: {known}): pass the "
            f"--canvas-id of one of them, or create the assignment in Canvas and export the roster again"
        )
    points = _points(column.points)
    if points is not None and round(points, 2) != round(assignment.max_score, 2):
        raise ExportError(
            f"{roster_csv}: Canvas gives {column.header!r} {column.points} points possible but the kit "
            f"grades {assignment.id} out of {assignment.max_score:g}: set Points Possible to "
            f"{assignment.max_score:g} in Canvas and export the roster again"
        )
    return column


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
    """A gradebook CSV Canvas imports: the roster's column `<title> (<id>)`, roster students only."""
    canvas_id = str(canvas_assignment_id).strip()
    if not canvas_id.isdigit():
        raise ExportError(
            f"the Canvas assignment id must be a number (the one in the assignment's address, "
            f".../assignments/<id>), got {canvas_assignment_id!r}: Canvas matches the column by it"
        )
    checked = check_results(results, assignment)
    roster = [s for s in read_canvas_roster(roster_csv, match_by) if not s.is_test_student]
    match_column = CANVAS_MATCH[match_by]
    by_key: dict[str, CanvasStudent] = {}
    for student in roster:
        key = student_key(student.value(match_by))
        if not key:
            continue
        if key in by_key:
            raise ExportError(
                f"{roster_csv}: two roster students share {match_column} {student.value(match_by)!r} "
                f"({by_key[key].name}; {student.name}): match by another column"
            )
        by_key[key] = student
    column = canvas_column(roster_csv, canvas_id, assignment)
    scores = {student_key(r.student): r for r in checked}
    header = [*CANVAS_HEADER, column.header]
    rows: list[list[str]] = [header, [POINTS_POSSIBLE, "", "", "", "", format_points(assignment.max_score)]]
    missing = []
    formula_ids = []
    for student in roster:
        result = scores.get(student_key(student.value(match_by)))
        if result is None:
            missing.append(student.label(match_by))
            continue
        ids = [student.canvas_id, student.sis_user_id, student.sis_login_id]
        formula_ids += [i for i in ids if formula_like(i)]  # kept exact: Canvas matches by them
        rows.append([safe_cell(student.name), *ids, safe_cell(student.section), format_points(result.score)])
    unmatched = tuple(r.student for r in checked if student_key(r.student) not in by_key)
    if len(rows) == 2:
        raise ExportError(
            f"none of the {len(checked)} graded students matches a student of {roster_csv} by "
            f"{match_column} (graded: {', '.join(unmatched[:3])}, ...): pass the --match-by column "
            f"that holds the kit's student ids ({', '.join(CANVAS_MATCH)})"
        )
    notes = []
    if formula_ids:
        notes.append(f"{len(formula_ids)} Canvas id(s) begin like a spreadsheet formula and were kept as "
                     f"they are (Canvas matches by them): import the file, do not open it in a spreadsheet: "
                     + ", ".join(formula_ids))
    data = write_csv(out, rows, bom)
    meta = write_meta(out, data, {
        "format": "canvas-gradebook-csv",
        "assignment": assignment.id,
        "title": assignment.title,
        "max_score": assignment.max_score,
        "canvas_assignment_id": canvas_id,
        "column": header[-1],
        "points_possible": column.points,
        "match_by": match_column,
        "roster": str(roster_csv),
        "students": len(rows) - 2,
        "unmatched_submissions": list(unmatched),
        "roster_students_without_submission": missing,
        "notes": notes,
    })
    return ExportReport(out, meta, len(rows) - 2, unmatched, tuple(missing), tuple(notes), match_column)
