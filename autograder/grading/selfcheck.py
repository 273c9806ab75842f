"""The student's self-check: public checks on a working copy, printed with feedback."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from autograder.config import Kit
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions


def folder_assignment(kit: Kit, folder: Path) -> str | None:
    """The assignment a built student folder is (the kit's assignments/<id>/, or inside it), if any."""
    built = (kit.root / "assignments").resolve()
    folder = folder.resolve()
    if folder.is_relative_to(built) and folder != built:
        name = folder.relative_to(built).parts[0]
        return name if name in kit.assignments else None
    return None


def run_selfcheck(kit: Kit, folder: Path, assignment: str | None, lang: str | None) -> int:
    """Grade `folder` on the public checks without a sandbox; returns the exit code.

    Without `assignment`: the one whose built folder `folder` is, else the kit's default.
    """
    target = kit.assignment(assignment or folder_assignment(kit, folder))
    shipped = kit.root / "assignments" / target.id / "checks"
    console = Console()
    if target.exam is not None:  # an exam: the instructor decides what a self-check may run
        if target.exam.check == "none":
            console.print("Self-checks are turned off during this exam: every check runs after you "
                          "submit, and you see the feedback when grades are published.")
            return 0
        own = folder / "checks"  # a student's exam folder carries checks with their own numbers
        shipped = own if (own / "probes.py").is_file() else shipped
    options = GradeOptions(sandbox=False, lang=lang, public_only=True,
                           graders_folder=shipped if shipped.is_dir() else None)
    with Grader(kit, target.id, options) as grader:
        result = grader.grade(folder, student="self-check")
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)
    for task in result.tasks:
        console.print(f"\n[bold]{task.task}[/] {task.score:g}/{task.max_score:g}", highlight=False)
        for c in task.checks:
            mark = "[green]PASS[/]" if c.passed else "[red]FAIL[/]"
            console.print(f"  {mark} {c.title} ({c.score:g}/{c.max_score:g})", highlight=False)
            for line in c.feedback.splitlines():
                console.print(f"       {line}", highlight=False, markup=False)
    console.print(
        f"\n[bold]public checks: {result.score:g}/{result.max_score:g}[/] "
        "(hidden checks are graded after you submit)",
        highlight=False,
    )
    return 0
