"""Task `device`: choose the device and move the model and the data to it."""

import torch
from torch import nn


def pick_device():
    """Return `"cuda"` when `torch.cuda.is_available()` at the time of the call, else `"cpu"`.

    As the lesson writes it; a string or a `torch.device` are both fine.
    """
    raise NotImplementedError("device: write pick_device")


def to_device(
    model: nn.Module, X: torch.Tensor, y: torch.Tensor, device
) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """Return `(model, X, y)` all on `device`, ready for `model(X)`.

    Every parameter and buffer of the model goes to `device`; `X` and `y` keep
    their dtype and shape. Note: `tensor.to(device)` returns a new tensor.
    """
    raise NotImplementedError("device: write to_device")
