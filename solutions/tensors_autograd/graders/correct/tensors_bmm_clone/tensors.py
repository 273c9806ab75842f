"""Correct in another style: a from_numpy variable, a detached clone, a batched matmul."""

import torch


def share_numpy(arr):
    tensor = torch.from_numpy(arr)
    return tensor


def to_numpy(t):
    with torch.no_grad():
        copy = t.detach().clone()
    return copy.numpy()


def row_dots(a, b):
    n = a.shape[0]
    return torch.bmm(a.unsqueeze(1), b.unsqueeze(2)).reshape(n)
