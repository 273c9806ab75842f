"""Public checks of task device: pick_device follows torch.cuda.is_available(); to_device on meta."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points
from autograder.probe_calls import call

from ..support import rng


def check_pick(worker, available: bool) -> None:
    want = "cuda" if available else "cpu"
    what = f"pick_device() while torch.cuda.is_available() is {available}"
    obs = call(worker, "pick_device", what, available=available)
    if obs["device_type"] is None:
        fail("device.not_a_device", call=what, got=obs["repr"], got_type=obs["type"])
    if obs["device_type"] != want:
        fail("device.pick", call=what, got=obs["device_type"], want=want)


def data(seed: int, n: int = 6, x_dtype=np.float32):
    gen = rng(seed)
    return gen.normal(size=(n, 3)).astype(x_dtype), gen.integers(0, 2, n).astype(np.int64)


def check_to_device(worker, X: np.ndarray, y: np.ndarray, as_object: bool = False) -> dict:
    device = 'torch.device("meta")' if as_object else '"meta"'
    what = f"to_device(model, X, y, {device})"
    obs = call(worker, "to_device", what, {"meta": "device.meta_error"}, X=X, y=y, as_object=as_object)
    if obs["len"] != 3:
        fail("device.triple", call=what, got_type=obs["type"], got_len=obs["len"])
    if "params" not in obs:
        fail("device.model_type", call=what, got_type=obs["model_type"])
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
    return obs


@points(2)
def test_pick_cpu(worker, params):
    """pick_device() gives "cpu" when torch.cuda.is_available() is False"""
    check_pick(worker, False)


@points(2)
def test_pick_cuda(worker, params):
    """pick_device() gives "cuda" when torch.cuda.is_available() is True (the grader pretends a GPU)"""
    check_pick(worker, True)


@points(3)
def test_to_meta(worker, params):
    """to_device(model, X, y, "meta") puts every parameter, buffer, X and y on the meta device"""
    X, y = data(1)
    check_to_device(worker, X, y)
