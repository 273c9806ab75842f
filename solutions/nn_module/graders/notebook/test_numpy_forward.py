import numpy as np
import torch
from torch import nn
from torch.nn import functional

x = np.array([[1.0, 2.0, 3.0]])
W = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
b = np.array([0.1, -0.2])
assert np.allclose(linear(x, W, b), [[4.6, -0.7]]), "the lesson's example: x @ W.T + b is [[4.6, -0.7]]"
rng = np.random.default_rng(0)
x, W, b = rng.normal(size=(4, 5)), rng.normal(size=(3, 5)), rng.normal(size=3)
assert linear(x, W, b).shape == (4, 3), "W is (out, in): x (4, 5) and W (3, 5) give (4, 3)"
assert np.allclose(linear(x, W, b), x @ W.T + b)

torch.manual_seed(0)
layers = {"hidden.0": nn.Linear(3, 16), "hidden.3": nn.Linear(16, 8), "head": nn.Linear(8, 1)}
state = {"x_mean": np.array([6.185, 3.102, 0.29]), "x_std": np.array([3.209, 1.392, 0.454])}
for name, layer in layers.items():
    state[name + ".weight"] = layer.weight.detach().double().numpy()
    state[name + ".bias"] = layer.bias.detach().double().numpy()
t = {key: torch.from_numpy(value) for key, value in state.items()}
for n in (6, 1):
    orders = rng.uniform(0.5, 12.0, size=(n, 3))
    got = delivery_forward(state, orders)
    z = (torch.from_numpy(orders) - t["x_mean"]) / t["x_std"]
    z = torch.relu(functional.linear(z, t["hidden.0.weight"], t["hidden.0.bias"]))
    z = torch.relu(functional.linear(z, t["hidden.3.weight"], t["hidden.3.bias"]))
    want = functional.linear(z, t["head.weight"], t["head.bias"]).squeeze(-1).numpy()
    assert isinstance(got, np.ndarray) and got.shape == (n,), f"N = {n} orders give shape ({n},)"
    assert got.dtype == np.float64, "float64 in, float64 out"
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12), "delivery_forward matches PyTorch's eval forward"
