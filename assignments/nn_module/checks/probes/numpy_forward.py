"""Probes of task `numpy_forward` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from autograder.sandbox.inside.observe import array, exception


def numpy_linear(mod, x, W, b):
    return array(mod.linear(x, W, b))


def numpy_delivery_cases(mod, cases):
    """delivery_forward on each [state, x] in one call; a case that raises is reported, not fatal."""
    out = []
    for state, x in cases:
        try:
            out.append({"raised": None, "out": array(mod.delivery_forward(dict(state), x))})
        except Exception as exc:
            out.append({"raised": exception(exc), "out": None})
    return out
