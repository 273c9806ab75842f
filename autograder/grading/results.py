"""What grading produces: frozen results per check, task and submission."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check."""

    check_id: str
    task: str
    name: str
    title: str
    score: float
    max_score: float
    public: bool
    feedback: str = ""
    message_key: str = ""  # catalogue key of the failure: what the class report counts
    seconds: float = field(default=0.0, compare=False)  # wall time of the check (JUnit's testcase time)

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


@dataclass(frozen=True)
class TaskResult:
    """All checks of one task, and notes about the task as a whole."""

    task: str
    max_score: float
    checks: tuple[CheckResult, ...]
    notes: tuple[str, ...] = ()
    output: str = ""
    seconds: float = field(default=0.0, compare=False)  # wall time of the task: import and every check
    adjustment: float = 0.0  # points an instructor gave the task as a whole (ledger/adjustments.py)

    @property
    def score(self) -> float:
        return round(sum(c.score for c in self.checks) + self.adjustment, 6)


@dataclass(frozen=True)
class SubmissionResult:
    """One student's graded submission."""

    student: str
    assignment: str
    tasks: tuple[TaskResult, ...]
    notes: tuple[str, ...] = ()
    execution_time: float = field(default=0.0, compare=False)
    problem: str = ""  # why nothing could be graded (broken zip, empty folder), if so
    penalty: float = 0.0  # points taken off the checks' total (a late submission to an exam)
    exam: dict[str, Any] = field(default_factory=dict, hash=False)  # variant, time, lateness (exams)
    # Lines that introspect the interpreter (file:line: what), for the instructor's review only.
    review: tuple[str, ...] = ()
    # What the grade was computed from and its signature (grading/provenance.py); not part of the grade.
    provenance: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # Points an instructor gave on the total, after the penalty (ledger/adjustments.py); a grading's
    # own result never has one: adjustments are the ledger's, applied to whichever grade is current.
    adjustment: float = 0.0

    @property
    def raw_score(self) -> float:
        """What the checks gave, before any penalty."""
        return round(sum(t.score for t in self.tasks), 6)

    @property
    def score(self) -> float:
        base = round(max(0.0, self.raw_score - self.penalty), 6) if self.penalty else self.raw_score
        return round(base + self.adjustment, 6) if self.adjustment else base

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tasks)

    def task(self, task_id: str) -> TaskResult:
        for task in self.tasks:
            if task.task == task_id:
                return task
        raise KeyError(task_id)


def result_to_dict(result: SubmissionResult) -> dict[str, object]:
    """Plain data for storage (the gradebook) and for reloading."""
    from dataclasses import asdict

    data = asdict(result)
    data["score"] = result.score
    # an adjustment is written only where there is one: a grading's stored text stays what it was
    for part in (data, *data["tasks"]):
        if not part.get("adjustment"):
            part.pop("adjustment", None)
    return data


def result_from_dict(data: dict) -> SubmissionResult:  # type: ignore[type-arg]
    tasks = tuple(
        TaskResult(
            t["task"], t["max_score"], tuple(CheckResult(**c) for c in t["checks"]),
            tuple(t.get("notes", ())), t.get("output", ""), float(t.get("seconds", 0.0)),
            float(t.get("adjustment", 0.0)),
        )
        for t in data["tasks"]
    )
    return SubmissionResult(
        data["student"], data["assignment"], tasks, tuple(data.get("notes", ())),
        float(data.get("execution_time", 0.0)), str(data.get("problem", "")),
        float(data.get("penalty", 0.0)), dict(data.get("exam") or {}), tuple(data.get("review") or ()),
        dict(data.get("provenance") or {}), float(data.get("adjustment", 0.0)),
    )
