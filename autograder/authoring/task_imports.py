"""Which task files of an assignment import another task's file (`from alpha import alpha` in beta.py).

A student's folder holds every task file and grading gives each task's sandbox all of them, so such an
import works as written; the task that imports is then graded with the student's own function, and a
mistake or an import-time attack in the imported file can cost it too. The kit's tests allow exactly
that (docs/authors/authoring.md, "A task that uses another task's function"), so they ask here who
imports whom.
"""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.config import Assignment


def imported_modules(source: str) -> set[str]:
    """The top-level module names `source` imports anywhere (`import a.b` and `from a import x`: a)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def task_imports(assignment: Assignment, folder: Path | None = None) -> dict[str, frozenset[str]]:
    """Task id -> the ids of the other tasks whose files its file (in `folder`, by default the
    reference solutions) imports."""
    folder = folder or assignment.solutions
    modules = {Path(task.file).stem: task.id for task in assignment.tasks}
    uses: dict[str, frozenset[str]] = {}
    for task in assignment.tasks:
        path = folder / task.file
        names = imported_modules(path.read_text(encoding="utf-8")) if path.is_file() else set()
        uses[task.id] = frozenset(modules[m] for m in names if m in modules and modules[m] != task.id)
    return uses


def dependents(assignment: Assignment, task_id: str) -> frozenset[str]:
    """The tasks whose reference files import `task_id`'s file, directly or through another task."""
    uses = task_imports(assignment)
    found: set[str] = set()
    frontier = {task_id}
    while frontier:
        frontier = {t for t, used in uses.items() if used & frontier and t not in found and t != task_id}
        found |= frontier
    return frozenset(found)
