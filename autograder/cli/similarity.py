"""`autograder similarity SUBMISSIONS --out OUT`: similar files across a class, for review."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli.common import err, find_kit, friendly, kit_option
from autograder.integrity.similarity import DEFAULT_FLOOR, DEFAULT_THRESHOLD, METHODS

_EXISTING = click.Path(path_type=Path, exists=True)


@click.command("similarity")
@click.argument("submissions", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder for similarity.csv and similarity/ (a page per pair); grade's OUT is fine.",
)
@click.option("--assignment", default=None, help="Assignment id (default: the kit's default).")
@click.option(
    "--archive",
    "archives",
    multiple=True,
    type=_EXISTING,
    help="An earlier term: its submissions folder or its OUT (repeat for several).",
)
@click.option(
    "--public",
    "public",
    multiple=True,
    type=_EXISTING,
    help="Known public solutions: a folder of them, or one (repeat for several).",
)
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="syntax",
    show_default=True,
    help="Fingerprints: canonical syntax trees, winnowed tokens, or both.",
)
@click.option(
    "--floor", type=float, default=DEFAULT_FLOOR, show_default=True, help="Rows scoring less are not written."
)
@click.option(
    "--threshold",
    type=float,
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="The class report flags pairs of students from this score.",
)
@click.option("--jobs", type=int, default=None, help="Processes that fingerprint (default: number of cores).")
@click.option("--lang", type=click.Choice(["en", "bn"]), default=None, help="Language of the pages.")
@click.option(
    "--secret-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="An exam's secret (to find files holding another variant's numbers); default: "
    "$AUTOGRADER_EXAM_SECRET or the file $AUTOGRADER_EXAM_SECRET_FILE names.",
)
@kit_option
@friendly
def similarity(
    submissions: Path,
    out: Path,
    assignment: str | None,
    archives: tuple[Path, ...],
    public: tuple[Path, ...],
    method: str,
    floor: float,
    threshold: float,
    jobs: int | None,
    lang: str | None,
    secret_file: Path | None,
    kit_dir: Path | None,
) -> None:
    """Compare every task file of SUBMISSIONS with the class's, earlier terms' and public ones.

    Evidence for the instructor's review, never a deduction: nothing here changes a grade."""
    import functools
    import os
    from collections.abc import Callable

    from autograder.cli.common import verifying_key
    from autograder.exam.variants import ExamError, Variant, VariantSpace, load_secret
    from autograder.integrity.corpus import read_submissions
    from autograder.ledger.book import find_gradebook
    from autograder.output import sealed
    from autograder.output.similarity_files import CSV_NAME, NO_SECRET, PAGES, run_similarity
    from autograder.output.similarity_pages import engine_ui
    from autograder.submissions.students import shown_name

    kit = find_kit(kit_dir)
    target = kit.assignment(assignment)
    language = lang or kit.language
    if not 0 <= floor <= threshold <= 1:
        raise click.BadParameter("need 0 <= --floor <= --threshold <= 1", param_hint="--floor/--threshold")
    space = VariantSpace.of(target)
    variant_of: Callable[[str], Variant | None] | None = None
    notes = []
    if space.knobs:
        try:
            secret = load_secret(secret_file, kit.root)
        except ExamError as exc:
            err.print(
                f"[yellow]warning:[/] not looking for another variant's numbers: {exc}", highlight=False
            )
            notes.append(NO_SECRET)
        else:
            variant_of = functools.partial(space.derive, secret)
    on_written = None
    if out.is_dir() and (sealed.exists(out) or find_gradebook(out).is_file()):  # a graded OUT: its list too
        key = verifying_key(out)

        def on_written(paths: list[Path]) -> None:
            sealed.record(out, paths, key, replace_under=PAGES)

    found = run_similarity(
        target,
        read_submissions(submissions, target),
        out,
        archives=archives,
        public=public,
        method=method,
        floor=floor,
        threshold=threshold,
        jobs=jobs or len(os.sched_getaffinity(0)),
        variant_of=variant_of,
        notes=notes,
        messages={"ui": engine_ui(language)},
        lang=language,
        on_written=on_written,
    )
    compared = ", ".join(f"{n} {side}" for side, n in found.compared.items() if n)
    click.echo(
        f"compared {compared}: {len(found.pairs)} file pairs score {floor:g} or more -> {out / CSV_NAME}"
    )
    click.echo(f"{len(found.flagged)} pairs of students reach {threshold:g} (for review, not a verdict)")
    for pair in found.flagged[:10]:
        click.echo(f"  {pair.score:.2f}  {shown_name(pair.student_a)} ~ {shown_name(pair.student_b)}  "
                   f"({', '.join(pair.tasks)})")
    if found.constants:
        click.echo(f"{len(found.constants)} exam files hold another variant's numbers and not their own:")
        for c in found.constants[:10]:
            owners = ", ".join(c.owners[:5]) or "nobody in this class"
            click.echo(f"  {shown_name(c.student)} {c.task}: {c.found} (own: {c.own}); that variant is "
                       f"{shown_name(owners)}'s")
