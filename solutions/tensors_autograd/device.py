"""Task `device`: choose the device and move the model and the data to it."""

import torch
from torch import nn


def pick_device():
    """Return `"cuda"` when `torch.cuda.is_available()` at the time of the call, else `"cpu"`.

    As the lesson writes it; a string or a `torch.device` are both fine.
    """
    ### BEGIN SOLUTION
    return "cuda" if torch.cuda.is_available() else "cpu"
    ### END SOLUTION


def to_device(
    model: nn.Module, X: torch.Tensor, y: torch.Tensor, device
) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """Return `(model, X, y)` all on `device`, ready for `model(X)`.

    Every parameter and buffer of the model goes to `device`; `X` and `y` keep
    their dtype and shape. Note: `tensor.to(device)` returns a new tensor.
    """
    ### BEGIN SOLUTION
    model = model.to(device)
    X = X.to(device)
    y = y.to(device)
    return model, X, y
    ### END SOLUTION
