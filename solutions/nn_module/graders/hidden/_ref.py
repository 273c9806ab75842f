"""Reference solutions (and the kit's probe helpers) loaded by file path, for hidden checks only."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ASSIGNMENT = Path(__file__).resolve().parents[2]
GRADERS = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)  # a reference may `import data`
    try:
        spec.loader.exec_module(module)
    finally:
        if added:
            sys.path.remove(folder)
    return module


@functools.cache
def module(task: str) -> ModuleType:
    """The reference solution `solutions/nn_module/<task>.py`, imported once per grading process."""
    return _load(ASSIGNMENT / f"{task}.py", f"_nn_module_reference_{task}")


@functools.cache
def probes() -> ModuleType:
    """The kit's probes.py as a module, to build the same models the worker builds (trusted code)."""
    return _load(GRADERS / "probes.py", "_nn_module_grader_probes")
