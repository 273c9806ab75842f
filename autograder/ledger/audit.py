"""Hold a ledger against its signed log: the chain recomputed, then every row and current grade.

What it finds, each named by student where the ledger can tell whose it was: an entry edited,
renumbered or moved (its hash or signature no longer holds); entries deleted (a gap in the
numbers, a student's entry that follows one that is gone, a head pointing past the end); a row
edited (a value that is not the one its entry signed: a score, points moved between checks in the
stored result, a signature), added by hand (no entry), or deleted (an entry without its row); and
a current grade re-pointed (the row marked current is not the one the log made current); and an
instructor's record (an adjustment, an extension, a release, a regrade message: records.py) edited,
added by hand or deleted, each held against the entry that signed its values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from autograder.ledger import log, records, signing
from autograder.ledger.book import Gradebook, GradebookRow

Student = tuple[str, str]  # (assignment, student)
BEFORE_THE_LOG = "recorded before the signed log: run `autograder grade` to grade it again and sign it"
COMPARED = ("graded_at", "score", "max_score", "submission_sha256", "grader_digest", "signature", "folder")


@dataclass(frozen=True)
class Problem:
    """Something that does not verify: where, whose, and what."""

    place: str
    student: str
    detail: str


@dataclass(frozen=True)
class Audit:
    """What the ledger's check found, and each student's current row as the signed log has it."""

    entries: int
    rows: int
    problems: tuple[Problem, ...]
    current: dict[Student, GradebookRow] = field(default_factory=dict)
    key_id: str = ""
    head: tuple[int, str] = (0, "")
    usable: bool = True  # False: another key, or a ledger from before the log; nothing can be held to it
    # kind -> the instructor's records as their signed entries hold them (never the tables' word)
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def audit(book: Gradebook, key: bytes) -> Audit:
    """Recompute `book`'s log with `key` and hold its rows and current grades against it."""
    entries = book.entries()
    rows = {row.id: row for row in book.rows()}
    place = book.path.name
    ours = signing.key_id(key)
    ids = sorted({e.key_id for e in entries})
    if ids and ours not in ids:
        detail = (f"signed with key id {', '.join(ids)}, but the key at {signing.key_path()} is key id "
                  f"{ours}: set {signing.KEY_ENV}=/path/to/the key that signed it")
        return Audit(len(entries), len(rows), (Problem(place, "", detail),), key_id=ids[0], usable=False)
    run = _Run(key, place, rows)
    run.walk(entries)
    run.check_heads(book.heads(), entries)
    run.check_rows(book.legacy_rows())
    for kind in records.KINDS.values():
        run.check_records(kind, book.records(kind))
    head = (entries[-1].seq, entries[-1].hash) if entries else (0, "")
    return Audit(len(entries), len(rows), tuple(run.problems), run.current(), ours, head,
                 records=run.signed_records())


