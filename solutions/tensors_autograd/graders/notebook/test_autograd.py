import numpy as np

X, Y = make_line()
g = autograd_grad(X, Y, 0.5)
assert type(g) is float, "autograd_grad returns a Python float (use .item())"
assert abs(g - (-22.5)) < 1e-4, f"d/dw mean((w*X - Y)**2) at w = 0.5 is -22.5, got {g}"
assert autograd_grad(X, Y, 0.5) == g, "a second call gives the same value: no gradient left over"
m = manual_grad(X.numpy(), Y.numpy(), 0.5)
assert type(m) is float and abs(m - (-22.5)) < 1e-4, f"manual_grad: mean(2*(w*X - Y)*X) is -22.5, got {m}"
assert np.isclose(m, g), "the hand formula and autograd agree"
