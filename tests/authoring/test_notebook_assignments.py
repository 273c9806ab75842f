"""The notebook path for every assignment: the source notebook names its assignment, its test cells
pass on the reference in one kernel-like namespace, and it splits and grades 100."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT
from kit_assignments import ASSIGNMENTS

from autograder.authoring.source_notebook import build_source_notebook
from autograder.cli.notebook import notebook as notebook_cli
from autograder.submissions.notebook import (
    NOTEBOOK_METADATA,
    collect_notebook,
    notebook_assignment,
    write_files,
)


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def built(request, tmp_path_factory) -> tuple[str, Path]:
    assignment = request.param
    return assignment, build_source_notebook(ROOT, assignment, tmp_path_factory.mktemp("nb") / "hw.ipynb")


def test_the_notebook_names_its_assignment(built):
    assignment, path = built
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["metadata"][NOTEBOOK_METADATA] == {"assignment": assignment}
    assert notebook_assignment(path) == assignment


def test_the_test_cells_pass_on_the_reference_in_order(built, monkeypatch, tmp_path):
    """Run the notebook's code cells top to bottom in one namespace, as a kernel would."""
    _, path = built
    monkeypatch.chdir(tmp_path)  # cells may write files (checkpoints)
    namespace: dict = {"__name__": "__main__"}
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    assert cells
    for cell in cells:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        exec(compile(source, cell["id"], "exec"), namespace)


def test_split_takes_the_assignment_from_the_metadata(built, tmp_path):
    assignment, path = built
    files = tmp_path / "files"
    result = CliRunner().invoke(notebook_cli, ["split", str(path), "--out", str(files), "--kit", str(ROOT)])
    assert result.exit_code == 0, result.output
    assert f"assignment: {assignment}" in result.output


def test_a_notebook_for_another_assignment_is_noted(built, kit):
    assignment, path = built
    other = next((a for a in ASSIGNMENTS if a != assignment), None)
    assert other is not None, "the kit has more than one assignment"
    got = collect_notebook(path, (), kit.assignment(other))
    assert any(f"made for assignment `{assignment}`" in note for note in got.notes), got.notes


def test_the_reference_notebook_grades_100(built, assignment_grader, tmp_path, kit):
    assignment, path = built
    target = kit.assignment(assignment)
    collected = collect_notebook(path, target.given, target)
    assert collected.problem == ""
    folder = tmp_path / "from-notebook"
    write_files(collected, folder)
    result = assignment_grader(assignment).grade(folder, student="notebook")
    assert result.score == result.max_score, [
        (t.task, [c.feedback for c in t.checks if c.score < c.max_score]) for t in result.tasks
    ]
