"""The main flow for a class: submissions -> grading pool (sandboxed workers, judgement) -> files.

`grade_batch` takes the roll of a folder of submissions (submissions/roll.py: one submission per
student id, every other entry named with its reason) and reads each one; the ledger (the
gradebook) says which grades are missing or out of date: a new student, a changed submission, or
graders that changed since. Those are claimed, graded on a `GradingPool` (its own, or one the
caller keeps warm across batches), signed and recorded as each arrives, with the student's files;
then the class's files, grades.csv and report.html, which are written again whenever a grade was
recorded, also when the batch stops early.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from autograder.config import Assignment, Kit
from autograder.exam.plan import plan_for
from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.grading.grader import PlainPlan, Plan
from autograder.grading.options import DEFAULT_OPTIONS, GradeOptions
from autograder.grading.pool import GradingPool
from autograder.grading.provenance import changed_parts, grader_key, provenance, submission_digest
from autograder.grading.results import SubmissionResult
from autograder.ledger import signing
from autograder.ledger.book import Gradebook
from autograder.ledger.claims import Claims
from autograder.ledger.release import extensions_of
from autograder.output import reports, sealed
from autograder.output.similarity_files import CSV_NAME, FINDINGS, PAGES, PAIRS_NAME, similarity_for_batch
from autograder.sandbox import launch
from autograder.submissions.collect import collect
from autograder.submissions.files import Collected
from autograder.submissions.roll import Skipped, take_roll
from autograder.submissions.students import folder_name, shown_name


@dataclass(frozen=True)
class BatchSummary:
    """What a batch run did: whom it graded and why, whom it kept, whom another run holds, what it skipped."""

    graded: int
    skipped: int  # students whose grade stands (unchanged), kept as they were
    seconds: float
    out: Path
    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()  # the submission is not the one graded before
    stale: tuple[str, ...] = ()  # the same submission, but the graders changed since
    stale_files: tuple[str, ...] = ()  # the graders' files whose change made them stale ("": not known)
    busy: tuple[str, ...] = ()  # another live run on this gradebook is grading them
    unsigned: tuple[str, ...] = ()  # graded before the ledger was signed: graded again, and signed
    left_out: tuple[Skipped, ...] = ()  # entries of the submissions folder that were not graded
    notices: tuple[str, ...] = ()  # what the executor said on the way (a cluster node refused)

    def describe(self) -> str:
        parts = [f"{len(self.new)} new", f"{len(self.changed)} changed"]
        if self.stale:
            shown = ", ".join(map(shown_name, self.stale[:10])) + (", ..." if len(self.stale) > 10 else "")
            where = self.changed_files()
            parts.append(f"{len(self.stale)} stale because the graders changed{where} ({shown})")
        else:
            parts.append("0 stale")
        if self.unsigned:
            parts.append(f"{len(self.unsigned)} recorded before the signed ledger")
        text = f"graded {self.graded} submissions ({'; '.join(parts)}), {self.skipped} unchanged kept"
        if self.busy:
            busy = ", ".join(map(shown_name, self.busy[:10]))
            text += f"; {len(self.busy)} left to another run grading them now ({busy})"
        if self.left_out:
            text += f"; {len(self.left_out)} entries not graded (listed)"
        return text

    def changed_files(self) -> str:
        """Which of the graders' files changed, as the stale message names them (" in a, b")."""
        known = [f for f in self.stale_files if f]
        if not known:  # only grades recorded before the gradebook kept each file's digest
            return ""
        text = " in " + ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
        return text + (" (older grades: files not recorded)" if "" in self.stale_files else "")

    def left_out_lines(self) -> list[str]:
        """One line per entry of the submissions folder that was not graded."""
        return [f"not graded: {s.describe()}" for s in self.left_out]


@dataclass(frozen=True)
class Entry:
    """One submission as read for a batch: its student, its files and the key of its grade."""

    path: Path
    student: str
    collected: Collected
    key: tuple[str, str]  # (submission digest, grader digest)


Notice = Callable[[str], None]  # how an executor tells the batch something the instructor should read


class GradeExecutor(Protocol):
    """Turns the submissions a batch has claimed into results, yielded in any order, each once.

    The batch records each result before it asks for the next, so what has been yielded is in
    the ledger. The local pool is one executor; a Dask cluster (autograder.cluster) is another."""

    def grade(self, kit: Kit, target: Assignment, todo: Sequence[Entry], options: GradeOptions,
              plan: Plan | None, notice: Notice) -> Iterator[SubmissionResult]: ...


