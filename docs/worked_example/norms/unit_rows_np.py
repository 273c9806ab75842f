"""Task `unit_rows_np`: unit_rows in NumPy."""

import numpy as np


def unit_rows_np(x: np.ndarray) -> np.ndarray:
    """Return `x` (float64, shape (N, D), no zero row) with each row divided by its Euclidean length.

    Example: `unit_rows_np(np.array([[3.0, 4.0]]))` is `array([[0.6, 0.8]])`.
    """
    ### BEGIN SOLUTION
    return x / np.sqrt((x * x).sum(axis=1, keepdims=True))
    ### END SOLUTION
