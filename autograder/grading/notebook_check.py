"""`check()` in a Jupyter or Colab cell: the public checks on the names the notebook defined."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grading.student_check import run_check
from autograder.grading.student_report import render_html, render_text
from autograder.grading.student_results import CheckReport, TaskOutcome
from autograder.manifest import Manifest
from autograder.submissions.cells import Cell


@dataclass(frozen=True)
class NotebookCheck:
    """What check() returns: the report, shown as HTML by Jupyter (as text elsewhere)."""

    report: CheckReport
    verbose: bool = False

    @property
    def score(self) -> float:
        return self.report.score

    @property
    def max_score(self) -> float:
        return self.report.max_score

    @property
    def passed(self) -> bool:
        return self.report.passed

    def _repr_html_(self) -> str:
        return render_html(self.report, self.verbose)

    def __repr__(self) -> str:
        return render_text(self.report, self.verbose)


@dataclass(frozen=True)
class NotebookProblem:
    """What check() returns when it could not check: the message a terminal's `autograder check`
    prints (in the student's language), shown as such rather than as a traceback."""

    message: str
    exit_code: int = 2
    score: float = 0.0
    max_score: float = 0.0
    passed: bool = False

    def _repr_html_(self) -> str:
        import html

        shown = "<br>".join(html.escape(line) for line in self.message.splitlines())
        return f'<div class="autograder-check-problem" style="color:#cf222e">{shown}</div>'

    def __repr__(self) -> str:
        return self.message


def _user_namespace(caller: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The kernel's user namespace, else the globals of whoever called check() (a plain script)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        return dict(shell.user_ns)
    return dict(caller or {})


def _prepared(folder: Path, task: str | None, lang: str | None) -> tuple[Path, Any, CheckReport | None]:
    """(the assignment folder, its loaded checks, None), or (folder, None, the report) when the
    folder's checks are turned off (an exam): what both timed ways of check() start from."""
    from autograder.grading.student_check import load_checks, require_sound_install
    from autograder.grading.student_locate import find_student_checks, read_student_manifest
    from autograder.grading.student_process import no_bytecode
    from autograder.manifest import student_folder

    checks_dir = find_student_checks(folder, lang, notebook=True)
    folder = student_folder(folder, checks_dir)
    manifest = read_student_manifest(checks_dir, lang)
    if manifest.check == "none":
        return folder, None, run_check(folder, task, lang, checks_dir=checks_dir)
    require_sound_install(lang or manifest.language)
    with no_bytecode():
        return folder, load_checks(checks_dir, lang), None


def _checked(loaded: Any, task: str | None, lang: str | None, folder: Path, started: float,
             namespace: Mapping[str, Any] | None, spawned: bool = False) -> CheckReport:
    """Each chosen task checked in timed runs (forks of this kernel, or spawned processes on the files
    of `folder`), output capped, temporary files removed between tasks."""
    import time

    from autograder.grading.student_check import check_task, empty_report, output_note
    from autograder.grading.student_locate import selected_tasks
    from autograder.grading.student_process import capped_output, empty_folder, no_bytecode, private_tmp

    report = empty_report(loaded)
    outcomes: list[TaskOutcome] = []
    with no_bytecode(), private_tmp() as tmp:
        for chosen in selected_tasks(loaded.manifest, task, lang):
            # spawned: an empty namespace makes check_task read the task's file, or say its names
            # are not defined yet when the cells made none
            names = ({} if chosen.names else None) if spawned else namespace
            with capped_output(output_note(loaded)):
                outcomes.append(check_task(loaded, chosen, folder, names, forked=True, spawned=spawned))
            empty_folder(tmp)
    return CheckReport(report.assignment, report.title, report.lang, tuple(outcomes), False,
                       time.monotonic() - started, report.labels, report.built_with, str(folder))


def run_check_forked(folder: Path, task: str | None, lang: str | None,
                     namespace: Mapping[str, Any]) -> CheckReport:
    """The public checks of the notebook's names, each task's probe calls in forks of this kernel timed
    on their own clock as the grade times them: an endless loop in a cell costs the checks that call
    it (their feedback says where it was), not the kernel, nor the task's other checks."""
    import time

    from autograder.sandbox.inside.runtime import load_lazy_torch

    started = time.monotonic()
    folder, loaded, off = _prepared(folder, task, lang)
    if off is not None:
        return off
    load_lazy_torch()  # once, in the kernel, before any task's clock starts (its threads stay)
    return _checked(loaded, task, lang, folder.resolve(), started, namespace)


def kernel_inputs() -> list[str] | None:
    """What the kernel ran, one entry per executed cell in order (IPython's raw history), or None
    outside IPython (a plain script's check())."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        return None
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if shell is None or not isinstance(history, list):
        return None
    return [str(text) for text in history[1:]]  # entry 0 is IPython's empty placeholder


def _runnable(number: int, source: str) -> Cell | None:
    """An executed cell as the kernel kept it; one that did not parse defined nothing there, so none."""
    from autograder.pysource import parse_python
    from autograder.submissions.cells import neutralise_magics

    text, _, python = neutralise_magics(source)
    try:
        parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return Cell(number, "code", source) if python else None


def kernel_files(inputs: list[str], manifest: Manifest, folder: Path, into: Path) -> set[str]:
    """Write the task files the kernel's cells make (as a submitted notebook's are made: definitions
    kept, experiments left out; a cell run again replaces its earlier definitions, as in the kernel)
    into `into`, beside copies of the folder's given files and of the task files the cells do not
    define (`from tinynet import TinyNet`). Returns the ids of the tasks whose code the cells hold."""
    import shutil

    from autograder.submissions.notebook import cells_files, given_names

    cells = [cell for number, text in enumerate(inputs, start=1) if (cell := _runnable(number, text))]
    collected = cells_files(cells, "the notebook", manifest.as_assignment(folder), manifest.given,
                            {t.id: t.names for t in manifest.tasks}, given_names(folder, manifest.given))
    for name in manifest.given:
        if (folder / name).is_file():
            shutil.copy(folder / name, into / name)
    made = set()
    for task in manifest.tasks:
        if task.file in collected.files:
            (into / task.file).write_bytes(collected.files[task.file])
            made.add(task.id)
        elif (folder / task.file).is_file():
            shutil.copy(folder / task.file, into / task.file)
    return made


def run_check_spawned(folder: Path, task: str | None, lang: str | None, inputs: list[str]) -> CheckReport:
    """The public checks of what the kernel ran where it cannot be forked (Windows, macOS): its cells
    made into the task files as a submitted notebook's are, each task's runs spawned processes timed
    as the grade times them (grading/student_spawn.py), so an endless loop in a cell costs only the
    checks that call it, and the verdicts are those the notebook would get."""
    import tempfile
    import time

    started = time.monotonic()
    folder, loaded, off = _prepared(folder, task, lang)
    if off is not None:
        return off
    with tempfile.TemporaryDirectory(prefix="autograder-notebook-") as made_name:
        made = Path(made_name)
        kernel_files(inputs, loaded.manifest, folder, made)
        report = _checked(loaded, task, lang, made, started, None, spawned=True)
    return dataclasses.replace(report, folder=str(folder))


def check_notebook(task: str | None = None, *, folder: str | Path | None = None, lang: str | None = None,
                   verbose: bool = False, caller: Mapping[str, Any] | None = None
                   ) -> NotebookCheck | NotebookProblem:
    """Check the notebook's names against the public checks of the assignment folder at or above
    `folder` (default: the notebook's working folder, where its helper files are too). The report
    shows itself as HTML in the notebook (per task: points, failing checks with their feedback).
    Each task runs in a fork of the kernel with its time limit where the system forks safely (Linux:
    Colab, JupyterHub); elsewhere (Windows, macOS) the cells the kernel ran become the task files and
    each task's runs are spawned processes with the same limit; outside IPython, in this process."""
    from autograder.errors import AutograderError
    from autograder.grading.student_child import forks
    from autograder.grading.student_locate import find_student_checks

    namespace = _user_namespace(caller)
    where = Path(folder) if folder is not None else Path.cwd()
    try:
        if forks():
            return NotebookCheck(run_check_forked(where, task, lang, namespace), verbose)
        inputs = kernel_inputs()
        if inputs is not None:
            return NotebookCheck(run_check_spawned(where, task, lang, inputs), verbose)
        checks_dir = find_student_checks(where, lang, notebook=True)
        report = run_check(where, task, lang, namespace=namespace, checks_dir=checks_dir)
        return NotebookCheck(report, verbose)
    except AutograderError as problem:  # no folder, no such task, a broken install: said, not a traceback
        return NotebookProblem(str(problem), problem.exit_code)
