"""The instructor's acts on the ledger: adjust a grade, extend a student's deadline, release an assignment.

Each is checked before anything is written (the student has a grade, the task and the check exist,
a reason is given, a time has its offset) and then recorded as a signed record (records.py) in one
transaction. The CLI (`autograder adjust|extend|release`) and the service's pages call these; what
they change is read back by adjustments.py (the grade as it counts) and release.py (the rule).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from autograder.config import Assignment
from autograder.errors import LedgerError
from autograder.grading.results import SubmissionResult
from autograder.ledger import adjustments, records
from autograder.ledger.adjustments import Adjustment
from autograder.ledger.book import Gradebook
from autograder.ledger.release import AT, HELD, NOW, Hold, hold_of
from autograder.submissions.students import student_id


class InstructorError(LedgerError):
    """An instructor's act refused before anything was recorded (bad scope, time or CSV row)."""


def made_at(now: datetime | None = None) -> str:
    """When a record is made, as its row keeps it (UTC, ISO 8601, seconds)."""
    return (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")


def current_grade(book: Gradebook, assignment: str, student: str) -> SubmissionResult:
    """The student's current grading (as graded), or a refusal naming who has one."""
    who = student_id(student)
    results = book.current(assignment)
    for result in results:
        if result.student == who:
            return result
    known = ", ".join(sorted(r.student for r in results)[:10]) or "nobody yet"
    raise InstructorError(f"{student!r} has no grade of assignment {assignment!r} in {book.path} "
                          f"(graded: {known}): grade their submission first")


@dataclass(frozen=True)
class Adjusted:
    """An adjustment as recorded, and the grade as it counts with it."""

    adjustment: Adjustment
    standing: SubmissionResult

    @property
    def made(self) -> float:
        """The points it made after the range was applied (the asked ones are `adjustment.points`)."""
        for item in adjustments.applied(self.standing):
            if int(item["id"]) == self.adjustment.id:
                return float(item["made"])
        return 0.0


def adjust(book: Gradebook, target: Assignment, student: str, points: float, reason: str, author: str, *,
           task: str = "", check_id: str = "", request: int | None = None,
           now: datetime | None = None) -> Adjusted:
    """Record an adjustment of `student`'s grade of `target`: on a check (`check_id`, its task found
    when not given), a task (`task`) or the total (neither); 0 points undoes the scope's last one."""
    grade = current_grade(book, target.id, student)
    reason = reason.strip()
    if not reason:
        raise InstructorError("an adjustment needs a reason (the student reads it): pass --reason TEXT")
    if points != points or points in (float("inf"), float("-inf")):  # NaN or infinite
        raise InstructorError(f"{points!r} is not a number of points")
    if task:
        target.task(task)  # a ConfigError naming the assignment's tasks
        if task not in {t.task for t in grade.tasks}:
            raise InstructorError(f"the grade of {grade.student!r} has no task {task!r} (graded: "
                                  f"{', '.join(t.task for t in grade.tasks)})")
    if check_id:
        owners = [t.task for t in grade.tasks if (not task or t.task == task)
                  and any(c.check_id == check_id for c in t.checks)]
        if not owners:
            known = ", ".join(c.check_id for t in grade.tasks if not task or t.task == task for c in t.checks)
            raise InstructorError(f"the grade of {grade.student!r} has no check {check_id!r}"
                                  f"{f' in task {task!r}' if task else ''} (its checks: {known})")
        task = owners[0]
    values = {"assignment": target.id, "student": grade.student, "task": task, "check_id": check_id,
              "points": float(points), "reason": reason, "author": author or "instructor",
              "made_at": made_at(now), "request": request}
    with book.recording() as add:
        row = add(records.ADJUSTMENT, values)
    return Adjusted(Adjustment.of({"id": row, **values}), book.adjusted(grade))


# ----------------------------------------------------------------------------- extensions


@dataclass(frozen=True)
class ExtensionAsked:
    """One extension to record: a student's own deadline and/or exemption (neither: withdraw it)."""

    student: str
    until: datetime | None = None
    exempt: bool = False
    reason: str = ""


def parse_moment(text: str, tz: tzinfo | None, where: str) -> datetime:
    """An ISO 8601 moment; one without a UTC offset is in `tz` (refused when there is none)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InstructorError(f"{where}: {text!r} is not an ISO 8601 time: write it like "
                              "2025-12-20T23:59:00+06:00") from None
    if moment.tzinfo is None:
        if tz is None:
            raise InstructorError(f"{where}: {text!r} has no UTC offset and the assignment has no time "
                                  "zone: write it like 2025-12-20T23:59:00+06:00")
        moment = moment.replace(tzinfo=tz)
    return moment


def zone_of(target: Assignment) -> tzinfo | None:
    """The time zone a time without an offset is read in (an exam's or homework's late policy)."""
    return target.exam.tz if target.exam is not None else None


def extend(book: Gradebook, target: Assignment, asked: Sequence[ExtensionAsked], author: str,
           now: datetime | None = None) -> list[int]:
    """Record each extension (all of them, or none: one transaction); their row ids."""
    at = made_at(now)
    with book.recording() as add:
        return [add(records.EXTENSION, {
            "assignment": target.id, "student": student_id(item.student),
            "deadline": item.until.isoformat() if item.until is not None else "",
            "exempt": int(item.exempt), "reason": item.reason.strip(), "author": author or "instructor",
            "made_at": at}) for item in asked]


EXTENSION_COLUMNS = ("student", "until", "exempt", "reason")
_TRUE, _FALSE = {"1", "yes", "true", "y", "x"}, {"", "0", "no", "false", "n"}


def read_extensions(path: Path, target: Assignment) -> list[ExtensionAsked]:
    """The rows of an extensions CSV (columns student,until,exempt,reason); every bad row is refused,
    by file and line with its fix, before anything is recorded."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InstructorError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    if "student" not in header or not ({"until", "exempt"} & set(header)):
        raise InstructorError(f"{path}: line 1 must name the columns {','.join(EXTENSION_COLUMNS)} "
                              f"(found: {','.join(header) or 'nothing'})")
    reader.fieldnames = header
    found: list[ExtensionAsked] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(reader, start=2):
        where = f"{path}, line {line}"
        cells = {k: (v or "").strip() for k, v in row.items() if k is not None}
        student = cells.get("student", "")
        if not student:
            problems.append(f"{where}: no student: fill in the student column")
            continue
        exempt_text = cells.get("exempt", "").lower()
        if exempt_text not in _TRUE | _FALSE:
            problems.append(f"{where}: exempt is {cells.get('exempt')!r}: write yes or no "
                            "(or leave it empty)")
            continue
        until = None
        if cells.get("until"):
            try:
                until = parse_moment(cells["until"], zone_of(target), where)
            except InstructorError as exc:
                problems.append(str(exc))
                continue
        exempt = exempt_text in _TRUE
        if until is None and not exempt:
            problems.append(f"{where}: {student}: neither until nor exempt: give a new deadline in until, "
                            "or yes in exempt")
            continue
        key = student_id(student)
        if key in seen:
            problems.append(f"{where}: {student} is on line {seen[key]} too: keep one row per student")
            continue
        seen[key] = line
        found.append(ExtensionAsked(student, until, exempt, cells.get("reason", "")))
    if problems:
        raise InstructorError(f"{path}: nothing was recorded, {len(problems)} row(s) to fix:\n  "
                              + "\n  ".join(problems))
    if not found:
        raise InstructorError(f"{path}: no rows below its header: one row per student")
    return found


# ----------------------------------------------------------------------------- release


def release(book: Gradebook, assignment: str, mode: str, author: str, at: datetime | None = None,
            now: datetime | None = None) -> Hold:
    """Record an assignment's release: held (until the button), at a moment, or now; what is in force."""
    if mode not in (HELD, AT, NOW):
        raise InstructorError(f"a release is held, at or now, not {mode!r}")
    if (mode == AT) != (at is not None):
        raise InstructorError("a release at a moment needs that moment (and only that mode has one)")
    if at is not None and at.tzinfo is None:
        raise InstructorError(f"the release time {at.isoformat()} has no UTC offset")
    with book.recording() as add:
        add(records.RELEASE, {"assignment": assignment, "mode": mode,
                              "release_at": at.isoformat() if at is not None else "",
                              "author": author or "instructor", "made_at": made_at(now)})
    return hold_of(book, assignment)


def releases(book: Gradebook, assignment: str) -> list[dict[str, Any]]:
    """The assignment's release records, oldest first (the newest is in force)."""
    return book.records(records.RELEASE, assignment)
