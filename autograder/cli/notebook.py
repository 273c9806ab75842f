"""`autograder notebook build|split`: the nbgrader source notebook, and how a notebook is graded."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.authoring.source_notebook import build_source_notebook, points_text
from autograder.cli.common import friendly, kit_option
from autograder.config import Kit, find_kit_root, load_kit
from autograder.submissions.notebook import collect_notebook, notebook_assignment, write_files


def _kit(kit_dir: Path | None) -> Kit:
    # --kit may name any folder inside the kit here (the kit is found upwards from it)
    return load_kit(find_kit_root(kit_dir))


@click.group("notebook")
def notebook() -> None:
    """Jupyter notebooks: build the nbgrader source notebook, split a submitted notebook into files."""


@notebook.command("build")
@click.argument("assignment", required=False)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Notebook to write (default: ASSIGNMENT.ipynb here).")
@kit_option
@friendly
def build_command(assignment: str | None, out: Path | None, kit_dir: Path | None) -> None:
    """Write the nbgrader source notebook of ASSIGNMENT (put it in source/ASSIGNMENT/ of the course)."""
    kit = _kit(kit_dir)
    target = kit.assignment(assignment)
    path = build_source_notebook(kit.root, target.id, out or Path(f"{target.id}.ipynb"))
    click.echo(f"wrote {path} ({len(target.tasks)} tasks, {points_text(target.max_score)} points); "
               f"release it with `nbgrader generate_assignment {target.id}`")


@notebook.command("split")
@click.argument("notebook_path", metavar="NOTEBOOK",
                type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for the task files.")
@click.option("--assignment", default=None,
              help="Assignment id (default: the one the notebook's metadata names, else the kit's default).")
@kit_option
@friendly
def split_command(notebook_path: Path, out: Path, assignment: str | None, kit_dir: Path | None) -> None:
    """Show how NOTEBOOK is graded: write its task files to OUT (nothing in it is run)."""
    target = _kit(kit_dir).assignment(assignment or notebook_assignment(notebook_path))
    click.echo(f"assignment: {target.id}")
    collected = collect_notebook(notebook_path, target.given, target)
    for note in collected.notes:
        click.echo(f"note: {note}")
    if collected.problem:
        raise click.ClickException(collected.problem)
    for path in write_files(collected, out):
        click.echo(f"wrote {path}")
