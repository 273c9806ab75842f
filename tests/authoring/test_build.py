"""The stub generator: markers, the student folder it writes, and every committed student folder
(each assignment under solutions/ with its own grading.toml section; see tests/kit_assignments.py)."""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import inspect
import itertools
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from kit_assignments import ASSIGNMENTS

from autograder.authoring.build import build_assignment, diff_assignment, generate
from autograder.authoring.kit_wheel import wheel_name
from autograder.authoring.markers import has_markers, strip_solutions
from autograder.config import load_kit
from autograder.errors import ConfigError, MarkerError

KIT = Path(__file__).resolve().parents[2]
ASSIGNMENT = KIT / "assignments" / "nn_module"
SOLUTIONS = KIT / "solutions" / "nn_module"
# Instructor-only names: never in a student folder (graders' hidden checks, references, catalogues).
PRIVATE = ("hidden", "*reference*", "misconceptions.toml", "correct")

SAMPLE = '''\
"""A sample reference file."""

import math


class Net:
    """A net."""

    def __init__(self, n: int) -> None:
        """Store n."""
        ### BEGIN SOLUTION
        self.n = n
        ### END SOLUTION

    def forward(self, x: float) -> float:
        """Scale x."""
        ### BEGIN SOLUTION
        return math.sqrt(self.n) * x
        ### END SOLUTION


def helper(a, b=1):
    """Add a and b."""
    ### BEGIN SOLUTION
    total = a + b
    return total
    ### END SOLUTION
'''


def _docstrings(source: str) -> dict[str, tuple[str, str | None]]:
    """Qualified def/class name -> (signature, docstring)."""
    found: dict[str, tuple[str, str | None]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.ClassDef):
                name = prefix + child.name
                sig = ast.unparse(child.args) if isinstance(child, ast.FunctionDef) else ""
                if isinstance(child, ast.FunctionDef) and child.returns is not None:
                    sig += " -> " + ast.unparse(child.returns)
                found[name] = (sig, ast.get_docstring(child))
                visit(child, name + ".")

    visit(ast.parse(source), "")
    return found


# --- strip_solutions -------------------------------------------------------------------------


def test_strip_keeps_signatures_docstrings_and_raises_with_task_id() -> None:
    stub = strip_solutions(SAMPLE, "demo", "demo.py")
    assert _docstrings(stub) == _docstrings(SAMPLE)
    assert ast.get_docstring(ast.parse(stub)) == "A sample reference file."
    assert "import math" in stub and "class Net:" in stub
    for gone in ("### BEGIN", "### END", "self.n = n", "math.sqrt", "total = a + b"):
        assert gone not in stub
    lines = stub.splitlines()
    assert '        raise NotImplementedError("demo: write Net.__init__")' in lines
    assert '        raise NotImplementedError("demo: write Net.forward")' in lines
    assert '    raise NotImplementedError("demo: write helper")' in lines
    assert stub.count("raise NotImplementedError") == 3

    namespace: dict[str, Any] = {}
    exec(compile(stub, "demo.py", "exec"), namespace)
    with pytest.raises(NotImplementedError, match="demo: write helper"):
        namespace["helper"](1)
    with pytest.raises(NotImplementedError, match=r"demo: write Net\.__init__"):
        namespace["Net"](3)


def test_strip_without_markers_returns_source_unchanged() -> None:
    source = 'def f():\n    """Doc."""\n    return 1\n'
    assert not has_markers(source)
    assert strip_solutions(source, "t", "t.py") == source
    assert has_markers(SAMPLE)


def test_strip_keeps_crlf_line_endings() -> None:
    stub = strip_solutions(SAMPLE.replace("\n", "\r\n"), "demo", "demo.py")
    assert "\n" not in stub.replace("\r\n", "")
    assert 'raise NotImplementedError("demo: write helper")\r\n' in stub


