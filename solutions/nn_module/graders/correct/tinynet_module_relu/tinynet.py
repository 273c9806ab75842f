"""Correct variant: ReLU as a registered module, explicit zero_grad(set_to_none=False)."""
import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.fc2(x)
        return x


def train_tinynet(model, X, y, epochs=100, lr=0.05):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    history = []
    epoch = 0
    while epoch < epochs:
        optimizer.zero_grad(set_to_none=False)   # step 1
        logits = model(X)                        # step 2
        loss = criterion(logits, y)              # step 3
        loss.backward()                          # step 4
        optimizer.step()                         # step 5
        history.append(float(loss.item()))
        epoch += 1
    return history
