"""Issue #27: an assignment fresh from `autograder new` passes the kit's own per-assignment tests.

A copy of this kit (without .venv, .git and graded outputs) gets a new 3-task assignment whose points
total 30 (not 100) and which has no given files, built as an instructor builds it (`autograder new`,
`autograder build`, `autograder doctor`); then the per-assignment test modules of that copy (those
parametrized over tests/kit_assignments.py) run for the new assignment only, in a pytest of their
own, and every one of its tests must pass, none skipped. Slow: the copy's graders run sandboxed.

Issue #35: in the same copy and the same pytest, a second one made as the docs allow: English only
(`languages = ["en"]`, no bn.toml) and its task beta calling task alpha's function
(`from alpha import alpha` in beta.py, its catalogue entries edited to match).

Issue #46: and a third, the guide's worked example (docs/worked_example/norms/ over `autograder new
norms`, in the contract's and catalogue's short forms); the first declares one of its properties
`shared` (its reason in its own contract, no kit file edited). Two pytests of the copy, as on a machine
set up by `make setup` (AUTOGRADER_TEST_NO_BROWSER=1: Chromium looked for and not found;
AUTOGRADER_REQUIRE_BROWSER unset): (i) the guide's own command, `pytest tests -k "<the new ids>"`,
which must collect tests of each id in every per-assignment module; (ii) the kit-level tests that take
no assignment but read them all (contract matrix rules, layout, catalogue, messages, student folders,
grader files...), collected with the new ones present. Each exits 0, and nothing in it skips but a test
that needs a browser, saying so. The rest of the kit suite is the kit's own assignments' tests.
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
from conftest import NO_BROWSER, REQUIRE_BROWSER, ROOT, sandbox_works

from autograder.config import Kit

NEW = "scaffolded_x"  # a name no test of the kit contains, so that `-k` selects the new one's tests
TASKS = ["alpha", "beta", "gamma"]
ENGLISH = "scaffolded_en"  # English only, beta imports alpha (issue #35)
ENGLISH_TASKS = ["alpha", "beta"]
EXAMPLE = "norms"  # the guide's worked example (issue #46)
EXAMPLE_TASKS = ["unit_rows", "norm_linear", "unit_rows_np"]
BROWSER_SKIP = "drives a browser"  # tests/conftest.py's reason for a test that needs one
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
# Modules whose tests read every assignment without one as a parameter (a course name in the engine, the
# grader files scanned, the student folders), beside the per-assignment modules' own kit-level tests.
KIT_WIDE = {"test_layout.py", "test_graders_api.py", "authoring/test_student_folders.py", "test_docs_site.py"}
# Some of those, named: (ii) must run them, whatever else it finds.
KIT_LEVEL = {"test_the_ownership_rules_catch_gaps", "test_the_completeness_rules_catch_gaps",
             "test_assignments_found", "test_catalogues_found", "test_no_course_content_in_the_engine",
             "test_every_assignment_has_a_committed_folder", "test_no_built_folder_ships_instructor_files",
             "test_the_files_scanned_are_the_graders"}


def test_a_scaffolded_assignment_passes_the_kits_per_assignment_tests(kit: Kit, copy_root: Path) -> None:
    if not sandbox_works(kit):
        pytest.skip("needs the sandbox (bubblewrap): the per-assignment tests grade in it")
    root = copy_kit(copy_root)
    for args in (["new", NEW, "--tasks", ",".join(TASKS)], ["build", NEW],
                 ["new", ENGLISH, "--tasks", ",".join(ENGLISH_TASKS)],
                 ["new", EXAMPLE, "--tasks", ",".join(EXAMPLE_TASKS), "--title", "Unit rows"]):
        done = kit_command(root, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    english_only_with_an_import(root)
    the_worked_example(root)
    declared_shared(root)
    for args in (["build", ENGLISH], ["build", EXAMPLE], ["doctor"]):
        done = kit_command(root, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert f"ok: {ENGLISH}: " in done.stdout and "messages in en," in done.stdout, done.stdout
    assert f"ok: {EXAMPLE}: " in done.stdout, done.stdout
    section = tomllib.loads((root / "grading.toml").read_text(encoding="utf-8"))["assignments"][NEW]
    assert list(section["tasks"]) == TASKS and section["given"] == []
    total = sum(task["points"] for task in section["tasks"].values())
    assert total != 100, total  # the tests must hold for any total

    # as on a machine set up by `make setup`: no browser found, and none required
    env = {**os.environ, "PYTHONPATH": str(root), NO_BROWSER: "1"}
    env.pop(REQUIRE_BROWSER, None)
    ours = [NEW, ENGLISH, EXAMPLE]

    # (i) the guide's command: every per-assignment test of the whole suite, for the new ones only
    modules = per_assignment_modules(root)
    cases, tail = kit_pytest(root, env, "own", "-k", " or ".join(ours), "tests")
    ran: dict[str, Counter[str]] = {a: Counter() for a in ours}
    for module, name in cases:
        which = [a for a in ours if a in name]
        assert len(which) == 1, (module, name)  # `-k` selected only the new ones' tests
        ran[which[0]][module.split(".")[-1]] += 1
    for assignment, counted in ran.items():
        missing = sorted(m for m in modules if Path(m).stem not in counted)
        assert not missing, f"modules that collected no test of {assignment}: {missing}\n{tail}"

    # (ii) the kit-level tests, which take no assignment but read them all, with the new ones present
    # (their own tests ran in (i); the kit's own assignments' tests are the rest of `make test`)
    theirs = [a for a in tomllib.loads((root / "grading.toml").read_text(encoding="utf-8"))["assignments"]
              if a not in ours]
    kit_level = sorted(set(modules) | KIT_WIDE)
    cases, tail = kit_pytest(root, env, "kit", "-k", " and ".join(f"not {a}" for a in ours + theirs),
                             *(f"tests/{m}" for m in kit_level))
    names = {name.split("[")[0] for _, name in cases}
    assert KIT_LEVEL <= names, (sorted(KIT_LEVEL - names), tail)


def kit_pytest(root: Path, env: dict[str, str], label: str, *args: str) -> tuple[list[tuple[str, str]], str]:
    """Run the copy's pytest (two processes, a file each at a time, as `make test` does) and return the
    (module, name) of every test that ran, after asserting it exited 0 and that nothing failed and
    nothing skipped but a test that needs a browser (at least one of which must have said so)."""
    report = root.parent / f"junit-{label}.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-n", "2", "--dist", "loadfile",
         f"--junitxml={report}", *args],
        cwd=root, capture_output=True, text=True, env=env,
    )
    tail = (done.stdout + done.stderr)[-6000:]
    assert report.is_file(), tail
    ran, bad, browser_skips = [], [], 0
    for case in ET.parse(report).getroot().iter("testcase"):
        module, name = case.get("classname", ""), case.get("name", "")
        outcomes = [(c.tag, f"{c.get('message', '')} {c.text or ''}") for c in case
                    if c.tag in ("failure", "error", "skipped")]
        for tag, text in outcomes:
            if tag == "skipped" and BROWSER_SKIP in text:
                browser_skips += 1
            else:
                bad.append(f"{module}::{name}: {tag} {text[:300]}")
        if not outcomes:
            ran.append((module, name))
    assert not bad, "\n".join(bad) + "\n" + tail
    assert done.returncode == 0, tail
    assert ran, tail
    assert browser_skips > 0, tail  # the browser was away indeed, and its tests said so
    return ran, tail


def english_only(root: Path, assignment: str) -> Path:
    """`languages = ["en"]` for `assignment` in grading.toml and no bn.toml, as the docs allow; its
    solutions folder."""
    toml = root / "grading.toml"
    text = toml.read_text(encoding="utf-8")
    start = text.index(f"[assignments.{assignment}]")
    section = text[start:].replace('languages = ["en", "bn"]', 'languages = ["en"]', 1)
    assert section != text[start:]
    toml.write_text(text[:start] + section, encoding="utf-8")
    solutions = root / "solutions" / assignment
    (solutions / "graders" / "messages" / "bn.toml").unlink()
    return solutions


def the_worked_example(root: Path) -> None:
    """The guide's commands for it: English only (no bn.toml), the files of docs/worked_example/norms/
    written over the scaffold's."""
    solutions = english_only(root, EXAMPLE)
    shutil.copytree(ROOT / "docs" / "worked_example" / EXAMPLE, solutions, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))


def declared_shared(root: Path) -> None:
    """NEW's author declares alpha's `doubles` shared: a reason in its own contract instead of a mutant."""
    contract = root / "solutions" / NEW / "graders" / "hidden" / "contract.toml"
    text = contract.read_text(encoding="utf-8")
    old = 'mutant = "alpha-clips"\n'
    assert text.count(old) == 1, text
    contract.write_text(text.replace(old, 'shared = "a wrong double is wrong on the example and on random '
                                          'inputs alike"\n'), encoding="utf-8")


def english_only_with_an_import(root: Path) -> None:
    """ENGLISH as the docs allow it: `languages = ["en"]` without a bn.toml, and beta's reference
    calling alpha's function (`from alpha import alpha`), its catalogue entries edited to match."""
    solutions = english_only(root, ENGLISH)
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