def test_region_in_nested_function_and_empty_region() -> None:
    source = textwrap.dedent('''\
        def outer():
            """Outer."""
            def inner():
                ### BEGIN SOLUTION
                return 1
                ### END SOLUTION
            return inner


        def empty():
            """Nothing yet."""
            ### BEGIN SOLUTION
            ### END SOLUTION
        ''')
    stub = strip_solutions(source, "t", "t.py")
    assert '        raise NotImplementedError("t: write outer.inner")' in stub.splitlines()
    assert '    raise NotImplementedError("t: write empty")' in stub.splitlines()


BROKEN = {
    "nested": (
        """\
        def f():
            ### BEGIN SOLUTION
            x = 1
            ### BEGIN SOLUTION
            return x
            ### END SOLUTION
        """,
        "bad.py:4",
        "nest",
    ),
    "unclosed": (
        """\
        def f():
            ### BEGIN SOLUTION
            return 1
        """,
        "bad.py:2",
        "never closed",
    ),
    "stray_end": (
        """\
        def f():
            return 1
            ### END SOLUTION
        """,
        "bad.py:3",
        "without",
    ),
    "module_level": (
        """\
        ### BEGIN SOLUTION
        X = 1
        ### END SOLUTION
        """,
        "bad.py:1",
        "module level",
    ),
    "class_body": (
        """\
        class C:
            ### BEGIN SOLUTION
            x = 1
            ### END SOLUTION
        """,
        "bad.py:2",
        "class C",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_bad_markers_raise_marker_error_naming_file_and_line(case: str) -> None:
    source, where, what = BROKEN[case]
    with pytest.raises(MarkerError) as info:
        strip_solutions(textwrap.dedent(source), "t", "bad.py")
    message = str(info.value)
    assert message.startswith(where + ":"), message
    assert what in message


def test_stub_that_is_not_valid_python_is_refused() -> None:
    source = textwrap.dedent("""\
        def f(x):
            for i in x:
          ### BEGIN SOLUTION
                pass
          ### END SOLUTION
            return x
        """)
    compile(source, "bad.py", "exec")  # the reference itself is fine
    with pytest.raises(MarkerError, match=r"bad\.py.*not valid Python"):
        strip_solutions(source, "t", "bad.py")


def test_reference_with_syntax_error_is_refused() -> None:
    source = "def f(:\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION\n"
    with pytest.raises(MarkerError, match=r"bad\.py:1"):
        strip_solutions(source, "t", "bad.py")


# --- build_assignment / diff_assignment on a small made-up kit ------------------------------


def _make_kit(root: Path) -> Path:
    (root / "grading.toml").write_text(
        textwrap.dedent("""\
            [assignments.demo]
            title = "A demo assignment"
            given = ["data.py"]

            [assignments.demo.tasks.demo]
            file = "demo.py"
            points = 7
            """),
        encoding="utf-8",
    )
    src = root / "solutions" / "demo"
    (src / "graders" / "hidden").mkdir(parents=True)
    (src / "graders" / "__pycache__").mkdir()
    (src / "demo.py").write_text(SAMPLE, encoding="utf-8")
    (src / "data.py").write_bytes(b"# given data\r\nX = [1, 2]\n")
    (src / "graders" / "public_checks.py").write_text("# public\n", encoding="utf-8")
    (src / "graders" / "messages.toml").write_text("[a]\n", encoding="utf-8")
    (src / "graders" / "hidden" / "secret.py").write_text("# secret\n", encoding="utf-8")
    (src / "graders" / "reference_model.py").write_text("# ref\n", encoding="utf-8")
    (src / "graders" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (src / "graders" / "misconceptions.toml").write_text("[[wrong]]\n", encoding="utf-8")
    (src / "graders" / "correct" / "other_style").mkdir(parents=True)
    (src / "graders" / "correct" / "other_style" / "demo.py").write_text("# a correct variant\n")
    return root


def test_build_writes_stubs_checks_and_readme(tmp_path: Path) -> None:
    kit = _make_kit(tmp_path)
    written = build_assignment(kit, "demo")
    out = kit / "assignments" / "demo"
    rels = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert rels == [
        "README.md",
        "checks/manifest.json",
        "checks/messages.toml",
        "checks/public_checks.py",
        "data.py",
        "demo.py",
        wheel_name(),  # the kit's own wheel, which the README's install command names
    ]
    assert sorted(p.relative_to(out).as_posix() for p in written) == rels
    assert (out / "data.py").read_bytes() == b"# given data\r\nX = [1, 2]\n"
    assert (out / "demo.py").read_text() == strip_solutions(SAMPLE, "demo", "demo.py")

    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# A demo assignment\n")
    for expected in ("demo.py", "7 points", "Net(n)", "forward", "helper(a, b=1)", "Add a and b."):
        assert expected in readme
    assert "autograder check" in readme and f"pip install ./{wheel_name()}" in readme
    assert ".zip" in readme and "notebook" in readme
    assert "You do not need to submit `data.py`" in readme


def test_build_is_deterministic_and_recreates_the_folder(tmp_path: Path) -> None:
    kit = _make_kit(tmp_path)
    out = kit / "assignments" / "demo"
    build_assignment(kit, "demo")
    first = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    (out / "stale.py").write_text("old\n")
    (out / "checks" / "old_check.py").write_text("old\n")
    (out / "demo.py").write_text("edited by hand\n")
    assert diff_assignment(kit, "demo") == ["checks/old_check.py", "demo.py", "stale.py"]
    build_assignment(kit, "demo")
    second = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert second == first
    assert diff_assignment(kit, "demo") == []
    (out / "__pycache__").mkdir()
    (out / "__pycache__" / "demo.cpython-311.pyc").write_bytes(b"\0")
    assert diff_assignment(kit, "demo") == []  # local clutter is not a difference
    (out / "README.md").unlink()
    assert diff_assignment(kit, "demo") == ["README.md"]


def test_build_to_out_dir_and_marker_error_keeps_old_output(tmp_path: Path) -> None:
    kit = _make_kit(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    build_assignment(kit, "demo", elsewhere)
    assert (elsewhere / "demo.py").is_file()
    assert not (kit / "assignments").exists()
    src = kit / "solutions" / "demo" / "demo.py"
    src.write_text(
        SAMPLE.replace("        ### END SOLUTION\n\n    def forward", "\n    def forward")
    )
    with pytest.raises(MarkerError, match=r"solutions/demo/demo\.py:\d+"):
        build_assignment(kit, "demo", elsewhere)
    assert (elsewhere / "demo.py").is_file()  # nothing deleted before the error


def test_build_refuses_to_replace_the_kit(tmp_path: Path) -> None:
    kit = _make_kit(tmp_path)
    with pytest.raises(Exception, match="refusing"):
        build_assignment(kit, "demo", kit)
    assert (kit / "grading.toml").is_file()


def test_build_and_grading_read_grading_toml_by_one_rule(tmp_path: Path) -> None:
    """Issue #27: one parser. A task's title is allowed, its file defaults to <task>.py, an unknown
    key or a bad value is refused with the same message by the build and by grading."""
    kit = _make_kit(tmp_path)
    toml = kit / "grading.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('file = "demo.py"', 'title = "Build a Net"'),
                    encoding="utf-8")
    assert load_kit(kit).assignment("demo").task("demo").file == "demo.py"
    build_assignment(kit, "demo")
    assert "Build a Net" in (kit / "assignments" / "demo" / "README.md").read_text(encoding="utf-8")
    for bad, key in (("points = 7", "points"), ('title = "Build a Net"', "colour")):
        toml.write_text(toml.read_text(encoding="utf-8").replace(
            bad, 'points = "seven"' if key == "points" else f'{bad}\ncolour = "red"'), encoding="utf-8")
        with pytest.raises(ConfigError) as by_grading:
            load_kit(kit)
        with pytest.raises(ConfigError) as by_build:
            build_assignment(kit, "demo", tmp_path / "out")
        assert str(by_build.value) == str(by_grading.value) and key in str(by_grading.value)
        toml.write_text(toml.read_text(encoding="utf-8").replace('points = "seven"', "points = 7")
                        .replace('\ncolour = "red"', ""), encoding="utf-8")


# --- the committed student folders -----------------------------------------------------------


def _private(rel: str) -> bool:
    return any(fnmatch.fnmatch(part, pattern) for part in rel.split("/") for pattern in PRIVATE)


def test_every_assignment_has_a_committed_folder() -> None:
    assert "nn_module" in ASSIGNMENTS and "tensors_autograd" in ASSIGNMENTS, ASSIGNMENTS
    for assignment in ASSIGNMENTS:
        assert (KIT / "assignments" / assignment / "README.md").is_file(), assignment


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_committed_assignment_equals_generator_output(assignment: str) -> None:
    assert diff_assignment(KIT, assignment) == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_generated_folder_ships_no_instructor_files(assignment: str) -> None:
    """A student folder as generated now lacks hidden checks, references and the catalogue of wrong
    and correct submissions, although the graders folder holds them."""
    graders = KIT / "solutions" / assignment / "graders"
    held = [p.relative_to(graders).as_posix() for p in graders.rglob("*")]
    assert any(_private(rel) for rel in held), f"{assignment}: no instructor-only files to test with"
    generated = list(generate(KIT, assignment))
    assert generated and not [rel for rel in generated if _private(rel)], assignment


def test_no_built_folder_ships_instructor_files() -> None:
    """Every committed student folder lacks the instructor-only files."""
    for folder in sorted((KIT / "assignments").iterdir()):
        shipped = [p.relative_to(folder).as_posix() for p in folder.rglob("*")]
        leaked = [rel for rel in shipped if _private(rel)]
        assert not leaked, f"assignments/{folder.name} ships instructor-only files: {leaked}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_folder_holds_the_tasks_and_given_files_and_given_data_is_byte_identical(assignment: str) -> None:
    """The student folder's own files are its tasks' stubs, its given files (any number, also none)
    copied byte-identical, and the README in English and, for an assignment in Bangla, in Bangla (beside
    the kit's wheel, where it was built)."""
    declared = load_kit(KIT).assignment(assignment)
    folder = KIT / "assignments" / assignment
    top = {p.name for p in folder.iterdir() if p.is_file()} - {wheel_name()}  # built, never committed
    readmes = {"README.md"} | ({"README.bn.md"} if "bn" in declared.languages else set())
    assert top == {t.file for t in declared.tasks} | set(declared.given) | readmes, (assignment, sorted(top))
    for name in declared.given:
        source = KIT / "solutions" / assignment / name
        assert (folder / name).read_bytes() == source.read_bytes()
        assert not has_markers(source.read_text())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_stubs_hide_every_solution_and_keep_the_interface(assignment: str) -> None:
    for solution in sorted((KIT / "solutions" / assignment).glob("*.py")):
        source = solution.read_text(encoding="utf-8")
        if not has_markers(source):
            continue
        stub = (KIT / "assignments" / assignment / solution.name).read_text(encoding="utf-8")
        assert _docstrings(stub) == _docstrings(source), solution.name
        assert "BEGIN SOLUTION" not in stub and "END SOLUTION" not in stub


_counter = itertools.count()


def _load(path: Path) -> ModuleType:
    """The stub file imported as a student's folder imports it: with its folder on sys.path, so that
    `from alpha import alpha` in beta.py finds the stub beside it (docs/authors/authoring.md); the modules of
    that folder leave sys.modules again (another assignment has files of the same names)."""
    spec = importlib.util.spec_from_file_location(f"_stub_{path.stem}_{next(_counter)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
        for name, loaded in list(sys.modules.items()):
            if str(getattr(loaded, "__file__", "") or "").startswith(folder + os.sep):
                del sys.modules[name]
    return module


def _blank(cls: type) -> Any:
    """An instance whose __init__ did not run (the stub's __init__ raises)."""
    obj: Any = object.__new__(cls)
    if issubclass(cls, torch.nn.Module):
        torch.nn.Module.__init__(obj)
    return obj


def _placeholder_call(module: ModuleType, qualname: str) -> Callable[[], object]:
    """A call of the stub `qualname` with a placeholder (None) for every argument without a default:
    a stub raises before it reads one (docs/authors/authoring.md), so any arguments do. A method is called on
    an instance whose __init__ did not run, __init__ through its class, a function directly."""
    owner_name, _, name = qualname.rpartition(".")
    if not owner_name:
        function = getattr(module, name)
        return lambda: function(*_placeholders(function))
    owner = getattr(module, owner_name)
    assert isinstance(owner, type), f"{qualname}: a stub nested in a function cannot be called alone"
    if name == "__init__":
        return lambda: owner(*_placeholders(owner.__init__, skip=1))
    raw = inspect.getattr_static(owner, name)
    if isinstance(raw, staticmethod | classmethod):
        bound = getattr(owner, name)
        return lambda: bound(*_placeholders(bound))
    method = getattr(_blank(owner), name)
    return lambda: method(*_placeholders(method))


def _placeholders(function: Callable[..., object], skip: int = 0) -> list[None]:
    required = [p for p in inspect.signature(function).parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [None] * (len(required) - skip)


def _marked_functions(source: str) -> set[str]:
    """Qualified names of the defs a solution region sits in directly (the ones the stub raises in)."""
    lines = source.splitlines()
    begins = [i + 1 for i, line in enumerate(lines) if line.strip() == "### BEGIN SOLUTION"]
    names: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.ClassDef):
                name = prefix + child.name
                inner = [c for c in ast.walk(child) if c is not child and isinstance(c, ast.FunctionDef)]
                assert child.end_lineno is not None
                own = [b for b in begins if child.lineno < b <= child.end_lineno and not any(
                    f.lineno < b <= (f.end_lineno or f.lineno) for f in inner)]
                if isinstance(child, ast.FunctionDef) and own:
                    names.add(name)
                visit(child, name + ".")

    visit(ast.parse(source), "")
    return names


def _stubbed(assignment: str) -> list[tuple[str, str, str]]:
    """(assignment, task, qualname) of every function its references mark, from grading.toml's tasks."""
    found = []
    for task in load_kit(KIT).assignment(assignment).tasks:
        source = (KIT / "solutions" / assignment / task.file).read_text(encoding="utf-8")
        found += [(assignment, task.id, q) for q in sorted(_marked_functions(source))]
    return found


STUBBED = [entry for assignment in ASSIGNMENTS for entry in _stubbed(assignment)]


def _raising_functions(source: str) -> set[str]:
    """Qualified names of the defs whose body raises NotImplementedError."""
    names: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.ClassDef):
                name = prefix + child.name
                if isinstance(child, ast.FunctionDef) and any(
                    isinstance(s, ast.Raise) and "NotImplementedError" in ast.unparse(s)
                    for s in child.body
                ):
                    names.add(name)
                visit(child, name + ".")

    visit(ast.parse(source), "")
    return names


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_task_file_has_stubs_and_they_are_the_marked_functions(assignment: str) -> None:
    """Each task's reference marks at least one function, and its stub raises in exactly those."""
    declared = load_kit(KIT).assignment(assignment)
    solutions, stubs = KIT / "solutions" / assignment, KIT / "assignments" / assignment
    marked = {p.name for p in solutions.glob("*.py") if has_markers(p.read_text())}
    assert marked == {t.file for t in declared.tasks}
    for task in declared.tasks:
        expected = _marked_functions((solutions / task.file).read_text(encoding="utf-8"))
        assert expected, f"{task.file}: no solution region"
        assert _raising_functions((stubs / task.file).read_text(encoding="utf-8")) == expected, task.id


@pytest.mark.parametrize(("assignment", "task", "qualname"), STUBBED, ids=[":".join(s) for s in STUBBED])
def test_every_stub_raises_not_implemented(
    assignment: str, task: str, qualname: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    declared = load_kit(KIT).assignment(assignment).task(task)
    module = _load(KIT / "assignments" / assignment / declared.file)
    call = _placeholder_call(module, qualname)
    with pytest.raises(NotImplementedError) as info:
        call()
    assert str(info.value) == f"{task}: write {qualname}"
    assert list(tmp_path.iterdir()) == []  # e.g. save_weights wrote nothing
