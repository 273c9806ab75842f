"""`autograder verify OUT`: the ledger holds against its signed log, and every file against the ledger.

A grade is written three times (a row of OUT/gradebook.sqlite, OUT/<folder>/results.json, a row
of OUT/grades.csv). The ledger is checked first (ledger/audit.py: the chain, every row, every
current grade); then each results.json must carry a signature that holds over what it says (each
check's points) and be its student's current grade in the ledger, in that student's folder; and
each grades.csv row must show exactly its student's current grade. A score edited by hand, a row
copied from another student, a grade that is not current, or a grade from before signing shows
up here by place and student. Where the instructor adjusted a grade (ledger/adjustments.py), the
files show the adjusted score: each is held against the current grade with the adjustments the
signed log holds applied, and results.json against its signature over the graders' own points.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grading.results import SubmissionResult, result_from_dict
from autograder.ledger import adjustments, records, schema, signing
from autograder.ledger.adjustments import Adjustment
from autograder.ledger.audit import Audit, Problem, audit
from autograder.ledger.book import GRADEBOOK_FILE, Gradebook, GradebookRow, find_gradebook
from autograder.output import sealed
from autograder.output.reports import PROVENANCE_COLUMNS, grade_cells
from autograder.output.spreadsheet import original_cell
from autograder.submissions.students import folder_name, shown_name

__all__ = ["Problem", "VerifyReport", "verify_out"]
NOT_SIGNED = "not signed (graded before signing, or the signature was removed)"
Current = dict[tuple[str, str], GradebookRow]  # (assignment, student) -> the current row, by the signed log


@dataclass(frozen=True)
class VerifyReport:
    checked: int
    problems: tuple[Problem, ...]
    entries: int = 0  # of the ledger's signed log
    head: tuple[int, str] = (0, "")  # its last entry's number and hash
    key_id: str = ""
    files: int = 0  # of OUT's signed list (sealed.py)

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        # a name is printed with its control characters as codes (a bidi override reorders nothing)
        return [shown_name(f"{p.place}: {p.student}: {p.detail}" if p.student else f"{p.place}: {p.detail}")
                for p in self.problems]


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def verify_out(out: Path, key: bytes) -> VerifyReport:
    """Check OUT's ledger (log, rows, current grades), results.json files and grades.csv rows."""
    book_path = find_gradebook(out)
    folder = out if out.is_dir() else out.parent
    found = _ledger(book_path, key) if book_path.is_file() else None
    problems = list(found.problems) if found else []
    checked = found.rows if found else 0
    if found is not None and not found.usable:  # another key, or no log: nothing can be held to it
        return VerifyReport(checked, tuple(problems), found.entries, found.head, found.key_id)
    current = found.current if found else {}
    parsed = {row.id: _parsed(row) for row in current.values()}  # each stored result read once
    for row in current.values():
        problems += _row_signature(key, book_path.name, row, parsed[row.id])
    signed = [Adjustment.of(r) for r in (found.records.get(records.ADJUSTMENT.kind, []) if found else [])]
    standing = {row.id: _standing(parsed[row.id], signed) for row in current.values()}
    for path in sorted(folder.glob("*/results.json")):
        checked += 1
        problems += _results_json(key, path, current if found else None, standing)
    grades = folder / "grades.csv"
    if grades.is_file():
        with grades.open(newline="", encoding="utf-8") as handle:
            lines = list(csv.DictReader(handle))
        checked += len(lines)
        problems += _grades_csv(grades.name, lines, current if found else None, standing)
    # Every file the kit wrote, as it wrote it, and nothing else (a deleted results.json or grades.csv,
    # an edited feedback page or JUnit file, a file added by hand).
    listed: dict[str, str] | None = None
    if out.is_dir() or out.name == GRADEBOOK_FILE:
        problems += sealed.problems(folder, key, graded=_written(folder))
        listed, _ = sealed.read_list(folder, key)
    entries, head, kid = (found.entries, found.head, found.key_id) if found else (0, (0, ""), "")
    return VerifyReport(checked, tuple(problems), entries, head, kid, len(listed or {}))


def _written(folder: Path) -> bool:
    """True when `grade` wrote into `folder` (a service's data folder holds a ledger only)."""
    names = ("grades.csv", "report.html", "similarity.csv", "junit")
    return any((folder / name).exists() for name in names) or any(folder.glob("*/results.json")) \
        or any(folder.glob("*/feedback.*"))


def _ledger(path: Path, key: bytes) -> Audit:
    book = Gradebook(path, readonly=True)
    try:
        version = book.version
        if version < schema.LOG_VERSION:
            rows = book.rows()
            detail = (f"a gradebook from before the signed log (schema {version}): run `autograder grade` "
                      "once to upgrade it (it grades again, and signs, what was graded before)")
            return Audit(0, len(rows), (Problem(path.name, "", detail),) if rows else (), usable=not rows)
        return audit(book, key)
    finally:
        book.close()


def _parsed(row: GradebookRow) -> SubmissionResult | str:
    """The row's stored result, or why it cannot be read."""
    try:
        return result_from_dict(json.loads(row.result))
    except (ValueError, KeyError, TypeError) as exc:
        return f"unreadable result ({exc})"


def _standing(result: SubmissionResult | str, signed: list[Adjustment]) -> SubmissionResult | str:
    """The grade as it counts: the stored result with the adjustments the signed log holds."""
    return result if isinstance(result, str) else adjustments.adjusted(result, signed)


