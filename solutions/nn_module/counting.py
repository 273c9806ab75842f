"""Task `counting`: count parameters by hand and with PyTorch, layer by layer."""

from collections.abc import Sequence
from itertools import pairwise

from torch import nn


def count_linear_stack(sizes: Sequence[int], bias: bool = True) -> int:
    """Return the number of parameters of a stack of nn.Linear layers, by arithmetic only.

    `sizes = [in, h1, h2, ..., out]`; every consecutive pair `(a, b)` is one
    `nn.Linear(a, b)` with `b * a` weights (shape (out, in)) plus `b` biases when
    `bias` is true. Example: `[3, 16, 8, 1]` -> 64 + 136 + 9 = 209.
    Raise `ValueError` for fewer than two sizes or any size < 1.
    Do not build any layers: this is the count you would do on paper.
    """
    ### BEGIN SOLUTION
    sizes = list(sizes)
    if len(sizes) < 2:
        raise ValueError(f"need at least two sizes (in and out), got {sizes}")
    if any(size < 1 for size in sizes):
        raise ValueError(f"every size must be at least 1, got {sizes}")
    total = 0
    for a, b in pairwise(sizes):
        total += b * a + (b if bias else 0)
    return total
    ### END SOLUTION


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Return the number of parameter values in `model` (sum of `numel()`).

    Count each distinct parameter once: a weight shared by two layers (tied
    weights) counts once, and buffers never count. With `trainable_only=True`,
    count only parameters with `requires_grad` (frozen ones still appear in
    `model.parameters()`).
    """
    ### BEGIN SOLUTION
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
    ### END SOLUTION


def per_layer(model: nn.Module) -> dict[str, int]:
    """Map each module that has parameters of its own to its own parameter count.

    Keys are the qualified names from `model.named_modules()` (the root is `""`,
    a layer in a Sequential is e.g. `"hidden.0"`); the value is
    `sum(p.numel() for p in m.parameters(recurse=False))`. Modules without
    parameters of their own (ReLU, Dropout, containers) are left out.
    For DeliveryMLP: `{"hidden.0": 64, "hidden.3": 136, "head": 9}`.
    """
    ### BEGIN SOLUTION
    counts = {}
    for name, module in model.named_modules():
        own = list(module.parameters(recurse=False))
        if own:
            counts[name] = sum(p.numel() for p in own)
    return counts
    ### END SOLUTION
