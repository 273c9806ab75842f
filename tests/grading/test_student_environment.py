"""A broken install is named as such (exit 2, what to install), never graded as the student's mistake."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT, SOLUTIONS, STUBS

from autograder.grading.student_environment import (
    MINIMUM,
    PYTHON,
    describe_faults,
    version_faults,
)
from autograder.manifest import read_manifest

MANIFEST = read_manifest(STUBS / "checks" / "manifest.json")
CLI = Path(sys.executable).with_name("autograder")
ABI = ("\nA module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.4.6 as it may crash. "
       "To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.\n")


def test_the_lower_bounds_are_pyprojects():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bounds = {}
    for requirement in project["dependencies"]:
        name, least = re.fullmatch(r"([\w-]+)>=([\d.]+)", requirement).groups()  # type: ignore[union-attr]
        bounds[name] = tuple(int(p) for p in least.split("."))
    assert bounds == MINIMUM
    assert project["requires-python"] == ">=" + ".".join(map(str, PYTHON))


def test_versions_that_cannot_run_the_checks_say_what_to_install():
    good = {name: ".".join(map(str, least)) for name, least in MINIMUM.items()}
    assert version_faults((3, 11, 7), good) == []
    old_python = version_faults((3, 9, 1), good)
    assert [f.key for f in old_python] == ["env_python"]
    old_torch = version_faults((3, 12, 0), {**good, "torch": "2.2.0", "numpy": "2.1.0"})
    assert [f.key for f in old_torch] == ["env_too_old"]
    missing = version_faults((3, 12, 0), {**good, "torch": None})
    assert [(f.key, f.values["package"]) for f in missing] == [("env_missing", "torch")]
    for lang in ("en", "bn"):
        text = describe_faults(old_torch + old_python, lang)
        assert 'pip install "torch>=2.4.1"' in text and "3.9.1" in text, text
    assert "আপনার কোডের কোনো দোষ নেই" in describe_faults(missing, "bn")
    for lang in ("en", "bn"):  # issue #38: the ~200 MB CPU-only torch first, CUDA's GB as the exception
        text = describe_faults(missing, lang)
        cpu, gpu = text.index("--index-url https://download.pytorch.org/whl/cpu"), text.index("NVIDIA")
        assert cpu < gpu and "GB" in text[gpu:], text
    assert "NVIDIA" not in describe_faults(old_python, "en")  # torch is fine there: no word about it


def _fake_torch(where: Path, init: str, version: str = "2.13.0") -> Path:
    package = where / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(init, encoding="utf-8")
    info = where / f"torch-{version}.dist-info"
    info.mkdir()
    metadata = f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    return where


def _check(folder: Path, fake: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(fake)}
    return subprocess.run([str(CLI), "check", *options], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture
def solved(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    shutil.copytree(STUBS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for task in MANIFEST.tasks:
        shutil.copy(SOLUTIONS / task.file, folder / task.file)
    return folder


@pytest.mark.parametrize(("init", "version", "says"), [
    # a torch built for NumPy 1.x under NumPy 2: the warning at import, then no array exchange
    (f"import sys\nsys.stderr.write({ABI!r})\n"
     "def from_numpy(a):\n    raise RuntimeError('Numpy is not available')\n", "2.13.0", 'numpy<2'),
    ("raise ImportError('numpy.core.multiarray failed to import')\n", "2.13.0", 'numpy<2'),
    ("raise OSError('libtorch_cpu.so: cannot open shared object file')\n", "2.13.0",
     "--force-reinstall torch"),
    ("", "2.2.0", 'pip install "torch>=2.4.1"'),
], ids=["numpy-abi-warning", "numpy-abi-import", "broken-library", "too-old"])
def test_a_broken_install_exits_2_and_grades_nothing(solved: Path, tmp_path: Path, init: str, version: str,
                                                     says: str):
    fake = _fake_torch(tmp_path / "fake", init, version)
    for options in ((), ("--in-process",), ("--lang", "bn")):
        done = _check(solved, fake, *options)
        shown = done.stdout + done.stderr
        assert done.returncode == 2, (options, shown[-3000:])
        assert says in shown, (options, shown[-3000:])
        assert "public checks:" not in shown and "public check:" not in shown  # nothing was graded
        assert ("not at fault" in shown) != (options == ("--lang", "bn")), shown[-2000:]
