"""OUT's files written again after an instructor's record (an adjustment): the grade as it counts now.

`autograder adjust` records in the ledger, then the students' files (results.json, feedback) and the
class files (grades.csv, report.html) are written from the ledger as `grade` writes them, in the
language OUT was written in (its report's `lang`), so every export made from OUT afterwards, and
`verify`, see the adjusted score.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from autograder.config import LANGUAGES, Assignment
from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.grading.results import SubmissionResult
from autograder.ledger.book import Gradebook
from autograder.output import reports, sealed

_LANG = re.compile(r'<html lang="([a-z]+)"')
_SECONDS = re.compile(r'id="seconds">([0-9.]+) s<')


def written_language(out: Path, default: str) -> str:
    """The language OUT's report was written in (`default` when there is no report yet)."""
    try:
        found = _LANG.search((out / "report.html").read_text(encoding="utf-8")[:2000])
    except OSError:
        return default
    return found.group(1) if found and found.group(1) in LANGUAGES else default


def _batch_seconds(out: Path) -> float:
    """How long the batch that wrote OUT's report took (what the report keeps saying)."""
    try:
        found = _SECONDS.search((out / "report.html").read_text(encoding="utf-8"))
    except OSError:
        return 0.0
    return float(found.group(1)) if found else 0.0


def rewrite(out: Path, book: Gradebook, target: Assignment, students: Iterable[str],
            lang: str) -> list[SubmissionResult]:
    """Write `students`' files and the class files again from the ledger (and into OUT's signed list
    of files); the students' standing grades."""
    messages = load_messages([ENGINE_MESSAGES, target.graders / "messages"], lang)
    wanted = set(students)
    standing = [r for r in book.standing(target.id) if r.student in wanted]
    written: list[Path] = []
    for result in standing:
        folder = reports.write_student(out, result, target, messages, lang)
        written += [folder / name for name in reports.STUDENT_FILES]
    written += reports.write_class(out, book, target, _batch_seconds(out), messages, lang)
    sealed.record(out, written, book.signing_key())
    return standing
