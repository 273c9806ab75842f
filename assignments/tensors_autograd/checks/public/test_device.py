"""Public checks of task device: pick_device follows torch.cuda.is_available(); to_device on meta."""

from __future__ import annotations

import numpy as np

from autograder.graders import call, call_once, fail, fmt_shape, points


def pattern(gen: np.random.Generator) -> list[bool]:
    """A hidden sequence of answers of torch.cuda.is_available(), both answers in it: pick_device() is
    called once under each, so only a function that asks at every call gives the matching devices."""
    while True:
        found = [bool(v) for v in gen.random(int(gen.integers(12, 21))) < 0.5]
        if 4 <= sum(found) <= len(found) - 4:
            return found


def check_pick(worker, available: bool, answers: list[bool]) -> None:
    """pick_device() under every answer of `answers`; judged where is_available() said `available`."""
    want = "cuda" if available else "cpu"
    what = f"pick_device() x{len(answers)}"
    obs = call(worker, "device_pick", what, pattern=answers)
    if len(obs["calls"]) != len(answers):
        fail("device.pick", call=what, got=f"len(...) == {len(obs['calls'])}",
             want=f"len(...) == {len(answers)}")
    for k, (given, seen) in enumerate(zip(answers, obs["calls"], strict=True)):
        if given is not available:
            continue
        at = f"pick_device() (call {k + 1} of {len(answers)}) while torch.cuda.is_available() is {given}"
        if seen["device_type"] is None:
            fail("device.not_a_device", call=at, got=seen["repr"], got_type=seen["type"])
        if seen["device_type"] != want:
            fail("device.pick", call=at, got=seen["device_type"], want=want)


def data(gen: np.random.Generator, x_dtype=np.float32):
    """Hidden sizes (in, hidden, out) of the grader's model and hidden X (n, in), y (n,)."""
    sizes = [int(gen.integers(2, 8)), int(gen.integers(2, 10)), int(gen.integers(1, 6))]
    n = int(gen.integers(2, 12))
    return sizes, gen.normal(size=(n, sizes[0])).astype(x_dtype), gen.integers(0, 2, n).astype(np.int64)


def model_shapes(sizes: list[int]) -> dict[str, list[int]]:
    """The parameters of nn.Sequential(Linear(f, h), BatchNorm1d(h), ReLU(), Linear(h, o))."""
    f, h, o = sizes
    return {"0.weight": [h, f], "0.bias": [h], "1.weight": [h], "1.bias": [h],
            "3.weight": [o, h], "3.bias": [o]}


def _show(shapes: dict[str, list[int]]) -> str:
    return ", ".join(f"{k} {fmt_shape(v)}" for k, v in shapes.items()) or "none"


def to_device(worker, sizes: list[int], X: np.ndarray, y: np.ndarray, as_object: bool = False):
    """to_device's triple: the model the one given (its hidden sizes), X and y tensors."""
    device = 'torch.device("meta")' if as_object else '"meta"'
    what = f"to_device(model, X, y, {device})"
    obs = call_once(worker, "device_move", what, {"meta": "device.meta_error"}, X=X, y=y, sizes=sizes,
                    as_object=as_object)
    if obs["len"] != 3:
        fail("device.triple", call=what, got_type=obs["type"], got_len=obs["len"])
    if "params" not in obs:
        fail("device.model_type", call=what, got_type=obs["model_type"])
    want = model_shapes(sizes)
    if obs["param_shapes"] != want:
        fail("device.param_shapes", call=what, got=_show(obs["param_shapes"]), want=_show(want))
    for name in ("X", "y"):
        if obs[name]["type"] != "Tensor":
            fail("device.tensor_type", call=what, name=name, got_type=obs[name]["type"])
    return obs, what


def device_runs(challenge) -> list[tuple[list[int], np.ndarray, np.ndarray, bool]]:
    """The two runs of to_device that to_meta and dtypes_shapes_kept share: hidden sizes and data, a
    float32 X with the string "meta", a float64 X with torch.device("meta")."""
    gen = challenge.shared("device.runs").rng()
    return [(*data(gen, dtype), as_object) for dtype, as_object in ((np.float32, False), (np.float64, True))]


def check_to_device(worker, sizes: list[int], X: np.ndarray, y: np.ndarray, as_object: bool = False) -> dict:
    """Everything on meta; with a float32 X, model(X) runs there too; X and y of their shapes."""
    obs, what = to_device(worker, sizes, X, y, as_object)
    for kind in ("params", "buffers"):
        off = [f"{n} on {d}" for n, d in obs[kind].items() if d != "meta"]
        if off:
            fail(f"device.{kind}", call=what, off=", ".join(off))
    for name in ("X", "y"):
        t = obs[name]
        if t["type"] != "Tensor":
            fail("device.tensor_type", call=what, name=name, got_type=t["type"])
        if t["device"] != "meta":
            fail("device.tensor_not_moved", call=what, name=name, got=t["device"])
    for name, arr in (("X", X), ("y", y)):
        if tuple(obs[name]["shape"]) != arr.shape:
            fail("device.shape", call=what, name=name, got_shape=fmt_shape(obs[name]["shape"]),
                 want_shape=fmt_shape(arr.shape))
    run = obs["model_call"]
    if X.dtype != np.float32:  # the grader's model is float32: model(X) needs X's dtype to match
        return obs
    if run is None or "error" in run:
        err = run["error"] if run else {"type": "?", "message": "no model or X returned"}
        fail("device.model_call", call=what, type=err["type"], message=err["message"][:200])
    if run["shape"] != [X.shape[0], sizes[2]]:
        fail("device.shape", call=what + "; model(X)", name="model(X)",
             got_shape=fmt_shape(run["shape"]), want_shape=fmt_shape((X.shape[0], sizes[2])))
    return obs


@points(2)
def test_pick_cpu(worker, params, challenge):
    """pick_device() gives "cpu" when torch.cuda.is_available() is False (at each of hidden calls)"""
    check_pick(worker, False, pattern(challenge.rng("pattern")))


@points(2)
def test_pick_cuda(worker, params, challenge):
    """pick_device() gives "cuda" when torch.cuda.is_available() is True (the grader pretends a GPU)"""
    check_pick(worker, True, pattern(challenge.rng("pattern")))


@points(3)
def test_to_meta(worker, params, challenge):
    """to_device(model, X, y, "meta") puts every parameter, buffer, X and y on the meta device

    Also with torch.device("meta"); model(X) runs there. The model's sizes and X's rows are hidden:
    the shapes that come back must be theirs."""
    for sizes, X, y, as_object in device_runs(challenge):
        check_to_device(worker, sizes, X, y, as_object)
