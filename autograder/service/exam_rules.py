"""The exam's rules on the service: when uploads are accepted, and what a student sees before the deadline.

The window (start, cutoff) decides whether an upload is accepted at all; the late policy is the
grading's own (exam/plan.py, with the time the inbox recorded). Before the deadline, the exam's
self-check policy applies to the feedback page: `check = "public"` shows the public checks only,
`check = "none"` shows nothing but that the submission was graded.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime

from autograder.config import Assignment
from autograder.exam.timing import fmt_time
from autograder.grading.results import SubmissionResult


@dataclass(frozen=True)
class Shown:
    """What the student may see of a grade now: the result (None: nothing yet) and a note."""

    result: SubmissionResult | None
    note_key: str = ""  # a key of the service texts, "" when the full result is shown
    deadline: str = ""


def refusal(assignment: Assignment, now: datetime | None = None) -> tuple[str, dict[str, str]] | None:
    """(text key, fields) when the exam's window does not accept an upload now, else None."""
    exam = assignment.exam
    if exam is None:
        return None
    moment = now or datetime.now(UTC)
    if exam.start is not None and moment < exam.start:
        return "not_open", {"start": fmt_time(exam.start, exam.tz)}
    if exam.cutoff is not None and moment > exam.cutoff:
        return "closed", {"cutoff": fmt_time(exam.cutoff, exam.tz)}
    return None


def shown(result: SubmissionResult, assignment: Assignment, now: datetime | None = None) -> Shown:
    """The grade as the self-check policy lets the student see it now."""
    exam = assignment.exam
    moment = now or datetime.now(UTC)
    if exam is None or exam.deadline is None or moment > exam.deadline:
        return Shown(result)
    deadline = fmt_time(exam.deadline, exam.tz)
    if exam.check == "none":
        return Shown(None, "hidden_until_deadline", deadline)
    tasks = tuple(
        dataclasses.replace(task, checks=tuple(c for c in task.checks if c.public),
                            max_score=sum(c.max_score for c in task.checks if c.public))
        for task in result.tasks
    )
    return Shown(dataclasses.replace(result, tasks=tasks, penalty=0.0), "public_only", deadline)
