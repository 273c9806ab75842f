"""Correct variant: pathlib, a shared reader helper, keyword arguments everywhere."""
from pathlib import Path

import torch


def _read(path):
    return torch.load(Path(path), map_location="cpu", weights_only=True)


def save_weights(model, path):
    state = model.state_dict()
    torch.save(obj=state, f=Path(path))


def load_weights(model, path):
    result = model.load_state_dict(_read(path), strict=True)
    del result
    return model


def load_partial(model, path):
    result = model.load_state_dict(state_dict=_read(path), strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)
