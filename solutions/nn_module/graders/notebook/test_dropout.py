import numpy as np

h = np.ones((200, 50))
before = h.copy()
drop = Dropout(0.5, np.random.default_rng(0))
assert drop.training is True, "a new Dropout starts in training mode"
out = drop(h)
assert isinstance(out, np.ndarray) and out.shape == h.shape, "the output is an array of h's shape"
assert np.array_equal(h, before), "h must not be changed in place"
assert set(np.unique(out).tolist()) <= {0.0, 2.0}, "survivors are scaled by 1 / (1 - p): ones become 2"
zeros = float((out == 0).mean())
assert 0.45 < zeros < 0.55, f"{zeros:.3f} of the values were zeroed; with p = 0.5 about half should be"
assert not np.array_equal(drop(h), drop(h)), "two calls draw two different masks"
assert drop.eval() is drop and drop.training is False, "eval() sets training = False and returns self"
assert np.array_equal(drop(h), h), "in eval mode dropout changes nothing"
assert drop.train() is drop and drop.training is True, "train() sets training = True and returns self"
first, second = (Dropout(0.3, np.random.default_rng(7))(h) for _ in range(2))
assert np.array_equal(first, second), "the same rng seed gives the same output"
assert np.array_equal(Dropout(0.0, np.random.default_rng(1))(h), h), "p = 0 changes nothing"
assert np.array_equal(Dropout(1.0, np.random.default_rng(1))(h), 0 * h), "p = 1 gives zeros, no NaN"
for bad in (-0.1, 1.5):
    try:
        Dropout(bad, np.random.default_rng(0))
    except ValueError:
        pass
    else:
        raise AssertionError(f"Dropout({bad}, rng) must raise ValueError")
