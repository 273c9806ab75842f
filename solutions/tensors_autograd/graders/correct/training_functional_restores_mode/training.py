"""Correct in another style: F.cross_entropy, set_to_none=False, inference_mode, mode restored,
sum / len accuracy, and TUNED set directly to other values."""

import torch
import torch.nn.functional as F


def train(model, X, y, epochs, lr):
    opt = torch.optim.Adam(params=model.parameters(), lr=lr)
    history = []
    epoch = 0
    while epoch < epochs:
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        history.append(float(loss.detach()))
        epoch += 1
    return history


def accuracy(model, X, y):
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            correct = (model(X).argmax(dim=1) == y).sum().item()
    finally:
        model.train(was_training)
    return correct / len(y)


TUNED = {"hidden": 16, "epochs": 150, "lr": 0.03}
