"""Correct variant: head before hidden, buffers registered last (copies), predict under inference_mode."""

import torch
from torch import nn


class DeliveryMLP(nn.Module):
    """Predict delivery minutes from `[distance_km, items, rain]` orders.

    The model standardizes its input with a mean and std that travel with it:
    they are buffers (in `state_dict`, moved by `.to()` / `.double()`), not
    parameters (the optimizer must not change them). 209 parameters in total:
    64 + 136 + 9.
    """

    def __init__(self, x_mean: torch.Tensor, x_std: torch.Tensor, p_drop: float = 0.1) -> None:
        """Register the buffers and create the layers.

        - buffers `x_mean` and `x_std` (shape `(3,)`) with `self.register_buffer(name, tensor)`;
        - `self.hidden = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Dropout(p_drop),
          nn.Linear(16, 8), nn.ReLU())`;
        - `self.head = nn.Linear(8, 1)`.
        The `state_dict` keys are then exactly `x_mean, x_std, hidden.0.weight,
        hidden.0.bias, hidden.3.weight, hidden.3.bias, head.weight, head.bias`
        (ReLU and Dropout have no tensors, but keep their places 1, 2 and 4).
        """
        super().__init__()
        # the head first and the buffers last: state_dict lists them in another order, same keys
        self.head = nn.Linear(8, 1)
        self.hidden = nn.Sequential(
            nn.Linear(3, 16), nn.ReLU(), nn.Dropout(p_drop), nn.Linear(16, 8), nn.ReLU()
        )
        self.register_buffer("x_std", torch.as_tensor(x_std, dtype=torch.float32).clone())
        self.register_buffer("x_mean", torch.as_tensor(x_mean, dtype=torch.float32).clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Standardize, then run the layers: `x` is `(N, 3)`, the result is `(N,)` minutes.

        `z = (x - x_mean) / x_std`, then `head(hidden(z))`, which is `(N, 1)`;
        `.squeeze(-1)` makes it `(N,)` (also for `N = 1`).
        """
        z = (x - self.x_mean) / self.x_std
        return self.head(self.hidden(z)).squeeze(-1)


def predict(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Return `model(x)` for serving: deterministic and without an autograd graph.

    Two separate switches are needed: `model.eval()` turns Dropout off (train mode
    would give a different answer on every call), and `torch.no_grad()` (or
    `torch.inference_mode()`) stops building the graph, so the result has
    `requires_grad == False`. `eval()` alone does not turn gradients off.
    """
    with torch.inference_mode():
        return model.eval()(x)
