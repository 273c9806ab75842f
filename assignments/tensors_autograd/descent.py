"""Task `descent`: gradient descent by hand with autograd, and what optimizer.step() does."""

import torch


def fit_line(
    X: torch.Tensor, Y: torch.Tensor, lr: float = 0.01, steps: int = 100
) -> tuple[float, list[float]]:
    """Fit `w` in `y = w*x` by gradient descent on `mean((w*X - Y)**2)`.

    `w` is a scalar tensor of X's dtype starting at `0.0` with `requires_grad=True`.
    Every step: compute the loss, `loss.backward()`, update `w <- w - lr * w.grad`
    inside `torch.no_grad()` (the update must not be recorded in the graph), then
    reset the gradient. Return `(final w as a float, [loss of every step as a float])`;
    each loss is the one computed before that step's update; `steps` losses in all.
    """
    raise NotImplementedError("descent: write fit_line")


def sgd_step(params: list[torch.Tensor], lr: float) -> None:
    """Do what `optimizer.step()` does for plain SGD, in place and without building a graph.

    For every tensor `p` in `params` whose `.grad` is not `None`: `p <- p - lr * p.grad`.
    Parameters with no gradient are left alone. The tensors stay the same objects
    (leaves with `requires_grad=True`). Return `None`.
    """
    raise NotImplementedError("descent: write sgd_step")
