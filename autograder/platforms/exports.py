"""Scores in the platforms' own import formats: Canvas and Moodle gradebook CSVs, JUnit XML.

Format rules come from ../shared/notes/lms.md (Canvas §2, Moodle §3, JUnit §7). Decisions where the
formats leave room, and why:

- **Where the assignment, the time and the kit version go.** Never into the CSVs themselves:
  Canvas proposes a *new assignment* for every column it does not know and treats every row that
  is not the header, the `Points Possible` row or a `Muted`/`Manual Posting` row as a *student*;
  Moodle must map every column and aborts the whole import on a row whose user it cannot find.
  So each CSV gets a sidecar `<name>.meta.json` (assignment, title, export time, kit version,
  the file's sha256, and every warning). JUnit carries them as `<property>` elements and the
  `timestamp` attribute. Moodle's per-student feedback text also names the kit version.
- **Students on the roster without a graded submission are left out of the file** (and listed in
  the report). Canvas' importer (`GradebookImporter#no_change_to_value?`) treats a blank cell as a
  *change* when Canvas already holds a score, so a blank row would propose wiping a grade entered
  by hand; a row that is absent is not touched at all. Moodle reads `''` as "no grade" too.
  Nobody gets a 0 they did not earn from a missing row.
- **Submissions that match no roster row are left out and listed**: Canvas would create an unknown
  "new student" entry, Moodle would refuse the whole file.
- **Encoding:** UTF-8 with a byte-order mark by default. Canvas itself writes a BOM for some
  locales and its importer only checks that the first header cell *contains* `Student`; Moodle's
  `csv_import_reader` strips the BOM. The BOM lets Excel show Bangla names correctly. `bom=False`
  writes plain UTF-8.
- **Numbers:** two decimals (`8.50`), as Canvas' own exporter and importer compare them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder import __version__
from autograder.config import Assignment
from autograder.errors import AutograderError
from autograder.grading.results import SubmissionResult
from autograder.submissions.students import safe_name, student_key


class ExportError(AutograderError):
    """An export could not be written: a roster or an option is wrong; the message says which."""


# -- shared -------------------------------------------------------------------------------------
CANVAS_MATCH = {"sis_login_id": "SIS Login ID", "sis_user_id": "SIS User ID", "id": "ID"}
CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # four leading spaces, as GradebookExporter writes it
MOODLE_ID_COLUMNS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
MOODLE_ROSTER_COLUMNS = ("student", "email", "username", "idnumber")
MOODLE_MAX_GRADE = 100.0  # larger values are refused unless the site sets $CFG->unlimitedgrades


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote, and who was left out (never silently)."""

    path: Path
    meta: Path | None
    rows: int
    unmatched_submissions: tuple[str, ...] = ()  # graded students the roster does not know
    missing_submissions: tuple[str, ...] = ()  # roster students without a graded submission
    notes: tuple[str, ...] = ()
    match: str = ""  # how students were matched, for the messages

    @property
    def warnings(self) -> list[str]:
        lines = []
        if self.unmatched_submissions:
            lines.append(
                f"{len(self.unmatched_submissions)} graded submission(s) match no roster student"
                f"{' by ' + self.match if self.match else ''} and were NOT exported: "
                + ", ".join(self.unmatched_submissions)
            )
        if self.missing_submissions:
            lines.append(
                f"{len(self.missing_submissions)} roster student(s) have no graded submission and "
                "were left out of the file (their grades in the LMS stay as they are): "
                + ", ".join(self.missing_submissions)
            )
        return lines + list(self.notes)


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def format_points(value: float) -> str:
    """`8.5` -> `8.50`: two decimals, as Canvas exports and compares scores."""
    return f"{round(value, 2) + 0.0:.2f}"


def meta_path(out: Path) -> Path:
    return out.with_name(out.name + ".meta.json")


def _check_results(results: Iterable[SubmissionResult], assignment: Assignment) -> list[SubmissionResult]:
    checked: list[SubmissionResult] = []
    seen: set[str] = set()
    for result in results:
        if result.assignment != assignment.id:
            raise ExportError(
                f"a result for {result.student!r} belongs to assignment {result.assignment!r}, "
                f"not {assignment.id!r}: export one assignment at a time"
            )
        if result.student in seen:
            raise ExportError(f"two results for student {result.student!r}: pass each student once")
        seen.add(result.student)
        checked.append(result)
    return sorted(checked, key=lambda r: r.student)


