"""Correct variant: fc2 (and the ReLU, named act) assigned before fc1."""

import torch
from torch import nn


class TinyNet(nn.Module):
    """A two-layer network: Linear -> ReLU -> Linear.

    nn.Module is a register: every layer you assign to `self` in `__init__` is
    recorded, so `parameters()`, `state_dict()` and the optimizer find it. The
    parameter names must be exactly `fc1.weight, fc1.bias, fc2.weight, fc2.bias`.
    """

    def __init__(self, in_features: int, hidden: int, out_features: int) -> None:
        """Create and register the layers.

        - `self.fc1 = nn.Linear(in_features, hidden)`; its weight has shape
          `(hidden, in_features)` because nn.Linear stores weights as (out, in).
        - a ReLU (for example `nn.ReLU()`; it has no parameters).
        - `self.fc2 = nn.Linear(hidden, out_features)`.
        `super().__init__()` must run before any layer is assigned (it is given).
        """
        super().__init__()
        # the output layer first: registration order is not part of the contract
        self.fc2 = nn.Linear(hidden, out_features)
        self.act = nn.ReLU()
        self.fc1 = nn.Linear(in_features, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return `fc2(relu(fc1(x)))`: `x` is `(N, in_features)`, the result `(N, out_features)`.

        The result holds raw scores (logits); no softmax, cross-entropy applies it.
        """
        return self.fc2(self.act(self.fc1(x)))


def train_tinynet(
    model: nn.Module, X: torch.Tensor, y: torch.Tensor, epochs: int = 100, lr: float = 0.05
) -> list[float]:
    """Train `model` full-batch on `(X, y)` and return the loss of every epoch.

    Use `torch.optim.Adam(model.parameters(), lr=lr)` and cross-entropy loss
    (`nn.CrossEntropyLoss()` or `nn.functional.cross_entropy`); `y` holds class ids
    (`long`, shape `(N,)`). Every epoch does the five steps, in this order:
    1. `optimizer.zero_grad()`  (otherwise gradients add up across epochs)
    2. forward: `logits = model(X)`  (call the model, not `model.forward`, so hooks run)
    3. `loss = loss_fn(logits, y)`
    4. `loss.backward()`
    5. `optimizer.step()`
    Return a list of `epochs` plain Python floats (`loss.item()`), not tensors.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        logits = model(X)
        loss = loss_fn(logits, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
