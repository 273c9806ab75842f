"""A student's self-check of a complete, correct folder against one cold `import torch`, in one run.

    .venv/bin/python benchmarks/selfcheck_speed.py [--repeat 5]

Each round times, side by side, in fresh processes: `python -c "import torch"`; `import torch,
torch._dynamo` (the floor of any run of the correct files: their first `torch.optim` optimizer
imports torch._dynamo, lazily); `autograder check` (its default: the checks in a spawned child)
and `autograder check --in-process` in a copy of the built folder holding the reference files,
outside the kit; and `autograder check` of the untouched stubs. Prints the medians and the ratios
to one cold import (issue 14's goal for the correct folder: at most 1.5x).
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
        stubs = Path(tmp) / "stubs"
        shutil.copytree(ROOT / "assignments" / assignment.id, stubs)
        _timed([str(CLI), "check"], folder)  # warm the disk cache and write __pycache__ once
        cold, floor, spawned, in_process, stubbed = [], [], [], [], []
        for _ in range(options.repeat):
            cold.append(_timed([sys.executable, "-c", "import torch"], folder))
            floor.append(_timed([sys.executable, "-c", "import torch, torch._dynamo"], folder))
            spawned.append(_timed([str(CLI), "check"], folder))
            in_process.append(_timed([str(CLI), "check", "--in-process"], folder))
            stubbed.append(_timed([str(CLI), "check"], stubs, expect=1))
    unit = statistics.median(cold)
    print(f"complete correct folder of {assignment.id}: {len(assignment.tasks)} tasks, "
          f"median of {options.repeat} rounds")
    print(f"{'cold `import torch`':32s}: {unit:6.2f} s")
    for name, times in (("import torch, torch._dynamo", floor),
                        ("check, correct folder (child)", spawned),
                        ("check, correct, --in-process", in_process),
                        ("check, untouched stubs", stubbed)):
        median = statistics.median(times)
        print(f"{name:32s}: {median:6.2f} s  = {median / unit:4.2f}x one cold import")


if __name__ == "__main__":
    main()
