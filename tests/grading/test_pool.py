"""The grading pool: started once, it grades any number of batches and single submissions."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SOLUTIONS, STUBS, sandbox_works

from autograder.batch import grade_batch
from autograder.grading.options import GradeOptions
from autograder.grading.pool import GradingPool


def _class(root: Path) -> Path:
    klass = root / "class"
    for name, source in (("ada", SOLUTIONS), ("bob", STUBS), ("cem", SOLUTIONS)):
        shutil.copytree(source, klass / name, ignore=shutil.ignore_patterns("graders", "checks", "*.md"))
    return klass


def _scores(out: Path) -> dict[str, float]:
    return {p.parent.name: json.loads(p.read_text())["score"] for p in out.glob("*/results.json")}


@pytest.mark.parametrize("jobs", [1, 2])
def test_one_pool_grades_batch_after_batch_without_starting_again(kit, tmp_path, jobs):
    klass = _class(tmp_path)
    with GradingPool(kit, GradeOptions(sandbox=sandbox_works(kit)), jobs) as pool:
        workers = list(pool.workers)
        pids = [w.proc.pid for w in workers if w.proc is not None]
        assert len(pids) == jobs
        first = grade_batch(kit, klass, tmp_path / "one", pool=pool)
        second = grade_batch(kit, klass, tmp_path / "two", pool=pool)
        assert first.graded == second.graded == 3
        assert [w.proc.pid for w in pool.workers if w.proc is not None] == pids  # the same warm workers
        single = pool.submit(klass / "bob").result(timeout=300)
        assert single.student == "bob" and single.score == 0
    assert _scores(tmp_path / "one") == _scores(tmp_path / "two") == {"ada": 100, "bob": 0, "cem": 100}
    assert all(w.proc is None for w in workers)  # stopped: each worker's sandbox is gone
    assert not multiprocessing.active_children()  # closing stopped every grading process


_HOLD_A_POOL = """
import multiprocessing, sys, time
from pathlib import Path
from autograder.config import load_kit
from autograder.grading.options import GradeOptions
from autograder.grading.pool import GradingPool
pool = GradingPool(load_kit(Path(sys.argv[1])), GradeOptions(sandbox=sys.argv[2] == "1"), 2).start()
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"  # a zombie is dead, waiting for init to reap it


def test_the_grading_processes_die_with_their_parent_killed_with_sigkill(kit):
    """Issue #37: `grade` killed with -9 leaves no grading process (each held torch, ~200 MB)."""
    sandbox = "1" if sandbox_works(kit) else "0"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_A_POOL, str(kit.root), sandbox],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        children = [int(pid) for pid in holder.stdout.readline().split()]
        assert len(children) == 2 and all(_alive(pid) for pid in children)
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 120  # generous: the machine is shared; they go within a second
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [pid for pid in children if _alive(pid)]
    for pid in left:  # never leave them behind, whatever the test says
        os.kill(pid, signal.SIGKILL)
    assert not left, f"grading processes outlived their parent: {left}"
