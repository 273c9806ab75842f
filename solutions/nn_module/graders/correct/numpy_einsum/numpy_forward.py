"""Correct variant: np.einsum for the matmul, np.maximum for ReLU, reshape(-1) at the end."""
import numpy as np


def linear(x, W, b):
    return np.einsum("...i,oi->...o", x, W) + b


def delivery_forward(state, x):
    z = (x - state["x_mean"]) / state["x_std"]
    h = np.maximum(linear(z, state["hidden.0.weight"], state["hidden.0.bias"]), 0)
    h = np.maximum(linear(h, state["hidden.3.weight"], state["hidden.3.bias"]), 0)
    return linear(h, state["head.weight"], state["head.bias"]).reshape(-1)
