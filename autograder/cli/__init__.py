"""The `autograder` command: thin wrappers over the library; errors become messages here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from autograder.cli.common import err, find_kit, friendly, kit_option


@click.group()
@click.version_option(package_name="torch-autograder")
def main() -> None:
    """Autograded PyTorch exercises and exams: build stubs, grade classes, export scores."""


@main.command()
@click.argument("assignment", required=False)
@kit_option
@click.option("--check", "check_only", is_flag=True, help="Only report whether assignments/ is in sync.")
@friendly
def build(assignment: str | None, kit_dir: Path | None, check_only: bool) -> None:
    """Write assignments/ASSIGNMENT (stubs, given files, public checks, README) from solutions/."""
    from autograder.authoring import build as builder

    kit = find_kit(kit_dir)
    target = kit.assignment(assignment)
    if check_only:
        drift = builder.diff_assignment(kit.root, target.id)
        for path in drift:
            click.echo(f"differs: {path}")
        problems = _graders_problems(target)
        if drift:
            raise click.ClickException(
                f"assignments/{target.id} is out of date: run `autograder build {target.id}`"
            )
        if problems:
            raise click.ClickException(f"{target.id}: {len(problems)} problems in its graders (above)")
        click.echo(f"assignments/{target.id} is in sync with solutions/{target.id}; its graders check out")
        return
    written = builder.build_assignment(kit.root, target.id)
    click.echo(f"wrote {len(written)} files to assignments/{target.id}")
    from autograder.authoring.assignment_checks import assignment_problems

    for problem in assignment_problems(target):  # the folder is written; say what doctor will refuse
        click.echo(f"warning: {problem}")


@main.command()
@click.argument("submissions", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for results, feedback, grades.csv and the gradebook.")
@click.option("--assignment", default=None, help="Assignment id (default: the kit's default).")
@click.option("--jobs", type=int, default=None, help="Parallel workers (default: number of cores).")
@click.option("--lang", type=click.Choice(["en", "bn"]), default=None, help="Feedback language.")
@click.option("--gradebook", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="SQLite gradebook (default: OUT/gradebook.sqlite).")
@click.option("--regrade", is_flag=True, help="Grade everyone again (default: resume, keep graded).")
@click.option("--no-sandbox", is_flag=True, help="Run student code without isolation (trusted code only).")
@click.option("--quiet", is_flag=True, help="One line per student instead of a progress bar.")
@click.option("--junit", is_flag=True, help="Also write OUT/junit/<student>.xml (one testcase per check).")
@click.option("--cluster", default=None, metavar="ADDRESS",
              help="Grade on the nodes of this Dask scheduler (see `autograder worker`) instead of here.")
@kit_option
@friendly
def grade(submissions: Path, out: Path, assignment: str | None, jobs: int | None, lang: str | None,
          gradebook: Path | None, regrade: bool, no_sandbox: bool, quiet: bool, junit: bool,
          cluster: str | None, kit_dir: Path | None) -> None:
    """Grade every submission (a folder or zip per student) in SUBMISSIONS."""
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from autograder.batch import grade_batch, list_submissions
    from autograder.grading.options import GradeOptions
    from autograder.submissions.students import shown_name

    kit = find_kit(kit_dir)
    target = kit.assignment(assignment)
    total = len(list_submissions(submissions))
    if no_sandbox:
        err.print("[yellow]warning:[/] --no-sandbox: student code runs without isolation")
    progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err, disable=quiet)
    with progress:
        bar = progress.add_task("grade", total=total)

        def write_junit(result: Any) -> list[Path]:
            from autograder.platforms.junit import junit_filename, write_junit

            (out / "junit").mkdir(parents=True, exist_ok=True)
            return [write_junit(result, out / "junit" / junit_filename(result.student))]

        def show(result: Any) -> None:
            if quiet:
                click.echo(f"{shown_name(result.student)}\t{result.score:g}/{result.max_score:g}")
            progress.advance(bar)

        options = GradeOptions(sandbox=not no_sandbox, lang=lang)
        executor = None
        if cluster:
            from autograder.cluster.client import ClusterExecutor

            executor = ClusterExecutor(cluster)  # the nodes sandbox (or not) as each was started
        def note(text: str) -> None:
            err.print(f"[yellow]note:[/] {escape(shown_name(text))}", highlight=False)

        summary = grade_batch(kit, submissions, out, assignment=target.id, options=options, jobs=jobs,
                              gradebook=gradebook, regrade=regrade, on_result=show, executor=executor,
                              on_notice=note, also_write=write_junit if junit else None)
    for line in summary.left_out_lines():
        click.echo(line)
    click.echo(f"{summary.describe()} in {summary.seconds:.1f} s -> {out}/grades.csv")


@main.command()
@click.argument("folder", required=False, type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--task", default=None, help="Check one task only (its id, as in the README).")
@click.option("--lang", type=click.Choice(["en", "bn"]), default=None, help="Feedback language.")
@click.option("--verbose", "-v", is_flag=True, help="Show every check, passing ones too.")
@click.option("--in-process", is_flag=True, help="Run the checks in this process (no child process).")
@click.option("--assignment", default=None, help="With --kit: whose built checks to use.")
@kit_option
@friendly
def check(folder: Path | None, task: str | None, lang: str | None, verbose: bool, in_process: bool,
          assignment: str | None, kit_dir: Path | None) -> None:
    """Self-check your work against the public checks of its folder (no kit, root or sandbox needed).

    Exit code 0 when every public check passes, 1 when some fail, 2 for a usage error."""
    from autograder.cli.selfcheck import run_selfcheck

    sys.exit(run_selfcheck(folder or Path.cwd(), task, lang, verbose, in_process, assignment, kit_dir))


@main.command()
@kit_option
@friendly
def doctor(kit_dir: Path | None) -> None:
    """Check that this machine can grade: config, graders (what `make test` checks) and the sandbox."""
    from autograder.authoring.assignment_checks import ENGINE_MESSAGES
    from autograder.authoring.catalogue_rules import catalogue_problems
    from autograder.config import LANGUAGES
    from autograder.sandbox.launch import check_available

    kit = find_kit(kit_dir)
    engine = list(catalogue_problems(ENGINE_MESSAGES, LANGUAGES))
    for problem in engine:
        click.echo(f"problem: {problem}")
    failed = [a.id for a in kit.assignments.values() if _graders_problems(a)] + (["engine"] if engine else [])
    if failed:
        raise click.ClickException(f"graders with problems (listed above): {', '.join(failed)}")
    check_available(kit.sandbox.uid_base)
    click.echo("ok: sandbox (bubblewrap namespaces, unprivileged uid)")


def _graders_problems(assignment: Any) -> list[str]:
    """Print and return what is wrong with an assignment's graders: points, keys, catalogues, cells."""
    from autograder.authoring.assignment_checks import assignment_problems
    from autograder.errors import ConfigError
    from autograder.grading.course import load_graders, validate_points

    problems = []
    try:
        graders = load_graders(assignment)
        validate_points(graders)
        checks = sum(len(c) for c in graders.checks.values())
    except ConfigError as exc:
        problems.append(str(exc))
        checks = 0
    problems += assignment_problems(assignment)
    for problem in problems:
        click.echo(f"problem: {assignment.id}: {problem}")
    if not problems:
        click.echo(f"ok: {assignment.id}: {checks} checks, points add up, messages in "
                   f"{'/'.join(assignment.languages)}, notebook cells")
    return problems


