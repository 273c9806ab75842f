import torch

X, y = make_orders()
model = DeliveryMLP(X.mean(dim=0), X.std(dim=0))
keys = list(model.state_dict())
assert keys == ["x_mean", "x_std", "hidden.0.weight", "hidden.0.bias", "hidden.3.weight",
                "hidden.3.bias", "head.weight", "head.bias"], f"state_dict keys are {keys}"
params = dict(model.named_parameters())
assert "x_mean" not in params and "x_std" not in params, "x_mean and x_std are buffers, not parameters"
assert sum(p.numel() for p in model.parameters()) == 209, "DeliveryMLP has 64 + 136 + 9 = 209 parameters"
shapes = [tuple(model.hidden[0].weight.shape), tuple(model.hidden[3].weight.shape),
          tuple(model.head.weight.shape)]
assert shapes == [(16, 3), (8, 16), (1, 8)], f"weight shapes are {shapes}"
model.eval()
assert tuple(model(X[:5]).shape) == (5,), "forward returns minutes of shape (N,)"
assert tuple(model(X[:1]).shape) == (1,), "one order gives shape (1,): squeeze(-1), not squeeze()"
model.train()
first = predict(model, X[:10])
assert not model.training, "predict puts the model in eval mode"
assert torch.equal(first, predict(model, X[:10])), "predict gives the same answer every time"
assert not first.requires_grad, "predict builds no graph (torch.no_grad() or torch.inference_mode())"
noisy = DeliveryMLP(X.mean(dim=0), X.std(dim=0), p_drop=0.5).train()
with torch.no_grad():
    assert not torch.equal(noisy(X[:50]), noisy(X[:50])), "in train mode dropout changes the outputs"
model.double()
assert model.x_mean.dtype == torch.float64 and model.x_std.dtype == torch.float64, \
    ".double() converts the buffers too (register_buffer)"
assert model(X[:3].double()).dtype == torch.float64
