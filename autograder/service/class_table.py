"""The instructor page's class table: each student's grade as it counts, searched and sorted, and its CSV.

One function makes the rows for both the page and its CSV download, with the same search (`q`: a
part of the student's id, any case) and the same sort (`sort`, `dir`), so the file holds exactly
what the table shows; the page's script searches and sorts the same way without a reload, and
gives its CSV link the same parameters. Every cell of the CSV is a display cell: one that would
start a formula in a spreadsheet gets a leading `'` (output/spreadsheet.py).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass

from autograder.ledger.adjustments import applied, signed_points
from autograder.ledger.inbox import Inbox
from autograder.output.spreadsheet import safe_cell
from autograder.service.records_view import Records
from autograder.service.texts import iso_text

SORTS = ("student", "last", "score")


@dataclass(frozen=True)
class ClassRow:
    """One student's row of the class table."""

    student: str
    last: str | None  # their newest upload's time (ISO 8601, UTC)
    score: float
    max_score: float
    notes: tuple[str, ...]  # adjusted, extension, regrade request open: as the page's texts say

    def cells(self) -> list[str]:
        return [self.student, self.last or "", f"{self.score:g}", f"{self.max_score:g}",
                "; ".join(self.notes)]


@dataclass(frozen=True)
class View:
    """The table's search and sort, as the page's query string gives them."""

    q: str = ""
    sort: str = "student"
    desc: bool = False

    @classmethod
    def of(cls, args: Mapping[str, str]) -> View:
        sort = args.get("sort", "student")
        return cls(args.get("q", "").strip()[:100], sort if sort in SORTS else "student",
                   args.get("dir", "") == "desc")

    def args(self, **changes: str) -> dict[str, str]:
        """The query string of this view (with `changes`): what a link to it carries."""
        found = {"q": self.q, "sort": self.sort, "dir": "desc" if self.desc else "asc", **changes}
        return {k: v for k, v in found.items() if v}


def class_rows(inbox: Inbox, records: Records, assignment: str, t: Mapping[str, str],
               view: View = View()) -> list[ClassRow]:
    """Each student's current grade (with the adjustments in force), their newest upload's time and
    what the table notes of them, searched and sorted as `view` says."""
    with inbox.lock:
        standing = {r.student: r for r in inbox.book.standing(assignment)}
    people = inbox.people(assignment)
    waiting = set(records.open_requests(assignment))
    extended = records.rules(assignment).extensions  # student -> their extension in force
    rows = []
    for student, result in standing.items():
        if view.q and view.q.casefold() not in student.casefold():
            continue
        notes = []
        made = round(sum(a["made"] for a in applied(result)), 6)
        if applied(result):
            notes.append(t["note_adjusted"].format(points=signed_points(made)))
        if student in extended:
            notes.append(t["note_extension"])
        if student in waiting:
            notes.append(t["note_request_open"])
        last = iso_text(people[student].received_at) if student in people else None
        rows.append(ClassRow(student, last, result.score, result.max_score, tuple(notes)))
    key = {"student": lambda r: (r.student,), "last": lambda r: (r.last or "", r.student),
           "score": lambda r: (r.score, r.student)}[view.sort]
    return sorted(rows, key=key, reverse=view.desc)


def class_csv(rows: list[ClassRow], t: Mapping[str, str]) -> str:
    """The table as CSV: a header of its columns, then one line a row, every cell safe to open."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([safe_cell(t[k]) for k in ("student", "last_upload", "score", "max_score", "notes")])
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row.cells()])
    return buffer.getvalue()
