"""Grading-process helpers: call a probe (turning the student's exceptions into feedback), seeded inputs."""

from __future__ import annotations

import functools
import re
from typing import Any, NoReturn

import numpy as np

from autograder.checks import StudentCodeError, TaskSession, fail

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TMP_PATH = re.compile(r"[^\s'\"]*ckpt_[\w.-]+(/[\w.-]+)*")  # the probes' temporary folders


def _clean(text: str, limit: int = 300) -> str:
    """A student's exception message, without memory addresses (feedback must be repeatable)."""
    text = _TMP_PATH.sub("<path>", _ADDRESS.sub("", _ANSI.sub("", text))).strip()
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


# The exception types SPEC names, as probes._exc reports the classes of an exception (module.qualname).
QUALIFIED = {
    "RuntimeError": "builtins.RuntimeError",
    "ValueError": "builtins.ValueError",
    "UnpicklingError": "_pickle.UnpicklingError",  # pickle.UnpicklingError is _pickle's
}


def raised_error(raised: dict, call_text: str, hints: dict[str, str] | None = None) -> None:
    """A probe's caught exception (or None) judged as if it had escaped the probe: student_error."""
    if raised is not None:
        err = StudentCodeError("case", raised["type"], raised.get("message", ""))
        student_error(err, call_text, hints)


def raised_name(obs: Any) -> str:
    """How a probe's caught exception (or None) reads in feedback, with its chain when it has one."""
    if obs is None:
        return "no exception"
    shown, mro = obs["type"], obs.get("mro") or []
    if shown in QUALIFIED and mro and mro[0] != QUALIFIED[shown]:  # a look-alike of a named type
        shown = f"{mro[0]} (not {QUALIFIED[shown]})"
    text = f"{shown}: {_clean(obs['message'], 200)}"
    chain = obs.get("chain") or []
    if len(chain) > 1:
        text += f" (its chain: {' from '.join(chain)})"
    return text


def raised_as(obs: Any, name: str) -> bool:
    """The exception that reached the caller is a `name` (or a subclass of it).

    Only the outer exception counts: one caught and re-raised as another type (`raise X from err`)
    is not a `name` for the caller's `except name:`, even though `name` is in its chain."""
    if obs is None or "mro" not in obs:
        return False
    return QUALIFIED.get(name, name) in obs["mro"]


def require_raised(obs: Any, name: str, call_text: str, wrong_key: str, field: str = "raised",
                   **params: Any) -> None:
    """Fail unless the exception that reached the caller is a `name`: `wrong_key` (with `params`, and
    the exception in `field`) for another one, common.wrapped_error when `name` is only deeper in its
    chain (caught and re-raised as another type: the caller's `except name` would miss it)."""
    if raised_as(obs, name):
        return
    if obs is not None and name in (obs.get("chain") or [])[1:]:
        fail("common.wrapped_error", call=call_text, want=name, raised=raised_name(obs))
    fail(wrong_key, **{field: raised_name(obs)}, **params)


def load_problem(load: dict, allowed: tuple[str, ...] = ()) -> str | None:
    """Why the check's weights could not all be loaded into the student's model (None: all loaded)."""
    if load["error"]:
        return raised_name(load["error"])
    unexpected = [k for k in load["unexpected"] if k not in allowed]
    parts = [f"missing keys {load['missing']}"] if load["missing"] else []
    parts += [f"unexpected keys {unexpected} (no registered layer holds them)"] if unexpected else []
    return "; ".join(parts) or None


def fail_if_not_implemented(raised: Any, call_text: str) -> None:
    """A probe caught an exception that is a stub's NotImplementedError: no points for a stub."""
    if raised is not None and raised.get("type") == "NotImplementedError":
        fail("common.not_implemented", call=call_text, type="NotImplementedError",
             message=_clean(raised.get("message", "")), where="")


# ----------------------------------------------------------------------------- inputs


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def linear_init(gen: np.random.Generator, fan_in: int, fan_out: int, bias: bool = True,
                dtype: Any = np.float32) -> tuple[np.ndarray, np.ndarray | None]:
    """nn.Linear-like weights: U(-1/sqrt(in), 1/sqrt(in)), shape (out, in)."""
    bound = 1.0 / np.sqrt(fan_in)
    W = gen.uniform(-bound, bound, (fan_out, fan_in)).astype(dtype)
    b = gen.uniform(-bound, bound, (fan_out,)).astype(dtype) if bias else None
    return W, b


def mlp_state(seed: int, layers: list[tuple[str, int, int]], dtype: Any = np.float32,
              scale: float = 1.0) -> dict[str, np.ndarray]:
    """A state_dict (name -> array) of Linear layers `prefix: (in, out)`, from a fixed seed."""
    gen = rng(seed)
    state: dict[str, np.ndarray] = {}
    for prefix, fan_in, fan_out in layers:
        W, b = linear_init(gen, fan_in, fan_out, dtype=dtype)
        state[f"{prefix}.weight"] = (W * scale).astype(dtype)
        state[f"{prefix}.bias"] = (b * scale).astype(dtype)  # type: ignore[operator]
    return state


@functools.lru_cache(maxsize=4)
def toy_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """data.make_toy(n, seed) recomputed here: X (n, 3) float32, y (n,) int64."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=gen)
    y = (X.sum(dim=1) > 0).long()
    return X.numpy().copy(), y.numpy().copy()


def relu(a: np.ndarray) -> np.ndarray:
    return np.maximum(a, 0)