class _Run:
    """One audit's state: what the log says so far, and what does not hold."""

    def __init__(self, key: bytes, place: str, rows: dict[int, GradebookRow]):
        self.key = key
        self.place = place
        self.rows = rows
        self.problems: list[Problem] = []
        self.signed: dict[int, tuple[log.LogEntry, dict[str, Any]]] = {}  # row id -> its entry
        self.pointer: dict[Student, int] = {}  # the current row of each student, by the log
        self.last_of: dict[str, int] = {}  # stream -> the seq of its last entry that holds
        self.present: dict[int, log.LogEntry] = {}
        self.legacy: dict[int, tuple[str, str]] = {}  # row id -> (student, digest), sealed by `start`
        self.records: dict[str, dict[int, tuple[log.LogEntry, dict[str, Any]]]] = {}  # kind -> row -> entry

    def add(self, where: str, student: str, detail: str) -> None:
        self.problems.append(Problem(where, student, detail))

    def walk(self, entries: list[log.LogEntry]) -> None:
        self.present = {e.seq: e for e in entries}
        prev_seq, prev_hash = 0, log.GENESIS
        for entry in entries:
            where = f"{self.place} ledger entry {entry.seq}"
            holds = log.entry_holds(self.key, entry)
            if not holds:
                self.add(where, entry.student, f"a {entry.kind} entry whose signature no longer holds: it "
                                               "was edited, renumbered or moved after it was signed")
            if entry.seq != prev_seq + 1:
                self.add(f"{self.place} ledger entries {prev_seq + 1}-{entry.seq - 1}", "",
                         "missing: deleted from the log")
            elif holds and entry.prev_hash != prev_hash:
                self.add(where, entry.student, "does not follow the entry before it (another previous-entry "
                                               "hash): the log was reordered or an entry replaced")
            prev_seq, prev_hash = entry.seq, entry.hash
            if holds:
                self._apply(entry, where)

    def _apply(self, entry: log.LogEntry, where: str) -> None:
        body = entry.data()
        if entry.student:
            stream, before = entry.stream, int(body.get("student_prev", 0))
            if before != self.last_of.get(stream, 0):
                gone = before not in self.present
                self.add(where, entry.student, f"follows this student's entry {before}, which "
                         + ("is missing: deleted from the log" if gone else "does not hold"))
            self.last_of[stream] = entry.seq
        if entry.kind == "start":
            self.legacy = {int(i): (str(s), str(d)) for i, s, d in body.get("legacy", [])}
        elif entry.kind == "grading":
            row_id = int(body.get("row", 0))
            self.signed[row_id] = (entry, body)
            if body.get("current", True):  # a grading that does not count is history from the start
                self.pointer[(entry.assignment, entry.student)] = row_id
        elif entry.kind in records.KINDS:  # an instructor's record: its row must hold these values
            self.records.setdefault(entry.kind, {})[int(body.get("row", 0))] = (entry, body)
        else:
            self.add(where, entry.student, f"an entry of kind {entry.kind!r}, which this kit does not know: "
                                           "verify it with the torch-autograder that wrote it")

    def check_heads(self, heads: dict[str, log.Head], entries: list[log.LogEntry]) -> None:
        if not entries:
            if heads:
                self.add(f"{self.place} ledger", "", "its log is empty but its heads remain: every entry "
                                                     "was deleted")
            return
        last = entries[-1]
        whole = heads.get(log.LOG_STREAM)
        if whole is None:
            self.add(f"{self.place} ledger head", "", "missing: the head of the log was deleted")
        elif not log.head_holds(self.key, whole):
            self.add(f"{self.place} ledger head", "", "its signature no longer holds: it was edited")
        elif whole.seq > last.seq:
            self.add(f"{self.place} ledger entries {last.seq + 1}-{whole.seq}", "",
                     "missing: deleted from the end of the log")
        elif (whole.seq, whole.hash) != (last.seq, last.hash):
            self.add(f"{self.place} ledger head", "", f"points at entry {whole.seq}, not at the last one "
                                                      f"({last.seq}): the log's end was replaced")
        streams = {e.stream: e.student for e in entries if e.student}
        for stream, head in heads.items():
            if stream == log.LOG_STREAM:
                continue
            student = _student_of(stream)
            if not log.head_holds(self.key, head):
                self.add(f"{self.place} ledger head", student, "this student's head no longer holds: edited")
            elif head.seq not in self.present:
                self.add(f"{self.place} ledger entry {head.seq}", student,
                         "this student's latest entry is missing: deleted from the log")
            elif self.last_of.get(stream) != head.seq:
                self.add(f"{self.place} ledger entry {head.seq}", student,
                         "this student's latest entry does not hold, or entries followed it without the key")
        for stream, student in streams.items():
            if stream not in heads:
                self.add(f"{self.place} ledger head", student, "this student's head is missing: deleted")

    def check_rows(self, legacy_rows: int) -> None:
        unstarted = not self.signed and not self.legacy  # no log yet: every row is from before it
        for row in self.rows.values():
            where = f"{self.place} row {row.id}" + ("" if row.current else " (history)")
            if row.id in self.signed:
                self._compare(row, where, *self.signed[row.id])
            elif row.id in self.legacy and row.digest() != self.legacy[row.id][1]:
                self.add(where, row.student, "recorded before the signed log and changed since it began")
            elif row.id in self.legacy or (unstarted and row.id <= legacy_rows):
                if row.current:
                    self.add(where, row.student, BEFORE_THE_LOG)
            else:
                self.add(where, row.student, "not in the signed log: the row was added by hand")
        for row_id, (entry, _) in sorted(self.signed.items()):
            if row_id not in self.rows:
                self.add(f"{self.place} row {row_id}", entry.student,
                         f"deleted: ledger entry {entry.seq} recorded it")
        for row_id, (student, _) in sorted(self.legacy.items()):
            if row_id not in self.rows:
                self.add(f"{self.place} row {row_id}", student, "recorded before the signed log, "
                                                                   "deleted since")
        marked: dict[Student, list[int]] = {}
        for row in self.rows.values():
            if row.current:
                marked.setdefault((row.assignment, row.student), []).append(row.id)
        for who in sorted(set(marked) | set(self.pointer)):
            signed, found = self.pointer.get(who), marked.get(who, [])
            if signed is None:
                continue  # rows of their own (by hand, or from before the log) are named above
            if found != [signed]:
                shown = ", ".join(str(i) for i in found) or "none"
                self.add(f"{self.place} row {', '.join(str(i) for i in found) or signed}", who[1],
                         f"the current grade is re-pointed: row {shown} is marked current, but the signed "
                         f"log makes row {signed} current")

    def _compare(self, row: GradebookRow, where: str, entry: log.LogEntry, body: dict[str, Any]) -> None:
        if (row.assignment, row.student) != (entry.assignment, entry.student):
            self.add(where, row.student, f"edited: the row is of {row.assignment}/{row.student}, its "
                                         f"signed entry {entry.seq} recorded it for "
                                         f"{entry.assignment}/{entry.student}")
            return
        sealed = row.sealed()
        for name in COMPARED:
            if sealed[name] != body.get(name):
                what = "score column" if name == "score" else name.replace("_", " ")
                self.add(where, row.student, f"edited: its {what} is {sealed[name]!r}, ledger entry "
                                             f"{entry.seq} signed {body.get(name)!r}")
        if sealed["result_sha256"] != body.get("result_sha256"):
            self.add(where, row.student, f"edited: its stored result (points of the checks, feedback) is not "
                                         f"the one ledger entry {entry.seq} signed{_moved(row, body)}")

    def check_records(self, kind: records.RecordKind, table: list[dict[str, Any]]) -> None:
        """Every row of a record table is the one its entry signed; every signed record has its row."""
        signed = self.records.get(kind.kind, {})
        noun = kind.kind.replace("_", " ")
        for row in table:
            where = f"{self.place} {kind.table} row {row['id']}"
            student = str(row.get("student", ""))
            found = signed.get(int(row["id"]))
            if found is None:
                self.add(where, student, f"not in the signed log: this {noun} was added by hand")
                continue
            entry, body = found
            for column in kind.columns:
                if row[column] != body.get(column):
                    self.add(where, student or entry.student, f"edited: its {column.replace('_', ' ')} is "
                             f"{row[column]!r}, ledger entry {entry.seq} signed {body.get(column)!r}")
        present = {int(r["id"]) for r in table}
        for row_id, (entry, _) in sorted(signed.items()):
            if row_id not in present:
                self.add(f"{self.place} {kind.table} row {row_id}", entry.student,
                         f"deleted: ledger entry {entry.seq} recorded this {noun}")

    def signed_records(self) -> dict[str, list[dict[str, Any]]]:
        """Each kind's records as the log holds them, oldest first."""
        return {kind: [records.signed_values(body, records.KINDS[kind])
                       for _, (_, body) in sorted(found.items())] for kind, found in self.records.items()}

    def current(self) -> dict[Student, GradebookRow]:
        """Each student's current row by the log, where that row is present."""
        return {who: self.rows[row_id] for who, row_id in self.pointer.items() if row_id in self.rows}


def _student_of(stream: str) -> str:
    try:
        return str(json.loads(stream)[2])
    except (ValueError, IndexError, TypeError):
        return ""


def _moved(row: GradebookRow, body: dict[str, Any]) -> str:
    """What the stored result's checks say now, when its total still matches the signed one."""
    try:
        result = json.loads(row.result)
        checks = [(c["check_id"], c["score"]) for t in result["tasks"] for c in t["checks"]]
    except (ValueError, KeyError, TypeError):
        return " (it is unreadable)"
    total = round(sum(score for _, score in checks), 6)
    if total == round(float(body.get("score", -1)), 6):
        return " (the total is the same: points were moved between checks)"
    return ""
