"""Hidden checks of task device: dtypes and shapes kept, a torch.device argument, model(X) runs."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points
from autograder.compare import fmt_shape

from ..public.test_device import check_to_device, data


@points(3)
def test_dtypes_shapes_kept(worker, params, challenge):
    """to_device keeps X's and y's dtype and shape (float64 and float32 X, int64 y); model(X) runs"""
    gen = challenge.rng("data")
    for dtype, as_object in ((np.float64, False), (np.float32, True)):
        sizes, X, y = data(gen, dtype)
        obs = check_to_device(worker, sizes, X, y, as_object)
        what = "to_device(model, X, y, " + ('torch.device("meta"))' if as_object else '"meta")')
        for name, arr in (("X", X), ("y", y)):
            t = obs[name]
            if t["dtype"] != arr.dtype.name:
                fail("device.dtype", call=what, name=name, got_dtype=t["dtype"], want_dtype=arr.dtype.name)
            if tuple(t["shape"]) != arr.shape:
                fail("device.shape", call=what, name=name, got_shape=fmt_shape(t["shape"]),
                     want_shape=fmt_shape(arr.shape))
        run = obs["model_call"]
        if dtype is np.float32 and (run is None or "error" in run):
            err = run["error"] if run else {"type": "?", "message": "no model or X returned"}
            fail("device.model_call", call=what, type=err["type"], message=err["message"][:200])
        if dtype is np.float32 and run["shape"] != [X.shape[0], sizes[2]]:
            fail("device.shape", call=what + " then model(X)", name="model(X)",
                 got_shape=fmt_shape(run["shape"]), want_shape=fmt_shape((X.shape[0], sizes[2])))
