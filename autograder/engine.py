"""The main flow: submission -> sandboxed worker -> observations -> judgement -> scores -> files.

`Grader` grades one submission at a time with warm workers; `grade_batch` grades a class,
in parallel, resumably, and writes every output.
"""

from __future__ import annotations

import gc
import os
import queue
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from . import exam as exams
from . import judge
from . import sandbox as sandboxing
from .checks import WorkerLost
from .config import Assignment, Kit, TaskConfig
from .course import Graders, load_graders, validate_points, variant_params
from .errors import WorkerProtocolError
from .results import CheckResult, SubmissionResult, TaskResult
from .submission import Collected, collect, student_name
from .workers import SandboxSession, WorkerProcess


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
                "found_score": self.found_score, "max_score": self.max_score}  # fmt: skip

    def note(self) -> str:
        found = ", ".join(f"{k} = {exams.show(v)}" for k, v in self.found.items())
        own = ", ".join(f"{k} = {exams.show(v)}" for k, v in self.own.items())
        return (f"{self.task}: this file implements the numbers of another student's exam version "
                f"({found}; yours: {own}). It was graded against your own numbers.")  # fmt: skip


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
        secret: bytes | None = None,
        times: Mapping[str, datetime] | None = None,
        worker: WorkerProcess | None = None,
    ):
        """An exam assignment (one with an [exam] table) is graded per student's variant, with the
        instructor's `secret` (default: from the environment) and submission `times` (student key ->
        time; default: the platform's metadata in each submission). A self-check (`public_only`)
        never needs either: its checks judge with the numbers in its graders folder. `worker`: one
        already spawned for this grader (else one is spawned here)."""
        self.kit = kit
        self.assignment: Assignment = kit.assignment(assignment)
        if worker is None:
            # Spawned first: the worker imports torch while this process loads the graders.
            launch = sandbox_launch(kit, slot) if sandbox else sandboxing.bare_launch()
            worker = WorkerProcess(launch)
            worker.spawn()
        self.worker = worker
        try:
            self._load(assignment, sandbox, lang, graders_folder, public_only, secret, times)
        except BaseException:
            worker.stop(graceful=False)
            raise

    def _load(
        self, assignment: str | None, sandbox: bool, lang: str | None, graders_folder: Path | None,
        public_only: bool, secret: bytes | None, times: Mapping[str, datetime] | None,
    ) -> None:  # fmt: skip
        kit = self.kit
        self.lang = lang or kit.language
        self.graders: Graders = load_graders(self.assignment, graders_folder, self.lang)
        validate_points(self.graders, complete=not public_only)
        self.public_only = public_only
        self.sandboxed = sandbox
        self.exam = None if public_only else self.assignment.exam
        self.space = exams.VariantSpace.of(self.assignment)
        self.secret = secret
        self.times = times
        if self.exam is not None and self.space.knobs:
            exams.validate_space(self.space, self.graders.module("params"))
            if self.secret is None:
                self.secret = exams.load_secret(kit_root=kit.root)
        self.given = self._given_files(graders_folder)

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
        self.worker.stop()

    def grade(
        self,
        path: Path,
        student: str | None = None,
        *,
        variant: exams.Variant | None = None,
        submitted_at: datetime | None = None,
    ) -> SubmissionResult:
        """Grade one submission (folder or zip); never raises for anything the student did.

        In an exam, against the student's variant (derived from their id; `variant` overrides it)
        and with the late policy applied to `submitted_at` (default: the platform's metadata).
        """
        started = time.monotonic()
        name = student or student_name(path)
        submission = collect(path, self.assignment.given, self.assignment)
        try:
            if self.exam is None:
                tasks = tuple(self.grade_task(task, submission) for task in self.assignment.tasks)
                elapsed = time.monotonic() - started
                problem = submission.problem
                return SubmissionResult(name, self.assignment.id, tasks, submission.notes, elapsed, problem)
            return self._grade_exam(path, name, submission, started, variant, submitted_at)
        finally:
            self.worker.end_submission()

    def variant_of(self, student: str) -> exams.Variant | None:
        """The student's exam variant (None when the assignment has no variants)."""
        if self.exam is None or not self.space.knobs:
            return None
        assert self.secret is not None
        return self.space.derive(self.secret, student)

    def graders_for(self, variant: exams.Variant | None) -> Graders:
        """The graders judging with a variant's numbers (the lesson's without one)."""
        if variant is None:
            return self.graders
        where = f"grading.toml: assignments.{self.assignment.id}.exam.variants"
        return self.graders.with_params(variant_params(self.graders.module("params"), variant.choices, where))

    def _grade_exam(
        self, path: Path, name: str, submission: Collected, started: float,
        variant: exams.Variant | None, submitted_at: datetime | None,
    ) -> SubmissionResult:  # fmt: skip
        exam = self.exam
        assert exam is not None
        variant = variant or self.variant_of(name)
        graders = self.graders_for(variant)
        graded = [self._grade_task(task, submission, graders, variant) for task in self.assignment.tasks]
        tasks = tuple(result for result, _ in graded)
        swaps = [finding for _, finding in graded if finding is not None]
        raw = round(sum(t.score for t in tasks), 6)
        if submitted_at is not None:
            when = exams.SubmittedAt(submitted_at, "given")
        else:
            when = exams.submission_time(path, name, exam.tz, self.times)
        late = exams.lateness(exam, when.moment)
        penalty = late.penalty(raw, sum(t.max_score for t in tasks), exam.late_penalty_of)
        notes = list(submission.notes) + [f.note() for f in swaps]
        late_text = exams.late_note(exam, when, late, penalty, raw)
        if late_text:
            notes.append(late_text)
        info: dict[str, Any] = {
            "submitted_at": when.moment.astimezone(exam.tz).isoformat() if when.moment else None,
            "time_source": when.source or when.problem,
            "late": {"status": late.status, "seconds": late.seconds_late, "periods": late.periods,
                     "percent": late.percent, "penalty": penalty},  # fmt: skip
        }
        if variant is not None:
            info = {"variant": variant.code, "choices": variant.choices, **info,
                    "swapped": [f.as_data() for f in swaps]}  # fmt: skip
        return SubmissionResult(
            name, self.assignment.id, tasks, tuple(notes), time.monotonic() - started, submission.problem,
            penalty, info,
        )  # fmt: skip

    def grade_task(
        self, task: TaskConfig, submission: Collected, graders: Graders | None = None
    ) -> TaskResult:
        return self._grade_task(task, submission, graders or self.graders, None)[0]

    def _grade_task(
        self, task: TaskConfig, submission: Collected, graders: Graders, variant: exams.Variant | None
    ) -> tuple[TaskResult, SwapFinding | None]:
        checks = graders.for_task(task.id)
        if self.public_only:
            checks = tuple(c for c in checks if c.public)
        max_score = sum(c.points for c in checks)
        if task.file not in submission.files:
            key = "engine.missing_file"
            feedback = judge.render(graders, key, {"file": task.file, "module": task.module})
            return TaskResult(task.id, max_score, judge.failed_all(checks, key, feedback)), None
        session = SandboxSession(self.worker, task)
        opened = session.open({**submission.files, **self.given}, graders.probes_source)
        finding = None
        if session.lost is not None:
            key, feedback = judge.lost_feedback(graders, task, session.lost)
            results = judge.failed_all(checks, key, feedback)
        elif not opened.imported:
            err = opened.error
            where = f" (at {err['where']})" if err.get("where") else ""
            params = {"file": task.file, "module": task.module, "type": err.get("type", "Error"),
                      "message": err.get("message", ""), "where": where}  # fmt: skip
            feedback = judge.render(graders, "engine.import_error", params)
            results = judge.failed_all(checks, "engine.import_error", feedback)
        else:
            results = tuple(judge.run_check(c, session, graders, task) for c in checks)
            if variant is not None and sum(r.score for r in results) < max_score:
                finding = self._swapped(task, session, graders, variant, checks, results)
        output = session.close()
        return TaskResult(task.id, max_score, results, (), output), finding

    def _swapped(
        self, task: TaskConfig, session: SandboxSession, graders: Graders, variant: exams.Variant,
        checks: tuple[Any, ...], results: tuple[CheckResult, ...],
    ) -> SwapFinding | None:  # fmt: skip
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
        except Exception:  # the student's code raised or the observation is unusable: nothing to say
            return None
        changes: dict[str, int] = {}
        for knob, value in (observed or {}).items():
            if knob not in variant.choices:
                continue
            if exams.canonical(value) == exams.canonical(variant.choices[knob]):
                continue
            index = self.space.index_of(knob, value)
            if index is not None:
                changes[knob] = index
        if not changes:
            return None
        other = self.space.with_choice(variant, changes)
        again = tuple(judge.run_check(c, session, self.graders_for(other), task) for c in checks)
        own_score, found_score = sum(r.score for r in results), sum(r.score for r in again)
        if found_score <= own_score:
            return None
        return SwapFinding(
            task.id, {k: other.choices[k] for k in changes}, {k: variant.choices[k] for k in changes},
            round(own_score, 6), round(found_score, 6), sum(c.points for c in checks),
        )  # fmt: skip


