"""A long-lived grading pool: warm sandboxed workers and grading processes, started once.

`submit` grades one submission and returns a future; any number of batches (or a service) can
use one pool in a process's life. With one job the grading runs on a thread of this process; with
more, each job is a forked grading process that adopts one warm worker of its own.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, ClassVar

from autograder.config import Kit
from autograder.errors import WorkerProtocolError
from autograder.grading import judge
from autograder.grading.course import load_graders
from autograder.grading.grader import Grader, Plan, worker_launch
from autograder.grading.options import DEFAULT_OPTIONS, GradeOptions
from autograder.grading.results import SubmissionResult
from autograder.sandbox.client import WorkerProcess
from autograder.submissions.files import Collected

SLOT_WAIT = 30.0  # seconds a new grading process waits for its slot (all are handed out at once)
BROKEN = (
    "a grading process died (the system may have run out of memory): run the same command "
    "again, students already graded are kept; with fewer --jobs if it happens again"
)


class _Process:
    """What one grading process holds: its worker and a grader per assignment, made on first use."""

    kit: ClassVar[Kit]
    options: ClassVar[GradeOptions]
    worker: ClassVar[WorkerProcess | None] = None
    graders: ClassVar[dict[str, Grader]] = {}  # one per process: _adopt gives each its own

    @classmethod
    def grader(cls, assignment: str) -> Grader:
        if assignment not in cls.graders:
            cls.graders[assignment] = Grader(cls.kit, assignment, cls.options, worker=cls.worker)
        return cls.graders[assignment]


def _die_with(parent: int) -> None:
    """Kill this process as soon as `parent` (the process that forked it) is gone, however it went
    (kill -9 included): a grading process left behind holds torch and a worker for nobody."""

    def watch() -> None:
        try:
            pidfd = os.pidfd_open(parent)
        except (OSError, AttributeError):
            pidfd = -1
        if pidfd >= 0:
            select.select([pidfd], [], [])  # readable once the process has exited
        else:
            while os.getppid() == parent:
                time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)

    if os.getppid() != parent:  # gone already, before the watch began
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Thread(target=watch, daemon=True, name="die-with-parent").start()


def _adopt(kit: Kit, options: GradeOptions, slots: Any, pids: Any, spawned: list[WorkerProcess],
           parent: int) -> None:
    """Initializer of a forked grading process: take a slot and that slot's worker."""
    _die_with(parent)
    pids.put(os.getpid())
    slot = slots.get(timeout=SLOT_WAIT)
    for other, worker in enumerate(spawned):
        if other != slot:
            worker.release()  # another grading process's channel: its ends stay there only
    spawned[slot].adopt()
    _Process.kit, _Process.options, _Process.worker, _Process.graders = kit, options, spawned[slot], {}


def _grade(assignment: str, path: Path, student: str | None, plan: Plan | None,
           collected: Collected | None) -> SubmissionResult:
    return _Process.grader(assignment).grade(path, student, plan, collected)


