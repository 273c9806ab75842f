"""Probes of task `counting` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers and spies make the observations). A probe never judges: it runs the student's
# code on inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from autograder.sandbox.inside.observe import (
    scalar,
)


def counting_tinynet(mod, in_features, hidden, out_features):
    return scalar(mod.tinynet_count(in_features, hidden, out_features))


def counting_growth(mod, in_features, out_features, hidden_from, hidden_to):
    return scalar(mod.growth(in_features, out_features, hidden_from, hidden_to))