@main.command("new")
@click.argument("assignment_id", metavar="ID")
@click.option("--tasks", "task_list", required=True, help="Task names, comma-separated: tensors,autograd.")
@click.option("--title", default="", help="The assignment's title (default: from the id).")
@kit_option
@friendly
def new(assignment_id: str, task_list: str, title: str, kit_dir: Path | None) -> None:
    """Scaffold assignment ID: solutions/ID/ with graders and catalogues, its grading.toml section."""
    from autograder.authoring import build as builder
    from autograder.authoring.scaffold import scaffold_assignment

    kit = find_kit(kit_dir)
    tasks = [t.strip() for t in task_list.split(",") if t.strip()]
    made = scaffold_assignment(kit.root, assignment_id, tasks, title)
    written = builder.build_assignment(kit.root, assignment_id)
    click.echo(f"wrote {len(made.files)} files to solutions/{assignment_id}, its section to grading.toml, "
               f"and {len(written)} files to assignments/{assignment_id}")
    click.echo(f"next: write each task in solutions/{assignment_id}/<task>.py (between the markers), "
               "its checks in graders/public and graders/hidden, its messages in graders/messages/; "
               f"then `autograder build {assignment_id}`, `autograder doctor`, and grade the reference: "
               f"`autograder grade DIR --assignment {assignment_id} --out OUT`")


@main.command()
@click.argument("out", type=click.Path(path_type=Path, exists=True))
@friendly
def verify(out: Path) -> None:
    """Check OUT's ledger against its signed log, and results.json and grades.csv against the ledger."""
    from autograder.cli.common import verifying_key
    from autograder.output.verify import verify_out

    report = verify_out(out, verifying_key(out))
    for line in report.lines():
        click.echo(line)
    if report.entries:
        click.echo(f"signed log: {report.entries} entries, head {report.head[0]} ({report.head[1][:16]}), "
                   f"key id {report.key_id}")
    click.echo(f"{report.checked} grades and {report.files} files of OUT checked, {len(report.problems)} do "
               "not verify")
    sys.exit(0 if report.ok else 1)


def _register() -> None:
    from autograder.cli.cluster import worker
    from autograder.cli.export import export, gradescope
    from autograder.cli.instructor import adjust, extend, release
    from autograder.cli.lti import lti, publish
    from autograder.cli.notebook import notebook
    from autograder.cli.serve import serve
    from autograder.cli.similarity import similarity

    for command in (export, gradescope, publish, lti, notebook, serve, worker, similarity, adjust, extend,
                    release):
        main.add_command(command)
    from autograder.cli.exam import exam

    main.add_command(exam)


_register()

if __name__ == "__main__":
    main()
