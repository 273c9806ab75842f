"""Grade one submission: collect its files, run each task's checks against a warm worker, judge.

A `Grader` holds one assignment's graders and one warm worker; `grade` never raises for anything
the student did. How a whole submission is scored is a `Plan`: the plain one adds the tasks up;
an exam's (autograder.exam.plan) grades against the student's variant and applies the late policy.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from autograder.config import Assignment, Kit, TaskConfig
from autograder.grading import judge
from autograder.grading.course import Graders, load_graders, validate_points
from autograder.grading.options import DEFAULT_OPTIONS, GradeOptions
from autograder.grading.results import CheckResult, SubmissionResult, TaskResult
from autograder.grading.task_runs import TaskRuns
from autograder.probe_calls import student_paths
from autograder.sandbox.client import WorkerProcess
from autograder.sandbox.launch import Launch, bare_launch, bwrap_launch
from autograder.sandbox.session import SandboxSession
from autograder.submissions.collect import collect
from autograder.submissions.files import Collected
from autograder.submissions.introspection import review_flags
from autograder.submissions.students import student_name

# Called while a task's worker is still open, after its checks ran: a plan's own further look.
Inspect = Callable[[TaskRuns, tuple[Any, ...], tuple[CheckResult, ...]], None]


class Plan(Protocol):
    """How a submission's tasks are graded and scored (the exam's plan is one)."""

    def prepare(self, graders: Graders) -> None:
        """Check what the plan needs against the loaded graders, before anything is graded."""

    def grade(self, grader: Grader, path: Path, name: str, submission: Collected) -> SubmissionResult:
        """The submission's result."""

    def context(self, path: Path, name: str) -> str:
        """What else than the files a grade under this plan depends on (part of the grading's key)."""


@dataclasses.dataclass(frozen=True)
class PlainPlan:
    """Every task against the assignment's own graders (or only `tasks`, when given); the score is
    the sum of the tasks graded."""

    tasks: frozenset[str] | None = None

    def prepare(self, graders: Graders) -> None:
        return None

    def context(self, path: Path, name: str) -> str:
        # A restricted grade is a different grade: its key must not match the full one's.
        return "" if self.tasks is None else "only " + ",".join(sorted(self.tasks))

    def grade(self, grader: Grader, path: Path, name: str, submission: Collected) -> SubmissionResult:
        tasks = tuple(grader.grade_task(task, submission) for task in grader.assignment.tasks
                      if self.tasks is None or task.id in self.tasks)
        return SubmissionResult(name, grader.assignment.id, tasks, submission.notes, 0.0, submission.problem)


def worker_launch(kit: Kit, slot: int, sandbox: bool) -> Launch:
    """How the worker of job slot `slot` starts: sandboxed as the slot's own uid, or bare."""
    return bwrap_launch(slot, kit.sandbox.uid_base) if sandbox else bare_launch()


class Grader:
    """Grades submissions of one assignment with one warm worker (start once, reuse)."""

    def __init__(
        self,
        kit: Kit,
        assignment: str | None = None,
        options: GradeOptions = DEFAULT_OPTIONS,
        *,
        plan: Plan | None = None,
        worker: WorkerProcess | None = None,
        slot: int = 0,
    ):
        """`worker`: one already spawned for this grader, which stays the caller's to stop (else
        one is spawned here, and `close` stops it). `plan`: how submissions are scored (default:
        the tasks added up; a self-check never takes an exam's plan)."""
        self.kit = kit
        self.options = options
        self.assignment: Assignment = kit.assignment(assignment)
        self.owns_worker = worker is None
        if worker is None:
            # Spawned first: the worker imports torch while this process loads the graders.
            worker = WorkerProcess(worker_launch(kit, slot, options.sandbox))
            worker.spawn()
        self.worker = worker
        try:
            self.lang = options.language(kit.language)
            self.graders: Graders = load_graders(self.assignment, options.graders_folder, self.lang)
            validate_points(self.graders, complete=not options.public_only)
            self.given = self._given_files(options.graders_folder)
            self.plan: Plan = plan if plan is not None and not options.public_only else PlainPlan()
            self.plan.prepare(self.graders)
        except BaseException:
            if self.owns_worker:
                worker.stop(graceful=False)
            raise

    def _given_files(self, graders_folder: Path | None) -> dict[str, bytes]:
        """The kit's copy of each given file (a student's exam folder keeps it beside its checks)."""
        given = {}
        for name in self.assignment.given:
            path = self.assignment.solutions / name
            beside = Path(graders_folder).parent / name if graders_folder is not None else None
            if not path.is_file() and beside is not None and beside.is_file():
                path = beside
            given[name] = path.read_bytes()
        return given

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.owns_worker:
            self.worker.stop()

    def grade(self, path: Path, student: str | None = None, plan: Plan | None = None,
              collected: Collected | None = None) -> SubmissionResult:
        """Grade one submission (folder, zip or notebook); never raises for anything the student did.

        `plan` replaces the grader's own for this submission (checked against its graders first);
        `collected`: the submission's files as already read (else they are read here)."""
        started = time.monotonic()
        if plan is not None and not self.options.public_only:
            plan.prepare(self.graders)
        else:
            plan = self.plan
        name = student or student_name(path)
        submission = collected or collect(path, self.assignment.given, self.assignment)
        try:
            result = plan.grade(self, path, name, submission)
        finally:
            self.worker.end_submission()
        return dataclasses.replace(result, execution_time=time.monotonic() - started,
                                   review=review_flags(submission.files))

    def grade_task(
        self, task: TaskConfig, submission: Collected, graders: Graders | None = None,
        inspect: Inspect | None = None,
    ) -> TaskResult:
        """One task's result; `inspect` looks further while the task's worker is still open."""
        started = time.monotonic()
        graders = graders or self.graders
        checks = graders.for_task(task.id)
        if self.options.public_only:
            checks = tuple(c for c in checks if c.public)
        max_score = sum(c.points for c in checks)
        if task.file not in submission.files:
            key = "engine.missing_file"
            feedback = judge.render(graders, key, {"file": task.file, "module": task.module})
            return TaskResult(task.id, max_score, judge.failed_all(checks, key, feedback))
        files = {**submission.files, **self.given}

        def start(budget: float, counter: int) -> SandboxSession:
            run = SandboxSession(self.worker, task, budget, counter)
            run.open(files, graders.probes_source)
            return run

        first = start(float(task.time_limit), 0)
        opened = first.opened
        assert opened is not None
        session = TaskRuns(task.id, task.time_limit, first, start)
        if first.lost is not None:
            first.lost.call = first.lost.call or f"import {task.module}"
            key, feedback = judge.lost_feedback(graders, task, first.lost)
            results = judge.failed_all(checks, key, feedback)
        elif not opened.imported:
            err = opened.error
            where = f" (`{err['where']}`)" if err.get("where") else ""  # the same in every language
            params = {"file": task.file, "module": task.module, "type": err.get("type", "Error"),
                      "message": err.get("message", ""), "where": where}
            feedback = judge.render(graders, "engine.import_error", params)
            results = judge.failed_all(checks, "engine.import_error", feedback)
        else:
            results = tuple(judge.run_check(c, session, graders, task) for c in checks)
            if inspect is not None:
                inspect(session, checks, results)
        output = student_paths(session.close())
        return TaskResult(task.id, max_score, results, (), output, time.monotonic() - started)
