"""What a grader check is, and how a check says that a student's code is wrong."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

CheckFunction = Callable[..., None]
POINTS_ATTR = "__autograder_points__"
# The instructor's random key, under graders/: what every hidden challenge input is drawn from
# (autograder/grading/challenge.py). `hidden/` never reaches students; `autograder new` writes one.
CHALLENGE_KEY = "hidden/challenge.key"


class TaskSession(Protocol):
    """The grader's handle on one task's sandboxed worker."""

    task: str

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        """Run probe `probe` on the student's module with these inputs; return its observation."""
        ...


class CheckFailed(AssertionError):
    """A check saw wrong behaviour; `key` names a message in the assignment's catalogue."""

    def __init__(self, key: str, params: dict[str, Any]):
        super().__init__(key)
        self.key = key
        self.params = params


class StudentCodeError(Exception):
    """The student's code raised while a probe ran it."""

    def __init__(self, probe: str, type_name: str, message: str, where: str = ""):
        super().__init__(f"{type_name}: {message}")
        self.probe = probe
        self.type_name = type_name
        self.message = message
        self.where = where


class WorkerLost(Exception):
    """The task's worker is gone (time, memory or output limit, crash, exit); the task is over."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason = reason  # a message key in the engine's catalogue
        self.detail = detail


def points(value: float) -> Callable[[CheckFunction], CheckFunction]:
    """Mark a function as a graded check worth `value` points."""

    def mark(fn: CheckFunction) -> CheckFunction:
        setattr(fn, POINTS_ATTR, float(value))
        return fn

    return mark


def fail(key: str, **params: Any) -> NoReturn:
    """Fail the running check with catalogue message `key`, filled with `params`."""
    raise CheckFailed(key, params)


# The notes of the running check (grading/judge.py sets the list): (message key, params).
NOTES: contextvars.ContextVar[list[tuple[str, dict[str, Any]]] | None] = contextvars.ContextVar(
    "autograder_check_notes", default=None)


def note(key: str, **params: Any) -> None:
    """Add catalogue message `key` to the running check's feedback without failing it: what the check
    saw that another check charges (one mistake, one charge). A failing check shows only its failure."""
    notes = NOTES.get()
    if notes is not None:
        notes.append((key, params))


@dataclass(frozen=True)
class Check:
    """One graded check of one task."""

    task: str
    name: str
    title: str
    points: float
    public: bool
    function: CheckFunction = field(compare=False, repr=False)

    @property
    def id(self) -> str:
        return f"{self.task}.{self.name}"
