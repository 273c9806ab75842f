"""`autograder exam build|grade|variant`: an exam with its own numbers for every student.

Register in cli.py with `main.add_command(exam)`. This module does not import cli.py at import
time, so either order of imports works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from autograder.cli.common import find_kit, friendly, kit_option

assignment_option = click.option(
    "--assignment", default=None, help="The exam's assignment id (default: the only exam in grading.toml)."
)
secret_option = click.option(
    "--secret-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
    help="File holding the exam secret, outside the kit (default: $AUTOGRADER_EXAM_SECRET, "
         "or the file $AUTOGRADER_EXAM_SECRET_FILE names).",
)


@click.group()
def exam() -> None:
    """Exams: a different version for every student, graded by the same hidden graders."""


@exam.command("build")
@click.option("--roster", type=click.Path(path_type=Path, dir_okay=False, exists=True), required=True,
              help="CSV with a header; the id column is student, id, email or username (name optional).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for one folder and one zip per student, and manifest.csv.")
@assignment_option
@secret_option
@kit_option
@friendly
def build(roster: Path, out: Path, assignment: str | None, secret_file: Path | None,
          kit_dir: Path | None) -> None:
    """Write every student's exam: stubs and README with their own numbers, no hidden checks."""
    from autograder.exam import bundles as exam_bundles
    from autograder.exam import variants as exams

    kit = find_kit(kit_dir)
    target = exams.exam_assignment(kit, assignment)
    secret = exams.load_secret(secret_file, kit.root)
    bundles = exam_bundles.build_bundles(kit, target, exam_bundles.read_roster(roster), out, secret)
    versions = len({b.variant.code for b in bundles})
    click.echo(f"wrote {len(bundles)} exam folders and zips ({versions} different versions) to {out}; "
               f"who has which version: {out / 'manifest.csv'}")


@exam.command("grade")
@click.argument("submissions", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for results, feedback, grades.csv, report.html and the gradebook.")
@click.option("--times", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="CSV of student,time (ISO 8601): submission times from the platform. Default: each "
                   "submission's timestamp.txt (nbgrader) or submission_metadata.json (Gradescope).")
@assignment_option
@secret_option
@click.option("--jobs", type=int, default=None, help="Parallel workers (default: number of cores).")
@click.option("--lang", type=click.Choice(["en", "bn"]), default=None, help="Feedback language.")
@click.option("--regrade", is_flag=True, help="Grade everyone again (default: resume, keep graded).")
@click.option("--no-sandbox", is_flag=True, help="Run student code without isolation (trusted code only).")
@kit_option
@friendly
def grade(submissions: Path, out: Path, times: Path | None, assignment: str | None,
          secret_file: Path | None, jobs: int | None, lang: str | None, regrade: bool, no_sandbox: bool,
          kit_dir: Path | None) -> None:
    """Grade an exam: each student against their own version, with the late policy applied.

    `autograder grade --assignment EXAM` does the same with the secret from the environment and
    the times from the submissions' metadata.
    """
    from autograder.batch import grade_batch
    from autograder.exam import timing
    from autograder.exam import variants as exams
    from autograder.grading.options import GradeOptions

    kit = find_kit(kit_dir)
    target = exams.exam_assignment(kit, assignment)
    secret = exams.load_secret(secret_file, kit.root) if target.exam and target.exam.variants else None
    assert target.exam is not None
    table = timing.read_times(times, target.exam.tz) if times else None

    def show(result: Any) -> None:
        late = result.exam.get("late", {}).get("status", "")
        swapped = " SWAPPED?" if result.exam.get("swapped") else ""
        code = result.exam.get("variant", "")
        click.echo(f"{result.student}\t{code}\t{result.score:g}/{result.max_score:g}\t{late}{swapped}")

    options = GradeOptions(sandbox=not no_sandbox, lang=lang)
    summary = grade_batch(kit, submissions, out, assignment=target.id, options=options, jobs=jobs,
                          regrade=regrade, on_result=show, secret=secret, times=table)
    for line in summary.left_out_lines():
        click.echo(line)
    click.echo(f"{summary.describe()} in {summary.seconds:.1f} s -> {out}/grades.csv, {out}/report.html")


@exam.command("variant")
@click.argument("students", nargs=-1, required=True)
@assignment_option
@secret_option
@kit_option
@friendly
def variant(students: tuple[str, ...], assignment: str | None, secret_file: Path | None,
            kit_dir: Path | None) -> None:
    """Show which version of the exam each STUDENT has (instructor only: needs the secret)."""
    from autograder.exam import variants as exams

    kit = find_kit(kit_dir)
    target = exams.exam_assignment(kit, assignment)
    space = exams.VariantSpace.of(target)
    secret = exams.load_secret(secret_file, kit.root)
    for student in students:
        chosen = space.derive(secret, student)
        click.echo(f"{student}\t{chosen.code}\t{chosen.describe()}")
