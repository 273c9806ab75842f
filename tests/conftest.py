"""Shared fixtures: the kit, and warm graders (sandboxed where bubblewrap works)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.config import Kit, load_kit
from autograder.engine import Grader
from autograder.errors import SandboxUnavailable
from autograder.sandbox import check_available

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / "nn_module"
STUBS = ROOT / "assignments" / "nn_module"


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
def grader(kit: Kit) -> Iterator[Grader]:
    """One warm, sandboxed Grader for the whole test session (bare only where bwrap is missing)."""
    with Grader(kit, "nn_module", sandbox=sandbox_works(kit)) as g:
        yield g


@pytest.fixture
def reference_copy(tmp_path: Path) -> Path:
    """A fresh submission folder holding the reference solutions."""
    folder = tmp_path / "submission"
    shutil.copytree(SOLUTIONS, folder, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    return folder
