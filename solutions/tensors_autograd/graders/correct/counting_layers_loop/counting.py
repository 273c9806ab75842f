"""Correct in another style: a loop over the two layers' (in, out) pairs."""


def _linear(fan_in, fan_out):
    return fan_out * fan_in + fan_out


def tinynet_count(in_features, hidden, out_features):
    layers = [(in_features, hidden), (hidden, out_features)]
    return sum(_linear(a, b) for a, b in layers)


def growth(in_features, out_features, hidden_from, hidden_to):
    before = tinynet_count(in_features, hidden_from, out_features)
    after = tinynet_count(in_features, hidden_to, out_features)
    return after - before
