"""Task `checkpoint`: save and load weights safely with state_dict and weights_only."""

import os

import torch
from torch import nn


def save_weights(model: nn.Module, path: str | os.PathLike) -> None:
    """Save only `model.state_dict()` to `path` with `torch.save`.

    Not the whole model object: a state_dict is a plain dict of tensors, which
    loads with `weights_only=True` and does not depend on your class's code or
    module path.
    """
    raise NotImplementedError("checkpoint: write save_weights")


def load_weights(model: nn.Module, path: str | os.PathLike) -> nn.Module:
    """Load the tensors saved at `path` into `model` and return `model`.

    Read the file with `torch.load(path, map_location="cpu", weights_only=True)`
    (never `weights_only=False`: a pickle can run code when it is opened), then
    apply it with `model.load_state_dict(state, strict=True)`. Let errors
    propagate: a missing or unexpected key, or a shape mismatch, must raise.
    """
    raise NotImplementedError("checkpoint: write load_weights")


def load_partial(model: nn.Module, path: str | os.PathLike) -> tuple[list[str], list[str]]:
    """Load what matches from `path` and return `(missing_keys, unexpected_keys)` as lists.

    Read the file safely as in `load_weights`, then apply it with `strict=False`:
    keys present in both are loaded, `missing_keys` are the model's keys not in
    the file and `unexpected_keys` are the file's keys the model does not have.
    """
    raise NotImplementedError("checkpoint: write load_partial")
