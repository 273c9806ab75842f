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


def logits(state: dict[str, np.ndarray], X: np.ndarray) -> np.ndarray:
    """fc2(relu(fc1(X))) in float64: the grader's TinyNet of `state`, in eval mode."""
    def linear(name: str, h: np.ndarray) -> np.ndarray:
        return h @ state[f"{name}.weight"].astype(np.float64).T + state[f"{name}.bias"].astype(np.float64)

    return linear("fc2", np.maximum(linear("fc1", X.astype(np.float64)), 0.0))


def varied_state(seed: int, sizes: tuple[int, int, int], X: np.ndarray) -> dict[str, np.ndarray]:
    """linear_state(seed), or of the next seeds (a fixed walk), until its predictions on X are not all
    one class: an accuracy check of a constant model would pass a constant answer."""
    for k in range(100):
        state = linear_state(seed + 7919 * k, sizes)
        if len(set(np.argmax(logits(state, X), axis=1).tolist())) > 1:
            return state
    return state


def accuracy_range(state: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The eval accuracy of `state` on X, y, as the range it spans when rows whose top two logits are
    within float32 rounding may go either way (the worker computes in float32, perhaps on another CPU)."""
    z = logits(state, X)
    top2 = np.sort(z, axis=1)[:, -2:]
    unsure = (top2[:, 1] - top2[:, 0]) <= 1e-4 * np.maximum(1.0, np.abs(top2[:, 1]))
    right = (np.argmax(z, axis=1) == y) & ~unsure
    return float(np.mean(right)), float(np.mean(right | unsure))


def cross_entropy(z: np.ndarray, y: np.ndarray) -> float:
    top = z.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(z - top).sum(axis=1)) + top[:, 0]
    return float(np.mean(log_z - z[np.arange(len(y)), y]))


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


def number(obs: dict) -> float | None:
    """The number a probe's scalar observation holds, whatever its type (a tensor, np.float64 ...):
    checks that judge a value, not its type, read it with this (the type is one check's business)."""
    if obs.get("value") is not None:
        return float(obs["value"])
    held = obs.get("as_float")
    return None if held is None else float(held)


def classification_losses(z: np.ndarray, y: np.ndarray) -> list[float]:
    """The losses a loop may compute from logits `z` against class ids `y`: the contract's cross-entropy,
    and what a slip in the loss gives (softmax first, the sum, NLL of raw scores, squared error against
    one-hot targets). A check that needs the loop to report its own losses accepts any of them."""
    rows = np.arange(len(y))
    soft = np.exp(z - z.max(axis=1, keepdims=True))
    soft = soft / soft.sum(axis=1, keepdims=True)
    onehot = np.eye(z.shape[1])[y]
    mean = [cross_entropy(z, y), cross_entropy(soft, y), float(np.mean(-z[rows, y])),
            float(np.mean(-soft[rows, y]))]
    return mean + [v * len(y) for v in mean] + [float(np.mean((z - onehot) ** 2)),
                                                 float(np.mean((soft - onehot) ** 2))]
