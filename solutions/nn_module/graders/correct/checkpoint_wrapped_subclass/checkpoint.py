"""Correct variant: errors re-raised with more context, as subclasses of the very types the contract names.

A caller's `except RuntimeError` / `except pickle.UnpicklingError` still catches them; paths go
through os.fspath."""

import os
import pickle

import torch


class CheckpointMismatch(RuntimeError):
    """The file's keys or shapes do not fit the model."""


class UnsafeCheckpoint(pickle.UnpicklingError):
    """The file holds more than tensors; weights_only=True refused it."""


def _read(path):
    try:
        return torch.load(os.fspath(path), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        raise UnsafeCheckpoint(f"refused to unpickle {os.fspath(path)}: {err}") from err


def save_weights(model, path):
    torch.save(model.state_dict(), os.fspath(path))


def load_weights(model, path):
    state = _read(path)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as err:
        raise CheckpointMismatch(f"{os.fspath(path)} does not fit the model: {err}") from err
    return model


def load_partial(model, path):
    missing, unexpected = model.load_state_dict(_read(path), strict=False)
    return list(missing), list(unexpected)
