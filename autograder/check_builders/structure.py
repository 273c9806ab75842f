"""An nn.Module's structure, judged through the student's own registered layers on hidden values.

Names, shapes, counts and dtypes are public facts: a forged observation could state them. So every
structural check also has the probe fill each floating tensor the model registers with values from
a hidden pool (through the model's own state_dict keys) and run each registered nn.Linear alone on
hidden inputs (autograder.sandbox.inside.observe.hidden_run, worker side); here each output must be
x @ W.T + b of the very values that went into that layer (`judge_layers`). That run depends on the
layers' own computation and nothing else, so a slip in forward, or in a property another check
judges, never costs a structural check its points.

    # probes/beta.py (worker side)
    def beta_structure(mod, **hidden):
        return module_structure(mod.Beta(3, 4), **hidden)

    # public/test_beta.py
    @points(2)
    def test_parameters(worker, challenge):
        \"\"\"Beta(3, 4) registers fc.weight (4, 3) and fc.bias (4,)\"\"\"
        check_structure(worker, challenge, "beta_structure", "Beta(3, 4)",
                        shapes={"fc.weight": (4, 3), "fc.bias": (4,)})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from autograder.checks import fail
from autograder.compare import close, describe, fmt_shape, tolerance
from autograder.probe_calls import call_once, raised_name

POOL = 1031  # hidden values per pool (prime: a long model's tensors do not repeat in step)
XPOOL = 257  # hidden input values per pool


def pools(gen: np.random.Generator, float64: bool = False) -> dict[str, np.ndarray]:
    """A hidden run's inputs: `pool` (the values every registered tensor is filled with) and `xpool`
    (the inputs each nn.Linear is run on); float64 ones with digits float32 does not have (only a
    model really converted with .double() reproduces them to float64 precision)."""
    magnitudes = gen.uniform(0.25, 1.0, POOL) * gen.choice([-1.0, 1.0], POOL)  # never near 0 (a std)
    found = {"pool": magnitudes.astype(np.float32), "xpool": gen.normal(0, 1.5, XPOOL).astype(np.float32)}
    if float64:
        return {k: v.astype(np.float64) + gen.normal(0, 1e-9, v.shape) for k, v in found.items()}
    return found


def _slice(pool: np.ndarray, offset: int, shape: Sequence[int]) -> np.ndarray:
    """The worker's pool slice in the grading process: the next values of `pool`, cycling."""
    count = int(np.prod(shape)) if len(shape) else 1
    return pool[(offset + np.arange(count)) % len(pool)].astype(np.float64).reshape(tuple(shape))


def filled(pool: np.ndarray, entries: Sequence[Sequence[Any]]) -> dict[str, np.ndarray]:
    """What the hidden run put in each state_dict entry `[key, shape]`, in the order reported."""
    values, offset = {}, 0
    for key, shape in entries:
        values[str(key)] = _slice(pool, offset, shape)
        offset += int(np.prod(shape)) if len(shape) else 1
    return values


def judge_layers(run: Mapping[str, Any] | None, drawn: Mapping[str, np.ndarray], tol: float, what: str,
                 need: Sequence[str] = (), rows: int = 4) -> None:
    """Fail unless the hidden run shows every registered nn.Linear (at least one, and each of `need`)
    computing x @ W.T + b from the values filled into it."""
    if run is None:
        fail("structure.no_layers", call=what)
    if run["error"]:
        fail("common.challenge_load", names=what, detail=raised_name(run["error"]))
    values = filled(drawn["pool"], run["entries"])
    names = [layer["name"] for layer in run["layers"]]
    for name in need:
        if name not in names:
            fail("structure.missing_layer", call=what, layer=name, layers=", ".join(names) or "none")
    if not run["layers"]:
        fail("structure.no_layers", call=what)
    for layer in run["layers"]:
        name = layer["name"]
        prefix = f"{name}." if name else ""
        shown = name or "model"
        call_text = f"{what}.{name}(x)" if name else f"{what}(x)"
        model = f"{shown}(x) == x @ {shown}.weight.T + {shown}.bias"
        if layer["raised"]:
            fail("common.challenge_raised", call=call_text, raised=raised_name(layer["raised"]))
        weight = values.get(f"{prefix}weight")
        bias = values.get(f"{prefix}bias") if layer["bias"] else None
        if weight is None or (layer["bias"] and bias is None):
            fail("common.challenge_load", names=what,
                 detail=f"{prefix}weight, {prefix}bias not in state_dict()")
        x = _slice(drawn["xpool"], 0, (rows, weight.shape[1]))
        want = x @ weight.T + (0.0 if bias is None else bias)
        out = layer["out"]
        got = out.get("values") if type(out) is dict else None
        if got is None or tuple(out.get("shape", ())) != want.shape:
            shape = fmt_shape(out.get("shape", ())) if type(out) is dict else "()"
            fail("common.challenge_values", call=call_text, model=model,
                 error=f"{out.get('type') if type(out) is dict else '?'} {shape} != {fmt_shape(want.shape)}")
        if not close(got.astype(np.float64), want, tol):
            fail("common.challenge_values", call=call_text, model=model,
                 error=describe(got.astype(np.float64), want))


