"""This assignment's grading helpers: the engine's probe calls (temporary paths scrubbed), seeded inputs."""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from autograder.graders import ProbeCaller

_TMP_PATH = re.compile(r"[^\s'\"]*ckpt_[\w.-]+(/[\w.-]+)*")  # the probes' temporary folders
# The engine's probe calls, with this assignment's temporary folders kept out of feedback.
_caller = ProbeCaller(scrub=(_TMP_PATH,))
caller = _caller  # for the engine's check builders (judge_refusals)
call = _caller.call
call_once = _caller.call_once
student_error = _caller.student_error
raised_name = _caller.raised_name
raised_error = _caller.raised_error
require_raised = _caller.require_raised
fail_if_not_implemented = _caller.fail_if_not_implemented


# ----------------------------------------------------------------------------- inputs


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def linear_init(gen: np.random.Generator, fan_in: int, fan_out: int, bias: bool = True,
                dtype: Any = np.float32) -> tuple[np.ndarray, np.ndarray | None]:
    """nn.Linear-like weights: U(-1/sqrt(in), 1/sqrt(in)), shape (out, in)."""
    bound = 1.0 / np.sqrt(fan_in)
    W = gen.uniform(-bound, bound, (fan_out, fan_in)).astype(dtype)
    b = gen.uniform(-bound, bound, (fan_out,)).astype(dtype) if bias else None
    return W, b


def mlp_state(seed: int, layers: list[tuple[str, int, int]], dtype: Any = np.float32,
              scale: float = 1.0) -> dict[str, np.ndarray]:
    """A state_dict (name -> array) of Linear layers `prefix: (in, out)`, from a fixed seed."""
    gen = rng(seed)
    state: dict[str, np.ndarray] = {}
    for prefix, fan_in, fan_out in layers:
        W, b = linear_init(gen, fan_in, fan_out, dtype=dtype)
        state[f"{prefix}.weight"] = (W * scale).astype(dtype)
        state[f"{prefix}.bias"] = (b * scale).astype(dtype)  # type: ignore[operator]
    return state


@functools.lru_cache(maxsize=4)
def toy_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """data.make_toy(n, seed) recomputed here: X (n, 3) float32, y (n,) int64."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=gen)
    y = (X.sum(dim=1) > 0).long()
    return X.numpy().copy(), y.numpy().copy()


def relu(a: np.ndarray) -> np.ndarray:
    return np.maximum(a, 0)


def classification_losses(logits: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The losses a training loop may compute from `logits` (N, C) against class ids `y`: cross-entropy
    (the contract's), and what a slip in the loss gives (softmax first, the sum, NLL of raw scores,
    squared error against one-hot targets). A check that only needs the loop to report its own losses
    accepts any of them: which loss is right is the trajectory check's business."""
    z = logits.astype(np.float64)
    rows = np.arange(len(y))

    def cross_entropy(a: np.ndarray) -> np.ndarray:
        top = a.max(axis=1, keepdims=True)
        return np.log(np.exp(a - top).sum(axis=1)) + top[:, 0] - a[rows, y]

    soft = np.exp(z - z.max(axis=1, keepdims=True))
    soft /= soft.sum(axis=1, keepdims=True)
    onehot = np.eye(z.shape[1])[y]
    per_row = {"cross_entropy": cross_entropy(z), "softmax_first": cross_entropy(soft),
               "nll_raw": -z[rows, y], "nll_softmax": -soft[rows, y]}
    found = {name: float(v.mean()) for name, v in per_row.items()}
    found |= {f"{name}_sum": float(v.sum()) for name, v in per_row.items()}
    found |= {"mse_logits": float(np.mean((z - onehot) ** 2)),
              "mse_softmax": float(np.mean((soft - onehot) ** 2))}
    return found