@dataclass(frozen=True)
class PoolExecutor:
    """Grading on this machine: on `pool` (the caller's, kept warm) or on one started for the batch."""

    jobs: int | None = None
    pool: GradingPool | None = None

    def grade(self, kit: Kit, target: Assignment, todo: Sequence[Entry], options: GradeOptions,
              plan: Plan | None, notice: Notice) -> Iterator[SubmissionResult]:
        pool = self.pool or GradingPool(kit, options, max(1, min(self.jobs or default_jobs(), len(todo))),
                                        target.id)
        try:
            pool.start()
            collected = {e.path: e.collected for e in todo}
            yield from pool.grade_many([e.path for e in todo], assignment=target.id, plan=plan,
                                       collected=collected)
        finally:
            if self.pool is None:
                pool.close()


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def list_submissions(folder: Path) -> list[Path]:
    """One entry per student, in id order: what the roll grades (see submissions/roll.py)."""
    return [path for _, path in take_roll(folder).entries]


def read_submissions(kit: Kit, target: Assignment, entries: Sequence[tuple[str, Path]], plan: Plan,
                     graders: str) -> list[Entry]:
    """Each submission (student id, path) read once, with the key of the grade it would get (`graders`:
    the grader digest)."""
    read = []
    for student, path in entries:
        collected = collect(path, target.given, target)
        digest = submission_digest(collected, plan.context(path, student))
        read.append(Entry(path, student, collected, (digest, graders)))
    return read


def stamped(result: SubmissionResult, key: tuple[str, str], secret: bytes,
            source: str = "", files: dict[str, str] | None = None) -> SubmissionResult:
    """The result with its provenance (`source`: the submission's name as handed in; `files`: the
    digest of each of the graders' parts) and signature."""
    info = {**provenance(*key, files), "folder": folder_name(result.student), "source": source,
            "signature": signing.sign(secret, signing.result_text(result, *key))}
    return dataclasses.replace(result, provenance=info)


