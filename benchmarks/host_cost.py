"""What the host side of a batch costs a submission, this tree against a baseline commit, side by side.

    .venv/bin/python benchmarks/host_cost.py [--against REF] [--students 60] [--rounds 3] [--repeat 3]

Grading itself is stubbed (an executor that answers each submission at once with a result of
every check), so what is timed is what the batch does around it on the grading machine: the
roll of the class folder, collecting and digesting each submission, signing, recording in the
ledger (with its log), each student's files and the class files. Each round grades the same
class with the baseline (`git archive` of `--against`, default where this branch left main, into a
temporary folder, run by this interpreter) and with this tree, in turn, in processes of their own;
the medians of CPU and wall time a submission are printed with their ratio. Compare them with
the time grading takes a submission (benchmarks/grading_speed.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(tree: Path, students: int, repeat: int) -> list[dict[str, float]]:
    """In this process, with `tree`'s autograder: seconds of CPU and wall a submission, per batch."""
    sys.path.insert(0, str(tree))
    work = Path(tempfile.mkdtemp(prefix="host-cost-"))
    os.environ["AUTOGRADER_SIGNING_KEY"] = str(work / "signing.key")
    from autograder.batch import grade_batch
    from autograder.config import load_kit
    from autograder.grading.options import GradeOptions
    from autograder.grading.results import CheckResult, SubmissionResult, TaskResult

    class Instant:
        def grade(self, kit: object, target: object, todo: list[object], *args: object) -> object:
            for entry in todo:
                tasks = tuple(
                    TaskResult(task.id, task.points, tuple(
                        CheckResult(f"{task.id}.c{i}", task.id, f"c{i}", f"{task.id} check {i}",
                                    task.points / 4 if i else 0.0, task.points / 4, i < 2,
                                    "" if i else "expected 3, got 4", "" if i else f"{task.id}.wrong")
                        for i in range(4)))
                    for task in target.tasks)  # type: ignore[attr-defined]
                yield SubmissionResult(entry.student, target.id, tasks, (), 0.2)  # type: ignore[attr-defined]

    kit = load_kit(tree)
    batch = work / "batch"
    for i in range(students):
        shutil.copytree(tree / "solutions" / "nn_module", batch / f"s{i:03d}",
                        ignore=shutil.ignore_patterns("graders", "__pycache__"))
    options = GradeOptions(sandbox=False)
    grade_batch(kit, batch, work / "warm", options=options, executor=Instant())  # type: ignore[arg-type]
    runs = []
    for i in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        grade_batch(kit, batch, work / f"out-{i}", options=options, executor=Instant())  # type: ignore[arg-type]
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        runs.append({"cpu": cpu / students, "wall": wall / students})
    shutil.rmtree(work)
    return runs


def _run(tree: Path, students: int, repeat: int) -> list[dict[str, float]]:
    done = subprocess.run([sys.executable, __file__, "--tree", str(tree), "--students", str(students),
                           "--repeat", str(repeat)], capture_output=True, text=True, check=True)
    runs: list[dict[str, float]] = json.loads(done.stdout.splitlines()[-1])
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="", help="the baseline: a commit, branch or tag "
                        "(default: the merge base of main and HEAD)")
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="batches a tree grades in one round")
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)  # one tree's measurement, in a child
    args = parser.parse_args()
    if args.tree is not None:
        print(json.dumps(measure(args.tree, args.students, args.repeat)))
        return
    against = args.against or subprocess.run(["git", "-C", str(ROOT), "merge-base", "main", "HEAD"],
                                             capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="host-cost-base-") as base:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", against], capture_output=True,
                                 check=True)
        subprocess.run(["tar", "-x", "-C", base], input=archive.stdout, check=True)
        found: dict[str, list[dict[str, float]]] = {"baseline": [], "this tree": []}
        for _ in range(args.rounds):
            found["baseline"] += _run(Path(base), args.students, args.repeat)
            found["this tree"] += _run(ROOT, args.students, args.repeat)
    medians = {name: {k: statistics.median(r[k] for r in runs) for k in ("cpu", "wall")}
               for name, runs in found.items()}
    print(f"students: {args.students}, {args.rounds} rounds x {args.repeat} batches a tree, grading stubbed")
    for name, median in medians.items():
        print(f"{name:>10}: {1000 * median['cpu']:6.2f} ms CPU, {1000 * median['wall']:6.2f} ms wall "
              "a submission")
    base, ours = medians["baseline"], medians["this tree"]
    ratios = ", ".join(f"{what} {ours[what] / base[what]:.3f}x ({1000 * (ours[what] - base[what]):+.2f} ms)"
                       for what in ("cpu", "wall"))
    print(f"this tree / {against[:12]}: {ratios} a submission")


if __name__ == "__main__":
    main()
