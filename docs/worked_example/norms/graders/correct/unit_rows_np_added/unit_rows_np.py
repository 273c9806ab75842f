"""Task `unit_rows_np`, written another way than the reference: a correct variant (full marks)."""

import numpy as np


def unit_rows_np(x: np.ndarray) -> np.ndarray:
    """Return `x` with each row divided by its Euclidean length."""
    return x / np.linalg.norm(x, axis=1)[:, None]
