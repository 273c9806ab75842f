"""Task `tensors`: NumPy <-> tensor without copies, and the row-wise dot product."""

import numpy as np
import torch


def share_numpy(arr: np.ndarray) -> torch.Tensor:
    """Return a tensor that shares memory with the NumPy array `arr`.

    A change to one shows in the other (no copy), and the dtype and shape stay
    those of `arr` (float64 stays float64, int64 stays int64). The lesson's
    `torch.from_numpy` does exactly this; `torch.tensor(arr)` copies.
    """
    raise NotImplementedError("tensors: write share_numpy")


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """Return the values of the CPU tensor `t` as a NumPy array of the same dtype and shape.

    `t` may require grad or be part of a graph (then `t.numpy()` alone raises:
    detach it first). Never modify `t` (not even its `requires_grad` flag).
    """
    raise NotImplementedError("tensors: write to_numpy")


def row_dots(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return the `(N,)` tensor of row-wise dot products of two `(N, D)` tensors.

    Element `i` is `a[i] @ b[i]`; the shape is `(N,)` also when `N = 1`.
    """
    raise NotImplementedError("tensors: write row_dots")
