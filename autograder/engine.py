"""The main flow: submission -> sandboxed worker -> observations -> judgement -> scores -> files.

`Grader` grades one submission at a time with warm workers; `grade_batch` grades a class,
in parallel, resumably, and writes every output.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import judge
from . import sandbox as sandboxing
from .config import Assignment, Kit, TaskConfig
from .course import Graders, load_graders, validate_points
from .results import SubmissionResult, TaskResult
from .submission import Collected, collect, student_name
from .workers import SandboxSession, WorkerProcess


class Grader:
    """Grades submissions of one assignment with one warm worker (start once, reuse)."""

    def __init__(
        self,
        kit: Kit,
        assignment: str | None = None,
        *,
        sandbox: bool = True,
        lang: str | None = None,
        slot: int = 0,
        graders_folder: Path | None = None,
        public_only: bool = False,
    ):
        self.kit = kit
        self.assignment: Assignment = kit.assignment(assignment)
        self.lang = lang or kit.language
        self.graders: Graders = load_graders(self.assignment, graders_folder, self.lang)
        validate_points(self.graders, complete=not public_only)
        self.public_only = public_only
        self.sandboxed = sandbox
        launch = sandbox_launch(kit, slot) if sandbox else sandboxing.bare_launch()
        self.worker = WorkerProcess(launch)
        self.given = {name: (self.assignment.solutions / name).read_bytes() for name in self.assignment.given}

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.worker.stop()

    def grade(self, path: Path, student: str | None = None) -> SubmissionResult:
        """Grade one submission (folder or zip); never raises for anything the student did."""
        started = time.monotonic()
        submission = collect(path, self.assignment.given)
        tasks = tuple(self.grade_task(task, submission) for task in self.assignment.tasks)
        return SubmissionResult(
            student or student_name(path), self.assignment.id, tasks, submission.notes,
            time.monotonic() - started, submission.problem,
        )  # fmt: skip

    def grade_task(self, task: TaskConfig, submission: Collected) -> TaskResult:
        checks = self.graders.for_task(task.id)
        if self.public_only:
            checks = tuple(c for c in checks if c.public)
        max_score = sum(c.points for c in checks)
        if task.file not in submission.files:
            feedback = judge.render(
                self.graders, "engine.missing_file", {"file": task.file, "module": task.module}
            )
            return TaskResult(task.id, max_score, judge.failed_all(checks, "engine.missing_file", feedback))
        session = SandboxSession(self.worker, task)
        opened = session.open({**submission.files, **self.given}, self.graders.probes_source)
        if session.lost is not None:
            key, feedback = judge.lost_feedback(self.graders, task, session.lost)
            results = judge.failed_all(checks, key, feedback)
        elif not opened.imported:
            err = opened.error
            where = f" (at {err['where']})" if err.get("where") else ""
            params = {"file": task.file, "module": task.module, "type": err.get("type", "Error"),
                      "message": err.get("message", ""), "where": where}  # fmt: skip
            feedback = judge.render(self.graders, "engine.import_error", params)
            results = judge.failed_all(checks, "engine.import_error", feedback)
        else:
            results = tuple(judge.run_check(c, session, self.graders, task) for c in checks)
        output = session.close()
        return TaskResult(task.id, max_score, results, (), output)


def sandbox_launch(kit: Kit, slot: int) -> sandboxing.Launch:
    return sandboxing.bwrap_launch(slot, kit.sandbox.uid_base)


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def list_submissions(folder: Path) -> list[Path]:
    """One entry per student: folders and zips, in name order; hidden files skipped."""
    return sorted(
        p for p in folder.iterdir()
        if not p.name.startswith((".", "_")) and (p.is_dir() or p.suffix.lower() in (".zip", ".py"))
    )  # fmt: skip


@dataclass(frozen=True)
class BatchSummary:
    """What a batch run did."""

    graded: int
    skipped: int
    seconds: float
    out: Path


# -- parallel batch -------------------------------------------------------------------------
_worker_grader: Grader | None = None


def _pool_init(kit: Kit, assignment: str, use_sandbox: bool, lang: str, slots: object) -> None:
    global _worker_grader
    slot = slots.get() if hasattr(slots, "get") else 0  # type: ignore[union-attr]
    _worker_grader = Grader(kit, assignment, sandbox=use_sandbox, lang=lang, slot=slot)


def _pool_grade(path: Path) -> SubmissionResult:
    assert _worker_grader is not None
    return _worker_grader.grade(path)


@contextmanager
def graded_stream(
    kit: Kit, assignment: str, paths: list[Path], *, jobs: int, use_sandbox: bool, lang: str
) -> Iterator[Iterator[SubmissionResult]]:
    """Results in completion order, from `jobs` processes that each keep one warm worker."""
    if jobs <= 1 or len(paths) <= 1:
        grader = Grader(kit, assignment, sandbox=use_sandbox, lang=lang)
        try:
            yield (grader.grade(p) for p in paths)
        finally:
            grader.close()
        return
    import multiprocessing

    from .worker import prewarm

    # Import torch, the graders and the lazily loaded parts of torch once, here: the forked
    # grading processes inherit all of it instead of paying for it again.
    prewarm()
    load_graders(kit.assignment(assignment), lang=lang)
    ctx = multiprocessing.get_context("fork")
    slots = ctx.Queue()
    for slot in range(jobs):
        slots.put(slot)
    pool = ctx.Pool(jobs, initializer=_pool_init, initargs=(kit, assignment, use_sandbox, lang, slots))
    try:
        yield pool.imap_unordered(_pool_grade, paths)
    finally:
        pool.terminate()
        pool.join()


def grade_batch(
    kit: Kit,
    submissions: Path,
    out: Path,
    *,
    assignment: str | None = None,
    jobs: int | None = None,
    use_sandbox: bool = True,
    lang: str | None = None,
    gradebook: Path | None = None,
    regrade: bool = False,
    on_result: Callable[[SubmissionResult], None] | None = None,
) -> BatchSummary:
    """Grade every submission in a folder; resumable: students already graded are kept."""
    from . import gradebook as gb
    from . import reports

    started = time.monotonic()
    target = kit.assignment(assignment)
    language = lang or kit.language
    messages = load_graders(target, lang=language).messages
    if use_sandbox:
        sandboxing.check_available(kit.sandbox.uid_base)
    out.mkdir(parents=True, exist_ok=True)
    book = gb.Gradebook(gradebook or out / "gradebook.sqlite")
    try:
        paths = list_submissions(submissions)
        done = set() if regrade else book.graded_students(target.id)
        todo = [p for p in paths if student_name(p) not in done]
        with graded_stream(kit, target.id, todo, jobs=jobs or default_jobs(),
                           use_sandbox=use_sandbox, lang=language) as stream:  # fmt: skip
            for result in stream:
                reports.write_student(out, result, target, messages, language)
                book.record(result)  # one transaction per student: a kill loses nothing graded
                if on_result is not None:
                    on_result(result)
        reports.write_class(out, book, target, time.monotonic() - started, messages)
    finally:
        book.close()
    return BatchSummary(len(todo), len(paths) - len(todo), time.monotonic() - started, out)
