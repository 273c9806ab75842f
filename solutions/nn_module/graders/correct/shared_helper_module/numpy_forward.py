"""Correct variant: standardization from a shared helper module, matmul via np.matmul and np.maximum."""
import numpy as np

from nnutil import standardize


def linear(x, W, b):
    return np.matmul(x, np.transpose(W)) + b


def delivery_forward(state, x):
    h = standardize(x, state["x_mean"], state["x_std"])
    for i in (0, 3):
        h = np.maximum(0, linear(h, state[f"hidden.{i}.weight"], state[f"hidden.{i}.bias"]))
    y = linear(h, state["head.weight"], state["head.bias"])
    return y[..., 0]
