"""`autograder export canvas|moodle|junit` and `autograder gradescope build`.

Register in cli.py with `main.add_command(export)` and `main.add_command(gradescope)`. This module
does not import cli.py at import time, so either order of imports works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from autograder.cli.common import find_kit, friendly, kit_option, require_verified
from autograder.platforms.export_files import ExportError, ExportIncomplete, ExportReport
from autograder.platforms.moodle import MOODLE_ID_COLUMNS
from autograder.platforms.rosters import CANVAS_MATCH

assignment_option = click.option("--assignment", default=None,
                                 help="Assignment id (default: the kit's default).")
_gradebook = click.option(
    "--gradebook", "gradebook_path", type=click.Path(path_type=Path), required=True,
    help="The gradebook `autograder grade` wrote: OUT/gradebook.sqlite, or the OUT folder itself.",
)


def gradebook_option(command: Any) -> Any:
    """--gradebook, and --allow-unverified (kept in the context for current_results)."""

    def remember(ctx: click.Context, _param: Any, value: bool) -> bool:
        ctx.meta["allow_unverified"] = value
        return value

    flag = click.option("--allow-unverified", is_flag=True, expose_value=False, callback=remember,
                        help="Export even when a score no longer matches its signature.")
    return _gradebook(flag(command))


bom_option = click.option("--bom/--no-bom", default=True, show_default=True,
                          help="Begin with a UTF-8 byte-order mark (for Excel).")


def current_results(gradebook_path: Path, assignment_id: str) -> list[Any]:
    """The current result of every student graded for the assignment, with the instructor's
    adjustments in force (the grade as it counts: what every export sends)."""
    from autograder.ledger.book import Gradebook, find_gradebook

    path = find_gradebook(gradebook_path)
    if not path.is_file():
        raise ExportError(f"no gradebook at {path}: run `autograder grade SUBMISSIONS --out OUT` first")
    require_verified(gradebook_path, bool(click.get_current_context().meta.get("allow_unverified")))
    book = Gradebook(path)
    try:
        results = book.standing(assignment_id)
    finally:
        book.close()
    if not results:
        raise ExportError(f"{path} holds no graded submissions of assignment {assignment_id!r}")
    return results


def listed_in_out(paths: list[Path]) -> None:
    """Files an export wrote inside a graded OUT go into its signed list (else verify names them)."""
    from autograder.cli.common import verifying_key
    from autograder.output import sealed

    by_out: dict[Path, list[Path]] = {}
    for path in paths:
        found = next((f for f in path.resolve().parents if sealed.exists(f)), None)
        if found is not None:
            by_out.setdefault(found, []).append(path)
    for out, written in by_out.items():
        sealed.record(out, written, verifying_key(out))


def _report(report: ExportReport, what: str) -> None:
    listed_in_out([Path(report.path)])
    for line in report.warnings:
        click.echo(f"warning: {line}", err=True)
    click.echo(f"wrote {report.rows} {what} rows to {report.path} (details: {report.meta})")


@click.group()
def export() -> None:
    """Write the current grades in an LMS's own import format."""


@export.command("canvas")
@gradebook_option
@click.option("--roster", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Gradebook CSV exported from Canvas (Grades > Export): who to match.")
@click.option("--canvas-id", "canvas_id", required=True,
              help="The Canvas assignment's number (from its address .../assignments/<id>).")
@click.option("--match-by", type=click.Choice(list(CANVAS_MATCH)), default="sis_login_id", show_default=True,
              help="Roster column that holds the kit's student ids.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), required=True, help="CSV to write.")
@click.option("--allow-missing", is_flag=True,
              help="Exit 0 even when roster students or graded submissions are left out of the file.")
@bom_option
@assignment_option
@kit_option
@friendly
def export_canvas(gradebook_path: Path, roster: Path, canvas_id: str, match_by: str, out: Path,
                  allow_missing: bool, bom: bool, assignment: str | None, kit_dir: Path | None) -> None:
    """A CSV for Canvas' Grades > Import: one column "<title> (<canvas id>)" with its Points Possible row."""
    from autograder.platforms.canvas import write_canvas

    target = find_kit(kit_dir).assignment(assignment)
    results = current_results(gradebook_path, target.id)
    report = write_canvas(results, target, roster, out, match_by, canvas_id, bom=bom)
    _report(report, "student")
    left_out = len(report.missing_submissions) + len(report.unmatched_submissions)
    if left_out and not allow_missing:
        raise ExportIncomplete(
            f"{out} was written but leaves {left_out} student(s) out (named above): fix the roster or "
            f"--match-by, or pass --allow-missing if that is what you want"
        )


@export.command("moodle")
@gradebook_option
@click.option("--id-column", type=click.Choice(list(MOODLE_ID_COLUMNS)), default="email", show_default=True,
              help="Moodle user field of the first column (map it to user<field> on import).")
@click.option("--roster", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="CSV with columns student,email,username,idnumber mapping the kit's student ids "
                   "(default: the student ids are the Moodle identifiers).")
@click.option("--grade-item", default=None,
              help="The grade item's name as Moodle's gradebook shows it (an activity: 'Assignment: "
                   "<name>'; default: the assignment's title): the columns are named so Moodle maps them.")
@click.option("--lang", type=click.Choice(["en", "bn"]), default="en", show_default=True,
              help="Language of the feedback text (the gradebook's language).")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), required=True, help="CSV to write.")
