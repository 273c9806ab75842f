"""Cases of task counting: the lesson's model shapes, hidden ones drawn from a challenge, their counts."""

# The lesson's numbers (209, 235146, ...) are public: an answer that only repeats them proves nothing.
# Every counting check therefore also asks about stacks and models whose sizes come from its
# `challenge` (nobody knows them in advance), and computes here, by arithmetic, what PyTorch counts
# for them. The models are plain data that probes._build_counting_model turns into the same modules.

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

WIDEST = 1024  # hidden stack sizes 1..this: counts nobody guesses, small enough to read in feedback
LINEARS = ("hidden.0", "hidden.3", "head")  # the Linear layers of a DeliveryMLP-shaped model


def stack_count(sizes: Sequence[int], bias: bool | None) -> int:
    """b*a weights (+ b biases) per consecutive pair (a, b); bias None is the default, True."""
    return sum(b * a + (b if bias is not False else 0) for a, b in pairwise(sizes))


def draw_sizes(gen: np.random.Generator, low: int = 2, high: int = 6) -> list[int]:
    return [int(s) for s in gen.integers(1, WIDEST + 1, int(gen.integers(low, high + 1)))]


def draw_stacks(gen: np.random.Generator) -> list[tuple[list[int], bool | None, str]]:
    """Hidden valid stacks (sizes, bias, kind): bias=True, bias=False, the default, a tuple."""
    return [(draw_sizes(gen), bias, kind)
            for bias, kind in ((True, "list"), (False, "list"), (None, "list"), (True, "tuple"))]


def draw_bad_stacks(gen: np.random.Generator) -> list[tuple[list[int], bool | None, str]]:
    """Hidden invalid stacks: a single size, and stacks with a size of 0 or below at a hidden place."""
    cases: list[list[int]] = [[int(gen.integers(1, WIDEST + 1))]]
    for worst in (0, -int(gen.integers(1, 50))):
        sizes = draw_sizes(gen, 3, 6)
        sizes[int(gen.integers(len(sizes)))] = worst
        cases.append(sizes)
    options: list[tuple[bool | None, str]] = [(None, "list"), (True, "list"), (False, "list"),
                                              (None, "tuple")]
    return [(sizes, *options[int(gen.integers(len(options)))]) for sizes in cases]


# ----------------------------------------------------------------------------- models


def delivery_like(sizes: Sequence[int], frozen: Sequence[str] = ()) -> dict:
    """A DeliveryMLP-shaped model (Linear, ReLU, Dropout, Linear, ReLU; head) with two buffers."""
    i, h1, h2, out = sizes
    spec: dict[str, Any] = {
        "modules": [
            ["hidden", ["seq", [["linear", i, h1, True], ["relu"], ["dropout"],
                                ["linear", h1, h2, True], ["relu"]]]],
            ["head", ["linear", h2, out, True]],
        ],
        "buffers": [i, i],
    }
    return {**spec, "frozen": list(frozen)} if frozen else spec


def delivery_per_layer(sizes: Sequence[int]) -> dict[str, int]:
    i, h1, h2, out = sizes
    return {"hidden.0": i * h1 + h1, "hidden.3": h1 * h2 + h2, "head": h2 * out + out}


def delivery_text(sizes: Sequence[int], frozen: Sequence[str] = ()) -> str:
    text = f"DeliveryMLP(sizes={tuple(sizes)})"  # code, read the same in every language
    return "; ".join([text, *(f"{name}.requires_grad_(False)" for name in frozen)])


def draw_delivery(gen: np.random.Generator) -> tuple[int, int, int, int]:
    i, h1, h2, out = (int(gen.integers(lo, hi + 1)) for lo, hi in ((2, 12), (2, 40), (2, 40), (1, 5)))
    return i, h1, h2, out


def draw_frozen(gen: np.random.Generator) -> tuple[str, ...]:
    """One or two of the three Linear layers (never none, never all: trainable differs from the total)."""
    picked = gen.permutation(len(LINEARS))[: int(gen.integers(1, len(LINEARS)))]
    return tuple(LINEARS[k] for k in sorted(picked))


def tied(vocab: int, dim: int) -> dict:
    return {"tie": [vocab, dim]}


def tied_text(vocab: int, dim: int) -> str:
    return f"Linear({dim}, {vocab}).weight = Embedding({vocab}, {dim}).weight"


def draw_tied(gen: np.random.Generator) -> tuple[int, int]:
    return int(gen.integers(5, 200)), int(gen.integers(2, 33))


def twohead_like(body: Sequence[int], heads: Sequence[tuple[str, int]]) -> dict:
    """A TwoHead-shaped model: a Linear + ReLU body and a ModuleDict of heads."""
    i, width = body
    layers = [[name, ["linear", width, w, True]] for name, w in heads]
    body_layers = [["linear", i, width, True], ["relu"]]
    return {"modules": [["body", ["seq", body_layers]], ["heads", ["dict", layers]]]}


def twohead_per_layer(body: Sequence[int], heads: Sequence[tuple[str, int]]) -> dict[str, int]:
    i, width = body
    return {"body.0": i * width + width, **{f"heads.{name}": width * w + w for name, w in heads}}


def draw_twohead(gen: np.random.Generator) -> tuple[tuple[int, int], list[tuple[str, int]]]:
    """Hidden body sizes and two or three heads of hidden widths (names from a fixed list)."""
    names = ["eta", "delay", "late", "cost", "rating"]
    picked = gen.permutation(len(names))[: int(gen.integers(2, 4))]
    heads = [(names[k], int(gen.integers(1, 9))) for k in picked]
    return (int(gen.integers(2, 12)), int(gen.integers(2, 40))), heads
