"""Given data for the nn_module assignment: a toy classification set and delivery orders."""

import torch


def make_toy(n=100, seed=0):
    """Return `(X, y)`: `X` is `(n, 3)` float32 noise, `y` is 1 where the row sum is positive.

    Seeds the global RNG with `torch.manual_seed(seed)`; `y` is `long` (class 0 or 1).
    """
    torch.manual_seed(seed)
    X = torch.randn(n, 3)
    y = (X.sum(dim=1) > 0).long()
    return X, y


def make_orders(n=400, seed=42):
    """Return `(X, y)` for `n` made-up delivery orders, both float32.

    `X` is `(n, 3)` with columns `[distance_km, items, rain]`: distance uniform in
    0.5..12 km, items an integer 1..5, rain 0 or 1 (probability 0.3). `y` is `(n,)`
    minutes: `20 + 2.5*d + 6*sqrt(items) + 8*rain + 0.05*d**2 + noise` (noise sd 2).
    Every draw comes from one `torch.Generator` seeded with `seed`; the global RNG is
    not touched.
    """
    g = torch.Generator().manual_seed(seed)
    f32 = torch.float32
    distance = 0.5 + 11.5 * torch.rand(n, generator=g, dtype=f32)
    items = torch.randint(1, 6, (n,), generator=g).to(f32)
    rain = (torch.rand(n, generator=g, dtype=f32) < 0.3).to(f32)
    noise = 2.0 * torch.randn(n, generator=g, dtype=f32)
    X = torch.stack([distance, items, rain], dim=1)
    y = 20 + 2.5 * distance + 6 * torch.sqrt(items) + 8 * rain + 0.05 * distance**2 + noise
    return X, y
