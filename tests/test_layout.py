"""The engine's shape, as rules: no import circles, small modules, each saying what it is, no course."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "autograder"
MAX_LINES = 400


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), function-level imports included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph.find_modules_directly_imported_by(module)):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return groups


def test_no_import_circles():
    graph = grimp.build_graph("autograder", include_external_packages=False)
    assert _cycles(graph) == []


def test_the_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:]


def test_modules_are_small_and_say_what_they_are():
    too_big, undocumented = [], []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        if text.count("\n") > MAX_LINES:
            too_big.append(f"{rel} ({text.count(chr(10))} lines)")
        doc = ast.get_docstring(ast.parse(text))
        if not doc or not doc.splitlines()[0].strip():
            undocumented.append(rel)
    assert too_big == [], f"split these (over {MAX_LINES} lines): {too_big}"
    assert undocumented == [], f"give these a one-line docstring: {undocumented}"


def test_no_course_content_in_the_engine():
    """The engine is course-agnostic: no assignment is named in its code (comments aside)."""
    named = []
    course = {p.name for p in (ROOT / "solutions").iterdir() if p.is_dir()}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if any(c in node.value for c in course) and not _is_docstring_like(node.value):
                    named.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert named == []


def _is_docstring_like(text: str) -> bool:
    # A usage example in a docstring ("pytest solutions/nn_module/graders ...") is documentation.
    return "\n" in text or text.strip().startswith(("pytest ", "e.g."))


def test_tests_mirror_the_package():
    """Each subpackage of the engine has its unit tests in tests/<subpackage>/."""
    subpackages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    missing = [name for name in subpackages if not list((ROOT / "tests" / name).glob("test_*.py"))]
    assert missing == [], f"no tests/<name>/test_*.py for: {missing}"


def test_one_version_source():
    """pyproject.toml reads the version from autograder.__version__; nothing else spells it."""
    import tomllib
    from importlib import metadata

    import autograder

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "autograder.__version__"}
    assert metadata.version("torch-autograder") == autograder.__version__


def test_the_grading_side_parses_python_one_thread_at_a_time():
    """autograder.pysource.parse_python, never ast.parse, where a grading or service process parses:
    Python 3.11.7's AST converter is not thread-safe (gh-106905). Exempt: pysource itself, the
    sandbox's inside (a process of one thread) and authoring (the instructor's one-thread commands)."""
    exempt = (PACKAGE / "pysource.py", PACKAGE / "sandbox" / "inside", PACKAGE / "authoring")
    direct = []
    for path in _modules():
        if any(path == e or e in path.parents for e in exempt):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            if (isinstance(func, ast.Attribute) and func.attr == "parse"
                    and isinstance(func.value, ast.Name) and func.value.id == "ast"):
                direct.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert direct == [], f"use autograder.pysource.parse_python: {direct}"
