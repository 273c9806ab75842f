"""Correct variant: a ValueError subclass of its own, tuple arithmetic, an explicit flag test."""

from torch import nn


class StackSizeError(ValueError):
    """Bad sizes for a stack of nn.Linear layers (still a ValueError for the caller)."""


def count_linear_stack(sizes, bias=True):
    sizes = tuple(sizes)
    if len(sizes) < 2:
        raise StackSizeError("a stack needs an input and an output size")
    if min(sizes) < 1:
        raise StackSizeError(f"sizes must be positive: {sizes}")
    pairs = zip(sizes[:-1], sizes[1:])
    return sum(a * b + (b if bias else 0) for a, b in pairs)


def count_parameters(model, trainable_only=False):
    total = 0
    for p in model.parameters():
        if trainable_only and not p.requires_grad:
            continue
        total += p.numel()
    return total


def per_layer(model):
    result = {}
    for name, module in model.named_modules():
        count = sum(p.numel() for p in module.parameters(recurse=False))
        if count > 0:
            result[name] = count
    return result
