"""How long `autograder verify` takes for 1,000 students (issue 29), and what recording a grade costs.

    .venv/bin/python benchmarks/verify_speed.py [--students 1000] [--regraded 0.2] [--repeat 3]

Builds an OUT as a batch leaves it, without grading: each student's result (hand-built, every
check of nn_module, some points lost), signed and recorded in the ledger (a grading entry of the
signed log each), results.json and feedback files, then grades.csv and report.html; a share of
the students is graded twice, so the log holds history and re-pointed current grades. Then times
`verify_out` (the log recomputed, every row and current grade held against it, every results.json
and grades.csv row held against the ledger): the median of `--repeat` runs. Also prints what
recording one grade costs (the row and its signed entry, one transaction), beside the time the
grading benchmark gives a submission.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.batch import stamped  # noqa: E402
from autograder.config import Assignment, load_kit  # noqa: E402
from autograder.grading.results import CheckResult, SubmissionResult, TaskResult  # noqa: E402
from autograder.ledger.book import Gradebook  # noqa: E402
from autograder.ledger.signing import KEY_ENV, load_key  # noqa: E402
from autograder.output.reports import write_class, write_student  # noqa: E402
from autograder.output.verify import verify_out  # noqa: E402


def result_of(assignment: Assignment, student: str, lost: float) -> SubmissionResult:
    """Four checks a task (as many as nn_module's tasks have, about), `lost` points off the last."""
    tasks = []
    for task in assignment.tasks:
        quarter = task.points / 4
        checks = tuple(
            CheckResult(f"{task.id}.check{i}", task.id, f"check{i}", f"{task.id} check {i}",
                        max(quarter - lost, 0.0) if i == 3 else quarter, quarter, i < 2,
                        *(("expected 3, got 4", f"{task.id}.wrong") if i == 3 and lost else ("", "")))
            for i in range(4)
        )
        tasks.append(TaskResult(task.id, task.points, checks))
    return SubmissionResult(student, assignment.id, tuple(tasks), (), 1.0)


def build(out: Path, assignment: Assignment, students: int, regraded: float) -> list[float]:
    """The OUT of a batch of `students`; the seconds each `record` took."""
    key = load_key()
    graders = hashlib.sha256(b"graders").hexdigest()
    book = Gradebook(out / "gradebook.sqlite")
    seconds = []
    try:
        gradings = [(f"s{i:04d}", float(i % 5)) for i in range(students)]
        every = max(1, round(1 / regraded)) if regraded else 0
        gradings += [(f"s{i:04d}", float(i % 5) + 0.5) for i in range(0, students, every)] if every else []
        for student, lost in gradings:
            digest = hashlib.sha256(f"{student}{lost}".encode()).hexdigest()
            result = stamped(result_of(assignment, student, lost), (digest, graders), key, f"{student}.zip")
            start = time.perf_counter()
            book.record(result)
            seconds.append(time.perf_counter() - start)
            write_student(out, result, assignment)
        write_class(out, book, assignment, 1.0)
    finally:
        book.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--regraded", type=float, default=0.2, help="share of students graded twice")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault(KEY_ENV, str(Path(tmp) / "signing.key"))
        assignment = load_kit(ROOT).assignment("nn_module")
        out = Path(tmp) / "out"
        started = time.perf_counter()
        records = build(out, assignment, args.students, args.regraded)
        built = time.perf_counter() - started
        runs = []
        for _ in range(max(1, args.repeat)):
            start = time.perf_counter()
            report = verify_out(out, load_key())
            runs.append(time.perf_counter() - start)
        if not report.ok:
            sys.exit("the built OUT does not verify:\n" + "\n".join(report.lines()[:20]))
    took = statistics.median(runs)
    print(f"students: {args.students}, gradings: {len(records)} ({report.entries} log entries), "
          f"built in {built:.1f} s")
    each = ", ".join(f"{r:.2f}" for r in runs)
    print(f"verify, whole OUT: {took:6.2f} s = {1000 * took / args.students:5.2f} ms a student "
          f"[median of {len(runs)} runs: {each}; {report.checked} grades checked]")
    p95 = sorted(records)[int(0.95 * len(records))]
    print(f"recording one grade (row + signed log entry, one transaction): median "
          f"{1000 * statistics.median(records):.2f} ms, p95 {1000 * p95:.2f} ms")


if __name__ == "__main__":
    main()
