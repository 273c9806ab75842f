"""Correct variant: functional ReLU, F.cross_entropy, model.zero_grad(), float(loss)."""
import torch
import torch.nn.functional as F
from torch import nn


class TinyNet(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int) -> None:
        super(TinyNet, self).__init__()
        self.fc1 = nn.Linear(in_features=in_features, out_features=hidden)
        self.fc2 = nn.Linear(in_features=hidden, out_features=out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def train_tinynet(model, X, y, epochs=100, lr=0.05):
    model.train()
    opt = torch.optim.Adam(params=model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        model.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses
