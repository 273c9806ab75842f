"""Correct in another style: the lesson's loop with model.train(), a @torch.no_grad() accuracy
helper, double-precision mean, and the exercise answered with tuned_values()."""

import torch
from torch import nn


def train(model, X, y, epochs, lr):
    model.train()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = criterion(model(X), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def _predict(model, X):
    return model(X).argmax(dim=-1)


def accuracy(model, X, y):
    model.eval()
    return (_predict(model, X) == y).double().mean().item()


def tuned_values():
    return {"hidden": 32, "epochs": 60, "lr": 0.05}


TUNED = tuned_values()
