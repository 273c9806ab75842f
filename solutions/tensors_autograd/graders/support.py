"""Grading-process helpers of this assignment: the checks' inputs (probe calls come from the engine)."""

from __future__ import annotations

from typing import Any

import numpy as np


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def linear_state(seed: int, sizes: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """float32 weights of fc1/fc2 (nn.Linear-like init) for the grader's TinyNet of `sizes`."""
    gen = rng(seed)
    i, h, o = sizes
    state = {}
    for name, fan_in, fan_out in (("fc1", i, h), ("fc2", h, o)):
        bound = 1.0 / np.sqrt(fan_in)
        state[f"{name}.weight"] = gen.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        state[f"{name}.bias"] = gen.uniform(-bound, bound, (fan_out,)).astype(np.float32)
    return state


def toy_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """data.make_toy(n, seed) recomputed here: X (n, 3) float32, y (n,) int64."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=gen)
    y = (X.sum(dim=1) > 0).long()
    return X.numpy().copy(), y.numpy().copy()


def line_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """data.make_line(n): X = [1, ..., n], Y = 2 X, float32."""
    X = np.arange(1, n + 1, dtype=np.float32)
    return X, 2 * X


def short(values: Any, n: int = 5) -> str:
    vals = list(values)
    return "[" + ", ".join(f"{float(v):.6g}" for v in vals[:n]) + (", ...]" if len(vals) > n else "]")
