"""Correct variant: losses by float(loss), accuracy by int / int, another TUNED."""

import torch
from torch import nn


def train(model: nn.Module, X: torch.Tensor, y: torch.Tensor, epochs: int, lr: float) -> list[float]:
    """Train `model` full-batch with the lesson's five-step loop; return every epoch's loss.

    Use `torch.optim.Adam(model.parameters(), lr=lr)` and `nn.CrossEntropyLoss()`.
    Every epoch: 1) `optimizer.zero_grad()` 2) `logits = model(X)` 3) the loss
    4) `loss.backward()` 5) `optimizer.step()`. Return `epochs` Python floats
    (`loss.item()`), not tensors.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        logits = model(X)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))  # float() of a one-element tensor, like loss.item()
    return losses


def accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Return the fraction of rows where `model(X).argmax(1) == y`, as a Python float.

    Compute it in eval mode (`model.eval()`: dropout off) and without a graph
    (`torch.no_grad()`). You may leave the model in eval mode.
    """
    model.eval()
    with torch.no_grad():
        pred = model(X).argmax(1)
    return int((pred == y).sum()) / len(y)  # a Python float from int / int


def tuned_values() -> dict:
    """Return the lesson's exercise 1 answer: `{"hidden": ..., "epochs": ..., "lr": ...}`.

    `TinyNet(3, hidden, 2)`, seeded with `torch.manual_seed(0)` before it is built and
    trained with the five-step loop (as `train` does) on `make_toy()` for `epochs`
    epochs at `lr`, must reach accuracy > 0.9, with `epochs <= 300`. The graders read
    the module's `TUNED` (below), which is this function's result; you may also set
    `TUNED` to your dict directly.
    """
    return {"hidden": 16, "epochs": 150, "lr": 0.05}


try:
    TUNED = tuned_values()
except NotImplementedError:  # the stub: write tuned_values() (or set TUNED yourself)
    TUNED = None
