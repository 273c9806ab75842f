"""Task `numpy_forward`: the DeliveryMLP forward pass from its state_dict, in NumPy only."""

import numpy as np


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return what `nn.Linear` computes: `y = x @ W.T + b`.

    PyTorch stores `W` as `(out, in)`, so `x` of shape `(N, in)` gives `(N, out)`.
    Forgetting the transpose only "works" for square weights, and gives wrong numbers.
    """
    raise NotImplementedError("numpy_forward: write linear")


def delivery_forward(state: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Run DeliveryMLP in eval mode with NumPy only; return minutes of shape `(N,)`.

    `state` maps the DeliveryMLP `state_dict` keys (`x_mean, x_std, hidden.0.weight,
    hidden.0.bias, hidden.3.weight, hidden.3.bias, head.weight, head.bias`) to
    NumPy arrays; `x` is `(N, 3)`. Steps: `z = (x - x_mean) / x_std`, then
    `linear` + ReLU (`np.maximum(., 0)`) for `hidden.0` and `hidden.3`, then
    `linear` for `head`, and drop the last axis. Dropout does nothing in eval
    mode, so it has no line here. Keep the dtype of the inputs (float64 in,
    float64 out): in float64 the result matches PyTorch to about 1e-12.
    """
    raise NotImplementedError("numpy_forward: write delivery_forward")
