"""`autograder verify OUT`: every score in OUT still matches its signature, in all three places.

A grade is written three times (OUT/<student>/results.json, a row of OUT/grades.csv, rows of
OUT/gradebook.sqlite); each carries the signature of what it says. A score edited by hand, a
row copied from another student, or a grade from before signing shows up here by place and name.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grading.results import result_from_dict
from autograder.output import signing
from autograder.output.gradebook import Gradebook, find_gradebook
from autograder.output.reports import PROVENANCE_COLUMNS
from autograder.output.spreadsheet import original_cell
from autograder.submissions.students import safe_name

NOT_TASKS = {"student", "variant", "submitted_at", "late_penalty", "total", "max", *PROVENANCE_COLUMNS}


@dataclass(frozen=True)
class Problem:
    place: str  # the file (and row) that does not verify
    student: str
    detail: str


@dataclass(frozen=True)
class VerifyReport:
    checked: int
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        return [f"{p.place}: {p.student}: {p.detail}" for p in self.problems]


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _check(key: bytes, place: str, assignment: str, student: str, total: Any, max_score: Any,
           tasks: dict[str, float], prov: dict[str, Any]) -> Problem | None:
    signature = str(prov.get("signature") or "")
    if not signature:
        return Problem(place, student, "not signed (graded before signing, or the signature was removed)")
    total_f, max_f = _float(total), _float(max_score)
    if total_f is None or max_f is None:
        return Problem(place, student, f"unreadable score {total!r} / {max_score!r}")
    text = signing.signed_text(assignment, student, total_f, max_f, tasks,
                               str(prov.get("submission_sha256", "")), str(prov.get("grader_digest", "")))
    if not signing.matches(key, text, signature):
        return Problem(place, student, f"the score {total_f:g}/{max_f:g} does not match its signature")
    return None


def verify_out(out: Path, key: bytes) -> VerifyReport:
    """Check OUT's gradebook rows (history too), results.json files and grades.csv rows."""
    problems: list[Problem] = []
    checked = 0
    book_path = find_gradebook(out)
    folder = out if out.is_dir() else out.parent
    assignments: dict[str, set[str]] = defaultdict(set)  # student -> assignments graded
    if book_path.is_file():
        book = Gradebook(book_path)
        try:
            rows = book.rows()
        finally:
            book.close()
        for row in rows:
            checked += 1
            assignments[row.student].add(row.assignment)
            place = f"{book_path.name} row {row.id}" + ("" if row.current else " (history)")
            try:
                result = result_from_dict(json.loads(row.result))
            except (ValueError, KeyError, TypeError) as exc:
                problems.append(Problem(place, row.student, f"unreadable result ({exc})"))
                continue
            prov = {"submission_sha256": row.submission_sha256, "grader_digest": row.grader_digest,
                    "signature": row.signature}
            tasks = {t.task: t.score for t in result.tasks}
            for total, what in ((row.score, "score column"), (result.score, "stored result")):
                found = _check(key, f"{place}, {what}", row.assignment, row.student, total, row.max_score,
                               tasks, prov)
                if found is not None:
                    problems.append(found)
                    break
    for path in sorted(folder.glob("*/results.json")):
        checked += 1
        problems += _results_json(key, path)
    grades = folder / "grades.csv"
    if grades.is_file():
        with grades.open(newline="", encoding="utf-8") as handle:
            for number, line in enumerate(csv.DictReader(handle), start=2):
                checked += 1
                problems += _grades_row(key, f"grades.csv line {number}", line, assignments)
    return VerifyReport(checked, tuple(problems))


def _results_json(key: bytes, path: Path) -> list[Problem]:
    place = path.parent.name + "/results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        extra = data["extra_data"]
        tasks: dict[str, float] = defaultdict(float)
        for test in data["tests"]:
            tasks[test["tags"][0]] += float(test["score"])
        student, assignment = str(extra["student"]), str(extra["assignment"])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        return [Problem(place, path.parent.name, f"unreadable ({exc})")]
    if safe_name(student) != path.parent.name:
        return [Problem(place, student, f"names student {student!r}, but lies in {path.parent.name}/")]
    found = _check(key, place, assignment, student, data.get("score"), extra.get("max_score"),
                   {k: round(v, 6) for k, v in tasks.items()}, dict(extra.get("provenance") or {}))
    return [found] if found else []


def _grades_row(key: bytes, place: str, row: dict[str, str],
                assignments: dict[str, set[str]]) -> list[Problem]:
    student = original_cell(row.get("student", ""))  # grades.csv makes formula-like ids inert
    tasks = {k: _float(v) or 0.0 for k, v in row.items() if k not in NOT_TASKS and k is not None}
    candidates = sorted(assignments.get(student, set())) or [""]
    found = None
    for assignment in candidates:
        found = _check(key, place, assignment, student, row.get("total"), row.get("max"), tasks, row)
        if found is None:
            return []
    return [found] if found else []
