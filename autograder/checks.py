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


@dataclass(frozen=True)
class StoppedAt:
    """Where the student's code was when its process was stopped: the innermost frame in their files.

    The stopped process said so (it is the student's process): a display string, never evidence."""

    file: str
    line: int
    function: str
    code: str

    @staticmethod
    def from_plain(value: Any) -> StoppedAt | None:
        """From untrusted plain data: every part a one-line, capped text without backticks, or None."""
        if type(value) is not dict:
            return None
        file, line, function, code = (value.get(k) for k in ("file", "line", "function", "code"))
        if not (type(file) is type(function) is type(code) is str and type(line) is int):
            return None
        if not file.strip() or line <= 0:
            return None
        return StoppedAt(_display(file, 120), min(line, 10**9), _display(function, 120), _display(code, 160))

    @property
    def place(self) -> str:
        return f"{self.file}:{self.line}"


def _display(text: str, limit: int) -> str:
    """One line of untrusted text for feedback: no control characters or backticks, at most `limit` long."""
    text = "".join(" " if (ch < " " or ch == "\x7f") else ch for ch in text).replace("`", "'").strip()
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates become "?"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class WorkerLost(Exception):
    """A call's process is gone (time, memory or output limit, crash, exit): that call is lost.

    `call`: how the check that made the call names it (`train_tinynet(model, X, y)`); `stopped_at`:
    where the student's code was when it was stopped for its time."""

    def __init__(self, reason: str, detail: str = "", stopped_at: StoppedAt | None = None, call: str = ""):
        super().__init__(reason)
        self.reason = reason  # a message key in the engine's catalogue
        self.detail = detail  # for the kit's own logs: never shown to a student (it may be a probe's name)
        self.stopped_at = stopped_at
        self.call = call


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
