"""check() in a notebook run by a real Jupyter kernel (nbclient): HTML with the points of each task."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT, SOLUTIONS, STUBS
from nbclient import NotebookClient

from autograder.authoring.source_notebook import build_source_notebook
from autograder.config import load_kit
from autograder.manifest import read_manifest

MANIFEST = read_manifest(STUBS / "checks" / "manifest.json")


def _execute(notebook: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    client.execute()
    return notebook


def _html(cell: nbformat.NotebookNode) -> str:
    shown = [o["data"]["text/html"] for o in cell.get("outputs", []) if "text/html" in o.get("data", {})]
    assert len(shown) == 1, cell.get("outputs")
    return str(shown[0])


def _points(html: str) -> dict[str, str]:
    """task id -> the points shown in its row."""
    rows = re.findall(r'data-task="([^"]+)">.*?class="points">([^<]+)<', html)
    return dict(rows)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Where the student's notebook sits: their copy of the assignment folder (checks/, data.py)."""
    target = tmp_path / "work"
    shutil.copytree(STUBS, target, ignore=shutil.ignore_patterns("__pycache__"))
    for task in MANIFEST.tasks:  # the notebook holds the code: no task files beside it
        (target / task.file).unlink()
    return target


def test_check_in_the_built_notebook_and_in_one_a_student_wrote(folder: Path, tmp_path: Path):
    kit = load_kit(ROOT)
    built = build_source_notebook(ROOT, kit.assignment().id, tmp_path / "built.ipynb")
    notebook = nbformat.read(built, as_version=4)
    first = MANIFEST.tasks[0]
    notebook.cells += [
        nbformat.v4.new_code_cell("from autograder import check\ncheck()"),
        nbformat.v4.new_code_cell(f"check({first.id!r})"),
    ]
    ran = _execute(notebook, folder)
    every = _points(_html(ran.cells[-2]))
    assert every == {t.id: f"{t.public_points:g}/{t.public_points:g}" for t in MANIFEST.tasks}
    assert _points(_html(ran.cells[-1])) == {first.id: f"{first.public_points:g}/{first.public_points:g}"}

    # a notebook of the student's own: one task written, one started wrong, the rest not there yet
    second = MANIFEST.tasks[1]
    wrong = (SOLUTIONS / second.file).read_text(encoding="utf-8").replace("super().__init__()", "pass", 1)
    own = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell((SOLUTIONS / first.file).read_text(encoding="utf-8")),
        nbformat.v4.new_code_cell(wrong),
        nbformat.v4.new_code_cell("import autograder\nautograder.check()"),
    ])
    html = _html(_execute(own, folder).cells[-1])
    shown = _points(html)
    assert shown[first.id] == f"{first.public_points:g}/{first.public_points:g}"
    assert shown[second.id] != f"{second.public_points:g}/{second.public_points:g}"
    assert "not defined yet" in html and "Observed" in html  # failing checks show their feedback
    assert set(shown) == {t.id for t in MANIFEST.tasks}


def test_check_in_a_kernel_has_time_limits_finds_imported_names_and_embeds_the_font(tmp_path: Path):
    """What check() does in a Linux kernel (Colab): each task in a fork of the kernel with its limit."""
    import importlib.util
    import json
    import linecache
    import sys

    from autograder.grading.notebook_check import run_check_forked
    from autograder.grading.student_report import render_html
    from autograder.grading.student_results import CHECKED

    if sys.platform != "linux":
        pytest.skip("the kernel is forked on Linux only")
    folder = tmp_path / "work"
    shutil.copytree(STUBS, folder, ignore=shutil.ignore_patterns("__pycache__", "*.whl"))
    first = MANIFEST.tasks[0]
    path = folder / "checks" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["tasks"][0]["time_limit"] = 1
    path.write_text(json.dumps(manifest), encoding="utf-8")
    source = (SOLUTIONS / first.file).read_text(encoding="utf-8")
    cell = source + "\ndef train_tinynet(*args, **kwargs):\n    while True:\n        pass\n"
    endless = {"__name__": "__main__"}
    linecache.cache["<cell>"] = (len(cell), None, cell.splitlines(True), "<cell>")  # as IPython keeps cells
    exec(compile(cell, "<cell>", "exec"), endless)
    report = run_check_forked(folder, first.id, "bn", endless)
    # The kernel came back: the endless loop cost the checks that train, not TinyNet's own checks,
    # and they say where it was (the cell's line), in Bangla.
    outcome = report.tasks[0]
    assert outcome.status == CHECKED and {c.name for c in outcome.checks if c.passed} == {
        "registration", "weight_shapes"}, [(c.name, c.feedback) for c in outcome.checks]
    line = cell.splitlines().index("        pass") + 1  # the loop is this line or the one before
    for check in (c for c in outcome.checks if not c.passed):
        assert check.message_key == "engine.time_limit" and "`train_tinynet(" in check.feedback
        assert f"`cell:{line}`" in check.feedback or f"`cell:{line - 1}`" in check.feedback, check.feedback
        assert "সময়সীমা" in check.feedback
    assert "@font-face" in render_html(report) and "font-weight: 700" in render_html(report)
    # `from tinynet import TinyNet` in a cell, tinynet.py complete beside the notebook
    shutil.copy(SOLUTIONS / first.file, folder / first.file)
    spec = importlib.util.spec_from_file_location(first.file[:-3], folder / first.file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    imported = {name: getattr(module, name) for name in first.names[:1]}
    report = run_check_forked(folder, first.id, "en", imported)
    assert report.tasks[0].status == CHECKED and report.tasks[0].passed, report.tasks[0]


def test_check_in_a_notebook_finds_the_folder_from_a_subfolder_and_says_what_stops_it(tmp_path: Path,
                                                                                  monkeypatch):
    """Issue #38: check() from notes/ checks the folder's files; outside a folder, or with no torch, it
    says so in the chosen language, as the terminal does, instead of raising a traceback."""
    from autograder.grading import student_environment
    from autograder.grading.notebook_check import NotebookProblem, check_notebook
    from autograder.grading.student_environment import Fault, describe_faults

    folder = tmp_path / "work"
    shutil.copytree(STUBS, folder, ignore=shutil.ignore_patterns("__pycache__", "*.whl"))
    first = MANIFEST.tasks[0]
    shutil.copy(SOLUTIONS / first.file, folder / first.file)
    (folder / "notes").mkdir()
    shown = check_notebook(first.id, folder=folder / "notes", caller={})
    assert shown.report.folder == str(folder.resolve()) and shown.passed, repr(shown)
    (tmp_path / "elsewhere").mkdir()
    lost = check_notebook(folder=tmp_path / "elsewhere", lang="bn", caller={})
    assert isinstance(lost, NotebookProblem) and lost.exit_code == 2
    assert "checks/manifest.json নেই" in repr(lost) and 'check(folder="' in repr(lost), repr(lost)
    missing = [Fault("env_missing", {"package": "torch", "need": "2.4.1"})]
    monkeypatch.setattr(student_environment, "version_faults", lambda: missing)
    broken = check_notebook(folder=folder, lang="bn", caller={})
    assert isinstance(broken, NotebookProblem) and repr(broken) == describe_faults(missing, "bn")
    assert "--index-url https://download.pytorch.org/whl/cpu" in repr(broken)
    assert "Traceback" not in broken._repr_html_() and "torch install করা নেই" in broken._repr_html_()
