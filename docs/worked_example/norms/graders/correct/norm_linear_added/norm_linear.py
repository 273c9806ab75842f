"""Task `norm_linear`, written another way than the reference: a correct variant (full marks)."""

import torch
from torch import nn
from torch.nn import functional as F


class NormLinear(nn.Module):
    """An nn.Linear named `fc`, its output rows scaled to length 1."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.fc(x), dim=1)
