"""The exam's window on the service: when uploads are accepted at all.

The window (start, cutoff) decides whether an upload is accepted; the late policy is the grading's
own (exam/plan.py, with the receipt time the inbox recorded); what a student may see of a grade
before the deadline is the release rule's (release.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

from autograder.config import Assignment


def refusal(assignment: Assignment, now: datetime | None = None) -> tuple[str, dict[str, datetime]] | None:
    """(text key, its moments) when the exam's window does not accept an upload now, else None."""
    exam = assignment.exam
    if exam is None:
        return None
    moment = now or datetime.now(UTC)
    if exam.start is not None and moment < exam.start:
        return "not_open", {"start": exam.start}
    if exam.cutoff is not None and moment > exam.cutoff:
        return "closed", {"cutoff": exam.cutoff}
    return None
