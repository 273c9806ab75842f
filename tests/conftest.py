"""Shared fixtures: the kit, and warm graders (sandboxed where bubblewrap works)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from autograder.batch import stamped
from autograder.config import Assignment, Kit, load_kit
from autograder.errors import SandboxUnavailable
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions
from autograder.grading.results import CheckResult, SubmissionResult, TaskResult
from autograder.ledger.signing import KEY_ENV, load_key
from autograder.sandbox.launch import check_available

ROOT = Path(__file__).resolve().parents[1]
# The LTI fixtures of the service's and the platforms' tests (tool_key, platform, service, lms), once.
pytest_plugins = ["lti_fixtures"]
# The tests' own signing key: never the instructor's ~/.config one, made on first use like it.
os.environ.setdefault(KEY_ENV, str(Path(tempfile.mkdtemp(prefix="autograder-tests-")) / "signing.key"))
load_key()  # made now: a test that only verifies (an export) finds it, whatever ran before it
# `make test` sets it (its setup installs Chromium, chromedriver and edX's LTI code): there a missing
# one fails. Elsewhere (`make setup`, then `pytest tests -k <id>`) the tests that need one skip, saying why.
REQUIRE_BROWSER = "AUTOGRADER_REQUIRE_BROWSER"
# Set by the done-test of a per-assignment run (tests/authoring/test_scaffolded_kit.py): the browser is
# looked for as on a machine set up by `make setup`, where it is not installed (PATH stays whole: the
# sandbox's bwrap and setpriv are found at /usr/bin as always).
NO_BROWSER = "AUTOGRADER_TEST_NO_BROWSER"
SOLUTIONS = ROOT / "solutions" / "nn_module"
STUBS = ROOT / "assignments" / "nn_module"


def required_or_skip(reason: str) -> None:
    """Skip the calling test (or module) for `reason`, a missing test dependency; fail where
    AUTOGRADER_REQUIRE_BROWSER=1 (make test), whose setup installs it."""
    if os.environ.get(REQUIRE_BROWSER) == "1":
        pytest.fail(f"{reason}; {REQUIRE_BROWSER}=1 (make test) requires it", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def browser(*programs: str) -> list[str]:
    """The paths of `programs` ("chromium", "chromedriver") on PATH, or skip the test that needs them
    (`required_or_skip`): a per-assignment run needs no browser."""
    found = {name: None if os.environ.get(NO_BROWSER) == "1" else shutil.which(name) for name in programs}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        required_or_skip(f"{' and '.join(missing)} not found: this test drives a browser "
                         "(AUTOGRADER_BROWSER=1 scripts/setup installs it)")
    return [str(path) for path in found.values()]


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """tests/lms_openedx/ needs Open edX's LTI code (AUTOGRADER_LMS_OPENEDX=1 scripts/setup): without
    it the folder is left out, said in the header, not an error of the whole collection."""
    if collection_path.name == "lms_openedx" and collection_path.parent == ROOT / "tests":
        if not LMS_OPENEDX and os.environ.get(REQUIRE_BROWSER) != "1":
            return True
    return None


DURATIONS = ROOT / "tests" / "durations.json"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest test files first (tests/durations.json, scripts/record-test-durations): `make
    test` hands out whole files in this order (--no-loadscope-reorder), so no long file starts last
    and keeps one process busy after the others are done. A file not on record starts first."""
    try:
        seconds: dict[str, float] = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return

    def slowness(item: pytest.Item) -> float:
        name = item.path.relative_to(ROOT).as_posix() if item.path.is_relative_to(ROOT) else ""
        return -seconds.get(name, float("inf"))

    items.sort(key=slowness)  # stable: a file's own tests keep their order


def pytest_report_header() -> str | None:
    if LMS_OPENEDX or os.environ.get(REQUIRE_BROWSER) == "1":
        return None
    return ("tests/lms_openedx/ not collected: lti-consumer-xblock is not installed "
            "(AUTOGRADER_LMS_OPENEDX=1 scripts/setup installs it)")


LMS_OPENEDX = all(importlib.util.find_spec(name) is not None for name in ("lti_consumer", "rest_framework"))


def sandbox_works(kit: Kit) -> bool:
    try:
        check_available(kit.sandbox.uid_base)
    except SandboxUnavailable:
        return False
    return True


@pytest.fixture(scope="session")
def kit() -> Kit:
    return load_kit(ROOT)


@pytest.fixture(scope="session")
def assignment_grader(kit: Kit) -> Iterator[Callable[[str], Grader]]:
    """`assignment_grader(id)`: one warm, sandboxed Grader per assignment for the whole session
    (bare only where bwrap is missing), started the first time a test asks for that assignment."""
    graders: dict[str, Grader] = {}
    with ExitStack() as stack:

        def get(assignment_id: str) -> Grader:
            if assignment_id not in graders:
                graders[assignment_id] = stack.enter_context(
                    Grader(kit, assignment_id, GradeOptions(sandbox=sandbox_works(kit)))
                )
            return graders[assignment_id]

        yield get


@pytest.fixture(scope="session")
def grader(assignment_grader: Callable[[str], Grader]) -> Grader:
    """nn_module's warm, sandboxed Grader for the whole test session."""
    return assignment_grader("nn_module")


@pytest.fixture
def reference_copy(tmp_path: Path) -> Path:
    """A fresh submission folder holding the reference solutions."""
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS, folder, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    return folder


def make_result(assignment: Assignment, student: str, lost: dict[str, float] | None = None,
                feedback: str = "expected 3, got 4") -> SubmissionResult:
    """A hand-built result: a public and a hidden half per task; `lost` comes off the hidden one."""
    lost = lost or {}
    tasks = []
    for task in assignment.tasks:
        half = task.points / 2
        hidden_score = max(half - lost.get(task.id, 0.0), 0.0)
        checks = (
            CheckResult(f"{task.id}.public", task.id, "public", f"{task.id} works", half, half, True),
            CheckResult(f"{task.id}.hidden", task.id, "hidden", f"{task.id} edge cases", hidden_score, half,
                        False, "" if hidden_score == half else feedback,
                        "" if hidden_score == half else f"{task.id}.wrong"),
        )
        tasks.append(TaskResult(task.id, task.points, checks))
    result = SubmissionResult(student, assignment.id, tuple(tasks), (), 1.5)
    # Signed like a graded one (with the tests' key), so exports of it verify.
    key = (hashlib.sha256(f"{student}{sorted(lost.items())}".encode()).hexdigest(),
           hashlib.sha256(b"hand-built").hexdigest())
    return stamped(result, key, load_key())


def seal(out: Path) -> Path:
    """OUT's signed list of files as `grade` would have written it, for an OUT a test wrote by hand."""
    from autograder.output import sealed

    sealed.record(out, [out / name for name in sealed.files_on_disk(out)], load_key())
    return out
