"""`autograder check`: find the folder's checks, run them (in a spawned child), print one line a task."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from rich.console import Console

from autograder.config import load_kit
from autograder.errors import AutograderError, ConfigError
from autograder.grading.student_locate import find_student_checks
from autograder.manifest import CHECKS_DIR, MANIFEST_FILE, find_checks, read_manifest

STYLES = {"ok": "green", "fail": "red", "bold": "bold", "dim": "", "": ""}


def _folder_language(folder: Path) -> str:
    """The language of the checks at or above `folder` (its manifest's), English when there are none."""
    try:
        return read_manifest(find_checks(folder) / MANIFEST_FILE).language
    except AutograderError:
        return "en"


def checks_for(folder: Path, assignment: str | None, kit_dir: Path | None, lang: str | None = None) -> Path:
    """The folder's own checks/ (a student's copy); with --kit, or inside the kit, the kit's built ones."""
    if kit_dir is None:
        try:
            return find_student_checks(folder, lang)
        except ConfigError as missing:
            # only a kit the folder is inside of (never the one this package may have been installed from)
            kit_dir = next((f for f in (folder.resolve(), *folder.resolve().parents)
                            if (f / "grading.toml").is_file()), None)
            if kit_dir is None:
                raise missing from None
    kit = load_kit(kit_dir)
    target = kit.assignment(assignment)
    built = kit.root / "assignments" / target.id / CHECKS_DIR
    if not (built / MANIFEST_FILE).is_file():
        raise ConfigError(f"{built / MANIFEST_FILE} not found: run `autograder build {target.id}` first")
    return built


def _utf8_safe_stdout() -> None:
    # A Windows console or pipe may not encode Bangla: show "?" rather than crash on a feedback line.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")


def run_selfcheck(folder: Path, task: str | None, lang: str | None, verbose: bool, in_process: bool,
                  assignment: str | None, kit_dir: Path | None) -> int:
    """Check `folder` and print the report; returns the exit code (0 all pass, 1 some fail)."""
    from autograder.grading.student_report import text_lines

    _utf8_safe_stdout()
    try:
        checks_dir = checks_for(folder, assignment, kit_dir, lang)
        if in_process:
            from autograder.grading.student_check import run_check

            report = run_check(folder, task, lang, checks_dir=checks_dir)
        else:
            from autograder.grading.student_child import run_check_in_child

            report = run_check_in_child(folder, task, lang, checks_dir=checks_dir)
    except AutograderError as problem:  # "error:" too in the student's language (or the folder's)
        from autograder.grading.student_locate import engine_text

        said = engine_text(lang or _folder_language(folder), "selfcheck_error")
        Console(stderr=True, highlight=False).print(f"{said}: {problem}", style="bold red", markup=False,
                                                    soft_wrap=True)
        return problem.exit_code
    console = Console(highlight=False)
    for style, text in text_lines(report, verbose):
        console.print(text, style=STYLES.get(style, ""), markup=False, soft_wrap=True)
    return report.exit_code
