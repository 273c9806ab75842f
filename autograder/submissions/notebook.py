"""Jupyter notebooks: build an nbgrader source notebook, and read a completed notebook as a submission.

Building: `build_source_notebook` writes one nbgrader *source* notebook (nbformat v4, cell metadata
schema 3) from the same reference solutions `autograder build` strips: a read-only cell with the given
files, then per task a description, a solution cell (the reference file, solution regions between
`### BEGIN SOLUTION` / `### END SOLUTION`) and a read-only autograded test cell of plain asserts worth
the task's points. `nbgrader generate_assignment` turns it into the students' version.

Reading: `collect_notebook` maps a notebook's code cells to the task files without running anything:
by nbgrader `grade_id` (= task id), else by the top-level names a cell defines (those of the task's
reference file). A notebook cell becomes part of a module the grader imports, so only definitions are
kept: imports, `def`, `class`, docstrings and assignments that run no notebook code. Other top-level
statements (experiments such as `model = TinyNet(3, 8, 2)` or `train_tinynet(...)`), IPython magics
and shell lines are commented out, and the notes say so.

Register in cli.py with `main.add_command(notebook_cli)`; this module does not import cli.py at import
time. To grade `.ipynb` submissions, `submission._collect` dispatches to `collect_notebook`.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache, wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from autograder.authoring.build import BEGIN_MARKER, END_MARKER, NOTEBOOK_DIR, find_regions, stub_items
from autograder.config import Assignment, Kit, TaskConfig, find_kit_root, load_kit
from autograder.errors import ConfigError
from autograder.submissions.collect import (
    MAX_FILE_BYTES,
    MAX_TOTAL_BYTES,
    Collected,
    _accept,
    _read_regular,
    shown,
)

SCHEMA_VERSION = 3
GIVEN_CELL_ID = "given"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# Modules a graded notebook may import without a guard: the standard library and what workers have.
WORKER_MODULES = frozenset({"torch", "numpy"})
# Cell magics whose body is Python (the body is kept; the magic line is commented out).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "writefile"})
SKIPPED = "# [not run when graded] "

F = TypeVar("F", bound=Callable[..., Any])


# -- building the source notebook -------------------------------------------------------------


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: float | None = None) -> dict[str, Any]:
    """nbgrader cell metadata, schema version 3 (keys as nbgrader writes them, sorted)."""
    meta: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked}
    if points is not None:
        meta["points"] = int(points) if float(points).is_integer() else points
    meta.update({"schema_version": SCHEMA_VERSION, "solution": solution, "task": False})
    return {"nbgrader": meta}


def _points(value: float) -> str:
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


def _imports_of(sources: Iterable[str]) -> list[str]:
    """The distinct top-level import statements of `sources`, in order of first appearance."""
    seen: list[str] = []
    for source in sources:
        for node in ast.parse(source).body:
            if isinstance(node, ast.Import | ast.ImportFrom) and getattr(node, "module", "") != "__future__":
                text = ast.unparse(node)
                if text not in seen:
                    seen.append(text)
    return seen


def _task_markdown(title: str, task: TaskConfig, source: str) -> str:
    lines = [f"## {title}", "", f"File `{task.file}`, {_points(task.points)} points. "
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
        sources[task.id] = text
    given = [(assignment.solutions / name).read_text(encoding="utf-8")
             for name in assignment.given if name.endswith(".py")]
    total = _points(assignment.max_score)
    given_files = [name for name in assignment.given if name.endswith(".py")]
    given_names = "imports" + (f", and the functions of {', '.join(given_files)}" if given_files else "")
    cells: list[dict[str, Any]] = [
        _markdown("intro", f"# {assignment.title} (`{assignment.id}`)\n\n"
                  f"{len(assignment.tasks)} tasks, {total} points. Run the cells in order. Write your code "
                  "where a cell says `YOUR CODE HERE`; the read-only cells (the given code and the tests) "
                  "cannot be changed, and each test cell is worth the points of its task.\n"),
        _code(GIVEN_CELL_ID, f"# Given: {given_names}. Run this cell first.\n"
              + "\n".join(_imports_of(sources.values())) + "\n\n\n"
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
        "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}},
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


# -- reading a completed notebook -------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One cell of a submitted notebook (1-based `number` as the notebook shows it)."""

    number: int
    kind: str
    source: str
    grade_id: str = ""
    grade: bool = False
    solution: bool = False

    @property
    def is_test(self) -> bool:
        """An nbgrader test cell: the instructor's code, never part of the student's files."""
        return self.grade and not self.solution


