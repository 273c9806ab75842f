"""Grading an exam: each student against their own variant's numbers, with the late policy applied.

The plan a `Grader` is given for an exam assignment; it also looks for a task that implements
another student's variant (a swapped file) and reports it, never grading with those numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from autograder.checks import WorkerLost
from autograder.config import ExamConfig, Kit, TaskConfig
from autograder.exam import timing
from autograder.exam.variants import Variant, VariantSpace, canonical, load_secret, show, validate_space
from autograder.grading import judge
from autograder.grading.course import Graders, variant_params
from autograder.grading.grader import Grader
from autograder.grading.results import CheckResult, SubmissionResult
from autograder.grading.task_runs import TaskRuns
from autograder.submissions.files import Collected
from autograder.submissions.students import student_key


@dataclass(frozen=True)
class SwapFinding:
    """A task that implements another exam variant's numbers better than the student's own."""

    task: str
    found: dict[str, Any]  # knob -> the other variant's option the submission implements
    own: dict[str, Any]  # knob -> the student's own option
    own_score: float
    found_score: float
    max_score: float

    def as_data(self) -> dict[str, Any]:
        return {"task": self.task, "found": self.found, "own": self.own, "own_score": self.own_score,
                "found_score": self.found_score, "max_score": self.max_score}

    def note(self) -> str:
        found = ", ".join(f"{k} = {show(v)}" for k, v in self.found.items())
        own = ", ".join(f"{k} = {show(v)}" for k, v in self.own.items())
        return (f"{self.task}: this file implements the numbers of another student's exam version "
                f"({found}; yours: {own}). It was graded against your own numbers.")


@dataclass(frozen=True)
class ExamPlan:
    """An exam's grading: variants from `secret`, submission times from `times` (student key ->
    time) or else from the platform's metadata in each submission. `fixed`: grade against this
    variant instead of the one each student's id derives (an instructor's what-if)."""

    exam: ExamConfig
    space: VariantSpace
    secret: bytes | None = field(default=None, repr=False)
    times: Mapping[str, datetime] | None = None
    fixed: Variant | None = None
    extensions: Mapping[str, timing.Extension] | None = None  # student key -> their extension (#28)

    def exam_of(self, student: str) -> ExamConfig:
        """The exam as it stands for `student`: their extension's deadline or exemption applied."""
        found = (self.extensions or {}).get(student_key(student))
        return timing.extended(self.exam, found)

    def prepare(self, graders: Graders) -> None:
        if self.space.knobs:
            validate_space(self.space, graders.module("params"))

    def variant_of(self, student: str) -> Variant | None:
        """The student's exam variant (None when the exam has no variants)."""
        if not self.space.knobs:
            return None
        if self.fixed is not None:
            return self.fixed
        assert self.secret is not None
        return self.space.derive(self.secret, student)

    def graders_for(self, grader: Grader, variant: Variant | None) -> Graders:
        """The graders judging with a variant's numbers (the lesson's without one)."""
        if variant is None:
            return grader.graders
        where = f"grading.toml: assignments.{grader.assignment.id}.exam.variants"
        return grader.graders.with_params(
            variant_params(grader.graders.module("params"), variant.choices, where))

    def context(self, path: Path, name: str) -> str:
        """The variant and the submission's time: either changes the grade."""
        variant = self.variant_of(name)
        when = timing.submission_time(path, name, self.exam.tz, self.times)
        moment = when.moment.isoformat() if when.moment else ""
        found = (self.extensions or {}).get(student_key(name))
        extension = f"|{found.context()}" if found is not None else ""  # none: the key it always had
        return f"{variant.code if variant else ''}|{moment}|{when.source or when.problem}{extension}"

    def grade(self, grader: Grader, path: Path, name: str, submission: Collected) -> SubmissionResult:
        exam = self.exam_of(name)
        variant = self.variant_of(name)
        graders = self.graders_for(grader, variant)
        swaps: list[SwapFinding] = []
        tasks = []
        for task in grader.assignment.tasks:
            def inspect(session: TaskRuns, checks: tuple[Any, ...], results: tuple[CheckResult, ...],
                        task: TaskConfig = task) -> None:
                if variant is None or sum(r.score for r in results) >= sum(c.points for c in checks):
                    return
                found = self._swapped(grader, task, session, graders, variant, checks, results)
                if found is not None:
                    swaps.append(found)
            tasks.append(grader.grade_task(task, submission, graders, inspect))
        raw = round(sum(t.score for t in tasks), 6)
        when = timing.submission_time(path, name, exam.tz, self.times)
        late = timing.lateness(exam, when.moment)
        penalty = late.penalty(raw, sum(t.max_score for t in tasks), exam.late_penalty_of)
        notes = list(submission.notes) + [f.note() for f in swaps]
        late_text = timing.late_note(exam, when, late, penalty, raw)
        if late_text:
            notes.append(late_text)
        notes += _extension_notes((self.extensions or {}).get(student_key(name)), exam)
        info: dict[str, Any] = {
            "submitted_at": when.moment.astimezone(exam.tz).isoformat() if when.moment else None,
            "time_source": when.source or when.problem,
            "late": {"status": late.status, "seconds": late.seconds_late, "periods": late.periods,
                     "percent": late.percent, "penalty": penalty},
        }
        if variant is not None:
            info = {"variant": variant.code, "choices": variant.choices, **info,
                    "swapped": [f.as_data() for f in swaps]}
        return SubmissionResult(name, grader.assignment.id, tuple(tasks), tuple(notes), 0.0,
                                submission.problem, penalty, info)

    def _swapped(
        self, grader: Grader, task: TaskConfig, session: TaskRuns, graders: Graders,
        variant: Variant, checks: tuple[Any, ...], results: tuple[CheckResult, ...],
    ) -> SwapFinding | None:
        """Does this task implement another variant's numbers? Ask the task's observer what the
        submission's numbers are; if they are another option of the exam, grade the task again
        against those (the student's score stays their own variant's) and report it if it fits."""
        observer = graders.observers.get(task.id)
        if observer is None or session.lost is not None:
            return None
        try:
            observed = observer(session, graders.params)
        except WorkerLost:
            return None
        except Exception:  # noqa: BLE001  the student's code raised, or the observation is unusable
            return None
        changes: dict[str, int] = {}
        for knob, value in (observed or {}).items():
            if knob not in variant.choices:
                continue
            if canonical(value) == canonical(variant.choices[knob]):
                continue
            index = self.space.index_of(knob, value)
            if index is not None:
                changes[knob] = index
        if not changes:
            return None
        other = self.space.with_choice(variant, changes)
        again_graders = self.graders_for(grader, other)
        again = tuple(judge.run_check(c, session, again_graders, task) for c in checks)
        own_score, found_score = sum(r.score for r in results), sum(r.score for r in again)
        if found_score <= own_score:
            return None
        return SwapFinding(
            task.id, {k: other.choices[k] for k in changes}, {k: variant.choices[k] for k in changes},
            round(own_score, 6), round(found_score, 6), sum(c.points for c in checks),
        )


