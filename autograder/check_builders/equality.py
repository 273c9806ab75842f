"""A function or module equal to the reference on hidden inputs, at the dtype's tolerance.

The author's check draws the inputs (a hypothesis strategy under `@given`: the engine seeds it from
the graders' secret, so the inputs are hidden, and prints the shrunk counterexample under the
feedback) and computes what the reference gives; `check_equal` runs the probe on them and judges
the type, shape and dtype the contract names, then the values:

    @points(4)
    @given(x=arrays(np.float64, st.integers(1, 6), elements=st.floats(-10, 10)))
    def test_random_inputs(worker, x):
        \"\"\"gamma equals the reference on random float64 inputs\"\"\"
        check_equal(worker, "gamma", "gamma(x)", _ref.module("gamma").gamma(x), kind="ndarray", x=x)

The probe returns the describer of what the student's code gave (`tensor`, `array` or `scalar`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.checks import fail
from autograder.compare import close, describe, require_array, tolerance
from autograder.errors import ConfigError
from autograder.probe_calls import call, scalar_type

KINDS = {"tensor": "Tensor", "ndarray": "ndarray", "float": "float", "int": "int"}


def judge_equal(obs: Any, what: str, want: Any, *, kind: str = "tensor", tol: float | None = None,
                dtype: str | None = None, keys: dict[str, str] | None = None) -> None:
    """Fail unless the observation `obs` (a describer's) is a `kind` holding `want`'s values: for an
    array kind of `want`'s shape and of `dtype` (by default `want`'s), within `tol` (by default that
    dtype's tolerance, relative to max(1, |want|)); for "float" and "int" exactly that Python type.
    `keys` replaces a message: "values" (gets {call}, {error}, {tol}, {dtype}) and those of
    `require_array` ("type", "shape", "dtype", "finite")."""
    if kind not in KINDS:
        raise ConfigError(f"check_equal: kind {kind!r} is not one of {sorted(KINDS)}")
    keys = keys or {}
    if kind in ("float", "int"):
        bad = scalar_type(obs, kind)
        if bad:
            fail(keys.get("type", "common.wrong_type"), call=what, got_type=bad, want_type=kind)
        got, wanted = np.asarray(float(obs["value"])), np.asarray(float(want))
        dtype = "float64"
    else:
        wanted = np.asarray(want)
        dtype = dtype or wanted.dtype.name
        got = require_array(obs, what, tuple(wanted.shape), types=(KINDS[kind],), dtype=dtype, keys=keys)
    limit = tolerance(dtype) if tol is None else tol
    if not close(got, wanted, limit):
        fail(keys.get("values", "equality.values"), call=what, error=describe(got, wanted),
             tol=f"{limit:g}", dtype=dtype)


def check_equal(worker: Any, probe: str, what: str, want: Any, *, kind: str = "tensor",
                tol: float | None = None, dtype: str | None = None, keys: dict[str, str] | None = None,
                hints: dict[str, str] | None = None, **inputs: Any) -> None:
    """Run `probe` on `inputs` (a student's exception becomes the common.* messages, see `call`) and
    judge its answer against `want`, what the reference gives on the same inputs (`judge_equal`)."""
    obs = call(worker, probe, what, hints, **inputs)
    judge_equal(obs, what, want, kind=kind, tol=tol, dtype=dtype, keys=keys)


__all__ = ["check_equal", "judge_equal"]
