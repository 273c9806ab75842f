"""What a student may see of a grade now: the one rule both the student's page and the LMS passback follow.

Before an exam's deadline its self-check policy holds the grade back: `check = "public"` shows the
public checks only (their points, no late penalty: nothing is late before the deadline), `check =
"none"` shows nothing but that the submission was graded. From the deadline on, and for an
assignment without one at once, the whole grade is shown. The page renders `visible(...)` and the
passback sends exactly that (held back entirely when it is None, marked Pending while it is partial),
so the LMS never learns more than the student may see. `release_of` is the only place that decides;
release times and per-student extensions (issue #28) belong in it too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime

from autograder.config import Assignment
from autograder.grading.results import SubmissionResult

ALL, PUBLIC, NONE = "all", "public", "none"


@dataclass(frozen=True)
class Release:
    """How much of one student's grade of one assignment is visible at a moment."""

    level: str  # all | public | none
    until: datetime | None = None  # when everything becomes visible (None: it already is)

    @property
    def complete(self) -> bool:
        return self.level == ALL


def release_of(assignment: Assignment, student: str, now: datetime | None = None) -> Release:
    """What `student` may see of their grade of `assignment` at `now` (default: this moment)."""
    del student  # every student of an assignment shares its release until extensions exist (#28)
    exam = assignment.exam
    moment = now or datetime.now(UTC)
    if exam is None or exam.deadline is None or moment >= exam.deadline:
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
                            max_score=sum(c.max_score for c in task.checks if c.public))
        for task in result.tasks
    )
    return dataclasses.replace(result, tasks=tasks, penalty=0.0)


def next_change(assignment: Assignment, students: list[str], now: datetime) -> datetime | None:
    """The first moment after `now` at which what one of `students` may see grows (None: never)."""
    moments = [r.until for r in (release_of(assignment, s, now) for s in students or [""])
               if r.until is not None and r.until > now]
    return min(moments, default=None)
