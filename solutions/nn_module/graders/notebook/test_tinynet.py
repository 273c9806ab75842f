import torch
from torch import nn

net = TinyNet(3, 8, 2)
assert isinstance(net, nn.Module), "TinyNet must subclass nn.Module"
names = [name for name, _ in net.named_parameters()]
assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"], f"parameter names are {names}"
assert tuple(net.fc1.weight.shape) == (8, 3), "fc1.weight has shape (hidden, in_features) = (8, 3)"
assert tuple(net.fc2.weight.shape) == (2, 8), "fc2.weight has shape (out_features, hidden) = (2, 8)"
assert sum(p.numel() for p in net.parameters()) == 50, "TinyNet(3, 8, 2) has 24 + 8 + 16 + 2 = 50 parameters"
x = torch.randn(5, 3)
assert torch.allclose(net(x), net.fc2(torch.relu(net.fc1(x)))), "forward(x) is fc2(relu(fc1(x)))"

X, y = make_toy()
torch.manual_seed(0)
net = TinyNet(3, 8, 2)
calls = []
net.register_forward_hook(lambda module, inputs, output: calls.append(1))
losses = train_tinynet(net, X, y, epochs=100, lr=0.05)
assert isinstance(losses, list) and len(losses) == 100, "train_tinynet returns a list of 100 losses"
assert all(type(loss) is float for loss in losses), "each loss is a Python float (loss.item())"
assert len(calls) == 100, f"model(X) ran {len(calls)} times in 100 epochs: call model(X), not model.forward"
assert losses[-1] < losses[0], "the loss goes down while training"
accuracy = (net(X).argmax(dim=1) == y).float().mean().item()
assert accuracy >= 0.9, f"accuracy after training is {accuracy:.2f}; it should reach 0.9"
