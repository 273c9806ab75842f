"""Regrade requests as the ledger's records: a student asks with a message, the instructor answers.

A student's thread of an assignment is their `regrade_request` records in order (records.py): a
student's message (on one upload, or on the grade as a whole) opens a request when none is open,
or adds to the open one; an instructor's answer, with or without an adjustment (which names the
request it answers), closes it unless it says otherwise. Both sides read the same thread; the
instructor lists the open requests of an assignment. Every message is signed like a grade.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from autograder.config import Assignment
from autograder.ledger import instructor, records
from autograder.ledger.book import Gradebook
from autograder.submissions.students import student_id

STUDENT, INSTRUCTOR = "student", "instructor"
TEXT_LIMIT = 4000  # characters of one message


@dataclass(frozen=True)
class Message:
    """One message of a regrade thread, as recorded."""

    id: int
    assignment: str
    student: str
    role: str  # student | instructor
    author: str
    text: str
    upload: int | None  # the service's upload it is about (None: the grade as a whole)
    closes: bool  # an answer that closes the request
    adjustment: int | None  # the adjustment made with this answer
    made_at: str

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Message:
        def number(value: Any) -> int | None:
            return int(value) if value is not None else None

        return cls(int(row["id"]), str(row["assignment"]), str(row["student"]), str(row["role"]),
                   str(row["author"]), str(row["text"]), number(row["upload"]), bool(row["closes"]),
                   number(row["adjustment"]), str(row["made_at"]))


@dataclass(frozen=True)
class Request:
    """An open regrade request: the message that opened it and what the student added since."""

    opened: Message
    messages: tuple[Message, ...]

    @property
    def student(self) -> str:
        return self.opened.student


def thread(book: Gradebook, assignment: str, student: str) -> list[Message]:
    """Every message of `student`'s regrade thread of `assignment`, oldest first (both sides)."""
    return [Message.of(r) for r in book.records(records.REGRADE_MESSAGE, assignment, student_id(student))]


def _open_in(messages: list[Message]) -> Request | None:
    """The open request of one thread (None: every request was answered and closed)."""
    start: int | None = None
    for index, message in enumerate(messages):
        if message.role == STUDENT and start is None:
            start = index
        elif message.role == INSTRUCTOR and message.closes:
            start = None
    if start is None:
        return None
    return Request(messages[start], tuple(messages[start:]))


def open_request(book: Gradebook, assignment: str, student: str) -> Request | None:
    """`student`'s open request of `assignment`, if one is open."""
    return _open_in(thread(book, assignment, student))


def open_requests(book: Gradebook, assignment: str) -> list[Request]:
    """Every open request of the assignment, the oldest first (the order to answer them in)."""
    by_student: dict[str, list[Message]] = {}
    for row in book.records(records.REGRADE_MESSAGE, assignment):
        message = Message.of(row)
        by_student.setdefault(message.student, []).append(message)
    found = [r for messages in by_student.values() if (r := _open_in(messages)) is not None]
    return sorted(found, key=lambda r: r.opened.id)


def _text(text: str) -> str:
    text = text.strip()
    if not text:
        raise instructor.InstructorError("a regrade message needs its text")
    if len(text) > TEXT_LIMIT:
        raise instructor.InstructorError(f"a regrade message is at most {TEXT_LIMIT} characters "
                                         f"(this one has {len(text)})")
    return text


def ask(book: Gradebook, assignment: str, student: str, text: str, upload: int | None = None,
        now: datetime | None = None) -> Message:
    """A student's message: it opens a request (or adds to their open one); the student must have a
    grade to ask about."""
    grade = instructor.current_grade(book, assignment, student)
    values = {"assignment": assignment, "student": grade.student, "role": STUDENT, "author": grade.student,
              "text": _text(text), "upload": upload, "closes": 0, "adjustment": None,
              "made_at": instructor.made_at(now)}
    with book.recording() as add:
        row = add(records.REGRADE_MESSAGE, values)
    return Message.of({"id": row, **values})


def answer(book: Gradebook, target: Assignment, student: str, text: str, author: str, *,
           points: float | None = None, task: str = "", check_id: str = "", closes: bool = True,
           now: datetime | None = None) -> tuple[Message, instructor.Adjusted | None]:
    """The instructor's answer to `student`'s thread; with `points`, an adjustment (on `check_id`,
    `task` or the total) whose reason is the answer's text, recorded first and named by it."""
    who, clean = student_id(student), _text(text)  # refused before anything is recorded
    opened = open_request(book, target.id, who)
    made = None
    if points is not None:
        made = instructor.adjust(book, target, who, points, clean, author, task=task, check_id=check_id,
                                 request=opened.opened.id if opened is not None else None, now=now)
    else:
        instructor.current_grade(book, target.id, who)
    values = {"assignment": target.id, "student": who, "role": INSTRUCTOR, "author": author or "instructor",
              "text": clean, "upload": opened.opened.upload if opened is not None else None,
              "closes": int(closes), "adjustment": made.adjustment.id if made is not None else None,
              "made_at": instructor.made_at(now)}
    with book.recording() as add:
        row = add(records.REGRADE_MESSAGE, values)
    return Message.of({"id": row, **values}), made
