"""What a self-check found, as plain data: per task its status and its public checks' results."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from autograder.grading.results import CheckResult

# What a task's outcome is, beside "checked": how the one-line summaries tell them apart.
NOT_STARTED, NOT_DEFINED, MISSING, NO_IMPORT, STOPPED, ENDED, CHECKED = (
    "not_started", "not_defined", "missing", "no_import", "stopped", "ended", "checked")


@dataclass(frozen=True)
class TaskOutcome:
    """One task of a self-check: its public checks' results and what stopped them, if anything."""

    task: str
    file: str
    status: str
    max_score: float
    checks: tuple[CheckResult, ...] = ()
    detail: str = ""  # the import error, the names not defined, the time limit it was stopped at

    @property
    def score(self) -> float:
        return round(sum(c.score for c in self.checks), 6)

    @property
    def passed(self) -> bool:
        return self.status == CHECKED and all(c.passed for c in self.checks)


@dataclass(frozen=True)
class CheckReport:
    """A whole self-check: per task, in the manifest's order. Plain data (it crosses to a parent)."""

    assignment: str
    title: str
    lang: str
    tasks: tuple[TaskOutcome, ...] = ()
    off: bool = False  # an exam that turns the self-check off
    seconds: float = field(default=0.0, compare=False)
    labels: Mapping[str, str] = field(default_factory=dict, compare=False)  # ui labels, in lang
    built_with: str = ""  # the kit version the folder's checks/ was built with (its manifest's)
    folder: str = ""  # the student folder whose files were checked (found as git finds its root)

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tasks), 6)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.tasks), 6)

    @property
    def passed(self) -> bool:
        return all(t.passed for t in self.tasks)

    @property
    def exit_code(self) -> int:
        """0 when every public check passes (or the exam turns them off), 1 when some fail."""
        return 0 if self.off or self.passed else 1


def outcome_from_dict(data: Mapping[str, Any]) -> TaskOutcome:
    checks = tuple(CheckResult(**c) for c in data.get("checks", ()))
    return TaskOutcome(data["task"], data["file"], data["status"], float(data["max_score"]), checks,
                       str(data.get("detail", "")))


def outcome_to_dict(outcome: TaskOutcome) -> dict[str, Any]:
    return dataclasses.asdict(outcome)
