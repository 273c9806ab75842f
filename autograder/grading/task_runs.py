"""A task's probe calls over one or more runs: a lost call costs the checks that make it, not the task.

A *run* is one process that imported the student's file and answers probe calls (the sandbox's
child when grading, a fork when a student checks their own work). When a call is lost (its time
was up, the CPU, memory or process limits, a crash, an exit) the run is gone with it, and:

- the check that made the call fails with that loss, and so does every later check that makes
  the very same call (same probe, same inputs: it is not run again);
- the rest of that check is not run (hypothesis would otherwise try input after input on it);
- the task's other checks go on in a fresh run, which imports the file again.

Bound: all runs of a task together share its time limit T of their own time (their calls and
their imports): a fresh run is given what the runs before it left of T, so a hang costs at most
T in all (issue 44; a hang uses up its run's time, so the checks after it are refused). At most
MAX_RUNS runs. Past either bound the remaining calls are refused: those checks fail with
`engine.not_run`, which says the task's time was used up by the call that was stopped first
(and names it), never that this check's own code is wrong. A submission that changes the
probes (`tampered`) gets no fresh run: the task is over, as before.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Protocol

from autograder.checks import WorkerLost
from autograder.probe_calls import call_key

TIME_BOUND_FACTOR = 1.0  # all runs of a task together: at most its time limit of their own time
MAX_RUNS = 8  # a fresh run per lost call costs an import: a task that loses call after call stops here
NOT_RUN = "not_run"  # the engine's reason (engine.not_run) for a call past the bounds
FINAL = frozenset({"tampered"})  # losses after which nothing of the task runs again


class Run(Protocol):
    """One process serving a task's probe calls (sandbox.session.SandboxSession, or a self-check's fork)."""

    lost: WorkerLost | None
    budget: float  # seconds of its own time left
    run_budget: float  # what it was given
    counter: int  # calls made so far (seeds follow it)

    def call(self, probe: str, /, **kwargs: Any) -> Any: ...

    def close(self) -> str: ...


class TaskRuns:
    """The TaskSession a task's checks are given: calls go to the current run, a fresh one after a loss.

    `start(budget, counter)` makes a run that has imported the file already (the first run is given
    to the constructor: grader.py looks at its import before any check runs)."""

    def __init__(self, task: str, time_limit: float, first: Run, start: Callable[[float, int], Run]):
        self.task = task
        self.time_limit = float(time_limit)
        self.bound = TIME_BOUND_FACTOR * self.time_limit
        self.start = start
        self.run: Run | None = first
        self.runs = 1
        self.spent = 0.0  # own time of the runs that ended
        self.lost_calls: dict[str, WorkerLost] = {}
        self.first_loss: WorkerLost | None = None
        self.in_check: WorkerLost | None = None  # the running check's loss: the rest of it is not run
        self.outputs: list[str] = []
        self.counter = first.counter

    @property
    def lost(self) -> WorkerLost | None:
        """The first call the task lost (None: every call so far was answered)."""
        return self.first_loss

    # -- the checks' side --------------------------------------------------------------------
    def begin_check(self) -> None:
        """A new check starts (grading/judge.py): an earlier check's loss does not stop it."""
        self.in_check = None

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        if self.in_check is not None:
            raise copy.copy(self.in_check)
        # The call's identity is only needed once a call was lost (hashing every input costs ~0.2 ms).
        key = call_key(probe, kwargs) if self.lost_calls else None
        if key is not None and key in self.lost_calls:
            self.in_check = self.lost_calls[key]
            raise copy.copy(self.in_check)
        run = self._current()
        try:
            return run.call(probe, **kwargs)
        except WorkerLost as lost:
            self.counter = run.counter
            if run.lost is None:  # the probe said the student's code changed it, the run stands
                raise
            self._ended(run)
            if lost.reason in FINAL:
                self.first_loss = lost
            else:
                self.lost_calls[key or call_key(probe, kwargs)] = lost
                self.first_loss = self.first_loss or lost
            self.in_check = lost
            raise
        finally:
            self.counter = run.counter

    # -- runs ---------------------------------------------------------------------------------
    def _current(self) -> Run:
        if self.run is not None:
            return self.run
        if self.first_loss is not None and self.first_loss.reason in FINAL:
            raise copy.copy(self.first_loss)
        left = self.bound - self.spent
        if left <= 0.0 or self.runs >= MAX_RUNS:
            raise self._refusal()
        run = self.start(min(self.time_limit, left), self.counter)
        self.run = run
        self.runs += 1
        if run.lost is not None:  # the fresh import itself was lost
            lost = run.lost
            self._ended(run)
            if lost.reason in FINAL:
                self.first_loss = lost
                raise copy.copy(lost)
            self.first_loss = self.first_loss or lost
            raise self._refusal()
        return run

    def _ended(self, run: Run) -> None:
        self.spent += max(run.run_budget - run.budget, 0.0)
        self.outputs.append(run.close())
        self.run = None

    def _refusal(self) -> WorkerLost:
        first = self.first_loss
        return WorkerLost(NOT_RUN, "", first.stopped_at if first else None, first.call if first else "")

    def close(self) -> str:
        """End the current run; all runs' output, in order."""
        if self.run is not None:
            self.outputs.append(self.run.close())
            self.run = None
        return "\n".join(part for part in self.outputs if part)
