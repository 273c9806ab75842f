"""Correct variant: explicit file objects, map_location=torch.device('cpu'), tuple unpacking."""
import torch


def save_weights(model, path):
    with open(path, "wb") as f:
        torch.save(model.state_dict(), f)


def load_weights(model, path):
    with open(path, "rb") as f:
        state = torch.load(f, weights_only=True, map_location=torch.device("cpu"))
    model.load_state_dict(state)
    return model


def load_partial(model, path):
    with open(path, "rb") as f:
        state = torch.load(f, weights_only=True, map_location=torch.device("cpu"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    return missing, unexpected
