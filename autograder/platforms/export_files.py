"""What every export shares: its error, its report, the CSV writer (BOM) and the metadata sidecar."""

# Decisions where the platforms' formats leave room, and why (../shared/notes/lms.md §2, §3, §7):
#
# - Where the assignment, the time and the kit version go: never into the CSVs themselves. Canvas
#   proposes a *new assignment* for every column it does not know and treats every row that is not
#   the header, the `Points Possible` row or a `Muted`/`Manual Posting` row as a *student*; Moodle
#   must map every column and aborts the whole import on a row whose user it cannot find. So each
#   CSV gets a sidecar `<name>.meta.json` (assignment, title, export time, kit version, the file's
#   sha256, and every warning). JUnit carries them as `<property>` elements and the `timestamp`.
# - Students on the roster without a graded submission are left out of the file (and listed in the
#   report). Canvas' importer (`GradebookImporter#no_change_to_value?`) treats a blank cell as a
#   *change* when Canvas already holds a score, so a blank row would propose wiping a grade entered
#   by hand; a row that is absent is not touched at all. Moodle reads `''` as "no grade" too.
#   Nobody gets a 0 they did not earn from a missing row.
# - Submissions that match no roster row are left out and listed: Canvas would create an unknown
#   "new student" entry, Moodle would refuse the whole file.
# - Encoding: UTF-8 with a byte-order mark by default. Canvas itself writes a BOM for some locales
#   and its importer only checks that the first header cell *contains* `Student`; Moodle's
#   `csv_import_reader` strips the BOM. The BOM lets Excel show Bangla names correctly. `bom=False`
#   writes plain UTF-8.
# - Numbers: two decimals (`8.50`), as Canvas' own exporter and importer compare them.

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder import __version__
from autograder.config import Assignment
from autograder.errors import AutograderError
from autograder.grading.results import SubmissionResult


class ExportError(AutograderError):
    """An export could not be written: a roster or an option is wrong; the message says which."""


class ExportIncomplete(ExportError):
    """The file was written but leaves students out: the message says who; the exit code says so."""

    exit_code = 4


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote, and who was left out (never silently)."""

    path: Path
    meta: Path | None
    rows: int
    unmatched_submissions: tuple[str, ...] = ()  # graded students the roster does not know
    missing_submissions: tuple[str, ...] = ()  # roster students without a graded submission
    notes: tuple[str, ...] = ()
    match: str = ""  # how students were matched, for the messages

    @property
    def warnings(self) -> list[str]:
        lines = []
        if self.unmatched_submissions:
            lines.append(
                f"{len(self.unmatched_submissions)} graded submission(s) match no roster student"
                f"{' by ' + self.match if self.match else ''} and were NOT exported: "
                + ", ".join(self.unmatched_submissions)
            )
        if self.missing_submissions:
            lines.append(
                f"{len(self.missing_submissions)} roster student(s) have no graded submission and "
                "were left out of the file (their grades in the LMS stay as they are): "
                + ", ".join(self.missing_submissions)
            )
        return lines + list(self.notes)


def now_utc() -> str:
    """The export time written into the sidecar and the files, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def format_points(value: float) -> str:
    """`8.5` -> `8.50`: two decimals, as Canvas exports and compares scores."""
    return f"{round(value, 2) + 0.0:.2f}"


def meta_path(out: Path) -> Path:
    """The metadata sidecar of an exported file: `<name>.meta.json` next to it."""
    return out.with_name(out.name + ".meta.json")


def check_results(results: Iterable[SubmissionResult], assignment: Assignment) -> list[SubmissionResult]:
    """The results sorted by student, once each, all of `assignment`: else an ExportError."""
    checked: list[SubmissionResult] = []
    seen: set[str] = set()
    for result in results:
        if result.assignment != assignment.id:
            raise ExportError(
                f"a result for {result.student!r} belongs to assignment {result.assignment!r}, "
                f"not {assignment.id!r}: export one assignment at a time"
            )
        if result.student in seen:
            raise ExportError(f"two results for student {result.student!r}: pass each student once")
        seen.add(result.student)
        checked.append(result)
    return sorted(checked, key=lambda r: r.student)


def write_csv(out: Path, rows: Sequence[Sequence[str]], bom: bool) -> bytes:
    """Write the rows (CRLF, UTF-8, a BOM unless `bom` is false) atomically; the bytes written."""
    buffer = io.StringIO(newline="")
    csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n").writerows(rows)
    data = buffer.getvalue().encode("utf-8-sig" if bom else "utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    return data


def write_meta(out: Path, data: bytes, info: dict[str, Any]) -> Path:
    """Write the sidecar of `out`: its sha256, the export time, the kit version and `info`."""
    path = meta_path(out)
    meta = {
        "file": out.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "exported_at": now_utc(),
        "kit": "torch-autograder",
        "kit_version": __version__,
        **info,
    }
    path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def not_graded_reason(result: SubmissionResult) -> str:
    """Why nothing could be graded (a broken zip, an empty folder), if the engine said so."""
    return str(getattr(result, "problem", "") or "").rstrip(".")