@dataclass
class _Piece:
    """What one code cell contributes: the text its task file gets, and what other files may share."""

    cell: Cell
    text: str
    parsed: bool = True
    names: set[str] = field(default_factory=set)  # top-level def/class names
    magic_target: str = ""  # file name of a `%%writefile x.py` cell
    dropped: list[str] = field(default_factory=list)  # statements commented out
    imports: list[str] = field(default_factory=list)  # shared with every task file
    definitions: list[str] = field(default_factory=list)  # shared when the cell belongs to no task


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def read_cells(data: bytes, label: str) -> tuple[list[Cell], str]:
    """The cells of a notebook file's bytes, or ([], problem) when it is not a readable notebook."""
    fix = "download it again from Jupyter or Colab (File > Download > .ipynb) and resubmit it"
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return [], f"`{label}` is not a Jupyter notebook (it is not UTF-8 text); {fix}"
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
        return [], f"`{label}` is not a valid notebook: its JSON is broken ({where}); {fix}"
    except RecursionError:
        return [], f"`{label}` is not a valid notebook: its JSON is nested too deeply; {fix}"
    if not isinstance(notebook, dict) or not isinstance(notebook.get("nbformat"), int):
        return [], f"`{label}` is JSON but not a Jupyter notebook (it has no `nbformat` version); {fix}"
    version = notebook["nbformat"]
    raw: Any = None
    if version == 4:
        raw = notebook.get("cells")
    elif version == 3 and isinstance(notebook.get("worksheets"), list):
        raw = [c for s in notebook["worksheets"] if isinstance(s, dict) for c in s.get("cells") or []]
    elif version != 3:
        return [], f"`{label}` is an nbformat {version} notebook; only versions 3 and 4 are read; {fix}"
    if not isinstance(raw, list):
        return [], f"`{label}` is not a valid notebook: it has no list of cells; {fix}"
    cells: list[Cell] = []
    for number, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            return [], f"`{label}` is not a valid notebook: cell {number} is not a cell; {fix}"
        metadata = _dict(item.get("metadata"))
        nbg = _dict(metadata.get("nbgrader"))
        grade_id = nbg["grade_id"] if isinstance(nbg.get("grade_id"), str) else ""
        source = _text(item["source"] if "source" in item else item.get("input"))  # v3 code cells: input
        cells.append(Cell(number, str(item.get("cell_type")), source, grade_id,
                          nbg.get("grade") is True, nbg.get("solution") is True))
    return cells, ""


