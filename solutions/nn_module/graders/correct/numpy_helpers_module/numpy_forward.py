"""Correct variant: helpers in a separate module, x.dot(W.T), a loop over the layers, ravel()."""
from helpers import LAYERS, dense, relu


def linear(x, W, b):
    return dense(x, W, b)


def delivery_forward(state, x):
    h = (x - state["x_mean"]) / state["x_std"]
    for prefix, activate in LAYERS:
        h = linear(h, state[prefix + ".weight"], state[prefix + ".bias"])
        if activate:
            h = relu(h)
    return h.ravel()
