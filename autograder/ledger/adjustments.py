"""An instructor's adjustments: points given or taken, with a reason, on a check, a task or the total.

An adjustment is a record of the ledger (records.py), never a change to a grading: the graders'
result stays as it was signed, and the adjustments in force (the newest of each scope, unless it
is 0 points) are applied to whichever grading is the student's current grade, so they outlast a
regrade. Checks first, then tasks, then the total, each kept within its own range (a check within
0 and its points, a task within 0 and its points, the total within 0 and the maximum): the points
an adjustment asked for and the points it made are both kept. The student reads each one, with
its reason, as a note of their feedback (the engine catalogue's `note_adjusted_*`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from autograder.grading.results import CheckResult, SubmissionResult, TaskResult

ADJUSTED = "adjusted"  # the provenance key of a result with adjustments applied (never recorded)


@dataclass(frozen=True)
class Adjustment:
    """One adjustment as recorded: on a check (`check_id`), a task (`task` alone) or the total."""

    id: int
    assignment: str
    student: str
    task: str
    check_id: str
    points: float
    reason: str
    author: str
    made_at: str
    request: int | None = None  # the regrade message it answers

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Adjustment:
        request = row.get("request")
        return cls(int(row["id"]), str(row["assignment"]), str(row["student"]), str(row["task"] or ""),
                   str(row["check_id"] or ""), float(row["points"]), str(row["reason"]), str(row["author"]),
                   str(row["made_at"]), int(request) if request is not None else None)

    @property
    def scope(self) -> tuple[str, str]:
        return self.task, self.check_id

    @property
    def level(self) -> str:
        return "check" if self.check_id else "task" if self.task else "total"


def in_force(adjustments: Iterable[Adjustment]) -> list[Adjustment]:
    """The newest adjustment of each scope, unless it is 0 points (which undoes the ones before it)."""
    newest: dict[tuple[str, str, str, str], Adjustment] = {}
    for item in sorted(adjustments, key=lambda a: a.id):
        newest[(item.assignment, item.student, *item.scope)] = item
    return sorted((a for a in newest.values() if a.points), key=lambda a: a.id)


def signed_points(value: float) -> str:
    """+2, -1.5: how a note writes an adjustment's points."""
    return f"{value:+g}"


@lru_cache(maxsize=1)
def _notes() -> dict[str, str]:
    from autograder.grading.course import ENGINE_MESSAGES, load_messages

    ui = load_messages([ENGINE_MESSAGES], "en").get("ui", {})
    return {k: ui[k] for k in ("note_adjusted_total", "note_adjusted_task", "note_adjusted_check")}


def _within(value: float, low: float, high: float) -> float:
    return round(min(max(value, low), high), 6)


def adjusted(result: SubmissionResult, adjustments: Iterable[Adjustment]) -> SubmissionResult:
    """`result` with the adjustments in force for its student applied (the result itself without any)."""
    active = [a for a in in_force(adjustments)
              if (a.assignment, a.student) == (result.assignment, result.student)]
    if not active:
        return result
    tasks = list(result.tasks)
    made: dict[int, float] = {}
    for item in (a for a in active if a.level == "check"):
        made[item.id] = _on_check(tasks, item)
    for item in (a for a in active if a.level == "task"):
        made[item.id] = _on_task(tasks, item)
    shown = dataclasses.replace(result, tasks=tuple(tasks))
    total = 0.0
    for item in (a for a in active if a.level == "total"):
        base = round(shown.score + total, 6)
        made[item.id] = round(_within(base + item.points, 0.0, shown.max_score) - base, 6)
        total += made[item.id]
    notes = _notes()
    texts = []
    for item in active:
        fields = {"points": signed_points(item.points), "reason": item.reason, "task": item.task,
                  "check": item.check_id}
        texts.append(notes[f"note_adjusted_{item.level}"].format(**fields))
    record = {"graded_score": result.score, "adjustments": [
        {"id": a.id, "task": a.task, "check": a.check_id, "points": a.points, "made": made[a.id],
         "reason": a.reason, "author": a.author, "made_at": a.made_at} for a in active]}
    return dataclasses.replace(shown, adjustment=round(total, 6), notes=(*result.notes, *texts),
                               provenance={**result.provenance, ADJUSTED: record})


def _on_check(tasks: list[TaskResult], item: Adjustment) -> float:
    for t_index, task in enumerate(tasks):
        if item.task and task.task != item.task:
            continue
        for c_index, check in enumerate(task.checks):
            if check.check_id == item.check_id:
                score = _within(check.score + item.points, 0.0, check.max_score)
                checks: list[CheckResult] = list(task.checks)
                checks[c_index] = dataclasses.replace(check, score=score)
                tasks[t_index] = dataclasses.replace(task, checks=tuple(checks))
                return round(score - check.score, 6)
    return 0.0  # the check is not in this grading (its graders changed): nothing is applied


def _on_task(tasks: list[TaskResult], item: Adjustment) -> float:
    for t_index, task in enumerate(tasks):
        if task.task == item.task:
            score = _within(task.score + item.points, 0.0, task.max_score)
            made = round(score - task.score, 6)
            tasks[t_index] = dataclasses.replace(task, adjustment=round(task.adjustment + made, 6))
            return made
    return 0.0


def applied(result: SubmissionResult) -> list[dict[str, Any]]:
    """The adjustments a result shows (what `adjusted` applied), [] for a grading's own result."""
    return list((result.provenance.get(ADJUSTED) or {}).get("adjustments", []))


def graded_score(result: SubmissionResult) -> float:
    """The score the graders gave (before any adjustment)."""
    return float((result.provenance.get(ADJUSTED) or {}).get("graded_score", result.score))