class GradingPool:
    """Warm workers plus grading processes for a kit; `start` once, `submit` often, `close` at the end."""

    def __init__(self, kit: Kit, options: GradeOptions = DEFAULT_OPTIONS, jobs: int = 1,
                 assignment: str | None = None):
        """`assignment`: the one most submissions are for (loaded before the grading processes
        fork, so they share it); others are loaded by each process when first asked for."""
        self.kit = kit
        self.options = options
        self.jobs = max(1, jobs)
        self.assignment = kit.assignment(assignment).id
        self.workers: list[WorkerProcess] = []
        self._executor: Executor | None = None
        self._pids: Any = None
        self._local: dict[str, Grader] = {}
        self.broken = False

    # -- life ------------------------------------------------------------------------------
    def spawn(self) -> GradingPool:
        """Launch the workers now (each imports torch meanwhile); `start` finishes the job."""
        if not self.workers:
            for slot in range(self.jobs):
                worker = WorkerProcess(worker_launch(self.kit, slot, self.options.sandbox))
                self.workers.append(worker)
                worker.spawn()
        return self

    def start(self) -> GradingPool:
        """Workers spawned, graders loaded, grading processes forked: ready to `submit`."""
        if self._executor is not None:
            return self
        self.spawn()
        try:
            if self.jobs == 1:
                self._local = {}
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="grading")
                self._local_grader(self.assignment)  # load now: a start error is raised here
            else:
                self._executor = self._fork()
        except BaseException:
            self.close()
            raise
        self.broken = False
        return self

    def _fork(self) -> Executor:
        import torch

        # While the workers import torch, this process imports it too, with the graders: the forked
        # grading processes inherit all of it instead of paying for it again. (Graders judge with
        # torch but never load torch.optim's compiler stack.)
        torch.set_num_threads(1)
        lang = self.options.language(self.kit.language)
        graders = load_graders(self.kit.assignment(self.assignment), lang=lang)
        for task in graders.assignment.tasks:  # list each hypothesis check's inputs once, for all
            for check in graders.for_task(task.id):
                judge.examples_of(check, graders.params, graders.secret)
        gc.collect()
        gc.freeze()  # what the grading processes inherit stays shared: their collector never visits it
        ctx = multiprocessing.get_context("fork")
        slots = ctx.Queue()
        for slot in range(self.jobs):
            slots.put(slot)
        self._pids = ctx.SimpleQueue()
        initargs = (self.kit, self.options, slots, self._pids, self.workers, os.getpid())
        executor = ProcessPoolExecutor(self.jobs, mp_context=ctx, initializer=_adopt, initargs=initargs)
        # The first task forks every grading process; each adopts its worker, so this process
        # closes its own ends of the workers' channels once they are forked.
        executor.submit(os.getpid).result()
        for worker in self.workers:
            worker.release()
        return executor

    def _local_grader(self, assignment: str) -> Grader:
        if assignment not in self._local:
            self._local[assignment] = Grader(self.kit, assignment, self.options, worker=self.workers[0])
        return self._local[assignment]

    def close(self) -> None:
        """Stop the grading processes and every worker; a pool cut short stops at once."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
            self._kill_grading_processes()
            executor.shutdown(wait=True)
        for worker in self.workers:
            worker.stop(graceful=False)
        self.workers = []
        self._local = {}

    def _kill_grading_processes(self) -> None:
        pids, self._pids = self._pids, None
        while pids is not None and not pids.empty():
            with contextlib.suppress(OSError):
                os.kill(pids.get(), signal.SIGKILL)

    def __enter__(self) -> GradingPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- grading ---------------------------------------------------------------------------
    def submit(self, path: Path, *, student: str | None = None, assignment: str | None = None,
               plan: Plan | None = None, collected: Collected | None = None) -> Future[SubmissionResult]:
        """Grade one submission (`collected`: its files as already read); the future gives its result.

        A grading process that died breaks the pool: its futures raise WorkerProtocolError, and
        the next `submit` starts the pool again."""
        if self.broken:
            self.close()
        self.start()
        assert self._executor is not None
        target = self.kit.assignment(assignment).id if assignment else self.assignment
        if isinstance(self._executor, ThreadPoolExecutor):
            grader = self._local_grader(target)
            return self._executor.submit(grader.grade, path, student, plan, collected)
        try:
            future = self._executor.submit(_grade, target, path, student, plan, collected)
        except BrokenProcessPool:
            self.broken = True
            raise WorkerProtocolError(BROKEN) from None
        return future

    def grade_many(self, paths: Iterable[Path], *, assignment: str | None = None, plan: Plan | None = None,
                   collected: Mapping[Path, Collected] | None = None) -> Iterator[SubmissionResult]:
        """Results in completion order; a batch cut short cancels what has not started."""
        read = collected or {}
        futures = [self.submit(p, assignment=assignment, plan=plan, collected=read.get(p)) for p in paths]
        try:
            for future in as_completed(futures):
                try:
                    yield future.result()
                except BrokenProcessPool:
                    self.broken = True
                    raise WorkerProtocolError(BROKEN) from None
        finally:
            for future in futures:
                future.cancel()
