"""A student's own helper module, imported by numpy_forward.py (the kit allows extra files)."""
import numpy as np


def relu(a):
    return np.where(a > 0, a, 0).astype(a.dtype, copy=False)


def dense(x, W, b):
    return x.dot(W.T) + b


LAYERS = (("hidden.0", True), ("hidden.3", True), ("head", False))
