"""Is this machine's Python, torch and NumPy one the self-check can run on? If not, what to install.

A broken install is never graded: correct code would fail checks for the machine's fault (a torch
built for NumPy 1.x under NumPy 2 turns every `.numpy()` into an error). The versions are read
from the installed packages' metadata (nothing imported); `probe_torch` then imports torch and
NumPy and makes them exchange an array, in the process that will run the checks.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from autograder.errors import AutograderError

MESSAGES = Path(__file__).resolve().parents[1] / "messages"

# The lower bounds of pyproject.toml's dependencies (tests/grading/test_student_environment.py keeps
# them equal). torch 2.4.1 is the first release built for NumPy 2 on every platform (pip's pick).
PYTHON = (3, 11)
MINIMUM = {"torch": (2, 4, 1), "numpy": (1, 26), "hypothesis": (6, 100), "click": (8, 1), "rich": (13, 7),
           "jinja2": (3, 1)}
TORCH_FOR_NUMPY2 = (2, 4, 1)
# What torch and NumPy say when a torch built for NumPy 1.x meets NumPy 2.
ABI_SIGNS = ("compiled using NumPy 1.x cannot be run", "_ARRAY_API not found", "Numpy is not available",
             "numpy.core.multiarray failed to import")


@dataclass(frozen=True)
class Fault:
    """One thing wrong with the install: a catalogue key of [ui] and the values its text names."""

    key: str
    values: Mapping[str, str]


def _version(text: str) -> tuple[int, ...]:
    parts = re.findall(r"\d+", text.split("+")[0])[:3]
    return tuple(int(p) for p in parts)


def _shown(version: tuple[int, ...]) -> str:
    return ".".join(str(v) for v in version)


def installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def version_faults(python: tuple[int, ...] | None = None,
                   versions: Mapping[str, str | None] | None = None) -> list[Fault]:
    """What the installed versions lack (from metadata: nothing is imported)."""
    python = tuple(sys.version_info[:3]) if python is None else python
    found = {name: installed(name) for name in MINIMUM} if versions is None else dict(versions)
    faults = []
    if python[:2] < PYTHON:
        faults.append(Fault("env_python", {"found": _shown(python), "need": _shown(PYTHON)}))
    for name, least in MINIMUM.items():
        have = found.get(name)
        if have is None:
            faults.append(Fault("env_missing", {"package": name, "need": _shown(least)}))
        elif _version(have) < least:
            faults.append(Fault("env_too_old", {"package": name, "found": have, "need": _shown(least)}))
    torch, numpy = found.get("torch"), found.get("numpy")
    if (torch and numpy and _version(numpy) >= (2,) and _version(torch) < TORCH_FOR_NUMPY2
            and not any(f.values.get("package") == "torch" for f in faults)):
        faults.append(numpy_abi_fault(torch, numpy))
    return faults


def numpy_abi_fault(torch: str | None, numpy: str | None) -> Fault:
    return Fault("env_numpy_abi", {"torch": torch or "?", "numpy": numpy or "?",
                                   "need": _shown(TORCH_FOR_NUMPY2)})


def probe_torch() -> list[Fault]:
    """Import torch and NumPy here and pass an array between them; the faults that shows."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            import numpy
            import torch

            back = torch.from_numpy(numpy.arange(3.0)).numpy()
            if float(back.sum()) != 3.0:  # a check, not an invariant: `python -O` must not drop it
                raise RuntimeError(f"torch read numpy.arange(3.0) back as {back!r}")
    except ImportError as exc:
        text = f"{type(exc).__name__}: {exc}"
        if any(sign in text + said.getvalue() for sign in ABI_SIGNS):
            return [numpy_abi_fault(installed("torch"), installed("numpy"))]
        package = "numpy" if getattr(exc, "name", "") == "numpy" else "torch"
        return [Fault("env_import", {"package": package, "error": text[:300]})]
    except Exception as exc:  # noqa: BLE001  torch imported, cannot reach NumPy ("Numpy is not available")
        text = f"{type(exc).__name__}: {exc}"
        if any(sign in text + said.getvalue() for sign in ABI_SIGNS):
            return [numpy_abi_fault(installed("torch"), installed("numpy"))]
        return [Fault("env_import", {"package": "torch", "error": text[:300]})]
    if any(sign in said.getvalue() for sign in ABI_SIGNS):
        return [numpy_abi_fault(installed("torch"), installed("numpy"))]
    return []


class BrokenInstall(AutograderError):
    """The student's Python, torch or NumPy cannot run the checks (exit 2: fix the install, not the code)."""


def engine_labels(lang: str) -> dict[str, str]:
    """The engine catalogue's [ui] labels in `lang`, English where it lacks one (read, not imported)."""
    labels: dict[str, str] = {}
    for code in dict.fromkeys(("en", lang)):
        try:
            data = tomllib.loads((MESSAGES / f"{code}.toml").read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
        labels.update({k: v for k, v in data.get("ui", {}).items() if isinstance(v, str)})
    return labels


def describe_faults(faults: list[Fault], lang: str) -> str:
    """What is wrong with the install and what to install, in the student's language."""
    labels = engine_labels(lang)
    lines = [labels.get("env_header", "This Python environment cannot run the checks (your code is not "
                                      "at fault, nothing was checked):")]
    for fault in faults:
        text = labels.get(fault.key, fault.key + ": {values}")
        if fault.values.get("package") == "torch":  # the CPU-only build first: no CUDA download
            text = labels.get(fault.key + "_torch", text)
        try:
            lines.append("- " + text.format(**fault.values))
        except (KeyError, IndexError, ValueError):
            lines.append(f"- {fault.key}: {dict(fault.values)}")
    if any(fault.values.get("package") == "torch" or fault.key == "env_numpy_abi" for fault in faults):
        lines.append(labels.get("env_torch_gpu", ""))
    return "\n".join(line for line in lines if line)
