"""Reference solutions (and the kit's probe helpers) loaded by file path, for hidden checks only."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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


def _exec(path: Path, source: str, name: str) -> ModuleType:
    """Import `source` as if it were the file `path` (a variant's rewritten reference)."""
    module = ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    finally:
        if added:
            sys.path.remove(folder)
    return module


@functools.cache
def _lesson(task: str) -> ModuleType:
    return _load(ASSIGNMENT / f"{task}.py", f"_nn_module_reference_{task}")


@functools.cache
def _variant(task: str, source: str) -> ModuleType:
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    return _exec(ASSIGNMENT / f"{task}.py", source, f"_nn_module_reference_{task}_{digest}")


@functools.lru_cache(maxsize=256)
def module(task: str, params: Any = None) -> ModuleType:
    """The reference solution `solutions/nn_module/<task>.py`, imported once per grading process.

    With `params` (an exam variant's), the reference as that variant has it: the lesson's file
    rewritten by graders/reference_variants.py (the lesson's module when nothing changes).
    """
    if params is None:
        return _lesson(task)
    from ..reference_variants import variant_source

    path = ASSIGNMENT / f"{task}.py"
    lesson = path.read_text(encoding="utf-8")
    source = variant_source(path.name, lesson, params)
    return _lesson(task) if source == lesson else _variant(task, source)


@functools.cache
def probes() -> ModuleType:
    """The kit's probes.py as a module, to build the same models the worker builds (trusted code)."""
    return _load(GRADERS / "probes.py", "_nn_module_grader_probes")
