"""Correct in another style: factored formulas (each hidden unit costs in + 1 + out)."""


def tinynet_count(in_features: int, hidden: int, out_features: int) -> int:
    return hidden * (in_features + 1 + out_features) + out_features


def growth(in_features: int, out_features: int, hidden_from: int, hidden_to: int) -> int:
    return (hidden_to - hidden_from) * (in_features + out_features + 1)
