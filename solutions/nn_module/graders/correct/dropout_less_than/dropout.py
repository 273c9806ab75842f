"""Correct variant: keep where rng.random(shape) < 1 - p, scatter survivors into zeros."""
import numpy as np


class Dropout:
    def __init__(self, p, rng):
        if p < 0 or p > 1 or p != p:
            raise ValueError("p must satisfy 0 <= p <= 1")
        self.p, self.rng, self.training = p, rng, True

    def train(self):
        self.training = True
        return self

    def eval(self):
        self.training = False
        return self

    def __call__(self, h):
        if not self.training:
            return h
        keep = self.rng.random(np.shape(h)) < 1 - self.p
        out = np.zeros_like(h)
        out[keep] = h[keep] * (1.0 / (1 - self.p)) if self.p < 1 else 0
        return out
