"""End to end, as a student: the folder the instructor hands out (`autograder build`), in a fresh
venv that already holds torch the README's own install command (the wheel the folder carries), no
checkout on the path, a non-root user with no bubblewrap on PATH, `autograder check` in copies of
the folders.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.authoring.build import build_assignment
from autograder.authoring.kit_wheel import TORCH_INSTALL
from autograder.config import load_kit
from autograder.exam.bundles import RosterEntry, build_bundles
from autograder.grading.course import load_graders
from autograder.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"  # what the fresh venv holds before the kit's wheel comes
NOBODY = 65534
SECRET = b"student-install-test-secret-0123"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                       reason="needs root and setpriv to run the check as another user"),
]


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=900, **kwargs)


def _system_python() -> str:
    """A Python 3.11 every user may run (this venv's may live in root's home, closed to others)."""
    for candidate in ("/usr/bin/python3.11", "/usr/local/bin/python3.11"):
        if os.access(candidate, os.X_OK):
            return candidate
    return sys.executable


@pytest.fixture(scope="module")
def place() -> Iterator[Path]:
    """A folder every user can read (pytest's own tmp folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="autograder-student-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def handout(place: Path) -> Path:
    """What the instructor hands out: `autograder build` of the default assignment, written elsewhere."""
    folder = place / "handout"
    build_assignment(ROOT, load_kit(ROOT).assignment().id, folder)
    return folder


def readme_install(folder: Path) -> str:
    """The README's one `pip install ...` command of the checker (the ones before it install torch:
    the CPU-only index is not reachable from here, so the venv gets torch from the local wheel)."""
    commands = [line.strip() for line in (folder / "README.md").read_text(encoding="utf-8").splitlines()
                if line.strip().startswith("pip install")]
    assert commands[:2] == [TORCH_INSTALL["cpu"], TORCH_INSTALL["mac"]], commands  # CPU-only torch first
    assert len(commands) == 3, commands
    return commands[2]


@pytest.fixture(scope="module")
def venv(place: Path, handout: Path) -> Path:
    """A fresh venv with torch, then exactly the install command of the handed-out folder's README."""
    env = place / "venv"
    assert _run([_system_python(), "-m", "venv", str(env)]).returncode == 0
    pip = [str(env / "bin" / "python"), "-m", "pip"]
    first = _run([*pip, "install", "-q", TORCH])
    assert first.returncode == 0, first.stderr
    command = readme_install(handout)
    assert "torch-autograder" not in command.split()  # not on PyPI: the folder carries the wheel
    path = f"{env / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    installed = _run(["bash", "-c", command], cwd=handout, env={**os.environ, "PATH": path})
    assert installed.returncode == 0, installed.stdout + installed.stderr
    # pip kept the torch that was there: nothing of torch was collected or downloaded again
    assert not re.search(r"(Collecting|Downloading) torch\b", installed.stdout), installed.stdout
    version = _run([str(env / "bin" / "python"), "-c", "import torch; print(torch.__version__)"])
    assert version.stdout.strip().startswith(TORCH.split("==")[1]), version.stdout
    where = _run([str(env / "bin" / "python"), "-c", "import autograder; print(autograder.__file__)"],
                 cwd=place)
    assert str(env) in where.stdout and str(ROOT) not in where.stdout  # the wheel, not the checkout
    return env


def _as_student(venv: Path, folder: Path, *options: str,
                inside: str = "") -> subprocess.CompletedProcess[str]:
    """`autograder check` in `folder` (or its subfolder `inside`) as uid nobody, with only the venv on
    PATH (no bwrap there)."""
    shutil.chown(folder, NOBODY, NOBODY)
    for path in folder.rglob("*"):
        os.chown(path, NOBODY, NOBODY)
    path = str(venv / "bin")
    assert shutil.which("bwrap", path=path) is None
    env = {"PATH": path, "HOME": str(folder), "LANG": "C", "PYTHONNOUSERSITE": "1"}
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    return _run([setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 str(venv / "bin" / "autograder"), "check", *options], cwd=folder / inside, env=env)


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_assignment_folder_full_marks_for_references_exit_1_for_stubs(venv: Path, place: Path,
                                                                    handout: Path):
    kit = load_kit(ROOT)
    assignment = kit.assignment()
    built = handout
    public = sum(t.public_points for t in read_manifest(built / "checks" / "manifest.json").tasks)
    stubs = _as_student(venv, _copy(built, place / "stubs"), "--lang", "bn")  # Bangla in the C locale
    assert stubs.returncode == 1, stubs.stdout + stubs.stderr
    assert "এখনো শুরু হয়নি" in stubs.stdout and f": 0/{public:g}" in stubs.stdout
    solved = _copy(built, place / "solved")
    for task in assignment.tasks:
        shutil.copy(assignment.solutions / task.file, solved / task.file)
    (solved / "notes").mkdir()
    result = _as_student(venv, solved, inside="notes")  # issue #38: from a subfolder, as git finds its root
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"public checks: {public:g}/{public:g}" in result.stdout
    assert f"checked the folder {solved}" in result.stdout


def test_exam_bundle_full_marks_for_its_references(venv: Path, place: Path):
    kit = load_kit(ROOT)
    exam = next(a for a in kit.assignments.values() if a.exam is not None and a.exam.check == "public")
    bundle = build_bundles(kit, exam, [RosterEntry("ada")], place / "bundles", SECRET)[0]
    graders = load_graders(exam)
    params = graders.module("params").for_variant(bundle.variant.choices)
    rewrite = graders.module("reference_variants").variant_source
    folder = _copy(bundle.folder, place / "exam")
    assert not (folder / "grading.toml").exists()
    wheel = readme_install(folder).split()[-1]  # the bundle carries the wheel its README names
    assert (folder / wheel).is_file() and wheel.endswith(".whl")
    stubs = _as_student(venv, folder)
    assert stubs.returncode == 1, stubs.stdout + stubs.stderr
    for task in exam.tasks:
        text = (exam.solutions / task.file).read_text(encoding="utf-8")
        (folder / task.file).write_text(rewrite(task.file, text, params), encoding="utf-8")
    result = _as_student(venv, folder)
    public = sum(t.public_points for t in read_manifest(folder / "checks" / "manifest.json").tasks)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"public checks: {public:g}/{public:g}" in result.stdout
