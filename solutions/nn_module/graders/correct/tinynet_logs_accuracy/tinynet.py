"""Correct variant: param groups for Adam, a functional loss, and an accuracy logged each epoch.

The extra model(X) calls (under no_grad, after the step) must not confuse the graders, which watch
the forward passes on the default-arguments path."""

import torch
import torch.nn.functional as F
from torch import nn


class TinyNet(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        hidden = F.relu(self.fc1(x))
        return self.fc2(hidden)


def train_tinynet(model, X, y, epochs=100, lr=0.05):
    optimizer = torch.optim.Adam([{"params": list(model.parameters())}], lr=lr)
    history = []
    accuracies = []
    epoch = 0
    while epoch < epochs:
        optimizer.zero_grad()
        logits = model(X)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        history.append(float(loss.item()))
        with torch.no_grad():
            accuracies.append((model(X).argmax(dim=1) == y).float().mean().item())
        epoch += 1
    return history
