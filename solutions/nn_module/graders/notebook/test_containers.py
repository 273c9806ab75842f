import torch
from torch import nn

mlp = FixedMLP([3, 16, 8, 1])
assert isinstance(mlp.layers, nn.ModuleList), "self.layers is an nn.ModuleList (a list hides the layers)"
keys = list(mlp.state_dict())
assert keys == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                "layers.2.weight", "layers.2.bias"], f"state_dict keys are {keys}"
assert sum(p.numel() for p in mlp.parameters()) == 209, "FixedMLP([3, 16, 8, 1]) has 209 parameters"
torch.optim.SGD(mlp.parameters(), lr=0.1)  # raises on an empty parameter list
x = torch.randn(5, 3)
h = x
for i, layer in enumerate(mlp.layers):
    h = layer(h)
    if i < len(mlp.layers) - 1:
        h = torch.relu(h)
assert tuple(mlp(x).shape) == (5, 1)
assert torch.allclose(mlp(x), h), "ReLU between the layers, none after the last one"

two = TwoHead()
assert sum(p.numel() for p in two.parameters()) == 115, "TwoHead has 64 + 17 + 34 = 115 parameters"
head_keys = {"heads.time.weight", "heads.time.bias", "heads.late.weight", "heads.late.bias"}
assert head_keys <= set(two.state_dict()), "the heads live in an nn.ModuleDict named heads"
out = two(x)
assert isinstance(out, dict) and set(out) == {"time", "late"}, "forward returns {'time': ..., 'late': ...}"
assert tuple(out["time"].shape) == (5, 1) and tuple(out["late"].shape) == (5, 2)
two.double()
assert two(x.double())["late"].dtype == torch.float64, ".double() reaches every layer"
