import torch

X, Y = make_line()
w, losses = fit_line(X, Y, lr=0.01, steps=100)
assert type(w) is float and abs(w - 2.0) < 0.05, f"fit_line finds w close to 2 on y = 2x, got {w}"
assert len(losses) == 100 and all(type(v) is float for v in losses), "100 losses, each a Python float"
assert losses[-1] < losses[0], "the loss goes down"

p = torch.tensor([1.0, 2.0], requires_grad=True)
q = torch.tensor([5.0], requires_grad=True)
(p * 3).sum().backward()
assert sgd_step([p, q], lr=0.1) is None, "sgd_step works in place and returns None"
assert torch.allclose(p.detach(), torch.tensor([0.7, 1.7])), "p <- p - lr * p.grad"
assert q.item() == 5.0, "a parameter without a gradient is left alone"
assert p.is_leaf and p.requires_grad, "p stays a leaf that requires grad"
