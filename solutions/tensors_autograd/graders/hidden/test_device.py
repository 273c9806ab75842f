"""Hidden checks of task device: dtypes and shapes kept, a torch.device argument, model(X) runs."""

from __future__ import annotations

from autograder.graders import fail, fmt_shape, points

from ..public.test_device import device_runs, to_device


@points(3)
def test_dtypes_shapes_kept(worker, params, challenge):
    """to_device keeps X's and y's dtype and shape (float64 and float32 X, int64 y)

    With a string and a torch.device (to_meta's runs); where the tensors end up is to_meta's business."""
    for sizes, X, y, as_object in device_runs(challenge):
        obs, what = to_device(worker, sizes, X, y, as_object)
        for name, arr in (("X", X), ("y", y)):
            t = obs[name]
            if t["dtype"] != arr.dtype.name:
                fail("device.dtype", call=what, name=name, got_dtype=t["dtype"], want_dtype=arr.dtype.name)
            if tuple(t["shape"]) != arr.shape:
                fail("device.shape", call=what, name=name, got_shape=fmt_shape(t["shape"]),
                     want_shape=fmt_shape(arr.shape))
