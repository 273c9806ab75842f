"""Graders reach the engine through its two public modules only: autograder.graders (checks,
conftest, references) and autograder.sandbox.inside.observe (probes, inside the sandbox)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

import autograder.graders as api
from autograder.authoring.scaffold import render
from autograder.sandbox.inside import observe

GRADER_FILES = sorted(p for p in (ROOT / "solutions").glob("*/graders/**/*.py") if "correct" not in p.parts)
SCAFFOLD = {  # what `autograder new` writes: its graders are held to the same rule
    path: text
    for path, text in render("api_demo", ["alpha", "beta"]).items()
    if path.endswith(".py") and path.startswith("graders/")
}


def _engine_imports(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "autograder":
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "autograder"}
    return found


def _allowed(path: Path) -> str:
    probes = path.name == "probes.py" or path.parent.name == "probes"
    return "autograder.sandbox.inside.observe" if probes else "autograder.graders"


@pytest.mark.parametrize("path", GRADER_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_graders_import_only_the_public_api(path: Path):
    allowed = _allowed(path)
    found = _engine_imports(path.read_text(encoding="utf-8"))
    assert found <= {allowed}, f"import the engine through {allowed}"


@pytest.mark.parametrize("path", sorted(SCAFFOLD))
def test_a_scaffolded_assignments_graders_import_only_the_public_api(path: str):
    allowed = _allowed(Path(path))
    assert _engine_imports(SCAFFOLD[path]) <= {allowed}, f"import the engine through {allowed}"


def test_the_files_scanned_are_the_graders():
    names = {p.name for p in GRADER_FILES}
    assert {"_shared.py", "conftest.py", "_ref.py"} <= names and len(GRADER_FILES) > 30
    assert any("from autograder.graders import" in p.read_text("utf-8") for p in GRADER_FILES)
    assert {"graders/probes/alpha.py", "graders/conftest.py", "graders/public/test_alpha.py"} <= set(SCAFFOLD)


def test_every_name_the_api_lists_is_there():
    for name in [*api.__all__, "worker", "params", "challenge", "pytest_addoption", "_autograder_worker"]:
        assert getattr(api, name) is not None, name
    for name in observe.__all__:
        assert getattr(observe, name) is not None, name
    with pytest.raises(AttributeError):
        api.no_such_thing  # noqa: B018


def test_a_probe_file_that_reaches_past_the_api_is_refused():
    assert _engine_imports("from autograder.compare import close\nimport autograder.checks\n") == {
        "autograder.compare",
        "autograder.checks",
    }