@lru_cache(maxsize=32)
def _defined_names(path: Path, mtime: float) -> tuple[str, ...]:
    """The public top-level def/class names of a reference file (`mtime` keys the cache)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return tuple(node.name for node in tree.body if isinstance(node, kinds) and not node.name.startswith("_"))


def _names_in(path: Path) -> tuple[str, ...]:
    return _defined_names(path, path.stat().st_mtime) if path.is_file() else ()


def required_names(assignment: Assignment) -> dict[str, tuple[str, ...]]:
    """Task id -> the top-level names its reference file defines (what a student's cell defines)."""
    return {task.id: _names_in(assignment.solutions / task.file) for task in assignment.tasks}


def _given_names(assignment: Assignment) -> dict[str, str]:
    """Name -> given module, for the given .py files (a notebook's copy becomes an import of the kit's)."""
    out: dict[str, str] = {}
    for name in assignment.given:
        if name.endswith(".py"):
            for defined in _names_in(assignment.solutions / name):
                out.setdefault(defined, name.removesuffix(".py"))
    return out


# A line magic, a shell line, `x = !cmd` / `x = %magic`, or help (`obj?`, `?obj`).
_LINE_MAGIC = re.compile(
    r"^([ \t]*)(?:[%!]|[A-Za-z_][\w, ]*=[ \t]*[%!]|\?{1,2}[\w.]+[ \t]*$|[\w.]+\?{1,2}[ \t]*$)"
)


def neutralise_magics(source: str) -> tuple[str, str, bool]:
    """Comment out IPython magics and shell lines: (python source, `%%writefile` target, is_python).

    Source that parses as Python is returned unchanged (a `%` inside a string is never touched).
    A magic line becomes `pass  # [not run when graded] <line>`, which keeps an indented block valid.
    A cell magic whose body is not Python (`%%bash`, `%%html`, ...) makes the cell non-Python.
    """
    first, _, rest = source.lstrip("\r\n").partition("\n")
    if first.startswith("%%"):
        words = first[2:].split()
        magic = words[0] if words else ""
        target = Path(words[-1]).name if magic == "writefile" and len(words) > 1 else ""
        if magic not in PYTHON_CELL_MAGICS or (magic == "writefile" and not target.endswith(".py")):
            return "", "", False
        body, _, _ = neutralise_magics(rest)
        return f"{SKIPPED}{first.rstrip()}\n{body}", target, True
    try:
        ast.parse(source)
        return source, "", True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        match = _LINE_MAGIC.match(line)
        if match:
            indent = match.group(1)
            lines[i] = f"{indent}pass  {SKIPPED.strip()} {line[len(indent):].rstrip()}\n"
    return "".join(lines), "", True


_BUILTINS = frozenset(dir(builtins))
# Library calls a kept assignment may make at import: constructors (capitalised) and these.
SAFE_CALLS = frozenset({
    "device", "dtype", "tensor", "as_tensor", "array", "asarray", "zeros", "ones", "full", "empty", "arange",
    "linspace", "eye", "default_rng", "get_default_dtype", "manual_seed", "float32", "float64", "int64",
    "is_available",
})
SAFE_BUILTINS = frozenset({
    "int", "float", "str", "bool", "bytes", "tuple", "list", "dict", "set", "frozenset", "range", "len",
    "min", "max", "sum", "abs", "round", "sorted", "zip", "enumerate", "reversed", "object", "slice",
})


class _Scope:
    """Names a kept statement may use: imports of any earlier cell, and what this cell bound before it."""

    def __init__(self, imported: set[str]) -> None:
        self.imported = imported
        self.bound: set[str] = set()

    def knows(self, name: str) -> bool:
        return name in self.imported or name in self.bound or name in _BUILTINS

    def static(self, expr: ast.expr | None) -> bool:
        """True when evaluating `expr` at import runs no notebook code and no risky library call."""
        if expr is None or isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, ast.Name):
            return self.knows(expr.id)
        if isinstance(expr, ast.Attribute):
            return self.static(expr.value)
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):
            return all(self.static(e) for e in expr.elts)
        if isinstance(expr, ast.Dict):
            return all(self.static(e) for e in [*expr.keys, *expr.values])
        if isinstance(expr, ast.UnaryOp):
            return self.static(expr.operand)
        if isinstance(expr, ast.BinOp):
            return self.static(expr.left) and self.static(expr.right)
        if isinstance(expr, ast.BoolOp):
            return all(self.static(e) for e in expr.values)
        if isinstance(expr, ast.Compare):
            return all(self.static(e) for e in [expr.left, *expr.comparators])
        if isinstance(expr, ast.IfExp):
            return all(self.static(e) for e in (expr.test, expr.body, expr.orelse))
        if isinstance(expr, ast.Call):
            func = expr.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            library = (isinstance(func, ast.Attribute) and self.static(func.value)) or (
                isinstance(func, ast.Name) and (func.id in self.imported or func.id in _BUILTINS))
            safe = name[:1].isupper() or name in SAFE_CALLS or name in SAFE_BUILTINS
            args = [*expr.args, *(k.value for k in expr.keywords)]
            return library and safe and all(self.static(a) for a in args)
        return False

    def keep(self, node: ast.stmt, first: bool) -> bool:
        """Whether a top-level statement is a definition the grader may run when importing the file."""
        if isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef):
            return True
        if isinstance(node, ast.ClassDef):
            return True
        if isinstance(node, ast.Expr):  # a docstring; any other bare expression is an experiment
            return first and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = all(isinstance(n, ast.Name) or (isinstance(n, ast.Tuple) and all(
                isinstance(e, ast.Name) for e in n.elts)) for n in targets)
            return names and self.static(node.value)
        if isinstance(node, ast.Try):  # try: import x / except ImportError: ...
            inner = [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
            return all(isinstance(s, ast.Import | ast.ImportFrom | ast.Pass) for s in inner)
        return False


def _bound(node: ast.stmt) -> set[str]:
    """Names a kept statement binds at module level."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Try):
        return set().union(*(_bound(s) for s in node.body))
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def _optional_import(node: ast.stmt, local: set[str]) -> bool:
    """An import of a module the grading worker may not have (matplotlib, google.colab, ...)."""
    if isinstance(node, ast.ImportFrom):
        if node.level or node.module is None:
            return False
        tops = {node.module.split(".")[0]}
    elif isinstance(node, ast.Import):
        tops = {a.name.split(".")[0] for a in node.names}
    else:
        return False
    return not tops <= set(sys.stdlib_module_names) | WORKER_MODULES | local


def _guarded(statement: str) -> str:
    """`statement` (an import) that is skipped when its module is not installed."""
    why = "# not installed where the notebook is graded"
    return f"try:\n    {statement}\nexcept ImportError:  {why}\n    pass\n"


def _piece(cell: Cell, imported: set[str], local: set[str], given: dict[str, str]) -> _Piece:
    """One code cell as module code: definitions kept, experiments and magics commented out."""
    text, target, is_python = neutralise_magics(cell.source)
    if not is_python:
        return _Piece(cell, "")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # kept as written: the grader reports the error for the file
        names = set(re.findall(r"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)", text, re.MULTILINE))
        return _Piece(cell, text, parsed=False, names=names, magic_target=target)
    lines = text.splitlines(keepends=True)
    piece = _Piece(cell, "", magic_target=target)
    scope = _Scope(imported)
    kept: set[int] = set()
    replaced: dict[int, tuple[int, str]] = {}  # first line -> (last line, replacement text)
    spans = [(min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]),
              n.end_lineno or n.lineno) for n in tree.body]
    crowded = {line for i, (a, b) in enumerate(spans) for line in (a, b)
               if any(j != i and c <= line <= d for j, (c, d) in enumerate(spans))}
    for index, node in enumerate(tree.body):
        first, last = spans[index]
        segment = "".join(lines[first - 1:last])
        if not scope.keep(node, index == 0):
            piece.dropped.append(f"line {node.lineno}: `{shown(lines[node.lineno - 1].strip())[:60]}`")
            continue
        kept.update(range(first, last + 1))
        names = _bound(node)
        scope.bound |= names
        if isinstance(node, ast.Import | ast.ImportFrom | ast.Try):
            imported |= names
            statement = segment.strip() if isinstance(node, ast.Try) else ast.unparse(node)
            if _optional_import(node, local):
                statement = _guarded(statement).rstrip()
                if first not in crowded and last not in crowded:  # `import a; import b` stays as written
                    replaced[first] = (last, statement + "\n")
            piece.imports.append(statement)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            piece.names.add(node.name)
            if node.name in given:  # a notebook copy of a given function: use the kit's own
                piece.imports.append(f"from {given[node.name]} import {node.name}")
            else:
                piece.definitions.append(segment)
        elif index > 0 or not isinstance(node, ast.Expr):
            piece.definitions.append(segment)
    out: list[str] = []
    skip_until = 0
    for number, line in enumerate(lines, start=1):
        if number <= skip_until:
            continue
        if number in replaced:
            skip_until, replacement = replaced[number]
            out.append(replacement)
        elif number in kept or not line.strip() or line.lstrip().startswith("#"):
            out.append(line)
        else:
            out.append(SKIPPED + line)
    piece.text = "".join(out)
    return piece


def _assign(pieces: list[_Piece], assignment: Assignment) -> dict[str, list[_Piece]]:
    """Task id -> its cells: by nbgrader grade_id, by `%%writefile <task file>`, else by the names defined.

    A cell that defines names of several tasks (all the code in one cell) goes to each of them.
    """
    required = required_names(assignment)
    by_key = {t.module: t.id for t in assignment.tasks} | {t.id: t.id for t in assignment.tasks}
    by_file = {t.file: t.id for t in assignment.tasks}
    chosen: dict[str, list[_Piece]] = {t.id: [] for t in assignment.tasks}
    for piece in pieces:
        task = by_key.get(piece.cell.grade_id) or by_file.get(piece.magic_target)
        if task is not None:
            chosen[task].append(piece)
            continue
        for task_id, names in required.items():
            if piece.names & set(names):
                chosen[task_id].append(piece)
    return chosen


def notebook_files(data: bytes, label: str, assignment: Assignment, given: tuple[str, ...] = ()) -> Collected:
    """Map a notebook's bytes to the task files of `assignment` (nothing is run); `label` names it.

    For a notebook inside a zip or folder too. Never raises for anything in the notebook.
    """
    try:
        return _notebook_files(data, label, assignment, given)
    except (RecursionError, MemoryError):
        return Collected({}, (), f"`{label}` is too deeply nested or too large to read; submit the .py files")


def _notebook_files(data: bytes, label: str, assignment: Assignment, given: tuple[str, ...]) -> Collected:
    if len(data) > MAX_TOTAL_BYTES:
        return Collected({}, (), f"`{label}` is larger than {MAX_TOTAL_BYTES // (1024 * 1024)} MB; clear its "
                         "outputs (Edit > Clear Outputs of All Cells) and submit it again")
    cells, problem = read_cells(data, label)
    if problem:
        return Collected({}, (), problem)
    notes: list[str] = []
    local = {t.module for t in assignment.tasks} | {g.removesuffix(".py") for g in assignment.given}
    given_names = _given_names(assignment)
    imported: set[str] = set()
    pieces: list[_Piece] = []
    for cell in cells:
        if cell.kind != "code" or cell.is_test or not cell.source.strip():
            continue
        if len(cell.source.encode("utf-8", "replace")) > MAX_FILE_BYTES:
            notes.append(f"`{label}`: cell {cell.number} was ignored: its code is larger than "
                         f"{MAX_FILE_BYTES // 1024} KB.")
            continue
        pieces.append(_piece(cell, imported, local, given_names))
    chosen = _assign(pieces, assignment)
    required = required_names(assignment)
    if not any(chosen.values()):
        names = ", ".join(f"`{n}`" for names in required.values() for n in names)
        what = "no code cells" if not pieces else "no code cell that defines any of the assignment's names"
        fix = "write each task's code in a code cell of the notebook, or submit the .py files instead"
        return Collected({}, (), f"`{label}` has {what} ({names}); {fix}")
    used = {id(p) for ps in chosen.values() for p in ps}
    header: list[str] = []
    for piece in pieces:  # every cell's imports, then the definitions of cells that belong to no task
        header.extend(s for s in piece.imports if s not in header)
    for piece in pieces:
        if id(piece) not in used:
            header.extend(s for s in piece.definitions if s not in header)
    files: dict[str, bytes] = {}
    for task in assignment.tasks:
        if chosen[task.id]:
            text, task_notes = _task_file(task, chosen[task.id], header, required[task.id])
            notes.extend(f"`{label}`: {note}" for note in task_notes)
            _accept(task.file, text.encode("utf-8"), given, files, notes)
    missing = [t.id for t in assignment.tasks if not chosen[t.id]]
    if missing:
        notes.append(f"`{label}`: no cell was found for task(s) {', '.join(missing)}.")
    return Collected(files, tuple(notes), "" if files else f"`{label}` holds no code the grader can use")


def _task_file(task: TaskConfig, mine: list[_Piece], header: list[str],
               names: tuple[str, ...]) -> tuple[str, list[str]]:
    """One task file: `from __future__` lines, the shared header, then the task's cells in order."""
    notes: list[str] = []
    futures: list[str] = []
    parts: list[str] = []
    for piece in mine:
        body = []
        for line in piece.text.splitlines(keepends=True):
            if line.startswith("from __future__ import") and piece.parsed:
                futures.append(line.rstrip() + "\n")
                line = SKIPPED + line
            body.append(line)
        parts.append(f"# --- notebook cell {piece.cell.number} ---\n" + "".join(body).rstrip() + "\n")
        if not piece.parsed:
            notes.append(f"cell {piece.cell.number} (for `{task.file}`) is not valid Python; it is graded "
                         "as written, so the error is reported for that file.")
        if piece.dropped:
            listed = "; ".join(piece.dropped[:3]) + ("; ..." if len(piece.dropped) > 3 else "")
            notes.append(f"cell {piece.cell.number} (for `{task.file}`): top-level code that is not a "
                         f"definition is not run when grading ({listed}).")
    shared = [s for s in header if not s.startswith("from __future__")]
    futures += [s.rstrip() + "\n" for s in header if s.startswith("from __future__")]
    numbers = ", ".join(str(p.cell.number) for p in mine)
    text = "".join(dict.fromkeys(futures)) + f"# {task.file}: made from notebook cell(s) {numbers}.\n"
    if shared:
        text += "# --- imports and definitions from the notebook's other cells ---\n"
        blocks = [s.rstrip() + "\n" for s in shared]
        for index, block in enumerate(blocks):  # a blank line around each multi-line block
            multi = block.count("\n") > 1 or (index and blocks[index - 1].count("\n") > 1)
            text += ("\n" if multi and index else "") + block
        text += "\n\n"
    text += "\n\n".join(parts)
    found = set().union(*(p.names for p in mine))
    lost = [n for n in names if n not in found]
    if lost:
        notes.append(f"no cell defines {', '.join(f'`{n}`' for n in lost)} (needed in `{task.file}`).")
    return text, notes


def collect_notebook(
    path: Path, given: tuple[str, ...] = (), assignment: Assignment | None = None
) -> Collected:
    """A submitted `.ipynb` as task files; the notebook is read, never run. Never raises for its content.

    `assignment` defaults to the default assignment of the kit this package belongs to.
    """
    label = shown(path.name)
    try:
        if path.is_symlink():
            return Collected({}, (), f"`{label}` is a link; submit the notebook file itself")
        data = _read_regular(path, MAX_TOTAL_BYTES + 1)
        if data is None:
            return Collected({}, (), f"`{label}` is not a regular file; submit the .ipynb file itself")
        target = assignment or _default_assignment()
        return notebook_files(data, label, target, given or target.given)
    except (OSError, RecursionError, ValueError, MemoryError) as exc:
        return Collected({}, (), f"`{label}` could not be read ({shown(str(exc))})")


@lru_cache(maxsize=1)
def _default_assignment() -> Assignment:
    return load_kit(find_kit_root(Path(__file__).resolve().parents[1])).assignment()


def write_files(collected: Collected, folder: Path) -> list[Path]:
    """Write the mapped task files into `folder` (for grading them as a folder, or for a look)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in collected.files.items():
        (folder / name).write_bytes(data)
        written.append(folder / name)
    return written


# -- CLI ------------------------------------------------------------------------------------


def _friendly(fn: F) -> F:
    """cli.friendly, looked up when the command runs (so cli.py may import this module)."""

    @wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        from autograder.cli import friendly

        return friendly(fn)(*args, **kwargs)

    return run  # type: ignore[return-value]


def _kit(kit_dir: Path | None) -> Kit:
    return load_kit(find_kit_root(kit_dir))


_kit_option = click.option(
    "--kit", "kit_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="Folder holding grading.toml (default: found from here upwards).",
)


@click.group("notebook")
def notebook_cli() -> None:
    """Jupyter notebooks: build the nbgrader source notebook, split a submitted notebook into files."""


@notebook_cli.command("build")
@click.argument("assignment", required=False)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Notebook to write (default: ASSIGNMENT.ipynb here).")
@_kit_option
@_friendly
def build_command(assignment: str | None, out: Path | None, kit_dir: Path | None) -> None:
    """Write the nbgrader source notebook of ASSIGNMENT (put it in source/ASSIGNMENT/ of the course)."""
    kit = _kit(kit_dir)
    target = kit.assignment(assignment)
    path = build_source_notebook(kit.root, target.id, out or Path(f"{target.id}.ipynb"))
    click.echo(f"wrote {path} ({len(target.tasks)} tasks, {_points(target.max_score)} points); "
               f"release it with `nbgrader generate_assignment {target.id}`")


@notebook_cli.command("split")
@click.argument("notebook", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for the task files.")
@click.option("--assignment", default=None, help="Assignment id (default: the kit's default).")
@_kit_option
@_friendly
def split_command(notebook: Path, out: Path, assignment: str | None, kit_dir: Path | None) -> None:
    """Show how NOTEBOOK is graded: write its task files to OUT (nothing in it is run)."""
    target = _kit(kit_dir).assignment(assignment)
    collected = collect_notebook(notebook, target.given, target)
    for note in collected.notes:
        click.echo(f"note: {note}")
    if collected.problem:
        raise click.ClickException(collected.problem)
    for path in write_files(collected, out):
        click.echo(f"wrote {path}")
