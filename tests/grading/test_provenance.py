"""The grader digest covers the engine's judging code: an edit there makes every grade stale.

Proves: the judging modules are the grader's, the worker's and what the graders import, with all they
import (never the CLI, the pages or the service); an edit to compare's tolerances in a copy of the
engine changes the digest and `grade` grades the class again as stale; an edit to the pages does not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import ROOT, SOLUTIONS, sandbox_works

from autograder.batch import grade_batch
from autograder.config import Kit, load_kit
from autograder.grading import provenance
from autograder.grading.options import GradeOptions
from autograder.grading.provenance import grader_digest, judging_modules

ENGINE = ROOT / "autograder"


def _names(paths: list[Path], engine: Path = ENGINE) -> set[str]:
    return {p.relative_to(engine).as_posix() for p in paths}


def test_the_judging_modules_are_what_decides_a_verdict(kit: Kit):
    graders = sorted(p for a in kit.assignments.values() for p in a.graders.rglob("*.py"))
    found = _names(judging_modules(graders))
    for module in ("compare.py", "checks.py", "probe_calls.py", "references.py", "catalogues.py",
                   "grading/judge.py", "grading/grader.py", "grading/course.py", "grading/challenge.py",
                   "grading/hypothesis_setup.py", "sandbox/codec.py", "sandbox/session.py",
                   "sandbox/inside/runtime.py", "sandbox/inside/spies.py", "sandbox/inside/integrity.py",
                   "sandbox/inside/server.py", "submissions/collect.py", "grading/__init__.py"):
        assert module in found, module
    for part in ("cli/", "output/", "service/", "ledger/", "platforms/", "cluster/", "batch.py"):
        assert not any(name.startswith(part) for name in found), part


def test_what_graders_import_of_the_kit_is_judging_code(tmp_path: Path):
    grader = tmp_path / "test_x.py"
    grader.write_text("def f():\n    from autograder.integrity import tokens  # lazily, in a function\n")
    assert "integrity/tokens.py" in _names(judging_modules([grader]))
    assert "integrity/tokens.py" not in _names(judging_modules([]))


def _copies(root: Path) -> tuple[Kit, Path]:
    """A kit and an engine of its own, both copies (the engine the digest reads)."""
    kit = root / "kit"
    shutil.copytree(ROOT / "solutions", kit / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "grading.toml", kit / "grading.toml")
    engine = root / "engine" / "autograder"
    shutil.copytree(ENGINE, engine, ignore=shutil.ignore_patterns("__pycache__"))
    return load_kit(kit), engine


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_an_edit_to_the_tolerances_makes_grades_stale_and_grade_grades_again(tmp_path, monkeypatch):
    kit, engine = _copies(tmp_path)
    monkeypatch.setattr(provenance, "ENGINE", engine)
    assignment = kit.assignment("nn_module")
    before = grader_digest(kit, assignment, "en")
    klass = tmp_path / "class"
    shutil.copytree(SOLUTIONS, klass / "ada", ignore=shutil.ignore_patterns("graders", "__pycache__"))
    out = tmp_path / "out"
    options = GradeOptions(sandbox=sandbox_works(kit))
    first = grade_batch(kit, klass, out, options=options, jobs=1)
    assert (first.new, first.graded) == (("ada",), 1)

    _edit(engine / "output" / "pages.py", '"mean": "Mean"', '"mean": "Average"')  # no verdict changes
    assert grader_digest(kit, assignment, "en") == before
    assert grade_batch(kit, klass, out, options=options, jobs=1).graded == 0

    _edit(engine / "compare.py", '"float32": 1e-5', '"float32": 1e-3')
    assert grader_digest(kit, assignment, "en") != before
    again = grade_batch(kit, klass, out, options=options, jobs=1)
    assert (again.stale, again.graded) == (("ada",), 1)
    assert again.stale_files == ("autograder/compare.py",)
    assert "1 stale because the graders changed in autograder/compare.py (ada)" in again.describe()


def test_each_part_of_the_graders_has_its_digest_and_the_stale_message_names_them(kit: Kit, tmp_path: Path):
    from autograder.batch import BatchSummary
    from autograder.grading.provenance import changed_parts, grader_key

    assignment = kit.assignment("nn_module")
    digest, files = grader_key(kit, assignment, "en")
    assert digest == grader_digest(kit, assignment, "en")
    assert {"solutions/nn_module/graders/params.py", "solutions/nn_module/delivery.py",
            "autograder/compare.py", "grading.toml [assignments.nn_module]"} <= set(files)
    _, bangla = grader_key(kit, assignment, "bn")
    assert changed_parts(files, bangla) == [
        "the feedback language and the versions of the kit, torch, numpy and hypothesis"]
    assert changed_parts({"a": "1"}, {"b": "2"}) == ["a", "b"]  # a file added or removed is named too
    old = BatchSummary(1, 0, 0.0, tmp_path, stale=("ada",), stale_files=("",))
    assert "1 stale because the graders changed (ada)" in old.describe()  # graded before the map was kept
    mixed = BatchSummary(2, 0, 0.0, tmp_path, stale=("ada", "bob"), stale_files=("", "autograder/compare.py"))
    assert ("changed in autograder/compare.py (older grades: files not recorded) (ada, bob)"
            in mixed.describe())
