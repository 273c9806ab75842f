"""Solution markers in reference files: the regions between them, stubs without them, what they hide."""

from __future__ import annotations

import ast
import copy
import json
import re
from dataclasses import dataclass

from autograder.errors import MarkerError

BEGIN_MARKER = "### BEGIN SOLUTION"
END_MARKER = "### END SOLUTION"

# One line with its ending; Python itself only breaks lines at \r\n, \r and \n.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass(frozen=True)
class Region:
    """One solution region: the 1-based lines of its two markers and the BEGIN line's indent."""

    begin: int
    end: int
    indent: str


@dataclass(frozen=True)
class Scope:
    """A def or class of the reference source: qualified name, kind and the lines it covers."""

    name: str
    kind: str  # "def" or "class"
    first: int
    last: int
    column: int


@dataclass(frozen=True)
class StubItem:
    """A top-level class or function a student completes, as listed in the README."""

    name: str
    kind: str  # "class" or "function"
    signature: str
    summary: str
    methods: tuple[str, ...]


def split_lines(source: str) -> list[str]:
    """Split `source` into lines that keep their line endings, as Python numbers them."""
    return _LINE.findall(source)


def has_markers(source: str) -> bool:
    """True if any line of `source` is a solution marker."""
    return any(line.strip().startswith((BEGIN_MARKER, END_MARKER)) for line in split_lines(source))


def find_regions(source: str, filename: str) -> list[Region]:
    """Return the solution regions of `source`; MarkerError if markers nest or do not pair up."""
    regions: list[Region] = []
    opened: tuple[int, str] | None = None
    for number, line in enumerate(split_lines(source), start=1):
        text = line.strip()
        if text.startswith(BEGIN_MARKER):
            if opened is not None:
                raise MarkerError(
                    f"{filename}:{number}: '{BEGIN_MARKER}' inside the region opened at line "
                    f"{opened[0]}; regions cannot nest. Close that region with '{END_MARKER}' "
                    "before opening a new one."
                )
            opened = (number, line[: len(line) - len(line.lstrip())])
        elif text.startswith(END_MARKER):
            if opened is None:
                raise MarkerError(
                    f"{filename}:{number}: '{END_MARKER}' without a '{BEGIN_MARKER}' before it; "
                    "add the missing BEGIN marker above the solution code or delete this line."
                )
            regions.append(Region(opened[0], number, opened[1]))
            opened = None
    if opened is not None:
        raise MarkerError(
            f"{filename}:{opened[0]}: '{BEGIN_MARKER}' is never closed; add '{END_MARKER}' "
            "on its own line after the solution code."
        )
    return regions


def _parse(source: str, filename: str) -> ast.Module:
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as err:
        raise MarkerError(
            f"{filename}:{err.lineno}: the reference solution is not valid Python ({err.msg}); "
            "fix it before building the stubs."
        ) from err


def _scopes(tree: ast.Module, line_count: int) -> list[Scope]:
    """Every def and class, with its extent stretched over trailing comments in its body."""
    starts = sorted(
        (node.lineno, node.col_offset) for node in ast.walk(tree) if isinstance(node, ast.stmt)
    )
    found: list[Scope] = []

    def visit(parent: ast.AST, prefix: str) -> None:
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                end = node.end_lineno or node.lineno
                later = [line for line, col in starts if line > end and col <= node.col_offset]
                last = later[0] - 1 if later else line_count
                kind = "class" if isinstance(node, ast.ClassDef) else "def"
                name = f"{prefix}{node.name}"
                found.append(Scope(name, kind, node.lineno, last, node.col_offset))
                visit(node, f"{name}.")
            else:
                visit(node, prefix)

    visit(tree, "")
    return found


def _enclosing(scopes: list[Scope], region: Region) -> Scope | None:
    """The innermost def or class whose body holds the region's BEGIN line."""
    width = len(region.indent.expandtabs())
    inside = [s for s in scopes if s.first < region.begin <= s.last and width > s.column]
    return max(inside, key=lambda s: s.first, default=None)


def strip_solutions(source: str, task: str, filename: str) -> str:
    """Replace every solution region of `source` by `raise NotImplementedError("<task>: ...")`."""
    regions = find_regions(source, filename)
    lines = split_lines(source)
    scopes = _scopes(_parse(source, filename), len(lines)) if regions else []
    out: list[str] = []
    cursor = 0
    for region in regions:
        scope = _enclosing(scopes, region)
        if scope is None or scope.kind != "def":
            where = "at module level" if scope is None else f"in the body of class {scope.name}"
            raise MarkerError(
                f"{filename}:{region.begin}: solution region {where}; the stub would raise "
                "when it is imported. Put the markers inside a function or method body."
            )
        ending = re.search(r"(\r\n|\r|\n)\Z", lines[region.begin - 1])
        message = json.dumps(f"{task}: write {scope.name}")
        out.extend(lines[cursor : region.begin - 1])
        out.append(f"{region.indent}raise NotImplementedError({message})")
        out.append(ending.group(1) if ending else "\n")
        cursor = region.end
    out.extend(lines[cursor:])
    stub = "".join(out)
    try:
        compile(stub, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as err:
        why = f"{err.msg}, stub line {err.lineno}" if isinstance(err, SyntaxError) else str(err)
        raise MarkerError(
            f"{filename}: the stub is not valid Python after stripping the solutions ({why}); "
            f"indent each '{BEGIN_MARKER}' like the code it replaces and keep whole "
            "statements between the markers."
        ) from err
    return stub


def _first_doc_line(node: ast.AST) -> str:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
        doc = ast.get_docstring(node)
        if doc:
            return doc.strip().splitlines()[0]
    return ""


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, drop_self: bool) -> str:
    args = copy.deepcopy(node.args)
    if drop_self:
        if args.posonlyargs:
            args.posonlyargs.pop(0)
        elif args.args:
            args.args.pop(0)
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    return ast.unparse(args)


def stub_items(source: str, filename: str) -> tuple[StubItem, ...]:
    """The top-level classes and functions of `source` that hold solution regions."""
    regions = find_regions(source, filename)
    tree = _parse(source, filename)
    scopes = _scopes(tree, len(split_lines(source)))
    todo = {s.name for r in regions if (s := _enclosing(scopes, r)) is not None}
    items: list[StubItem] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in todo:
            sig = f"{node.name}({_signature(node, drop_self=False)})"
            items.append(StubItem(node.name, "function", sig, _first_doc_line(node), ()))
        elif isinstance(node, ast.ClassDef):
            methods = {
                n.name: n
                for n in node.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            todo_methods = tuple(m for m in methods if f"{node.name}.{m}" in todo)
            if not todo_methods:
                continue
            init = methods.get("__init__")
            sig = f"{node.name}({_signature(init, drop_self=True) if init else ''})"
            items.append(StubItem(node.name, "class", sig, _first_doc_line(node), todo_methods))
    return tuple(items)


def solution_lines(source: str, filename: str, shortest: int = 20) -> set[str]:
    """The stripped lines inside the solution regions of `source` (long enough to be telling)."""
    lines = split_lines(source)
    found: set[str] = set()
    for region in find_regions(source, filename):
        for line in lines[region.begin : region.end - 1]:
            text = line.strip()
            if len(text) >= shortest and not text.startswith("#"):
                found.add(text)
    return found
