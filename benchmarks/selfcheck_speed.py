"""A student's self-check of a complete, correct folder against one cold `import torch`, in one run.

    .venv/bin/python benchmarks/selfcheck_speed.py [--repeat 5]

Each round times, side by side, in fresh processes: `python -c "import torch"`, then
`autograder check` (its default: the checks in a spawned child), then `autograder check
--in-process`, all in a copy of the built assignment folder holding the reference files, outside
the kit. Prints the medians and the ratios (issue 14's goal: at most 1.5x one cold import).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.config import load_kit  # noqa: E402

CLI = Path(sys.executable).with_name("autograder")


def _timed(args: list[str], cwd: Path, expect: int = 0) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != expect:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    assignment = load_kit(ROOT).assignment()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "student"
        shutil.copytree(ROOT / "assignments" / assignment.id, folder)
        for task in assignment.tasks:
            shutil.copy(assignment.solutions / task.file, folder / task.file)
        _timed([str(CLI), "check"], folder)  # warm the disk cache and write __pycache__ once
        cold, spawned, in_process = [], [], []
        for _ in range(options.repeat):
            cold.append(_timed([sys.executable, "-c", "import torch"], folder))
            spawned.append(_timed([str(CLI), "check"], folder))
            in_process.append(_timed([str(CLI), "check", "--in-process"], folder))
    unit = statistics.median(cold)
    print(f"complete correct folder of {assignment.id}: {len(assignment.tasks)} tasks, "
          f"median of {options.repeat} rounds")
    print(f"cold `import torch`:              {unit:6.2f} s")
    for name, times in (("autograder check (spawned child)", spawned),
                        ("autograder check --in-process", in_process)):
        median = statistics.median(times)
        print(f"{name}: {median:6.2f} s  = {median / unit:4.2f}x one cold import (goal <= 1.5x)")


if __name__ == "__main__":
    main()
