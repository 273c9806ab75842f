"""Task `numpy_forward`: the DeliveryMLP forward pass from its state_dict, in NumPy only."""

import numpy as np


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return what `nn.Linear` computes: `y = x @ W.T + b`.

    PyTorch stores `W` as `(out, in)`, so `x` of shape `(N, in)` gives `(N, out)`.
    Forgetting the transpose only "works" for square weights, and gives wrong numbers.
    """
    ### BEGIN SOLUTION
    return x @ W.T + b
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    z = (np.asarray(x) - state["x_mean"]) / state["x_std"]
    h = np.maximum(linear(z, state["hidden.0.weight"], state["hidden.0.bias"]), 0)
    h = np.maximum(linear(h, state["hidden.3.weight"], state["hidden.3.bias"]), 0)
    return linear(h, state["head.weight"], state["head.bias"])[..., 0]
    ### END SOLUTION
