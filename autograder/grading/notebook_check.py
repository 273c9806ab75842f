"""`check()` in a Jupyter or Colab cell: the public checks on the names the notebook defined."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grading.student_check import run_check
from autograder.grading.student_report import render_html, render_text
from autograder.grading.student_results import CheckReport


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


def check_notebook(task: str | None = None, *, folder: str | Path | None = None, lang: str | None = None,
                   verbose: bool = False, caller: Mapping[str, Any] | None = None) -> NotebookCheck:
    """Check the notebook's names against the public checks of the assignment folder at or above
    `folder` (default: the notebook's working folder, where its helper files are too). The report
    shows itself as HTML in the notebook (per task: points, failing checks with their feedback)."""
    namespace = _user_namespace(caller)
    where = Path(folder) if folder is not None else Path.cwd()
    return NotebookCheck(run_check(where, task, lang, namespace=namespace), verbose)
