"""One notebook code cell as module code: magics neutralised, experiments commented out."""

from __future__ import annotations

import ast
import builtins
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.pysource import parse_python
from autograder.submissions.files import shown

# Modules a graded notebook may import without a guard: the standard library and what workers have.
WORKER_MODULES = frozenset({"torch", "numpy"})
# Cell magics whose body is Python (the body is kept; the magic line is commented out).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "writefile"})
SKIPPED = "# [not run when graded] "


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


@dataclass(frozen=True)
class Piece:
    """What one code cell contributes: the text its task file gets, and what other files may share."""

    cell: Cell
    text: str
    parsed: bool = True
    names: frozenset[str] = frozenset()  # top-level def/class names
    magic_target: str = ""  # file name of a `%%writefile x.py` cell
    dropped: tuple[str, ...] = ()  # statements commented out
    imports: tuple[str, ...] = ()  # shared with every task file
    definitions: tuple[str, ...] = ()  # shared when the cell belongs to no task


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
        parse_python(source)
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


def module_code(cell: Cell, imported: set[str], local: set[str], given: dict[str, str]) -> Piece:
    """One code cell as module code: definitions kept, experiments and magics commented out.

    `imported` holds the names earlier cells imported (a later cell may use them); this cell's
    imports are added to it. `local` names the assignment's own modules, `given` maps a given
    function's name to its module.
    """
    text, target, is_python = neutralise_magics(cell.source)
    if not is_python:
        return Piece(cell, "")
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # kept as written: the grader reports the error for the file
        found = re.findall(r"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)", text, re.MULTILINE)
        return Piece(cell, text, parsed=False, names=frozenset(found), magic_target=target)
    lines = text.splitlines(keepends=True)
    defined: set[str] = set()
    dropped: list[str] = []
    imports: list[str] = []
    definitions: list[str] = []
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
            dropped.append(f"line {node.lineno}: `{shown(lines[node.lineno - 1].strip())[:60]}`")
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
            imports.append(statement)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
            if node.name in given:  # a notebook copy of a given function: use the kit's own
                imports.append(f"from {given[node.name]} import {node.name}")
            else:
                definitions.append(segment)
        elif index > 0 or not isinstance(node, ast.Expr):
            definitions.append(segment)
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
    return Piece(cell, "".join(out), True, frozenset(defined), target, tuple(dropped), tuple(imports),
                 tuple(definitions))
