"""Loading an assignment's graders: a package taken out of sys.modules is imported again."""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.config import load_kit
from autograder.grading.course import load_graders

KIT = load_kit(Path(__file__).resolve().parents[2])


def test_graders_load_again_after_their_package_left_sys_modules():
    """A clean-up that drops a folder's modules from sys.modules (tests/authoring/test_build.py's
    stub loader does, for the built folders) once left the cached package unable to import its checks
    (ModuleNotFoundError in the next load in that process)."""
    assignment = KIT.assignment("nn_module")
    first = load_graders(assignment)
    for name in [n for n in sys.modules if n.startswith("autograder_graders_")]:
        del sys.modules[name]  # only the graders' packages: a later load imports them again, as here
    again = load_graders(assignment)
    task = assignment.tasks[0].id
    assert [c.id for c in again.for_task(task)] == [c.id for c in first.for_task(task)]
    assert again.for_task(task)[0].function is not first.for_task(task)[0].function  # imported afresh
