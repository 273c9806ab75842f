"""Every roster the kit accepts, read one way and matched to student ids by `student_key`."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.errors import AutograderError
from autograder.platforms.export_files import ExportError
from autograder.platforms.lti.config import NRPS_MATCHES
from autograder.platforms.lti.errors import LtiError
from autograder.submissions.students import student_key

CANVAS_MATCH = {"sis_login_id": "SIS Login ID", "sis_user_id": "SIS User ID", "id": "ID"}
CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_ROSTER_COLUMNS = ("student", "email", "username", "idnumber")
LTI_ROSTER_COLUMNS = ("student", "lti_user_id")


def _read_text(path: Path, what: str, error: type[AutograderError], hint: str = "") -> str:
    """A roster file's text (UTF-8, with or without a byte-order mark); `error` says what is wrong."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise error(f"{what} {path} not found") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text{hint}") from None


def _cell(row: list[str], i: int) -> str:
    return row[i] if i < len(row) else ""


def _read_table(path: Path, what: str) -> list[list[str]]:
    """Rows of a CSV file (UTF-8, with or without BOM; `,` or `;` as Canvas may write)."""
    text = _read_text(path, what, ExportError, ": export it again as CSV (UTF-8)")
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise ExportError(f"{what} {path} is empty: it needs a header row")
    first = lines[0]
    delimiter = ";" if len(next(csv.reader([first], delimiter=";"))) > len(next(csv.reader([first]))) else ","
    return [row for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)]


# -- Canvas -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CanvasStudent:
    """One student row of a Canvas gradebook export."""

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

    @property
    def is_test_student(self) -> bool:
        """Canvas' own "Test Student" (Student View): on every roster, never a real student."""
        return self.name.strip() in CANVAS_TEST_STUDENT and not (self.sis_user_id or self.sis_login_id)


@dataclass(frozen=True)
class CanvasColumn:
    """An assignment column of a Canvas gradebook export: `<title> (<id>)` and its Points Possible."""

    header: str
    title: str
    canvas_id: str
    points: str  # as the Points Possible row has it ("10.00"), "" if the roster has no such row


CANVAS_TEST_STUDENT = ("Student, Test", "Test Student")
# Assignment.title_and_id in Canvas: what its importer matches a column to an assignment by.
_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")
# Columns Canvas' importer ignores (totals), as GradebookImporter lists them.
_TOTALS = re.compile(r"Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade"
                     r"|Override Score|Override Grade|Override Status")
_SKIP_ROW = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)


def read_canvas_roster(path: Path, match_by: str = "sis_login_id") -> list[CanvasStudent]:
    """The students of a Canvas gradebook export (`Student,ID,[SIS User ID],SIS Login ID,...,Section`)."""
    if match_by not in CANVAS_MATCH:
        raise ExportError(f"match_by must be one of {', '.join(CANVAS_MATCH)}, got {match_by!r}")
    rows = _read_table(path, "Canvas roster")
    header = [h.strip() for h in rows[0]]
    name_of: Callable[[list[str]], str]
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


def read_canvas_columns(path: Path) -> dict[str, CanvasColumn]:
    """Canvas assignment id -> its column in a Canvas gradebook export (header and Points Possible)."""
    rows = _read_table(path, "Canvas roster")
    header = [h.strip() for h in rows[0]]
    points_row = next((row for row in rows[1:] if "Points Possible" in _cell(row, 0)), [])
    columns: dict[str, CanvasColumn] = {}
    for i, name in enumerate(header):
        match = _TITLE_AND_ID.match(name)
        if match is None or name in CANVAS_HEADER or _TOTALS.search(name):
            continue
        columns[match.group(2)] = CanvasColumn(name, match.group(1), match.group(2),
                                               _cell(points_row, i).strip())
    return columns


# -- Moodle -----------------------------------------------------------------------------------
def read_moodle_roster(path: Path, id_column: str) -> dict[str, str]:
    """student_key -> Moodle identifier, from a CSV with columns `student,email,username,idnumber`.

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


# -- LTI --------------------------------------------------------------------------------------
def read_lti_roster(path: Path) -> dict[str, str]:
    """student_key -> LTI user id, from a CSV with the header `student,lti_user_id`.

    Other columns are ignored; a row with an empty lti_user_id leaves that student unmatched.
    """
    text = _read_text(path, "roster", LtiError)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header = [h.strip().casefold() for h in rows[0]] if rows else []
    for needed in LTI_ROSTER_COLUMNS:
        if needed not in header:
            raise LtiError(
                f"roster {path} has no {needed!r} column: its header must be {','.join(LTI_ROSTER_COLUMNS)}"
            )
    mapping: dict[str, str] = {}
    # Line numbers count rows, not blank lines: as csv.DictReader counted them before.
    for line, cells in enumerate((row for row in rows[1:] if row), start=2):
        row = dict(zip(header, cells, strict=False))
        student = row.get("student", "").strip()
        if not student:
            continue
        if student_key(student) in mapping:
            raise LtiError(f"roster {path} line {line}: student {student!r} is listed twice")
        mapping[student_key(student)] = row.get("lti_user_id", "").strip()
    return {k: v for k, v in mapping.items() if v}


def roster_from_members(members: Iterable[Mapping[str, Any]], match: str) -> dict[str, str]:
    """student_key -> LTI user id, from the platform's NRPS members: `match` field -> `user_id`.

    Members whose status is Deleted are left out; a value held by two members is ambiguous and
    matches neither.
    """
    if match not in NRPS_MATCHES:
        raise LtiError(f"nrps_match must be one of {', '.join(NRPS_MATCHES)}, got {match!r}")
    mapping: dict[str, str] = {}
    ambiguous: set[str] = set()
    for member in members:
        if str(member.get("status", "Active")) == "Deleted" or not member.get("user_id"):
            continue
        value = member.get(match)
        if not value:
            continue
        key = student_key(str(value))
        if key in mapping and mapping[key] != str(member["user_id"]):
            ambiguous.add(key)
        mapping[key] = str(member["user_id"])
    return {k: v for k, v in mapping.items() if k not in ambiguous}
