"""Correct variant: layer sizes from a shared helper module; ModuleList built with append."""
import torch
from torch import nn

from nnutil import pairs


class FixedMLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList()
        for fan_in, fan_out in pairs(sizes):
            self.layers.append(nn.Linear(fan_in, fan_out))

    def forward(self, x):
        *body, last = self.layers
        for layer in body:
            x = torch.relu(layer(x))
        return last(x)


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 16), nn.ReLU())
        self.heads = nn.ModuleDict({"time": nn.Linear(16, 1), "late": nn.Linear(16, 2)})

    def forward(self, x):
        h = self.body(x)
        return {"time": self.heads["time"](h), "late": self.heads["late"](h)}
