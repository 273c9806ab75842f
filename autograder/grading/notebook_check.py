"""`check()` in a Jupyter or Colab cell: the public checks on the names the notebook defined."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grading.student_check import run_check
from autograder.grading.student_report import render_html, render_text
from autograder.grading.student_results import CheckReport, TaskOutcome


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


def run_check_forked(folder: Path, task: str | None, lang: str | None,
                     namespace: Mapping[str, Any]) -> CheckReport:
    """The public checks of the notebook's names, each task's probe calls in forks of this kernel timed
    on their own clock as the grade times them: an endless loop in a cell costs the checks that call
    it (their feedback says where it was), not the kernel, nor the task's other checks."""
    import time

    from autograder.grading.student_check import (
        check_task,
        empty_report,
        load_checks,
        output_note,
        require_sound_install,
    )
    from autograder.grading.student_locate import find_student_checks, read_student_manifest, selected_tasks
    from autograder.grading.student_process import capped_output, empty_folder, no_bytecode, private_tmp
    from autograder.manifest import student_folder
    from autograder.sandbox.inside.runtime import load_lazy_torch

    started = time.monotonic()
    checks_dir = find_student_checks(folder, lang, notebook=True)
    folder = student_folder(folder, checks_dir)
    manifest = read_student_manifest(checks_dir, lang)
    if manifest.check == "none":
        return run_check(folder, task, lang, checks_dir=checks_dir)
    require_sound_install(lang or manifest.language)
    outcomes: list[TaskOutcome] = []
    with no_bytecode():
        loaded = load_checks(checks_dir, lang)
    report = empty_report(loaded)
    load_lazy_torch()  # once, in the kernel, before any task's clock starts (its threads stay)
    with no_bytecode(), private_tmp() as tmp:
        for chosen in selected_tasks(loaded.manifest, task, lang):
            with capped_output(output_note(loaded)):
                outcomes.append(check_task(loaded, chosen, folder.resolve(), namespace, forked=True))
            empty_folder(tmp)
    return CheckReport(report.assignment, report.title, report.lang, tuple(outcomes), False,
                       time.monotonic() - started, report.labels, report.built_with, str(folder))


def check_notebook(task: str | None = None, *, folder: str | Path | None = None, lang: str | None = None,
                   verbose: bool = False, caller: Mapping[str, Any] | None = None
                   ) -> NotebookCheck | NotebookProblem:
    """Check the notebook's names against the public checks of the assignment folder at or above
    `folder` (default: the notebook's working folder, where its helper files are too). The report
    shows itself as HTML in the notebook (per task: points, failing checks with their feedback).
    Each task runs in a fork of the kernel with its time limit where the system forks safely (Linux:
    Colab, JupyterHub); elsewhere in the kernel itself, without one."""
    from autograder.errors import AutograderError
    from autograder.grading.student_child import FORKS
    from autograder.grading.student_locate import find_student_checks

    namespace = _user_namespace(caller)
    where = Path(folder) if folder is not None else Path.cwd()
    try:
        if FORKS:
            return NotebookCheck(run_check_forked(where, task, lang, namespace), verbose)
        checks_dir = find_student_checks(where, lang, notebook=True)
        report = run_check(where, task, lang, namespace=namespace, checks_dir=checks_dir)
        return NotebookCheck(report, verbose)
    except AutograderError as problem:  # no folder, no such task, a broken install: said, not a traceback
        return NotebookProblem(str(problem), problem.exit_code)
