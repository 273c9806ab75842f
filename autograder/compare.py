"""Grading side: numeric and array comparison of observations, with a report of the differences."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.checks import fail

# Default tolerances by dtype, relative to max(1, |expected|): what rounding alone explains.
TOLERANCES = {"float64": 1e-12, "float32": 1e-5, "float16": 1e-3, "bfloat16": 1e-2}


def tolerance(dtype: Any, default: float = 1e-5) -> float:
    """The tolerance for values of `dtype` (a name like "float32", a NumPy dtype or a torch dtype)."""
    name = str(dtype).replace("torch.", "")
    if name in TOLERANCES:
        return TOLERANCES[name]
    try:
        return TOLERANCES.get(np.dtype(name).name, default)
    except TypeError:
        return default


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def fmt_shape(shape: Any) -> str:
    """(3,) style, as PyTorch and NumPy print shapes."""
    dims = [int(d) for d in shape]
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def fmt_values(values: Any, limit: int = 6) -> str:
    flat = np.asarray(values, dtype=np.float64).ravel()
    shown = ", ".join(_fmt(v) for v in flat[:limit])
    return "[" + shown + (", ..." if flat.size > limit else "") + "]"


def errors(got: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    """Largest absolute and relative error and where the worst one is (same shapes assumed)."""
    got64 = np.asarray(got, dtype=np.float64)
    want64 = np.asarray(want, dtype=np.float64)
    diff = np.abs(got64 - want64)
    scaled = diff / np.maximum(1.0, np.abs(want64))
    if diff.size == 0:
        return {"abs": 0.0, "rel": 0.0, "scaled": 0.0, "index": "()", "got": "-", "want": "-"}
    worst = np.unravel_index(int(np.argmax(scaled)), diff.shape)
    rel = diff / np.where(want64 == 0, 1.0, np.abs(want64))
    return {
        "abs": float(diff.max()),
        "rel": float(rel.max()),
        "scaled": float(scaled.max()),
        "index": fmt_shape(worst),  # (0,) as Python writes a one-element index
        "got": _fmt(float(got64[worst])),
        "want": _fmt(float(want64[worst])),
    }


def close(got: np.ndarray, want: np.ndarray, tol: float | None = None) -> bool:
    """|got - want| <= tol * max(1, |want|) everywhere: absolute near zero, relative for big values.

    Without `tol`, the tolerance of the expected values' dtype (TOLERANCES).
    """
    limit = tolerance(np.asarray(want).dtype) if tol is None else tol
    return bool(errors(got, want)["scaled"] <= limit)


def describe(got: np.ndarray, want: np.ndarray) -> str:
    """'max abs error 3e-03, max rel error 2e-03; worst at index (4, 0) (got 1.2, expected 1.203)'."""
    e = errors(got, want)
    return (
        f"max abs error {e['abs']:.3g}, max rel error {e['rel']:.3g}; worst at index {e['index']} "
        f"(got {e['got']}, expected {e['want']})"
    )


def array_problem(obs: Any, shape: tuple[int, ...] | None, types: tuple[str, ...] = ("Tensor",),
                  dtype: str | None = None) -> tuple[str, dict[str, str]] | None:
    """What is wrong with an observed array before values are compared: type, shape, dtype, NaN."""
    if type(obs) is not dict or obs.get("type") not in types:
        got = obs.get("type") if type(obs) is dict else type(obs).__name__
        return "type", {"got_type": str(got), "want_type": " or ".join(types)}
    if shape is not None and tuple(obs.get("shape", ())) != tuple(shape):
        return "shape", {"got_shape": fmt_shape(obs.get("shape", ())), "want_shape": fmt_shape(shape)}
    if dtype is not None and obs.get("dtype") != dtype:
        return "dtype", {"got_dtype": str(obs.get("dtype")), "want_dtype": dtype}
    values = obs.get("values")
    if values is None or values.dtype.kind not in "fiub":
        return "dtype", {"got_dtype": str(obs.get("dtype")), "want_dtype": dtype or "a float dtype"}
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        bad = np.argwhere(~np.isfinite(values))[0]
        return "finite", {"where": fmt_shape(bad)}
    return None


def require_array(obs: Any, call: str, shape: tuple[int, ...] | None, *,
                  types: tuple[str, ...] = ("Tensor",), dtype: str | None = None,
                  keys: dict[str, str] | None = None) -> np.ndarray:
    """The observed values, or fail with a type/shape/dtype/finite message (keys can be overridden)."""
    problem = array_problem(obs, shape, types, dtype)
    if problem is None:
        return obs["values"]  # type: ignore[no-any-return]
    kind, params = problem
    key = (keys or {}).get(kind, f"common.wrong_{kind}")
    fail(key, call=call, **params)


def require_close(got: np.ndarray, want: np.ndarray, key: str, tol: float | None = None,
                  **params: Any) -> None:
    """Fail with message `key` (its {report} says how far off and where) unless close(got, want)."""
    if not close(got, want, tol):
        fail(key, report=describe(got, want), **params)
