"""Grade one batch three ways in one run and print the ratios (issue 3's speed and memory goals).

    .venv/bin/python benchmarks/grading_speed.py [--students 40] [--jobs 2] [--repeat 3]
                                                 [--baseline-sample 40]

1. one cold `python -c "import torch"` (the unit of cost);
2. this engine: `grade_batch` over the whole batch (sandboxed when bubblewrap works), each run
   with a pool of its own (startup included);
2b. one long-lived `GradingPool` reused for several batches in one process: the first batch pays
   the startup, the later ones none (the grading service and cluster nodes work this way);
3. the usual setup: a fresh `python -m pytest` process per submission, importing the
   student's code into that process (`--in-process`), no sandbox.
Peak memory (PSS) of the engine's whole process tree is sampled from /proc, in a second,
untimed run of the engine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.batch import grade_batch  # noqa: E402
from autograder.config import load_kit  # noqa: E402
from autograder.errors import SandboxUnavailable  # noqa: E402
from autograder.grading.options import GradeOptions  # noqa: E402
from autograder.grading.pool import GradingPool  # noqa: E402
from autograder.sandbox.launch import check_available  # noqa: E402

SOLUTIONS = ROOT / "solutions" / "nn_module"
TASK_FILES = sorted(p.name for p in SOLUTIONS.glob("*.py") if p.name != "data.py")


def make_batch(folder: Path, students: int) -> None:
    """Reference copies, some with one catalogued mistake, some stubs: a realistic mix."""
    wrong = tomllib.loads((SOLUTIONS / "graders" / "misconceptions.toml").read_text())["wrong"]
    for i in range(students):
        dest = folder / f"s{i:03d}"
        dest.mkdir()
        for name in TASK_FILES:
            shutil.copy(SOLUTIONS / name, dest / name)
        if i % 4 == 1:
            entry = wrong[i % len(wrong)]
            path = dest / entry["file"]
            text = path.read_text()
            for old, new in entry["replace"]:
                text = text.replace(old, new, 1)
            path.write_text(text)
        elif i % 4 == 3:
            stub = ROOT / "assignments" / "nn_module" / TASK_FILES[i % len(TASK_FILES)]
            shutil.copy(stub, dest / stub.name)


def _pss(pid: int) -> int:
    """Proportional set size: shared pages (torch's, after fork) are split among their sharers."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root_pid: int) -> int:
    """Memory of a process and all its descendants (PSS, so shared pages count once)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid, ppid = int(entry), int(fields.get("PPid", "0").strip())
        children.setdefault(ppid, []).append(pid)
        rss[pid] = 0
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += _pss(pid) if pid in rss else 0
        stack.extend(children.get(pid, []))
    return total


def cold_import() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def engine(batch: Path, out: Path, jobs: int, sandboxed: bool) -> float:
    start = time.perf_counter()
    grade_batch(load_kit(ROOT), batch, out, jobs=jobs, options=GradeOptions(sandbox=sandboxed), regrade=True)
    return time.perf_counter() - start


def warm_pool(batch: Path, tmp: Path, jobs: int, sandboxed: bool, batches: int) -> list[float]:
    """Seconds of each batch graded on one pool started once (the first includes its startup)."""
    kit = load_kit(ROOT)
    times = []
    with GradingPool(kit, GradeOptions(sandbox=sandboxed), jobs) as pool:
        for i in range(batches):
            start = time.perf_counter()
            grade_batch(kit, batch, tmp / f"warm-{i}", pool=pool, regrade=True)
            times.append(time.perf_counter() - start)
    return times


def engine_memory(batch: Path, out: Path, jobs: int, sandboxed: bool) -> int:
    """Peak PSS over a second, untimed run: reading every process's page tables (smaps_rollup)
    often enough to catch the peak costs CPU the timed run must not share."""
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(os.getpid()))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        grade_batch(load_kit(ROOT), batch, out, jobs=jobs, options=GradeOptions(sandbox=sandboxed),
                    regrade=True)
    finally:
        done.set()
        sampler.join()
    return peak


def process_per_submission(batch: Path, sample: int) -> tuple[float, int]:
    paths = sorted(batch.iterdir())[:sample]
    start = time.perf_counter()
    for path in paths:
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(SOLUTIONS / "graders"),
             "--submission", str(path), "--in-process"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )
    return time.perf_counter() - start, len(paths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--baseline-sample", type=int, default=40,
                        help="grade only this many with the per-process baseline, then scale up")
    parser.add_argument("--repeat", type=int, default=3,
                        help="grade the whole batch with the engine this many times; the median counts "
                             "(a shared machine's noise moves one run by 10-20%%)")
    args = parser.parse_args()
    kit = load_kit(ROOT)
    try:
        check_available(kit.sandbox.uid_base)
        sandboxed = True
    except SandboxUnavailable:
        sandboxed = False
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "batch"
        batch.mkdir()
        make_batch(batch, args.students)
        cold = min(cold_import() for _ in range(3))
        repeat = range(max(1, args.repeat))
        runs = [engine(batch, Path(tmp) / f"out-{i}", args.jobs, sandboxed) for i in repeat]
        ours = statistics.median(runs)
        warm = warm_pool(batch, Path(tmp), args.jobs, sandboxed, 1 + max(1, args.repeat))
        peak = engine_memory(batch, Path(tmp) / "out-memory", args.jobs, sandboxed)
        base, graded = process_per_submission(batch, min(args.baseline_sample, args.students))
    base_total = base * args.students / graded
    print(f"students: {args.students}, jobs: {args.jobs}, sandbox: {'on' if sandboxed else 'off'}")
    print(f"cold `import torch`:            {cold:7.2f} s")
    each = ", ".join(f"{r:.2f}" for r in runs)
    print(f"this engine, whole batch:        {ours:7.2f} s  = {ours / cold:5.1f} x cold import (target < 3)"
          f"  [median of {len(runs)} runs: {each}]")
    later = statistics.median(warm[1:])
    print(f"one pool for {len(warm)} batches:  first {warm[0]:6.2f} s, later {later:6.2f} s"
          f" = {later / cold:5.1f} x cold import (target <= 3)"
          f"  [later batches: {', '.join(f'{w:.2f}' for w in warm[1:])}]")
    print(f"process per submission (n={graded}): {base_total:7.2f} s  (scaled to {args.students})")
    print(f"speed-up over process per submission: {base_total / ours:5.1f} x (target >= 20)")
    print(f"peak memory (PSS) of the engine's process tree: {peak / 2**30:5.2f} GiB (target < 2)")


if __name__ == "__main__":
    main()
