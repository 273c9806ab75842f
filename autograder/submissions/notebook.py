"""Read a completed Jupyter notebook as a submission: its code cells become the task files.

`collect_notebook` maps a notebook's code cells to the task files without running anything:
by nbgrader `grade_id` (= task id), else by the top-level names a cell defines (those of the task's
reference file). A notebook cell becomes part of a module the grader imports, so only definitions are
kept: imports, `def`, `class`, docstrings and assignments that run no notebook code. Other top-level
statements (experiments such as `model = TinyNet(3, 8, 2)` or `train_tinynet(...)`), IPython magics
and shell lines are commented out, and the notes say so.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from autograder.config import Assignment, TaskConfig, find_kit_root, load_kit
from autograder.pysource import parse_python
from autograder.submissions.cells import SKIPPED, Cell, Piece, module_code
from autograder.submissions.files import (
    MAX_FILE_BYTES,
    MAX_TOTAL_BYTES,
    Collected,
    accept,
    read_regular,
    shown,
)


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


NOTEBOOK_METADATA = "autograder"  # the notebook metadata key naming its assignment: {"assignment": id}


def recorded_assignment(data: bytes) -> str | None:
    """The assignment id a notebook's metadata records (the source notebook writes it), if any."""
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    found = _dict(_dict(_dict(notebook).get("metadata")).get(NOTEBOOK_METADATA)).get("assignment")
    return found if isinstance(found, str) and found else None


def notebook_assignment(path: Path) -> str | None:
    """recorded_assignment of the notebook file at `path` (None when it cannot be read)."""
    try:
        return recorded_assignment(path.read_bytes())
    except OSError:
        return None


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
    tree = parse_python(path.read_text(encoding="utf-8"), filename=str(path))
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return tuple(node.name for node in tree.body if isinstance(node, kinds) and not node.name.startswith("_"))


def _names_in(path: Path) -> tuple[str, ...]:
    return _defined_names(path, path.stat().st_mtime) if path.is_file() else ()


def required_names(assignment: Assignment) -> dict[str, tuple[str, ...]]:
    """Task id -> the top-level names its reference file defines (what a student's cell defines)."""
    return {task.id: _names_in(assignment.solutions / task.file) for task in assignment.tasks}


def _given_names(assignment: Assignment) -> dict[str, str]:
    return given_names(assignment.solutions, assignment.given)


def given_names(folder: Path, given: tuple[str, ...]) -> dict[str, str]:
    """Name -> given module, for the given .py files in `folder` (a notebook's copy becomes an import)."""
    out: dict[str, str] = {}
    for name in given:
        if name.endswith(".py"):
            for defined in _names_in(folder / name):
                out.setdefault(defined, name.removesuffix(".py"))
    return out


def _assign(pieces: list[Piece], assignment: Assignment,
            required: dict[str, tuple[str, ...]]) -> dict[str, list[Piece]]:
    """Task id -> its cells: by nbgrader grade_id, by `%%writefile <task file>`, else by the names defined.

    A cell that defines names of several tasks (all the code in one cell) goes to each of them.
    """
    by_key = {t.module: t.id for t in assignment.tasks} | {t.id: t.id for t in assignment.tasks}
    by_file = {t.file: t.id for t in assignment.tasks}
    chosen: dict[str, list[Piece]] = {t.id: [] for t in assignment.tasks}
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
    return cells_files(cells, label, assignment, given, required_names(assignment), _given_names(assignment))


def cells_files(cells: list[Cell], label: str, assignment: Assignment, given: tuple[str, ...],
                required: dict[str, tuple[str, ...]], given_names: dict[str, str]) -> Collected:
    """Map code cells to the task files of `assignment`: `required` gives each task's names, `given_names`
    the given modules' (a notebook's copy of one becomes an import). Also what a kernel ran (check())."""
    notes: list[str] = []
    local = {t.module for t in assignment.tasks} | {g.removesuffix(".py") for g in assignment.given}
    imported: set[str] = set()
    pieces: list[Piece] = []
    for cell in cells:
        if cell.kind != "code" or cell.is_test or not cell.source.strip():
            continue
        if len(cell.source.encode("utf-8", "replace")) > MAX_FILE_BYTES:
            notes.append(f"`{label}`: cell {cell.number} was ignored: its code is larger than "
                         f"{MAX_FILE_BYTES // 1024} KB.")
            continue
        pieces.append(module_code(cell, imported, local, given_names))
    chosen = _assign(pieces, assignment, required)
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
            own = [s for s in header if not _imports_module(s, task.module)]  # never itself
            own += _cross_imports(task, chosen, assignment)
            text, task_notes = _task_file(task, chosen[task.id], own, required[task.id])
            notes.extend(f"`{label}`: {note}" for note in task_notes)
            accept(task.file, text.encode("utf-8"), given, files, notes)
    missing = [t.id for t in assignment.tasks if not chosen[t.id]]
    if missing:
        notes.append(f"`{label}`: no cell was found for task(s) {', '.join(missing)}.")
    return Collected(files, tuple(notes), "" if files else f"`{label}` holds no code the grader can use")


def _imports_module(statement: str, module: str) -> bool:
    """Whether an import statement of the header imports `module` (a task's own file)."""
    try:
        nodes = parse_python(statement).body
    except SyntaxError:
        return False
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == module:
            return True
        if isinstance(node, ast.Import) and any(a.name == module for a in node.names):
            return True
    return False


def _cross_imports(task: TaskConfig, chosen: dict[str, list[Piece]], assignment: Assignment) -> list[str]:
    """`from alpha import alpha` for each name a task's cells use that another task's cells define: in
    the notebook one kernel holds both, in the files the task imports it as its .py version does."""
    mine = chosen[task.id]
    defined = set().union(*(p.names for p in mine)) if mine else set()
    used: set[str] = set()
    for piece in mine:
        try:
            used |= {n.id for n in ast.walk(parse_python(piece.text)) if isinstance(n, ast.Name)}
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    lines = []
    for other in assignment.tasks:
        if other.id == task.id:
            continue
        theirs = set().union(*(p.names for p in chosen[other.id])) if chosen[other.id] else set()
        for name in sorted((theirs & used) - defined):
            lines.append(f"from {other.module} import {name}")
    return lines


def _task_file(task: TaskConfig, mine: list[Piece], header: list[str],
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
        data = read_regular(path, MAX_TOTAL_BYTES + 1)
        if data is None:
            return Collected({}, (), f"`{label}` is not a regular file; submit the .ipynb file itself")
        target = assignment or _default_assignment()
        collected = notebook_files(data, label, target, given or target.given)
        recorded = recorded_assignment(data)
        if recorded and recorded != target.id:  # the wrong notebook for this assignment, most likely
            note = f"`{label}` was made for assignment `{shown(recorded)}`; it is graded as `{target.id}`"
            collected = dataclasses.replace(collected, notes=(*collected.notes, note))
        return collected
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