def read_back(run: Mapping[str, Any], drawn: Mapping[str, np.ndarray], keys: Sequence[str],
              what: str) -> None:
    """Fail unless each state_dict entry of `keys` (a buffer, say) reads back what was loaded into it."""
    values = filled(drawn["pool"], run["entries"])
    for key in keys:
        buf = run["state_after"].get(key)
        got = buf.get("values") if type(buf) is dict else None
        want = values.get(key)
        if got is None or want is None or got.shape != want.shape or \
                not close(got.astype(np.float64), want, 0.0):
            fail("structure.buffer_read_back", call=what, name=key)


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items) or "none"


def judge_structure(obs: Mapping[str, Any], drawn: Mapping[str, np.ndarray], what: str, *,
                    names: Sequence[str] | None = None, shapes: Mapping[str, Sequence[int]] | None = None,
                    count: int | None = None, dtype: str | None = None,
                    buffers: Sequence[str] | None = None, need: Sequence[str] = ()) -> None:
    """Fail unless `obs` (observe.module_structure) shows the property asked for (each argument given is
    one: the parameters' `names` in order, their `shapes` by name, their total `count`, every
    parameter's and buffer's `dtype`, the `buffers`' names) and its hidden run shows the registered
    layers computing with the hidden values (and the named buffers reading them back)."""
    if not obs.get("is_module"):
        fail("structure.not_module", call=what, got_type=obs.get("model_type", "?"))
    got_names = [p[0] for p in obs["parameters"]]
    if names is not None and got_names != list(names):
        fail("structure.parameter_names", call=what, got=_listed(got_names), want=_listed(list(names)))
    if shapes is not None:
        got_shapes = {p[0]: tuple(p[1]) for p in obs["parameters"]}
        for name, want in shapes.items():
            if name not in got_shapes:
                fail("structure.parameter_names", call=what, got=_listed(got_names),
                     want=_listed(list(shapes)))
            if got_shapes[name] != tuple(want):
                fail("structure.parameter_shape", call=what, name=name, got_shape=fmt_shape(got_shapes[name]),
                     want_shape=fmt_shape(tuple(want)))
    if count is not None and obs["count"] != count:
        fail("structure.parameter_count", call=what, got=obs["count"], want=count)
    got_buffers = [b[0] for b in obs["buffers"]]
    if buffers is not None and sorted(got_buffers) != sorted(buffers):
        fail("structure.buffer_names", call=what, got=_listed(got_buffers), want=_listed(list(buffers)))
    if dtype is not None:
        for name, _, got_dtype, *_ in [*obs["parameters"], *obs["buffers"]]:
            if got_dtype != dtype:
                fail("structure.dtype", call=what, name=name, got_dtype=got_dtype, want_dtype=dtype)
    precision = "float64" if dtype == "float64" else "float32"
    judge_layers(obs["run"], drawn, tolerance(precision), what, need)
    if buffers:
        read_back(obs["run"], drawn, [b for b in buffers if b in got_buffers], what)


def check_structure(worker: Any, challenge: Any, probe: str, what: str, *,
                    hints: Mapping[str, str] | None = None, names: Sequence[str] | None = None,
                    shapes: Mapping[str, Sequence[int]] | None = None, count: int | None = None,
                    dtype: str | None = None, buffers: Sequence[str] | None = None,
                    need: Sequence[str] = (), **inputs: Any) -> None:
    """One structural check: run `probe` (which returns observe.module_structure of the model `what`
    names, built from `inputs`) once per task on hidden pools drawn from the check's secret, and judge
    it (`judge_structure`). The checks of one model share the run; each judges its own property."""
    drawn = pools(challenge.shared(f"structure {probe} {what}").rng(), float64=dtype == "float64")
    obs = call_once(worker, probe, what, dict(hints or {}), **inputs, **drawn)
    judge_structure(obs, drawn, what, names=names, shapes=shapes, count=count, dtype=dtype,
                    buffers=buffers, need=need)


__all__ = [
    "POOL", "XPOOL", "check_structure", "filled", "judge_layers", "judge_structure", "pools", "read_back",
]
