"""The main flow for a class: submissions -> grading pool (sandboxed workers, judgement) -> files.

`grade_batch` lists a folder of submissions, grades those the gradebook lacks on a `GradingPool`
(its own, or one the caller keeps warm across batches) and writes each student's files as their
result arrives, then the class's: grades.csv, report.html, gradebook.sqlite.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from autograder.config import Kit
from autograder.exam.plan import plan_for
from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.grading.options import DEFAULT_OPTIONS, GradeOptions
from autograder.grading.pool import GradingPool
from autograder.grading.results import SubmissionResult
from autograder.output import reports
from autograder.output.gradebook import Gradebook
from autograder.sandbox import launch
from autograder.submissions.students import student_name


@dataclass(frozen=True)
class BatchSummary:
    """What a batch run did."""

    graded: int
    skipped: int
    seconds: float
    out: Path


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def list_submissions(folder: Path) -> list[Path]:
    """One entry per student: folders, zips and notebooks, in name order; hidden files skipped."""
    return sorted(
        p for p in folder.iterdir()
        if not p.name.startswith((".", "_")) and (p.is_dir() or p.suffix.lower() in (".zip", ".py", ".ipynb"))
    )


def grade_batch(
    kit: Kit,
    submissions: Path,
    out: Path,
    *,
    assignment: str | None = None,
    options: GradeOptions = DEFAULT_OPTIONS,
    jobs: int | None = None,
    gradebook: Path | None = None,
    regrade: bool = False,
    on_result: Callable[[SubmissionResult], None] | None = None,
    secret: bytes | None = None,
    times: Mapping[str, datetime] | None = None,
    pool: GradingPool | None = None,
) -> BatchSummary:
    """Grade every submission in a folder; resumable: students already graded are kept.

    An exam (an assignment with an [exam] table) is graded per student's variant with the
    instructor's `secret` (default: from the environment; refused before anything is graded
    when missing) and the late policy applied to each submission's time (`times`, student ->
    time, else the platform's metadata in the submission). `pool`: a started pool to grade on,
    which stays the caller's (else one is started for this batch, only if there is work).
    """
    started = time.monotonic()
    if pool is not None:
        options = pool.options  # the pool's graders speak its language
    target = kit.assignment(assignment)
    language = options.language(kit.language)
    plan = plan_for(kit, target.id, secret, times)  # an exam without its secret stops here
    if options.sandbox and pool is None:
        launch.check_available(kit.sandbox.uid_base)
    paths = list_submissions(submissions)
    out.mkdir(parents=True, exist_ok=True)
    messages = load_messages([ENGINE_MESSAGES, target.graders / "messages"], language)
    book = Gradebook(gradebook or out / "gradebook.sqlite")
    try:
        done = set() if regrade else book.graded_students(target.id)
        todo = [p for p in paths if student_name(p) not in done]
        if todo:
            own = pool is None
            if pool is None:
                jobs = max(1, min(jobs or default_jobs(), len(todo)))
                pool = GradingPool(kit, options, jobs, target.id)
            try:
                pool.start()
                for result in pool.grade_many(todo, assignment=target.id, plan=plan):
                    reports.write_student(out, result, target, messages, language)
                    book.record(result)  # one transaction per student: a kill loses nothing graded
                    if on_result is not None:
                        on_result(result)
            finally:
                if own:
                    pool.close()
        reports.write_class(out, book, target, time.monotonic() - started, messages)
    finally:
        book.close()
    return BatchSummary(len(todo), len(paths) - len(todo), time.monotonic() - started, out)
