"""Correct variant: Sequential(OrderedDict) keyed "0".."4", inference_mode, squeeze(1)."""
from collections import OrderedDict

import torch
from torch import nn


class DeliveryMLP(nn.Module):
    def __init__(self, x_mean, x_std, p_drop=0.1):
        super().__init__()
        self.register_buffer("x_mean", x_mean)
        self.register_buffer("x_std", x_std)
        self.hidden = nn.Sequential(OrderedDict([
            ("0", nn.Linear(3, 16)),
            ("1", nn.ReLU()),
            ("2", nn.Dropout(p=p_drop)),
            ("3", nn.Linear(16, 8)),
            ("4", nn.ReLU()),
        ]))
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        z = (x - self.x_mean) / self.x_std
        out = self.head(self.hidden(z))
        return out.squeeze(1)


def predict(model, x):
    model.eval()
    with torch.inference_mode():
        return model(x)