def _row_signature(key: bytes, place: str, row: GradebookRow,
                   result: SubmissionResult | str) -> list[Problem]:
    """A current row's stored result carries a signature that holds over its checks' points."""
    where = f"{place} row {row.id}"
    if isinstance(result, str):
        return [Problem(where, row.student, result)]
    text = signing.result_text(result, row.submission_sha256, row.grader_digest)
    if not row.signature:
        return [Problem(where, row.student, NOT_SIGNED)]
    if not signing.matches(key, text, row.signature):
        return [Problem(where, row.student, f"the stored result ({result.score:g}/{result.max_score:g}) does "
                                            "not match its signature")]
    return []


def _results_json(key: bytes, path: Path, current: Current | None,
                  standing: dict[int, SubmissionResult | str]) -> list[Problem]:
    place = path.parent.name + "/results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        extra = data["extra_data"]
        graded = [t for t in data["tests"] if "adjustment" not in (t.get("extra_data") or {})]
        checks = signing.check_points((str(t["extra_data"]["check_id"]), float(t["score"]),
                                       float(t["max_score"])) for t in graded)
        student, assignment = str(extra["student"]), str(extra["assignment"])
        prov = dict(extra.get("provenance") or {})
        adjusted = dict(extra.get("adjusted") or {})
        shown_total = _float(data.get("score"))
        if adjusted:
            data = {**data, "score": adjusted.get("graded_score")}
        shown_ids = [int(a["id"]) for a in adjusted.get("adjustments", [])]
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        return [Problem(place, path.parent.name, f"unreadable ({exc})")]
    if folder_name(student) != path.parent.name:
        return [Problem(place, student, f"names student {student!r}, whose folder is "
                                        f"{folder_name(student)}/, but lies in {path.parent.name}/")]
    signature = str(prov.get("signature") or "")
    if not signature:
        return [Problem(place, student, NOT_SIGNED)]
    total, most = _float(data.get("score")), _float(extra.get("max_score"))
    if total is None or most is None:
        unreadable = f"unreadable score {data.get('score')!r} / {extra.get('max_score')!r}"
        return [Problem(place, student, unreadable)]
    text = signing.grade_text(assignment, student, total, most, checks,
                              str(prov.get("submission_sha256", "")), str(prov.get("grader_digest", "")))
    if not signing.matches(key, text, signature):
        return [Problem(place, student, f"the score {total:g}/{most:g} (or a check's points) does not match "
                                        "its signature")]
    if current is None:
        return []
    row = current.get((assignment, student))
    if row is None:
        return [Problem(place, student, f"the ledger holds no current grade of {student} for {assignment}")]
    if row.signature != signature:
        return [Problem(place, student, f"not the student's current grade: the ledger's is row {row.id} "
                                        f"({row.score:g}/{row.max_score:g})")]
    expected = standing.get(row.id)
    if isinstance(expected, SubmissionResult):
        ids = [int(a["id"]) for a in adjustments.applied(expected)]
        if ids != shown_ids or shown_total is None or round(shown_total, 6) != round(expected.score, 6):
            return [Problem(place, student, f"shows {shown_total!r} with adjustment(s) "
                                            f"{shown_ids or 'none'}, but the signed ledger makes it "
                                            f"{expected.score:g} with adjustment(s) {ids or 'none'}")]
    return []


def _grades_csv(name: str, lines: list[dict[str, str]], current: Current | None,
                parsed: dict[int, SubmissionResult | str]) -> list[Problem]:
    """Each row shows its student's current grade exactly; each current student has one row."""
    if current is None:
        return [Problem(name, "", "no gradebook beside it to hold its rows against")] if lines else []
    by_student: dict[str, list[tuple[str, GradebookRow]]] = defaultdict(list)
    for (assignment, student), row in current.items():
        by_student[student].append((assignment, row))
    problems: list[Problem] = []
    shown: dict[str, set[str]] = defaultdict(set)  # assignment -> students with a row
    for number, line in enumerate(lines, start=2):
        place = f"{name} line {number}"
        # grades.csv makes formula-like ids and bidi controls inert
        student = original_cell(line.get("student") or "")
        candidates = by_student.get(student, [])
        if not candidates:
            problems.append(Problem(place, student, "the ledger holds no current grade of this student"))
            continue
        differences = [(assignment, _differences(line, row, parsed[row.id]))
                       for assignment, row in candidates]
        assignment, differ = min(differences, key=lambda d: len(d[1]))
        if differ:
            problems.append(Problem(place, student, "does not show the student's current grade: "
                                    + "; ".join(differ)))
        elif student in shown[assignment]:
            problems.append(Problem(place, student, "a second row of this student"))
        shown[assignment].add(student)
    for assignment, students in shown.items():
        for (of, student), _ in sorted(current.items()):
            if of == assignment and student not in students:
                problems.append(Problem(name, student, "no row for this student, whose current grade "
                                                            "the ledger holds"))
    return problems


def _differences(line: dict[str, str], row: GradebookRow, result: SubmissionResult | str) -> list[str]:
    if isinstance(result, str):
        return [f"the ledger's row {row.id} is unreadable"]
    cells = grade_cells(result)
    cells.update({column: str(getattr(row, column)) for column in PROVENANCE_COLUMNS})
    found = []
    for column, value in line.items():
        if column is None or column == "student":
            continue
        expected = cells.get(column, "0")  # a task the result does not hold scored 0
        if (value or "") != expected:
            found.append(f"{column} is {value!r}, the ledger's {expected!r}")
    return found