def sandbox_launch(kit: Kit, slot: int) -> sandboxing.Launch:
    return sandboxing.bwrap_launch(slot, kit.sandbox.uid_base)


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def list_submissions(folder: Path) -> list[Path]:
    """One entry per student: folders, zips and notebooks, in name order; hidden files skipped."""
    return sorted(
        p for p in folder.iterdir()
        if not p.name.startswith((".", "_")) and (p.is_dir() or p.suffix.lower() in (".zip", ".py", ".ipynb"))
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


def _pool_init(kit: Kit, assignment: str, use_sandbox: bool, lang: str, slots: object,
               secret: bytes | None, times: Mapping[str, datetime] | None,
               spawned: list[WorkerProcess]) -> None:  # fmt: skip
    global _worker_grader
    try:
        slot = slots.get(timeout=5.0)  # type: ignore[attr-defined]
    except queue.Empty:  # this process replaces one that died: a slot, and a worker, of its own
        slot = len(spawned) + os.getpid() % 1000
    for other, worker in enumerate(spawned):
        if other != slot:
            worker.release()  # another grading process's channel: its ends stay there only
    mine = spawned[slot] if slot < len(spawned) else None
    if mine is not None:
        mine.adopt()
    _worker_grader = Grader(kit, assignment, sandbox=use_sandbox, lang=lang, slot=slot, secret=secret,
                            times=times, worker=mine)  # fmt: skip


def _pool_grade(path: Path) -> SubmissionResult:
    assert _worker_grader is not None
    return _worker_grader.grade(path)


@contextmanager
def spawned_workers(kit: Kit, count: int, use_sandbox: bool) -> Iterator[list[WorkerProcess]]:
    """`count` workers, launched now (each imports torch meanwhile); all of them stopped on exit."""
    workers: list[WorkerProcess] = []
    try:
        for slot in range(count):
            worker = WorkerProcess(sandbox_launch(kit, slot) if use_sandbox else sandboxing.bare_launch())
            workers.append(worker)
            worker.spawn()
        yield workers
    finally:
        for worker in workers:
            worker.stop(graceful=False)


@contextmanager
def graded_stream(
    kit: Kit, assignment: str, paths: list[Path], *, jobs: int, use_sandbox: bool, lang: str,
    secret: bytes | None = None, times: Mapping[str, datetime] | None = None,
    workers: list[WorkerProcess],
) -> Iterator[Iterator[SubmissionResult]]:  # fmt: skip
    """Results in completion order, from `jobs` processes that each keep one warm worker.

    `workers`: already spawned ones (see spawned_workers), one per job; the caller stops them."""
    if not paths:
        yield iter(())
        return
    jobs = max(1, min(jobs, len(paths), len(workers)))
    if jobs <= 1:
        grader = Grader(kit, assignment, sandbox=use_sandbox, lang=lang, secret=secret, times=times,
                        worker=workers[0])  # fmt: skip
        try:
            yield (grader.grade(p) for p in paths)
        finally:
            grader.close()
        return
    import multiprocessing

    import torch

    # While the workers import torch, this process imports it too, with the graders: the forked
    # grading processes inherit all of it instead of paying for it again, and each adopts one
    # worker. (Graders judge with torch but never load torch.optim's compiler stack: a grading
    # process needs none of what the worker warms up for student code.)
    torch.set_num_threads(1)
    spawned = workers[:jobs]
    graders = load_graders(kit.assignment(assignment), lang=lang)
    for task in graders.assignment.tasks:  # list each hypothesis check's inputs once, for all
        for check in graders.for_task(task.id):
            judge.examples_of(check, graders.params)
    gc.collect()
    gc.freeze()  # what the grading processes inherit stays shared: their collector never visits it
    ctx = multiprocessing.get_context("fork")
    slots = ctx.Queue()
    for slot in range(jobs):
        slots.put(slot)
    initargs = (kit, assignment, use_sandbox, lang, slots, secret, times, spawned)
    pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_pool_init, initargs=initargs)
    futures: list[Future[SubmissionResult]] = []
    try:
        futures = [pool.submit(_pool_grade, p) for p in paths]  # the first forks every grading process
        for worker in spawned:
            worker.release()
        yield _completed(futures)
    finally:
        for future in futures:
            future.cancel()
        for process in list(getattr(pool, "_processes", {}).values()):  # a batch cut short stops now
            process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _completed(futures: list[Future[SubmissionResult]]) -> Iterator[SubmissionResult]:
    try:
        for future in as_completed(futures):
            yield future.result()
    except BrokenProcessPool:
        raise WorkerProtocolError(
            "a grading process died (the system may have run out of memory): run the same command "
            "again, students already graded are kept; with fewer --jobs if it happens again"
        ) from None


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
    secret: bytes | None = None,
    times: Mapping[str, datetime] | None = None,
) -> BatchSummary:
    """Grade every submission in a folder; resumable: students already graded are kept.

    An exam (an assignment with an [exam] table) is graded per student's variant with the
    instructor's `secret` (default: from the environment; refused before anything is graded
    when missing) and the late policy applied to each submission's time (`times`, student ->
    time, else the platform's metadata in the submission).
    """
    from . import gradebook as gb
    from . import reports

    started = time.monotonic()
    target = kit.assignment(assignment)
    language = lang or kit.language
    if use_sandbox:
        sandboxing.check_available(kit.sandbox.uid_base)
    paths = list_submissions(submissions)
    jobs = max(1, min(jobs or default_jobs(), len(paths)))
    # The workers start first: their `import torch` runs while this process loads the graders.
    with spawned_workers(kit, jobs if paths else 0, use_sandbox) as workers:
        graders = load_graders(target, lang=language)
        messages = graders.messages
        if target.exam is not None and target.exam.variants:
            exams.validate_space(exams.VariantSpace.of(target), graders.module("params"))
            if secret is None:
                secret = exams.load_secret(kit_root=kit.root)
        out.mkdir(parents=True, exist_ok=True)
        book = gb.Gradebook(gradebook or out / "gradebook.sqlite")
        try:
            done = set() if regrade else book.graded_students(target.id)
            todo = [p for p in paths if student_name(p) not in done]
            with graded_stream(kit, target.id, todo, jobs=jobs, use_sandbox=use_sandbox, lang=language,
                               secret=secret, times=times, workers=workers) as stream:  # fmt: skip
                for result in stream:
                    reports.write_student(out, result, target, messages, language)
                    book.record(result)  # one transaction per student: a kill loses nothing graded
                    if on_result is not None:
                        on_result(result)
            reports.write_class(out, book, target, time.monotonic() - started, messages)
        finally:
            book.close()
    return BatchSummary(len(todo), len(paths) - len(todo), time.monotonic() - started, out)
