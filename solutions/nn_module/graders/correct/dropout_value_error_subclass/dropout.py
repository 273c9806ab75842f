"""Correct variant: a ValueError subclass, a keep mask drawn as `< 1 - p` for any shape, and eval
returning h itself (PyTorch's nn.Dropout does the same in eval mode)."""

import numpy as np


class ProbabilityError(ValueError):
    pass


class Dropout:
    def __init__(self, p, rng):
        if not (0.0 <= p <= 1.0):
            raise ProbabilityError(f"p={p} is not a probability")
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
        if not self.training:
            return h
        if self.p == 0:
            return np.array(h, copy=True)
        if self.p == 1:
            return np.zeros(np.shape(h))
        keep = self.rng.random(np.shape(h)) < 1 - self.p
        return h * keep / (1 - self.p)
