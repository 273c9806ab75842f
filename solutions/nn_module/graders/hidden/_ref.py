"""Reference solutions (and the kit's probes as a module) by file path, for hidden checks only."""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

from autograder.graders import References

_REFERENCES = References.of_graders(__file__)


@functools.lru_cache(maxsize=256)
def module(task: str, params: Any = None) -> ModuleType:
    """The reference solution `solutions/nn_module/<task>.py`, imported once per grading process.

    With `params` (an exam variant's), the reference as that variant has it: the lesson's file
    rewritten by graders/reference_variants.py (the lesson's module when nothing changes).
    """
    if params is None:
        return _REFERENCES.module(task)
    from ..reference_variants import variant_source

    path = _REFERENCES.folder / f"{task}.py"
    lesson = path.read_text(encoding="utf-8")
    source = variant_source(path.name, lesson, params)
    return _REFERENCES.module(task) if source == lesson else _REFERENCES.variant(task, source)


def probes() -> ModuleType:
    """The kit's probes.py as a module, to build the same models the worker builds (trusted code)."""
    return _REFERENCES.graders_module("probes")
