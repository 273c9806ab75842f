"""Task `norm_linear`: a linear layer whose outputs are unit rows."""

import torch
from torch import nn
from unit_rows import unit_rows


class NormLinear(nn.Module):
    """An nn.Linear(in_features, out_features) named `fc`, its output rows scaled by `unit_rows`."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        ### BEGIN SOLUTION
        self.fc = nn.Linear(in_features, out_features)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """unit_rows(fc(x))."""
        ### BEGIN SOLUTION
        return unit_rows(self.fc(x))
        ### END SOLUTION
