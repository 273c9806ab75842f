"""Correct in another style: model.to(device) used in place (it returns the model itself)."""

import torch


def pick_device():
    use_cuda = torch.cuda.is_available()
    return "cuda:0" if use_cuda else "cpu"


def to_device(model, X, y, device):
    model.to(device)
    moved = [t.to(device) for t in (X, y)]
    return model, moved[0], moved[1]
