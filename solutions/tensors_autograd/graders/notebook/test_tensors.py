import numpy as np
import torch

arr = np.arange(6, dtype=np.float64).reshape(2, 3)
t = share_numpy(arr)
assert t.dtype == torch.float64 and tuple(t.shape) == (2, 3), "share_numpy keeps the dtype and the shape"
arr[0, 0] = 42.0
assert t[0, 0].item() == 42.0, "share_numpy shares memory: torch.from_numpy(arr), not torch.tensor(arr)"

w = torch.tensor([1.0, 2.0], requires_grad=True)
out = to_numpy(w * 2)
assert isinstance(out, np.ndarray) and out.tolist() == [2.0, 4.0], "of a graph tensor: t.detach().numpy()"
assert w.requires_grad, "to_numpy must not change its input"

a, b = torch.ones(4, 3), torch.arange(12.0).reshape(4, 3)
assert tuple(row_dots(a, b).shape) == (4,), "row_dots returns one number per row: shape (N,)"
assert torch.allclose(row_dots(a, b), b.sum(dim=1)), "row_dots(a, b)[i] == a[i] @ b[i]"
