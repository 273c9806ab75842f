"""Task `counting`: TinyNet's parameters by arithmetic (the lesson's exercise 2)."""


def tinynet_count(in_features: int, hidden: int, out_features: int) -> int:
    """Return the number of parameters of `TinyNet(in_features, hidden, out_features)`.

    By arithmetic only: `fc1` has `hidden * in_features` weights and `hidden` biases,
    `fc2` has `out_features * hidden` weights and `out_features` biases; ReLU has none.
    Example: `tinynet_count(3, 8, 2) == 50`.
    """
    ### BEGIN SOLUTION
    return hidden * in_features + hidden + out_features * hidden + out_features
    ### END SOLUTION


def growth(in_features: int, out_features: int, hidden_from: int, hidden_to: int) -> int:
    """Return how many parameters TinyNet gains when `hidden` goes from `hidden_from` to `hidden_to`.

    Negative when it shrinks. Example: `growth(3, 2, 8, 32) == 144`.
    """
    ### BEGIN SOLUTION
    before = tinynet_count(in_features, hidden_from, out_features)
    after = tinynet_count(in_features, hidden_to, out_features)
    return after - before
    ### END SOLUTION
