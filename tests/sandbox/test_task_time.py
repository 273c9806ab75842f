"""Issue 44: a hang costs at most the task's limit T of the student's own time, not 2 T."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from autograder.grading.grader import Grader
from autograder.sandbox.inside.relay import WHERE_WAIT
from autograder.sandbox.session import SandboxSession
from autograder.submissions.collect import collect

HANGING = ROOT / "tests" / "hostile" / "loop_in_train.py.txt"  # train_tinynet: `while True: pass`
LIMIT = 3.0
# Past its time a hanging child still runs while it is asked where it is (at most WHERE_WAIT) and
# until the SIGKILL lands; nothing else of it is outside its budget.
SLACK = WHERE_WAIT + 0.5
KEPT = {"registration", "weight_shapes"}  # the checks before the first training call


def test_a_hanging_train_uses_at_most_the_tasks_limit_of_cpu(grader: Grader, reference_copy: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU time each of the task's children used, as its relay reaped it (wait4's rusage:
    its threads included), adds up to T and a little, however many children the task had."""
    shutil.copy(HANGING, reference_copy / "tinynet.py")
    sessions: list[SandboxSession] = []
    made = SandboxSession.__init__

    def recorded(self: SandboxSession, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        sessions.append(self)

    monkeypatch.setattr(SandboxSession, "__init__", recorded)
    task = next(t for t in grader.assignment.tasks if t.id == "tinynet")
    task = dataclasses.replace(task, time_limit=LIMIT, cpu_limit=LIMIT)
    submission = collect(reference_copy, grader.assignment.given, grader.assignment)
    try:
        result = grader.grade_task(task, submission)
    finally:
        grader.worker.end_submission()
    used = [s.cpu for s in sessions]
    assert used and all(cpu is not None for cpu in used), used
    assert sum(used) <= LIMIT + SLACK, used  # type: ignore[arg-type]
    assert sum(s.run_budget - s.budget for s in sessions) <= LIMIT + 1e-6  # on the task's own clock
    by_name = {c.name: c for c in result.checks}
    assert {name for name, c in by_name.items() if c.passed} == KEPT, [
        (c.name, c.message_key) for c in result.checks]
    stopped = by_name["losses_are_floats"]
    assert stopped.message_key in ("engine.time_limit", "engine.cpu_limit"), stopped.message_key
    refused = [c for c in result.checks if c.message_key == "engine.not_run"]
    assert {"forward_formula"} <= {c.name for c in refused}
    for check in refused:  # said to be the earlier call's doing, with where it was stopped
        assert "used up the task's time limit of 3 s" in check.feedback, check.feedback
        assert "`train_tinynet(" in check.feedback and "`tinynet.py:22`" in check.feedback
