"""check() in a kernel that cannot be forked (Windows, macOS; forced here): what the kernel ran becomes
the task files, each run a spawned process with the task's limit, and the verdicts are the fork's."""

from __future__ import annotations

import json
import linecache
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import SOLUTIONS, STUBS
from nbclient import NotebookClient

from autograder.grading.notebook_check import kernel_files, run_check_forked
from autograder.grading.student_results import NOT_DEFINED
from autograder.manifest import read_manifest

MANIFEST = read_manifest(STUBS / "checks" / "manifest.json")
TINYNET = MANIFEST.tasks[0]
ENDLESS = "def train_tinynet(*args, **kwargs):\n    while True:\n        pass\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The student's assignment folder with no task files (the notebook holds the code), and a 1 s limit
    for the first task."""
    target = tmp_path / "work"
    shutil.copytree(STUBS, target, ignore=shutil.ignore_patterns("__pycache__", "*.whl"))
    for task in MANIFEST.tasks:
        (target / task.file).unlink()
    path = target / "checks" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["tasks"][0]["time_limit"] = 1
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return target


def _verdicts(report) -> list[tuple[str, bool, str]]:
    return [(c.name, c.passed, c.message_key) for task in report.tasks for c in task.checks]


def test_a_kernel_that_cannot_fork_checks_its_cells_in_spawned_runs_as_a_fork_would(
        folder: Path, monkeypatch: pytest.MonkeyPatch):
    if sys.platform != "linux":
        pytest.skip("the fork it is compared with runs on Linux only")
    source = (SOLUTIONS / TINYNET.file).read_text(encoding="utf-8")
    # The fork's verdicts on the same names, for comparison
    cell = source + "\n" + ENDLESS
    linecache.cache["<cell>"] = (len(cell), None, cell.splitlines(True), "<cell>")
    names = {"__name__": "__main__"}
    exec(compile(cell, "<cell>", "exec"), names)
    forked = _verdicts(run_check_forked(folder, TINYNET.id, "en", names))
    assert any(passed for _, passed, _ in forked) and any(not passed for _, passed, _ in forked)

    # A student's kernel: the reference, an experiment, a cell that did not parse, the endless
    # train_tinynet run again over the first one, and check() in a kernel told it cannot fork.
    monkeypatch.setenv("AUTOGRADER_START_METHOD", "spawn")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(source),
        nbformat.v4.new_code_cell(f"model = TinyNet({', '.join(['4'] * 3)})"),
        nbformat.v4.new_code_cell("def broken(:\n    pass"),
        nbformat.v4.new_code_cell(ENDLESS),
        nbformat.v4.new_code_cell(
            "import json\nfrom autograder import check\n"
            f"shown = check({TINYNET.id!r})\n"
            "print(json.dumps([[c.name, c.passed, c.message_key] for t in shown.report.tasks "
            "for c in t.checks]))"),
        nbformat.v4.new_code_cell(f"print(check({MANIFEST.tasks[2].id!r}).report.tasks[0].status)"),
    ])
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    client.execute()
    printed = [o["text"] for o in notebook.cells[-2].outputs if o.get("name") == "stdout"]
    assert printed, notebook.cells[-2].outputs
    spawned = [tuple(v) for v in json.loads(printed[-1].strip().splitlines()[-1])]
    assert spawned == forked
    stopped = [name for name, passed, key in spawned if not passed]
    assert stopped and all(key == "engine.time_limit" for _, passed, key in spawned if not passed)
    # a task neither a cell nor a file beside the notebook defines: said so, nothing run
    said = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    assert said.strip() == NOT_DEFINED, notebook.cells[-1].outputs


def test_the_kernels_cells_become_the_task_files_as_a_submitted_notebooks_do(folder: Path, tmp_path: Path):
    source = (SOLUTIONS / TINYNET.file).read_text(encoding="utf-8")
    second = MANIFEST.tasks[1]
    (folder / second.file).write_text((SOLUTIONS / second.file).read_text(encoding="utf-8"),
                                      encoding="utf-8")
    into = tmp_path / "made"
    into.mkdir()
    inputs = [source, "model = TinyNet(4, 4, 4)\nprint(model)", "def broken(:\n", ENDLESS,
              f"from {second.file[:-3]} import {second.names[0]}", "check()"]
    made = kernel_files(inputs, read_manifest(folder / "checks" / "manifest.json"), folder, into)
    assert made == {TINYNET.id}
    text = (into / TINYNET.file).read_text(encoding="utf-8")
    first, last = text.index("def train_tinynet("), text.rindex("def train_tinynet(")
    assert first < last and "while True" in text[last:]  # the cell run again comes last: it wins
    assert "model = TinyNet(4, 4, 4)" not in text.replace("# [not run when graded] model", "")
    assert "def broken(" not in text  # a cell that did not parse defined nothing in the kernel
    assert (into / second.file).read_bytes() == (folder / second.file).read_bytes()  # imported: its file
    assert all((into / name).is_file() for name in MANIFEST.given if (folder / name).is_file())
    assert not (into / MANIFEST.tasks[2].file).exists()  # neither a cell nor a file: none made
