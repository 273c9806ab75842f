"""Correct variant: rng.binomial mask, np.where, an explicit p == 1 branch."""
import numpy as np


class Dropout:
    def __init__(self, p, rng):
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = p
        self.rng = rng
        self.training = True

    def train(self):
        self.training = True
        return self

    def eval(self):
        self.training = False
        return self

    def __call__(self, h):
        h = np.asarray(h)
        if not self.training or self.p == 0:
            return h.copy()
        if self.p == 1:
            return np.zeros_like(h)
        keep = self.rng.binomial(1, 1.0 - self.p, size=h.shape).astype(bool)
        return np.where(keep, h / (1.0 - self.p), 0.0).astype(h.dtype, copy=False)
