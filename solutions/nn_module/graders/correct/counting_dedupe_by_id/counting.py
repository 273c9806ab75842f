"""Correct variant: distinct parameters by id(), per_layer via named_modules() + _parameters."""
from torch import nn


def count_linear_stack(sizes, bias=True):
    sizes = list(sizes)
    if len(sizes) < 2:
        raise ValueError("need at least two sizes (in and out)")
    if min(sizes) < 1:
        raise ValueError("every size must be at least 1")
    total = 0
    for i in range(len(sizes) - 1):
        fan_in, fan_out = sizes[i], sizes[i + 1]
        total += fan_out * fan_in
        if bias:
            total += fan_out
    return total


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    unique = {id(p): p for p in model.parameters()}
    return sum(p.numel() for p in unique.values() if p.requires_grad or not trainable_only)


def per_layer(model):
    result = {}
    for name, module in model.named_modules():
        own = [p for p in module._parameters.values() if p is not None]
        if own:
            result[name] = sum(p.numel() for p in own)
    return result
