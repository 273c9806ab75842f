"""`autograder check` in a built folder: the folder names its own assignment (checks/manifest.json)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit_assignments import ASSIGNMENTS

from autograder.config import Kit
from autograder.errors import AutograderError
from autograder.manifest import find_checks, read_manifest


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_built_folder_is_its_assignment(kit: Kit, assignment: str):
    folder = kit.root / "assignments" / assignment
    for start in (folder, folder / "checks"):
        checks = find_checks(start)
        assert read_manifest(checks / "manifest.json").assignment == assignment


def test_a_folder_without_checks_is_refused_clearly(tmp_path: Path):
    with pytest.raises(AutograderError, match="checks"):
        find_checks(tmp_path)