def _write_csv(out: Path, rows: Sequence[Sequence[str]], bom: bool) -> bytes:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n").writerows(rows)
    data = buffer.getvalue().encode("utf-8-sig" if bom else "utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    return data


def _write_meta(out: Path, data: bytes, info: dict[str, Any]) -> Path:
    path = meta_path(out)
    meta = {
        "file": out.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "exported_at": now_utc(),
        "kit": "torch-autograder",
        "kit_version": __version__,
        **info,
    }
    path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _read_table(path: Path, what: str) -> list[list[str]]:
    """Rows of a CSV file (UTF-8, with or without BOM; `,` or `;` as Canvas may write)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ExportError(f"{what} {path} not found") from None
    except UnicodeDecodeError:
        raise ExportError(f"{what} {path} is not UTF-8 text: export it again as CSV (UTF-8)") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise ExportError(f"{what} {path} is empty: it needs a header row")
    first = lines[0]
    delimiter = ";" if len(next(csv.reader([first], delimiter=";"))) > len(next(csv.reader([first]))) else ","
    return [row for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)]



# -- Canvas ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CanvasStudent:
    name: str
    canvas_id: str
    sis_user_id: str
    sis_login_id: str
    section: str

    def value(self, match_by: str) -> str:
        return {"id": self.canvas_id, "sis_user_id": self.sis_user_id, "sis_login_id": self.sis_login_id}[
            match_by
        ]

    def label(self, match_by: str) -> str:
        return f"{self.name} ({self.value(match_by) or 'no ' + CANVAS_MATCH[match_by]})"


_SKIP_ROW = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)


def read_canvas_roster(path: Path, match_by: str = "sis_login_id") -> list[CanvasStudent]:
    """The students of a Canvas gradebook export (`Student,ID,[SIS User ID],SIS Login ID,...,Section`)."""
    if match_by not in CANVAS_MATCH:
        raise ExportError(f"match_by must be one of {', '.join(CANVAS_MATCH)}, got {match_by!r}")
    rows = _read_table(path, "Canvas roster")
    header = [h.strip() for h in rows[0]]
    if len(header) >= 3 and header[0] == "LastName" and header[1] == "FirstName":
        name_of = lambda row: f"{_cell(row, 0)}, {_cell(row, 1)}".strip(", ")  # noqa: E731
    elif len(header) >= 2 and "Student" in header[0] and "ID" in header[1]:
        name_of = lambda row: _cell(row, 0)  # noqa: E731
    else:
        raise ExportError(
            f"{path} is not a Canvas gradebook export: its header must start with Student,ID "
            f"(found {','.join(header[:3])}); export it from Canvas: Grades > Export > CSV"
        )
    wanted = CANVAS_MATCH[match_by]
    if wanted not in header:
        raise ExportError(
            f"{path} has no {wanted!r} column to match students by (columns: {', '.join(header[:6])}); "
            f"pass another --match-by ({', '.join(k for k, v in CANVAS_MATCH.items() if v in header)})"
        )
    index = {name: header.index(name) for name in CANVAS_HEADER if name in header}
    students = []
    for row in rows[1:]:
        cells = [c for c in row if c is not None]
        if not any(c.strip() for c in cells):
            continue
        if "Points Possible" in _cell(row, 0) or all(_SKIP_ROW.match(c) for c in cells):
            continue
        values = {col: _cell(row, i) for col, i in index.items()}
        students.append(CanvasStudent(name_of(row), values.get("ID", ""), values.get("SIS User ID", ""),
                                      values.get("SIS Login ID", ""), values.get("Section", "")))
    return students


def _cell(row: list[str], i: int) -> str:
    return row[i] if i < len(row) else ""


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
    checked = _check_results(results, assignment)
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
    data = _write_csv(out, rows, bom)
    meta = _write_meta(out, data, {
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


# -- Moodle ------------------------------------------------------------------------------------
def read_moodle_roster(path: Path, id_column: str) -> dict[str, str]:
    """kit student id -> Moodle identifier, from a CSV with columns `student,email,username,idnumber`.

    Only `student` and the chosen identifier column are required; other columns may be missing
    or empty. `student` is the kit's student id (the submission's folder or zip name).
    """
    rows = _read_table(path, "Moodle roster")
    header = [h.strip().casefold() for h in rows[0]]
    for needed in ("student", id_column):
        if needed not in header:
            raise ExportError(
                f"{path} has no {needed!r} column (columns: {', '.join(rows[0])}); a Moodle roster "
                f"has the header {','.join(MOODLE_ROSTER_COLUMNS)}"
            )
    s_i, v_i = header.index("student"), header.index(id_column)
    mapping: dict[str, str] = {}
    for row in rows[1:]:
        student = _cell(row, s_i).strip()
        if not student:
            continue
        if student_key(student) in mapping:
            raise ExportError(f"{path}: student {student!r} is listed twice")
        mapping[student_key(student)] = _cell(row, v_i).strip()
    return mapping


def moodle_feedback(result: SubmissionResult, assignment: Assignment, exported_at: str) -> str:
    """One line per student: the total, the score of each task, and who graded when."""
    tasks = "; ".join(f"{t.task} {t.score:g}/{t.max_score:g}" for t in result.tasks)
    problem = _problem(result)
    return (
        f"{assignment.title}: {result.score:g}/{result.max_score:g}. {tasks}. "
        + (f"Not graded: {problem}. " if problem else "")
        + f"(torch-autograder {__version__}, exported {exported_at})"
    )


def _problem(result: SubmissionResult) -> str:
    """Why nothing could be graded (a broken zip, an empty folder), if the engine said so."""
    return str(getattr(result, "problem", "") or "").rstrip(".")


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
    checked = _check_results(results, assignment)
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
    data = _write_csv(out, rows, bom)
    meta = _write_meta(out, data, {
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


# -- JUnit XML ---------------------------------------------------------------------------------
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """Text XML 1.0 can hold: control characters (ANSI colours, NULs from student output) become `?`."""
    return _XML_INVALID.sub("?", text)


def _props(parent: ET.Element, values: dict[str, str]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        ET.SubElement(props, "property", name=name, value=_xml_text(value))


def junit_tree(result: SubmissionResult, timestamp: str | None = None) -> ET.ElementTree:
    """`<testsuites>` with one `<testsuite>` per task and one `<testcase>` per check."""
    stamp = (timestamp or now_utc()).removesuffix("+00:00")  # junit-4.xsd: dateTime without zone
    checks = [c for t in result.tasks for c in t.checks]
    failures = sum(not c.passed for c in checks)
    root = ET.Element("testsuites", name=_xml_text(f"{result.assignment}: {result.student}"),
                      tests=str(len(checks)), failures=str(failures), errors="0",
                      time=f"{result.execution_time:.3f}")
    for task in result.tasks:
        suite = ET.SubElement(
            root, "testsuite", name=_xml_text(f"{result.assignment}.{task.task}"),
            tests=str(len(task.checks)), failures=str(sum(not c.passed for c in task.checks)),
            errors="0", skipped="0", time="0", timestamp=stamp,
        )
        _props(suite, {
            "assignment": result.assignment,
            "task": task.task,
            "student": result.student,
            "score": f"{task.score:g}",
            "max_score": f"{task.max_score:g}",
            "total_score": f"{result.score:g}",
            "total_max_score": f"{result.max_score:g}",
            "kit_version": __version__,
            "exported_at": stamp,
        })
        for check in task.checks:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(f"{result.assignment}.{task.task}"),
                                 name=_xml_text(check.title), time="0")
            _props(case, {
                "points": f"{check.score:g}",
                "max_points": f"{check.max_score:g}",
                "check_id": check.check_id,
                "visibility": "public" if check.public else "hidden",
            })
            if not check.passed:
                first = next((ln.strip() for ln in check.feedback.splitlines() if ln.strip()), "")
                message = first[:200] or f"{check.score:g}/{check.max_score:g} points"
                failure = ET.SubElement(case, "failure", message=_xml_text(message),
                                        type=_xml_text(check.message_key or "failed"))
                failure.text = _xml_text(check.feedback)
        notes = [*filter(None, [_problem(result)]), *result.notes, *task.notes]
        if notes or task.output:
            out = ET.SubElement(suite, "system-out")
            out.text = _xml_text("\n".join([*notes, task.output]).strip("\n"))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(result: SubmissionResult, path: Path) -> Path:
    """One student's JUnit XML file (UTF-8, with an XML declaration)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_tree(result).write(path, encoding="utf-8", xml_declaration=True)
    return path


def junit_filename(student: str) -> str:

    return f"{safe_name(student)}.xml"


def write_junit_all(results: Iterable[SubmissionResult], out_dir: Path) -> list[Path]:
    """`OUT_DIR/<student>.xml` for every result; two students with the same file name are an error."""
    results = list(results)
    names: dict[str, str] = {}
    for result in results:
        name = junit_filename(result.student)
        if name in names and names[name] != result.student:
            raise ExportError(
                f"students {names[name]!r} and {result.student!r} would both be written to {name}"
            )
        names[name] = result.student
    return [write_junit(r, out_dir / junit_filename(r.student)) for r in results]


__all__ = [
    "ExportError", "ExportReport", "read_canvas_roster", "read_moodle_roster", "write_canvas",
    "write_moodle", "write_junit", "write_junit_all", "junit_tree", "meta_path",
]
