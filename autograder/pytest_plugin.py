"""Run an assignment's graders with plain pytest against one submission, for debugging.

    pytest solutions/<id>/graders --submission path/to/student [--no-sandbox]

A graders folder's conftest.py imports the fixtures from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autograder.config import find_kit_root, load_kit
from autograder.grading.challenge import Challenge, graders_secret
from autograder.grading.course import load_graders, read_probes
from autograder.grading.grader import worker_launch
from autograder.sandbox.client import WorkerProcess
from autograder.sandbox.local import InProcessSession
from autograder.sandbox.session import SandboxSession
from autograder.submissions.collect import collect


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder")
    group.addoption("--submission", type=Path, help="The student's folder or zip to grade.")
    group.addoption("--no-sandbox", action="store_true", help="Run student code without isolation.")
    group.addoption(
        "--in-process", action="store_true",
        help="Import student code into the pytest process itself (trusted code; the usual naive setup).",
    )


def _graders_folder(request: pytest.FixtureRequest) -> Path:
    path = Path(str(request.node.path)).resolve()
    while path.parent != path and not ((path / "probes.py").is_file() or (path / "probes").is_dir()):
        path = path.parent
    return path


@pytest.fixture(scope="session")
def _autograder_worker(request: pytest.FixtureRequest) -> Iterator[WorkerProcess]:
    kit = load_kit(find_kit_root(Path(str(request.config.rootpath))))
    trusted = request.config.getoption("no_sandbox") or request.config.getoption("in_process")
    launch = worker_launch(kit, 0, sandbox=not trusted)
    worker = WorkerProcess(launch)
    yield worker
    worker.stop()


@pytest.fixture(scope="module")
def worker(
    request: pytest.FixtureRequest, _autograder_worker: WorkerProcess
) -> Iterator[SandboxSession | InProcessSession]:
    """The task's sandboxed worker for the module's task (`test_<task>.py`), submission imported."""
    submission = request.config.getoption("submission")
    if submission is None:
        pytest.skip("pass --submission PATH to run graders against a submission")
    folder = _graders_folder(request)
    kit = load_kit(find_kit_root(folder))
    assignment = next(
        a for a in kit.assignments.values() if folder.is_relative_to(a.root) and a.id in folder.parts
    )
    task = assignment.task(Path(str(request.node.path)).stem.removeprefix("test_"))
    collected = collect(Path(submission), assignment.given)
    given = {name: (assignment.solutions / name).read_bytes() for name in assignment.given}
    probes = read_probes(folder)
    if request.config.getoption("in_process"):
        tmp = request.getfixturevalue("tmp_path_factory").mktemp(task.id)
        for name, data in {**collected.files, **given}.items():
            (tmp / name).write_bytes(data)
        yield InProcessSession(task.id, tmp, task.module, probes)
        return
    session = SandboxSession(_autograder_worker, task)
    session.open({**collected.files, **given}, probes)
    yield session
    session.close()


@pytest.fixture(scope="module")
def params(request: pytest.FixtureRequest) -> Any:
    folder = _graders_folder(request)
    kit = load_kit(find_kit_root(folder))
    assignment = next(a for a in kit.assignments.values() if a.id in folder.parts)
    return load_graders(assignment, folder).params


@pytest.fixture
def challenge(request: pytest.FixtureRequest) -> Challenge:
    """The check's hidden inputs, drawn as the kit's grading draws them (grading/challenge.py)."""
    folder = _graders_folder(request)
    task = Path(str(request.node.path)).stem.removeprefix("test_")
    name = request.node.originalname.removeprefix("test_")
    return Challenge(graders_secret(folder), f"{task}.{name}")
