"""Helpers the probes of several tasks share (inside the sandboxed worker; loaded before them)."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers and spies make the observations). A probe never judges: it runs the student's
# code on inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

import torch


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")
