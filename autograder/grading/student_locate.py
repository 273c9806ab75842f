"""Where a self-check looks: the student folder from anywhere inside it, and the tasks asked for.

Its errors are in the student's language and name the fix for where they work (a terminal's
`autograder check FOLDER`, a notebook's `check(folder=...)`). Light: torch and the checks are not
imported, so a broken install is still reported as one.
"""

from __future__ import annotations

from pathlib import Path

from autograder.errors import ConfigError
from autograder.grading.student_environment import engine_labels
from autograder.manifest import (
    MANIFEST_FILE,
    MANIFEST_FIX,
    Manifest,
    ManifestTask,
    find_checks,
    read_manifest,
)


def engine_text(lang: str, key: str, **values: object) -> str:
    """One of the engine catalogue's [ui] texts in `lang` (English where that lacks it)."""
    labels, english = engine_labels(lang), engine_labels("en")
    try:
        return labels[key].format(**values)
    except (KeyError, IndexError, ValueError):
        return english[key].format(**values)


def find_student_checks(folder: Path, lang: str | None, notebook: bool = False) -> Path:
    """The checks/ at or above `folder` (manifest.find_checks); none says so in `lang`."""
    try:
        return find_checks(folder)
    except ConfigError:
        key = "selfcheck_no_folder_notebook" if notebook else "selfcheck_no_folder"
        raise ConfigError(engine_text(lang or "en", key, folder=folder.resolve())) from None


def selected_tasks(manifest: Manifest, only: str | None, lang: str | None = None) -> tuple[ManifestTask, ...]:
    """Every task of the manifest, or the one asked for (an unknown one is refused in `lang`)."""
    if only is None:
        return manifest.tasks
    chosen = tuple(t for t in manifest.tasks if t.id == only)
    if not chosen:
        known = ", ".join(t.id for t in manifest.tasks)
        raise ConfigError(engine_text(lang or manifest.language, "selfcheck_no_task", task=only,
                                      assignment=manifest.assignment, known=known))
    return chosen


def read_student_manifest(checks_dir: Path, lang: str | None) -> Manifest:
    """The folder's manifest; a damaged one (or one of another kit version) says so in `lang`."""
    path = checks_dir / MANIFEST_FILE
    try:
        return read_manifest(path)
    except ConfigError as exc:
        problem = str(exc).removeprefix(f"{path}: ").removesuffix(f": {MANIFEST_FIX}")
        raise ConfigError(engine_text(lang or "en", "selfcheck_bad_manifest", path=path,
                                      problem=problem)) from None
