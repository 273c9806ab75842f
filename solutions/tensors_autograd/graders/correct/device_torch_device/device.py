"""Correct in another style: a torch.device, and .to(device=...) keyword calls."""

import torch


def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def to_device(model, X, y, device):
    device = torch.device(device)
    return model.to(device=device), X.to(device=device), y.to(device=device)
