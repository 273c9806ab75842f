"""A task's runs: a lost call costs the checks that make it; the others go on in a fresh run, in bounds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autograder.checks import StoppedAt, WorkerLost
from autograder.config import TaskConfig
from autograder.grading.course import ENGINE_MESSAGES, Graders, load_messages
from autograder.grading.judge import lost_feedback
from autograder.grading.task_runs import MAX_RUNS, TIME_BOUND_FACTOR, TaskRuns
from autograder.probe_calls import call as probe_call

WHERE = StoppedAt("tinynet.py", 22, "train_tinynet", "while True: pass")


class FakeRun:
    """A run whose probe `hang` is lost for its time (spending `cost` seconds); `boom` ends the process."""

    def __init__(self, budget: float, counter: int, log: list[str], cost: float = 3.0):
        self.budget = self.run_budget = budget
        self.counter = counter
        self.lost: WorkerLost | None = None
        self.log = log
        self.cost = cost
        log.append(f"start {budget:g}")

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        self.counter += 1
        self.log.append(probe)
        if probe == "hang":
            self.budget = max(self.budget - self.cost, 0.0)
            self.lost = WorkerLost("time_limit", probe, WHERE)
            raise self.lost
        if probe == "boom":
            self.lost = WorkerLost("exited", probe)
            raise self.lost
        if probe == "forge":
            self.lost = WorkerLost("tampered", "the probes")
            raise self.lost
        self.budget -= 0.1
        return kwargs.get("n", 0)

    def close(self) -> str:
        return "printed"


def runs(limit: float = 3.0, cost: float = 3.0) -> tuple[TaskRuns, list[str]]:
    log: list[str] = []
    return TaskRuns("t", limit, FakeRun(limit, 0, log, cost), lambda b, c: FakeRun(b, c, log, cost)), log


def test_a_lost_call_costs_its_check_and_the_same_call_later_not_the_others():
    session, log = runs(cost=1.0)  # stopped after 1 s of its 3 (a crash, say): 2 s are left
    session.begin_check()
    with pytest.raises(WorkerLost) as first:
        probe_call(session, "hang", "`train(model)`", n=1)
    assert first.value.call == "`train(model)`" and first.value.stopped_at == WHERE
    with pytest.raises(WorkerLost):  # the rest of that check is not run
        session.call("ok", n=2)
    session.begin_check()
    assert session.call("ok", n=2) == 2  # another check: a fresh run answers
    with pytest.raises(WorkerLost) as again:  # the very same call is not run again
        session.call("hang", n=1)
    assert again.value.reason == "time_limit" and again.value.call == "`train(model)`"
    assert log == ["start 3", "hang", "start 2", "ok"]  # the fresh run has what is left of T
    assert session.counter == 2  # seeds go on across runs
    assert session.close() == "printed\nprinted"


def test_past_the_bound_calls_are_refused_naming_the_first_stopped_call():
    session, log = runs()
    for n in range(5):
        session.begin_check()
        with pytest.raises(WorkerLost) as lost:
            probe_call(session, "hang", f"`train({n})`", n=n)
    assert TIME_BOUND_FACTOR == 1.0 and log.count("hang") == 1  # the hang used up T: no fresh run
    assert lost.value.reason == "not_run" and lost.value.call == "`train(0)`"
    assert lost.value.stopped_at == WHERE


@pytest.mark.parametrize("cost", [0.5, 1.0, 1.7, 3.0])
def test_the_runs_of_a_task_share_its_limit(cost: float):
    """Issue 44: a hang costs at most T in all, not 2 T. Each stopped call spends `cost` seconds
    of its run (a hang spends all that is left): the runs' own time adds up to at most T, and a
    check that still finds time left runs."""
    limit = 3.0
    log: list[str] = []
    made: list[FakeRun] = []

    def start(budget: float, counter: int) -> FakeRun:
        made.append(FakeRun(budget, counter, log, cost))
        return made[-1]

    session = TaskRuns("t", limit, start(limit, 0), start)
    answered, refused = 0, []
    for n in range(3 * MAX_RUNS):
        session.begin_check()
        with pytest.raises(WorkerLost):
            session.call("hang", n=n)
        session.begin_check()
        try:
            answered += session.call("ok", n=1) == 1
        except WorkerLost as lost:
            refused.append(lost.reason)
    assert set(refused) <= {"not_run"}
    session.close()
    spent = sum(run.run_budget - run.budget for run in made)
    assert spent <= limit + 1e-9, [(run.run_budget, run.budget) for run in made]
    assert all(later.run_budget <= limit - sum(r.run_budget - r.budget for r in made[:i]) + 1e-9
               for i, later in enumerate(made))
    # a run with time left after its hang answers
    assert answered == sum(1 for run in made if run.run_budget > cost)


def test_a_process_that_ends_fast_each_time_gets_at_most_max_runs():
    session, log = runs()
    for n in range(3 * MAX_RUNS):
        session.begin_check()
        with pytest.raises(WorkerLost):
            session.call("boom", n=n)
    assert log.count("boom") == MAX_RUNS


def test_changed_probes_end_the_task():
    session, log = runs()
    with pytest.raises(WorkerLost):
        session.call("forge")
    session.begin_check()
    with pytest.raises(WorkerLost) as lost:
        session.call("ok")
    assert lost.value.reason == "tampered" and log == ["start 3", "forge"]


@pytest.mark.parametrize("lang", ["en", "bn"])
def test_the_feedback_names_the_call_and_the_line_never_the_probe(lang: str):
    graders = Graders(None, Path("."), {}, "", None, load_messages([ENGINE_MESSAGES], lang))  # type: ignore[arg-type]
    task = TaskConfig("tinynet", "tinynet.py", 15, time_limit=30, cpu_limit=30)
    lost = WorkerLost("cpu_limit", "tinynet_train", WHERE, "train_tinynet(model, X, y, 4, 0.05)")
    key, text = lost_feedback(graders, task, lost)
    assert key == "engine.time_limit"  # a CPU limit no lower than the time limit reads as the time limit
    assert "`train_tinynet(model, X, y, 4, 0.05)`" in text and "`tinynet.py:22`" in text
    assert "`while True: pass`" in text and "tinynet_train" not in text and "30" in text
    refused = WorkerLost("not_run", "", WHERE, "train_tinynet(model, X, y)")
    key, text = lost_feedback(graders, task, refused)
    assert key == "engine.not_run" and "`tinynet.py:22`" in text and "30 s" in text and "60" not in text
    assert ("used up the task's time limit" if lang == "en" else "সময়সীমা শেষ হয়ে গেছে") in text
    unnamed = lost_feedback(graders, task, WorkerLost("exited", "tinynet_train"))[1]
    assert "tinynet_train" not in unnamed
