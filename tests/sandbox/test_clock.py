"""A task's limit is counted on its own clock: the time a busy machine keeps it waiting for a CPU is
not charged (sandbox/inside/clock.py), in the sandbox's relay as in the self-check; sleeping is."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from conftest import sandbox_works

from autograder.checks import WorkerLost
from autograder.config import Kit, TaskConfig
from autograder.grading.grader import worker_launch
from autograder.sandbox.client import WorkerProcess
from autograder.sandbox.inside.clock import MAX_STRETCH, TaskClock, run_delay
from autograder.sandbox.session import SandboxSession

pytestmark = pytest.mark.skipif(run_delay(os.getpid()) is None, reason="no /proc/<pid>/schedstat here")
CPU = min(os.sched_getaffinity(0))  # everything of a test shares this one CPU
SPIN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end:\n    pass\n"
PROBES = '''
import time


def spin(mod, seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds


def nap(mod, seconds):
    time.sleep(seconds)
    return seconds
'''


def _pinned(argv: list[str], heavier: bool = False) -> subprocess.Popen[bytes]:
    def pin() -> None:
        os.sched_setaffinity(0, {CPU})
        if heavier:
            try:  # as root, the hogs outweigh what is measured (a laptop busy with other work)
                os.setpriority(os.PRIO_PROCESS, 0, -5)
            except OSError:
                pass

    return subprocess.Popen(argv, preexec_fn=pin)


@pytest.fixture
def hogs() -> Iterator[None]:
    started = [_pinned([sys.executable, "-c", "while True: pass"], heavier=True) for _ in range(3)]
    try:
        yield
    finally:
        for hog in started:
            hog.kill()
            hog.wait()


def _measure(argv: list[str]) -> tuple[float, float]:
    """(charged, wall) seconds of a process that runs `argv` to its end."""
    process = _pinned(argv)
    clock = TaskClock(process.pid).start()
    charged = wall = 0.0
    while process.poll() is None:
        charged, wall = clock.charged(), clock.wall()
        time.sleep(0.05)
    return charged, wall


def test_waiting_for_a_cpu_is_not_charged(hogs: None):
    charged, wall = _measure([sys.executable, "-c", SPIN.format(seconds=1.0)])
    assert charged < 0.75 * wall, (charged, wall)  # it shared its CPU with three hogs
    assert charged >= wall / MAX_STRETCH - 0.01, (charged, wall)  # never less than the cap allows


def test_sleeping_is_charged(hogs: None):
    charged, wall = _measure([sys.executable, "-c", "import time\ntime.sleep(1.5)"])
    assert charged >= 1.45, (charged, wall)  # the whole sleep, whatever its start-up waited for


@pytest.fixture
def pinned_worker(kit: Kit) -> Iterator[WorkerProcess]:
    """A warm worker whose processes all run on CPU, beside the hogs."""
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {CPU})
    try:
        process = WorkerProcess(worker_launch(kit, 0, sandbox=sandbox_works(kit)))
        process.start()
    finally:
        os.sched_setaffinity(0, saved)
    yield process
    process.stop()


def _task(kit: Kit, limit: float) -> TaskConfig:
    task = kit.assignment("nn_module").tasks[0]
    return dataclasses.replace(task, file="task.py", time_limit=limit, cpu_limit=limit * 4)


def test_the_sandboxed_task_is_charged_its_own_time_beside_hogs(kit: Kit, pinned_worker: WorkerProcess,
                                                                 hogs: None):
    """1 s of CPU work in a task limited to 3 s, on a CPU three heavier hogs share: a wall clock
    stopped it (the task got a tenth of the CPU); its own clock lets it finish."""
    session = SandboxSession(pinned_worker, _task(kit, 3.0))
    assert session.open({"task.py": b"VALUE = 1\n"}, PROBES).imported
    try:
        assert session.call("spin", seconds=1.0) == 1.0
    finally:
        session.close()


def test_a_sleeping_task_is_still_stopped_at_its_limit(kit: Kit, pinned_worker: WorkerProcess, hogs: None):
    session = SandboxSession(pinned_worker, _task(kit, 1.0))
    assert session.open({"task.py": b"VALUE = 1\n"}, PROBES).imported
    try:
        with pytest.raises(WorkerLost) as lost:
            session.call("nap", seconds=60.0)
        assert lost.value.reason == "time_limit"
    finally:
        session.close()


def test_the_kernel_is_read_only_where_the_wall_time_leaves_no_time(monkeypatch):
    """Far from the limit the wall time alone bounds what is charged (a wait is never charged more than
    it lasted), so `remaining` answers without reading schedstat; at the limit the kernel decides."""
    from autograder.sandbox.inside import clock as clock_module

    reads: list[int] = []
    real = clock_module.run_delay
    monkeypatch.setattr(clock_module, "run_delay", lambda pid: reads.append(pid) or real(pid))
    clock = TaskClock(os.getpid()).start()
    assert len(reads) == 1  # the baseline
    left = clock.remaining(60.0)
    assert 0.0 < left <= 60.0 and len(reads) == 1
    assert clock.remaining(0.0) <= 0.0 and len(reads) == 2  # no time left by the wall: the kernel says
    assert clock.charged() <= clock.wall() and len(reads) == 3  # charged: always from the kernel
