"""The warm worker's process layout and channel: a fresh child per task, a relay per submission,
arrays sent raw and exact."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest
from conftest import sandbox_works

from autograder.config import Kit, TaskConfig
from autograder.grading.grader import worker_launch
from autograder.sandbox import launch as sandbox
from autograder.sandbox.client import WorkerProcess
from autograder.sandbox.session import SandboxSession

PROBES = '''
import builtins
import os


def where(mod):
    return {"pid": os.getpid(), "relay": os.getppid(), "seen": getattr(builtins, "MARK", None)}


def mark(mod, value):
    builtins.MARK = value
    return value


def double(mod, x):
    return {"x": x * 2, "sum": float(x.sum()), "dtype": str(x.dtype)}
'''
FILES = {"task.py": b"VALUE = 1\n"}


@pytest.fixture(scope="module")
def worker(kit: Kit) -> Iterator[WorkerProcess]:
    launch = worker_launch(kit, 0, sandbox=sandbox_works(kit))
    process = WorkerProcess(launch)
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def task(kit: Kit) -> TaskConfig:
    return dataclasses.replace(kit.assignment("nn_module").tasks[0], file="task.py")


def _run(worker: WorkerProcess, task: TaskConfig, probe: str, **kwargs: object) -> object:
    session = SandboxSession(worker, task)
    assert session.open(FILES, PROBES).imported
    try:
        return session.call(probe, **kwargs)
    finally:
        session.close()


def test_each_task_has_its_own_child_and_each_submission_its_own_relay(worker, task):
    first = _run(worker, task, "mark", value="student one")
    assert first == "student one"
    same_student = _run(worker, task, "where")
    worker.end_submission()
    next_student = _run(worker, task, "where")
    worker.end_submission()
    assert same_student["seen"] is None and next_student["seen"] is None  # nothing a task did survives it
    assert same_student["pid"] != next_student["pid"]
    # No later student's code is forked from a relay that held an earlier student's files.
    assert same_student["relay"] != next_student["relay"]


def test_tasks_of_one_submission_share_its_relay(worker, task):
    one, two = _run(worker, task, "where"), _run(worker, task, "where")
    worker.end_submission()
    assert one["relay"] == two["relay"] and one["pid"] != two["pid"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_arrays_cross_the_sandbox_exactly(worker, task, dtype):
    rng = np.random.default_rng(7)
    x = (rng.normal(size=(300, 200)) * 50).astype(dtype)
    got = _run(worker, task, "double", x=x)
    worker.end_submission()
    assert got["dtype"] == dtype and got["x"].dtype == (x * 2).dtype
    assert np.array_equal(got["x"], x * 2) and got["sum"] == float(x.sum())


def test_end_of_submission_without_a_worker_is_a_no_op(kit):
    idle = WorkerProcess(sandbox.bare_launch())
    idle.end_submission()
    assert idle.proc is None


SPIN = b"def spin():\n    n = 0\n    while True:\n        n += 1\n"


@pytest.mark.parametrize(("time_limit", "cpu_limit", "reason"),
                         [(1.0, 5.0, "time_limit"), (5.0, 1.0, "cpu_limit")], ids=["wall", "cpu"])
def test_a_stopped_call_says_where_the_students_code_was(worker, task, time_limit, cpu_limit, reason):
    """Asked before the kill when its time is up, told by its SIGXCPU handler at the CPU limit: the
    innermost frame in the student's file reaches the grader as a checked display string."""
    from autograder.checks import WorkerLost

    limited = dataclasses.replace(task, time_limit=time_limit, cpu_limit=cpu_limit)
    session = SandboxSession(worker, limited)
    assert session.open({"task.py": SPIN}, PROBES + "\n\ndef spin(mod):\n    return mod.spin()\n").imported
    with pytest.raises(WorkerLost) as lost:
        session.call("spin")
    session.close()
    worker.end_submission()
    assert lost.value.reason == reason
    where = lost.value.stopped_at
    assert where is not None and where.file == "task.py" and where.function == "spin"
    assert (where.line, where.code) in ((3, "while True:"), (4, "n += 1"))
