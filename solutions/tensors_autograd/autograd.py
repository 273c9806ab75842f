"""Task `autograd`: the lesson's y = 2x gradient, by autograd and by the hand formula."""

import numpy as np
import torch


def autograd_grad(X: torch.Tensor, Y: torch.Tensor, w: float) -> float:
    """Return d/dw of `mean((w*X - Y)**2)` at the float `w`, computed by autograd.

    Make `w` a scalar tensor of X's dtype with `requires_grad=True`, compute the
    loss, and let a backward pass give its gradient (`loss.backward()` then
    `w.grad`, or `torch.autograd.grad`). `X`, `Y` are 1-D float tensors of one
    dtype. Return a plain Python `float` (`.item()`).
    """
    ### BEGIN SOLUTION
    wt = torch.tensor(w, dtype=X.dtype, requires_grad=True)
    loss = ((wt * X - Y) ** 2).mean()
    loss.backward()
    return wt.grad.item()
    ### END SOLUTION


def manual_grad(X: np.ndarray, Y: np.ndarray, w: float) -> float:
    """Return the same derivative from the hand formula `mean(2*(w*X - Y)*X)`, in NumPy.

    `X`, `Y` are 1-D NumPy arrays. Return a plain Python `float` (not `np.float64`).
    """
    ### BEGIN SOLUTION
    return float(np.mean(2 * (w * X - Y) * X))
    ### END SOLUTION
