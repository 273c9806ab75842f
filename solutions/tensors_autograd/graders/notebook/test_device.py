import torch

device = pick_device()
assert str(device) == ("cuda" if torch.cuda.is_available() else "cpu"), "pick_device: cuda if available"
X, y = make_toy(8)
model, X2, y2 = to_device(TinyNet(3, 4, 2), X, y, "meta")
assert all(p.device.type == "meta" for p in model.parameters()), "every parameter goes to the device"
assert X2.device.type == "meta" and y2.device.type == "meta", "X and y go too: .to(device) returns a copy"
assert X2.dtype == X.dtype and y2.dtype == y.dtype and X2.shape == X.shape, "dtype and shape are kept"
