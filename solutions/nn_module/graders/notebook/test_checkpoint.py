import os
import tempfile
from collections import OrderedDict

import torch
from torch import nn


def small(hidden=4):
    return nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 1))


def must_raise(action, errors, why):
    try:
        action()
    except errors:
        return
    raise AssertionError(why)


with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "weights.pt")
    torch.manual_seed(0)
    original = small()
    save_weights(original, path)
    state = torch.load(path, map_location="cpu", weights_only=True)
    assert isinstance(state, dict) and list(state) == list(original.state_dict()), \
        "save_weights saves model.state_dict() only"
    restored = small()
    assert load_weights(restored, path) is restored, "load_weights returns the model"
    x = torch.randn(4, 3)
    assert torch.equal(restored(x), original(x)), "a save/load round trip gives the same outputs"
    renamed = nn.Sequential(OrderedDict([("0", nn.Linear(3, 4)), ("1", nn.ReLU()), ("out", nn.Linear(4, 1))]))
    must_raise(lambda: load_weights(renamed, path), RuntimeError,
               "load_weights must raise when keys are missing or unexpected (strict=True)")
    must_raise(lambda: load_weights(small(hidden=5), path), RuntimeError,
               "load_weights must raise when a shape does not match")
    missing, unexpected = load_partial(renamed, path)
    assert sorted(missing) == ["out.bias", "out.weight"], f"missing_keys: {missing}"
    assert sorted(unexpected) == ["2.bias", "2.weight"], f"unexpected_keys: {unexpected}"
    pickled = os.path.join(folder, "whole_model.pt")
    torch.save(original, pickled)
    must_raise(lambda: load_weights(small(), pickled), Exception,
               "a whole pickled model must be refused: load with weights_only=True")
