"""Probes of task norm_linear (run inside the sandboxed worker)."""

import torch

from autograder.sandbox.inside.observe import as_tensor, module_structure, tensor


def norm_linear_structure(mod, **hidden):
    return module_structure(mod.NormLinear(3, 4), **hidden)


def norm_linear_forward(mod, weight, bias, x):
    model = mod.NormLinear(3, 4)
    with torch.no_grad():
        model.fc.weight.copy_(as_tensor(weight))
        model.fc.bias.copy_(as_tensor(bias))
        return tensor(model(as_tensor(x)))
