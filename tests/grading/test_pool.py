"""The grading pool: started once, it grades any number of batches and single submissions."""

from __future__ import annotations

import json
import multiprocessing
import shutil
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
