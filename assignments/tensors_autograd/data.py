"""Given data for the tensors_autograd assignment: the lesson's y = 2x line, a toy set, TinyNet."""

import torch
from torch import nn


def make_line(n=4):
    """Return `(X, Y)`: the lesson's `y = 2x` data, float32, `X = [1., 2., ..., n]`, `Y = 2 * X`."""
    X = torch.arange(1, n + 1, dtype=torch.float32)
    Y = 2 * X
    return X, Y


def make_toy(n=100, seed=0):
    """Return `(X, y)`: `X` is `(n, 3)` float32 noise, `y` is 1 where the row sum is positive.

    Seeds the global RNG with `torch.manual_seed(seed)`; `y` is `long` (class 0 or 1).
    """
    torch.manual_seed(seed)
    X = torch.randn(n, 3)
    y = (X.sum(dim=1) > 0).long()
    return X, y


class TinyNet(nn.Module):
    """The lesson's TinyNet: `fc1` (Linear), ReLU, `fc2` (Linear)."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        x = self.relu(self.fc1(x))
        x = self.fc2(x)
        return x
