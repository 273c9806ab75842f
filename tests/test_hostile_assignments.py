"""Hostile submissions against every assignment, in the sandbox: the attacked task scores 0 with the
verdict a correct grader gives, every other task keeps full marks (but the tasks whose files import the
attacked one: docs/authors/authoring.md, "A task that uses another task's function"), and a clean submission
graded right after still scores 100. (tests/test_hostile.py is the full suite, on one assignment.)"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from kit_assignments import ASSIGNMENTS

from autograder.authoring.task_imports import dependents
from autograder.grading.grader import Grader

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = Path(__file__).resolve().parent / "hostile"
# Import-time attacks that fit any task file: (case, message keys every failed check must have).
CASES = [
    ("exit_at_import", {"engine.exited"}),
    ("sys_exit_at_import", {"common.import_error", "engine.import_error"}),
    ("exec_shell", {"common.import_error", "engine.import_error"}),
    ("memory_python", {"common.import_error", "engine.import_error"}),
    ("monkeypatch_torch", None),  # whatever it breaks, it scores 0 on its task only
    ("forge_spies", {"engine.tampered"}),
]


def reference(folder: Path, assignment: str) -> Path:
    shutil.copytree(ROOT / "solutions" / assignment, folder,
                    ignore=shutil.ignore_patterns("graders", "__pycache__"))
    return folder


@pytest.mark.parametrize(("case", "allowed"), CASES, ids=[c for c, _ in CASES])
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_hostile_task_file(assignment_grader: Callable[[str], Grader], tmp_path: Path, assignment: str,
                           case: str, allowed: set[str] | None) -> None:
    grader = assignment_grader(assignment)
    assert grader.options.sandbox, "the hostile cases run only in the sandbox"
    for task in grader.assignment.tasks[:1] + grader.assignment.tasks[-1:]:
        folder = reference(tmp_path / f"{task.id}-attacked", assignment)
        (folder / task.file).write_text((HOSTILE / f"{case}.py.txt").read_text(encoding="utf-8"))
        result = grader.grade(folder, student="mallory")
        importers = dependents(grader.assignment, task.id)
        for graded in result.tasks:
            if graded.task in importers:  # they import the attacked file: its attack reaches them
                continue
            if graded.task != task.id:
                assert graded.score == graded.max_score, (graded.task, [c.feedback for c in graded.checks])
                continue
            assert graded.score == 0, [(c.check_id, c.score) for c in graded.checks]
            failed = {c.message_key for c in graded.checks if not c.passed}
            if allowed is not None:
                assert failed <= allowed, failed
    clean = grader.grade(reference(tmp_path / "clean", assignment), student="clean")
    assert clean.score == clean.max_score
