"""What `autograder doctor` checks of an assignment's graders without running them (static, by ast).

The same rules the kit's per-assignment tests apply (they call these functions), so that whatever
the tests would reject statically, doctor names first, with the file, the rule and the fix.

Every message key a grader can fail with exists in the catalogues of every language the assignment
declares, and the call passes every placeholder the message uses; the catalogues follow the language
rules (catalogue_rules); every task has its notebook test cell; every `test_*` function of a check
file has its `@points` (the engine grades only those, so one without is dropped even when the
totals still match).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.authoring.build import NOTEBOOK_DIR
from autograder.authoring.catalogue_rules import catalogue_problems
from autograder.authoring.misconception_rules import language_problems, misconception_problems
from autograder.catalogues import placeholder_names, read_catalogue
from autograder.config import Assignment

ENGINE_MESSAGES = Path(__file__).resolve().parents[1] / "messages"
KEY = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+")
# Keyword arguments whose dict values are message keys (probe_calls.call hints, compare keys).
KEY_MAPS = ("hints", "keys")
# What the engine fills in itself when it fails with a key (probe_calls: the student's exception).
ENGINE_FILLED = {"report"}  # compare.require_close
SKIPPED = ("notebook", "correct", "__pycache__")  # plain-assert cells and student-style variants


@dataclass(frozen=True)
class KeyUse:
    """One message key a grader file names: where, and the placeholders the call passes (None: **)."""

    key: str
    file: Path
    line: int
    passed: frozenset[str] | None = None


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _passed(node: ast.Call) -> frozenset[str] | None:
    if any(k.arg is None for k in node.keywords):
        return None  # fail(key, **params): the placeholders are not known statically
    return frozenset(k.arg for k in node.keywords if k.arg is not None)


def key_uses(path: Path) -> Iterator[KeyUse]:
    """Message keys `path` names: fail("k", ...), require_close(..., "k", ...), hints/keys maps."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        literal = [a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if name == "fail" and node.args and node.args[0] in literal:
            yield KeyUse(str(literal[0].value), path, node.lineno, _passed(node))
        elif name == "require_close" and literal:
            passed = _passed(node)
            yield KeyUse(str(literal[0].value), path, node.lineno,
                         None if passed is None else passed | ENGINE_FILLED)
        for keyword in node.keywords:
            if keyword.arg in KEY_MAPS and isinstance(keyword.value, ast.Dict):
                for value in keyword.value.values:
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        yield KeyUse(value.value, path, value.lineno)


def grader_files(graders: Path) -> list[Path]:
    return sorted(p for p in graders.rglob("*.py")
                  if not any(part in SKIPPED for part in p.relative_to(graders).parts))


def key_problems(assignment: Assignment, graders: Path | None = None) -> Iterator[str]:
    """Each key used but missing from a declared language's catalogue, or given too few values."""
    graders = graders or assignment.graders
    catalogues = {}
    for lang in assignment.languages:
        merged = {}
        for folder in (ENGINE_MESSAGES, graders / "messages"):
            if (folder / f"{lang}.toml").is_file():
                merged.update(read_catalogue(folder / f"{lang}.toml"))
        catalogues[lang] = merged
    root = assignment.root
    for path in grader_files(graders):
        for use in key_uses(path):
            where = f"{path.relative_to(root) if path.is_relative_to(root) else path}:{use.line}"
            if not KEY.fullmatch(use.key):
                yield f"{where}: {use.key!r} is not a message key (table.name)"
                continue
            for lang, messages in catalogues.items():
                if use.key not in messages:
                    yield (f"{where}: message key {use.key!r} is not in the {lang} catalogue "
                           f"(graders/messages/{lang}.toml): a typo, or a message to write")
                elif use.passed is not None:
                    missing = sorted(placeholder_names(messages[use.key]) - use.passed)
                    if missing:
                        yield (f"{where}: {use.key!r} uses {{{'}, {'.join(missing)}}} in {lang}, "
                               "which this call does not pass")


def _decorator_name(node: ast.expr) -> str:
    """`points` for `@points(2)`, `@checks.points(2)` and `@points`."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    return target.attr if isinstance(target, ast.Attribute) else ""


def unpointed_checks(assignment: Assignment, graders: Path | None = None) -> Iterator[str]:
    """Each module-level `test_*` function of graders/public and graders/hidden without `@points`."""
    graders = graders or assignment.graders
    root = assignment.root
    for kind in ("public", "hidden"):
        for path in sorted((graders / kind).glob("test_*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or \
                        not node.name.startswith("test_"):
                    continue
                if "points" not in {_decorator_name(d) for d in node.decorator_list}:
                    where = path.relative_to(root) if path.is_relative_to(root) else path
                    yield (f"{where}:{node.lineno}: {node.name} has no @points(...), so it is never "
                           "graded: give it its points (and take them from the task's other checks), "
                           "or rename it without the test_ prefix if it is a helper")


def notebook_problems(assignment: Assignment, graders: Path | None = None) -> Iterator[str]:
    graders = graders or assignment.graders
    for task in assignment.tasks:
        cell = graders / NOTEBOOK_DIR / f"test_{task.id}.py"
        if not cell.is_file():
            yield (f"{cell}: missing: the notebook's test cell of task {task.id!r} (plain asserts on "
                   "the names the task's cell defines; `autograder notebook build` needs it)")


def assignment_problems(assignment: Assignment) -> list[str]:
    """Everything static doctor finds wrong with one assignment's graders (empty: all good)."""
    return [
        *catalogue_problems(assignment.graders / "messages", assignment.languages),
        *key_problems(assignment),
        *unpointed_checks(assignment),
        *notebook_problems(assignment),
        *language_problems(assignment),
        *misconception_problems(assignment),
    ]
