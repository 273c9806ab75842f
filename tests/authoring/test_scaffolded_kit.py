"""Issue #27: an assignment fresh from `autograder new` passes the kit's own per-assignment tests.

A copy of this kit (without .venv, .git and graded outputs) gets a new 3-task assignment whose points
total 30 (not 100) and which has no given files, built as an instructor builds it (`autograder new`,
`autograder build`, `autograder doctor`); then the per-assignment test modules of that copy (those
parametrized over tests/kit_assignments.py) run for the new assignment only, in a pytest of their
own, and every one of its tests must pass, none skipped. Slow: the copy's graders run sandboxed.

Issue #35: in the same copy and the same pytest, a second one made as the docs allow: English only
(`languages = ["en"]`, no bn.toml) and its task beta calling task alpha's function
(`from alpha import alpha` in beta.py, its catalogue entries edited to match).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, sandbox_works

from autograder.config import Kit

NEW = "scaffolded_x"  # a name no test of the kit contains, so that `-k` selects the new one's tests
TASKS = ["alpha", "beta", "gamma"]
ENGLISH = "scaffolded_en"  # English only, beta imports alpha (issue #35)
ENGLISH_TASKS = ["alpha", "beta"]
# Top-level entries that are not the kit: the environment, history and what grading wrote.
NOT_THE_KIT = {".venv", ".git", "graded", "build", "test-artifacts", "served", ".ci"}
CLUTTER = ("__pycache__", "*.pyc", ".hypothesis", ".ruff_cache", ".mypy_cache", ".pytest_cache",
           "*.egg-info", "torch_autograder-*.whl")
# The per-assignment modules the issue names (tests/ of the copy), beside any that import ASSIGNMENTS.
KNOWN_MODULES = {
    "test_forged_replay.py", "test_contract_matrix.py", "authoring/test_build.py",
    "authoring/test_assignment_checks.py", "authoring/test_notebook_assignments.py",
    "output/test_pages.py", "test_hostile_assignments.py", "test_catalogue.py", "test_messages.py",
    "grading/test_selfcheck_assignment.py", "platforms/test_gradescope.py",
}


@pytest.fixture
def copy_root(tmp_path: Path) -> Iterator[Path]:
    """The copy's folder, outside /tmp where possible: the sandbox mounts a /tmp of its own, so an
    engine under /tmp costs a worker restart per task (as tests/platforms/test_gradescope.py notes)."""
    if Path("/var/tmp").is_dir() and os.access("/var/tmp", os.W_OK):
        base = Path(tempfile.mkdtemp(prefix="scaffolded-kit-", dir="/var/tmp"))
        yield base / "kit"
        shutil.rmtree(base, ignore_errors=True)
    else:
        yield tmp_path / "kit"


def copy_kit(dest: Path) -> Path:
    clutter = shutil.ignore_patterns(*CLUTTER)

    def ignore(folder: str, names: list[str]) -> set[str]:
        top = NOT_THE_KIT & set(names) if Path(folder) == ROOT else set()
        return top | set(clutter(folder, names))

    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def kit_command(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`autograder ARGS` run by the copy's own engine (this venv's python, in the copy's folder)."""
    return subprocess.run(
        [sys.executable, "-c", "from autograder.cli import main; main()", *args, "--kit", str(root)],
        cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)},
    )


def per_assignment_modules(root: Path) -> list[str]:
    """The copy's test modules parametrized over its assignments: the known ones and any other that
    imports tests/kit_assignments.py (this module aside)."""
    tests = root / "tests"
    found = {p.relative_to(tests).as_posix() for p in tests.rglob("test_*.py")
             if p.name != Path(__file__).name and IMPORT in p.read_text(encoding="utf-8").splitlines()}
    return sorted(found | KNOWN_MODULES)


IMPORT = "from kit_assignments import ASSIGNMENTS"


def test_a_scaffolded_assignment_passes_the_kits_per_assignment_tests(kit: Kit, copy_root: Path) -> None:
    if not sandbox_works(kit):
        pytest.skip("needs the sandbox (bubblewrap): the per-assignment tests grade in it")
    root = copy_kit(copy_root)
    for args in (["new", NEW, "--tasks", ",".join(TASKS)], ["build", NEW],
                 ["new", ENGLISH, "--tasks", ",".join(ENGLISH_TASKS)]):
        done = kit_command(root, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    english_only_with_an_import(root)
    for args in (["build", ENGLISH], ["doctor"]):
        done = kit_command(root, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert f"ok: {ENGLISH}: " in done.stdout and "messages in en," in done.stdout, done.stdout
    section = tomllib.loads((root / "grading.toml").read_text(encoding="utf-8"))["assignments"][NEW]
    assert list(section["tasks"]) == TASKS and section["given"] == []
    total = sum(task["points"] for task in section["tasks"].values())
    assert total != 100, total  # the tests must hold for any total

    modules = per_assignment_modules(root)
    report = root.parent / "junit.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-k", f"{NEW} or {ENGLISH}",
         f"--junitxml={report}",
         *(f"tests/{m}" for m in modules)],
        cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)},
    )
    tail = (done.stdout + done.stderr)[-6000:]
    assert report.is_file(), tail
    cases = ET.parse(report).getroot().iter("testcase")
    ran: dict[str, Counter[str]] = {NEW: Counter(), ENGLISH: Counter()}
    bad = []
    for case in cases:
        module = case.get("classname", "").split(".")[-1]
        which = [a for a in ran if a in case.get("name", "")]
        assert len(which) == 1, case.get("name")  # `-k` selected only the new ones' tests
        ran[which[0]][module] += 1
        bad += [f"{module}::{case.get('name')}: {child.tag} {child.get('message', '')[:300]}"
                for child in case if child.tag in ("failure", "error", "skipped")]
    assert not bad, "\n".join(bad) + "\n" + tail
    assert done.returncode == 0, tail
    for assignment, counted in ran.items():
        missing = sorted(m for m in modules if Path(m).stem not in counted)
        assert not missing, f"modules that collected no test of {assignment}: {missing}\n{tail}"


def english_only_with_an_import(root: Path) -> None:
    """ENGLISH as the docs allow it: `languages = ["en"]` without a bn.toml, and beta's reference
    calling alpha's function (`from alpha import alpha`), its catalogue entries edited to match."""
    toml = root / "grading.toml"
    text = toml.read_text(encoding="utf-8")
    start = text.index(f"[assignments.{ENGLISH}]")
    section = text[start:].replace('languages = ["en", "bn"]', 'languages = ["en"]', 1)
    assert section != text[start:]
    toml.write_text(text[:start] + section, encoding="utf-8")
    solutions = root / "solutions" / ENGLISH
    (solutions / "graders" / "messages" / "bn.toml").unlink()
    beta = solutions / "beta.py"
    source = beta.read_text(encoding="utf-8")
    edited = source.replace("\n\ndef beta(", "\nfrom alpha import alpha\n\n\ndef beta(", 1)
    edited = edited.replace("    return 2.0 * x\n", "    return float(alpha(x))\n", 1)
    assert edited.count("alpha") == 3, edited
    beta.write_text(edited, encoding="utf-8")
    catalogue = solutions / "graders" / "misconceptions.toml"
    text = catalogue.read_text(encoding="utf-8")
    start = text.index('id = "beta-')
    tail = text[start:].replace('["    return 2.0 * x\\n", ', '["    return float(alpha(x))\\n", ')
    assert tail.count("float(alpha(x))") == tail.count('id = "beta-') > 0, tail  # every beta entry's edit
    catalogue.write_text(text[:start] + tail, encoding="utf-8")
