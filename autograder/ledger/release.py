"""What a student may see of a grade now: one rule for the service's pages, its passback and `publish lti`.

An assignment's release is the ledger's (its newest `release` record): shown at once (no record,
or `now`), held until the instructor releases it (`held`: the button), or held until a moment
(`at`; a student whose extension runs later waits for their own deadline). Then an exam's
deadline: before it (the student's own, with an extension) its self-check policy holds the grade
back: `check = "public"` shows the public checks only (their points, no late penalty: nothing is
late before the deadline), `check = "none"` only that the submission was graded. From the
deadline on, and for an assignment without one, the whole grade. The page renders `visible(...)`
and the LMS is sent exactly that (nothing while it is None, Pending while it is partial).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from autograder.config import Assignment
from autograder.exam.timing import Extension, extended
from autograder.grading.results import SubmissionResult
from autograder.ledger import records
from autograder.ledger.book import Gradebook

ALL, PUBLIC, NONE = "all", "public", "none"
HELD, AT, NOW = "held", "at", "now"  # an assignment's release records


@dataclass(frozen=True)
class Release:
    """How much of one student's grade of one assignment is visible at a moment."""

    level: str  # all | public | none
    until: datetime | None = None  # when everything becomes visible (None: it is, or the button decides)
    held: bool = False  # the instructor holds the assignment's grades (until `until`, or the button)

    @property
    def complete(self) -> bool:
        return self.level == ALL


@dataclass(frozen=True)
class Hold:
    """An assignment's release as its newest record says: held, at a moment, or now."""

    mode: str
    at: datetime | None = None
    record: int = 0  # the release record's id (0: none)


@dataclass(frozen=True)
class Rules:
    """What the ledger says of one assignment's release and of its students' extensions."""

    hold: Hold = field(default_factory=lambda: Hold(NOW))
    extensions: Mapping[str, Extension] = field(default_factory=dict)

    @classmethod
    def of(cls, book: Gradebook, assignment: str) -> Rules:
        return cls(hold_of(book, assignment), extensions_of(book, assignment))


def moment(text: str) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def hold_of(book: Gradebook, assignment: str) -> Hold:
    found = book.records(records.RELEASE, assignment)
    if not found:
        return Hold(NOW)
    last = found[-1]
    return Hold(str(last["mode"]), moment(str(last["release_at"])), int(last["id"]))


def extension_of(row: Mapping[str, Any]) -> Extension | None:
    """An extension record as the late policy reads it (None: the record withdraws one)."""
    deadline, exempt = moment(str(row["deadline"] or "")), bool(row["exempt"])
    return Extension(deadline, exempt) if deadline is not None or exempt else None


def extensions_of(book: Gradebook, assignment: str) -> dict[str, Extension]:
    """student -> their extension in force (the newest record of each student)."""
    newest: dict[str, Mapping[str, Any]] = {}
    for row in book.records(records.EXTENSION, assignment):
        newest[str(row["student"])] = row
    return {s: e for s, row in newest.items() if (e := extension_of(row)) is not None}


def release_of(assignment: Assignment, student: str, now: datetime | None = None,
               rules: Rules | None = None) -> Release:
    """What `student` may see of their grade of `assignment` at `now` (default: this moment)."""
    rules = rules or Rules()
    at = now or datetime.now(UTC)
    extension = rules.extensions.get(student)
    if rules.hold.mode == HELD:
        return Release(NONE, None, held=True)
    if rules.hold.mode == AT and rules.hold.at is not None:
        until = rules.hold.at
        if extension is not None and extension.deadline is not None and extension.deadline > until:
            until = extension.deadline
        if at < until:
            return Release(NONE, until, held=True)
    exam = extended(assignment.exam, extension) if assignment.exam is not None else None
    if exam is None or exam.deadline is None or at >= exam.deadline:
        return Release(ALL)
    return Release(PUBLIC if exam.check == "public" else NONE, exam.deadline)


def visible(result: SubmissionResult, release: Release) -> SubmissionResult | None:
    """`result` cut to what `release` shows: whole, its public checks only, or None (nothing)."""
    if release.level == ALL:
        return result
    if release.level == NONE:
        return None
    tasks = tuple(
        dataclasses.replace(task, checks=tuple(c for c in task.checks if c.public),
                            max_score=sum(c.max_score for c in task.checks if c.public), adjustment=0.0)
        for task in result.tasks
    )
    return dataclasses.replace(result, tasks=tasks, penalty=0.0, adjustment=0.0)


def next_change(assignment: Assignment, students: list[str], now: datetime,
                rules: Rules | None = None) -> datetime | None:
    """The first moment after `now` at which what one of `students` may see grows (None: never, or
    only when the instructor releases it)."""
    moments = [r.until for r in (release_of(assignment, s, now, rules) for s in students or [""])
               if r.until is not None and r.until > now]
    return min(moments, default=None)
