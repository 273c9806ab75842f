"""Build the nbgrader source notebook of an assignment from its marked reference solutions.

`build_source_notebook` writes one nbgrader *source* notebook (nbformat v4, cell metadata schema 3)
from the same reference solutions `autograder build` strips: a read-only cell with the given files,
then per task a description, a solution cell (the reference file, solution regions between
`### BEGIN SOLUTION` / `### END SOLUTION`) and a read-only autograded test cell of plain asserts worth
the task's points (graders/notebook/test_<task>.py). `nbgrader generate_assignment` turns it into the
students' version.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from autograder.authoring.build import NOTEBOOK_DIR
from autograder.authoring.markers import BEGIN_MARKER, END_MARKER, find_regions, stub_items
from autograder.config import Assignment, TaskConfig, load_kit
from autograder.errors import ConfigError
from autograder.submissions.notebook import NOTEBOOK_METADATA

SCHEMA_VERSION = 3
GIVEN_CELL_ID = "given"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: float | None = None) -> dict[str, Any]:
    """nbgrader cell metadata, schema version 3 (keys as nbgrader writes them, sorted)."""
    meta: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked}
    if points is not None:
        meta["points"] = int(points) if float(points).is_integer() else points
    meta.update({"schema_version": SCHEMA_VERSION, "solution": solution, "task": False})
    return {"nbgrader": meta}


def points_text(value: float) -> str:
    """Points as the notebook shows them: `15`, `7.5`."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _task_title(source: str, task: TaskConfig) -> str:
    """`Task tinynet: ...` from the module docstring's first line (the file name if there is none)."""
    doc = ast.get_docstring(ast.parse(source)) or ""
    line = doc.strip().splitlines()[0] if doc.strip() else ""
    summary = line.split(":", 1)[1].strip() if ":" in line else line
    summary = (summary[:1].upper() + summary[1:]).rstrip(".")
    return f"Task `{task.id}`: {summary}" if summary else f"Task `{task.id}` ({task.file})"


def notebook_checks(assignment: Assignment, task: TaskConfig) -> str:
    """The plain-assert test cell of `task`: the assignment's graders/notebook/test_<task>.py."""
    own = assignment.graders / NOTEBOOK_DIR / f"test_{task.id}.py"
    if not own.is_file():
        raise ConfigError(
            f"no notebook test cell for task {task.id!r}: write {own} with plain asserts "
            "(they run in the student's kernel after the task's cell)"
        )
    return own.read_text(encoding="utf-8")


def _task_import(node: ast.stmt, tasks: frozenset[str]) -> bool:
    """An import of one of the assignment's task modules (`from alpha import alpha`)."""
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").split(".")[0] in tasks
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] in tasks for a in node.names)


def without_task_imports(source: str, tasks: frozenset[str]) -> str:
    """`source` with its top-level imports of task modules dropped: in the notebook the earlier task's
    cell defines the name in the same kernel (and `notebook split` puts the import back in the file)."""
    lines = source.splitlines(keepends=True)
    for node in reversed(ast.parse(source).body):
        if _task_import(node, tasks):
            del lines[node.lineno - 1:(node.end_lineno or node.lineno)]
    return "".join(lines)


def _imports_of(sources: Iterable[str], tasks: frozenset[str] = frozenset()) -> list[str]:
    """The distinct top-level import statements of `sources`, in order of first appearance (imports of
    the task modules `tasks` left out)."""
    seen: list[str] = []
    for source in sources:
        for node in ast.parse(source).body:
            if _task_import(node, tasks):
                continue
            if isinstance(node, ast.Import | ast.ImportFrom) and getattr(node, "module", "") != "__future__":
                text = ast.unparse(node)
                if text not in seen:
                    seen.append(text)
    return seen


def _task_markdown(title: str, task: TaskConfig, source: str) -> str:
    lines = [f"## {title}", "", f"File `{task.file}`, {points_text(task.points)} points. "
             "Complete the code cell below where it says `YOUR CODE HERE`; the read-only test cell "
             "after it checks your work.", ""]
    for item in stub_items(source, task.file):
        if item.kind == "class":
            methods = ", ".join(f"`{m}`" for m in item.methods)
            lines.append(f"- `class {item.signature}` (methods {methods}): {item.summary}")
        else:
            lines.append(f"- `{item.signature}`: {item.summary}")
    return "\n".join(lines).rstrip() + "\n"


