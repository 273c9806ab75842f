"""The instructor's records as the service's pages write and read them: adjustments, extensions, regrades.

Every act goes through the ledger's API (ledger/instructor.py, ledger/regrades.py), which checks it
and records it signed by its log entry like a grade; the service adds only who wrote it (the
launch), when (the service's clock), and the inbox's lock around the gradebook's connection that
its request threads share. An act the ledger refuses raises InstructorError before anything is
written: the page says so in its own words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from autograder.config import Assignment
from autograder.ledger import instructor, records, regrades
from autograder.ledger.adjustments import Adjustment, in_force
from autograder.ledger.inbox import Inbox
from autograder.ledger.instructor import ExtensionAsked, InstructorError
from autograder.ledger.regrades import Message
from autograder.ledger.release import AT, HELD, Rules, moment
from autograder.service.lti_launch import Launch
from autograder.service.settings import Clock

MAX_TEXT = regrades.TEXT_LIMIT  # characters of a message or a reason: a page, not a file

__all__ = ["MAX_TEXT", "InstructorError", "Message", "Records", "Scope", "author_of"]


@dataclass(frozen=True)
class Scope:
    """What an adjustment applies to: a check (of a task), a task, or the total (both empty)."""

    task: str = ""
    check_id: str = ""


def author_of(who: Launch) -> str:
    """Who wrote a record, as the launch names them: their name and their LTI user id (sub)."""
    if who.name and who.name != who.user_id:
        return f"{who.name} ({who.user_id})"
    return who.user_id or who.student


class Records:
    """The ledger's records of the service's gradebook, written and read under the inbox's lock."""

    def __init__(self, inbox: Inbox, clock: Clock):
        self.inbox = inbox
        self.book = inbox.book
        self.clock = clock

    # -- reading -------------------------------------------------------------------------------
    def rules(self, assignment: str) -> Rules:
        with self.inbox.lock:
            return Rules.of(self.book, assignment)

    def adjustments(self, assignment: str, student: str) -> list[Adjustment]:
        """Every adjustment of the student, oldest first (the ones in force and the history)."""
        with self.inbox.lock:
            return self.book.adjustments(assignment, student)

    def in_force(self, assignment: str, student: str) -> list[Adjustment]:
        return in_force(self.adjustments(assignment, student))

    def extensions(self, assignment: str, student: str) -> list[dict[str, Any]]:
        """The student's extension records, oldest first (the newest is in force, unless it withdraws)."""
        with self.inbox.lock:
            return self.book.records(records.EXTENSION, assignment, student)

    def thread(self, assignment: str, student: str) -> list[Message]:
        with self.inbox.lock:
            return regrades.thread(self.book, assignment, student)

    def is_open(self, assignment: str, student: str) -> bool:
        """Whether the student's regrade request waits for an answer that closes it."""
        with self.inbox.lock:
            return regrades.open_request(self.book, assignment, student) is not None

    def open_requests(self, assignment: str) -> list[str]:
        """The students whose regrade request waits for an answer, the oldest request first."""
        with self.inbox.lock:
            return [r.student for r in regrades.open_requests(self.book, assignment)]

    # -- writing -------------------------------------------------------------------------------
    def adjust(self, target: Assignment, student: str, scope: Scope, points: float, reason: str,
               author: str) -> int:
        """Record an adjustment (0 points undoes the one in force of that scope); its id."""
        with self.inbox.lock:
            made = instructor.adjust(self.book, target, student, points, reason, author, task=scope.task,
                                     check_id=scope.check_id, now=self.clock.now())
        return made.adjustment.id

    def extend(self, target: Assignment, student: str, deadline: datetime | None, exempt: bool, reason: str,
               author: str) -> int:
        """Record a student's extension (no deadline and no exemption withdraws theirs); its id."""
        with self.inbox.lock:
            [row] = instructor.extend(self.book, target, [ExtensionAsked(student, deadline, exempt, reason)],
                                      author, now=self.clock.now())
        return row

    def release(self, assignment: str, mode: str, at: datetime | None, author: str) -> None:
        """Record the assignment's release: held (until the button), at a moment, or now."""
        with self.inbox.lock:
            instructor.release(self.book, assignment, mode, author, at, now=self.clock.now())

    def ask(self, assignment: str, student: str, text: str, upload: int) -> int:
        """A student's regrade request about one of their uploads; its id."""
        with self.inbox.lock:
            return regrades.ask(self.book, assignment, student, text, upload, now=self.clock.now()).id

    def answer(self, target: Assignment, student: str, text: str, author: str, closes: bool,
               change: tuple[Scope, float] | None = None) -> tuple[int, int | None]:
        """The instructor's answer to a student's thread, with the adjustment it makes (its reason is
        the answer's text): (message id, adjustment id or None)."""
        scope, points = change if change is not None else (Scope(), None)
        with self.inbox.lock:
            message, made = regrades.answer(self.book, target, student, text, author, points=points,
                                            task=scope.task, check_id=scope.check_id, closes=closes,
                                            now=self.clock.now())
        return message.id, made.adjustment.id if made is not None else None


def release_state(rules: Rules) -> tuple[str, datetime | None]:
    """The assignment's release as a text key of the pages and its moment: shown, held, held until."""
    if rules.hold.mode == HELD:
        return "release_state_held", None
    if rules.hold.mode == AT and rules.hold.at is not None:
        return "release_state_at", rules.hold.at
    return "release_state_now", None


def extension_text(row: Mapping[str, Any] | None) -> tuple[datetime | None, bool]:
    """(deadline, exempt) of an extension record; (None, False) for none or a withdrawal."""
    if row is None:
        return None, False
    return moment(str(row["deadline"] or "")), bool(row["exempt"])
