"""Task `containers`: nn.ModuleList and nn.ModuleDict, so that every layer is registered."""

from itertools import pairwise

import torch
from torch import nn


class FixedMLP(nn.Module):
    """An MLP whose depth comes from a list of sizes, e.g. `FixedMLP([3, 16, 8, 1])`.

    The trap: a plain Python list of layers is invisible to PyTorch (no
    parameters, nothing in `state_dict`, nothing for the optimizer), yet forward
    still runs. Hold the layers in an `nn.ModuleList` instead.
    """

    def __init__(self, sizes: list[int]) -> None:
        """Create one `nn.Linear(a, b)` per consecutive pair of `sizes`, in `self.layers`.

        `self.layers` must be an `nn.ModuleList`, so the `state_dict` keys are
        `layers.0.weight, layers.0.bias, layers.1.weight, ...`.
        """
        super().__init__()
        ### BEGIN SOLUTION
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(sizes))
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the layers in order with a ReLU between layers but not after the last one."""
        ### BEGIN SOLUTION
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < last:
                x = torch.relu(x)
        return x
        ### END SOLUTION


class TwoHead(nn.Module):
    """One shared body and two named output heads (115 parameters).

    The body turns an order `(N, 3)` into 16 features; the head `"time"` predicts
    minutes `(N, 1)` and the head `"late"` gives two class scores `(N, 2)`.
    """

    def __init__(self) -> None:
        """Create `self.body` and `self.heads`.

        - `self.body = nn.Sequential(nn.Linear(3, 16), nn.ReLU())`
        - `self.heads = nn.ModuleDict({"time": nn.Linear(16, 1), "late": nn.Linear(16, 2)})`
        A plain dict would hide the heads from PyTorch; `nn.ModuleDict` registers
        them as `heads.time.*` and `heads.late.*`.
        """
        super().__init__()
        ### BEGIN SOLUTION
        self.body = nn.Sequential(nn.Linear(3, 16), nn.ReLU())
        self.heads = nn.ModuleDict({"time": nn.Linear(16, 1), "late": nn.Linear(16, 2)})
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Return `{"time": (N, 1) tensor, "late": (N, 2) tensor}`: each head applied to `body(x)`.

        Pick the heads by name from `self.heads`.
        """
        ### BEGIN SOLUTION
        features = self.body(x)
        return {name: head(features) for name, head in self.heads.items()}
        ### END SOLUTION
