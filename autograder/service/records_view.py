"""The instructor's records as the service writes and reads them: adjustments, extensions, release, regrades.

Every record goes through the ledger's API (ledger/records.py through `Gradebook.recording`), so
each is signed by its log entry like a grade; the service adds only who wrote it (the launch) and
when (the service's clock), on the inbox's connection under the inbox's lock. A regrade thread is
a student's messages (`student`, each about one upload) and the instructor's answers
(`instructor`, closing the thread or not, with the adjustment they made, if any): it is open while
a student's message is newer than the last answer that closed it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from autograder.ledger import records
from autograder.ledger.adjustments import Adjustment, in_force
from autograder.ledger.release import AT, HELD, NOW, Rules, moment
from autograder.service.inbox import Inbox, utc_now
from autograder.service.lti_launch import Launch
from autograder.service.settings import Clock

STUDENT, INSTRUCTOR = "student", "instructor"
MAX_TEXT = 4000  # characters of a message or a reason: a page, not a file


@dataclass(frozen=True)
class Message:
    """One message of a regrade thread."""

    id: int
    student: str
    role: str  # student | instructor
    author: str
    text: str
    upload: int | None  # the upload a student's request is about
    closes: bool  # an answer that closes the thread
    adjustment: int | None  # the adjustment an answer made
    made_at: str

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Message:
        upload, adjustment = row.get("upload"), row.get("adjustment")
        return cls(int(row["id"]), str(row["student"]), str(row["role"]), str(row["author"]),
                   str(row["text"]),
                   int(upload) if upload is not None else None, bool(row["closes"]),
                   int(adjustment) if adjustment is not None else None, str(row["made_at"]))


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


def is_open(thread: list[Message]) -> bool:
    """Whether a student's message waits for an answer that closes the thread."""
    closed = max((m.id for m in thread if m.role == INSTRUCTOR and m.closes), default=0)
    return any(m.role == STUDENT and m.id > closed for m in thread)


class Records:
    """The ledger's records of the service's gradebook, written and read under the inbox's lock."""

    def __init__(self, inbox: Inbox, clock: Clock):
        self.inbox = inbox
        self.book = inbox.book
        self.clock = clock

    def _now(self) -> str:
        return utc_now(self.clock.now())

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
            return [Message.of(r) for r in self.book.records(records.REGRADE_MESSAGE, assignment, student)]

    def threads(self, assignment: str) -> dict[str, list[Message]]:
        """student -> their thread, for every student who wrote or was written to."""
        with self.inbox.lock:
            found = self.book.records(records.REGRADE_MESSAGE, assignment)
        threads: dict[str, list[Message]] = {}
        for row in found:
            message = Message.of(row)
            threads.setdefault(message.student, []).append(message)
        return threads

    def open_requests(self, assignment: str) -> list[str]:
        """The students whose regrade request waits for an answer, in order of the oldest waiting."""
        waiting = [(min(m.id for m in thread if m.role == STUDENT), student)
                   for student, thread in self.threads(assignment).items() if is_open(thread)]
        return [student for _, student in sorted(waiting)]

    # -- writing -------------------------------------------------------------------------------
    def adjust(self, assignment: str, student: str, scope: Scope, points: float, reason: str,
               author: str) -> int:
        """Record an adjustment (0 points undoes the one in force of that scope); its id."""
        with self.inbox.lock, self.book.recording() as add:
            values = self._adjustment(assignment, student, scope, points, reason, author)
            return add(records.ADJUSTMENT, values)

    def _adjustment(self, assignment: str, student: str, scope: Scope, points: float, reason: str,
                    author: str, request: int | None = None) -> dict[str, Any]:
        return {"assignment": assignment, "student": student, "task": scope.task, "check_id": scope.check_id,
                "points": float(points), "reason": reason, "author": author, "made_at": self._now(),
                "request": request}

    def extend(self, assignment: str, student: str, deadline: datetime | None, exempt: bool, reason: str,
               author: str) -> int:
        """Record a student's extension (no deadline and no exemption withdraws theirs); its id."""
        values = {"assignment": assignment, "student": student,
                  "deadline": deadline.isoformat() if deadline is not None else "", "exempt": int(exempt),
                  "reason": reason, "author": author, "made_at": self._now()}
        with self.inbox.lock, self.book.recording() as add:
            return add(records.EXTENSION, values)

    def release(self, assignment: str, mode: str, at: datetime | None, author: str) -> int:
        """Record the assignment's release: held (until the button), at a moment, or now; its id."""
        if mode not in (HELD, AT, NOW) or (mode == AT) != (at is not None):
            raise ValueError(f"a release is held, now, or at a moment: not {mode!r} at {at!r}")
        values = {"assignment": assignment, "mode": mode, "release_at": at.isoformat() if at else "",
                  "author": author, "made_at": self._now()}
        with self.inbox.lock, self.book.recording() as add:
            return add(records.RELEASE, values)

    def ask(self, assignment: str, student: str, text: str, upload: int) -> int:
        """A student's regrade request about one of their uploads; its id."""
        values = {"assignment": assignment, "student": student, "role": STUDENT, "author": student,
                  "text": text, "upload": upload, "closes": 0, "adjustment": None, "made_at": self._now()}
        with self.inbox.lock, self.book.recording() as add:
            return add(records.REGRADE_MESSAGE, values)

    def answer(self, assignment: str, student: str, text: str, author: str, closes: bool,
               change: tuple[Scope, float] | None = None) -> tuple[int, int | None]:
        """The instructor's answer to a student's thread, with the adjustment it makes (its reason is
        the answer's text) in the same transaction: (message id, adjustment id or None)."""
        thread = self.thread(assignment, student)
        asked = max((m.id for m in thread if m.role == STUDENT), default=None)
        with self.inbox.lock, self.book.recording() as add:
            made = None
            if change is not None:
                values = self._adjustment(assignment, student, change[0], change[1], text, author, asked)
                made = add(records.ADJUSTMENT, values)
            values = {"assignment": assignment, "student": student, "role": INSTRUCTOR, "author": author,
                      "text": text, "upload": None, "closes": int(closes), "adjustment": made,
                      "made_at": self._now()}
            return add(records.REGRADE_MESSAGE, values), made


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