@click.option("--allow-missing", is_flag=True,
              help="Exit 0 even when roster students or graded submissions are left out of the file.")
@bom_option
@assignment_option
@kit_option
@friendly
def export_moodle(gradebook_path: Path, id_column: str, roster: Path | None, grade_item: str | None,
                  lang: str, out: Path, allow_missing: bool, bom: bool, assignment: str | None,
                  kit_dir: Path | None) -> None:
    """A CSV for Moodle's Grades > Import > CSV file: identifier, grade and feedback columns."""
    from autograder.platforms.moodle import MOODLE_MAP_TO, moodle_columns, write_moodle

    target = find_kit(kit_dir).assignment(assignment)
    results = current_results(gradebook_path, target.id)
    report = write_moodle(results, target, out, id_column, roster, bom=bom, grade_item=grade_item, lang=lang)
    _report(report, "student")
    item = grade_item or target.title
    grade, feedback = moodle_columns(item)
    click.echo(
        f"Moodle preselects the mapping when a grade item is named {item!r}: "
        f"{MOODLE_ID_COLUMNS[id_column]!r} -> {MOODLE_MAP_TO[id_column]}, {grade!r} -> {item!r}, "
        f"{feedback!r} -> feedback for {item!r}; otherwise choose these by hand"
    )
    left_out = len(report.missing_submissions) + len(report.unmatched_submissions)
    if left_out and not allow_missing:  # as Canvas: the file stays, the exit code says who is not in it
        if not report.unmatched_submissions:
            fix = "grade the roster students' submissions first"
        elif roster is not None:
            fix = f"fill the {id_column} of the unmatched ones in roster {roster}"
        else:
            fix = f"pass --roster ROSTER.csv (columns student,{id_column}) or another --id-column"
        raise ExportIncomplete(
            f"{out} was written but leaves {left_out} student(s) out (named above): {fix}, "
            f"or pass --allow-missing if that is what you want"
        )


@export.command("junit")
@gradebook_option
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for one JUnit XML file per student.")
@assignment_option
@kit_option
@friendly
def export_junit(gradebook_path: Path, out: Path, assignment: str | None, kit_dir: Path | None) -> None:
    """One JUnit XML file per student: a testsuite per task, a testcase per check, points as properties."""
    from autograder.platforms.junit import write_junit_all

    target = find_kit(kit_dir).assignment(assignment)
    written = write_junit_all(current_results(gradebook_path, target.id), out)
    listed_in_out(written)
    click.echo(f"wrote {len(written)} JUnit XML files to {out}")


@click.group()
def gradescope() -> None:
    """Gradescope: build the autograder.zip to upload."""


@gradescope.command("build")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=Path("autograder.zip"),
              show_default=True, help="Zip to write.")
@click.option("--hidden-visibility", default="after_published", show_default=True,
              type=click.Choice(["after_published", "after_due_date", "hidden", "visible"]),
              help="When students see hidden checks (public checks are always visible).")
@assignment_option
@kit_option
@friendly
def gradescope_build(out: Path, hidden_visibility: str, assignment: str | None, kit_dir: Path | None) -> None:
    """Write autograder.zip: setup.sh, run_autograder, the engine, the solutions and hidden graders."""
    from autograder.platforms.gradescope import HIDDEN_TOTAL_NOTE, build_gradescope_zip

    kit = find_kit(kit_dir)
    target = kit.assignment(assignment)
    build_gradescope_zip(kit.root, target.id, out, hidden_visibility=hidden_visibility)
    click.echo(f"wrote {out} for {target.id} (hidden checks: {hidden_visibility}); it holds the hidden "
               "graders and reference solutions: upload it to Gradescope, never share it")
    click.echo(f"hidden checks {hidden_visibility}: {HIDDEN_TOTAL_NOTE[hidden_visibility]}")
