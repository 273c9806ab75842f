"""Grading-process helpers: call a probe (turning the student's exceptions into feedback), inputs."""

from __future__ import annotations

import re
from typing import Any, NoReturn

import numpy as np

from autograder.checks import StudentCodeError, TaskSession, fail

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _clean(text: str, limit: int = 300) -> str:
    """A student's exception message, without memory addresses (feedback must be repeatable)."""
    text = _ADDRESS.sub("", _ANSI.sub("", text)).strip()
    return text if len(text) <= limit else text[:limit] + "..."


def error_params(err: StudentCodeError, call: str) -> dict[str, str]:
    where = f" (at {err.where})" if err.where else ""
    return {"call": call, "type": err.type_name, "message": _clean(err.message), "where": where}


def student_error(err: StudentCodeError, call: str, hints: dict[str, str] | None = None) -> NoReturn:
    """Fail the check because the student's code raised; the message says which call and why."""
    params = error_params(err, call)
    if err.type_name == "NotImplementedError":
        fail("common.not_implemented", **params)
    if err.probe == "import":
        fail("common.import_error", **params)
    for needle, key in (hints or {}).items():
        if needle in err.message or needle == err.type_name:
            fail(key, **params)
    fail("common.raised", **params)


def call(worker: TaskSession, probe: str, what: str, hints: dict[str, str] | None = None,
         **kwargs: Any) -> Any:
    """worker.call, but a StudentCodeError becomes a failed check with a helpful message."""
    try:
        return worker.call(probe, **kwargs)
    except StudentCodeError as err:
        student_error(err, what, hints)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def linear_state(seed: int, sizes: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """float32 weights of fc1/fc2 (nn.Linear-like init) for the grader's TinyNet of `sizes`."""
    gen = rng(seed)
    i, h, o = sizes
    state = {}
    for name, fan_in, fan_out in (("fc1", i, h), ("fc2", h, o)):
        bound = 1.0 / np.sqrt(fan_in)
        state[f"{name}.weight"] = gen.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        state[f"{name}.bias"] = gen.uniform(-bound, bound, (fan_out,)).astype(np.float32)
    return state


def toy_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """data.make_toy(n, seed) recomputed here: X (n, 3) float32, y (n,) int64."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=gen)
    y = (X.sum(dim=1) > 0).long()
    return X.numpy().copy(), y.numpy().copy()


def line_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """data.make_line(n): X = [1, ..., n], Y = 2 X, float32."""
    X = np.arange(1, n + 1, dtype=np.float32)
    return X, 2 * X


def scalar_type(obs: dict[str, Any], want: str = "float") -> str | None:
    """Why a returned scalar is not exactly `want` (None: it is), for the feedback."""
    if obs["type"] == want:
        return None
    held = obs.get("as_float")
    return obs["type"] + (f" holding {held:.6g}" if isinstance(held, float) else "")


def short(values: Any, n: int = 5) -> str:
    vals = list(values)
    return "[" + ", ".join(f"{float(v):.6g}" for v in vals[:n]) + (", ...]" if len(vals) > n else "]")
