"""Correct variant: named_parameters(), math.prod, a dict comprehension."""
import math


def count_linear_stack(sizes, bias=True):
    if len(sizes) < 2 or any(s < 1 for s in sizes):
        raise ValueError(f"bad layer sizes: {sizes!r}")
    weights = sum(math.prod(pair) for pair in zip(sizes[:-1], sizes[1:]))
    biases = sum(sizes[1:]) if bias else 0
    return int(weights + biases)


def count_parameters(model, trainable_only=False):
    total = 0
    for _name, param in model.named_parameters():
        if trainable_only and not param.requires_grad:
            continue
        total += param.numel()
    return total


def _own(module):
    return list(module.parameters(recurse=False))


def per_layer(model):
    return {
        name: sum(p.numel() for p in _own(module))
        for name, module in model.named_modules()
        if _own(module)
    }