def grade_batch(
    kit: Kit,
    submissions: Path,
    out: Path,
    *,
    assignment: str | None = None,
    options: GradeOptions = DEFAULT_OPTIONS,
    jobs: int | None = None,
    gradebook: Path | None = None,
    regrade: bool = False,
    on_result: Callable[[SubmissionResult], None] | None = None,
    secret: bytes | None = None,
    times: Mapping[str, datetime] | None = None,
    pool: GradingPool | None = None,
    executor: GradeExecutor | None = None,
    on_notice: Callable[[str], None] | None = None,
    also_write: Callable[[SubmissionResult], Sequence[Path]] | None = None,
) -> BatchSummary:
    """Grade the submissions in a folder whose grade is missing or out of date (all: `regrade`).

    An exam (an assignment with an [exam] table) is graded per student's variant with the
    instructor's `secret` (default: from the environment; refused before anything is graded
    when missing) and the late policy applied to each submission's time (`times`, student ->
    time, else the platform's metadata in the submission). `pool`: a started pool to grade on,
    which stays the caller's (else one is started for this batch, only if there is work).
    `executor`: grade elsewhere (a cluster) instead; only this process writes the ledger;
    `on_notice` hears what it says on the way (a node refused), which the summary keeps too.
    `also_write`: writes more of a student's files into OUT (JUnit), returning them; every file
    the batch writes into OUT goes into OUT's signed list of files (output/sealed.py).
    """
    started = time.monotonic()
    if pool is not None:
        options = pool.options  # the pool's graders speak its language
    target = kit.assignment(assignment)
    language = options.language(kit.language)
    plan = plan_for(kit, target.id, secret, times)  # an exam without its secret stops here
    if executor is None:
        executor = PoolExecutor(jobs, pool)
        if options.sandbox and pool is None:
            launch.check_available(kit.sandbox.uid_base)
    out.mkdir(parents=True, exist_ok=True)
    messages = load_messages([ENGINE_MESSAGES, target.graders / "messages"], language)
    book_path = gradebook or out / "gradebook.sqlite"
    book = Gradebook(book_path)
    if plan is not None:  # the late policy counts each student's extension (the ledger's records)
        plan = dataclasses.replace(plan, extensions=extensions_of(book, target.id) or None)
    notices: list[str] = []

    def notice(text: str) -> None:
        notices.append(text)
        if on_notice is not None:
            on_notice(text)

    try:
        roll = take_roll(submissions).beside(book.folders(target.id))
        left_out = tuple((s.name, s.reason) for s in roll.skipped)
        key = book.signing_key(kit.root)  # the key this ledger is signed with, or a refusal: before grading

        def write_class() -> None:
            written = reports.write_class(out, book, target, time.monotonic() - started, messages, language,
                                          left_out)
            sealed.record(out, written, key)

        def write_files(result: SubmissionResult) -> None:
            written = reports.write_student(out, result, target, messages, language)
            extra = also_write(result) if also_write is not None else ()
            sealed.record(out, [written / name for name in reports.STUDENT_FILES] + list(extra), key)

        if not sealed.exists(out):  # an OUT from before the signed list: its students' files written again
            for result in book.standing(target.id):
                write_files(result)
        graders, files = grader_key(kit, target, language)
        entries = read_submissions(kit, target, roll.entries, plan or PlainPlan(), graders)
        known = book.keys(target.id)
        why = {e.student: _why(known.get(e.student), e.key, regrade) for e in entries}
        stale_files = _stale_files(book, target.id, [e.student for e in entries if why[e.student] == "stale"],
                                   files)
        due = [e for e in entries if why[e.student]]
        with Claims(book_path) as claims:
            ours, busy = claims.claim(target.id, [e.student for e in due])
            todo = [e for e in due if e.student in set(ours)]

            def write(result: SubmissionResult) -> None:
                write_files(result)
                if on_result is not None:
                    on_result(result)

            recorded = 0
            try:
                if todo:
                    results = executor.grade(kit, target, todo, options, plan, notice)
                    for _ in _recorded(results, todo, target, book, claims, key, regrade, write, files):
                        recorded += 1
            except BaseException as exc:
                if recorded:  # the class files follow the ledger, whatever stopped the batch
                    try:
                        write_class()
                    except Exception as failed:  # noqa: BLE001  the batch's own error is what to show
                        exc.add_note(f"grades.csv and report.html could not be written again: {failed}")
                raise
        # Issue #30: similar files and another variant's numbers, for review (never a grade change).
        listed = sealed.holds(out, key, [CSV_NAME, PAIRS_NAME, FINDINGS])  # else written again, and listed
        similarity_for_batch(target, entries, out, plan, messages, language, again=not listed,
                             on_written=lambda made: sealed.record(out, made, key, replace_under=PAGES))
        write_class()
    finally:
        book.close()

    def named(reason: str) -> tuple[str, ...]:
        return tuple(e.student for e in todo if why[e.student] == reason)

    return BatchSummary(len(todo), len(entries) - len(due), time.monotonic() - started, out,
                        new=named("new"), changed=named("changed"), stale=named("stale"),
                        stale_files=stale_files if named("stale") else (), busy=tuple(busy),
                        unsigned=named("unsigned"), left_out=roll.skipped, notices=tuple(notices))


def _why(known: tuple[str, str] | None, key: tuple[str, str], regrade: bool) -> str:
    """Why a student is graded now ("" when their grade stands)."""
    if known is None:
        return "new"
    if known[0] != key[0]:
        return "changed"
    if not known[1]:
        return "unsigned"  # recorded before the signed ledger (or before grades were keyed)
    if known[1] != key[1]:
        return "stale"
    return "changed" if regrade else ""


def _stale_files(book: Gradebook, assignment: str, students: Sequence[str],
                 now: dict[str, str]) -> tuple[str, ...]:
    """The graders' parts whose digest differs from those the stale grades were computed with
    (with "" when some grade was recorded without the per-part digests)."""
    found: set[str] = set()
    for before in book.grader_files(assignment, students).values():
        found |= set(changed_parts(before, now)) if before else {""}
    return tuple(sorted(found))


def _recorded(results: Iterator[SubmissionResult], todo: list[Entry], target: Assignment, book: Gradebook,
              claims: Claims, key: bytes, regrade: bool, write: Callable[[SubmissionResult], None],
              files: dict[str, str] | None = None) -> Iterator[SubmissionResult]:
    """Each result signed, written to the student's files and recorded, as it arrives."""
    by_student = {e.student: e for e in todo}
    for result in results:
        entry = by_student[result.student]
        result = stamped(result, entry.key, key, entry.path.name, files)
        write(book.adjusted(result))  # the files show the grade as it counts: the adjustments outlast it
        # One transaction per student, with the claim's release: a kill loses nothing graded.
        release = functools.partial(claims.release_in, assignment=target.id, student=result.student)
        book.record(result, force=regrade, after=release)
        yield result
