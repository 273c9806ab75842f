"""The kit's own wheel, which a built student folder carries: the checker is not on PyPI.

`pip install torch-autograder` finds nothing, so the folder an instructor hands out holds the
wheel of the very kit that built it, and its README says `pip install ./<that wheel>` (a kit whose
grading.toml names `student_install` publishes it elsewhere instead). The wheel is built from the
kit's source (the checkout this package runs from) once per content of that source, and cached.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.errors import ConfigError
from autograder.manifest import kit_version

SOURCE = Path(__file__).resolve().parents[2]  # the checkout: pyproject.toml, README.md, autograder/
PACKAGE = "autograder"
SKIP = ("__pycache__", "*.pyc", "*.egg-info")


def wheel_name(version: str | None = None) -> str:
    """The file name of the kit's wheel (pure Python: one wheel for every platform)."""
    return f"torch_autograder-{version or kit_version()}-py3-none-any.whl"


def install_command(student_install: str = "") -> str:
    """What the README tells the student to run, in the folder it sits in."""
    return f"pip install {student_install}" if student_install else f"pip install ./{wheel_name()}"


# torch for the student's README: PyTorch's own CPU-only index first (Linux, Windows: about 200 MB,
# where PyPI's Linux torch brings CUDA, about 2.5-3 GB), PyPI on macOS (CPU only there).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_INSTALL = {"cpu": f"pip install torch --index-url {TORCH_CPU_INDEX}", "mac": "pip install torch"}


def _sources() -> list[Path]:
    files = [SOURCE / "pyproject.toml", SOURCE / "README.md"]
    files += sorted(p for p in (SOURCE / PACKAGE).rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    return files


def _digest(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(SOURCE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def kit_wheel() -> bytes:
    """The bytes of the kit's wheel, built from its source with pip (cached per source content)."""
    if not (SOURCE / "pyproject.toml").is_file():
        raise ConfigError(
            "this torch-autograder is installed without its source, so it cannot build the wheel a "
            "student folder carries: set [kit] student_install in grading.toml to where students get "
            "the kit (a URL of the wheel, or an index), or build from the kit's checkout")
    files = _sources()
    cache = Path(tempfile.gettempdir()) / "autograder-wheels" / _digest(files)
    wheel = cache / wheel_name()
    if wheel.is_file():
        return wheel.read_bytes()
    with tempfile.TemporaryDirectory(prefix="autograder-wheel-") as work:
        source = Path(work) / "source"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(SOURCE / name, source / name)
        shutil.copytree(SOURCE / PACKAGE, source / PACKAGE, ignore=shutil.ignore_patterns(*SKIP))
        built = subprocess.run(  # noqa: S603  our own interpreter and pip, on a copy of our own source
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
             "-w", str(Path(work) / "dist"), str(source)],
            capture_output=True, text=True, timeout=600)
        made = Path(work) / "dist" / wheel_name()
        if built.returncode != 0 or not made.is_file():
            raise ConfigError(f"the kit's wheel could not be built with pip: {built.stderr.strip()[-500:]}")
        cache.mkdir(parents=True, exist_ok=True)
        partial = cache / (wheel.name + ".part")
        shutil.copy(made, partial)
        partial.replace(wheel)
    return wheel.read_bytes()
