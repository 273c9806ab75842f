from torch import nn

assert count_linear_stack([3, 16, 8, 1]) == 209, "[3, 16, 8, 1] has 64 + 136 + 9 = 209 parameters"
assert count_linear_stack([784, 256, 128, 10]) == 235146
assert count_linear_stack([784, 256, 128, 10], bias=False) == 234752
for bad in ([5], [3, 0, 1]):
    try:
        count_linear_stack(bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"count_linear_stack({bad}) must raise ValueError")

mlp = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))
assert count_parameters(mlp) == 209
assert per_layer(mlp) == {"0": 64, "2": 136, "4": 9}, f"per_layer gave {per_layer(mlp)}"
mlp[0].requires_grad_(False)
assert count_parameters(mlp) == 209, "frozen parameters are still parameters"
assert count_parameters(mlp, trainable_only=True) == 145, "trainable_only leaves out the frozen 64"
shared = nn.Linear(4, 4)
assert count_parameters(nn.Sequential(shared, nn.ReLU(), shared)) == 20, "a shared (tied) layer counts once"
assert count_parameters(nn.BatchNorm1d(4)) == 8, "buffers such as running_mean are not parameters"
