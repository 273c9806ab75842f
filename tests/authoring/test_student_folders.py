"""Every built student folder and exam bundle carries what the self-check needs, and nothing secret."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from autograder.authoring.build import _tree_files, build_assignment, diff_assignment, refuse_leaks
from autograder.authoring.kit_wheel import TORCH_INSTALL, wheel_name
from autograder.authoring.latin_scan import latin_words
from autograder.config import load_kit
from autograder.exam.bundles import RosterEntry, build_bundles
from autograder.grading.course import load_graders
from autograder.manifest import kit_version, read_manifest

KIT = load_kit(ROOT)
BUILT = sorted(p for p in (ROOT / "assignments").iterdir() if (p / "checks").is_dir())


def _folders(tmp_path: Path) -> list[tuple[Path, str]]:
    """Each committed assignment folder, and one exam bundle of each exam that allows self-checks."""
    found = [(folder, folder.name) for folder in BUILT]
    for exam in (a for a in KIT.assignments.values() if a.exam is not None):
        bundle = build_bundles(KIT, exam, [RosterEntry("ada")], tmp_path / exam.id, b"x" * 32)[0]
        found.append((bundle.folder, exam.id))
    return found


def test_there_are_built_folders():
    assert BUILT, "no assignments/<id>/checks: run `autograder build`"


def test_every_folder_has_a_manifest_and_no_hidden_check_or_solution(tmp_path: Path):
    for folder, assignment_id in _folders(tmp_path):
        assignment = KIT.assignment(assignment_id)
        files = _tree_files(folder, ("__pycache__", "*.pyc"))
        references = {p.name: p.read_text(encoding="utf-8") for p in assignment.solutions.glob("*.py")}
        if assignment.exam is None:  # an exam's references differ per student; bundles check their own
            refuse_leaks(files, references, str(folder))
        assert not [rel for rel in files if "hidden" in rel.split("/") or "reference" in rel], folder
        hidden = {p.name for p in (assignment.graders / "hidden").glob("test_*.py")}
        for name in hidden:
            text = (assignment.graders / "hidden" / name).read_bytes()
            assert text not in files.values() or not text.strip(), (folder, name)
        manifest = read_manifest(folder / "checks" / "manifest.json")
        assert manifest.assignment == assignment.id
        assert [(t.id, t.file, t.points) for t in manifest.tasks] == [
            (t.id, t.file, t.points) for t in assignment.tasks]
        assert manifest.kit_version and all(t.names for t in manifest.tasks)
        if manifest.check == "none":
            continue
        graders = load_graders(manifest.as_assignment(folder), folder / "checks")
        for task in manifest.tasks:
            public = sum(c.points for c in graders.for_task(task.id) if c.public)
            assert public == task.public_points > 0, (folder, task.id)


@pytest.mark.parametrize("folder", BUILT, ids=[p.name for p in BUILT])
def test_the_manifest_needs_no_kit(folder: Path):
    """Nothing in the manifest points back into the kit: no absolute paths, no grading.toml."""
    text = (folder / "checks" / "manifest.json").read_text(encoding="utf-8")
    assert str(ROOT) not in text and "grading.toml" not in text


def _install_lines(folder: Path, readme: str = "README.md") -> list[str]:
    return [line.strip() for line in (folder / readme).read_text(encoding="utf-8").splitlines()
            if line.strip().startswith("pip install")]


def _install_line(folder: Path) -> str:
    """The README's command that installs the checker (the others install torch)."""
    lines = [line for line in _install_lines(folder) if line not in TORCH_INSTALL.values()]
    assert len(lines) == 1, lines
    return lines[0]


def test_every_readme_installs_the_cpu_only_torch_first_and_has_a_bangla_twin(tmp_path: Path):
    """Issue #38: a laptop without an NVIDIA GPU gets the ~200 MB CPU-only torch, not ~3 GB of CUDA,
    and the folder's README is in Bangla too, with the same commands and no English prose (an
    assignment in English only has no Bangla twin: the build writes one from a Bangla catalogue)."""
    for folder, assignment in _folders(tmp_path):
        if "bn" not in KIT.assignment(assignment).languages:
            assert not (folder / "README.bn.md").exists(), folder
            assert _install_lines(folder)[:2] == [TORCH_INSTALL["cpu"], TORCH_INSTALL["mac"]], folder
            continue
        for readme in ("README.md", "README.bn.md"):
            lines = _install_lines(folder, readme)
            assert lines[:2] == [TORCH_INSTALL["cpu"], TORCH_INSTALL["mac"]], (folder, readme, lines)
            assert lines[2] == _install_line(folder), (folder, readme, lines)
            assert "download.pytorch.org/whl/cpu" in TORCH_INSTALL["cpu"]
        bangla = (folder / "README.bn.md").read_text(encoding="utf-8")
        if folder in BUILT:  # an exam's numbers are the course's English lines (its params.describe)
            prose = re.sub(r"```.*?```", " ", bangla, flags=re.S)
            assert latin_words(prose) == [], (folder, latin_words(prose))
        else:  # the exam's window, in Bangla
            assert "যে সময় গোনা হয়" in bangla and "The time that counts" not in bangla, bangla


def test_a_built_folder_carries_the_wheel_its_readme_installs(tmp_path: Path):
    """`pip install torch-autograder` finds nothing (the kit is not on PyPI): the folder an instructor
    hands out holds this kit's wheel, and the README's command installs exactly that file."""
    folder = tmp_path / "handout"
    build_assignment(ROOT, KIT.default_assignment, folder)
    assert _install_line(folder) == f"pip install ./{wheel_name()}"
    with zipfile.ZipFile(folder / wheel_name()) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"torch_autograder-{kit_version()}.dist-info/METADATA").decode()
    assert {"autograder/__init__.py", "autograder/cli/selfcheck.py", "autograder/fonts/OFL.txt"} <= names
    assert "Requires-Dist: torch>=" in metadata
    assert wheel_name() not in "\n".join(diff_assignment(ROOT, KIT.default_assignment))


def test_a_kit_published_elsewhere_gives_its_own_install(tmp_path: Path):
    """grading.toml's [kit] student_install: the README names it and the folder carries no wheel."""
    kit = tmp_path / "kit"
    assignment = KIT.assignment()
    shutil.copytree(assignment.solutions, kit / "solutions" / assignment.id,
                    ignore=shutil.ignore_patterns("__pycache__"))
    toml = (ROOT / "grading.toml").read_text(encoding="utf-8")
    where = "--index-url https://school.example/simple torch-autograder==0.1.0"
    (kit / "grading.toml").write_text(toml.replace("[kit]\n", f"[kit]\nstudent_install = {where!r}\n", 1),
                                      encoding="utf-8")
    build_assignment(kit, assignment.id, tmp_path / "handout")
    assert _install_line(tmp_path / "handout") == f"pip install {where}"
    assert not list((tmp_path / "handout").glob("*.whl"))
    assert load_kit(kit).student_install == where
