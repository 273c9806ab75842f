"""`autograder check` without --assignment: a built folder of the kit names its own assignment."""

from __future__ import annotations

from pathlib import Path

from kit_assignments import ASSIGNMENTS

from autograder.config import Kit
from autograder.grading.selfcheck import folder_assignment


def test_a_built_folder_is_its_assignment(kit: Kit):
    for assignment in ASSIGNMENTS:
        folder = kit.root / "assignments" / assignment
        assert folder_assignment(kit, folder) == assignment
        assert folder_assignment(kit, folder / "checks") == assignment


def test_other_folders_fall_back_to_the_default(kit: Kit, tmp_path: Path):
    assert folder_assignment(kit, tmp_path) is None
    assert folder_assignment(kit, kit.root / "assignments") is None
    assert folder_assignment(kit, kit.root / "assignments" / "not_declared") is None
