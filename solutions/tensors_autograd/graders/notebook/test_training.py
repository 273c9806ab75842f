import torch

X, y = make_toy()
torch.manual_seed(0)
model = TinyNet(3, 8, 2)
losses = train(model, X, y, epochs=20, lr=0.05)
assert len(losses) == 20 and all(type(v) is float for v in losses), "one Python float (loss.item()) per epoch"
assert losses[-1] < losses[0], "the loss goes down: zero_grad, forward, loss, backward, step"
acc = accuracy(model, X, y)
assert type(acc) is float and 0.0 <= acc <= 1.0, "accuracy is a Python float between 0 and 1"
assert set(TUNED) == {"hidden", "epochs", "lr"} and TUNED["epochs"] <= 300, "TUNED names hidden, epochs, lr"
