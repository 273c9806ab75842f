"""Task `unit_rows`, written another way than the reference: a correct variant (full marks)."""

import torch


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Return `x` with each row divided by its Euclidean length."""
    return x * torch.rsqrt((x ** 2).sum(dim=1)).unsqueeze(1)
