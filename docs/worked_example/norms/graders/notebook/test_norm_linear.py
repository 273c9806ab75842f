assert NormLinear(3, 4)(torch.ones(2, 3)).norm(dim=1).allclose(torch.ones(2))
