"""Task `unit_rows`: each row of a tensor scaled to length 1."""

import torch


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Return `x` with each row divided by its Euclidean length (x of shape (N, D), no zero row).

    Example: `unit_rows(torch.tensor([[3.0, 4.0]]))` is `tensor([[0.6, 0.8]])`.
    """
    ### BEGIN SOLUTION
    return x / x.norm(dim=1, keepdim=True)
    ### END SOLUTION
