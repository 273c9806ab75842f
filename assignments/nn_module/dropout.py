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
        raise NotImplementedError("dropout: write Dropout.__init__")

    def train(self) -> "Dropout":
        """Switch to training mode (`self.training = True`) and return `self`."""
        raise NotImplementedError("dropout: write Dropout.train")

    def eval(self) -> "Dropout":
        """Switch to eval mode (`self.training = False`) and return `self`."""
        raise NotImplementedError("dropout: write Dropout.eval")

    def __call__(self, h: np.ndarray) -> np.ndarray:
        """Apply dropout to `h` and return a new array of the same shape.

        - eval mode, or `p == 0`: the values of `h` unchanged;
        - training: zero each element independently with probability `p`, using
          `self.rng` only (e.g. `keep = self.rng.random(h.shape) >= p`), and
          divide the survivors by `1 - p`;
        - `p == 1`: all zeros (and no division by zero, so no NaN).
        Never modify `h` in place.
        """
        raise NotImplementedError("dropout: write Dropout.__call__")