def _extension_notes(found: timing.Extension | None, exam: ExamConfig) -> list[str]:
    """What the student reads of their extension (the engine catalogue's note_extension/note_exempt)."""
    if found is None:
        return []
    from autograder.grading.course import ENGINE_MESSAGES, load_messages

    ui = load_messages([ENGINE_MESSAGES], "en").get("ui", {})
    notes = []
    if found.deadline is not None:
        notes.append(ui["note_extension"].format(deadline=timing.fmt_time(found.deadline, exam.tz)))
    if found.exempt:
        notes.append(ui["note_exempt"])
    return notes


def plan_for(kit: Kit, assignment: str | None, secret: bytes | None = None,
             times: Mapping[str, datetime] | None = None,
             extensions: Mapping[str, timing.Extension] | None = None) -> ExamPlan | None:
    """The exam plan of an exam assignment (None for any other); the secret, when the exam has
    variants and none is given, comes from the environment, refused before anything is graded.
    `extensions`: student key -> their extension (the ledger's), applied by the late policy."""
    target = kit.assignment(assignment)
    if target.exam is None:
        return None
    space = VariantSpace.of(target)
    if space.knobs and secret is None:
        secret = load_secret(kit_root=kit.root)
    return ExamPlan(target.exam, space, secret, times, extensions=extensions or None)
