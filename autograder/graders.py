"""The graders' API (grading side): everything an assignment's checks, conftest and references use.

    from autograder.graders import call, close, describe, fail, points, require_array

    @points(5)
    def test_forward_matches_the_formula(worker, params):
        \"\"\"TinyNet's forward is fc2(relu(fc1(x)))\"\"\"
        obs = call(worker, "tinynet_forward", "TinyNet(4, 8, 3)(x)", x=params.x)
        got = require_array(obs["out"], "TinyNet(4, 8, 3)(x)", (len(params.x), 3))
        if not close(got, params.want):
            fail("tinynet.forward_formula", report=describe(got, params.want))

An assignment's graders import the engine only through this module (checks, conftest.py, the
references' loader) and `autograder.sandbox.inside.observe` (probes, inside the sandbox); tests/
holds them to it. The modules behind it may move; these names stay. docs/authors/authoring.md describes
the observation format the probes send and these functions read.
"""

from __future__ import annotations

from typing import Any

from autograder.check_builders.equality import check_equal, judge_equal
from autograder.check_builders.raises import RaisesCase, judge_refusals, mix_valid
from autograder.check_builders.structure import (
    check_structure,
    filled,
    judge_layers,
    judge_structure,
    pools,
    read_back,
)
from autograder.check_builders.training import StepMismatch, returned_per_step
from autograder.checks import fail, note, points
from autograder.compare import (
    close,
    describe,
    fmt_shape,
    fmt_values,
    require_array,
    require_close,
    tolerance,
)
from autograder.probe_calls import (
    ProbeCaller,
    call,
    call_once,
    clean,
    raised_as,
    raised_name,
    require_raised,
    scalar_type,
)
from autograder.references import References

# conftest.py's fixtures, from the pytest plugin: loaded when asked for, since a student's install
# (which runs the public checks) has no pytest.
_PLUGIN = ("_autograder_worker", "challenge", "params", "pytest_addoption", "worker")


def __getattr__(name: str) -> Any:
    if name in _PLUGIN:
        from autograder import pytest_plugin

        return getattr(pytest_plugin, name)
    raise AttributeError(f"module 'autograder.graders' has no attribute {name!r}")


__all__ = [  # and the fixtures of _PLUGIN
    "ProbeCaller",
    "RaisesCase",
    "References",
    "StepMismatch",
    "call",
    "call_once",
    "check_equal",
    "check_structure",
    "clean",
    "close",
    "describe",
    "fail",
    "filled",
    "fmt_shape",
    "fmt_values",
    "judge_equal",
    "judge_layers",
    "judge_refusals",
    "judge_structure",
    "mix_valid",
    "note",
    "points",
    "pools",
    "raised_as",
    "raised_name",
    "read_back",
    "require_array",
    "require_close",
    "require_raised",
    "returned_per_step",
    "scalar_type",
    "tolerance",
]