def source_notebook(kit_root: Path, assignment_id: str) -> dict[str, Any]:
    """The nbgrader source notebook of an assignment, as nbformat v4 JSON data (nothing written)."""
    assignment = load_kit(Path(kit_root)).assignment(assignment_id)
    if assignment.exam is not None:
        raise ConfigError(
            f"assignments.{assignment.id} is an exam, where every student gets their own numbers; a "
            "notebook holds one set of numbers, so none is built for it: build one folder per student "
            f"with `autograder exam build --roster ROSTER.csv --out DIR --assignment {assignment.id}`"
        )
    sources: dict[str, str] = {}
    modules = frozenset(task.module for task in assignment.tasks)
    for task in assignment.tasks:
        path = assignment.solutions / task.file
        if not path.is_file():
            raise ConfigError(f"grading.toml: task {task.id} names {task.file}, not found in {path.parent}")
        text = path.read_text(encoding="utf-8")
        if not find_regions(text, f"solutions/{assignment.id}/{task.file}"):
            raise ConfigError(
                f"solutions/{assignment.id}/{task.file} has no '{BEGIN_MARKER}' / '{END_MARKER}' region; "
                "the notebook's solution cell would hold no answer to write"
            )
        sources[task.id] = without_task_imports(text, modules)
    given = [(assignment.solutions / name).read_text(encoding="utf-8")
             for name in assignment.given if name.endswith(".py")]
    total = points_text(assignment.max_score)
    given_files = [name for name in assignment.given if name.endswith(".py")]
    given_names = "imports" + (f", and the functions of {', '.join(given_files)}" if given_files else "")
    cells: list[dict[str, Any]] = [
        _markdown("intro", f"# {assignment.title} (`{assignment.id}`)\n\n"
                  f"{len(assignment.tasks)} tasks, {total} points. Run the cells in order. Write your code "
                  "where a cell says `YOUR CODE HERE`; the read-only cells (the given code and the tests) "
                  "cannot be changed, and each test cell is worth the points of its task.\n\n"
                  # nbgrader scores a test cell by whether it raises: one cell per task is all or
                  # nothing, while the kit's own grading gives the points of each passing check.
                  "**Scoring:** nbgrader gives a task's test cell all of its points or none: one failing "
                  "check in it costs the whole task. `autograder grade` (and `autograder check`) give "
                  "partial credit, the points of every check that passes; the grade your instructor "
                  "publishes says which of the two it is.\n"),
        _code(GIVEN_CELL_ID, f"# Given: {given_names}. Run this cell first.\n"
              + "\n".join(_imports_of(sources.values(), modules)) + "\n\n\n"
              + "\n\n".join(text.strip() + "\n" for text in given),
              _meta(GIVEN_CELL_ID, locked=True)),
    ]
    for task in assignment.tasks:
        text = sources[task.id]
        cells.append(_markdown(f"describe_{task.id}", _task_markdown(_task_title(text, task), task, text),
                               _meta(f"describe_{task.id}", locked=True)))
        cells.append(_code(task.id, text, _meta(task.id, solution=True)))
        checks = notebook_checks(assignment, task)
        cells.append(_code(f"test_{task.id}", checks, _meta(f"test_{task.id}", grade=True, locked=True,
                                                              points=task.points)))
    return {
        "cells": cells,
        # Which assignment the notebook is: `notebook split` and notebook grading read it from here.
        "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"},
                     NOTEBOOK_METADATA: {"assignment": assignment.id}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _markdown(cell_id: str, source: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": metadata or {}, "source": source}


def _code(cell_id: str, source: str, metadata: dict[str, Any]) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": None, "id": cell_id, "metadata": metadata,
            "outputs": [], "source": source.rstrip("\n")}


def build_source_notebook(kit_root: Path, assignment_id: str, out: Path) -> Path:
    """Write the nbgrader source notebook of `assignment_id` to `out` (validated nbformat v4)."""
    import nbformat

    data = source_notebook(kit_root, assignment_id)
    notebook = nbformat.from_dict(data)
    nbformat.validate(notebook)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
    return out
