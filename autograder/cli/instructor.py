"""`autograder adjust|extend|release`: the instructor's records in a graded OUT's ledger (issue #28).

Register in cli.py with `main.add_command(...)`. Each records in the ledger (ledger/instructor.py),
signed like a grade, then says what changed and what happens next.
"""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from autograder.cli.common import find_kit, friendly, kit_option
from autograder.config import Assignment

if TYPE_CHECKING:
    from autograder.ledger.book import Gradebook

_out = click.argument("out", type=click.Path(path_type=Path, exists=True))
_assignment = click.option("--assignment", default=None,
                           help="Assignment id (default: the gradebook's only one, else the kit's default).")
_author = click.option("--author", default=None, help="Who makes the record (default: your user name).")


def _author_of(author: str | None) -> str:
    if author:
        return author
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name (a container's uid without a passwd entry)
        return "instructor"


def _open(out: Path, assignment: str | None, kit_dir: Path | None) -> tuple[Assignment, Gradebook]:
    from autograder.errors import LedgerError
    from autograder.ledger.book import Gradebook, find_gradebook

    path = find_gradebook(out)
    if not path.is_file():
        raise LedgerError(f"no gradebook at {path}: OUT is the folder `autograder grade ... --out OUT` wrote")
    kit = find_kit(kit_dir)
    book = Gradebook(path)
    try:
        if assignment is None:
            known = book.assignments()
            assignment = known[0] if len(known) == 1 else None
        return kit.assignment(assignment), book
    except BaseException:
        book.close()
        raise


@click.command()
@_out
@click.argument("student")
@click.option("--task", default="", help="The task adjusted (alone: the task as a whole).")
@click.option("--check", "check_id", default="", help="The check adjusted (its id, as in results.json).")
@click.option("--points", type=float, required=True, help="Points to give (negative: to take).")
@click.option("--reason", required=True, help="Why: the student reads it with their feedback.")
@_author
@_assignment
@click.option("--lang", type=click.Choice(["en", "bn"]), default=None,
              help="Language of the files written again (default: the one OUT's report is in).")
@kit_option
@friendly
def adjust(out: Path, student: str, task: str, check_id: str, points: float, reason: str, author: str | None,
           assignment: str | None, lang: str | None, kit_dir: Path | None) -> None:
    """Give or take points of STUDENT's grade in OUT: on a check, a task or the total, with a reason.

    The adjustment is a signed record of the ledger, kept across regrades; OUT's files (the
    student's, grades.csv, report.html, junit/) are written again with the adjusted score."""
    from autograder.ledger.adjustments import graded_score, signed_points
    from autograder.ledger.instructor import adjust as record
    from autograder.output.rewrite import rewrite, written_language

    target, book = _open(out, assignment, kit_dir)
    try:
        made = record(book, target, student, points, reason, _author_of(author),
                      task=task, check_id=check_id)
        shown = made.standing
        files = out.is_dir() and (out / "grades.csv").is_file()  # a graded OUT (not the service's data)
        if files:
            language = lang or written_language(out, find_kit(kit_dir).language)
            rewrite(out, book, target, [shown.student], language)
            junit = out / "junit"
            if junit.is_dir():
                from autograder.output import sealed
                from autograder.platforms.junit import junit_filename, write_junit

                written = write_junit(shown, junit / junit_filename(shown.student))
                sealed.record(out, [written], book.signing_key())
    finally:
        book.close()
    item = made.adjustment
    scope = f"check {item.check_id} (task {item.task})" if item.check_id else \
        f"task {item.task}" if item.task else "the total"
    kept = "" if made.made == item.points else \
        f", made {signed_points(made.made)} (kept within the range of {scope})"
    click.echo(f"adjusted {shown.student}'s {scope}: asked {signed_points(item.points)}{kept}; "
               f"total {graded_score(shown):g} as graded -> {shown.score:g}/{shown.max_score:g} "
               f"(adjustment {item.id}, by {item.author})")
    if files:
        click.echo(f"wrote {out}/grades.csv, report.html and {shown.student}'s files again; exports from OUT "
                   "send the adjusted score")


@click.command()
@_out
@click.argument("student", required=False)
@click.option("--until", default=None, metavar="ISO",
              help="The student's own deadline (ISO 8601; without an offset, in the assignment's time zone).")
@click.option("--exempt", is_flag=True,
              help="Exempt the student from the late policy (no penalty, no cutoff).")
@click.option("--withdraw", is_flag=True, help="Withdraw the student's extension.")
@click.option("--csv", "csv_file", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="Extensions of many students: columns student,until,exempt,reason.")
@click.option("--reason", default="", help="Why (kept in the ledger).")
@_author
@_assignment
@kit_option
@friendly
def extend(out: Path, student: str | None, until: str | None, exempt: bool, withdraw: bool,
           csv_file: Path | None, reason: str, author: str | None, assignment: str | None,
           kit_dir: Path | None) -> None:
    """Give STUDENT (or each student of --csv) their own deadline or a late-policy exemption.

    Recorded in OUT's ledger; the late policy applies it when `autograder grade` runs again (a
    student whose extension changed is graded again), and the release rule at once."""
    from autograder.ledger.instructor import (
        ExtensionAsked,
        InstructorError,
        parse_moment,
        read_extensions,
        zone_of,
    )
    from autograder.ledger.instructor import extend as record

    if (csv_file is None) == (student is None):
        raise InstructorError("name one STUDENT, or pass --csv FILE (not both)")
    if csv_file is None and sum((until is not None, exempt or False, withdraw)) == 0:
        raise InstructorError("say what the extension is: --until ISO, --exempt (or both), or --withdraw")
    if withdraw and (until is not None or exempt):
        raise InstructorError("--withdraw records no extension: give it alone")
    if csv_file is not None and (until is not None or exempt or withdraw):
        raise InstructorError("--csv holds each student's until and exempt: give neither option with it")
    target, book = _open(out, assignment, kit_dir)
    try:
        if csv_file is not None:
            asked = read_extensions(csv_file, target)
        else:
            assert student is not None
            moment = parse_moment(until, zone_of(target), "--until") if until is not None else None
            asked = [ExtensionAsked(student, moment, exempt, reason)]
        ids = record(book, target, asked, _author_of(author))
    finally:
        book.close()
    for item, row in zip(asked, ids, strict=True):
        what = [f"deadline {item.until.isoformat()}"] if item.until is not None else []
        what += ["exempt from the late policy"] if item.exempt else []
        click.echo(f"{item.student}: {', '.join(what) or 'no extension (withdrawn)'} (record {row})")
    if target.exam is None:
        click.echo(f"note: {target.id} has no deadline or late policy in grading.toml: only a release "
                   "at a time (`autograder release --at`) waits for an extended deadline")
    click.echo("the late policy applies it when `autograder grade SUBMISSIONS --out OUT` runs again "
               "(those students are graded again); the service's release rule at once")


@click.command()
@_out
@click.option("--hold", "mode", flag_value="held", help="Hold scores and feedback until released.")
@click.option("--at", "at", default=None, metavar="ISO", help="Release at this moment (ISO 8601).")
@click.option("--now", "mode", flag_value="now", help="Release now (LMS passback follows).")
@_author
@_assignment
@kit_option
@friendly
def release(out: Path, mode: str | None, at: str | None, author: str | None, assignment: str | None,
            kit_dir: Path | None) -> None:
    """Hold an assignment's scores and feedback, release them at a moment, or now.

    The service's pages, its LMS passback and `publish lti` follow it: held scores are sent when
    the release comes."""
    from autograder.ledger.instructor import InstructorError, parse_moment, zone_of
    from autograder.ledger.instructor import release as record

    if (mode is None) == (at is None):
        raise InstructorError("give one of --hold, --at ISO, --now")
    target, book = _open(out, assignment, kit_dir)
    try:
        moment = parse_moment(at, zone_of(target), "--at") if at is not None else None
        hold = record(book, target.id, "at" if moment is not None else str(mode), _author_of(author),
                      moment)
    finally:
        book.close()
    said = {"held": "held until `autograder release --now` (or the service's button)",
            "now": "released now", "at": f"held until {hold.at.isoformat() if hold.at else ''}"}
    click.echo(f"{target.id}: {said[hold.mode]} (record {hold.record}); the service's pages, its passback "
               "and `autograder publish lti` follow it")
