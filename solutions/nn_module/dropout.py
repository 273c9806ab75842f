"""Task `dropout`: inverted dropout in NumPy, with its own train/eval switch."""

import numpy as np


class Dropout:
    """A NumPy mirror of `nn.Dropout`: zero some values in training, nothing in eval.

    Inverted dropout: each value is zeroed with probability `p` and the
    survivors are scaled by `1 / (1 - p)`, so the mean stays the same and eval
    needs no rescaling. With `p = 0.5` on ones, survivors become 2.
    """

    def __init__(self, p: float, rng: np.random.Generator) -> None:
        """Store `p` and `rng` (a `numpy.random.Generator`) and start in training mode.

        Raise `ValueError` unless `0 <= p <= 1`. Set `self.p`, `self.rng` and
        `self.training = True`.
        """
        ### BEGIN SOLUTION
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability must be between 0 and 1, got {p}")
        self.p = p
        self.rng = rng
        self.training = True
        ### END SOLUTION

    def train(self) -> "Dropout":
        """Switch to training mode (`self.training = True`) and return `self`."""
        ### BEGIN SOLUTION
        self.training = True
        return self
        ### END SOLUTION

    def eval(self) -> "Dropout":
        """Switch to eval mode (`self.training = False`) and return `self`."""
        ### BEGIN SOLUTION
        self.training = False
        return self
        ### END SOLUTION

    def __call__(self, h: np.ndarray) -> np.ndarray:
        """Apply dropout to `h` and return a new array of the same shape.

        - eval mode, or `p == 0`: the values of `h` unchanged;
        - training: zero each element independently with probability `p`, using
          `self.rng` only (e.g. `keep = self.rng.random(h.shape) >= p`), and
          divide the survivors by `1 - p`;
        - `p == 1`: all zeros (and no division by zero, so no NaN).
        Never modify `h` in place.
        """
        ### BEGIN SOLUTION
        h = np.asarray(h)
        if not self.training or self.p == 0:
            return h.copy()
        if self.p == 1:
            return np.zeros_like(h)
        keep = self.rng.random(h.shape) >= self.p
        return np.where(keep, h / (1 - self.p), 0.0)
        ### END SOLUTION
