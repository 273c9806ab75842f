"""The exam's window on the service: when uploads are accepted at all.

The window (start, cutoff) decides whether an upload is accepted; the late policy is the grading's
own (exam/plan.py, with the receipt time the inbox recorded); what a student may see of a grade
before the deadline is the release rule's (release.py). A student's extension (the ledger's, issue
#28) moves their own window's end: their deadline, and the cutoff with it (none when exempt).
"""

from __future__ import annotations

from datetime import UTC, datetime

from autograder.config import Assignment
from autograder.exam.timing import Extension, extended
from autograder.ledger.inbox import Inbox
from autograder.ledger.release import extensions_of


def refusal(assignment: Assignment, now: datetime | None = None,
            extension: Extension | None = None) -> tuple[str, dict[str, datetime]] | None:
    """(text key, its moments) when the exam's window does not accept an upload now, else None."""
    if assignment.exam is None:
        return None
    exam = extended(assignment.exam, extension)
    moment = now or datetime.now(UTC)
    if exam.start is not None and moment < exam.start:
        return "not_open", {"start": exam.start}
    if exam.cutoff is not None and moment > exam.cutoff:
        return "closed", {"cutoff": exam.cutoff}
    return None


def refusal_for(assignment: Assignment, student: str, inbox: Inbox,
                now: datetime | None = None) -> tuple[str, dict[str, datetime]] | None:
    """`refusal` for one student, with their extension from the ledger."""
    if assignment.exam is None:
        return None
    with inbox.lock:
        extension = extensions_of(inbox.book, assignment.id).get(student)
    return refusal(assignment, now, extension)
