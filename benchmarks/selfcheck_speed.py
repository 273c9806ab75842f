"""A student's self-check of a complete, correct folder against one cold `import torch`, in one run.

    .venv/bin/python benchmarks/selfcheck_speed.py [--repeat 5] [--hogs N]

Each round times, side by side, in fresh processes: `python -c "import torch"`; `import torch,
torch._dynamo` (the floor of any run of the correct files: their first `torch.optim` optimizer
imports torch._dynamo, lazily); `autograder check` (its default: the checks in a spawned child)
and `autograder check --in-process` in a copy of the built folder holding the reference files,
outside the kit; and `autograder check` of the untouched stubs. Prints the medians and the ratios
to one cold import (issue 14's goal for the correct folder: at most 1.5x). With `--hogs N`, the
same rounds run a second time beside N busy-loop processes (a student's busy laptop, issue 26),
and the checks' scores are printed too: a correct folder must keep full marks there.
"""

from __future__ import annotations

import argparse
import re
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


def _score(folder: Path) -> str:
    done = subprocess.run([str(CLI), "check"], cwd=folder, capture_output=True, text=True)
    found = re.search(r"public checks: (\S+)", done.stdout)
    return found.group(1) if found else f"exit {done.returncode}"


def _rounds(folder: Path, stubs: Path, repeat: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in NAMES}
    for _ in range(repeat):
        times["cold"].append(_timed([sys.executable, "-c", "import torch"], folder))
        times["floor"].append(_timed([sys.executable, "-c", "import torch, torch._dynamo"], folder))
        times["spawned"].append(_timed([str(CLI), "check"], folder))
        times["in_process"].append(_timed([str(CLI), "check", "--in-process"], folder))
        times["stubbed"].append(_timed([str(CLI), "check"], stubs, expect=1))
    return times


NAMES = {"cold": "cold `import torch`", "floor": "import torch, torch._dynamo",
         "spawned": "check, correct folder (child)", "in_process": "check, correct, --in-process",
         "stubbed": "check, untouched stubs"}


def _show(title: str, times: dict[str, list[float]]) -> None:
    unit = statistics.median(times["cold"])
    print(title)
    for key, name in NAMES.items():
        median = statistics.median(times[key])
        print(f"  {name:32s}: {median:6.2f} s  = {median / unit:4.2f}x one cold import")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hogs", type=int, default=0, help="also run beside this many busy loops")
    options = parser.parse_args()
    assignment = load_kit(ROOT).assignment()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "student"
        shutil.copytree(ROOT / "assignments" / assignment.id, folder)
        for task in assignment.tasks:
            shutil.copy(assignment.solutions / task.file, folder / task.file)
        stubs = Path(tmp) / "stubs"
        shutil.copytree(ROOT / "assignments" / assignment.id, stubs)
        _timed([str(CLI), "check"], folder)  # warm the disk cache once
        quiet = _rounds(folder, stubs, options.repeat)
        _show(f"complete correct folder of {assignment.id}: {len(assignment.tasks)} tasks, median of "
              f"{options.repeat} rounds; quiet: public checks {_score(folder)}", quiet)
        if options.hogs:
            hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options.hogs)]
            try:
                busy = _rounds(folder, stubs, options.repeat)
                score = _score(folder)
            finally:
                for hog in hogs:
                    hog.kill()
                    hog.wait()
            _show(f"beside {options.hogs} busy loops: public checks {score}", busy)
            ratio = statistics.median(busy["spawned"]) / statistics.median(quiet["spawned"])
            print(f"  check of the correct folder, busy / quiet: {ratio:.2f}x")


if __name__ == "__main__":
    main()
