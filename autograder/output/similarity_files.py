"""What `autograder similarity` (and `grade`) writes: similarity.csv, a page per pair, and the
findings the class report and the instructor's pages read back (`load_similarity`)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder import __version__, atomic
from autograder.config import Assignment
from autograder.exam.variants import Variant, VariantSpace
from autograder.integrity import corpus
from autograder.integrity.similarity import (
    ARCHIVE,
    CLASS,
    DEFAULT_FLOOR,
    DEFAULT_THRESHOLD,
    PUBLIC,
    Document,
    Match,
    PairEvidence,
    compare,
    merge,
)
from autograder.integrity.variant_constants import ConstantsFinding, find_swapped_constants, option_marks
from autograder.output.similarity_pages import write_pair_page
from autograder.output.spreadsheet import safe_cell
from autograder.submissions.files import Collected
from autograder.submissions.students import safe_name

CSV_NAME = "similarity.csv"
PAIRS_NAME = "similarity_pairs.csv"  # one row per pair of students over all their files, highest first
PAIRS_HEADER = ("student_a", "student_b", "score", "evidence", "files")
FINDINGS = "similarity/findings.json"
PAGES = "similarity"
CSV_HEADER = ("student_a", "student_b", "task", "score", "matched_lines_a", "matched_lines_b")
MAX_PAGES = 300  # pages for the highest pairs; the CSV lists every pair above the floor
FORMAT = 1
# A note (a [ui] key): the exam's secret was missing, variants not checked.
NO_SECRET = "sim_no_secret"  # noqa: S105  a key of a message, not a secret


@dataclass(frozen=True)
class PairRow:
    """One row of similarity.csv, as the report shows it."""

    student_a: str
    student_b: str  # a classmate, or `archive:<term>/<student>`, or `public:<folder>/<name>`
    side: str  # class | archive | public: where student_b's file came from
    origin: str
    task: str
    score: float
    matched_lines_a: str
    matched_lines_b: str
    page: str = ""  # relative to OUT ("" when no page was written)


@dataclass(frozen=True)
class StudentPair:
    """Two students (or one and an archive's or public file) over all their files: what the report flags."""

    student_a: str
    student_b: str
    side: str
    origin: str
    score: float
    evidence: float  # nats (similarity.py)
    tasks: tuple[str, ...]  # the files whose own row is in similarity.csv


@dataclass(frozen=True)
class ConstantsRow:
    student: str
    task: str
    found: str
    own: str
    evidence: str
    lines: str
    owners: tuple[str, ...]


@dataclass(frozen=True)
class SimilarityFindings:
    """Everything one similarity run found, for the class report and the instructor's pages."""

    assignment: str
    method: str
    floor: float
    threshold: float
    pairs: tuple[PairRow, ...]
    students: tuple[StudentPair, ...] = ()
    constants: tuple[ConstantsRow, ...] = ()
    compared: dict[str, int] = field(default_factory=dict, hash=False)
    notes: tuple[str, ...] = ()
    digest: str = ""

    @property
    def flagged(self) -> tuple[StudentPair, ...]:
        """Pairs of students whose files together reach the report's threshold, highest first."""
        return tuple(p for p in self.students if p.score >= self.threshold)

    def rows_of(self, pair: StudentPair) -> tuple[PairRow, ...]:
        return tuple(r for r in self.pairs if (r.student_a, r.student_b) == (pair.student_a, pair.student_b))


def spans_text(spans: Sequence[tuple[int, int]]) -> str:
    return ";".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def _page_name(m: Match) -> str:
    key = "\x00".join((m.a.source.label, m.b.source.label, m.task))
    tag = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return (
        f"{PAGES}/{safe_name(m.a.source.name)[:40]}__{safe_name(m.b.source.name)[:40]}__{m.task}-{tag}.html"
    )


def digest_of(documents: Sequence[Document], boiler: Mapping[str, Sequence[str]], settings: str) -> str:
    """What a similarity run depends on: every document, the boilerplate, the settings, the kit."""
    h = hashlib.sha256(f"{FORMAT}|{__version__}|{settings}".encode())
    for d in sorted(documents, key=lambda d: (d.task, d.source.side, d.source.origin, d.source.name)):
        for part in (d.source.side, d.source.origin, d.source.name, d.task, d.text):
            h.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    for task in sorted(boiler):
        for text in boiler[task]:
            h.update(text.encode("utf-8", "surrogatepass") + b"\x01")
    return h.hexdigest()


def run_similarity(
    assignment: Assignment,
    submissions: Mapping[str, Collected],
    out: Path,
    *,
    archives: Sequence[Path] = (),
    public: Sequence[Path] = (),
    method: str = "syntax",
    floor: float = DEFAULT_FLOOR,
    threshold: float = DEFAULT_THRESHOLD,
    jobs: int = 1,
    variant_of: Callable[[str], Variant | None] | None = None,
    notes: Sequence[str] = (),
    messages: Mapping[str, Mapping[str, str]] | None = None,
    lang: str = "en",
    on_written: Callable[[list[Path]], None] | None = None,
    again: bool = False,
) -> SimilarityFindings:
    """Compare the class (student -> collected files) with itself, `archives` and `public`; write
    OUT/similarity.csv, OUT/similarity_pairs.csv, OUT/similarity/*.html and the findings. A run whose
    inputs are those of the findings already in OUT writes nothing again. `on_written` hears every
    file the run wrote (OUT's signed list: output/sealed.py); `again`: write them even so."""
    documents = corpus.class_documents(assignment, submissions)
    for path in archives:
        documents += corpus.read_other(path, assignment, ARCHIVE)
    for path in public:
        documents += corpus.read_other(path, assignment, PUBLIC)
    boiler = corpus.boilerplate(assignment)
    exam_check = variant_of is not None and bool(VariantSpace.of(assignment).knobs)
    digest = digest_of(documents, boiler, f"{method}|{floor}|{threshold}|{exam_check}|{lang}")
    earlier = load_similarity(out)
    if not again and earlier is not None and earlier.digest == digest and (out / CSV_NAME).is_file() \
            and (out / PAIRS_NAME).is_file():
        return earlier
    found = compare(documents, boiler, method=method, floor=floor, jobs=jobs)
    constants: list[ConstantsFinding] = []
    if exam_check and variant_of is not None:
        from autograder.grading.course import load_graders

        marks = option_marks(assignment, load_graders(assignment))
        constants = find_swapped_constants(documents, marks, VariantSpace.of(assignment), variant_of)
    compared = {
        side: len({d.source.label for d in documents if d.source.side == side})
        for side in (CLASS, ARCHIVE, PUBLIC)
    }
    findings = write_similarity(
        out,
        assignment,
        found.matches,
        found.pairs,
        constants,
        method,
        floor,
        threshold,
        compared,
        tuple(notes),
        digest,
        messages or {},
        lang,
    )
    kept = corpus.keep_sources(out, documents)
    if on_written is not None:
        pages = [out / r.page for r in findings.pairs if r.page]
        on_written([out / CSV_NAME, out / PAIRS_NAME, out / FINDINGS, kept, *pages])
    return findings


def write_similarity(
    out: Path,
    assignment: Assignment,
    matches: Sequence[Match],
    pairs: Sequence[PairEvidence],
    constants: Sequence[ConstantsFinding],
    method: str,
    floor: float,
    threshold: float,
    compared: dict[str, int],
    notes: tuple[str, ...],
    digest: str,
    messages: Mapping[str, Mapping[str, str]],
    lang: str,
) -> SimilarityFindings:
    (out / PAGES).mkdir(parents=True, exist_ok=True)
    for old in (out / PAGES).glob("*.html"):
        old.unlink()  # pages of pairs no longer above the floor must not linger
    rows = []
    for i, m in enumerate(matches):
        page = _page_name(m) if i < MAX_PAGES else ""
        if page:
            write_pair_page(out / page, m, assignment, threshold, messages, lang)
        rows.append(
            PairRow(
                m.a.source.label,
                m.b.source.label,
                m.b.source.side,
                m.b.source.origin,
                m.task,
                m.score,
                spans_text(m.lines_a),
                spans_text(m.lines_b),
                page,
            )
        )
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(CSV_HEADER)
    for r in rows:
        writer.writerow(
            [
                safe_cell(r.student_a),
                safe_cell(r.student_b),
                r.task,
                f"{r.score:.3f}",
                r.matched_lines_a,
                r.matched_lines_b,
            ]
        )
    atomic.write_text(out / CSV_NAME, text.getvalue())
    const_rows = tuple(
        ConstantsRow(
            c.student,
            c.task,
            c.found_text(),
            c.own_text(),
            ", ".join(c.evidence),
            spans_text(merge((n, n) for n in c.lines)),
            c.owners,
        )
        for c in constants
    )
    students = tuple(
        StudentPair(p.a.label, p.b.label, p.b.side, p.b.origin, p.score, p.evidence, p.tasks) for p in pairs
    )
    findings = SimilarityFindings(
        assignment.id, method, floor, threshold, tuple(rows), students, const_rows, compared, notes, digest
    )
    data = {
        "format": FORMAT,
        "assignment": assignment.id,
        "method": method,
        "floor": floor,
        "threshold": threshold,
        "digest": digest,
        "compared": compared,
        "notes": list(notes),
        "pairs": [r.__dict__ for r in rows],
        "students": [{**p.__dict__, "tasks": list(p.tasks)} for p in students],
        "variant_constants": [{**c.__dict__, "owners": list(c.owners)} for c in const_rows],
    }
    write_pairs(out / PAIRS_NAME, students)
    # Last: its digest says the files above are this run's (a run stopped before it writes them again).
    atomic.write_text(out / FINDINGS, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return findings


def write_pairs(path: Path, students: Sequence[StudentPair]) -> Path:
    """similarity_pairs.csv: one row per pair of students (or a student and an archive's or public
    file) whose files together reach the floor, highest score first: the score, the summed
    evidence (nats) and the files whose own score reached the floor."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(PAIRS_HEADER)
    for p in sorted(students, key=lambda p: (-p.score, -p.evidence, p.student_a, p.student_b)):
        writer.writerow([safe_cell(p.student_a), safe_cell(p.student_b),
                         f"{p.score:.4f}", f"{p.evidence:.2f}", ";".join(p.tasks)])
    return atomic.write_text(path, text.getvalue())


def load_similarity(out: Path) -> SimilarityFindings | None:
    """The findings of the last similarity run on OUT (None when there was none, or it is unreadable)."""
    path = Path(out) / FINDINGS
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return None
        pairs = tuple(PairRow(**p) for p in data["pairs"])
        students = tuple(StudentPair(**{**p, "tasks": tuple(p["tasks"])}) for p in data["students"])
        constants = tuple(
            ConstantsRow(**{**c, "owners": tuple(c["owners"])}) for c in data["variant_constants"]
        )
        return SimilarityFindings(
            str(data["assignment"]),
            str(data["method"]),
            float(data["floor"]),
            float(data["threshold"]),
            pairs,
            students,
            constants,
            {str(k): int(v) for k, v in data.get("compared", {}).items()},
            tuple(str(n) for n in data.get("notes", ())),
            str(data.get("digest", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def similarity_for_batch(
    assignment: Assignment,
    entries: Sequence[Any],
    out: Path,
    plan: Any,
    messages: Mapping[str, Mapping[str, str]],
    lang: str,
    on_written: Callable[[list[Path]], None] | None = None,
    again: bool = False,
) -> SimilarityFindings | None:
    """What `grade` runs after a batch: the class as the batch read it (entries with `.student` and
    `.collected`), an exam's variants from its plan. Evidence only: a failure here is logged and
    the grades, already recorded, stand."""
    import logging
    import os

    from autograder.exam.plan import ExamPlan

    variant_of = plan.variant_of if isinstance(plan, ExamPlan) and plan.space.knobs else None
    try:
        return run_similarity(
            assignment,
            {e.student: e.collected for e in entries},
            out,
            jobs=len(os.sched_getaffinity(0)),
            variant_of=variant_of,
            messages=messages,
            lang=lang,
            on_written=on_written,
            again=again,
        )
    except Exception as exc:  # a bug in the evidence must not cost a class its report
        if atomic.disk_full(exc):
            raise  # not a bug: the batch stops with one clear line, and its rerun writes them
        logging.getLogger(__name__).exception("similarity was not computed for %s", out)
        return None
